//===- OpenBlas.h - OpenBLAS loaded at run time -----------------*- C++ -*-===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The GEMM baseline: OpenBLAS's cblas_sgemm, loaded with dlopen so that the
/// benchmark suite builds and runs (reporting the baseline as unavailable)
/// on machines without OpenBLAS.
///
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_BASELINES_OPENBLAS_H
#define TESSERA_BENCHSUITE_BASELINES_OPENBLAS_H

#include <cstdint>
#include <string>

namespace tessera::bench {

/// Process-wide handle on a BLAS library providing cblas_sgemm.
///
/// The library is looked up once, on the first call to get(): first the path
/// in the environment variable TESSERA_OPENBLAS_LIBRARY (if set), then
/// "libopenblas.so.0", "libopenblas.so" and "libblas.so.3" through the
/// dynamic loader's search path. It is never unloaded. Unless the user set
/// OPENBLAS_CORETYPE, get() sets it (process-wide, before loading) to the
/// kernel set matching the CPU's ISA, because old OpenBLAS releases fall back
/// to SSE3 kernels on CPUs newer than themselves.
class OpenBlas {
public:
  /// Returns the singleton, loading the library on first use. Never null.
  static OpenBlas *get();

  /// True when cblas_sgemm was resolved.
  bool available() const { return sgemmFn != nullptr; }

  /// Why the library is unavailable (every path tried, with dlerror()
  /// messages); empty when available().
  std::string unavailableReason() const { return reason; }

  /// Sets the number of BLAS threads (<= 0 means all hardware threads). A
  /// no-op when the library has no openblas_set_num_threads.
  void setNumThreads(int threads);

  /// The library's current thread count, or 0 when it cannot be queried.
  int numThreads() const;

  /// Row-major single-precision GEMM:
  ///   C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C,
  /// where op(X) is X or its transpose. lda/ldb/ldc are row strides of the
  /// arrays as stored (A is M x K, or K x M when transA). Returns false, doing
  /// nothing, when the library is unavailable or a size does not fit the
  /// library's integer type.
  bool sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
             float alpha, const float *A, int64_t lda, const float *B,
             int64_t ldb, float beta, float *C, int64_t ldc) const;

  /// Absolute path of the loaded library file (symlinks resolved), or empty.
  std::string libraryPath() const { return path; }

  /// OpenBLAS's build configuration string (openblas_get_config), or empty.
  std::string config() const { return configText; }

  /// The kernel set OpenBLAS selected for this CPU (openblas_get_corename),
  /// or empty.
  std::string coreName() const;

  /// The OPENBLAS_CORETYPE value this class set before loading the library
  /// (e.g. "SkylakeX" on an AVX-512 CPU), or empty when it left the variable
  /// alone because the user had set it or the CPU has no AVX2. See README.md.
  std::string forcedCoreTypeName() const { return forcedCoreType; }

private:
  OpenBlas();

  using SgemmFn = void (*)();
  using SetThreadsFn = void (*)(int);
  using GetThreadsFn = int (*)();
  using CoreNameFn = char *(*)();

  void *handle = nullptr;
  SgemmFn sgemmFn = nullptr;
  SetThreadsFn setThreadsFn = nullptr;
  GetThreadsFn getThreadsFn = nullptr;
  CoreNameFn coreNameFn = nullptr;
  bool int64Interface = false;
  std::string path;
  std::string configText;
  std::string forcedCoreType;
  std::string reason;
};

/// Floating-point operations of a GEMM as counted by the suite: 2 * M * N * K.
inline double gemmFlops(int64_t M, int64_t N, int64_t K) {
  return 2.0 * static_cast<double>(M) * static_cast<double>(N) *
         static_cast<double>(K);
}

} // namespace tessera::bench

#endif // TESSERA_BENCHSUITE_BASELINES_OPENBLAS_H
