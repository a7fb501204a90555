//===- FrontendFuzzer.cpp - libFuzzer target over parser + sema -----------===//
//
// Parses the input as a .tile module and, like SourceModule::parse, analyses
// every kernel declaration. When the module is free of errors, every kernel
// is then compiled to tile IR (MLIRGen + the tile-level passes, i.e. what
// `driver::emit(..., EmitKind::Tile)` does) for
//   - the default specialisation, and
//   - when the kernel has an autotune space, the specialisation taking the
//     first value of every space entry,
//   - when it is generic in `dtype`, one low-precision/integer precision
//     policy picked from the input's size,
// and its launch grid and autotune restrictions are evaluated.
//
// Diagnostics are the expected outcome for most inputs. Crashes, sanitizer
// reports, hangs and unbounded memory growth are bugs, and so is an
// "internal compiler error" (IR that does not verify, a failing tile pass):
// those abort, unless TESSERA_FUZZ_IGNORE_ICE=1 is set.
// TESSERA_FUZZ_VERBOSE=1 prints the diagnostics of every input.
//
// The same file is linked into `tessera-fuzz-replay` (ReplayMain.cpp), which
// re-runs the saved regression inputs in ordinary builds.
//
//===----------------------------------------------------------------------===//

#include "tessera/Frontend/Parser.h"
#include "tessera/Sema/ConstEval.h"
#include "tessera/Sema/MLIRGen.h"
#include "tessera/Sema/Signature.h"
#include "tessera/Target/CPU/Pipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Casting.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

using namespace tessera;

namespace {

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

/// One MLIRContext (with every dialect the pipelines use) shared by all
/// inputs: creating one per input would dominate the run time. Types and
/// attributes interned by earlier inputs stay in it, so it is replaced every
/// kRecycleAfter inputs to keep memory bounded.
class SharedContext {
public:
  mlir::MLIRContext &get() {
    if (!ctx_ || uses_ >= kRecycleAfter) {
      ctx_.reset();
      ctx_ = std::make_unique<mlir::MLIRContext>(
          mlir::MLIRContext::Threading::DISABLED);
      cpu::prepareContext(*ctx_);
      // Diagnostics not captured by a scoped handler are dropped.
      ctx_->getDiagEngine().registerHandler(
          [](mlir::Diagnostic &) { return mlir::success(); });
      uses_ = 0;
    }
    ++uses_;
    return *ctx_;
  }

private:
  static constexpr unsigned kRecycleAfter = 2000;
  std::unique_ptr<mlir::MLIRContext> ctx_;
  unsigned uses_ = 0;
};

SharedContext &sharedContext() {
  static SharedContext *c = new SharedContext(); // Never destroyed.
  return *c;
}

[[noreturn]] void internalCompilerError(const std::string &what,
                                        const std::string &details) {
  std::fprintf(stderr, "tessera-fuzz: %s\n%s\n", what.c_str(), details.c_str());
  std::fflush(stderr);
  std::abort();
}

void checkForICE(const std::string &kernel, const std::string &rendered) {
  if (rendered.find("internal compiler error") == std::string::npos)
    return;
  if (envFlag("TESSERA_FUZZ_IGNORE_ICE"))
    return;
  internalCompilerError("internal compiler error in kernel '" + kernel + "'",
                        rendered);
}

/// The specialisations every kernel is compiled for: the defaults (fp32);
/// the first value of every autotune space entry; and, for kernels generic
/// in `dtype`, the defaults under one low-precision or integer policy chosen
/// by `seed` (so a given input always compiles the same way).
std::vector<Specialization> specializationsFor(const KernelInfo &info,
                                               size_t seed) {
  std::vector<Specialization> specs(1);
  if (info.autotune && !info.autotune->space.empty()) {
    Specialization first;
    for (const auto &[name, values] : info.autotune->space)
      if (!values.empty())
        first.constants[name] = values.front();
    specs.push_back(std::move(first));
  }
  if (!info.genericDTypes.empty()) {
    static const char *policies[] = {"bf16@accum(fp32)", "f16",
                                     "fp8_e4m3@accum(fp32)", "i8@accum(i32)"};
    Specialization low;
    low.precision = policies[seed % std::size(policies)];
    specs.push_back(std::move(low));
  }
  return specs;
}

/// Evaluates the launch grid (shape symbols bound to 1000) and the autotune
/// restrictions, as the runtime does before a launch.
void evaluateLaunchExpressions(const sema::KernelDecl &decl,
                               const sema::ConstEnv &env) {
  sema::ConstEnv gridEnv = env;
  for (const std::string &sym : decl.info.shapeSymbols)
    gridEnv[sym] = ConstValue::integer(1000);
  for (const ast::Expr *e : decl.grid)
    (void)sema::evalConst(*e, gridEnv);

  if (!decl.info.autotune)
    return;
  for (const std::string &text : decl.info.autotune->restrictions) {
    SourceManager sm;
    uint32_t id = sm.addFile("<restrict>", "__r = " + text + "\n");
    DiagnosticEngine diags(sm);
    auto mod = parseModule(sm, id, diags);
    if (diags.hasErrors() || mod->body.size() != 1)
      continue;
    auto *assign = llvm::dyn_cast<ast::AssignStmt>(mod->body[0].get());
    if (!assign || !assign->value)
      continue;
    (void)sema::evalConst(*assign->value, env);
  }
}

void compileKernel(const ast::Module &module, const sema::KernelDecl &decl,
                   const sema::ConstEnv &constants, const SourceManager &sm,
                   size_t seed, bool verbose) {
  for (const Specialization &spec : specializationsFor(decl.info, seed)) {
    std::string err;
    auto env = sema::bindSpecialization(decl, constants, spec, &err);
    if (!env) {
      if (verbose)
        std::fprintf(stderr, "bind '%s': %s\n", decl.info.name.c_str(),
                     err.c_str());
      continue;
    }
    evaluateLaunchExpressions(decl, *env);

    mlir::MLIRContext &ctx = sharedContext().get();
    DiagnosticEngine diags(sm);
    sema::EmittedKernel k =
        sema::emitKernel(ctx, module, decl, *env, spec, sm, diags);
    std::string rendered = diags.render();
    if (verbose && !rendered.empty())
      std::fprintf(stderr, "%s", rendered.c_str());
    checkForICE(decl.info.name, rendered);
    if (diags.hasErrors() || !k.module)
      continue;
    Status st = cpu::runTilePasses(*k.module);
    if (!st.ok()) {
      // Tile passes fail only on IR that MLIRGen verified: a compiler bug.
      if (verbose)
        std::fprintf(stderr, "tile passes: %s\n", st.toString().c_str());
      checkForICE(decl.info.name,
                  "internal compiler error: " + st.toString());
    }
  }
}

} // namespace

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TESSERA_FUZZ_ASAN)
#define TESSERA_FUZZ_ASAN 1
#endif

#ifdef TESSERA_FUZZ_ASAN
/// LLVM's BumpPtrAllocator poisons the unused part of its slabs when its
/// (inline) code is built with ASan, as ours is, but Debian's libMLIR is not:
/// when an instrumented inline Allocate() starts a slab of an MLIRContext
/// uniquer and libMLIR then allocates from it without unpoisoning, ASan
/// reports a false use-after-poison (seen after a few thousand inputs share
/// one context). Ignore manual poisoning; ODR reports come from the shared
/// LLVM libraries too. ASAN_OPTIONS still overrides these.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_odr_violation=0";
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const bool verbose = envFlag("TESSERA_FUZZ_VERBOSE");
  SourceManager sm;
  uint32_t fileId = sm.addFile(
      "fuzz.tile", std::string(reinterpret_cast<const char *>(data), size));
  DiagnosticEngine diags(sm);
  std::unique_ptr<ast::Module> module = parseModule(sm, fileId, diags);
  if (!module)
    internalCompilerError("parseModule returned null", diags.render());
  // The AST printer is part of the frontend (`--emit=ast`).
  (void)ast::printModule(*module);

  // Declarations, exactly as SourceModule::parse does them.
  std::vector<sema::KernelDecl> kernels;
  sema::ConstEnv constants;
  if (!diags.hasErrors()) {
    constants = sema::collectModuleConstants(*module, diags);
    for (const auto &s : module->body) {
      auto *fn = llvm::dyn_cast<ast::FunctionDef>(s.get());
      if (!fn || !sema::isKernelDefinition(*fn))
        continue;
      if (auto decl = sema::analyzeKernel(*fn, constants, diags))
        kernels.push_back(std::move(*decl));
    }
  }
  std::string rendered = diags.render();
  if (verbose && !rendered.empty())
    std::fprintf(stderr, "%s", rendered.c_str());
  if (diags.hasErrors())
    return 0;

  for (const sema::KernelDecl &decl : kernels)
    compileKernel(*module, decl, constants, sm, size, verbose);
  return 0;
}
