//===- CuBlas.h - cuBLAS loaded at run time ---------------------*- C++ -*-===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The GPU GEMM baseline: cuBLAS's cublasGemmEx, loaded with dlopen so that
/// the benchmark suite builds without a CUDA toolkit and runs (reporting the
/// baseline as unavailable) on machines without cuBLAS or without a GPU. No
/// CUDA header is included anywhere: the few types and enumerator values
/// used are declared in CuBlas.cpp.
///
/// cuBLAS runs in the CUDA primary context of device 0, the context the
/// Tessera runtime retains for its `cuda` device, so device addresses of the
/// runtime's buffers can be passed to it directly. Work is issued on the
/// legacy default stream, the stream the runtime launches on.
///
//===----------------------------------------------------------------------===//

#ifndef TESSERA_BENCHSUITE_BASELINES_CUBLAS_H
#define TESSERA_BENCHSUITE_BASELINES_CUBLAS_H

#include <cstdint>
#include <memory>
#include <string>

namespace tessera::bench {

/// Storage types of the GEMM operands A and B.
enum class CuBlasOperand { F32, F16, BF16 };

/// How products are formed and summed. Both accumulate in f32; FastTF32
/// lets cuBLAS round f32 inputs to TF32 for the tensor cores.
enum class CuBlasCompute { F32, F32FastTF32 };

/// A cuBLAS handle on the current CUDA context, with the entry points the
/// suite needs.
///
/// The library is looked up once per process with Tessera's CUDA library
/// search (tessera::cuda::DynamicLibrary): the file named by
/// TESSERA_CUBLAS_PATH (if set, only that), else "libcublas.so.13",
/// "libcublas.so.12" and "libcublas.so" through the dynamic loader's search
/// path, then in $CUDA_HOME/lib64 and /usr/local/cuda/lib64. It is never
/// unloaded. The CUDA driver's
/// cuCtxSynchronize is bound as well ($TESSERA_LIBCUDA_PATH, then
/// libcuda.so.1, libcuda.so), so that callers can wait for cuBLAS work
/// without the CUDA runtime library.
class CuBlas {
public:
  /// Loads the library (on first use) and creates a handle in math mode
  /// CUBLAS_DEFAULT_MATH. Returns null and sets `error` (every path tried,
  /// with the loader's messages, or the failing cuBLAS call) when cuBLAS
  /// cannot be used. Call it once the CUDA device is known to be present.
  static std::unique_ptr<CuBlas> open(std::string *error);

  /// Destroys the handle. Must run before the CUDA context goes away.
  ~CuBlas();
  CuBlas(const CuBlas &) = delete;
  CuBlas &operator=(const CuBlas &) = delete;

  /// Absolute path of the loaded library file (symlinks resolved).
  const std::string &libraryPath() const;

  /// cuBLAS's version number (e.g. 130100 for 13.1.0), or 0 when the
  /// library does not report it.
  int version() const { return versionNumber; }

  /// Row-major GEMM on device memory:
  ///   C[M x N] = alpha * A[M x K] * B[K x N] + beta * C,
  /// with A and B of type `operands`, contiguous (row strides K and N), and C
  /// f32, contiguous (row stride N). cuBLAS is column-major, so this computes
  /// C^T = B^T * A^T, which has the same memory layout. Enqueues the work and
  /// returns without waiting. Returns false, with the cuBLAS status in
  /// `error`, when cuBLAS rejects the call or a size exceeds its 32-bit
  /// interface.
  bool gemm(CuBlasOperand operands, CuBlasCompute compute, int64_t M, int64_t N,
            int64_t K, float alpha, const void *A, const void *B, float beta,
            void *C, std::string *error) const;

  /// Waits for all work of the current CUDA context (cuCtxSynchronize).
  /// Returns false, with the CUDA error code in `error`, if the wait fails.
  bool synchronize(std::string *error) const;

private:
  struct Library;
  CuBlas(const Library *library, void *handle, int version)
      : library(library), handle(handle), versionNumber(version) {}

  const Library *library;
  void *handle;
  int versionNumber;
};

} // namespace tessera::bench

#endif // TESSERA_BENCHSUITE_BASELINES_CUBLAS_H
