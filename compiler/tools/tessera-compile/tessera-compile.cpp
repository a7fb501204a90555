//===- tessera-compile.cpp - Compile one kernel and print a stage ---------===//
//
//   tessera-compile FILE.tile --kernel NAME [--spec BLOCK_M=64,...]
//       [--precision bf16@accum(fp32)] [--unit-stride A,B]
//       [--emit=ast|tile|llvm-dialect|llvm|asm|obj|gpu|ptx|cubin]
//       [--arch sm_90a] [--generic] [-o FILE] [--time-stages]
//   tessera-compile --list-builtins
//
// The GPU stages compile, by default, the variant the runtime compiles
// first (contiguous, 16-byte-aligned tensors, 32-bit indexing, the declared
// grid), and kernels generic in `dtype` at fp16@accum(fp32) (with a note on
// stderr); --generic and --precision say otherwise.
//
// Diagnostics go to stderr with file:line:col and a caret; the exit code is
// 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "tessera/Driver/Driver.h"
#include "tessera/Sema/Builtins.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace tessera;

namespace {
std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(' || c == '[')
      ++depth;
    if (c == ')' || c == ']')
      --depth;
    if (c == ',' && depth == 0) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}
} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Compile a Tessera tile-language kernel and print one stage"};
  std::string file, kernel, specText, precision, emitText = "tile", unitStride,
                                                 alignedText, all, shapeText;
  bool timeStages = false, allUnit = false, index32 = false,
       declaredGrid = false, generic = false;
  std::string outputPath;
  std::string arch = "sm_90a";
  bool resourceUsage = false;
  bool listBuiltins = false;
  app.add_option("file", file, "Source file (.tile)");
  app.add_flag("--list-builtins", listBuiltins,
               "Print the index of built-in functions (the Markdown table of "
               "docs/language.md) and exit");
  app.add_option("--kernel,-k", kernel,
                 "Kernel to compile (default: the only/first kernel)");
  app.add_option("--spec", specText,
                 "Constexpr and meta values: NAME=VALUE,... (e.g. "
                 "BLOCK_M=64,num_warps=4)");
  app.add_option("--shape", shapeText,
                 "Shape symbols of the launch, NAME=VALUE,... (e.g. "
                 "Sk=4096): the kernel's @heuristics are evaluated with "
                 "them; without, those constexprs take --spec or their "
                 "defaults");
  app.add_option("--precision", precision,
                 "Precision policy, e.g. fp32, bf16@accum(fp32)");
  app.add_option("--unit-stride", unitStride,
                 "Tensor parameters with unit innermost stride (comma list)");
  app.add_flag("--contiguous", allUnit,
               "Assume every tensor parameter has unit innermost stride");
  app.add_option("--aligned", alignedText,
                 "Tensor parameters 16-byte aligned at launch (first element, "
                 "outer strides, rows), comma list or 'all'; the others are "
                 "then known unaligned (default: not known, tested at run "
                 "time)");
  app.add_flag("--index32", index32,
               "Assume every tensor's dimensions and element offsets fit in "
               "31 bits (32-bit index arithmetic on the GPU)");
  app.add_flag("--declared-grid", declaredGrid,
               "Assume the launch's grid is within the one @kernel declares "
               "(program ids below the shape symbols the grid names)");
  app.add_flag("--generic", generic,
               "GPU stages: no defaults (fp32 for a generic dtype, as the "
               "runtime; unknown strides, alignment, index width and grid "
               "unless flags say otherwise). Without it, gpu, ptx and cubin "
               "compile the variant the runtime compiles first (--contiguous "
               "--aligned all --index32 --declared-grid unless --unit-stride "
               "or --aligned say otherwise), and a kernel generic in dtype at "
               "fp16@accum(fp32) unless --precision says otherwise");
  app.add_option("--emit", emitText,
                 "Stage to print: ast, tile, llvm-dialect, llvm, asm, obj "
                 "(host CPU), gpu, ptx, cubin (NVIDIA GPU), none")
      ->check(CLI::IsMember({"ast", "tile", "llvm-dialect", "llvm", "asm",
                             "obj", "gpu", "ptx", "cubin", "none"}));
  app.add_flag("--resource-usage", resourceUsage,
               "With --emit=cubin: print registers, shared/local memory, "
               "spills and barriers to stderr");
  app.add_option("--arch", arch,
                 "GPU architecture for --emit=gpu|ptx (sm_80, sm_86, sm_89, "
                 "sm_90, sm_90a, sm_100a)");
  app.add_option("-o", outputPath, "Write the output to FILE (default stdout)");
  app.add_flag("--time-stages", timeStages,
               "Print per-stage compile times to stderr");
  CLI11_PARSE(app, argc, argv);
  if (listBuiltins) {
    std::fputs(sema::builtinIndexMarkdown().c_str(), stdout);
    return 0;
  }
  if (file.empty()) {
    std::fputs("tessera-compile: error: a source file is required (see "
               "--help)\n",
               stderr);
    return 1;
  }

  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "tessera-compile: error: cannot read '%s'\n",
                 file.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto module = driver::SourceModule::parse(file, ss.str());
  if (!module.ok()) {
    std::fputs(module.status().message().c_str(), stderr);
    return 1;
  }
  std::fputs((*module)->warnings().c_str(), stderr);
  auto kernels = (*module)->kernels();
  if (kernel.empty()) {
    if (kernels.empty()) {
      std::fprintf(stderr, "tessera-compile: error: no kernel in '%s'\n",
                   file.c_str());
      return 1;
    }
    kernel = kernels.front()->name;
  }
  const bool gpuStage =
      emitText == "gpu" || emitText == "ptx" || emitText == "cubin";
  const KernelInfo *info = (*module)->findKernel(kernel);
  if (gpuStage && !generic) {
    // What a launch on contiguous, 16-byte-aligned tensors compiles first
    // (Kernel::Impl::compileFirst).
    if (unitStride.empty())
      allUnit = true;
    if (alignedText.empty())
      alignedText = "all";
    index32 = declaredGrid = true;
    // A kernel generic in its storage type: the GPU stages show the
    // tensor-core code of 16-bit storage (the CPU stages, and the runtime,
    // default to fp32).
    if (precision.empty() && info &&
        std::find(info->genericDTypes.begin(), info->genericDTypes.end(),
                  "dtype") != info->genericDTypes.end()) {
      precision = "fp16@accum(fp32)";
      std::fprintf(stderr,
                   "tessera-compile: note: '%s' is generic in its dtype: "
                   "compiled at --precision %s (pass --precision to "
                   "choose)\n",
                   kernel.c_str(), precision.c_str());
    }
  }
  Specialization spec;
  spec.index32 = index32;
  spec.declaredGrid = declaredGrid;
  spec.precision = precision;
  for (const std::string &item : splitList(specText)) {
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      std::fprintf(
          stderr,
          "tessera-compile: error: --spec item '%s' is not NAME=VALUE\n",
          item.c_str());
      return 1;
    }
    spec.constants[item.substr(0, eq)] = ConstValue::parse(item.substr(eq + 1));
  }
  std::vector<std::pair<std::string, int64_t>> shapes;
  for (const std::string &item : splitList(shapeText)) {
    auto eq = item.find('=');
    ConstValue v = eq == std::string::npos
                       ? ConstValue()
                       : ConstValue::parse(item.substr(eq + 1));
    if (!v.isInt()) {
      std::fprintf(stderr,
                   "tessera-compile: error: --shape item '%s' is not "
                   "NAME=INTEGER\n",
                   item.c_str());
      return 1;
    }
    shapes.emplace_back(item.substr(0, eq), v.getInt());
  }
  if (!shapes.empty()) {
    auto values = (*module)->evaluateHeuristics(kernel, spec, shapes);
    if (!values.ok()) {
      std::fprintf(stderr, "tessera-compile: error: %s\n",
                   values.status().message().c_str());
      return 1;
    }
    for (const auto &[name, v] : *values)
      spec.constants[name] = v;
  }
  spec.unitStrideTensors = splitList(unitStride);
  if (allUnit && info)
    for (const ParamInfo &p : info->params)
      if (p.kind == ParamKind::Tensor)
        spec.unitStrideTensors.push_back(p.name);
  if (!alignedText.empty()) {
    spec.alignmentKnown = true;
    if (alignedText == "all") {
      if (info)
        for (const ParamInfo &p : info->params)
          if (p.kind == ParamKind::Tensor)
            spec.alignedTensors.push_back(p.name);
    } else {
      spec.alignedTensors = splitList(alignedText);
    }
  }

  driver::EmitKind kind = driver::EmitKind::Tile;
  if (emitText == "ast")
    kind = driver::EmitKind::AST;
  else if (emitText == "llvm-dialect")
    kind = driver::EmitKind::Lowered;
  else if (emitText == "llvm" || emitText == "none")
    kind = driver::EmitKind::LLVMIR;
  else if (emitText == "asm")
    kind = driver::EmitKind::Assembly;
  else if (emitText == "obj")
    kind = driver::EmitKind::Object;
  else if (emitText == "gpu")
    kind = driver::EmitKind::GPU;
  else if (emitText == "ptx")
    kind = driver::EmitKind::PTX;
  else if (emitText == "cubin")
    kind = driver::EmitKind::Cubin;
  driver::StageTimes times;
  driver::GpuEmitOptions gpuOptions;
  gpuOptions.arch = arch;
  driver::GpuResources resources;
  std::string warnings;
  auto out = driver::emit(**module, kernel, spec, kind, &times, gpuOptions,
                          &resources, &warnings);
  std::fputs(warnings.c_str(), stderr);
  if (!out.ok()) {
    std::fputs(out.status().message().c_str(), stderr);
    if (!out.status().message().empty() &&
        out.status().message().back() != '\n')
      std::fputc('\n', stderr);
    return 1;
  }
  if (emitText != "none") {
    if (outputPath.empty()) {
      std::fwrite(out->data(), 1, out->size(), stdout);
    } else {
      std::ofstream o(outputPath, std::ios::binary);
      o.write(out->data(), std::streamsize(out->size()));
      if (!o) {
        std::fprintf(stderr, "tessera-compile: error: cannot write '%s'\n",
                     outputPath.c_str());
        return 1;
      }
    }
  }
  if (resourceUsage) {
    if (kind != driver::EmitKind::Cubin) {
      std::fprintf(stderr, "tessera-compile: warning: --resource-usage needs "
                           "--emit=cubin; nothing to report\n");
    } else {
      std::string hint =
          resources.registerCap
              ? ", .maxnreg " + std::to_string(resources.registerCap)
          : resources.oneBlockPerSmHint ? ", .minnctapersm 1"
                                        : "";
      std::fprintf(
          stderr,
          "resource usage (%s, %s): %d threads/block, %d registers/thread, "
          "%lld bytes shared (tiles %lld), %lld bytes local, spill stores "
          "%lld bytes, spill loads %lld bytes, %d barriers%s\n",
          kernel.c_str(), arch.c_str(), resources.blockSize,
          resources.registers, (long long)resources.sharedBytes,
          (long long)resources.tileSharedBytes, (long long)resources.localBytes,
          (long long)resources.spillStores, (long long)resources.spillLoads,
          resources.barriers, hint.c_str());
    }
  }
  if (timeStages) {
    bool gpu = kind == driver::EmitKind::GPU || kind == driver::EmitKind::PTX ||
               kind == driver::EmitKind::Cubin;
    if (gpu)
      std::fprintf(stderr,
                   "stage times (ms): parse %.3f  sema %.3f  tile-passes %.3f  "
                   "gpu-mapping %.3f  ptx %.3f  cubin %.3f  total %.3f\n",
                   times.parse, times.sema, times.tilePasses, times.lowering,
                   times.codegen, times.assemble, times.total());
    else
      std::fprintf(stderr,
                   "stage times (ms): parse %.3f  sema %.3f  tile-passes %.3f  "
                   "lowering %.3f  llvm-codegen %.3f  total %.3f\n",
                   times.parse, times.sema, times.tilePasses, times.lowering,
                   times.codegen, times.total());
  }
  return 0;
}
