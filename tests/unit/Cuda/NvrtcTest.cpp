//===- NvrtcTest.cpp - CUDA C++ through NVRTC
//------------------------------===//

#include "tessera/Target/CUDA/Nvrtc.h"

#include <gtest/gtest.h>

using namespace tessera;
using namespace tessera::cuda;

namespace {

constexpr const char *kSaxpySource = R"(
#include "scale.h"
template <typename T>
__global__ void saxpy(T a, const T *x, T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = SCALE(a) * x[i] + y[i];
}
)";

NvrtcOptions saxpyOptions(std::string arch) {
  NvrtcOptions options;
  options.arch = std::move(arch);
  options.headers = {{"scale.h", "#define SCALE(a) (a)\n"}};
  options.nameExpressions = {"saxpy<float>"};
  return options;
}

class NvrtcTest : public ::testing::Test {
protected:
  void SetUp() override {
    Status available = nvrtcAvailable();
    if (!available.ok())
      GTEST_SKIP() << available.message();
  }
};

TEST_F(NvrtcTest, TemplateKernelToPtxAndCubin) {
  auto result = compileCuda(kSaxpySource, "saxpy.cu", saxpyOptions("sm_90a"));
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_NE(result->ptx.find(".entry"), std::string::npos);
  ASSERT_GT(result->cubin.size(), 4u);
  EXPECT_EQ(result->cubin.compare(0, 4,
                                  "\x7f"
                                  "ELF"),
            0);
  ASSERT_EQ(result->loweredNames.count("saxpy<float>"), 1u);
  const std::string &lowered = result->loweredNames["saxpy<float>"];
  EXPECT_EQ(lowered, "_Z5saxpyIfEvT_PKS0_PS0_i");
  EXPECT_NE(result->ptx.find(lowered), std::string::npos);
  ASSERT_TRUE(result->usage.has_value()) << result->log;
  EXPECT_GT(result->usage->registers, 0) << result->log;
  EXPECT_EQ(result->usage->spillStores, 0);
  ASSERT_EQ(result->functions.size(), 1u);
  EXPECT_EQ(result->functions[0].name, lowered);
}

TEST_F(NvrtcTest, VirtualArchGivesPtxOnly) {
  auto result =
      compileCuda(kSaxpySource, "saxpy.cu", saxpyOptions("compute_80"));
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_FALSE(result->ptx.empty());
  EXPECT_TRUE(result->cubin.empty());
  EXPECT_FALSE(result->usage.has_value());
  EXPECT_EQ(result->loweredNames.count("saxpy<float>"), 1u);
}

TEST_F(NvrtcTest, SyntaxErrorReturnsTheProgramLog) {
  auto result =
      compileCuda("__global__ void broken(int *p) { p[0] = ; }\n", "broken.cu");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("error"), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find("broken.cu"), std::string::npos)
      << result.status().message();
}

TEST_F(NvrtcTest, MissingHeaderIsAnError) {
  auto result = compileCuda(kSaxpySource, "saxpy.cu", NvrtcOptions{});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("scale.h"), std::string::npos)
      << result.status().message();
}

TEST_F(NvrtcTest, OptionsReachTheCompiler) {
  NvrtcOptions options;
  options.options = {"-DVALUE=3", "-std=c++17"};
  auto result =
      compileCuda("static_assert(VALUE == 3);\n"
                  "extern \"C\" __global__ void k(int *p) { p[0] = VALUE; }\n",
                  "opts.cu", options);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_NE(result->ptx.find(".entry k"), std::string::npos);
}

TEST_F(NvrtcTest, BadOptionAndArchAreInvalidArguments) {
  NvrtcOptions options;
  options.options = {"--no-such-option"};
  auto result = compileCuda("__global__ void k() {}\n", "k.cu", options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);

  NvrtcOptions badArch;
  badArch.arch = "gfx90a";
  result = compileCuda("__global__ void k() {}\n", "k.cu", badArch);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

} // namespace
