//===- KernelInfo.h - What a kernel declares --------------------*- C++ -*-===//
//
// Plain C++ descriptions of a kernel's signature, launch grid and autotune
// space, and of the specialisation it is compiled for. Shared by the
// compiler, the runtime and the autotuner; no LLVM/MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_KERNELINFO_H
#define TESSERA_SUPPORT_KERNELINFO_H

#include "tessera/Support/DType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera {

/// A compile-time value of the tile language: None, bool, int, float, str,
/// a dtype, or a tuple of these.
class ConstValue {
public:
  enum class Kind { None, Bool, Int, Float, Str, DType, Tuple };

  ConstValue() = default;
  /// Plain C++ values convert: `{{"BLOCK_SIZE", 1024}}`, `{"eps", 1e-5}`,
  /// `{"CAUSAL", true}`, `{"dtype", DType::F16}`, `{"name", "axpy"}`.
  ConstValue(bool v) : kind_(Kind::Bool), b_(v) {}
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                             int> = 0>
  ConstValue(T v) : kind_(Kind::Int), i_(int64_t(v)) {}
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  ConstValue(T v) : kind_(Kind::Float), f_(double(v)) {}
  ConstValue(DType v) : kind_(Kind::DType), dtype_(v) {}
  ConstValue(const char *v) : kind_(Kind::Str), s_(v) {}
  ConstValue(std::string v) : kind_(Kind::Str), s_(std::move(v)) {}
  static ConstValue none() { return ConstValue(); }
  static ConstValue boolean(bool v);
  static ConstValue integer(int64_t v);
  static ConstValue floating(double v);
  static ConstValue string(std::string v);
  static ConstValue dtype(DType v);
  static ConstValue tuple(std::vector<ConstValue> v);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isFloat() const { return kind_ == Kind::Float; }
  bool isStr() const { return kind_ == Kind::Str; }
  bool isDType() const { return kind_ == Kind::DType; }
  bool isTuple() const { return kind_ == Kind::Tuple; }
  /// Bool, int or float.
  bool isNumber() const { return isBool() || isInt() || isFloat(); }

  bool getBool() const { return b_; }
  int64_t getInt() const { return i_; }
  double getFloat() const { return f_; }
  const std::string &getStr() const { return s_; }
  DType getDType() const { return dtype_; }
  const std::vector<ConstValue> &getTuple() const { return elems_; }

  /// Numeric value as double (bool -> 0/1). Precondition: isNumber().
  double asDouble() const;
  /// Python truthiness.
  bool truthy() const;

  /// Python-like repr: None, True, 3, 1.5, 'axpy', f16, (1, 2).
  std::string toString() const;
  /// Parses the spelling used on command lines and in JSON
  /// ("128", "1.5", "true", "False", "f16", "'axpy'" or a bare word as str).
  static ConstValue parse(const std::string &text);

  friend bool operator==(const ConstValue &a, const ConstValue &b);
  friend bool operator!=(const ConstValue &a, const ConstValue &b) {
    return !(a == b);
  }
  friend bool operator<(const ConstValue &a, const ConstValue &b);

private:
  Kind kind_ = Kind::None;
  bool b_ = false;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  DType dtype_ = DType::F32;
  std::vector<ConstValue> elems_;
};

bool operator==(const ConstValue &a, const ConstValue &b);
bool operator<(const ConstValue &a, const ConstValue &b);

enum class ParamKind {
  Tensor,    ///< A global tensor (any strides), bound at launch.
  Scalar,    ///< A run-time scalar argument (float, int).
  Constexpr, ///< Fixed at specialisation; changes compile a new kernel.
};

enum class ScalarKind { Float, Int, Bool, Str, Any };

/// One dimension of a tensor parameter: a shape symbol ("M") or a fixed size.
struct DimInfo {
  std::string symbol; ///< Empty when the size is fixed.
  int64_t fixed = -1;
};

struct ParamInfo {
  std::string name;
  ParamKind kind = ParamKind::Scalar;
  /// Tensor parameters: dimensions and element type. `dtype` is a concrete
  /// dtype name ("f16") or a generic name bound at specialisation ("dtype",
  /// "accum_dtype", ...).
  std::vector<DimInfo> dims;
  std::string dtype;
  /// Scalars and constexprs: the declared kind.
  ScalarKind scalarKind = ScalarKind::Any;
  /// Tensors declared `= None` may be omitted.
  bool optional = false;
  std::optional<ConstValue> defaultValue;
  uint32_t line = 0, col = 0;
};

/// `@autotune(space=dict(...), key=[...], restrict=[...], cache="...")`.
struct AutotuneSpec {
  /// Parameters in declaration order, each with its candidate values.
  std::vector<std::pair<std::string, std::vector<ConstValue>>> space;
  std::vector<std::string> key;
  /// Restriction expressions, as written (evaluated by SourceModule).
  std::vector<std::string> restrictions;
  std::string cache;
};

/// The declared interface of one kernel.
struct KernelInfo {
  std::string name;
  std::string docstring;
  std::vector<ParamInfo> params;
  /// True when `@kernel(grid=...)` declares the launch grid.
  bool hasGrid = false;
  /// A SIMT program (its body calls thread-level built-ins): one program
  /// instance per GPU thread, `num_warps * 32` threads per block, the grid
  /// in blocks. Otherwise a tile program (one instance per block).
  bool simt = false;
  std::optional<AutotuneSpec> autotune;
  /// Constexpr parameters set by `@heuristics(...)` from the launch's
  /// shapes (SourceModule::evaluateHeuristics), in declaration order.
  std::vector<std::string> heuristics;
  /// Shape symbols in first-use order.
  std::vector<std::string> shapeSymbols;
  /// Generic dtype names used by the signature ("dtype", "accum_dtype").
  std::vector<std::string> genericDTypes;
  uint32_t line = 0;

  const ParamInfo *findParam(const std::string &name) const;
  int paramIndex(const std::string &name) const;
};

/// A precision policy such as "bf16@accum(fp32)": storage and accumulate
/// types bound to the generic names `dtype` and `accum_dtype`.
struct PrecisionPolicy {
  DType storage = DType::F32;
  DType accum = DType::F32;
  /// "tf32": f32 storage whose tile.dot inputs may be rounded to tf32 (10
  /// mantissa bits) to run on tensor cores. Devices without tf32 tensor
  /// cores (cpu) compute the products in full f32.
  bool tf32Dots = false;
  /// Parses "fp32", "f16", "tf32", "bf16@accum(fp32)",
  /// "fp8_e4m3@accum(fp32)"... Returns an error message (empty on success) in
  /// `error`.
  static std::optional<PrecisionPolicy> parse(const std::string &text,
                                              std::string *error);
  std::string toString() const;
};

/// One argument of a compiled kernel's entry point, in ABI order: every
/// tensor and run-time scalar parameter that is present, in declaration
/// order (constexprs and absent optional tensors are not passed).
struct AbiArg {
  int param = -1; ///< Index into KernelInfo::params.
  bool isTensor = false;
  DType dtype = DType::F32; ///< Tensors: element type. Scalars: F32 or I64.
  int rank = 0;
  bool unitInnerStride = false;
};

/// Everything a kernel is compiled for, beyond its source.
struct Specialization {
  /// Values of constexpr parameters (and of `num_warps`, `num_stages` and
  /// other meta-parameters of the autotune space), and bindings of generic
  /// dtype names other than those set by `precision`.
  std::map<std::string, ConstValue> constants;
  /// Precision policy string; empty means "fp32".
  std::string precision;
  /// Names of tensor parameters whose innermost stride is 1 at launch
  /// (lets the compiler emit contiguous vector accesses).
  std::vector<std::string> unitStrideTensors;
  /// Optional tensor parameters passed as None.
  std::vector<std::string> absentTensors;
  /// Tensor parameters (with a unit innermost stride) whose first element,
  /// outer strides and innermost extent are multiples of 16 bytes at
  /// launch: the GPU code uses 16-byte vector accesses on them without a
  /// run-time test.
  std::vector<std::string> alignedTensors;
  /// Whether `alignedTensors` is the whole truth (a launch-time variant):
  /// the other tensors are then known not to be aligned. When false, the
  /// GPU code tests the alignment of the others once at entry.
  bool alignmentKnown = false;
  /// Every dimension and element offset of every tensor fits in 31 bits at
  /// launch: the GPU code computes indices and bounds in 32 bits.
  bool index32 = false;
  /// The launch's grid is within the grid `@kernel` declares for the
  /// launch's shapes, axis by axis: on an axis the grid gives as a shape
  /// symbol (`grid=(S, B)`), the program ids are below that extent and the
  /// GPU code does not test them against it.
  bool declaredGrid = false;

  /// A canonical text form, used in cache keys.
  std::string canonical() const;
};

} // namespace tessera

#endif // TESSERA_SUPPORT_KERNELINFO_H
