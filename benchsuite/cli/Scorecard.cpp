//===- Scorecard.cpp - tessera-bench sass: code shape beside Triton -------===//

#include "Scorecard.h"

#include "tessera/Driver/Driver.h"
#include "tessera/Support/Files.h"
#include "tessera/Support/Process.h"
#include "tessera/Target/CUDA/Assembler.h"
#include "tessera/Target/CUDA/Occupancy.h"
#include "tessera/autotune/Inputs.h"
#include "tessera/bench/Format.h"
#include "tessera/bench/Result.h"
#include "tessera/bench/Sass.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tessera;
using namespace tessera::bench;
namespace fs = std::filesystem;

namespace {

/// One row of the scorecard: a library kernel in one precision, and the
/// name, dtype and problem shape of its Triton version ("" = none).
struct ScoreKernel {
  const char *file, *kernel, *precision;
  const char *triton, *tritonDtype, *tritonShape;
  /// Overrides of the default configuration ("NAME=VALUE,..."), for the
  /// cases compiled at the configuration Triton's kernel uses.
  const char *config = "";
  /// The one architecture whose code the configuration changes ("" for
  /// all): Hopper's choices leave sm_80's code as it is.
  const char *arch = "";
};

const std::vector<ScoreKernel> &scoreKernels() {
  static const std::vector<ScoreKernel> kernels = {
      {"softmax", "softmax", "fp32", "softmax", "f32", "Sk=4096"},
      {"softmax", "softmax", "fp16", "softmax", "f16", "Sk=4096"},
      {"layernorm", "layernorm", "fp32", "layernorm", "f32", "H=4096"},
      {"layernorm", "layernorm", "fp16", "layernorm", "f16", "H=4096"},
      // At Triton's configuration: the whole 4096-element row at once.
      {"softmax", "softmax", "fp32", "softmax", "f32", "Sk=4096",
       "BLOCK_SIZE=4096"},
      {"softmax", "softmax", "fp16", "softmax", "f16", "Sk=4096",
       "BLOCK_SIZE=4096"},
      {"layernorm", "layernorm", "fp32", "layernorm", "f32", "H=4096",
       "BLOCK_SIZE=4096"},
      {"layernorm", "layernorm", "fp16", "layernorm", "f16", "H=4096",
       "BLOCK_SIZE=4096"},
      {"gemm", "gemm", "fp16@accum(fp32)", "gemm", "f16", ""},
      {"gemm", "gemm", "bf16@accum(fp32)", "gemm", "bf16", ""},
      {"gemm", "gemm", "fp32", "gemm", "f32", ""},
      {"gemm", "gemm", "fp8_e4m3@accum(fp32)", "gemm", "fp8_e4m3", ""},
      // Both fp8 operands K-major (B stored [N, K]): wgmma k32 on sm_90a.
      {"gemm", "gemm", "fp8_e4m3@accum(fp32)", "gemm", "fp8_e4m3", "",
       "TRANS_B=true"},
      // f32 data on tf32 tensor cores: wgmma k8 on sm_90a, B stored [K, N]
      // (stored transposed through registers) and [N, K] (copied as it
      // is). (sm_80 keeps tf32 dots in the shared-memory lowering, which
      // needs more shared memory than sm_80 has at this tile.)
      {"gemm", "gemm", "tf32", "gemm", "tf32", "", "", "sm_90a"},
      {"gemm", "gemm", "tf32", "gemm", "tf32", "", "TRANS_B=true", "sm_90a"},
      // The tensor-core path's largest tile.
      {"gemm", "gemm", "fp16@accum(fp32)", "gemm", "f16", "",
       "BLOCK_N=256,BLOCK_K=64,num_warps=8,num_stages=3"},
      // Program schedules and warp specialisation, beside Triton's plain
      // kernel at the same tile.
      {"gemm", "gemm", "fp16@accum(fp32)", "gemm", "f16", "",
       "persistent=true,program_group=8"},
      {"gemm", "gemm", "fp16@accum(fp32)", "gemm", "f16", "",
       "warp_specialize=true", "sm_90a"},
      {"attention", "attention", "fp16", "attention", "f16", "D=64"},
      {"attention", "attention", "fp16", "attention", "f16", "D=64",
       "BLOCK_M=128,BLOCK_N=64"},
      {"attention", "attention", "fp16", "attention", "f16", "D=64",
       "warp_specialize=true", "sm_90a"},
      // FlashAttention-3's configuration: head dim 128, a producer and two
      // consumer warpgroups, with and without their taking turns.
      {"attention", "attention", "fp16", "attention", "f16", "D=128",
       "BLOCK_M=128,BLOCK_N=64,HEAD_DIM=128,num_warps=8,warp_specialize=true",
       "sm_90a"},
      {"attention", "attention", "fp16", "attention", "f16", "D=128",
       "BLOCK_M=128,BLOCK_N=64,HEAD_DIM=128,num_warps=8,warp_specialize=true,"
       "pingpong=true",
       "sm_90a"},
      {"vector_ops", "axpy", "fp32", "axpy", "f32", ""},
      {"vector_ops", "add", "fp32", "add", "f32", ""},
      {"vector_ops", "mul", "fp32", "mul", "f32", ""},
      {"vector_ops", "dot", "fp32", "dot", "f32", ""},
      {"vector_ops", "norm", "fp32", "norm", "f32", ""},
      {"vector_ops", "reduce_sum", "fp32", "reduce_sum", "f32", ""},
      {"vector_ops", "reduce_max", "fp32", "reduce_max", "f32", ""},
      // seed 002's SIMT kernels, beside Triton's for the same work.
      {"seed/softmax_safe", "softmax_safe", "fp32", "softmax", "f32",
       "Sk=4096"},
      {"seed/softmax_safe", "softmax_safe", "fp16", "softmax", "f16",
       "Sk=4096"},
      {"seed/layernorm_safe", "layernorm_safe", "fp32", "layernorm", "f32",
       "H=4096"},
      {"seed/layernorm_safe", "layernorm_safe", "fp16", "layernorm", "f16",
       "H=4096"},
      {"seed/vector_operations", "vector_operations", "fp32", "axpy", "f32", "",
       "operation=\"axpy\",result_dtype=f32"},
      {"seed/vector_operations", "vector_operations", "fp32", "dot", "f32", "",
       "operation=\"dot\",result_dtype=f32"},
      {"seed/memory_bandwidth", "memory_bandwidth_kernel", "fp32",
       "stream_copy", "f32", "",
       "operation=\"copy\",access_pattern=\"sequential\""},
      {"seed/memory_bandwidth", "memory_bandwidth_kernel", "fp32",
       "stream_triad", "f32", "",
       "operation=\"triad\",access_pattern=\"sequential\""},
      {"stream", "copy", "fp32", "stream_copy", "f32", ""},
      {"stream", "scale", "fp32", "stream_scale", "f32", ""},
      {"stream", "add", "fp32", "stream_add", "f32", ""},
      {"stream", "triad", "fp32", "stream_triad", "f32", ""},
  };
  return kernels;
}

/// The contents of `path`, or "" when it cannot be read.
std::string readText(const std::string &path) {
  StatusOr<std::string> text = readFile(path);
  return text.ok() ? *text : std::string();
}

/// The build folder: the parent of the folder holding this executable.
std::string buildDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().parent_path().string();
}

std::string sourceDir() { return TESSERA_SOURCE_DIR_FOR_GIT; }

/// The output of `argv` (stdout and stderr), or why it failed.
StatusOr<std::string> capture(const std::vector<std::string> &argv,
                              const std::string &logPath) {
  ProcessOptions po;
  po.output = ProcessOptions::Output::File;
  po.outputPath = logPath;
  TESSERA_ASSIGN_OR_RETURN(ExitStatus st, runProcess(argv, po));
  std::string out = readText(logPath);
  if (!st.success())
    return internalError("%s: %s\n%s", argv[0].c_str(), st.describe().c_str(),
                         out.c_str());
  return out;
}

/// Where the Triton baseline comes from.
struct TritonEnv {
  std::string python, driver, version, nvdisasm, cuobjdump;
  std::string note; ///< why it is not usable, when python is empty
};

TritonEnv findTriton(const ScorecardOptions &o, const std::string &tmp) {
  TritonEnv t;
  std::string python = o.tritonPython;
  if (python.empty())
    if (const char *env = std::getenv("TESSERA_TRITON_PYTHON"); env && *env)
      python = env;
  if (python.empty())
    python = buildDir() + "/venv-triton/bin/python";
  t.driver = sourceDir() + "/benchsuite/triton/tessera_triton.py";
  if (!isExecutable(python)) {
    t.note = "no Triton environment at " + python +
             " (scripts/setup-triton.sh BUILD_DIR makes it; make bench runs "
             "it)";
    return t;
  }
  StatusOr<std::string> tools =
      capture({python, t.driver, "tools"}, tmp + "/tools.log");
  if (!tools.ok()) {
    t.note = "the Triton driver failed: " + tools.status().message();
    return t;
  }
  nlohmann::json j = nlohmann::json::parse(*tools, nullptr, false);
  if (!j.is_object()) {
    t.note = "the Triton driver printed no JSON: " + *tools;
    return t;
  }
  t.python = python;
  t.version = j.value("triton_version", "");
  t.nvdisasm = j.value("nvdisasm", "");
  t.cuobjdump = j.value("cuobjdump", "");
  return t;
}

/// The disassembler: --nvdisasm, $TESSERA_NVDISASM, nvdisasm or cuobjdump
/// in the CUDA toolkit, then the ones Triton's wheel ships.
struct Disassembler {
  std::string path;
  bool nvdisasm = true;
  std::string note;
};

Disassembler findDisassembler(const ScorecardOptions &o, const TritonEnv &t) {
  std::vector<std::string> candidates;
  if (!o.nvdisasm.empty())
    candidates.push_back(o.nvdisasm);
  if (const char *env = std::getenv("TESSERA_NVDISASM"); env && *env)
    candidates.push_back(env);
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    dirs.push_back(std::string(home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &d : dirs)
    candidates.push_back(d + "/nvdisasm");
  if (!t.nvdisasm.empty())
    candidates.push_back(t.nvdisasm);
  for (const std::string &d : dirs)
    candidates.push_back(d + "/cuobjdump");
  if (!t.cuobjdump.empty())
    candidates.push_back(t.cuobjdump);
  for (const std::string &c : candidates)
    if (isExecutable(c))
      return {c, fs::path(c).filename() != "cuobjdump", ""};
  return {"", true,
          "no nvdisasm or cuobjdump (the CUDA toolkit here has none; the "
          "Triton environment of make bench brings both): the instruction "
          "mix is left out"};
}

/// The instruction figures of `cubin` (bytes on disk at `path`).
StatusOr<std::map<std::string, double>> disassemble(const Disassembler &d,
                                                    const std::string &path,
                                                    const std::string &function,
                                                    const std::string &tmp) {
  std::vector<std::string> argv =
      d.nvdisasm ? std::vector<std::string>{d.path, "-c", path}
                 : std::vector<std::string>{d.path, "-sass", path};
  TESSERA_ASSIGN_OR_RETURN(std::string text, capture(argv, tmp + "/sass.txt"));
  TESSERA_ASSIGN_OR_RETURN(std::vector<SassFunction> fns, parseSass(text));
  const SassFunction *fn = &fns[0];
  for (const SassFunction &f : fns)
    if (f.name == function)
      fn = &f;
  std::map<std::string, double> m = analyzeSass(*fn);
  // The widest global load and store, in bits (0 when there is none).
  for (const char *kind : {"global.load", "global.store"})
    for (int w : {8, 16, 32, 64, 128})
      if (m.count(std::string(kind) + "." + std::to_string(w)))
        m[std::string(kind) + ".maxWidth"] = w;
  return m;
}

void addOccupancy(const std::string &arch, std::map<std::string, double> &m) {
  if (auto limits = cuda::smLimits(arch)) {
    cuda::Occupancy o =
        cuda::occupancy(*limits, static_cast<int>(m["threadsPerBlock"]),
                        static_cast<int>(m["registers"]),
                        static_cast<int64_t>(m["sharedBytes"]));
    m["occupancy"] = o.occupancy;
    m["blocksPerSm"] = o.blocksPerSm;
  }
}

/// The configuration the compiler binds for an empty specialisation: the
/// constexpr defaults and, for autotune parameters that are not parameters
/// (num_warps, num_stages), the first value of the space.
std::map<std::string, std::string> defaultConfig(const KernelInfo &k) {
  std::map<std::string, std::string> config;
  for (const ParamInfo &p : k.params)
    if (p.kind == ParamKind::Constexpr && p.defaultValue)
      config[p.name] = p.defaultValue->toString();
  if (k.autotune)
    for (const auto &[name, values] : k.autotune->space) {
      bool isParam = false;
      for (const ParamInfo &p : k.params)
        isParam |= p.name == name;
      if (!isParam && !values.empty())
        config[name] = values.front().toString();
    }
  return config;
}

std::string joinConfig(const std::map<std::string, std::string> &config) {
  std::string out;
  for (const auto &[k, v] : config)
    out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

struct Context {
  const ScorecardOptions &options;
  TritonEnv triton;
  Disassembler disassembler;
  bool useTriton = false;
  std::string tmp;
  int errors = 0;
};

/// CPU time of this process and of its waited-for children (ptxas).
double cpuSeconds() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto sec = [](const timeval &t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return sec(self.ru_utime) + sec(self.ru_stime) + sec(children.ru_utime) +
         sec(children.ru_stime);
}

/// The Triton side of one case: compiled, read and disassembled.
void addTriton(Context &ctx, const ScoreKernel &sk, const std::string &arch,
               const std::map<std::string, std::string> &config,
               CodeShape &code) {
  if (!ctx.useTriton) {
    code.baselineNote = ctx.triton.note;
    return;
  }
  std::string id = std::string(sk.triton) + "_" + sk.tritonDtype + "_" + arch;
  std::string dir = ctx.tmp + "/triton";
  fs::create_directories(dir);
  std::vector<std::string> argv = {
      ctx.triton.python,  ctx.triton.driver, "compile", "--kernel", sk.triton,
      "--dtype",          sk.tritonDtype,    "--arch",  arch,       "--config",
      joinConfig(config), "--out",           dir,       "--name",   id};
  if (*sk.tritonShape) {
    argv.push_back("--shape");
    argv.push_back(sk.tritonShape);
  }
  StatusOr<std::string> log = capture(argv, dir + "/" + id + ".log");
  if (!log.ok()) {
    code.baselineNote = "Triton: " + log.status().message();
    return;
  }
  nlohmann::json j =
      nlohmann::json::parse(readText(dir + "/" + id + ".json"), nullptr, false);
  if (!j.is_object() || !j.contains("cubin")) {
    code.baselineNote = "Triton: no metadata for " + id + ": " + *log;
    return;
  }
  std::map<std::string, double> m;
  if (!ctx.disassembler.path.empty()) {
    auto mix = disassemble(ctx.disassembler, j.value("cubin", ""),
                           j.value("function", ""), ctx.tmp);
    if (!mix.ok()) {
      code.baselineNote = "Triton: " + mix.status().message();
      return;
    }
    m = *mix;
  }
  m["registers"] = j.value("registers", 0);
  m["spillBytes"] = j.value("spills", 0);
  m["sharedBytes"] = j.value("shared_bytes", 0);
  m["threadsPerBlock"] = 32.0 * j.value("num_warps", 4);
  if (j.contains("compile_cpu_ms"))
    m["compileCpuMs"] = j.value("compile_cpu_ms", 0.0);
  addOccupancy(arch, m);
  code.baselineName = "Triton " + ctx.triton.version;
  code.baseline = std::move(m);
  if (j.contains("config") && j["config"].is_object())
    for (const auto &[k, v] : j["config"].items())
      code.baselineConfig[k] = v.is_string() ? v.get<std::string>() : v.dump();
}

CaseResult scoreCase(Context &ctx, const driver::SourceModule &module,
                     const ScoreKernel &sk, const std::string &arch) {
  CaseResult r;
  r.suite = "sass";
  r.kernel = sk.kernel;
  r.device = arch;
  r.precision = sk.precision;
  r.name = std::string(sk.file) + "." + sk.kernel + " " + sk.precision;
  r.params = {{"arch", arch}};
  // A case that cannot be scored: its failure counted, the result returned.
  auto fail = [&](std::string why) {
    r.failure = std::move(why);
    ++ctx.errors;
    return r;
  };
  const KernelInfo *k = module.findKernel(sk.kernel);
  if (!k)
    return fail(std::string("no kernel '") + sk.kernel + "' in " + sk.file);
  r.config = defaultConfig(*k);
  r.configSource = "default";
  // The variant a launch on contiguous, 16-byte aligned tensors and the
  // declared grid compiles (the specialisation Triton's side gets too).
  Specialization spec;
  spec.precision = sk.precision;
  if (*sk.config) {
    r.name += std::string(" [") + sk.config + "]";
    r.configSource = "baseline";
    auto items = autotune::parseAssignments(sk.config);
    if (!items.ok())
      return fail(items.status().toString());
    for (const auto &[name, value] : *items) {
      r.config[name] = value;
      spec.constants[name] = ConstValue::parse(value);
    }
  }
  // Constexprs set by @heuristics take the values a launch on Triton's
  // problem shape gives them (the shape symbols are named alike).
  auto tritonShape = autotune::parseShapes(sk.tritonShape);
  if (!tritonShape.ok())
    return fail(tritonShape.status().toString());
  std::vector<std::pair<std::string, int64_t>> shapes(tritonShape->begin(),
                                                      tritonShape->end());
  auto heuristics = module.evaluateHeuristics(sk.kernel, spec, shapes);
  if (!heuristics.ok())
    return fail(heuristics.status().toString());
  for (const auto &[name, v] : *heuristics) {
    spec.constants[name] = v;
    r.config[name] = v.toString();
  }
  spec.alignmentKnown = true;
  spec.index32 = true;
  spec.declaredGrid = true;
  for (const ParamInfo &p : k->params)
    if (p.kind == ParamKind::Tensor) {
      spec.unitStrideTensors.push_back(p.name);
      spec.alignedTensors.push_back(p.name);
    }
  driver::GpuEmitOptions gpu;
  gpu.arch = arch;
  gpu.assembler = ctx.options.assembler;
  driver::GpuResources res;
  driver::StageTimes times;
  double cpu0 = cpuSeconds();
  auto cubin = driver::emit(module, sk.kernel, spec, driver::EmitKind::Cubin,
                            &times, gpu, &res);
  double compileCpuMs = (cpuSeconds() - cpu0) * 1e3;
  if (!cubin.ok())
    return fail(cubin.status().toString());
  r.compile.ptx = times.lowering + times.codegen;
  r.compile.cubin = times.assemble;
  CodeShape code;
  code.arch = arch;
  code.function = sk.kernel;
  code.assembler = res.assembler;
  std::map<std::string, double> m;
  if (!ctx.disassembler.path.empty()) {
    std::string path = ctx.tmp + "/" + sk.kernel + ".cubin";
    if (Status st = writeFile(path, *cubin); !st.ok())
      return fail(st.toString());
    auto mix = disassemble(ctx.disassembler, path, sk.kernel, ctx.tmp);
    if (!mix.ok())
      return fail(mix.status().toString());
    m = *mix;
  } else {
    r.resourcesNote = ctx.disassembler.note;
  }
  m["registers"] = res.registers;
  m["spillBytes"] = double(res.spillStores + res.spillLoads);
  m["localBytes"] = double(res.localBytes);
  m["sharedBytes"] = double(res.sharedBytes + res.tileSharedBytes);
  m["threadsPerBlock"] = res.blockSize;
  addOccupancy(arch, m);
  m["compileCpuMs"] = compileCpuMs;
  code.metrics = std::move(m);
  if (*sk.triton)
    addTriton(ctx, sk, arch, r.config, code);
  else
    code.baselineNote = "no Triton version";
  r.code = std::move(code);
  r.passed = true;
  return r;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

double get(const std::map<std::string, double> &m, const std::string &k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

std::string widths(const std::map<std::string, double> &m,
                   const std::string &prefix) {
  std::string out;
  for (int w : {128, 64, 32, 16, 8}) {
    double n = get(m, prefix + "." + std::to_string(w));
    if (n > 0)
      out += (out.empty() ? "" : " ") + std::to_string(w) +
             "b:" + std::to_string(static_cast<long>(n));
  }
  return out.empty() ? "-" : out;
}

std::string num(double v, const char *fmt = "%.0f") {
  return formatString(fmt, v);
}

/// Where Tessera's code is worse than the baseline's by more than 10%.
std::string worse(const CodeShape &c) {
  if (c.baseline.empty())
    return "";
  std::vector<std::string> out;
  auto cmp = [&](const char *key, const char *label, bool moreIsBetter) {
    double t = get(c.metrics, key), b = get(c.baseline, key);
    bool bad = moreIsBetter ? t < b / 1.1 : t > b * 1.1;
    if (!bad || (t == 0 && b == 0))
      return;
    std::string ratio = b > 0 ? formatString(" (%.1fx)", t / b) : "";
    out.push_back(formatString("%s %g vs %g%s", label, t, b, ratio.c_str()));
  };
  cmp("registers", "registers", false);
  cmp("spillBytes", "spill bytes", false);
  cmp("sharedBytes", "shared bytes", false);
  cmp("occupancy", "occupancy", true);
  cmp("instructions", "instructions", false);
  cmp("loop.instructions", "loop instructions", false);
  cmp("barriersPerIteration", "barriers/iteration", false);
  cmp("bar", "barriers", false);
  cmp("instrPerGlobalByte", "instructions/byte", false);
  cmp("instrPerMma", "instructions/MMA", false);
  cmp("call", "calls", false);
  cmp("global.load.maxWidth", "widest global load (bits)", true);
  cmp("global.store.maxWidth", "widest global store (bits)", true);
  std::string s;
  for (const std::string &x : out)
    s += (s.empty() ? "" : "; ") + x;
  return s;
}

std::vector<std::string> row(const std::string &who,
                             const std::map<std::string, double> &m) {
  return {
      who,
      num(get(m, "registers")),
      num(get(m, "spillBytes")),
      num(get(m, "sharedBytes") / 1024, "%.1f"),
      num(get(m, "occupancy") * 100, "%.1f%%"),
      num(get(m, "instructions")),
      m.count("loop.instructions") ? num(get(m, "loop.instructions")) : "-",
      num(get(m, "bar")),
      m.count("loop.instructions") ? num(get(m, "barriersPerIteration")) : "-",
      widths(m, "global.load"),
      widths(m, "global.store"),
      widths(m, "shared.load") + " / " + widths(m, "shared.store"),
      num(get(m, "ldsm")) + "/" +
          num(get(m, "ldgsts.128") + get(m, "ldgsts.64") +
              get(m, "ldgsts.32")) +
          "/" + num(get(m, "tma")),
      num(get(m, "hmma")) + "/" + num(get(m, "hgmma")),
      num(get(m, "shfl")),
      num(get(m, "call")),
      m.count("instrPerGlobalByte") ? num(get(m, "instrPerGlobalByte"), "%.2f")
                                    : "-",
      m.count("instrPerMma") ? num(get(m, "instrPerMma"), "%.1f") : "-"};
}

const std::vector<std::string> kHeader = {"code",
                                          "regs",
                                          "spill B",
                                          "smem KiB",
                                          "occ",
                                          "instrs",
                                          "loop instrs",
                                          "BAR",
                                          "BAR/iter",
                                          "LDG widths",
                                          "STG widths",
                                          "LDS / STS widths",
                                          "LDSM/LDGSTS/TMA",
                                          "HMMA/HGMMA",
                                          "SHFL",
                                          "CALL",
                                          "instr/B",
                                          "instr/MMA"};

std::string renderText(const RunResult &run, bool markdown) {
  std::string out;
  for (const CaseResult &c : run.cases) {
    std::vector<std::vector<std::string>> rows;
    std::string title = c.name + " on " + c.device;
    if (!c.passed) {
      out += (markdown ? "#### " : "== ") + title + "\nFAILED: " + c.failure +
             "\n\n";
      continue;
    }
    const CodeShape &k = *c.code;
    rows.push_back(row("Tessera", k.metrics));
    if (!k.baseline.empty()) {
      rows.push_back(row(k.baselineName, k.baseline));
      std::vector<std::string> ratio = {"ratio"};
      for (const char *key : {"registers", "spillBytes", "sharedBytes",
                              "occupancy", "instructions", "loop.instructions",
                              "bar", "barriersPerIteration"}) {
        double t = get(k.metrics, key), b = get(k.baseline, key);
        ratio.push_back(b > 0 ? formatString("%.2fx", t / b) : "-");
      }
      while (ratio.size() < kHeader.size() - 2)
        ratio.push_back("");
      for (const char *key : {"instrPerGlobalByte", "instrPerMma"}) {
        double t = get(k.metrics, key), b = get(k.baseline, key);
        ratio.push_back(b > 0 ? formatString("%.2fx", t / b) : "-");
      }
      rows.push_back(ratio);
    }
    std::string config = joinConfig(c.config);
    out += (markdown ? "#### " : "== ") + title + " [" + config + "] (" +
           k.assembler + ")\n";
    if (markdown) {
      out += "|";
      for (const std::string &h : kHeader)
        out += " " + h + " |";
      out += "\n|";
      for (size_t i = 0; i < kHeader.size(); ++i)
        out += i ? "--:|" : "---|";
      out += "\n";
      for (const auto &r : rows) {
        out += "|";
        for (const std::string &cell : r)
          out += " " + cell + " |";
        out += "\n";
      }
    } else {
      std::vector<size_t> width(kHeader.size(), 0);
      for (size_t i = 0; i < kHeader.size(); ++i) {
        width[i] = kHeader[i].size();
        for (const auto &r : rows)
          if (i < r.size())
            width[i] = std::max(width[i], r[i].size());
      }
      auto line = [&](const std::vector<std::string> &cells) {
        std::string l;
        for (size_t i = 0; i < kHeader.size(); ++i) {
          std::string cell = i < cells.size() ? cells[i] : "";
          l +=
              (i ? "  " : "") + cell + std::string(width[i] - cell.size(), ' ');
        }
        while (!l.empty() && l.back() == ' ')
          l.pop_back();
        return l + "\n";
      };
      out += line(kHeader);
      for (const auto &r : rows)
        out += line(r);
    }
    if (!k.baselineConfig.empty())
      out += "  " + k.baselineName +
             " config: " + joinConfig(k.baselineConfig) + "\n";
    if (!k.baselineNote.empty())
      out += "  baseline: " + k.baselineNote + "\n";
    if (!c.resourcesNote.empty())
      out += "  note: " + c.resourcesNote + "\n";
    std::string w = worse(k);
    if (!w.empty())
      out += std::string(markdown ? "\n" : "") + "  worse than " +
             k.baselineName + ": " + w + "\n";
    out += "\n";
  }
  return out;
}

/// One markdown row per case: the headline figures as "Tessera / baseline".
std::string renderSummary(const RunResult &run) {
  std::string out = "| kernel | arch | regs | spill B | occupancy | instrs | "
                    "loop instrs | BAR/iter | widest LDG/STG | instr/B | "
                    "instr/MMA | compile CPU ms |\n"
                    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const CaseResult &c : run.cases) {
    if (!c.passed) {
      out += "| " + c.name + " | " + c.device + " | FAILED ||||||||||\n";
      continue;
    }
    const CodeShape &k = *c.code;
    bool base = !k.baseline.empty();
    auto pair = [&](const char *key, const char *fmt, bool loopOnly = false,
                    double scale = 1) {
      auto one = [&](const std::map<std::string, double> &m) {
        bool mixed = m.count("instructions");
        if ((loopOnly && !m.count("loop.instructions")) ||
            (!mixed && std::string(key) == "instructions") ||
            (!loopOnly && std::string(key).rfind("instrPer", 0) == 0 &&
             !m.count(key)))
          return std::string("-");
        return formatString(fmt, get(m, key) * scale);
      };
      return one(k.metrics) + (base ? " / " + one(k.baseline) : "");
    };
    auto widest = [&](const std::map<std::string, double> &m) {
      if (!m.count("instructions"))
        return std::string("-");
      return formatString("%.0f/%.0f", get(m, "global.load.maxWidth"),
                          get(m, "global.store.maxWidth"));
    };
    out += "| " + c.name + " | " + c.device + " | " +
           pair("registers", "%.0f") + " | " + pair("spillBytes", "%.0f") +
           " | " + pair("occupancy", "%.0f%%", false, 100) + " | " +
           pair("instructions", "%.0f") + " | " +
           pair("loop.instructions", "%.0f", true) + " | " +
           pair("barriersPerIteration", "%.0f", true) + " | " +
           widest(k.metrics) + (base ? " / " + widest(k.baseline) : "") +
           " | " + pair("instrPerGlobalByte", "%.2f") + " | " +
           pair("instrPerMma", "%.1f") + " | " + pair("compileCpuMs", "%.0f") +
           " |\n";
  }
  std::string baseline;
  for (const CaseResult &c : run.cases)
    if (c.code && !c.code->baselineName.empty())
      baseline = c.code->baselineName;
  out += "\nEach cell: Tessera" + (baseline.empty() ? "" : " / " + baseline) +
         "; `-`: no loop (or no such instruction).\n";
  return out;
}

} // namespace

void bench::addScorecardOptions(CLI::App &cmd, ScorecardOptions &o) {
  cmd.add_option("--kernel", o.kernels,
                 "Kernels to score, as FILE.KERNEL or KERNEL (repeatable; "
                 "default: every library kernel)");
  cmd.add_option("--arch", o.archs, "GPU architectures (repeatable)");
  cmd.add_option("--baseline", o.baseline,
                 "triton (an error when it is not installed), none, or auto "
                 "(triton when installed)")
      ->check(CLI::IsMember({"auto", "triton", "none"}));
  cmd.add_option("--assembler", o.assembler,
                 "PTX assembler for Tessera's cubins: auto, ptxas, nvjitlink")
      ->check(CLI::IsMember({"auto", "ptxas", "nvjitlink"}));
  cmd.add_option("--nvdisasm", o.nvdisasm,
                 "Disassembler (nvdisasm or cuobjdump; default: search)");
  cmd.add_option("--triton-python", o.tritonPython,
                 "Python of the Triton environment (default: "
                 "$TESSERA_TRITON_PYTHON, else BUILD/venv-triton/bin/python)");
  cmd.add_option("--format", o.format,
                 "table, md (both: per case, side by side, with ratios and "
                 "what is worse), summary (one markdown row per case) or "
                 "json (the bench schema)")
      ->check(CLI::IsMember({"table", "json", "md", "summary"}));
  cmd.add_option("--out", o.outs,
                 "Also write the results (.json in the bench schema, .md)");
}

int bench::runScorecard(const ScorecardOptions &o) {
  StatusOr<TempDir> tmp = TempDir::create("tessera-sass");
  if (!tmp.ok()) {
    std::fprintf(stderr, "tessera-bench sass: %s\n",
                 tmp.status().toString().c_str());
    return 2;
  }
  for (const std::string &arch : o.archs)
    if (Status st = cuda::checkRealArch(arch); !st.ok()) {
      std::fprintf(stderr, "tessera-bench sass: %s\n", st.toString().c_str());
      return 2;
    }
  Context ctx{o, {}, {}, false, tmp->path(), 0};
  if (!o.nvdisasm.empty() && !isExecutable(o.nvdisasm)) {
    std::fprintf(stderr,
                 "tessera-bench sass: --nvdisasm '%s' is not an executable "
                 "file\n",
                 o.nvdisasm.c_str());
    return 2;
  }
  // The Triton environment is only needed for the baseline or, without
  // --nvdisasm, for the disassemblers its wheel ships.
  if (o.baseline != "none" || o.nvdisasm.empty())
    ctx.triton = findTriton(o, tmp->path());
  ctx.disassembler = findDisassembler(o, ctx.triton);
  if (o.baseline != "none") {
    ctx.useTriton = !ctx.triton.python.empty();
    if (!ctx.useTriton && o.baseline == "triton") {
      std::fprintf(stderr, "tessera-bench sass: %s\n", ctx.triton.note.c_str());
      return 2;
    }
  } else {
    ctx.triton.note = "none asked for (--baseline none)";
  }

  std::vector<const ScoreKernel *> selected;
  for (const ScoreKernel &sk : scoreKernels()) {
    bool want = o.kernels.empty();
    for (const std::string &k : o.kernels)
      want |= k == sk.kernel || k == std::string(sk.file) + "." + sk.kernel;
    if (want)
      selected.push_back(&sk);
  }
  if (selected.empty()) {
    std::fprintf(stderr, "tessera-bench sass: no scorecard kernel matches "
                         "--kernel\n");
    return 2;
  }

  RunResult run;
  run.header.commandLine = "tessera-bench sass";
  run.header.startedAt = isoTimestampUtc();
  run.header.machine = machineDescription();
  run.header.device = {{"kind", "none (code only)"}};
  if (ctx.useTriton)
    run.header.device["baseline"] = "Triton " + ctx.triton.version;
  if (!ctx.disassembler.path.empty())
    run.header.device["disassembler"] = ctx.disassembler.path;
  std::map<std::string, std::shared_ptr<const driver::SourceModule>> modules;
  bool tty = isatty(fileno(stderr));
  for (const ScoreKernel *sk : selected) {
    auto &m = modules[sk->file];
    if (!m) {
      std::string path = o.kernelsDir + "/" + sk->file + ".tile";
      auto parsed = driver::SourceModule::parse(path, readText(path));
      if (!parsed.ok()) {
        std::fprintf(stderr, "tessera-bench sass: %s\n",
                     parsed.status().toString().c_str());
        return 1;
      }
      m = *parsed;
    }
    for (const std::string &arch : o.archs) {
      if (*sk->arch && arch != sk->arch)
        continue;
      if (tty)
        std::fprintf(stderr, "\r\033[K%s.%s %s %s", sk->file, sk->kernel,
                     sk->precision, arch.c_str());
      run.cases.push_back(scoreCase(ctx, *m, *sk, arch));
    }
  }
  if (tty)
    std::fprintf(stderr, "\r\033[K");
  if (o.format == "json")
    std::fputs(toJson(run).c_str(), stdout);
  else if (o.format == "summary")
    std::fputs(renderSummary(run).c_str(), stdout);
  else
    std::fputs(renderText(run, o.format == "md").c_str(), stdout);
  for (const std::string &out : o.outs) {
    if (fs::path(out).extension() == ".md") {
      std::ofstream f(out);
      f << renderText(run, true);
      if (!f) {
        std::fprintf(stderr, "tessera-bench sass: cannot write %s\n",
                     out.c_str());
        return 1;
      }
    } else if (Status st = writeResultFile(out, run); !st.ok()) {
      std::fprintf(stderr, "tessera-bench sass: %s\n", st.toString().c_str());
      return 1;
    }
  }
  if (ctx.errors) {
    std::fprintf(stderr, "tessera-bench sass: %d case(s) FAILED\n", ctx.errors);
    return 1;
  }
  return 0;
}
