//===- KernelInfo.cpp - What a kernel declares ----------------------------===//

#include "tessera/Support/KernelInfo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace tessera;

ConstValue ConstValue::boolean(bool v) {
  ConstValue c;
  c.kind_ = Kind::Bool;
  c.b_ = v;
  return c;
}
ConstValue ConstValue::integer(int64_t v) {
  ConstValue c;
  c.kind_ = Kind::Int;
  c.i_ = v;
  return c;
}
ConstValue ConstValue::floating(double v) {
  ConstValue c;
  c.kind_ = Kind::Float;
  c.f_ = v;
  return c;
}
ConstValue ConstValue::string(std::string v) {
  ConstValue c;
  c.kind_ = Kind::Str;
  c.s_ = std::move(v);
  return c;
}
ConstValue ConstValue::dtype(DType v) {
  ConstValue c;
  c.kind_ = Kind::DType;
  c.dtype_ = v;
  return c;
}
ConstValue ConstValue::tuple(std::vector<ConstValue> v) {
  ConstValue c;
  c.kind_ = Kind::Tuple;
  c.elems_ = std::move(v);
  return c;
}

double ConstValue::asDouble() const {
  switch (kind_) {
  case Kind::Bool:
    return b_ ? 1.0 : 0.0;
  case Kind::Int:
    return static_cast<double>(i_);
  case Kind::Float:
    return f_;
  default:
    return 0.0;
  }
}

bool ConstValue::truthy() const {
  switch (kind_) {
  case Kind::None:
    return false;
  case Kind::Bool:
    return b_;
  case Kind::Int:
    return i_ != 0;
  case Kind::Float:
    return f_ != 0.0;
  case Kind::Str:
    return !s_.empty();
  case Kind::DType:
    return true;
  case Kind::Tuple:
    return !elems_.empty();
  }
  return false;
}

static std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  // Shortest representation that round-trips, as Python prints it.
  for (int prec = 1; prec <= 17; ++prec) {
    char tmp[64];
    std::snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
    if (std::strtod(tmp, nullptr) == v) {
      std::snprintf(buf, sizeof(buf), "%s", tmp);
      break;
    }
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string ConstValue::toString() const {
  switch (kind_) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return b_ ? "True" : "False";
  case Kind::Int:
    return std::to_string(i_);
  case Kind::Float:
    return formatFloat(f_);
  case Kind::Str:
    return "'" + s_ + "'";
  case Kind::DType:
    return dtypeName(dtype_);
  case Kind::Tuple: {
    std::string s = "(";
    for (size_t i = 0; i < elems_.size(); ++i) {
      if (i)
        s += ", ";
      s += elems_[i].toString();
    }
    if (elems_.size() == 1)
      s += ",";
    return s + ")";
  }
  }
  return "?";
}

ConstValue ConstValue::parse(const std::string &text) {
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back())))
    t.pop_back();
  size_t start = 0;
  while (start < t.size() && std::isspace(static_cast<unsigned char>(t[start])))
    ++start;
  t = t.substr(start);
  if (t == "None" || t == "none")
    return none();
  if (t == "True" || t == "true")
    return boolean(true);
  if (t == "False" || t == "false")
    return boolean(false);
  if (t.size() >= 2 && ((t.front() == '\'' && t.back() == '\'') ||
                        (t.front() == '"' && t.back() == '"')))
    return string(t.substr(1, t.size() - 2));
  if (!t.empty()) {
    char *end = nullptr;
    errno = 0;
    long long iv = std::strtoll(t.c_str(), &end, 10);
    if (end && *end == '\0' && errno == 0)
      return integer(iv);
    end = nullptr;
    double dv = std::strtod(t.c_str(), &end);
    if (end && *end == '\0')
      return floating(dv);
  }
  if (auto d = parseDType(t))
    return dtype(*d);
  return string(t);
}

bool tessera::operator==(const ConstValue &a, const ConstValue &b) {
  if (a.kind_ != b.kind_) {
    // Python: 1 == 1.0 == True.
    if (a.isNumber() && b.isNumber())
      return a.asDouble() == b.asDouble();
    return false;
  }
  switch (a.kind_) {
  case ConstValue::Kind::None:
    return true;
  case ConstValue::Kind::Bool:
    return a.b_ == b.b_;
  case ConstValue::Kind::Int:
    return a.i_ == b.i_;
  case ConstValue::Kind::Float:
    return a.f_ == b.f_;
  case ConstValue::Kind::Str:
    return a.s_ == b.s_;
  case ConstValue::Kind::DType:
    return a.dtype_ == b.dtype_;
  case ConstValue::Kind::Tuple:
    return a.elems_ == b.elems_;
  }
  return false;
}

bool tessera::operator<(const ConstValue &a, const ConstValue &b) {
  if (a.kind_ != b.kind_)
    return a.kind_ < b.kind_;
  switch (a.kind_) {
  case ConstValue::Kind::None:
    return false;
  case ConstValue::Kind::Bool:
    return a.b_ < b.b_;
  case ConstValue::Kind::Int:
    return a.i_ < b.i_;
  case ConstValue::Kind::Float:
    return a.f_ < b.f_;
  case ConstValue::Kind::Str:
    return a.s_ < b.s_;
  case ConstValue::Kind::DType:
    return a.dtype_ < b.dtype_;
  case ConstValue::Kind::Tuple:
    return a.elems_ < b.elems_;
  }
  return false;
}

const ParamInfo *KernelInfo::findParam(const std::string &name) const {
  for (const ParamInfo &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

int KernelInfo::paramIndex(const std::string &name) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name)
      return static_cast<int>(i);
  return -1;
}

std::optional<PrecisionPolicy> PrecisionPolicy::parse(const std::string &text,
                                                      std::string *error) {
  PrecisionPolicy p;
  if (text.empty())
    return p;
  std::string storage = text, accum;
  size_t at = text.find("@accum(");
  if (at != std::string::npos) {
    storage = text.substr(0, at);
    size_t close = text.find(')', at);
    if (close == std::string::npos || close != text.size() - 1) {
      if (error)
        *error = "malformed precision policy '" + text +
                 "': expected STORAGE@accum(ACCUM)";
      return std::nullopt;
    }
    accum = text.substr(at + 7, close - at - 7);
  } else if (text.find('@') != std::string::npos) {
    if (error)
      *error = "malformed precision policy '" + text +
               "': expected STORAGE or STORAGE@accum(ACCUM)";
    return std::nullopt;
  }
  if (storage == "tf32") {
    p.tf32Dots = true;
    storage = "fp32";
  }
  auto s = parseDType(storage);
  if (!s) {
    if (error)
      *error = "unknown storage type '" + storage + "' in precision policy '" +
               text + "'";
    return std::nullopt;
  }
  p.storage = *s;
  if (!accum.empty()) {
    auto a = parseDType(accum);
    if (!a) {
      if (error)
        *error = "unknown accumulate type '" + accum +
                 "' in precision policy '" + text + "'";
      return std::nullopt;
    }
    if (isPackedDType(*a)) {
      if (error)
        *error = "precision policy '" + text + "': " + dtypeName(*a) +
                 " is a storage type; accumulate in fp32 or fp16";
      return std::nullopt;
    }
    p.accum = *a;
  } else {
    p.accum = isIntegerDType(*s) ? DType::I32 : DType::F32;
  }
  if (p.tf32Dots && p.accum != DType::F32) {
    if (error)
      *error = "precision policy '" + text + "': tf32 accumulates in fp32";
    return std::nullopt;
  }
  return p;
}

std::string PrecisionPolicy::toString() const {
  return std::string(tf32Dots ? "tf32" : dtypeName(storage)) + "@accum(" +
         dtypeName(accum) + ")";
}

std::string Specialization::canonical() const {
  std::ostringstream os;
  os << "precision=" << (precision.empty() ? "f32" : precision);
  for (const auto &[k, v] : constants)
    os << ";" << k << "=" << v.toString();
  std::vector<std::string> unit = unitStrideTensors, absent = absentTensors;
  std::sort(unit.begin(), unit.end());
  std::sort(absent.begin(), absent.end());
  os << ";unit=";
  for (const auto &u : unit)
    os << u << ",";
  os << ";absent=";
  for (const auto &a : absent)
    os << a << ",";
  std::vector<std::string> aligned = alignedTensors;
  std::sort(aligned.begin(), aligned.end());
  os << ";aligned=" << (alignmentKnown ? "known:" : "");
  for (const auto &a : aligned)
    os << a << ",";
  if (index32)
    os << ";index32";
  if (declaredGrid)
    os << ";declared_grid";
  return os.str();
}
