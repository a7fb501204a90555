//===- Driver.h - Compiling tile-language kernels ---------------*- C++ -*-===//
//
// The compiler's entry points for the runtime and the tools: parse a source
// module once, then compile any of its kernels for a specialisation to tile
// IR, lowered IR, LLVM IR or native CPU code. No LLVM/MLIR types appear
// here (the runtime includes this header), only plain C++ and Status.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DRIVER_DRIVER_H
#define TESSERA_DRIVER_DRIVER_H

#include "tessera/Support/KernelInfo.h"
#include "tessera/Support/Status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::driver {

/// No bound on a grid axis: the largest grid extent CUDA allows.
inline constexpr int64_t kNoGridBound = (int64_t(1) << 31) - 1;

/// Wall-clock time of each compilation stage, in milliseconds.
struct StageTimes {
  double parse = 0;      ///< Lexing, parsing, declaration analysis.
  double sema = 0;       ///< Type checking and tile IR emission.
  double tilePasses = 0; ///< Tile-level canonicalisation and folding.
  double lowering = 0;   ///< Tile -> linalg -> loops -> LLVM dialect.
  double codegen = 0;    ///< LLVM IR optimisation and machine code (JIT);
                         ///< for the GPU: NVVM and LLVM's NVPTX back end.
  double assemble = 0;   ///< GPU only: PTX -> cubin (nvJitLink or ptxas).
  double total() const {
    return parse + sema + tilePasses + lowering + codegen + assemble;
  }
};

/// A parsed source file: its kernels' declarations and the syntax tree.
/// Immutable and thread-safe once created.
class SourceModule {
public:
  /// Parses `text` (named `name` in diagnostics). On syntax or declaration
  /// errors, returns InvalidArgument with every rendered diagnostic.
  static StatusOr<std::shared_ptr<const SourceModule>> parse(std::string name,
                                                             std::string text);
  ~SourceModule();

  const std::string &name() const;
  /// Every kernel's declared interface, in source order.
  std::vector<const KernelInfo *> kernels() const;
  const KernelInfo *findKernel(const std::string &name) const;
  /// FNV-1a hash of the source text (part of compile-cache keys).
  uint64_t sourceHash() const;
  /// The source text.
  std::string_view text() const;
  double parseMillis() const;
  /// Warnings of parsing and declaration analysis, rendered with source
  /// lines ("" when there were none).
  const std::string &warnings() const;

  /// Evaluates kernel `kernel`'s `@kernel(grid=...)` with shape symbols and
  /// specialisation constants bound. Returns up to 3 extents.
  StatusOr<std::vector<int64_t>> evaluateGrid(
      const std::string &kernel, const Specialization &spec,
      const std::vector<std::pair<std::string, int64_t>> &shapes) const;
  /// The most program instances per grid axis that a `tile.index32` launch
  /// of kernel `kernel` may have: the declared grid evaluated with every
  /// shape symbol at 2^31 - 1, the largest extent such a launch allows
  /// (for grids that grow with the shapes, the largest they reach), capped
  /// at kNoGridBound; kNoGridBound where the grid is not declared or does
  /// not evaluate. The GPU code relies on `program_id(d) < bound[d]` under
  /// index32, and the runtime launches the index32 variant only on grids
  /// within the bound.
  std::array<int64_t, 3> index32GridBound(const std::string &kernel,
                                          const Specialization &spec) const;
  /// Evaluates kernel `kernel`'s `@heuristics(NAME=expr, ...)` with shape
  /// symbols and specialisation constants bound, in declaration order (a
  /// later expression sees the earlier results). Each value is a bool or
  /// an integer; empty when the kernel has none. An expression that names
  /// a shape symbol missing from `shapes` is an error.
  StatusOr<std::vector<std::pair<std::string, ConstValue>>> evaluateHeuristics(
      const std::string &kernel, const Specialization &spec,
      const std::vector<std::pair<std::string, int64_t>> &shapes) const;
  /// True if `spec` satisfies every `restrict=[...]` expression.
  StatusOr<bool> satisfiesRestrictions(const std::string &kernel,
                                       const Specialization &spec) const;

  struct Impl;
  const Impl &impl() const { return *impl_; }

private:
  SourceModule();
  std::unique_ptr<Impl> impl_;
};

enum class EmitKind {
  AST,      ///< The syntax tree as an S-expression.
  Tile,     ///< Tile dialect after tile-level passes.
  Lowered,  ///< MLIR LLVM dialect just before translation.
  LLVMIR,   ///< LLVM IR after optimisation.
  Assembly, ///< Host assembly.
  Object,   ///< A relocatable host object file (ELF bytes).
  GPU,      ///< gpu.module/gpu.func kernel (scf/memref level): the IR the
            ///< `sim` device executes.
  PTX,      ///< PTX text from LLVM's NVPTX back end.
  Cubin     ///< The PTX assembled for the architecture (ELF bytes).
};

/// A tensor map a GPU kernel receives after its other arguments, for its
/// TMA copies: the runtime encodes one per entry, in order, from the
/// tensor of kernel argument `arg` (an index into the ABI arguments), the
/// kernel parameter `param` (-1 when the ABI is not known).
struct TensorMapArg {
  int arg = 0;
  int param = -1;
  std::vector<int64_t> box; ///< box extents, in the tensor's dimension order
  int swizzle = 0;          ///< swizzle span in bytes: 0, 32, 64 or 128
};

/// How a GPU kernel's blocks run its programs. A scheduled kernel
/// (`logicalGrid`) takes the extents of its grid of programs as three
/// 64-bit arguments after its own (before any tensor maps) and runs them
/// in grouped order (`group` programs of grid axis 0 per group; 0: axis 0
/// fastest): block x runs program x, or, when `persistent`, programs x,
/// x + gridDim.x, ... of a launch of any number of blocks.
struct ProgramSchedule {
  bool logicalGrid = false;
  bool persistent = false;
  int64_t group = 0;
};

/// Registers, memory and spills of a GPU kernel as reported by the assembler
/// (plain numbers; see tessera/Target/CUDA/ResourceUsage.h).
struct GpuResources {
  int registers = 0;
  int64_t sharedBytes = 0;     ///< static shared memory per block
  int64_t tileSharedBytes = 0; ///< what the GPU mapping asked for
  int64_t localBytes = 0;
  int64_t spillStores = 0;
  int64_t spillLoads = 0;
  int barriers = 0;
  int blockSize = 0;     ///< threads per block
  std::string assembler; ///< "nvJitLink" or "ptxas"
  /// The cubin was assembled with `.minnctapersm 1` because ptxas's own
  /// occupancy target spilled (see emit()).
  bool oneBlockPerSmHint = false;
  /// The `.maxnreg` the cubin was assembled with to fit one more block per
  /// SM (0: none; see emit()).
  int registerCap = 0;
  /// The tensor maps the kernel takes after its arguments.
  std::vector<TensorMapArg> tensorMaps;
  ProgramSchedule schedule;
};

/// Options of the GPU stages of `emit`.
struct GpuEmitOptions {
  std::string arch = "sm_90a"; ///< see gpu::supportedArchList()
  /// PTX assembler for EmitKind::Cubin: "auto" (ptxas, whole program, when
  /// found; else nvJitLink), "ptxas" or "nvjitlink".
  std::string assembler = "auto";
};

/// Compiles kernel `kernel` for `spec` and renders the requested stage.
/// Warnings of the specialisation's semantic analysis (rendered with source
/// lines) go to `warnings` when given.
StatusOr<std::string>
emit(const SourceModule &module, const std::string &kernel,
     const Specialization &spec, EmitKind kind, StageTimes *times = nullptr,
     const GpuEmitOptions &gpu = {}, GpuResources *resources = nullptr,
     std::string *warnings = nullptr);

/// A kernel compiled to native code for the host CPU.
class CpuExecutable {
public:
  ~CpuExecutable();
  /// Runs program instances with linear ids [begin, end) of a grid of
  /// `grid[0] x grid[1] x grid[2]` instances. `args` holds one pointer per
  /// flattened argument (see abi()).
  void run(void **args, int64_t begin, int64_t end,
           const int64_t grid[3]) const;
  const std::vector<AbiArg> &abi() const;
  int numWarps() const;
  int numStages() const;
  const StageTimes &times() const;
  /// Hash of the lowered code: equal for specialisations that compile to
  /// the same code (e.g. num_warps, which the CPU target ignores).
  uint64_t codeFingerprint() const;
  /// The executable as bytes (its object code and what runs it) that
  /// loadCpuExecutable() takes back in a process whose cpuCodeTarget() is
  /// the same.
  std::string serialize() const;

  struct Impl;
  explicit CpuExecutable(std::unique_ptr<Impl> impl);

private:
  std::unique_ptr<Impl> impl_;
};

/// Compiles kernel `kernel` for `spec` to host code.
StatusOr<std::unique_ptr<CpuExecutable>>
compileForCpu(const SourceModule &module, const std::string &kernel,
              const Specialization &spec);

/// The executable CpuExecutable::serialize() wrote (no compile: its object
/// code is linked into the process). INVALID_ARGUMENT for bytes that are
/// not one, or whose code does not link.
StatusOr<std::unique_ptr<CpuExecutable>>
loadCpuExecutable(std::string_view bytes);

/// Names the machine code compileForCpu produces on this host (triple, CPU,
/// features; see TESSERA_JIT_CPU): serialized executables are loaded only
/// where it is the same.
StatusOr<std::string> cpuCodeTarget();

/// A kernel lowered for the NVIDIA GPU path and compiled to host code that
/// runs ONE GPU thread per call (the `sim` device drives it with one fiber
/// per thread). Call `entry()` with one pointer per argument slot:
///   [kernel args, flattened as for CpuExecutable]
///   [the block's shared-memory arena as a 1-D byte memref: allocated,
///    aligned, offset 0, size, stride 1]
///   [thread id, block id x/y/z, grid x/y/z]   (int64 each)
///   [simulator context]                        (int64)
/// Barriers call `tessera_sim_barrier(context)`, and every memory access
/// `tessera_sim_access` (and `tessera_sim_fault` when out of bounds or,
/// for a vector access, misaligned), which
/// the caller provides in `symbols` when compiling.
class SimExecutable {
public:
  ~SimExecutable();
  void (*entry() const)(void **);
  size_t numArgSlots() const;
  int64_t blockSize() const;
  /// Bytes of shared memory a block needs (the arena's size).
  int64_t sharedBytes() const;
  /// What each instrumented memory access is (op and source location), by
  /// the site id passed to tessera_sim_fault / tessera_sim_access.
  const std::vector<std::string> &accessSites() const;
  const std::vector<AbiArg> &abi() const;
  /// The tensor maps the kernel takes after its arguments (one slot each:
  /// the address of a SimTensorMap).
  const std::vector<TensorMapArg> &tensorMaps() const;
  const ProgramSchedule &schedule() const;
  /// The most program instances per grid axis the code allows (the
  /// `upper_bound`s of its block ids, or the grid of programs a scheduled
  /// kernel assumes; kNoGridBound where it has none). A launch beyond it
  /// breaks what the code was compiled to assume.
  const std::array<int64_t, 3> &gridBound() const;
  const StageTimes &times() const;
  /// Hash of the GPU IR it simulates (see CpuExecutable::codeFingerprint).
  uint64_t codeFingerprint() const;

  struct Impl;
  explicit SimExecutable(std::unique_ptr<Impl> impl);

private:
  std::unique_ptr<Impl> impl_;
};

/// Compiles kernel `kernel` through the GPU lowering (for `arch`'s shared
/// memory limit) to per-thread host code; `symbols` resolves the
/// simulator's runtime functions. With `counters` the code also reports its
/// conditional branches (`tessera_sim_branch`) for the simulator's
/// counters (a different executable: cache it under its own key).
StatusOr<std::unique_ptr<SimExecutable>>
compileForSim(const SourceModule &module, const std::string &kernel,
              const Specialization &spec,
              const std::vector<std::pair<std::string, void *>> &symbols,
              const std::string &arch = "sm_90a", bool counters = false);

/// Compiles a gpu-dialect module given as MLIR text (one `gpu.module` with
/// the kernel `kernel`, as `lowerToGPUDialect` produces) for `sim`. For
/// tests of the simulator and its checkers with hand-written GPU kernels.
StatusOr<std::unique_ptr<SimExecutable>>
compileGpuIRForSim(const std::string &mlirText, const std::string &kernel,
                   const std::vector<std::pair<std::string, void *>> &symbols,
                   bool counters = false);

} // namespace tessera::driver

#endif // TESSERA_DRIVER_DRIVER_H
