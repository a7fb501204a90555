//===- SuiteCommon.h - What the suites of tessera-bench share ---*- C++ -*-===//
//
// Host arrays of any dtype, the plan of one case (kernel, arguments,
// reference, baseline, tolerance) and runPlan, which compiles, validates,
// times and fills a CaseResult. Internal to benchsuite/cli.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_CLI_SUITECOMMON_H
#define TESSERA_BENCHSUITE_CLI_SUITECOMMON_H

#include "Suites.h"

#include "tessera/Support/Tolerance.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera::bench {

/// Allocates at 256-byte boundaries, as cudaMalloc does: host tensors on
/// `sim` then start where device allocations would, which its counters of
/// 32-byte sectors depend on.
template <typename T> struct DeviceAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{256};
  DeviceAlignedAllocator() = default;
  template <typename U>
  DeviceAlignedAllocator(const DeviceAlignedAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(::operator new(n * sizeof(T), kAlign));
  }
  void deallocate(T *p, size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const DeviceAlignedAllocator<U> &) const {
    return true;
  }
};

/// A host buffer of `numel` elements of `dtype`.
struct HostArray {
  DType dtype = DType::F32;
  int64_t numel = 0;
  std::vector<uint8_t, DeviceAlignedAllocator<uint8_t>> bytes;

  static std::shared_ptr<HostArray> make(DType dtype, int64_t numel);
  void *data() { return bytes.data(); }
  const void *data() const { return bytes.data(); }
  /// Uniform values in [lo, hi) from `seed`, rounded to the dtype.
  void fillUniform(uint64_t seed, double lo = -1.0, double hi = 1.0);
  void fill(double v);
  /// Every element converted exactly to f32 / double.
  std::vector<float> toF32() const;
  std::vector<double> toF64() const;
  /// A row-major contiguous view of `shape` (its product must be <= numel).
  TensorView view(std::vector<int64_t> shape);
};

/// `v` rounded to `dtype` and back (what storing a reference in the
/// kernel's output dtype gives).
double roundTo(DType dtype, double v);

/// The parts of a case that differ between kernels.
struct Plan {
  std::string family, kernel;
  /// Short: it is printed in every table row (docs/bench.md says what
  /// each baseline is).
  std::string baselineName = "C++ loop";
  std::vector<Arg> args;
  /// Precision policy the kernel is compiled with ("" = fp32) and constants
  /// fixed for this case (CAUSAL, HEAD_DIM, TRANS_A, ...), never tuned.
  std::string precision;
  std::map<std::string, ConstValue> fixed;
  /// Puts outputs (and in-place inputs) back to their initial state.
  std::function<void()> reset;
  /// Extra launches after the main one (norm_finalize).
  std::vector<std::pair<std::string, std::vector<Arg>>> after;
  /// The Tessera result and the reference, as doubles, after one run each
  /// from the initial state. The reference is rounded to `outDType` before
  /// the comparison.
  std::function<std::vector<double>()> result;
  std::function<std::vector<double>()> expected;
  /// One timed host baseline call, beside cpu results (empty: none).
  std::function<void()> baseline;
  /// A baseline on the cuda device (cuBLAS, an NVRTC kernel), beside cuda
  /// results: prepared once per case (its data uploaded once), it returns
  /// the timing of a batch -- `launches` calls back to back between two
  /// CUDA events after the L2 flush, the time of one in ms (see
  /// Runtime::timeBatch) -- or why it cannot run (reported as a note; the
  /// case still runs).
  using TimedBatch = std::function<StatusOr<double>(int launches)>;
  std::function<StatusOr<TimedBatch>()> deviceBaseline;
  std::string deviceBaselineName;
  ToleranceOp op = ToleranceOp::Elementwise;
  int64_t reductionLength = 1;
  DType outDType = DType::F32;
  /// Replaces toleranceFor(outDType, op, reductionLength) when set.
  std::optional<Tolerance> tolerance;
  ComputePath path = ComputePath::Fp32;
  Work work;
};

/// A device baseline running `source` (a CUDA C++ kernel compiled with
/// NVRTC by the runtime) on `args` with the explicit `grid`, timed like the
/// Tessera kernel: the host tensors of `args` are copied to device buffers
/// once, then batches of launches run on them (Kernel::launchTimedBatch,
/// L2 flushed first unless --no-flush).
std::function<StatusOr<Plan::TimedBatch>()>
nvrtcBaseline(RunContext &ctx, CudaKernelSource source, std::vector<Arg> args,
              std::array<int64_t, 3> grid);

/// Launches per sample for a kernel whose one launch took `oneLaunchMs`:
/// enough for a sample of kBatchTargetMs or more, at least 1 and at most
/// kMaxLaunchesPerSample.
inline constexpr double kBatchTargetMs = 1.0;
inline constexpr int kMaxLaunchesPerSample = 10000;
int launchesFor(double oneLaunchMs);

/// Device copies of the host tensors in some argument lists: the host
/// ranges they touch are merged where they overlap, each merged range is
/// allocated once on the device (Runtime::allocate) and copied there, and
/// `lists` are the argument lists with those tensors replaced by views of
/// the copies (so arguments that alias on the host alias on the device).
/// Scalars and views of device memory are kept as they are.
class DeviceMirror {
public:
  static StatusOr<std::unique_ptr<DeviceMirror>>
  create(Runtime &rt, DeviceKind device,
         const std::vector<const std::vector<Arg> *> &hostLists);
  const std::vector<Arg> &args(size_t list) const { return lists_[list]; }
  /// Host to device, every copy.
  Status upload();
  /// Device to host, every copy (what the kernels wrote).
  Status download();

private:
  struct Copy {
    DeviceBuffer buffer;
    char *host = nullptr;
    size_t bytes = 0;
  };
  std::vector<Copy> copies_;
  std::vector<std::vector<Arg>> lists_;
};

/// Compiles (with the tuning mode, or the case's point of the autotune
/// space), validates, times; fills `r`. On cuda and sim the plan's host
/// tensors are mirrored on the device once (DeviceMirror): the validation
/// run copies them in and the results out once, and the samples, batches
/// of launches sized by launchesFor, launch on the device copies with no
/// host-device copy. On cpu the kernels run on the host arrays, one launch
/// per sample.
void runPlan(RunContext &ctx, const CaseSpec &spec, Plan &plan, CaseResult &r);

/// A case of `suite` running `kernel` in `precision`, named
/// "<suite> <precision> <label>", whose params are its dims as text.
CaseSpec makeCase(const std::string &suite, const std::string &kernel,
                  const std::string &precision, const std::string &label,
                  std::map<std::string, int64_t> dims);

/// "4x512x768" for {4, 512, 768}.
std::string dimsText(const std::vector<int64_t> &dims);

/// `c` run with the seed's SIMT form of its kernel (CaseSpec::seedSimt),
/// named "<name> [seed SIMT]".
CaseSpec seedSimtVariant(CaseSpec c);

/// Beside each case of the default sets on cpu, sim and cuda, and of
/// custom sizes: the same work done by the seed's SIMT kernel. On cpu (which
/// runs SIMT programs on the sim's fiber scheduler) beside the first case
/// of each precision only.
void addSeedSimtVariants(std::vector<CaseSpec> &cases, const CaseRequest &req);

/// A byte count as "1 MiB", "256 KiB" or "12 B".
std::string bytesText(int64_t bytes);

/// Whether a --sizes entry names every one of `required`, some of
/// `optional` and nothing else (the entries a suite runs).
bool matches(const std::map<std::string, int64_t> &dims,
             std::initializer_list<const char *> required,
             std::initializer_list<const char *> optional);

/// `name` of a --sizes entry, else `otherwise`.
int64_t dimOr(const std::map<std::string, int64_t> &dims,
              const std::string &name, int64_t otherwise);

/// The whole of `v` as a contiguous 1-D f32 tensor (the CUDA C++ baselines
/// take a pointer to the first element and index it themselves).
TensorView spanView(std::vector<float> &v);

/// A result with the case's identity filled in.
CaseResult startResult(const RunContext &ctx, const CaseSpec &spec);

/// The storage dtype of a canonical precision policy ("bf16@accum(fp32)" ->
/// BF16, "tf32" -> F32).
DType storageOf(const std::string &precision);

/// The instruction path a precision runs on for `device` (tensor cores only
/// on cuda; the cpu computes everything as f32 FMAs).
ComputePath pathOf(const std::string &precision, DeviceKind device);

/// "fp16" for "fp16", "fp8_e4m3" for "fp8_e4m3@accum(fp32)": the short form
/// used in case names.
std::string shortPrecision(const std::string &precision);

/// The first line of a (multi-line) message.
std::string firstLine(const std::string &s);

/// Suite definitions, one per file.
Suite vectorOpsSuite();
Suite memoryBandwidthSuite();
Suite gemmSuite();
Suite layerNormSuite();
Suite softmaxSuite();
Suite attentionSuite();
Suite allReduceSuite();

} // namespace tessera::bench

#endif // TESSERA_BENCHSUITE_CLI_SUITECOMMON_H
