//===- Pipeline.cpp - Tile IR to host code --------------------------------===//

#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Support/Hash.h"
#include "tessera/Target/CPU/JitTarget.h"
#include "tessera/Target/CPU/KernelAsserts.h"

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Target/PassUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

using namespace mlir;
using namespace ::tessera;

namespace {
std::once_flag initOnce;

void initialize() {
  std::call_once(initOnce, [] {
    registerAllPasses();
    mlir::tessera::registerTesseraConversionPasses();
    mlir::tessera::tile::registerTileTransformsPasses();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // Loop strength reduction takes ~40% of the machine-code generation
    // time of the GEMM kernel (its unrolled micro-kernel and epilogue loops
    // have many address uses) and made no measurable difference to the
    // speed of the kernels here (see docs/architecture.md). This is an
    // LLVM-wide option: an application that embeds the runtime and also
    // generates code with LLVM keeps it by setting TESSERA_LLVM_LSR=1.
    const char *lsr = std::getenv("TESSERA_LLVM_LSR");
    if (!lsr || std::string(lsr) != "1") {
      auto &opts = llvm::cl::getRegisteredOptions();
      auto it = opts.find("disable-lsr");
      if (it != opts.end())
        if (auto *o = static_cast<llvm::cl::opt<bool> *>(it->second))
          o->setValue(true);
    }
  });
}

/// Turns small fixed-size heap allocations that are not inside a loop into
/// stack allocations (upstream promote-buffers-to-stack would also promote
/// allocations inside loops, whose allocas then grow the stack on every
/// iteration).
struct PromoteSmallAllocsPass
    : PassWrapper<PromoteSmallAllocsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PromoteSmallAllocsPass)
  StringRef getArgument() const override {
    return "tessera-promote-small-allocs";
  }
  static constexpr int64_t kMaxBytes = 64 * 1024;
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp op) {
      MemRefType t = op.getType();
      if (!t.hasStaticShape() || !t.getLayout().isIdentity() ||
          !t.getElementType().isIntOrFloat())
        return;
      int64_t bytes = t.getNumElements() *
                      std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
      if (bytes > kMaxBytes)
        return;
      for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
        if (isa<LoopLikeOpInterface>(p))
          return;
      allocs.push_back(op);
    });
    for (memref::AllocOp op : allocs) {
      OpBuilder b(op);
      auto a = memref::AllocaOp::create(
          b, op.getLoc(), op.getType(), op.getDynamicSizes(),
          op.getSymbolOperands(), op.getAlignmentAttr());
      SmallVector<Operation *> deallocs;
      for (Operation *u : op->getUsers())
        if (isa<memref::DeallocOp>(u))
          deallocs.push_back(u);
      for (Operation *d : deallocs)
        d->erase();
      op.replaceAllUsesWith(a.getResult());
      op.erase();
    }
  }
};
/// Register micro-tile of the matmul kernel for the JIT target's vector
/// unit: the accumulator takes half the vector registers (16 of 32 zmm with
/// AVX-512, 8 of 16 ymm with AVX2).
struct MicroTile {
  int64_t mr, nr;
};
MicroTile targetMicroTile() {
  static const MicroTile tile = [] {
    StatusOr<cpu::JitTarget> t = cpu::jitTarget();
    auto has = [&](const char *f) { return t.ok() && t->hasFeature(f); };
    if (has("avx512f"))
      return MicroTile{8, 32};
    if (has("avx2") || has("avx"))
      return MicroTile{4, 16};
    return MicroTile{4, 8};
  }();
  return tile;
}
} // namespace

void cpu::prepareContext(MLIRContext &ctx) {
  initialize();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<mlir::tessera::tile::TileDialect>();
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ctx.appendDialectRegistry(registry);
  // Only what MLIRGen emits is loaded up front; every pass loads the
  // dialects it declares when it runs (loading all ~60 registered dialects
  // took about 25 ms of every compile).
  ctx.loadDialect<mlir::tessera::tile::TileDialect, func::FuncDialect,
                  arith::ArithDialect, math::MathDialect, scf::SCFDialect,
                  tensor::TensorDialect, memref::MemRefDialect>();
}

Status cpu::runTilePasses(ModuleOp module) {
  PassManager pm(module.getContext());
  TESSERA_RETURN_IF_ERROR(
      addPipeline(pm, "canonicalize,cse,tessera-fold-masks,canonicalize"));
  return runPasses(pm, module, "tile passes");
}

Status cpu::lowerToLLVMDialect(ModuleOp module, const std::string &kernel) {
  PassManager pm(module.getContext());
  pm.addPass(mlir::tessera::createFormProgramLoopPass());
  pm.addPass(mlir::tessera::createConvertTileToLinalgPass());
  TESSERA_RETURN_IF_ERROR(addPipeline(
      pm, "func.func(tessera-unify-shape-dims),inline,symbol-dce,"
          "func.func(convert-elementwise-to-linalg),"
          "canonicalize,cse,"
          "func.func(tessera-fuse-elementwise-keep-dots),"
          "one-shot-bufferize{unknown-type-conversion=identity-layout-map "
          "allow-return-allocs-from-loops},"
          "canonicalize,cse,"
          "func.func(buffer-hoisting,buffer-loop-hoisting,"
          "tessera-fuse-tile-copies),"
          "buffer-deallocation-pipeline,tessera-lower-tile-atomics"));
  pm.addPass(std::make_unique<PromoteSmallAllocsPass>());
  pm.addPass(mlir::tessera::createCopyToLinalgPass());
  {
    MicroTile t = targetMicroTile();
    mlir::tessera::VectorizeMatmulPassOptions o;
    o.mr = t.mr;
    o.nr = t.nr;
    pm.addNestedPass<func::FuncOp>(mlir::tessera::createVectorizeMatmulPass(o));
  }
  pm.addNestedPass<func::FuncOp>(
      mlir::tessera::createVectorizeReductionsPass());
  TESSERA_RETURN_IF_ERROR(addPipeline(
      pm, "canonicalize,cse,func.func(convert-linalg-to-loops),"
          "canonicalize,cse,"
          "func.func(tessera-expand-float8-casts),"
          "func.func(arith-emulate-unsupported-floats{source-types=bf16,f16 "
          "target-type=f32}),"
          "func.func(arith-expand{include-bf16=true}),"
          "func.func(convert-vector-to-scf{full-unroll=true}),"
          "expand-strided-metadata,lower-affine,convert-scf-to-cf"));
  pm.addPass(mlir::tessera::createApproximateMathPass());
  TESSERA_RETURN_IF_ERROR(addLLVMConversion(pm));
  return runPasses(pm, module, "CPU lowering");
}

namespace {
/// The JIT's target (cpu::jitTarget()) with aggressive code generation and
/// position-independent code: the linker may place an object anywhere, and
/// calls to the process's functions go through stubs it makes.
StatusOr<llvm::orc::JITTargetMachineBuilder> jitTargetMachineBuilder() {
  TESSERA_ASSIGN_OR_RETURN(cpu::JitTarget t, cpu::jitTarget());
  llvm::orc::JITTargetMachineBuilder jtmb((llvm::Triple(t.triple)));
  jtmb.setCPU(t.cpu);
  jtmb.addFeatures(t.features);
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  return jtmb;
}

StatusOr<std::unique_ptr<llvm::TargetMachine>> jitTargetMachine() {
  TESSERA_ASSIGN_OR_RETURN(auto jtmb, jitTargetMachineBuilder());
  auto tm = jtmb.createTargetMachine();
  if (!tm)
    return internalError("cannot create a target machine for the JIT: %s",
                         llvm::toString(tm.takeError()).c_str());
  return std::move(*tm);
}
} // namespace

cpu::JitKernel::~JitKernel() = default;

namespace {
/// The name of the packed entry of `function`.
std::string packedName(const std::string &function) {
  return "_tessera_packed_" + function;
}

/// Adds `void <packedName(function)>(ptr args)`: loads argument i of
/// `function` from the pointer in args[i], calls it and stores a result
/// through args[n].
llvm::Error addPackedEntry(llvm::Module &m, const std::string &function) {
  llvm::Function *f = m.getFunction(function);
  if (!f)
    return llvm::createStringError("no function '%s' to enter",
                                   function.c_str());
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), {ptr}, false);
  auto *entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                       packedName(function), m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", entry));
  llvm::Value *slots = entry->getArg(0);
  llvm::SmallVector<llvm::Value *> args;
  for (llvm::Argument &a : f->args()) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, slots, a.getArgNo());
    args.push_back(b.CreateLoad(a.getType(), b.CreateLoad(ptr, slot)));
  }
  llvm::CallInst *call = b.CreateCall(f, args);
  if (!f->getReturnType()->isVoidTy()) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, slots, f->arg_size());
    b.CreateStore(call, b.CreateLoad(ptr, slot));
  }
  b.CreateRetVoid();
  return llvm::Error::success();
}

/// LLVM's O2 module pipeline for the host, tuned for JIT latency: the loop
/// vectoriser stays on (it vectorises the copy, fill and element-wise loops
/// that come out of linalg), while loop unrolling, interleaving and the SLP
/// vectoriser are off. The matmul micro-kernel is vectorised in MLIR already,
/// and with them on the GEMM kernel took ~40% longer to compile with no
/// throughput difference measurable above this machine's noise
/// (docs/architecture.md).
void optimize(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = false;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = false;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  // O2 by default: O3 took ~10 ms longer on the GEMM kernel with no
  // throughput difference measurable here (docs/architecture.md).
  // TESSERA_LLVM_OPT=O1|O2|O3 overrides it.
  static const llvm::OptimizationLevel level = [] {
    const char *v = std::getenv("TESSERA_LLVM_OPT");
    std::string s = v ? v : "";
    return s == "O1"   ? llvm::OptimizationLevel::O1
           : s == "O3" ? llvm::OptimizationLevel::O3
                       : llvm::OptimizationLevel::O2;
  }();
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

/// `module` (LLVM dialect) as LLVM IR for the JIT's target, optimised
/// (with the packed entry of `packedFunction` when it is not empty), and
/// the target machine that emits it.
StatusOr<std::pair<std::unique_ptr<llvm::Module>,
                   std::unique_ptr<llvm::TargetMachine>>>
optimizedModule(ModuleOp module, llvm::LLVMContext &ctx,
                const std::string &packedFunction = "") {
  auto llvmModule = translateModuleToLLVMIR(module, ctx);
  if (!llvmModule)
    return internalError("translation to LLVM IR failed");
  if (!packedFunction.empty())
    if (auto err = addPackedEntry(*llvmModule, packedFunction))
      return internalError("%s", llvm::toString(std::move(err)).c_str());
  TESSERA_ASSIGN_OR_RETURN(auto tm, jitTargetMachine());
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  optimize(*llvmModule, *tm);
  return std::make_pair(std::move(llvmModule), std::move(tm));
}

/// Machine code of `m` for `tm`: an object file or assembly text.
StatusOr<std::string> emitMachineCode(llvm::Module &m, llvm::TargetMachine &tm,
                                      llvm::CodeGenFileType type) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    return internalError("the host target cannot emit machine code");
  pm.run(m);
  return std::string(buffer.str());
}
} // namespace

StatusOr<std::string> cpu::translateToText(ModuleOp module, TextKind kind) {
  llvm::LLVMContext llvmCtx;
  TESSERA_ASSIGN_OR_RETURN(auto compiled, optimizedModule(module, llvmCtx));
  auto &[llvmModule, tm] = compiled;
  if (kind == TextKind::LLVMIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    return text;
  }
  return emitMachineCode(*llvmModule, *tm,
                         kind == TextKind::Assembly
                             ? llvm::CodeGenFileType::AssemblyFile
                             : llvm::CodeGenFileType::ObjectFile);
}

StatusOr<cpu::ObjectCode> cpu::compileToObject(ModuleOp module,
                                               const std::string &function) {
  auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(function);
  if (!fn)
    return internalError("lowered module has no '%s'", function.c_str());
  ObjectCode code;
  code.entry = packedName(function);
  code.numArgs = fn.getNumArguments();
  llvm::LLVMContext llvmCtx;
  TESSERA_ASSIGN_OR_RETURN(auto compiled,
                           optimizedModule(module, llvmCtx, function));
  TESSERA_ASSIGN_OR_RETURN(code.object,
                           emitMachineCode(*compiled.first, *compiled.second,
                                           llvm::CodeGenFileType::ObjectFile));
  return code;
}

StatusOr<std::string> cpu::objectCodeTarget() {
  static const StatusOr<std::string> target = []() -> StatusOr<std::string> {
    TESSERA_ASSIGN_OR_RETURN(JitTarget t, jitTarget());
    std::string features;
    for (const std::string &f : t.features)
      features += f + ",";
    return formatString("%s/%s/%016llx", t.triple.c_str(), t.cpu.c_str(),
                        (unsigned long long)fnv1a(features));
  }();
  return target;
}

StatusOr<std::unique_ptr<cpu::JitKernel>>
cpu::JitKernel::create(ModuleOp module, const std::string &kernel) {
  TESSERA_ASSIGN_OR_RETURN(auto code,
                           compileToObject(module, kernel + "_chunk"));
  return load(std::move(code));
}

StatusOr<std::unique_ptr<cpu::JitKernel>>
cpu::JitKernel::load(ObjectCode code) {
  if (code.numArgs < 5)
    return invalidArgument("kernel object code with %zu arguments",
                           code.numArgs);
  TESSERA_ASSIGN_OR_RETURN(auto fn, JitFunction::load(std::move(code), {}));
  std::unique_ptr<JitKernel> k(new JitKernel());
  // The chunk function's last five arguments are the program-loop scalars.
  k->numSlots = fn->numArgs() - 5;
  k->entry = fn->entry();
  k->fn = std::move(fn);
  return k;
}

namespace {
/// The process's JIT: one execution session and object linker for every
/// JitFunction, whose code lives in a JITDylib of its own (made in
/// microseconds, where a JIT instance takes a quarter of a millisecond).
/// Its main JITDylib resolves what every kernel may call: the process's
/// functions (the C library's, libm's) and the routines the code generator
/// calls where the target has no instruction for a conversion (bf16 and
/// f16 rounding without AVX-512 BF16 or F16C), the same whatever the host
/// provides, and the routine failed kernel assertions call
/// (KernelAsserts.h). Never destroyed: kernels may outlive static destruction.
StatusOr<llvm::orc::LLJIT *> processJit() {
  static StatusOr<llvm::orc::LLJIT *> jit =
      []() -> StatusOr<llvm::orc::LLJIT *> {
    initialize();
    TESSERA_ASSIGN_OR_RETURN(auto jtmb, jitTargetMachineBuilder());
    auto made = llvm::orc::LLJITBuilder()
                    .setJITTargetMachineBuilder(std::move(jtmb))
                    .create();
    if (!made)
      return internalError("cannot create the JIT: %s",
                           llvm::toString(made.takeError()).c_str());
    llvm::orc::JITDylib &lib = (*made)->getMainJITDylib();
    const llvm::DataLayout &dl = (*made)->getDataLayout();
    auto process =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            dl.getGlobalPrefix());
    if (!process)
      return internalError("cannot search the process's symbols: %s",
                           llvm::toString(process.takeError()).c_str());
    lib.addGenerator(std::move(*process));
    llvm::orc::MangleAndInterner mangle(lib.getExecutionSession(), dl);
    llvm::orc::SymbolMap map;
    for (const cpu::RuntimeRoutine &r : cpu::floatConversionRoutines())
      map[mangle(r.name)] = {llvm::orc::ExecutorAddr::fromPtr(r.address),
                             llvm::JITSymbolFlags::Exported};
    map[mangle(cpu::kAssertFailedRoutine)] = {
        llvm::orc::ExecutorAddr::fromPtr(&tessera_kernel_assert_failed),
        llvm::JITSymbolFlags::Exported};
    if (auto err = lib.define(llvm::orc::absoluteSymbols(std::move(map))))
      return internalError("cannot define the JIT's symbols: %s",
                           llvm::toString(std::move(err)).c_str());
    return made->release();
  }();
  return jit;
}
} // namespace

cpu::JitFunction::~JitFunction() {
  if (!lib)
    return;
  // Frees the code (nothing of it runs any more).
  if (auto err = jit->getExecutionSession().removeJITDylib(*lib))
    llvm::consumeError(std::move(err));
}

StatusOr<std::unique_ptr<cpu::JitFunction>> cpu::JitFunction::create(
    ModuleOp module, const std::string &function,
    const std::vector<std::pair<std::string, void *>> &symbols) {
  TESSERA_ASSIGN_OR_RETURN(auto code, compileToObject(module, function));
  return load(std::move(code), symbols);
}

StatusOr<std::unique_ptr<cpu::JitFunction>> cpu::JitFunction::load(
    ObjectCode code,
    const std::vector<std::pair<std::string, void *>> &symbols) {
  TESSERA_ASSIGN_OR_RETURN(llvm::orc::LLJIT * jit, processJit());
  static std::atomic<uint64_t> counter{0};
  auto lib = jit->createJITDylib("tessera." + code.entry + "." +
                                 std::to_string(counter.fetch_add(1)));
  if (!lib)
    return internalError("cannot make a JIT library: %s",
                         llvm::toString(lib.takeError()).c_str());
  std::unique_ptr<JitFunction> f(new JitFunction());
  f->jit = jit;
  f->lib = &*lib;
  // The caller's symbols, then the process JIT's.
  lib->addToLinkOrder(jit->getMainJITDylib());
  if (!symbols.empty()) {
    llvm::orc::MangleAndInterner mangle(jit->getExecutionSession(),
                                        jit->getDataLayout());
    llvm::orc::SymbolMap map;
    for (const auto &[name, addr] : symbols)
      map[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(addr),
                           llvm::JITSymbolFlags::Exported};
    if (auto err = lib->define(llvm::orc::absoluteSymbols(std::move(map))))
      return internalError("cannot define the JIT's symbols: %s",
                           llvm::toString(std::move(err)).c_str());
  }
  if (auto err = jit->addObjectFile(
          *lib, llvm::MemoryBuffer::getMemBufferCopy(code.object, code.entry)))
    return invalidArgument("cannot link the object code of '%s': %s",
                           code.entry.c_str(),
                           llvm::toString(std::move(err)).c_str());
  auto addr = jit->lookup(*lib, code.entry);
  if (!addr)
    return internalError("JIT lookup of '%s' failed: %s", code.entry.c_str(),
                         llvm::toString(addr.takeError()).c_str());
  f->fn = addr->toPtr<void (*)(void **)>();
  f->code_ = std::move(code);
  return f;
}

void cpu::JitKernel::run(void **args, int64_t begin, int64_t end,
                         const int64_t grid[3]) const {
  llvm::SmallVector<void *, 64> all(args, args + numSlots);
  int64_t g0 = grid[0], g1 = grid[1], g2 = grid[2];
  all.push_back(&begin);
  all.push_back(&end);
  all.push_back(&g0);
  all.push_back(&g1);
  all.push_back(&g2);
  entry(all.data());
}
