//===- PrecisionPolicyTest.cpp - Parsing of precision policies ------------===//

#include "tessera/Support/KernelInfo.h"

#include <gtest/gtest.h>

using namespace tessera;

namespace {

PrecisionPolicy parseOk(const std::string &text) {
  std::string error;
  auto p = PrecisionPolicy::parse(text, &error);
  EXPECT_TRUE(p.has_value()) << text << ": " << error;
  return p.value_or(PrecisionPolicy{});
}

std::string parseError(const std::string &text) {
  std::string error;
  auto p = PrecisionPolicy::parse(text, &error);
  EXPECT_FALSE(p.has_value()) << text;
  return error;
}

TEST(PrecisionPolicy, StorageAndAccumulate) {
  PrecisionPolicy empty = parseOk("");
  EXPECT_EQ(empty.storage, DType::F32);
  EXPECT_EQ(empty.accum, DType::F32);
  EXPECT_FALSE(empty.tf32Dots);
  PrecisionPolicy bf = parseOk("bf16@accum(fp32)");
  EXPECT_EQ(bf.storage, DType::BF16);
  EXPECT_EQ(bf.accum, DType::F32);
  EXPECT_EQ(parseOk("i8").accum, DType::I32);
  EXPECT_EQ(bf.toString(), "bf16@accum(f32)");
}

TEST(PrecisionPolicy, TF32IsF32StorageWithTensorCoreDots) {
  for (const char *text : {"tf32", "tf32@accum(fp32)", "tf32@accum(f32)"}) {
    PrecisionPolicy p = parseOk(text);
    EXPECT_EQ(p.storage, DType::F32) << text;
    EXPECT_EQ(p.accum, DType::F32) << text;
    EXPECT_TRUE(p.tf32Dots) << text;
    EXPECT_EQ(p.toString(), "tf32@accum(f32)");
  }
  EXPECT_FALSE(parseOk("fp32").tf32Dots);
  EXPECT_NE(parseError("tf32@accum(fp16)").find("tf32 accumulates in fp32"),
            std::string::npos);
}

TEST(PrecisionPolicy, MalformedPoliciesAreErrors) {
  EXPECT_NE(parseError("bf16@accum(fp32").find("malformed"), std::string::npos);
  EXPECT_NE(parseError("bf16@fp32").find("malformed"), std::string::npos);
  EXPECT_NE(parseError("fp12").find("unknown storage type"), std::string::npos);
  EXPECT_EQ(parseOk("fp4").storage, DType::F4E2M1);
  EXPECT_EQ(parseOk("fp6@accum(fp32)").storage, DType::F6E3M2);
  EXPECT_EQ(parseOk("fp6_e2m3@accum(fp16)").accum, DType::F16);
  EXPECT_NE(parseError("fp4@accum(fp4)").find("is a storage type"),
            std::string::npos);
  EXPECT_NE(parseError("f16@accum(x)").find("unknown accumulate type"),
            std::string::npos);
}

} // namespace
