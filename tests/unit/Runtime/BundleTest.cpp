//===- BundleTest.cpp - Kernel code from bundles and the disk cache -------===//
//
// A runtime that loads a deployment bundle launches the kernels it covers
// with no compile; bundles from another version of Tessera or for another
// machine are refused with a message and the kernels compile instead;
// damaged bundles are DATA_LOSS. The cpu device's code goes through the
// disk cache: a second runtime loads it, a damaged file is compiled again.
//
//===----------------------------------------------------------------------===//

#include "Cache/Bundle.h"
#include "Cache/KernelArtifact.h"

#include "ScopedEnv.h"
#include "tessera/Support/Files.h"
#include "tessera/tessera.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace tessera;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
using tessera::test::ScopedEnv;

namespace {

const char *kAxpy = R"(
@kernel(grid=(cdiv(N, BLOCK),))
def axpy(x: Tensor["N", f32], y: Tensor["N", f32], a: float, BLOCK: constexpr = 64):
    off = tile.program_id(0) * BLOCK
    xv = tile.load(x, offsets=(off,), shape=(BLOCK,))
    yv = tile.load(y, offsets=(off,), shape=(BLOCK,))
    tile.store(y, a * xv + yv, offsets=(off,))
)";

/// Compiles axpy with BLOCK = `block` on `rt`'s cpu device and checks one
/// launch of it.
std::shared_ptr<Kernel> compileAndRunAxpy(Runtime &rt, int block = 32) {
  auto prog = rt.loadSource("axpy.tile", kAxpy);
  EXPECT_TRUE(prog.ok()) << prog.status().toString();
  if (!prog.ok())
    return nullptr;
  auto k = rt.compile(**prog, "axpy", {.constants = {{"BLOCK", block}}});
  EXPECT_TRUE(k.ok()) << k.status().toString();
  if (!k.ok())
    return nullptr;
  std::vector<float> x(100), y(100, 1.0f);
  for (int i = 0; i < 100; ++i)
    x[i] = float(i);
  Status s = (*k)->launch({TensorView::contiguous(x.data(), DType::F32, {100}),
                           TensorView::contiguous(y.data(), DType::F32, {100}),
                           Arg(3.0)});
  EXPECT_TRUE(s.ok()) << s.toString();
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(y[i], 3.0f * i + 1.0f) << i;
  return *k;
}

class BundleTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto d = TempDir::create("bundle");
    ASSERT_TRUE(d.ok()) << d.status().toString();
    dir_ = std::make_unique<TempDir>(std::move(*d));
  }
  /// A bundle of axpy (BLOCK = 32) for this machine's cpu device.
  std::string writeAxpyBundle(const std::string &records = "") {
    Runtime rt;
    auto k = compileAndRunAxpy(rt);
    std::string path = dir_->file("axpy.tsbundle");
    Status s = rt.saveBundle(path, {k}, records);
    EXPECT_TRUE(s.ok()) << s.toString();
    return path;
  }
  // The disk cache stays out of these tests: every load is the bundle's.
  ScopedEnv noDiskCache_{"TESSERA_KERNEL_CACHE", "off"};
  std::unique_ptr<TempDir> dir_;
};

TEST_F(BundleTest, KernelsItCoversLaunchWithNoCompile) {
  std::string path = writeAxpyBundle(R"({"records": []})");
  Runtime rt;
  auto info = rt.loadBundle(path);
  ASSERT_TRUE(info.ok()) << info.status().toString();
  EXPECT_EQ(info->kernels, 1u);
  EXPECT_TRUE(info->skipped.empty());
  EXPECT_EQ(info->tuningRecords, R"({"records": []})");
  compileAndRunAxpy(rt);
  CompileCacheStats s = rt.cacheStats();
  EXPECT_EQ(s.compiles, 0u);
  EXPECT_EQ(s.bundleLoads, 1u);
  // A configuration the bundle does not hold compiles as usual.
  compileAndRunAxpy(rt, 16);
  EXPECT_EQ(rt.cacheStats().compiles, 1u);
}

TEST_F(BundleTest, AnotherVersionsBundleIsRefusedAndKernelsCompile) {
  auto contents = readBundle(writeAxpyBundle());
  ASSERT_TRUE(contents.ok()) << contents.status().toString();
  contents->compiler = "0.0.1-elsewhere";
  std::string path = dir_->file("old.tsbundle");
  ASSERT_TRUE(writeBundle(path, *contents).ok());
  Runtime rt;
  auto info = rt.loadBundle(path);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(info.status().message(),
              HasSubstr("written by Tessera 0.0.1-elsewhere"));
  EXPECT_THAT(info.status().message(), HasSubstr("compile on first use"));
  compileAndRunAxpy(rt);
  EXPECT_EQ(rt.cacheStats().compiles, 1u);
  EXPECT_EQ(rt.cacheStats().bundleLoads, 0u);
}

TEST_F(BundleTest, AnotherMachinesCodeIsRefusedAndKernelsCompile) {
  auto contents = readBundle(writeAxpyBundle());
  ASSERT_TRUE(contents.ok()) << contents.status().toString();
  ASSERT_EQ(contents->code.size(), 1u);
  // The same kernel for a CPU with other instructions, under the key that
  // CPU would look it up by.
  BundleCode &c = contents->code[0];
  std::string other = "x86_64-unknown-linux-gnu/othercpu/0000000000000000";
  size_t at = c.key.find(c.target);
  ASSERT_NE(at, std::string::npos);
  c.key.replace(at, c.target.size(), other);
  c.target = other;
  std::string path = dir_->file("foreign.tsbundle");
  ASSERT_TRUE(writeBundle(path, *contents).ok());
  Runtime rt;
  auto info = rt.loadBundle(path);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(info.status().message(), HasSubstr("no code this machine"));
  EXPECT_THAT(info.status().message(), HasSubstr(other));
  compileAndRunAxpy(rt);
  EXPECT_EQ(rt.cacheStats().compiles, 1u);
}

TEST_F(BundleTest, CodeForDevicesThatAreNotHereIsSkipped) {
  auto contents = readBundle(writeAxpyBundle());
  ASSERT_TRUE(contents.ok()) << contents.status().toString();
  BundleCode gpu = contents->code[0];
  gpu.device = "cuda";
  gpu.target = "sm_90a";
  gpu.code = "not loaded";
  contents->code.push_back(gpu);
  std::string path = dir_->file("mixed.tsbundle");
  ASSERT_TRUE(writeBundle(path, *contents).ok());
  Runtime rt;
  auto info = rt.loadBundle(path);
  ASSERT_TRUE(info.ok()) << info.status().toString();
  EXPECT_EQ(info->kernels, 1u);
  compileAndRunAxpy(rt);
  EXPECT_EQ(rt.cacheStats().compiles, 0u);
  if (rt.deviceStatus(DeviceKind::Cuda).ok())
    GTEST_SKIP() << "a GPU is here: its code target decides";
  ASSERT_EQ(info->skipped.size(), 1u);
  EXPECT_THAT(info->skipped[0], HasSubstr("cuda code for sm_90a"));
}

TEST_F(BundleTest, DamagedBundlesAreDataLoss) {
  std::string path = writeAxpyBundle();
  auto bytes = readFile(path);
  ASSERT_TRUE(bytes.ok());
  Runtime rt;
  // Truncated.
  std::string cut = dir_->file("cut.tsbundle");
  ASSERT_TRUE(writeFile(cut, bytes->substr(0, bytes->size() / 2)).ok());
  auto a = rt.loadBundle(cut);
  EXPECT_EQ(a.status().code(), StatusCode::kDataLoss) << a.status().toString();
  // One byte of the code (an ELF object) changed.
  std::string flipped = *bytes;
  size_t elf = flipped.find("\x7f"
                            "ELF");
  ASSERT_NE(elf, std::string::npos);
  flipped[elf + 100] ^= 0x40;
  std::string bad = dir_->file("flipped.tsbundle");
  ASSERT_TRUE(writeFile(bad, flipped).ok());
  auto b = rt.loadBundle(bad);
  EXPECT_EQ(b.status().code(), StatusCode::kDataLoss) << b.status().toString();
  EXPECT_THAT(b.status().message(), HasSubstr("does not match its hash"));
  // Something else entirely.
  std::string text = dir_->file("text.tsbundle");
  ASSERT_TRUE(writeFile(text, "{\"format\": \"tessera-bundle\"}").ok());
  EXPECT_EQ(rt.loadBundle(text).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(rt.loadBundle(dir_->file("missing.tsbundle")).status().code(),
            StatusCode::kNotFound);
  // Nothing was loaded: the kernel compiles.
  compileAndRunAxpy(rt);
  EXPECT_EQ(rt.cacheStats().compiles, 1u);
}

TEST_F(BundleTest, SimAndCudaCxxKernelsAreNotBundled) {
  Runtime rt;
  auto prog = rt.loadSource("axpy.tile", kAxpy);
  ASSERT_TRUE(prog.ok());
  auto k = rt.compile(**prog, "axpy", {}, DeviceKind::Sim);
  ASSERT_TRUE(k.ok()) << k.status().toString();
  Status s = rt.saveBundle(dir_->file("sim.tsbundle"), {*k});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sim code cannot be stored"));
  EXPECT_FALSE(fs::exists(dir_->file("sim.tsbundle")));
}

// Code for GPU architectures that are not here is compiled into a bundle
// (no GPU needed): cubins (PTX without an assembler) with their launch
// facts, listed as skipped on a machine without such a GPU.
TEST_F(BundleTest, CrossCompilesForGpuArchitectures) {
  Runtime rt;
  auto prog = rt.loadSource("axpy.tile", kAxpy);
  ASSERT_TRUE(prog.ok());
  std::vector<CrossCompile> gpus;
  for (const char *arch : {"sm_90a", "sm_80"})
    gpus.push_back({*prog,
                    "axpy",
                    {.constants = {{"BLOCK", 256}}},
                    DeviceKind::Cuda,
                    arch});
  std::string path = dir_->file("gpus.tsbundle");
  Status s = rt.saveBundle(path, {compileAndRunAxpy(rt)}, "", gpus);
  ASSERT_TRUE(s.ok()) << s.toString();
  auto contents = readBundle(path);
  ASSERT_TRUE(contents.ok()) << contents.status().toString();
  ASSERT_EQ(contents->code.size(), 3u);
  std::vector<std::string> targets;
  for (const BundleCode &c : contents->code) {
    if (c.device != "cuda")
      continue;
    targets.push_back(c.target);
    auto art = KernelArtifact::unpack(c.code);
    ASSERT_TRUE(art.has_value()) << c.target;
    EXPECT_EQ(art->blockSize, 128) << c.target;
    bool cubin = art->image.rfind("\x7f"
                                  "ELF",
                                  0) == 0;
    bool ptx = art->image.find(".target " + c.target) != std::string::npos;
    EXPECT_TRUE(cubin || ptx) << c.target;
    EXPECT_NE(c.key.find(c.target), std::string::npos);
  }
  EXPECT_EQ(targets, (std::vector<std::string>{"sm_90a", "sm_80"}));
  Runtime other;
  auto info = other.loadBundle(path);
  ASSERT_TRUE(info.ok()) << info.status().toString();
  EXPECT_EQ(info->kernels, 1u);
  // A target the compiler does not know is an error naming it.
  gpus[0].target = "sm_42";
  Status bad = rt.saveBundle(dir_->file("bad.tsbundle"), {}, "", {gpus[0]});
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.message(), HasSubstr("sm_42"));
  if (other.deviceStatus(DeviceKind::Cuda).ok())
    GTEST_SKIP() << "a GPU is here: its architecture decides";
  EXPECT_EQ(info->skipped.size(), 2u);
}

// The cpu device's code goes to the disk cache: another runtime (another
// process, in an application) loads it instead of compiling, and a damaged
// file is compiled again and replaced.
TEST(CpuDiskCache, AnotherRuntimeLoadsWhatOneCompiled) {
  auto d = TempDir::create("cpucache");
  ASSERT_TRUE(d.ok());
  ScopedEnv cacheDir("TESSERA_CACHE_DIR", d->path());
  ScopedEnv cacheOn("TESSERA_KERNEL_CACHE", "on");
  {
    Runtime rt;
    compileAndRunAxpy(rt);
    EXPECT_EQ(rt.cacheStats().compiles, 1u);
    EXPECT_EQ(rt.cacheStats().diskLoads, 0u);
  }
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(d->path() + "/kernels"))
    files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  {
    Runtime rt;
    compileAndRunAxpy(rt);
    EXPECT_EQ(rt.cacheStats().compiles, 0u);
    EXPECT_EQ(rt.cacheStats().diskLoads, 1u);
  }
  // Damage the stored object code: the file fails its hash, is removed
  // and the kernel compiles (and is stored again).
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-16, std::ios::end);
    f.put('\x7f');
  }
  {
    Runtime rt;
    compileAndRunAxpy(rt);
    EXPECT_EQ(rt.cacheStats().compiles, 1u);
    EXPECT_EQ(rt.cacheStats().diskLoads, 0u);
  }
  {
    Runtime rt;
    compileAndRunAxpy(rt);
    EXPECT_EQ(rt.cacheStats().diskLoads, 1u);
  }
}

} // namespace
