//===- OpenBlas.cpp - OpenBLAS loaded at run time -------------------------===//
//
// Part of the Tessera project.
//
//===----------------------------------------------------------------------===//

#include "OpenBlas.h"
#include "ThreadPool.h"

#include <climits>
#include <cstdlib>
#include <vector>

#include <dlfcn.h>

using namespace tessera::bench;

namespace {

// CBLAS enumerator values (fixed by the CBLAS interface).
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;

using Sgemm32 = void (*)(int, int, int, int32_t, int32_t, int32_t, float,
                         const float *, int32_t, const float *, int32_t, float,
                         float *, int32_t);
using Sgemm64 = void (*)(int, int, int, int64_t, int64_t, int64_t, float,
                         const float *, int64_t, const float *, int64_t, float,
                         float *, int64_t);
using ConfigFn = char *(*)();

template <typename Fn> Fn lookup(void *handle, const char *name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

std::string resolvedPath(const char *file) {
  if (!file || !*file)
    return {};
  if (char *real = realpath(file, nullptr)) {
    std::string result(real);
    std::free(real);
    return result;
  }
  return file;
}

/// The OpenBLAS kernel set to force for this CPU, or null to let OpenBLAS
/// detect it. Debian's OpenBLAS 0.3.21 does not know recent Xeons (family 6
/// model 0xCF) and falls back to its SSE3 "Prescott" kernels, 7x slower on
/// sgemm; its AVX-512 kernels are named "SkylakeX" (newer releases use the
/// same sgemm kernels for Sapphire Rapids and Zen 4), its AVX2 ones
/// "Haswell".
const char *coreTypeForThisCpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
#endif
  return nullptr;
}

} // namespace

OpenBlas *OpenBlas::get() {
  static OpenBlas instance;
  return &instance;
}

OpenBlas::OpenBlas() {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("TESSERA_OPENBLAS_LIBRARY"); env && *env)
    candidates.emplace_back(env);
  candidates.emplace_back("libopenblas.so.0");
  candidates.emplace_back("libopenblas.so");
  candidates.emplace_back("libblas.so.3");

  // OPENBLAS_CORETYPE is read when the library initialises, so it must be set
  // before dlopen. A value set by the user always wins.
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    if (const char *core = coreTypeForThisCpu()) {
      setenv("OPENBLAS_CORETYPE", core, /*overwrite=*/0);
      forcedCoreType = core;
    }
  }

  std::string failures;
  for (const std::string &name : candidates) {
    void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *err = dlerror();
      failures += "  " + name + ": " + (err ? err : "dlopen failed") + "\n";
      continue;
    }
    auto sgemm = lookup<SgemmFn>(lib, "cblas_sgemm");
    if (!sgemm) {
      failures += "  " + name + ": no symbol cblas_sgemm\n";
      dlclose(lib);
      continue;
    }
    handle = lib;
    sgemmFn = sgemm;
    break;
  }
  if (!handle) {
    reason = "no usable BLAS library with cblas_sgemm was found; tried:\n" +
             failures;
    if (!reason.empty() && reason.back() == '\n')
      reason.pop_back();
    return;
  }

  setThreadsFn = lookup<SetThreadsFn>(handle, "openblas_set_num_threads");
  getThreadsFn = lookup<GetThreadsFn>(handle, "openblas_get_num_threads");
  coreNameFn = lookup<CoreNameFn>(handle, "openblas_get_corename");
  if (auto configFn = lookup<ConfigFn>(handle, "openblas_get_config")) {
    if (const char *text = configFn())
      configText = text;
  }
  // OpenBLAS built with INTERFACE64 takes 64-bit integers and says so in its
  // configuration string.
  int64Interface = configText.find("USE64BITINT") != std::string::npos;

  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(sgemmFn), &info) && info.dli_fname)
    path = resolvedPath(info.dli_fname);
}

void OpenBlas::setNumThreads(int threads) {
  if (setThreadsFn)
    setThreadsFn(resolveThreads(threads));
}

int OpenBlas::numThreads() const { return getThreadsFn ? getThreadsFn() : 0; }

std::string OpenBlas::coreName() const {
  if (!coreNameFn)
    return {};
  const char *name = coreNameFn();
  return name ? std::string(name) : std::string();
}

bool OpenBlas::sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                     float alpha, const float *A, int64_t lda, const float *B,
                     int64_t ldb, float beta, float *C, int64_t ldc) const {
  if (!sgemmFn)
    return false;
  int ta = transA ? kCblasTrans : kCblasNoTrans;
  int tb = transB ? kCblasTrans : kCblasNoTrans;
  if (int64Interface) {
    reinterpret_cast<Sgemm64>(sgemmFn)(kCblasRowMajor, ta, tb, M, N, K, alpha,
                                       A, lda, B, ldb, beta, C, ldc);
    return true;
  }
  for (int64_t v : {M, N, K, lda, ldb, ldc})
    if (v < 0 || v > INT32_MAX)
      return false;
  reinterpret_cast<Sgemm32>(sgemmFn)(
      kCblasRowMajor, ta, tb, static_cast<int32_t>(M), static_cast<int32_t>(N),
      static_cast<int32_t>(K), alpha, A, static_cast<int32_t>(lda), B,
      static_cast<int32_t>(ldb), beta, C, static_cast<int32_t>(ldc));
  return true;
}
