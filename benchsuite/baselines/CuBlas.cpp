//===- CuBlas.cpp - cuBLAS loaded at run time -----------------------------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//

#include "CuBlas.h"

#include "tessera/Target/CUDA/DynamicLibrary.h"

#include <climits>
#include <cstdlib>
#include <string>

#include <dlfcn.h>

using namespace tessera::bench;

namespace {

// The C types and enumerator values of the cuBLAS and CUDA interfaces used
// here (fixed by their ABIs; C enums are passed as int).
using CublasStatus = int;
using CublasHandle = void *;
using CudaStream = void *;
constexpr CublasStatus kCublasSuccess = 0;
constexpr int kCublasOpN = 0;             // CUBLAS_OP_N
constexpr int kCudaR32F = 0;              // CUDA_R_32F
constexpr int kCudaR16F = 2;              // CUDA_R_16F
constexpr int kCudaR16BF = 14;            // CUDA_R_16BF
constexpr int kCublasCompute32F = 68;     // CUBLAS_COMPUTE_32F
constexpr int kCublasCompute32FTF32 = 77; // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int kCublasGemmDefault = -1;    // CUBLAS_GEMM_DEFAULT
constexpr int kCublasDefaultMath = 0;     // CUBLAS_DEFAULT_MATH

using CreateFn = CublasStatus (*)(CublasHandle *);
using DestroyFn = CublasStatus (*)(CublasHandle);
using SetStreamFn = CublasStatus (*)(CublasHandle, CudaStream);
using SetMathModeFn = CublasStatus (*)(CublasHandle, int);
using GetVersionFn = CublasStatus (*)(CublasHandle, int *);
using StatusStringFn = const char *(*)(CublasStatus);
using GemmExFn = CublasStatus (*)(CublasHandle, int transa, int transb, int m,
                                  int n, int k, const void *alpha,
                                  const void *A, int Atype, int lda,
                                  const void *B, int Btype, int ldb,
                                  const void *beta, void *C, int Ctype, int ldc,
                                  int computeType, int algo);
using CtxSynchronizeFn = int (*)();
using GetErrorNameFn = int (*)(int, const char **);

/// Where cuBLAS is looked for (see CuBlas.h).
tessera::cuda::LibrarySearch cublasSearch() {
  tessera::cuda::LibrarySearch search;
  search.displayName = "cuBLAS";
  search.envVar = "TESSERA_CUBLAS_PATH";
  search.sonames = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  search.directories = tessera::cuda::cudaLibraryDirectories();
  return search;
}

const char *cublasStatusName(CublasStatus status) {
  switch (status) {
  case 0:
    return "CUBLAS_STATUS_SUCCESS";
  case 1:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case 3:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case 7:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case 8:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case 11:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case 13:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case 14:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case 15:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case 16:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

} // namespace

/// The process-wide bound entry points.
struct CuBlas::Library {
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  SetStreamFn setStream = nullptr; ///< Optional.
  SetMathModeFn setMathMode = nullptr;
  GemmExFn gemmEx = nullptr;
  GetVersionFn getVersion = nullptr;     ///< Optional.
  StatusStringFn statusString = nullptr; ///< Optional.
  CtxSynchronizeFn ctxSynchronize = nullptr;
  GetErrorNameFn getErrorName = nullptr; ///< Optional.
  std::string path;
  /// Why the library cannot be used; empty when it can.
  std::string error;

  Library();
  std::string describe(const char *call, CublasStatus status) const;
};

CuBlas::Library::Library() {
  auto cublas = tessera::cuda::DynamicLibrary::open(cublasSearch());
  if (!cublas.ok()) {
    error = cublas.status().toString();
    return;
  }
  for (tessera::Status s : {cublas->bind("cublasCreate_v2", create),
                            cublas->bind("cublasDestroy_v2", destroy),
                            cublas->bind("cublasSetMathMode", setMathMode),
                            cublas->bind("cublasGemmEx", gemmEx)})
    if (!s.ok()) {
      error = s.toString();
      return;
    }
  // Optional entry points.
  (void)cublas->bind("cublasSetStream_v2", setStream);
  (void)cublas->bind("cublasGetVersion_v2", getVersion);
  (void)cublas->bind("cublasGetStatusString", statusString);
  // The file the loader picked (the search may have named a soname).
  path = cublas->path();
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(gemmEx), &info) && info.dli_fname)
    if (char *real = realpath(info.dli_fname, nullptr)) {
      path = real;
      std::free(real);
    }
  // The driver is already loaded by whoever created the context (the
  // runtime, with the same search); this only finds it again.
  tessera::cuda::LibrarySearch driverSearch;
  driverSearch.displayName = "CUDA driver";
  driverSearch.envVar = "TESSERA_LIBCUDA_PATH";
  driverSearch.sonames = {"libcuda.so.1", "libcuda.so"};
  auto driver = tessera::cuda::DynamicLibrary::open(driverSearch);
  if (!driver.ok()) {
    error = driver.status().toString();
    return;
  }
  if (tessera::Status s = driver->bind("cuCtxSynchronize", ctxSynchronize);
      !s.ok()) {
    error = s.toString();
    return;
  }
  (void)driver->bind("cuGetErrorName", getErrorName);
}

std::string CuBlas::Library::describe(const char *call,
                                      CublasStatus status) const {
  std::string text = std::string(call) + " failed: " + cublasStatusName(status);
  if (statusString)
    if (const char *s = statusString(status); s && *s)
      text += std::string(" (") + s + ")";
  return text;
}

std::unique_ptr<CuBlas> CuBlas::open(std::string *error) {
  static const Library library;
  if (!library.error.empty()) {
    *error = library.error;
    return nullptr;
  }
  CublasHandle handle = nullptr;
  if (CublasStatus s = library.create(&handle); s != kCublasSuccess) {
    *error = library.describe("cublasCreate_v2", s);
    return nullptr;
  }
  std::unique_ptr<CuBlas> result(new CuBlas(&library, handle, 0));
  // No TF32 unless a call asks for it through its compute type.
  if (CublasStatus s = library.setMathMode(handle, kCublasDefaultMath);
      s != kCublasSuccess) {
    *error = library.describe("cublasSetMathMode", s);
    return nullptr;
  }
  // The legacy default stream, on which the runtime launches its kernels.
  if (library.setStream)
    if (CublasStatus s = library.setStream(handle, nullptr);
        s != kCublasSuccess) {
      *error = library.describe("cublasSetStream_v2", s);
      return nullptr;
    }
  if (library.getVersion) {
    int version = 0;
    if (library.getVersion(handle, &version) == kCublasSuccess)
      result->versionNumber = version;
  }
  return result;
}

CuBlas::~CuBlas() {
  if (handle)
    (void)library->destroy(handle);
}

const std::string &CuBlas::libraryPath() const { return library->path; }

bool CuBlas::gemm(CuBlasOperand operands, CuBlasCompute compute, int64_t M,
                  int64_t N, int64_t K, float alpha, const void *A,
                  const void *B, float beta, void *C,
                  std::string *error) const {
  for (int64_t v : {M, N, K})
    if (v < 0 || v > INT32_MAX) {
      *error = "cublasGemmEx: a size exceeds the 32-bit interface";
      return false;
    }
  int type = operands == CuBlasOperand::F32   ? kCudaR32F
             : operands == CuBlasOperand::F16 ? kCudaR16F
                                              : kCudaR16BF;
  int computeType =
      compute == CuBlasCompute::F32 ? kCublasCompute32F : kCublasCompute32FTF32;
  int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  // Row-major C (M x N) is column-major C^T (N x M) with leading dimension
  // N; likewise A^T (K x M, ld K) and B^T (N x K, ld N). C^T = B^T A^T.
  CublasStatus s = library->gemmEx(
      handle, kCublasOpN, kCublasOpN, n, m, k, &alpha, B, type, n > 0 ? n : 1,
      A, type, k > 0 ? k : 1, &beta, C, kCudaR32F, n > 0 ? n : 1, computeType,
      kCublasGemmDefault);
  if (s != kCublasSuccess) {
    *error = library->describe("cublasGemmEx", s);
    return false;
  }
  return true;
}

bool CuBlas::synchronize(std::string *error) const {
  int rc = library->ctxSynchronize();
  if (rc == 0)
    return true;
  const char *name = nullptr;
  if (!library->getErrorName || library->getErrorName(rc, &name) != 0 || !name)
    name = "CUDA_ERROR_UNKNOWN";
  *error = "cuCtxSynchronize failed: " + std::string(name) + " (" +
           std::to_string(rc) + ")";
  return false;
}
