//===- SuiteAllReduce.cpp - all_reduce over NCCL --------------------------===//
//
// Message sizes from 4 KiB to 1 GiB (seed document 002), reported as
// nccl-tests does (algbw = bytes / time, busbw = algbw * 2(n-1)/n; see
// Counting.h). The suite needs the cuda device, at least two GPUs and
// libnccl; on any other machine every case is recorded as SKIPPED with the
// reason (not a failure). The NCCL runner itself is not written yet: on a
// machine with two GPUs and NCCL the cases are skipped saying so.
//
//===----------------------------------------------------------------------===//

#include "SuiteCommon.h"

#include <dlfcn.h>

using namespace tessera;
using namespace tessera::bench;

namespace {

CaseSpec allReduceCase(int64_t bytes, const std::string &precision) {
  CaseSpec c;
  c.suite = "all_reduce";
  c.kernel = "all_reduce";
  c.precision = precision;
  c.dims = {{"bytes", bytes}};
  std::string size = bytes >= (int64_t(1) << 20)
                         ? std::to_string(bytes >> 20) + " MiB"
                         : std::to_string(bytes >> 10) + " KiB";
  c.name = "all_reduce " + shortPrecision(precision) + " " + size;
  c.params = {{"bytes", std::to_string(bytes)}};
  return c;
}

std::vector<CaseSpec> allReduceCases(const CaseRequest &req) {
  std::vector<std::string> precisions = req.precisions;
  if (precisions.empty())
    precisions = {"fp32"};
  std::vector<CaseSpec> out;
  for (const std::string &p : precisions) {
    if (p != "fp32" && p != "fp16" && p != "bf16")
      continue;
    if (req.sizes == SizeSet::Custom) {
      for (const auto &d : req.custom)
        if (d.size() == 1 && d.count("bytes"))
          out.push_back(allReduceCase(d.at("bytes"), p));
    } else if (req.sizes == SizeSet::Full) {
      for (int64_t b = 4 << 10; b <= (int64_t(1) << 30); b *= 4)
        out.push_back(allReduceCase(b, p));
    } else {
      out.push_back(allReduceCase(int64_t(1) << 20, p));
      out.push_back(allReduceCase(int64_t(256) << 20, p));
    }
  }
  return out;
}

/// The number of CUDA devices the driver sees (0 without a driver), and
/// why when it cannot tell.
int cudaDeviceCount(std::string *why) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = "no CUDA driver (libcuda.so.1 not found)";
    return 0;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int *);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  if (!init || !count || init(0) != 0 || count(&n) != 0) {
    *why = "the CUDA driver reports no usable device";
    return 0;
  }
  return n;
}

CaseResult runAllReduce(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  r.skipped = true;
  if (ctx.device != DeviceKind::Cuda) {
    r.failure = std::string("all_reduce runs between GPUs (--device cuda); "
                            "this run is on ") +
                deviceKindName(ctx.device);
    return r;
  }
  std::string why;
  int gpus = cudaDeviceCount(&why);
  if (gpus < 2) {
    r.failure = std::to_string(gpus) +
                " GPU(s) found; all_reduce needs at least two" +
                (why.empty() ? "" : " (" + why + ")");
    return r;
  }
  if (void *nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL); !nccl) {
    r.failure = "libnccl.so.2 not found: " + std::string(dlerror());
    return r;
  }
  r.failure = "the NCCL runner is not implemented yet (" +
              std::to_string(gpus) + " GPUs and libnccl found)";
  return r;
}

} // namespace

Suite bench::allReduceSuite() {
  Suite s;
  s.name = "all_reduce";
  s.description = "NCCL all-reduce between GPUs, algbw and busbw as "
                  "nccl-tests (skipped with the reason on fewer than two "
                  "GPUs)";
  s.precisions = {"fp32", "fp16", "bf16"};
  s.defaultPrecisions = {"fp32"};
  s.sizeKeys = {"bytes"};
  s.cases = allReduceCases;
  s.run = runAllReduce;
  return s;
}
