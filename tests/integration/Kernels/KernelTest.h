//===- KernelTest.h - Shared pieces of the end-to-end kernel tests -*- C++
//-*-===//
//
// One Runtime per test binary, kernel-library loading, HostTensor views and
// a checked launch helper. References live in tests/integration/support.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_INTEGRATION_KERNELTEST_H
#define TESSERA_TESTS_INTEGRATION_KERNELTEST_H

#include "DataGen.h"
#include "HostTensor.h"
#include "Reference.h"
#include "Tolerance.h"
#include "tessera/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

namespace tessera::testing {

/// Never destroyed: JIT-compiled code must not be torn down after LLVM's
/// own static objects at process exit (see docs/embedding.md).
inline Runtime &runtime() {
  static Runtime *rt = new Runtime();
  return *rt;
}

/// The device the kernel tests run on: TESSERA_DEVICE (cpu by default; ctest
/// runs the binary once per device: cpu, sim, cuda).
inline DeviceKind testDevice() {
  const char *d = std::getenv("TESSERA_DEVICE");
  if (d && std::string(d) == "sim")
    return DeviceKind::Sim;
  if (d && std::string(d) == "cuda")
    return DeviceKind::Cuda;
  return DeviceKind::Cpu;
}

/// Skips every test when the test device cannot run kernels here (the
/// `cuda` run on a machine without a GPU), with the runtime's reason.
class TestDeviceEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    Status s = runtime().deviceStatus(testDevice());
    if (!s.ok())
      GTEST_SKIP() << deviceKindName(testDevice())
                   << " device: " << s.toString();
  }
};

inline std::string kernelsDir() {
  const char *src = std::getenv("TESSERA_SOURCE_DIR");
  return std::string(src ? src : ".") + "/kernels_dsl";
}

/// The parsed kernel-library file `family` ("gemm", "stream", ...).
inline std::shared_ptr<Program> libraryProgram(const std::string &family) {
  static std::map<std::string, std::shared_ptr<Program>> cache;
  auto it = cache.find(family);
  if (it != cache.end())
    return it->second;
  auto p = runtime().loadFile(kernelsDir() + "/" + family + ".tile");
  if (!p.ok()) {
    ADD_FAILURE() << p.status().toString();
    return nullptr;
  }
  cache[family] = *p;
  return *p;
}

inline std::shared_ptr<Kernel> libraryKernel(const std::string &family,
                                             const std::string &name,
                                             CompileOptions opts = {}) {
  auto prog = libraryProgram(family);
  if (!prog)
    return nullptr;
  auto k = runtime().compile(*prog, name, opts, testDevice());
  if (!k.ok()) {
    ADD_FAILURE() << family << "." << name << ": " << k.status().toString();
    return nullptr;
  }
  return *k;
}

inline TensorView view(HostTensor &t) {
  TensorView v;
  v.data = t.data();
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.strides = t.strides();
  return v;
}

inline CompileOptions withPrecision(DType storage,
                                    std::map<std::string, ConstValue> c = {}) {
  CompileOptions o;
  o.precision = dtypeName(storage);
  o.constants = std::move(c);
  return o;
}

/// Compares and reports the summary on failure; usable with `<<`.
#define EXPECT_CLOSE(actual, expected, tol)                                    \
  EXPECT_TRUE(::tessera::testing::compare((actual), (expected), (tol)).pass)   \
      << ::tessera::testing::compare((actual), (expected), (tol)).summary

#define ASSERT_LAUNCH(kernel, ...)                                             \
  do {                                                                         \
    ASSERT_NE((kernel), nullptr);                                              \
    ::tessera::Status _st = (kernel)->launch(__VA_ARGS__);                     \
    ASSERT_TRUE(_st.ok()) << _st.toString();                                   \
  } while (0)

} // namespace tessera::testing

#endif // TESSERA_TESTS_INTEGRATION_KERNELTEST_H
