//===- ScaleKernel.h - The kernel the runtime API tests launch --*- C++ -*-===//
//
// y = x * s over N floats, BLOCK per program: small enough to compile in
// milliseconds on every device.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_RUNTIMEAPI_SCALEKERNEL_H
#define TESSERA_TESTS_RUNTIMEAPI_SCALEKERNEL_H

namespace tessera::test {

inline constexpr const char *kScaleKernel = R"(
@kernel(grid=(cdiv(N, BLOCK),))
def scale(x: Tensor["N", f32], y: Tensor["N", f32], s: float, BLOCK: constexpr = 64):
    off = tile.program_id(0) * BLOCK
    v = tile.load(x, offsets=(off,), shape=(BLOCK,))
    tile.store(y, v * s, offsets=(off,))
)";

} // namespace tessera::test

#endif // TESSERA_TESTS_RUNTIMEAPI_SCALEKERNEL_H
