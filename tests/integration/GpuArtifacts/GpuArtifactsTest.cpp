//===- GpuArtifactsTest.cpp - kernels_dsl as real cubins ------------------===//
//
// Each kernel at its default configuration and at every configuration of
// its autotune space over the parameters the GPU mapping uses (block sizes,
// num_warps, head dim), for sm_80 and sm_90a: either the configuration is
// rejected by a resource filter (RESOURCE_EXHAUSTED: shared memory, or the
// registers of a tensor-core kernel) or it assembles with zero spill
// stores/loads and no local memory. Prints one line per configuration
// (registers, shared memory).
//
//===----------------------------------------------------------------------===//

#include "tessera/Driver/Driver.h"
#include "tessera/Target/CUDA/Assembler.h"
#include "tessera/Target/CUDA/Occupancy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

using namespace tessera;

namespace {

std::string kernelsDir() {
  const char *src = std::getenv("TESSERA_SOURCE_DIR");
  return std::string(src ? src : ".") + "/kernels_dsl";
}

/// The library file `family`.tile, parsed (an error status names the file).
StatusOr<std::shared_ptr<const driver::SourceModule>>
parseLibrary(const std::string &family) {
  std::string path = kernelsDir() + "/" + family + ".tile";
  std::ifstream in(path);
  if (!in)
    return notFound("cannot read %s", path.c_str());
  std::stringstream ss;
  ss << in.rdbuf();
  return driver::SourceModule::parse(family, ss.str());
}

/// Parameters whose value changes the GPU code today. num_stages does when
/// tile loads are cp.async copies, i.e. from unit-stride tensors, and
/// VECTOR_WIDTH (the cap on elements per vector access) when accesses can
/// be vectorised, i.e. on unit-stride tensors too.
bool mappingParameter(const std::string &name, bool contiguous) {
  return name.rfind("BLOCK", 0) == 0 || name == "num_warps" ||
         name == "HEAD_DIM" ||
         (contiguous && (name == "num_stages" || name == "VECTOR_WIDTH"));
}

/// The default configuration and every combination of the mapping
/// parameters' values in the autotune space that satisfies the space's
/// restrictions (parameters that do not change the GPU code, such as
/// num_stages or VECTOR_WIDTH on strided tensors, keep their defaults:
/// their other values compile to the same code).
std::vector<Specialization>
configs(const driver::SourceModule &m, const KernelInfo &k,
        const std::string &precision, bool contiguous,
        const std::map<std::string, ConstValue> &fixed = {}) {
  std::vector<Specialization> out;
  std::set<std::string> seen;
  auto add = [&](Specialization s) {
    s.precision = precision;
    for (const auto &[name, value] : fixed)
      s.constants[name] = value;
    auto ok = m.satisfiesRestrictions(k.name, s);
    if (!ok.ok() || !*ok)
      return;
    if (seen.insert(s.canonical()).second)
      out.push_back(std::move(s));
  };
  add(Specialization{});
  if (!k.autotune)
    return out;
  std::vector<std::pair<std::string, std::vector<ConstValue>>> dims;
  for (const auto &[name, values] : k.autotune->space)
    if (mappingParameter(name, contiguous))
      dims.push_back({name, values});
  std::vector<size_t> at(dims.size(), 0);
  while (true) {
    Specialization s;
    for (size_t d = 0; d < dims.size(); ++d)
      s.constants[dims[d].first] = dims[d].second[at[d]];
    add(s);
    size_t d = 0;
    for (; d < dims.size(); ++d) {
      if (++at[d] < dims[d].second.size())
        break;
      at[d] = 0;
    }
    if (d == dims.size())
      break;
  }
  // Both values of every bool @heuristics constexpr (ONE_BLOCK: the row in
  // registers or in pieces): launches select either.
  for (const std::string &name : k.heuristics) {
    const ParamInfo *p = k.findParam(name);
    if (!p || !p->defaultValue || !p->defaultValue->isBool())
      continue;
    std::vector<Specialization> flipped;
    for (const Specialization &s : out) {
      Specialization f = s;
      f.constants[name] = ConstValue::boolean(!p->defaultValue->getBool());
      flipped.push_back(std::move(f));
    }
    for (Specialization &f : flipped)
      add(std::move(f));
  }
  return out;
}

/// A kernel family and the precision policy it is compiled with (f16,
/// bf16 and fp8 (widened to f16 in the register lowering unless both
/// operands have K innermost on sm_90a, where wgmma k32 reads them), and f32
/// under "tf32" (wgmma k8 on sm_90a when both operands have K innermost,
/// the shared-memory lowering's mma.sync otherwise), run the GEMM dots on
/// tensor cores).
struct ArtifactCase {
  const char *family;
  const char *precision;
  /// Every tensor parameter has unit innermost stride (the variant the
  /// runtime compiles for contiguous tensors: tile loads go through the
  /// alignment-versioned cp.async copies).
  bool contiguous = false;
  /// Bool parameters set in every configuration ("NAME" or "A+B": true).
  const char *flag = nullptr;
  /// Other constants of every configuration ("NAME=VALUE,...").
  const char *constants = "";
};

class GpuArtifacts : public ::testing::TestWithParam<ArtifactCase> {};

TEST_P(GpuArtifacts, AssembleWithoutSpills) {
  Status avail = cuda::assemblerAvailable(cuda::AssemblerBackend::kAuto);
  if (!avail.ok())
    GTEST_SKIP() << avail.toString();
  std::string family = GetParam().family;
  std::string precision = GetParam().precision;
  auto m = parseLibrary(family);
  ASSERT_TRUE(m.ok()) << m.status().toString();
  // Constants of every configuration ("NAME=VALUE,...").
  std::map<std::string, ConstValue> fixed;
  for (std::string_view items = GetParam().constants; !items.empty();) {
    size_t comma = items.find(',');
    std::string_view item = items.substr(0, comma);
    size_t eq = item.find('=');
    fixed[std::string(item.substr(0, eq))] =
        ConstValue::parse(std::string(item.substr(eq + 1)));
    items = comma == items.npos ? "" : items.substr(comma + 1);
  }
  int assembled = 0;
  for (const KernelInfo *k : (*m)->kernels()) {
    for (Specialization spec :
         configs(**m, *k, precision, GetParam().contiguous, fixed)) {
      if (GetParam().contiguous)
        for (const ParamInfo &p : k->params)
          if (p.kind == ParamKind::Tensor)
            spec.unitStrideTensors.push_back(p.name);
      for (std::string_view flags = GetParam().flag ? GetParam().flag : "";
           !flags.empty();) {
        size_t plus = flags.find('+');
        spec.constants[std::string(flags.substr(0, plus))] =
            ConstValue::boolean(true);
        flags = plus == flags.npos ? "" : flags.substr(plus + 1);
      }
      for (const char *arch : {"sm_80", "sm_90a"}) {
        driver::GpuEmitOptions opts;
        opts.arch = arch;
        driver::GpuResources r;
        auto out = driver::emit(**m, k->name, spec, driver::EmitKind::Cubin,
                                nullptr, opts, &r);
        std::string where =
            family + "." + k->name + " [" + spec.canonical() + "] " + arch;
        if (!out.ok()) {
          // Only the resource filters (shared memory, registers) may
          // reject a configuration.
          EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted)
              << where << ": " << out.status().toString();
          std::printf("%-60s filtered: %s\n", where.c_str(),
                      out.status().code() == StatusCode::kResourceExhausted
                          ? out.status().message().c_str()
                          : "ERROR");
          continue;
        }
        ++assembled;
        EXPECT_GT(out->size(), 4u) << where;
        EXPECT_EQ(out->compare(0, 4,
                               "\x7f"
                               "ELF"),
                  0)
            << where;
        EXPECT_EQ(r.spillStores, 0) << where;
        EXPECT_EQ(r.spillLoads, 0) << where;
        EXPECT_EQ(r.localBytes, 0) << where;
        EXPECT_GT(r.registers, 0) << where;
        std::printf("%-60s %3d regs, %6lld B shared, %4d threads\n",
                    where.c_str(), r.registers,
                    static_cast<long long>(r.tileSharedBytes), r.blockSize);
      }
    }
  }
  EXPECT_GT(assembled, 0) << family << ": no configuration assembled";
}

INSTANTIATE_TEST_SUITE_P(
    KernelLibrary, GpuArtifacts,
    ::testing::Values(
        ArtifactCase{"vector_ops", ""}, ArtifactCase{"vector_ops", "", true},
        ArtifactCase{"stream", ""}, ArtifactCase{"stream", "", true},
        ArtifactCase{"softmax", ""}, ArtifactCase{"softmax", "", true},
        ArtifactCase{"layernorm", ""}, ArtifactCase{"layernorm", "", true},
        ArtifactCase{"gemm", ""}, ArtifactCase{"gemm", "fp16@accum(fp32)"},
        ArtifactCase{"gemm", "bf16@accum(fp32)"},
        ArtifactCase{"gemm", "fp16@accum(fp32)", true},
        ArtifactCase{"gemm", "fp16@accum(fp32)", true, "persistent"},
        ArtifactCase{"gemm", "fp16@accum(fp32)", true, "warp_specialize"},
        ArtifactCase{"gemm", "tf32", true},
        ArtifactCase{"gemm", "tf32", true, "TRANS_B"},
        ArtifactCase{"gemm", "fp8_e4m3@accum(fp32)", true},
        ArtifactCase{"gemm", "fp8_e4m3@accum(fp32)", true, "TRANS_B"},
        // Packed inputs decoded in registers, at one tile.
        ArtifactCase{"gemm", "fp4_e2m1@accum(fp32)", true, nullptr,
                     "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4"},
        ArtifactCase{"gemm", "fp6_e3m2@accum(fp32)", true, "TRANS_B",
                     "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4"},
        ArtifactCase{"attention", ""}, ArtifactCase{"attention", "fp16"},
        ArtifactCase{"attention", "fp16", true},
        ArtifactCase{"attention", "fp16", true, "warp_specialize+pingpong"},
        // seed 002's SIMT kernels.
        ArtifactCase{"seed/layernorm_safe", ""},
        ArtifactCase{"seed/layernorm_safe", "fp16", true},
        ArtifactCase{"seed/softmax_safe", "", true},
        ArtifactCase{"seed/softmax_safe", "fp16", false, "causal_mask"},
        ArtifactCase{"seed/vector_operations", "", true, nullptr,
                     "operation=\"dot\",result_dtype=f32"},
        ArtifactCase{"seed/vector_operations", "fp16", false, nullptr,
                     "operation=\"axpy\",result_dtype=f16"},
        ArtifactCase{"seed/memory_bandwidth", "", true, nullptr,
                     "operation=\"triad\",access_pattern=\"strided_4\""}),
    [](const ::testing::TestParamInfo<ArtifactCase> &info) {
      std::string name = info.param.family;
      std::replace(name.begin(), name.end(), '/', '_');
      if (*info.param.precision)
        name += "_" + std::string(info.param.precision).substr(0, 4);
      if (info.param.contiguous)
        name += "_contiguous";
      if (info.param.flag) {
        std::string flags = info.param.flag;
        std::replace(flags.begin(), flags.end(), '+', '_');
        name += "_" + flags;
      }
      // The operation of a vector_operations case.
      if (std::string c = info.param.constants;
          c.find('"') != std::string::npos) {
        size_t q = c.find('"');
        name += "_" + c.substr(q + 1, c.find('"', q + 1) - q - 1);
      }
      return name;
    });

/// A specialisation at `precision` whose `tensors` are contiguous and
/// aligned.
Specialization contiguous(const std::string &precision,
                          std::vector<std::string> tensors) {
  Specialization spec;
  spec.precision = precision;
  spec.unitStrideTensors = tensors;
  spec.alignedTensors = std::move(tensors);
  spec.alignmentKnown = true;
  return spec;
}

/// The kernel `name` of the library file of that name at `spec`, emitted
/// for `arch` as `kind`; what its launch needs in `r`.
StatusOr<std::string> emitLibrary(const std::string &name,
                                  const Specialization &spec, const char *arch,
                                  driver::EmitKind kind,
                                  driver::GpuResources &r) {
  auto m = parseLibrary(name);
  if (!m.ok())
    return m.status();
  driver::GpuEmitOptions opts;
  opts.arch = arch;
  return driver::emit(**m, name, spec, kind, nullptr, opts, &r);
}

// What a launch needs beside the code -- block size, tile shared memory,
// the tensor maps after the arguments, the program schedule -- comes with
// PTX as with a cubin (the runtime falls back to PTX, which the driver
// assembles, when no assembler is found): a persistent f16 GEMM on sm_90a
// copies A and B by TMA.
TEST(GpuEmit, PtxCarriesWhatItsLaunchNeeds) {
  Specialization spec = contiguous("fp16@accum(fp32)", {"A", "B", "C"});
  spec.constants["persistent"] = ConstValue::boolean(true);
  spec.constants["program_group"] = ConstValue::integer(8);
  driver::GpuResources ptx;
  auto text = emitLibrary("gemm", spec, "sm_90a", driver::EmitKind::PTX, ptx);
  ASSERT_TRUE(text.ok()) << text.status().toString();
  EXPECT_EQ(ptx.blockSize, 128);
  EXPECT_GT(ptx.tileSharedBytes, 0);
  EXPECT_EQ(ptx.tensorMaps.size(), 2u);
  EXPECT_TRUE(ptx.schedule.logicalGrid);
  EXPECT_TRUE(ptx.schedule.persistent);
  EXPECT_EQ(ptx.schedule.group, 8);
  if (!cuda::assemblerAvailable(cuda::AssemblerBackend::kAuto).ok())
    return;
  driver::GpuResources cubin;
  ASSERT_TRUE(
      emitLibrary("gemm", spec, "sm_90a", driver::EmitKind::Cubin, cubin).ok());
  EXPECT_EQ(cubin.blockSize, ptx.blockSize);
  EXPECT_EQ(cubin.tileSharedBytes, ptx.tileSharedBytes);
  EXPECT_EQ(cubin.tensorMaps.size(), ptx.tensorMaps.size());
  EXPECT_EQ(cubin.schedule.group, ptx.schedule.group);
}

// The same source and configuration give the same PTX, byte for byte (the
// artifact cache and the scorecard compare them): a GEMM whose three
// tensors are tested for alignment at entry, emitted a few times in one
// process, where every compile's IR lives at other addresses.
TEST(GpuEmit, SameSourceSamePtx) {
  Specialization spec;
  spec.precision = "fp16@accum(fp32)";
  spec.unitStrideTensors = {"A", "B", "C"};
  for (const char *arch : {"sm_80", "sm_90a"}) {
    std::string first;
    for (int i = 0; i < 6; ++i) {
      driver::GpuResources r;
      auto text = emitLibrary("gemm", spec, arch, driver::EmitKind::PTX, r);
      ASSERT_TRUE(text.ok()) << arch << ": " << text.status().toString();
      if (i == 0)
        first = *text;
      else
        ASSERT_EQ(*text, first) << arch << ": emit " << i << " differs";
    }
  }
}

// A warp-specialised kernel on sm_90a runs a producer warpgroup after its
// num_warps warps: the launch's block is 128 threads larger, and the PTX
// moves registers between them (setmaxnreg) with one block per SM for
// ptxas to count from. GEMM on two consumer warpgroups, attention on one;
// without the flag, or on sm_80 (no TMA rings), no producer.
TEST(GpuEmit, WarpSpecializedBlockHasItsProducer) {
  struct Case {
    const char *name;
    Specialization spec;
    int64_t warps, consumerRegisters;
  };
  Case gemm{"gemm", contiguous("fp16@accum(fp32)", {"A", "B", "C"}), 8, 232};
  gemm.spec.constants["persistent"] = ConstValue::boolean(true);
  gemm.spec.constants["num_warps"] = ConstValue::integer(8);
  gemm.spec.constants["BLOCK_M"] = ConstValue::integer(128);
  Case attention{"attention", contiguous("fp16", {"Q", "K", "V", "O"}), 4, 240};
  for (Case *k : {&gemm, &attention}) {
    const Case &c = *k;
    SCOPED_TRACE(c.name);
    Specialization spec = c.spec;
    spec.constants["warp_specialize"] = ConstValue::boolean(true);
    driver::GpuResources ptx;
    auto text = emitLibrary(c.name, spec, "sm_90a", driver::EmitKind::PTX, ptx);
    ASSERT_TRUE(text.ok()) << text.status().toString();
    EXPECT_EQ(ptx.blockSize, c.warps * 32 + 128);
    EXPECT_NE(text->find(".minnctapersm 1"), std::string::npos);
    EXPECT_TRUE(std::regex_search(
        *text, std::regex(R"(setmaxnreg\.inc\.sync\.aligned\.u32\s+)" +
                          std::to_string(c.consumerRegisters) + ";")));
    EXPECT_TRUE(std::regex_search(
        *text, std::regex(R"(setmaxnreg\.dec\.sync\.aligned\.u32\s+40;)")));
    EXPECT_NE(text->find("cp.async.bulk.tensor"), std::string::npos);
    for (const char *arch : {"sm_90a", "sm_80"}) {
      Specialization plain = spec;
      if (std::string(arch) == "sm_90a")
        plain.constants["warp_specialize"] = ConstValue::boolean(false);
      driver::GpuResources r;
      auto t = emitLibrary(c.name, plain, arch, driver::EmitKind::PTX, r);
      ASSERT_TRUE(t.ok()) << arch << ": " << t.status().toString();
      EXPECT_EQ(r.blockSize, c.warps * 32) << arch;
      EXPECT_EQ(t->find("setmaxnreg"), std::string::npos) << arch;
    }
  }
}

// Ping-pong: attention on two consumer warpgroups takes turns at the
// tensor cores on named barriers (bar.sync at its own, bar.arrive at the
// other's, both for 256 threads) and assembles without spills; where there
// is nothing to take turns at -- one consumer warpgroup, a GEMM's single
// group of products per K step, no warp specialisation, sm_80 -- pingpong
// changes nothing.
TEST(GpuEmit, PingpongWarpgroupsTakeTurns) {
  Specialization spec = contiguous("fp16", {"Q", "K", "V", "O"});
  spec.constants["BLOCK_M"] = ConstValue::integer(128);
  spec.constants["BLOCK_N"] = ConstValue::integer(64);
  spec.constants["num_warps"] = ConstValue::integer(8);
  spec.constants["warp_specialize"] = ConstValue::boolean(true);
  auto emitWith = [](const char *name, Specialization s, const char *arch,
                     bool pingpong, driver::EmitKind kind,
                     driver::GpuResources &r) {
    s.constants["pingpong"] = ConstValue::boolean(pingpong);
    return emitLibrary(name, s, arch, kind, r);
  };
  auto count = [](const std::string &text, const std::regex &re) {
    return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                         std::sregex_iterator());
  };
  const std::regex arrive(R"(bar\.arrive\s+(%r\d+|\d+),\s*256;)");
  driver::GpuResources r;
  auto on =
      emitWith("attention", spec, "sm_90a", true, driver::EmitKind::PTX, r);
  ASSERT_TRUE(on.ok()) << on.status().toString();
  EXPECT_EQ(r.blockSize, 384);
  // Per key loop (the unmasked and the masked one): the hand-over in the
  // body and one before and one after the loop.
  EXPECT_EQ(count(*on, arrive), 6) << *on;
  EXPECT_GE(count(*on, std::regex(R"(bar\.sync\s+%r\d+,\s*256;)")), 4);
  driver::GpuResources c;
  ASSERT_TRUE(
      emitWith("attention", spec, "sm_90a", true, driver::EmitKind::Cubin, c)
          .ok());
  EXPECT_EQ(c.spillStores + c.spillLoads + c.localBytes, 0);
  auto off =
      emitWith("attention", spec, "sm_90a", false, driver::EmitKind::PTX, r);
  ASSERT_TRUE(off.ok()) << off.status().toString();
  EXPECT_EQ(count(*off, arrive), 0);

  Specialization oneGroup = spec;
  oneGroup.constants["num_warps"] = ConstValue::integer(4);
  Specialization gemm = contiguous("fp16@accum(fp32)", {"A", "B", "C"});
  gemm.constants["BLOCK_M"] = ConstValue::integer(128);
  gemm.constants["num_warps"] = ConstValue::integer(8);
  gemm.constants["warp_specialize"] = ConstValue::boolean(true);
  struct Same {
    const char *name;
    Specialization spec;
    const char *arch;
  };
  for (const Same &k :
       {Same{"attention", oneGroup, "sm_90a"}, Same{"gemm", gemm, "sm_90a"},
        Same{"attention", spec, "sm_80"}}) {
    SCOPED_TRACE(std::string(k.name) + " " + k.spec.canonical() + " " + k.arch);
    auto with =
        emitWith(k.name, k.spec, k.arch, true, driver::EmitKind::PTX, r);
    auto without =
        emitWith(k.name, k.spec, k.arch, false, driver::EmitKind::PTX, r);
    ASSERT_TRUE(with.ok()) << with.status().toString();
    ASSERT_TRUE(without.ok()) << without.status().toString();
    EXPECT_EQ(*with, *without);
  }
}

} // namespace

namespace {

/// The compiler assembles whole-program: the registers of the row kernels'
/// cubins are those of `ptxas` on the same PTX, not the (higher) figure of
/// nvJitLink, which compiles PTX as relocatable device code.
TEST(WholeProgramAssembly, RowKernelsGetWholeProgramRegisters) {
  Status avail = cuda::assemblerAvailable(cuda::AssemblerBackend::kPtxas);
  if (!avail.ok())
    GTEST_SKIP() << avail.toString();
  for (const char *family : {"softmax", "layernorm"}) {
    auto m = parseLibrary(family);
    ASSERT_TRUE(m.ok()) << m.status().toString();
    for (const char *precision : {"fp32", "fp16"}) {
      Specialization spec;
      spec.precision = precision;
      driver::GpuEmitOptions opts;
      opts.arch = "sm_90a";
      driver::GpuResources r;
      auto cubin = driver::emit(**m, family, spec, driver::EmitKind::Cubin,
                                nullptr, opts, &r);
      ASSERT_TRUE(cubin.ok()) << cubin.status().toString();
      auto ptx =
          driver::emit(**m, family, spec, driver::EmitKind::PTX, nullptr, opts);
      ASSERT_TRUE(ptx.ok()) << ptx.status().toString();
      auto whole = cuda::assemblePtx(
          *ptx, "sm_90a", {.backend = cuda::AssemblerBackend::kPtxas});
      ASSERT_TRUE(whole.ok()) << whole.status().toString();
      EXPECT_TRUE(whole->wholeProgram);
      std::string where = std::string(family) + " " + precision;
      EXPECT_EQ(r.assembler, "ptxas") << where;
      // ptxas's own count, or the occupancy step below it (see emit()).
      if (r.registerCap) {
        EXPECT_LE(r.registers, r.registerCap) << where;
        EXPECT_LT(r.registerCap, whole->usage.registers) << where;
      } else {
        EXPECT_EQ(r.registers, whole->usage.registers) << where;
      }
      auto reloc = cuda::assemblePtx(
          *ptx, "sm_90a", {.backend = cuda::AssemblerBackend::kNvJitLink});
      if (reloc.ok()) {
        EXPECT_FALSE(reloc->wholeProgram);
        EXPECT_LE(r.registers, reloc->usage.registers) << where;
        std::printf("%-16s registers: %d whole-program, %d relocatable\n",
                    where.c_str(), r.registers, reloc->usage.registers);
      }
    }
  }
}

/// Whole-program ptxas aims at an occupancy of its own (here three
/// 256-thread blocks per SM: 80 registers) and spills to get there; the
/// compiler then assembles again with `.minnctapersm 1` and keeps the cubin
/// without spills.
TEST(WholeProgramAssembly, OccupancyTargetThatSpillsIsLifted) {
  Status avail = cuda::assemblerAvailable(cuda::AssemblerBackend::kPtxas);
  if (!avail.ok())
    GTEST_SKIP() << avail.toString();
  auto m = parseLibrary("gemm");
  ASSERT_TRUE(m.ok()) << m.status().toString();
  Specialization spec;
  spec.precision = "fp16@accum(fp32)";
  spec.unitStrideTensors = {"A", "B", "C"};
  for (auto [name, value] : {std::pair{"BLOCK_M", 128},
                             {"BLOCK_N", 64},
                             {"BLOCK_K", 128},
                             {"num_warps", 8},
                             {"num_stages", 2}})
    spec.constants[name] = ConstValue::integer(value);
  driver::GpuEmitOptions opts;
  opts.arch = "sm_90a";
  auto ptx =
      driver::emit(**m, "gemm", spec, driver::EmitKind::PTX, nullptr, opts);
  ASSERT_TRUE(ptx.ok()) << ptx.status().toString();
  auto plain = cuda::assemblePtx(*ptx, "sm_90a",
                                 {.backend = cuda::AssemblerBackend::kPtxas});
  ASSERT_TRUE(plain.ok()) << plain.status().toString();
  driver::GpuResources r;
  auto cubin = driver::emit(**m, "gemm", spec, driver::EmitKind::Cubin, nullptr,
                            opts, &r);
  ASSERT_TRUE(cubin.ok()) << cubin.status().toString();
  std::printf("gemm f16 128x64x128 w8: ptxas alone %d registers, %lld B "
              "spilled; compiled %d registers, %lld B spilled\n",
              plain->usage.registers,
              static_cast<long long>(plain->usage.spillStores), r.registers,
              static_cast<long long>(r.spillStores));
  if (plain->usage.spillStores == 0)
    GTEST_SKIP() << "this ptxas does not spill here; nothing to lift";
  EXPECT_TRUE(r.oneBlockPerSmHint);
  EXPECT_EQ(r.spillStores, 0);
  EXPECT_EQ(r.localBytes, 0);
  EXPECT_GT(r.registers, plain->usage.registers);
}

/// The whole-row layer norm over 4096 elements, 4 warps, on sm_80: `ptx`
/// and the cubin `emit` makes of it.
struct RowKernel {
  std::string ptx;
  driver::GpuResources resources;
};

StatusOr<RowKernel> compileLayerNorm(const std::string &precision) {
  TESSERA_ASSIGN_OR_RETURN(auto m, parseLibrary("layernorm"));
  Specialization spec;
  spec.precision = precision;
  spec.unitStrideTensors = {"x", "weight", "bias", "out"};
  spec.alignedTensors = {"x", "weight", "bias", "out"};
  spec.alignmentKnown = true;
  spec.index32 = true;
  spec.declaredGrid = true;
  spec.constants["BLOCK_SIZE"] = ConstValue::integer(4096);
  spec.constants["ONE_BLOCK"] = ConstValue::boolean(true);
  spec.constants["num_warps"] = ConstValue::integer(4);
  driver::GpuEmitOptions opts;
  opts.arch = "sm_80";
  RowKernel k;
  TESSERA_ASSIGN_OR_RETURN(k.ptx,
                           driver::emit(*m, "layernorm", spec,
                                        driver::EmitKind::PTX, nullptr, opts));
  TESSERA_RETURN_IF_ERROR(driver::emit(*m, "layernorm", spec,
                                       driver::EmitKind::Cubin, nullptr, opts,
                                       &k.resources)
                              .status());
  return k;
}

/// The kernel's PTX assembled by ptxas alone, and again with `.maxnreg` at
/// the occupancy step of its block size and shared memory (when there is
/// one).
struct Assembled {
  cuda::CubinResult plain;
  std::optional<int> cap;
  std::optional<cuda::CubinResult> capped;
};

StatusOr<Assembled> assembleWithAndWithoutCap(const RowKernel &k) {
  const std::string &ptx = k.ptx;
  Assembled a;
  TESSERA_ASSIGN_OR_RETURN(
      a.plain, cuda::assemblePtx(ptx, "sm_80",
                                 {.backend = cuda::AssemblerBackend::kPtxas}));
  auto limits = cuda::smLimits("sm_80");
  a.cap = cuda::registerCapForOneMoreBlock(
      *limits, k.resources.blockSize, a.plain.usage.registers,
      a.plain.usage.sharedBytes + k.resources.tileSharedBytes);
  if (!a.cap)
    return a;
  std::string capped = ptx;
  size_t at = capped.find(".maxntid");
  if (at == std::string::npos)
    return internalError("no .maxntid in the PTX");
  capped.insert(capped.find('\n', at) + 1,
                ".maxnreg " + std::to_string(*a.cap) + "\n");
  TESSERA_ASSIGN_OR_RETURN(
      a.capped, cuda::assemblePtx(capped, "sm_80",
                                  {.backend = cuda::AssemblerBackend::kPtxas}));
  return a;
}

/// A kernel a few registers above an occupancy step is assembled again at
/// the step and keeps that cubin when it spills nothing: the f16 layer norm
/// takes 64 registers from ptxas alone (eight 128-thread blocks per SM on
/// sm_80) and 56 at the step (nine).
TEST(WholeProgramAssembly, RegistersDownToTheOccupancyStepWithoutSpills) {
  Status avail = cuda::assemblerAvailable(cuda::AssemblerBackend::kPtxas);
  if (!avail.ok())
    GTEST_SKIP() << avail.toString();
  auto k = compileLayerNorm("fp16");
  ASSERT_TRUE(k.ok()) << k.status().toString();
  auto a = assembleWithAndWithoutCap(*k);
  ASSERT_TRUE(a.ok()) << a.status().toString();
  std::printf("layernorm f16 [4096] sm_80: ptxas alone %d registers; "
              "compiled %d (.maxnreg %d)\n",
              a->plain.usage.registers, k->resources.registers,
              k->resources.registerCap);
  if (!a->cap || a->capped->usage.spillStores + a->capped->usage.localBytes)
    GTEST_SKIP() << "this ptxas leaves nothing to gain at the step";
  EXPECT_EQ(k->resources.registerCap, *a->cap);
  EXPECT_LE(k->resources.registers, *a->cap);
  EXPECT_LT(k->resources.registers, a->plain.usage.registers);
  EXPECT_EQ(k->resources.spillStores, 0);
  EXPECT_EQ(k->resources.localBytes, 0);
}

/// Where reaching the step would spill, the cubin ptxas made alone is kept:
/// the f32 layer norm at 63 registers spills at 56.
TEST(WholeProgramAssembly, OccupancyStepThatSpillsIsNotTaken) {
  Status avail = cuda::assemblerAvailable(cuda::AssemblerBackend::kPtxas);
  if (!avail.ok())
    GTEST_SKIP() << avail.toString();
  auto k = compileLayerNorm("fp32");
  ASSERT_TRUE(k.ok()) << k.status().toString();
  auto a = assembleWithAndWithoutCap(*k);
  ASSERT_TRUE(a.ok()) << a.status().toString();
  std::printf("layernorm f32 [4096] sm_80: ptxas alone %d registers; at the "
              "step %s\n",
              a->plain.usage.registers,
              a->capped ? std::to_string(a->capped->usage.spillStores)
                              .append(" B spilled")
                              .c_str()
                        : "none");
  if (!a->capped || a->capped->usage.spillStores == 0)
    GTEST_SKIP() << "this ptxas does not spill at the step";
  EXPECT_EQ(k->resources.registerCap, 0);
  EXPECT_EQ(k->resources.registers, a->plain.usage.registers);
  EXPECT_EQ(k->resources.spillStores, 0);
}

} // namespace
