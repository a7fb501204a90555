//===- Module.cpp - tessera._tessera, the runtime for Python --------------===//
//
// The native half of the `tessera` package: programs, kernels and launches
// over the public runtime API (tessera/runtime/Runtime.h) only. Arrays come
// in through nanobind's ndarray caster (the buffer protocol and DLPack:
// NumPy, PyTorch, CuPy, ...) and are used in place with their strides; the
// pure-Python half (python/tessera) adds the call syntax, dtype inference
// and ml_dtypes' bf16/fp8 arrays.
//
// Errors raise `_tessera.Error(message, code, stage)` (stage "compile" or
// "launch"); the Python half turns compile errors into tessera.CompileError.
//
//===----------------------------------------------------------------------===//

#include "tessera/runtime/Runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace tessera;

namespace {

/// One runtime per process (devices, caches, thread pool), never destroyed:
/// compiled kernels may outlive the interpreter's module teardown.
Runtime &runtime() {
  static Runtime *rt = new Runtime();
  return *rt;
}

PyObject *errorType = nullptr;

[[noreturn]] void fail(const Status &s, const char *stage) {
  nb::object args =
      nb::make_tuple(s.message(), statusCodeName(s.code()), stage);
  PyErr_SetObject(errorType, args.ptr());
  throw nb::python_error();
}

DeviceKind deviceOf(const std::string &name) {
  auto d = parseDeviceKind(name);
  if (!d)
    fail(Status(StatusCode::kInvalidArgument,
                "unknown device '" + name + "' (cpu, sim or cuda)"),
         "launch");
  return *d;
}

/// The DType of an array's DLPack element type, or `override` (a dtype name
/// the Python half passes for ml_dtypes' bf16/fp8 arrays, viewed as bytes).
DType dtypeOf(const nb::ndarray<> &a, const std::string &override) {
  if (!override.empty()) {
    auto d = parseDType(override);
    if (!d)
      fail(Status(StatusCode::kInvalidArgument,
                  "unknown dtype '" + override + "'"),
           "launch");
    return *d;
  }
  nb::dlpack::dtype t = a.dtype();
  using Code = nb::dlpack::dtype_code;
  if (t.lanes == 1) {
    switch (Code(t.code)) {
    case Code::Float:
      if (t.bits == 32)
        return DType::F32;
      if (t.bits == 16)
        return DType::F16;
      break;
    case Code::Bfloat:
      if (t.bits == 16)
        return DType::BF16;
      break;
    case Code::Int:
      if (t.bits == 8)
        return DType::I8;
      if (t.bits == 32)
        return DType::I32;
      if (t.bits == 64)
        return DType::I64;
      break;
    case Code::Bool:
      if (t.bits == 8)
        return DType::Bool;
      break;
    default:
      break;
    }
  }
  fail(Status(StatusCode::kInvalidArgument,
              "arrays of DLPack type code " + std::to_string(t.code) + ", " +
                  std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) +
                  " lanes have no Tessera dtype (f32, f16, bf16, fp8, i8, "
                  "i32, i64, bool)"),
       "launch");
}

TensorView viewOf(const nb::ndarray<> &a, const std::string &dtype) {
  TensorView v;
  v.data = a.data();
  v.dtype = dtypeOf(a, dtype);
  for (size_t d = 0; d < a.ndim(); ++d) {
    v.shape.push_back(int64_t(a.shape(d)));
    v.strides.push_back(int64_t(a.stride(d)));
  }
  if (a.device_type() == nb::device::cuda::value)
    v.device = DeviceKind::Cuda;
  else if (a.device_type() != nb::device::cpu::value)
    fail(Status(StatusCode::kInvalidArgument,
                "arrays on DLPack device type " +
                    std::to_string(a.device_type()) +
                    " are not supported (host or CUDA memory)"),
         "launch");
  return v;
}

/// A Python value as a kernel argument: an array, (array, dtype name), a
/// float, an int, a bool or None.
Arg argOf(nb::handle h) {
  if (h.is_none())
    return Arg::none();
  if (nb::isinstance<nb::bool_>(h))
    return Arg(nb::cast<bool>(h));
  if (nb::isinstance<nb::int_>(h))
    return Arg(nb::cast<int64_t>(h));
  if (nb::isinstance<nb::float_>(h))
    return Arg(nb::cast<double>(h));
  if (nb::isinstance<nb::tuple>(h)) {
    nb::tuple t = nb::borrow<nb::tuple>(h);
    if (t.size() == 2)
      return Arg(
          viewOf(nb::cast<nb::ndarray<>>(t[0]), nb::cast<std::string>(t[1])));
  }
  nb::ndarray<> a;
  if (!nb::try_cast(h, a))
    fail(Status(StatusCode::kInvalidArgument,
                "cannot pass a " +
                    nb::cast<std::string>(nb::str(h.type().attr("__name__"))) +
                    " to a kernel (arrays, float, int, bool or None)"),
         "launch");
  return Arg(viewOf(a, ""));
}

/// A constexpr value; strings naming a dtype bind the kernel's generic
/// dtype names (`genericDTypes`).
ConstValue constOf(const KernelInfo &info, const std::string &name,
                   nb::handle h) {
  if (nb::isinstance<nb::bool_>(h))
    return ConstValue::boolean(nb::cast<bool>(h));
  if (nb::isinstance<nb::int_>(h))
    return ConstValue::integer(nb::cast<int64_t>(h));
  if (nb::isinstance<nb::float_>(h))
    return ConstValue::floating(nb::cast<double>(h));
  if (nb::isinstance<nb::str>(h)) {
    std::string s = nb::cast<std::string>(h);
    bool generic =
        std::find(info.genericDTypes.begin(), info.genericDTypes.end(), name) !=
        info.genericDTypes.end();
    if (auto d = parseDType(s); d && generic)
      return ConstValue::dtype(*d);
    return ConstValue::string(s);
  }
  if (h.is_none())
    return ConstValue::none();
  fail(Status(StatusCode::kInvalidArgument,
              "constexpr '" + name +
                  "' must be a bool, int, float, str or "
                  "None"),
       "compile");
}

struct PyProgram {
  std::shared_ptr<Program> program;
};

struct PyKernel {
  std::shared_ptr<Kernel> kernel;
};

const KernelInfo &kernelInfo(const PyProgram &p, const std::string &name) {
  const KernelInfo *info = p.program->findKernel(name);
  if (!info) {
    std::string names;
    for (const KernelInfo *k : p.program->kernels())
      names += (names.empty() ? "" : ", ") + k->name;
    fail(Status(StatusCode::kNotFound, "no kernel '" + name + "' in " +
                                           p.program->name() + " (" + names +
                                           ")"),
         "compile");
  }
  return *info;
}

} // namespace

NB_MODULE(_tessera, m) {
  m.doc() = "Tessera's runtime: programs, kernels and launches";
  errorType =
      PyErr_NewException("tessera._tessera.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = nb::handle(errorType);

  nb::class_<PyProgram>(m, "Program")
      .def_prop_ro("name", [](const PyProgram &p) { return p.program->name(); })
      .def(
          "kernels",
          [](const PyProgram &p) {
            std::vector<std::string> out;
            for (const KernelInfo *k : p.program->kernels())
              out.push_back(k->name);
            return out;
          },
          "The names of the program's kernels.")
      .def(
          "params",
          [](const PyProgram &p, const std::string &kernel) {
            // (name, is_tensor, dtype name, is_generic_dtype) per parameter.
            const KernelInfo &info = kernelInfo(p, kernel);
            std::vector<std::tuple<std::string, bool, std::string, bool>> out;
            for (const ParamInfo &param : info.params) {
              bool generic = std::find(info.genericDTypes.begin(),
                                       info.genericDTypes.end(),
                                       param.dtype) != info.genericDTypes.end();
              out.emplace_back(param.name, param.kind == ParamKind::Tensor,
                               param.dtype, generic);
            }
            return out;
          },
          nb::arg("kernel"))
      .def(
          "compile",
          [](const PyProgram &p, const std::string &kernel,
             const std::string &device, const std::string &precision,
             nb::dict constants) {
            const KernelInfo &info = kernelInfo(p, kernel);
            CompileOptions opts;
            opts.precision = precision;
            for (auto [k, v] : constants) {
              std::string name = nb::cast<std::string>(k);
              opts.constants[name] = constOf(info, name, v);
            }
            DeviceKind d = deviceOf(device);
            StatusOr<std::shared_ptr<Kernel>> k = [&] {
              nb::gil_scoped_release release;
              return runtime().compile(*p.program, kernel, opts, d);
            }();
            if (!k.ok())
              fail(k.status(), "compile");
            return PyKernel{*k};
          },
          nb::arg("kernel"), nb::arg("device") = "cpu",
          nb::arg("precision") = "", nb::arg("constants") = nb::dict());

  nb::class_<PyKernel>(m, "Kernel")
      .def_prop_ro("name",
                   [](const PyKernel &k) { return k.kernel->info().name; })
      .def_prop_ro("device",
                   [](const PyKernel &k) {
                     return std::string(deviceKindName(k.kernel->device()));
                   })
      .def(
          "launch",
          [](const PyKernel &k, nb::list args,
             std::optional<std::vector<int64_t>> grid) {
            std::vector<Arg> launchArgs;
            for (nb::handle h : args)
              launchArgs.push_back(argOf(h));
            LaunchOptions opts;
            if (grid) {
              if (grid->empty() || grid->size() > 3)
                fail(Status(StatusCode::kInvalidArgument,
                            "a grid has 1 to 3 dimensions"),
                     "launch");
              std::array<int64_t, 3> g = {1, 1, 1};
              for (size_t i = 0; i < grid->size(); ++i)
                g[i] = (*grid)[i];
              opts.grid = g;
            }
            Status s;
            {
              nb::gil_scoped_release release;
              s = k.kernel->launch(launchArgs, opts);
            }
            if (!s.ok())
              fail(s, "launch");
          },
          nb::arg("args"), nb::arg("grid") = nb::none());

  m.def(
      "load_file",
      [](const std::string &path) {
        auto p = runtime().loadFile(path);
        if (!p.ok())
          fail(p.status(), "compile");
        return PyProgram{*p};
      },
      nb::arg("path"));
  m.def(
      "load_source",
      [](const std::string &name, const std::string &text) {
        auto p = runtime().loadSource(name, text);
        if (!p.ok())
          fail(p.status(), "compile");
        return PyProgram{*p};
      },
      nb::arg("name"), nb::arg("text"));
  m.def(
      "device_status",
      [](const std::string &device) -> std::optional<std::string> {
        Status s = runtime().deviceStatus(deviceOf(device));
        if (s.ok())
          return std::nullopt;
        return s.message();
      },
      nb::arg("device"), "None when the device is usable, else why not.");
  m.def("dtype_names", [] {
    std::vector<std::string> out;
    for (DType t : kAllDTypes)
      out.push_back(dtypeName(t));
    return out;
  });
}
