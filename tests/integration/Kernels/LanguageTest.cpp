//===- LanguageTest.cpp - Language features end to end --------------------===//
//
// Small kernels, written inline, that exercise one feature of the language
// each (and the regressions found by porting kernels from Triton), run on
// the test device (cpu, sim or cuda, as the other kernel tests) against
// plain loops.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"

#include <cmath>

using namespace tessera;
using namespace tessera::testing;

namespace {

/// Kernel `name` of `source`, compiled for the test device.
std::shared_ptr<Kernel> sourceKernel(const std::string &source,
                                     const std::string &name,
                                     CompileOptions opts = {}) {
  auto prog = runtime().loadSource(name + ".tile", source);
  if (!prog.ok()) {
    ADD_FAILURE() << prog.status().toString();
    return nullptr;
  }
  auto k = runtime().compile(**prog, name, opts, testDevice());
  if (!k.ok()) {
    ADD_FAILURE() << k.status().toString();
    return nullptr;
  }
  return *k;
}

/// out[i, j] = sum_k a[i, k] * b[k, j] for row-major [n, n] matrices.
std::vector<double> matmul(const HostTensor &a, const HostTensor &b,
                           int64_t n) {
  std::vector<double> out(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] += a.at(i * n + k) * b.get({k, j});
  return out;
}

// A tile reshaped by splitting a dimension ((256,) -> (16, 16)) is a valid
// tile.dot operand (the cpu lowering failed on it with an empty message).
TEST(Language, ReshapeSplittingADimensionFeedsDot) {
  auto k = sourceKernel(R"(
@kernel(grid=(1,))
def split_dot(a: Tensor["N", f32], b: Tensor[16, 16, f32],
              out: Tensor[16, 16, f32]):
    x = tile.reshape(tile.load(a, offsets=(0,), shape=(256,)), (16, 16))
    w = tile.load(b, offsets=(0, 0), shape=(16, 16))
    tile.store(out, tile.dot(x, w, tile.zeros((16, 16), f32)), offsets=(0, 0))
)",
                        "split_dot");
  HostTensor a = HostTensor::empty({256}, DType::F32);
  HostTensor b = HostTensor::empty({16, 16}, DType::F32);
  for (int64_t i = 0; i < 256; ++i) {
    a.set({i}, (i % 7) - 3.0);
    b.set({i / 16, i % 16}, (i % 5) * 0.5);
  }
  HostTensor out = HostTensor::zeros({16, 16}, DType::F32);
  ASSERT_LAUNCH(k, {view(a), view(b), view(out)});
  std::vector<double> want = matmul(a, b, 16);
  for (int64_t i = 0; i < 256; ++i)
    ASSERT_EQ(out.at(i), want[i]) << "element " << i;
}

} // namespace
