//===- SuiteAllReduce.cpp - all_reduce over NCCL --------------------------===//
//
// Message sizes from 4 KiB to 1 GiB (seed document 002), measured as
// nccl-tests does: one communicator per GPU of the machine (ncclCommInitAll),
// the all-reduce of every rank launched in one group, the time of a sample
// the longest of the ranks' CUDA-event intervals; algbw = bytes / time
// (the case's GB/s) and busbw = algbw * 2(n-1)/n (resources.busbwGBs). The
// result is validated first: every rank's output must equal the sum of the
// ranks' inputs, exactly (the values are small multiples of 1/4, exact in
// every precision). NCCL and the CUDA driver are loaded at run time; with
// fewer than two GPUs, without NCCL or on another device every case is
// SKIPPED with the reason (not a failure).
//
//===----------------------------------------------------------------------===//

#include "SuiteCommon.h"

#include "Cuda/CudaDriver.h"

#include "tessera/Target/CUDA/DynamicLibrary.h"
#include "tessera/bench/Counting.h"

#include <cmath>

using namespace tessera;
using namespace tessera::bench;

namespace {

//===----------------------------------------------------------------------===//
// NCCL, loaded at run time
//===----------------------------------------------------------------------===//

struct NcclCommOpaque;
using NcclComm = NcclCommOpaque *;

/// The NCCL entry points used here (nccl.h: ncclResult_t is an int enum,
/// 0 = ncclSuccess; cudaStream_t is the driver's CUstream).
struct NcclApi {
  int (*ncclGetVersion)(int *) = nullptr;
  const char *(*ncclGetErrorString)(int) = nullptr;
  int (*ncclCommInitAll)(NcclComm *, int, const int *) = nullptr;
  int (*ncclCommDestroy)(NcclComm) = nullptr;
  int (*ncclGroupStart)() = nullptr;
  int (*ncclGroupEnd)() = nullptr;
  int (*ncclAllReduce)(const void *, void *, size_t, int, int, NcclComm,
                       cuda::CuStream) = nullptr;
};

// ncclDataType_t and ncclRedOp_t values of nccl.h.
constexpr int kNcclFloat16 = 6, kNcclFloat32 = 7, kNcclBfloat16 = 9;
constexpr int kNcclSum = 0;

StatusOr<const NcclApi *> loadNccl() {
  static StatusOr<const NcclApi *> loaded = []() -> StatusOr<const NcclApi *> {
    cuda::LibrarySearch search;
    search.displayName = "NCCL";
    search.envVar = "TESSERA_NCCL_PATH";
    search.sonames = {"libnccl.so.2", "libnccl.so"};
    search.directories = cuda::cudaLibraryDirectories();
    TESSERA_ASSIGN_OR_RETURN(cuda::DynamicLibrary lib,
                             cuda::DynamicLibrary::open(search));
    static NcclApi api;
    TESSERA_RETURN_IF_ERROR(lib.bind("ncclGetVersion", api.ncclGetVersion));
    TESSERA_RETURN_IF_ERROR(
        lib.bind("ncclGetErrorString", api.ncclGetErrorString));
    TESSERA_RETURN_IF_ERROR(lib.bind("ncclCommInitAll", api.ncclCommInitAll));
    TESSERA_RETURN_IF_ERROR(lib.bind("ncclCommDestroy", api.ncclCommDestroy));
    TESSERA_RETURN_IF_ERROR(lib.bind("ncclGroupStart", api.ncclGroupStart));
    TESSERA_RETURN_IF_ERROR(lib.bind("ncclGroupEnd", api.ncclGroupEnd));
    TESSERA_RETURN_IF_ERROR(lib.bind("ncclAllReduce", api.ncclAllReduce));
    return &api;
  }();
  return loaded;
}

Status ncclStatus(const NcclApi &api, int result, const char *call) {
  if (result == 0)
    return okStatus();
  return Status(StatusCode::kInternal,
                std::string(call) + " failed: " +
                    (api.ncclGetErrorString
                         ? api.ncclGetErrorString(result)
                         : "error " + std::to_string(result)));
}

#define NCCL_RETURN_IF_ERROR(api, fn, ...)                                     \
  TESSERA_RETURN_IF_ERROR(ncclStatus((api), (api).fn(__VA_ARGS__), #fn))

/// One rank: a GPU's primary context, its buffers, stream and events.
struct Rank {
  cuda::CuDevice device = 0;
  cuda::CuContext context = nullptr;
  cuda::CuDevicePtr send = 0, recv = 0;
  cuda::CuStream stream = nullptr;
  cuda::CuEvent start = nullptr, end = nullptr;
  NcclComm comm = nullptr;
};

/// Every rank of a case; releases what it acquired.
struct Ranks {
  const cuda::CudaDriverApi *cu = nullptr;
  const NcclApi *nccl = nullptr;
  std::vector<Rank> ranks;

  ~Ranks() {
    for (Rank &r : ranks) {
      if (!r.context)
        continue;
      cu->cuCtxSetCurrent(r.context);
      if (r.comm)
        nccl->ncclCommDestroy(r.comm);
      if (r.start)
        cu->cuEventDestroy_v2(r.start);
      if (r.end)
        cu->cuEventDestroy_v2(r.end);
      if (r.stream)
        cu->cuStreamDestroy_v2(r.stream);
      if (r.send)
        cu->cuMemFree_v2(r.send);
      if (r.recv)
        cu->cuMemFree_v2(r.recv);
      cu->cuDevicePrimaryCtxRelease_v2(r.device);
    }
  }

  Status init(int count, size_t bytes) {
    ranks.resize(size_t(count));
    std::vector<int> devices;
    for (int i = 0; i < count; ++i) {
      Rank &r = ranks[size_t(i)];
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuDeviceGet, &r.device, i);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuDevicePrimaryCtxRetain, &r.context,
                                 r.device);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuCtxSetCurrent, r.context);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuMemAlloc_v2, &r.send, bytes);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuMemAlloc_v2, &r.recv, bytes);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuStreamCreate, &r.stream,
                                 cuda::kCuStreamNonBlocking);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuEventCreate, &r.start,
                                 cuda::kCuEventDefault);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuEventCreate, &r.end,
                                 cuda::kCuEventDefault);
      devices.push_back(i);
    }
    std::vector<NcclComm> comms(size_t(count), nullptr);
    NCCL_RETURN_IF_ERROR(*nccl, ncclCommInitAll, comms.data(), count,
                         devices.data());
    for (int i = 0; i < count; ++i)
      ranks[size_t(i)].comm = comms[size_t(i)];
    return okStatus();
  }

  /// One all-reduce of `elements` elements on every rank, in one group;
  /// with `timed`, the longest of the ranks' event intervals in ms.
  StatusOr<double> allReduce(size_t elements, int dtype, bool timed) {
    if (timed)
      for (Rank &r : ranks) {
        TESSERA_CU_RETURN_IF_ERROR(*cu, cuCtxSetCurrent, r.context);
        TESSERA_CU_RETURN_IF_ERROR(*cu, cuEventRecord, r.start, r.stream);
      }
    NCCL_RETURN_IF_ERROR(*nccl, ncclGroupStart);
    for (Rank &r : ranks) {
      int rc = nccl->ncclAllReduce(reinterpret_cast<const void *>(r.send),
                                   reinterpret_cast<void *>(r.recv), elements,
                                   dtype, kNcclSum, r.comm, r.stream);
      if (rc != 0) {
        nccl->ncclGroupEnd();
        return ncclStatus(*nccl, rc, "ncclAllReduce");
      }
    }
    NCCL_RETURN_IF_ERROR(*nccl, ncclGroupEnd);
    double ms = 0;
    for (Rank &r : ranks) {
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuCtxSetCurrent, r.context);
      if (timed)
        TESSERA_CU_RETURN_IF_ERROR(*cu, cuEventRecord, r.end, r.stream);
      TESSERA_CU_RETURN_IF_ERROR(*cu, cuStreamSynchronize, r.stream);
      if (timed) {
        float elapsed = 0;
        TESSERA_CU_RETURN_IF_ERROR(*cu, cuEventElapsedTime, &elapsed, r.start,
                                   r.end);
        ms = std::max(ms, double(elapsed));
      }
    }
    return ms;
  }
};

/// Input element i of rank r: (r + 1) * ((i % 7) - 3) / 4. Sums over any
/// number of ranks up to 64 are multiples of 1/4 below 2^11: exact in f16,
/// bf16 and f32.
double inputValue(int rank, size_t i) {
  return double(rank + 1) * (double(i % 7) - 3.0) / 4.0;
}

//===----------------------------------------------------------------------===//
// The suite
//===----------------------------------------------------------------------===//

CaseSpec allReduceCase(int64_t bytes, const std::string &precision) {
  return makeCase("all_reduce", "all_reduce", precision, bytesText(bytes),
                  {{"bytes", bytes}});
}

std::vector<CaseSpec> allReduceCases(const CaseRequest &req) {
  std::vector<std::string> precisions = req.precisions;
  if (precisions.empty())
    precisions = {"fp32"};
  std::vector<CaseSpec> out;
  if (req.sizes == SizeSet::Gpu)
    return out; // not in the GPU set (one GPU)
  for (const std::string &p : precisions) {
    if (p != "fp32" && p != "fp16" && p != "bf16")
      continue;
    if (req.sizes == SizeSet::Custom) {
      for (const auto &d : req.custom)
        if (matches(d, {"bytes"}, {}))
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

CaseResult runAllReduce(RunContext &ctx, const CaseSpec &spec) {
  CaseResult r = startResult(ctx, spec);
  auto skip = [&](const std::string &why) {
    r.skipped = true;
    r.failure = why;
    return r;
  };
  auto fail = [&](const Status &s) {
    r.failure = firstLine(s.toString());
    return r;
  };
  if (ctx.device != DeviceKind::Cuda)
    return skip(std::string("all_reduce runs between GPUs (--device cuda); "
                            "this run is on ") +
                deviceKindName(ctx.device));
  auto cu = cuda::loadCudaDriver();
  if (!cu.ok())
    return skip("no CUDA driver: " + firstLine(cu.status().message()));
  int count = 0;
  if ((*cu)->cuDeviceGetCount(&count) != 0 || count < 2)
    return skip(std::to_string(count) +
                " GPU(s) found; all_reduce needs at least two");
  auto nccl = loadNccl();
  if (!nccl.ok())
    return skip(firstLine(nccl.status().message()));

  const DType dt = storageOf(spec.precision);
  const int ncclType = dt == DType::F16    ? kNcclFloat16
                       : dt == DType::BF16 ? kNcclBfloat16
                                           : kNcclFloat32;
  const size_t esize = dtypeSize(dt);
  const size_t elements = size_t(spec.dim("bytes")) / esize;
  const size_t bytes = elements * esize;
  Ranks ranks;
  ranks.cu = *cu;
  ranks.nccl = *nccl;
  if (Status s = ranks.init(count, bytes); !s.ok())
    return fail(s);
  r.params["ranks"] = std::to_string(count);

  // Inputs, one run, the check against the exact sums.
  std::vector<uint8_t> host(bytes);
  for (int k = 0; k < count; ++k) {
    for (size_t i = 0; i < elements; ++i)
      storeFromDouble(host.data(), dt, i, inputValue(k, i));
    Rank &rk = ranks.ranks[size_t(k)];
    (*cu)->cuCtxSetCurrent(rk.context);
    if (Status s = cuda::cudaResultToStatus(
            **cu, (*cu)->cuMemcpyHtoD_v2(rk.send, host.data(), bytes),
            "cuMemcpyHtoD", __FILE__, __LINE__);
        !s.ok())
      return fail(s);
  }
  if (auto run = ranks.allReduce(elements, ncclType, false); !run.ok())
    return fail(run.status());
  const double rankSum = double(count) * double(count + 1) / 2.0;
  int64_t bad = 0;
  for (Rank &rk : ranks.ranks) {
    (*cu)->cuCtxSetCurrent(rk.context);
    if (Status s = cuda::cudaResultToStatus(
            **cu, (*cu)->cuMemcpyDtoH_v2(host.data(), rk.recv, bytes),
            "cuMemcpyDtoH", __FILE__, __LINE__);
        !s.ok())
      return fail(s);
    for (size_t i = 0; i < elements; ++i) {
      double want = rankSum * (double(i % 7) - 3.0) / 4.0;
      double got = loadAsDouble(host.data(), dt, i);
      r.maxAbsError = std::max(r.maxAbsError, std::fabs(got - want));
      bad += got != want;
    }
  }
  if (bad) {
    r.failure = "wrong result: " + std::to_string(bad) +
                " elements differ from the exact sum over " +
                std::to_string(count) + " ranks";
    return r;
  }

  auto run = sample(
      ctx.sampler, [&] { return ranks.allReduce(elements, ncclType, true); },
      [] {});
  if (!run.ok())
    return fail(run.status());
  r.samples = run->samples;
  r.stopReason = run->stopReason;
  r.stats = computeStats(r.samples);
  r.work.bytes = double(bytes);
  r.gbs = achievedGBs(r.work, r.stats.median); // algbw
  r.resources["busbwGBs"] = allReduceBusBandwidth(r.gbs, count);
  r.passed = true;
  return r;
}

} // namespace

Suite bench::allReduceSuite() {
  Suite s;
  s.name = "all_reduce";
  s.description = "NCCL all-reduce over every GPU, algbw and busbw as "
                  "nccl-tests (skipped with the reason on fewer than two "
                  "GPUs)";
  s.precisions = {"fp32", "fp16", "bf16"};
  s.defaultPrecisions = {"fp32"};
  s.sizeKeys = {"bytes"};
  s.cases = allReduceCases;
  s.run = runAllReduce;
  return s;
}
