//===- HostTest.cpp - Host machine facts
//-----------------------------------===//

#include "tessera/Support/Host.h"

#include <gtest/gtest.h>

using namespace tessera;

TEST(Host, CpuModelNameIsTheFirstModelNameLineTrimmed) {
  EXPECT_EQ(cpuModelNameFromCpuinfo("processor\t: 0\n"
                                    "vendor_id\t: GenuineIntel\n"
                                    "model name\t: Intel(R) Xeon(R) Gold  \n"
                                    "processor\t: 1\n"
                                    "model name\t: second\n"),
            "Intel(R) Xeon(R) Gold");
  // The last line without a newline, CR line ends.
  EXPECT_EQ(cpuModelNameFromCpuinfo("model name : AMD EPYC 9654\r"),
            "AMD EPYC 9654");
}

TEST(Host, CpuModelNameMissingOrEmpty) {
  // aarch64 kernels often print no model name.
  EXPECT_EQ(cpuModelNameFromCpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n"), "");
  EXPECT_EQ(cpuModelNameFromCpuinfo("model name\t:   \n"), "");
  EXPECT_EQ(cpuModelNameFromCpuinfo(""), "");
  // A line that only starts like the key is not it.
  EXPECT_EQ(cpuModelNameFromCpuinfo("model\t: 85\nmodel name: x\n"), "x");
}
