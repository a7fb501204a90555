//===- main.cpp - An application embedding the Tessera runtime ------------===//
//
// Loads a kernel from source, compiles it for the device named on the
// command line (cpu by default; sim and cuda too), launches it on host
// vectors, then asynchronously on a stream over device memory, and checks
// the results; then saves the compiled kernel in a deployment bundle and
// launches it from there in a second runtime with no compile. Exit status
// 0 when every check passes. Usage: embed_example [DEVICE [WORK_DIR]].
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Warmup.h"
#include "tessera/tessera.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int fail(const std::string &what, const tessera::Status &s) {
  std::fprintf(stderr, "embed_example: %s: %s\n", what.c_str(),
               s.toString().c_str());
  return 1;
}

bool allEqual(const std::vector<float> &v, float want) {
  for (float f : v)
    if (std::fabs(f - want) > 1e-6f)
      return false;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string deviceName = argc > 1 ? argv[1] : "cpu";
  auto device = tessera::parseDeviceKind(deviceName);
  if (!device) {
    std::fprintf(stderr, "embed_example: unknown device '%s'\n",
                 deviceName.c_str());
    return 2;
  }

  tessera::Runtime rt;
  if (tessera::Status s = rt.deviceStatus(*device); !s.ok()) {
    std::printf("embed_example: %s is not available here: %s\n",
                deviceName.c_str(), s.toString().c_str());
    return 0;
  }
  auto program = rt.loadFile(EMBED_KERNEL_FILE);
  if (!program.ok())
    return fail("load", program.status());
  auto saxpy =
      rt.compile(**program, "saxpy", {.constants = {{"BLOCK", 512}}}, *device);
  if (!saxpy.ok())
    return fail("compile", saxpy.status());

  // Host vectors: the runtime stages them for the device.
  const int64_t n = 10000;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  auto vec = [&](std::vector<float> &v) {
    return tessera::TensorView::contiguous(v.data(), tessera::DType::F32, {n});
  };
  if (tessera::Status s = (*saxpy)->launch({vec(x), vec(y), 3.0f}); !s.ok())
    return fail("launch on host vectors", s);
  if (!allEqual(y, 5.0f)) {
    std::fprintf(stderr, "embed_example: wrong result on host vectors\n");
    return 1;
  }

  // Device memory: copied in once, launched on in place, copied out.
  auto dx = rt.allocate(*device, n * sizeof(float));
  auto dy = rt.allocate(*device, n * sizeof(float));
  if (!dx.ok() || !dy.ok())
    return fail("allocate", dx.ok() ? dy.status() : dx.status());
  if (tessera::Status s = dx->copyFrom(x.data(), n * sizeof(float)); !s.ok())
    return fail("copy in", s);
  if (tessera::Status s = dy->copyFrom(y.data(), n * sizeof(float)); !s.ok())
    return fail("copy in", s);
  auto vx = dx->view(tessera::DType::F32, {n});
  auto vy = dy->view(tessera::DType::F32, {n});
  if (!vx.ok() || !vy.ok())
    return fail("view", vx.ok() ? vy.status() : vx.status());
  // Two launches queued on a stream: each returns once queued; the stream
  // runs them in order, after the host has moved on.
  auto stream = rt.createStream(*device);
  if (!stream.ok())
    return fail("stream", stream.status());
  tessera::LaunchOptions onStream;
  onStream.stream = *stream;
  for (int i = 0; i < 2; ++i)
    if (tessera::Status s = (*saxpy)->launch({*vx, *vy, -1.0f}, onStream);
        !s.ok())
      return fail("launch on device memory", s);
  if (tessera::Status s = stream->synchronize(); !s.ok())
    return fail("stream", s);
  if (tessera::Status s = dy->copyTo(y.data(), n * sizeof(float)); !s.ok())
    return fail("copy out", s);
  if (!allEqual(y, 3.0f)) {
    std::fprintf(stderr, "embed_example: wrong result on device memory\n");
    return 1;
  }
  std::printf("embed_example: saxpy on %s: ok (%s)\n", deviceName.c_str(),
              tessera::compilerVersion());

  // Zero JIT at start: the compiled kernel goes into a deployment bundle,
  // and a second runtime (a later start of the application) that loads it
  // launches saxpy without compiling. (sim code is not bundled.)
  if (*device == tessera::DeviceKind::Sim)
    return 0;
  std::string bundle = std::string(argc > 2 ? argv[2] : ".") + "/embed-" +
                       deviceName + ".tsbundle";
  if (tessera::Status s = rt.saveBundle(bundle, {*saxpy}); !s.ok())
    return fail("save bundle", s);
  tessera::Runtime later;
  // importBundle also merges the bundle's tuning records (none here) into
  // the tuning cache TunedKernel reads.
  auto info =
      tessera::autotune::importBundle(later, bundle, bundle + ".tuning");
  if (!info.ok())
    return fail("load bundle", info.status());
  auto again = later.loadFile(EMBED_KERNEL_FILE);
  if (!again.ok())
    return fail("load", again.status());
  auto warmed =
      later.compile(**again, "saxpy", {.constants = {{"BLOCK", 512}}}, *device);
  if (!warmed.ok())
    return fail("compile from the bundle", warmed.status());
  std::vector<float> z(n, 0.0f);
  if (tessera::Status s = (*warmed)->launch({vec(x), vec(z), 2.0f}); !s.ok())
    return fail("launch from the bundle", s);
  tessera::CompileCacheStats stats = later.cacheStats();
  if (!allEqual(z, 2.0f) || stats.compiles != 0 || stats.bundleLoads != 1) {
    std::fprintf(stderr,
                 "embed_example: from the bundle: %s, %llu compiles, %llu "
                 "bundle loads\n",
                 allEqual(z, 2.0f) ? "right" : "wrong",
                 (unsigned long long)stats.compiles,
                 (unsigned long long)stats.bundleLoads);
    return 1;
  }
  std::printf("embed_example: saxpy on %s from a bundle: ok, no compile\n",
              deviceName.c_str());
  return 0;
}
