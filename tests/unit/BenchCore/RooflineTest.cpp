//===- RooflineTest.cpp - Tests of the peak table and roofline maths ------===//

#include "tessera/bench/Roofline.h"

#include <gtest/gtest.h>

using namespace tessera::bench;

namespace {
Peaks simplePeaks() {
  Peaks p;
  p.tflops[ComputePath::Fp32] = 10;
  p.tflops[ComputePath::TensorFp16] = 100;
  p.bandwidthGBs = 1000;
  return p;
}
} // namespace

TEST(Roofline, MemoryBound) {
  // Intensity 1 FLOP/B: the roof is 1 FLOP/B x 1000 GB/s = 1 TFLOPS < 10.
  Work w{1e9, 1e9};
  EXPECT_DOUBLE_EQ(achievedTflops(w, 2), 0.5);
  EXPECT_DOUBLE_EQ(achievedGBs(w, 2), 500);
  Roofline r = roofline(w, 2, simplePeaks(), ComputePath::Fp32);
  ASSERT_TRUE(r.valid);
  EXPECT_TRUE(r.memoryBound);
  EXPECT_DOUBLE_EQ(r.attainable, 1);
  EXPECT_DOUBLE_EQ(r.efficiency, 0.5);
}

TEST(Roofline, ComputeBoundUsesThePathPeak) {
  // Intensity 1000 FLOP/B: the roof is the compute peak.
  Work w{1e12, 1e9};
  Roofline f32 = roofline(w, 200, simplePeaks(), ComputePath::Fp32);
  ASSERT_TRUE(f32.valid);
  EXPECT_FALSE(f32.memoryBound);
  EXPECT_DOUBLE_EQ(f32.attainable, 10);
  EXPECT_DOUBLE_EQ(f32.efficiency, 0.5); // 5 TFLOPS of 10
  Roofline f16 = roofline(w, 200, simplePeaks(), ComputePath::TensorFp16);
  EXPECT_DOUBLE_EQ(f16.attainable, 100);
  EXPECT_DOUBLE_EQ(f16.efficiency, 0.05);
}

TEST(Roofline, NoFlopsJudgedOnBandwidth) {
  Work copy = streamWork("copy", 1 << 20, 4);
  double ms = copy.bytes / 250e9 * 1e3; // 250 GB/s
  Roofline r = roofline(copy, ms, simplePeaks(), ComputePath::Fp32);
  ASSERT_TRUE(r.valid);
  EXPECT_TRUE(r.memoryBound);
  EXPECT_NEAR(r.efficiency, 0.25, 1e-12);
}

TEST(Roofline, MissingPeakIsInvalid) {
  Roofline r =
      roofline(Work{1e12, 1e9}, 1, simplePeaks(), ComputePath::TensorFp8);
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.efficiency, 0);
  EXPECT_FALSE(
      roofline(Work{1e12, 1e9}, 0, simplePeaks(), ComputePath::Fp32).valid);
}

TEST(Roofline, GpuTableLookup) {
  auto h100 = gpuPeaks("NVIDIA H100 80GB HBM3", 0);
  ASSERT_TRUE(h100);
  EXPECT_DOUBLE_EQ(h100->tflops.at(ComputePath::TensorFp16), 989.4);
  EXPECT_DOUBLE_EQ(h100->tflops.at(ComputePath::Fp32), 67);
  EXPECT_DOUBLE_EQ(h100->bandwidthGBs, 3350);
  EXPECT_NE(h100->source.find("datasheet"), std::string::npos);

  struct Case {
    const char *name;
    double bandwidth;
  } cases[] = {{"NVIDIA H100 PCIe", 2000},
               {"NVIDIA H100 NVL", 3900},
               {"NVIDIA H200", 4800},
               {"NVIDIA A100-SXM4-80GB", 2039},
               {"NVIDIA A100-SXM4-40GB", 1555},
               {"NVIDIA A100-PCIE-40GB", 1555},
               {"NVIDIA A100 80GB PCIe", 1935},
               {"NVIDIA L40S", 864},
               {"NVIDIA L4", 300},
               {"nvidia geforce rtx 4090", 1008},
               {"NVIDIA GeForce RTX 3090", 936}};
  for (const Case &c : cases) {
    auto p = gpuPeaks(c.name, 0);
    ASSERT_TRUE(p) << c.name;
    EXPECT_DOUBLE_EQ(p->bandwidthGBs, c.bandwidth) << c.name;
  }
  EXPECT_FALSE(gpuPeaks("AMD Instinct MI300X", 0));
  EXPECT_FALSE(gpuPeaks("NVIDIA GH200 480GB", 0));
  EXPECT_FALSE(gpuPeaks("NVIDIA L40", 0));
  // The A100 has no FP8 path.
  EXPECT_FALSE(gpuPeaks("NVIDIA A100-SXM4-80GB", 0)
                   ->tflops.contains(ComputePath::TensorFp8));
}

TEST(Roofline, PeaksScaledByClock) {
  auto p = gpuPeaks("NVIDIA H100 80GB HBM3", 1980);
  ASSERT_TRUE(p);
  // Tensor figures assume 1830 MHz, FP32/FP64 1980 MHz; bandwidth unscaled.
  EXPECT_NEAR(p->tflops.at(ComputePath::TensorFp16), 989.4 * 1980 / 1830, 1e-9);
  EXPECT_NEAR(p->tflops.at(ComputePath::Fp32), 67, 1e-9);
  EXPECT_DOUBLE_EQ(p->bandwidthGBs, 3350);
  auto half = gpuPeaks("NVIDIA A100-SXM4-80GB", 705);
  EXPECT_NEAR(half->tflops.at(ComputePath::TensorBf16), 156, 1e-9);
  EXPECT_NEAR(half->tflops.at(ComputePath::Fp32), 9.75, 1e-9);
  EXPECT_NE(half->source.find("705 MHz"), std::string::npos);
}

TEST(Roofline, TableIsComplete) {
  for (const GpuPeakEntry &e : gpuPeakTable()) {
    EXPECT_FALSE(e.source.empty()) << e.name;
    EXPECT_GT(e.fp32, 0) << e.name;
    EXPECT_GT(e.bandwidthGBs, 0) << e.name;
    EXPECT_GT(e.boostClockMHz, 0) << e.name;
    EXPECT_GT(e.tensorClockMHz, 0) << e.name;
  }
}

TEST(Roofline, PathNames) {
  for (ComputePath p :
       {ComputePath::Fp32, ComputePath::Fp64, ComputePath::TensorTf32,
        ComputePath::TensorFp16, ComputePath::TensorBf16,
        ComputePath::TensorFp8, ComputePath::Int8})
    EXPECT_EQ(parseComputePath(computePathName(p)), p);
  EXPECT_FALSE(parseComputePath("fp4"));
  EXPECT_EQ(computePathForPrecision("f16", true), ComputePath::TensorFp16);
  EXPECT_EQ(computePathForPrecision("f16", false), ComputePath::Fp32);
  EXPECT_EQ(computePathForPrecision("fp8_e4m3", true), ComputePath::TensorFp8);
  EXPECT_EQ(computePathForPrecision("tf32", true), ComputePath::TensorTf32);
  EXPECT_FALSE(computePathForPrecision("q4", true));
  // Without tensor cores every narrow or tf32 dot is an f32 FMA.
  EXPECT_EQ(computePathForPrecision("tf32", false), ComputePath::Fp32);
  EXPECT_EQ(computePathForPrecision("fp8_e5m2", false), ComputePath::Fp32);
  EXPECT_EQ(computePathForPrecision("bf16", false), ComputePath::Fp32);
  EXPECT_EQ(computePathForPrecision("i8", false), ComputePath::Int8);
  // Policies: the accumulator suffix does not change the path.
  EXPECT_EQ(computePathForPrecision("fp8_e4m3@accum(fp32)", true),
            ComputePath::TensorFp8);
  EXPECT_EQ(computePathForPrecision("bf16@accum(fp32)", false),
            ComputePath::Fp32);
  auto m = peaksToMap(simplePeaks());
  EXPECT_DOUBLE_EQ(m.at("fp16_tflops"), 100);
  EXPECT_DOUBLE_EQ(m.at("bandwidth_gbs"), 1000);
}
