//===- Pipeline.cpp - Tile IR to GPU kernels ------------------------------===//

#include "tessera/Target/GPU/Pipeline.h"

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Target/PassUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Scalar/Scalarizer.h"

#include <cstdlib>

using namespace ::tessera;
using mlir::Attribute;
using mlir::Diagnostic;
using mlir::IntegerAttr;
using mlir::ModuleOp;
using mlir::PassManager;
using mlir::ScopedDiagnosticHandler;

namespace {

const gpu::GpuArch kArchs[] = {
    // PTX ISA 8.4 (CUDA 12.4) on sm_89+ for the fp8 mma.sync forms.
    {"sm_80", "+ptx80", 166912, 80},  {"sm_86", "+ptx80", 101376, 86},
    {"sm_89", "+ptx84", 101376, 89},  {"sm_90", "+ptx84", 232448, 90},
    {"sm_90a", "+ptx84", 232448, 90}, {"sm_100a", "+ptx86", 232448, 100},
};

/// 32-bit registers one tile may take per thread in the register lowering.
constexpr int64_t kMaxTileRegisters = 128;

/// Splits the vector arithmetic of every function of `module` into scalar
/// instructions in element order (LLVM's scalarizer; loads and stores stay
/// whole, as the back end needs them for vector accesses).
void scalarizeInElementOrder(llvm::Module &module) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::ScalarizerPass());
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(module, mam);
}

} // namespace

StatusOr<gpu::GpuArch> gpu::lookupArch(const std::string &name) {
  for (const GpuArch &a : kArchs)
    if (a.name == name)
      return a;
  return Status(StatusCode::kInvalidArgument,
                "unknown GPU architecture '" + name +
                    "' (supported: " + supportedArchList() + ")");
}

std::string gpu::supportedArchList() {
  std::string s;
  for (const GpuArch &a : kArchs)
    s += (s.empty() ? "" : ", ") + a.name;
  return s;
}

/// Warpgroup matrix products exist on sm_90a only (not sm_90, not sm_100a).
static bool hasWarpgroupMma(const gpu::GpuArch &arch) {
  return arch.name == "sm_90a";
}

bool gpu::usesRegisterLowering(ModuleOp module, const GpuArch &arch) {
  if (const char *forced = std::getenv("TESSERA_GPU_LOWERING"))
    if (std::string(forced) == "shared")
      return false;
  bool all = true;
  module.walk([&](mlir::func::FuncOp f) {
    if (f->hasAttr("tile.kernel") && !mlir::tessera::tile::canAssignLayouts(
                                         f, nullptr, hasWarpgroupMma(arch)))
      all = false;
  });
  return all;
}

Status gpu::lowerToGPUDialect(ModuleOp module, const GpuArch &arch) {
  PassManager pm(module.getContext());
  bool simt = false;
  module.walk(
      [&](mlir::func::FuncOp f) { simt = simt || f->hasAttr("tile.simt"); });
  if (simt) {
    // SIMT programs are written per thread: outlined as they are.
    TESSERA_RETURN_IF_ERROR(addPipeline(
        pm, "func.func(tessera-unify-shape-dims),canonicalize,cse,"
            "tessera-lower-tile-atomics,tessera-outline-simt-kernels,"
            "symbol-dce,canonicalize,tessera-fold-grid-bounds,canonicalize,"
            "cse,tessera-lower-subgroup-reduce,canonicalize,cse"));
  } else if (usesRegisterLowering(module, arch)) {
    std::string wgmma = hasWarpgroupMma(arch) ? "true" : "false";
    TESSERA_RETURN_IF_ERROR(addPipeline(
        pm, "func.func(tessera-unify-shape-dims,"
            "tessera-prefetch-tile-loads,"
            "tessera-narrow-index-loops),canonicalize,cse,"
            "tessera-lower-tile-atomics,"
            "func.func(tessera-widen-float8-dots{warpgroup-mma=" +
                wgmma +
                "},"
                "tessera-assign-layouts{warpgroup-mma=" +
                wgmma +
                "},"
                "tessera-remove-layout-conversions),"
                "tessera-distribute-tiles{max-shared-bytes=0 "
                "max-tile-registers=" +
                std::to_string(kMaxTileRegisters) + " warpgroup-mma=" + wgmma +
                "},"
                "tessera-warpgroup-pingpong,tessera-warp-specialize,"
                "tessera-print-once-per-block,"
                "symbol-dce,canonicalize,tessera-fold-grid-bounds,"
                "canonicalize,cse"));
  } else {
    TESSERA_RETURN_IF_ERROR(addPipeline(
        pm,
        "tessera-convert-tile-to-linalg,func.func(tessera-unify-shape-dims),"
        "canonicalize,cse,"
        "func.func(convert-elementwise-to-linalg),"
        "func.func(tessera-fuse-elementwise-keep-dots),"
        "one-shot-bufferize{unknown-type-conversion=identity-layout-map "
        "allow-return-allocs-from-loops},"
        "canonicalize,cse,func.func(buffer-hoisting,buffer-loop-hoisting,"
        "tessera-fuse-tile-copies),"
        "tessera-lower-tile-atomics,tessera-copy-to-linalg,"
        "func.func(tessera-gpu-warp-reduce,tessera-gpu-matmul-to-mma{fp8=" +
            std::string(arch.computeCapability >= 89 ? "true" : "false") +
            "}),"
            "func.func(convert-linalg-to-parallel-loops,"
            "tessera-gpu-vectorize-elementwise),"
            "tessera-distribute-to-gpu{max-shared-bytes=0},"
            "tessera-print-once-per-block,symbol-dce,canonicalize,tessera-fold-"
            "grid-bounds,canonicalize,cse,"
            "tessera-gpu-mma-sync,"
            "tessera-gpu-async-copy,tessera-gpu-pipeline-copies,"
            "canonicalize,cse,tessera-lower-subgroup-reduce,"
            "canonicalize,cse"));
  }
  TESSERA_RETURN_IF_ERROR(
      runPasses(pm, module, "GPU mapping", StatusCode::kInvalidArgument));
  // A configuration that does not fit is a resource problem (the autotuner
  // prunes on it), not bad input. In registers: a tile that alone needs
  // more than half of a thread's 255 registers would spill.
  int64_t words = 0;
  module.walk([&](mlir::gpu::GPUFuncOp f) {
    if (auto a = f->getAttrOfType<IntegerAttr>("tile.tile_registers"))
      words = std::max(words, a.getInt());
  });
  // A tensor-core kernel whose registers tessera-distribute-tiles
  // estimates past a thread's budget was left unlowered.
  int64_t estimate = 0, budget = 0;
  module.walk([&](mlir::gpu::GPUFuncOp f) {
    auto e = f->getAttrOfType<IntegerAttr>("tile.register_estimate");
    auto b = f->getAttrOfType<IntegerAttr>("tile.register_budget");
    if (e && b && e.getInt() > b.getInt()) {
      estimate = e.getInt();
      budget = b.getInt();
    }
  });
  if (estimate > budget)
    return Status(StatusCode::kResourceExhausted,
                  "this configuration needs about " + std::to_string(estimate) +
                      " registers per thread (accumulator, fragments and "
                      "copy addresses; at most " +
                      std::to_string(budget) +
                      " at this block size); use smaller tiles or more warps");
  if (words > kMaxTileRegisters)
    return Status(StatusCode::kResourceExhausted,
                  "this configuration needs " + std::to_string(words) +
                      " registers per thread for one tile (at most " +
                      std::to_string(kMaxTileRegisters) +
                      "); use smaller tiles or more warps");
  int64_t bytes = sharedBytes(module);
  if (bytes > arch.maxSharedBytes)
    return Status(StatusCode::kResourceExhausted,
                  "this configuration needs " + std::to_string(bytes) +
                      " bytes of shared memory per block; " + arch.name +
                      " allows " + std::to_string(arch.maxSharedBytes));
  return okStatus();
}

int64_t gpu::sharedBytes(ModuleOp module) {
  int64_t bytes = 0;
  module.walk([&](mlir::gpu::GPUFuncOp f) {
    if (auto a = f->getAttrOfType<IntegerAttr>("tile.shared_bytes"))
      bytes += a.getInt();
  });
  return bytes;
}

StatusOr<std::string> gpu::translateToPTX(ModuleOp module,
                                          const GpuArch &arch) {
  // Floating-point multiplies may contract with the adds that use them into
  // one fma (one rounding instead of two), as nvcc's and Triton's GPU code
  // do by default. Only the machine code sees this: the sim runs the IR
  // before it, with separate roundings.
  module.walk([](mlir::arith::ArithFastMathInterface op) {
    namespace arith = mlir::arith;
    if (mlir::isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(
            op.getOperation()))
      op->setAttr(op.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(
                      op->getContext(), op.getFastMathFlagsAttr().getValue() |
                                            arith::FastMathFlags::contract));
  });
  PassManager pm(module.getContext());
  TESSERA_RETURN_IF_ERROR(addPipeline(
      pm, "gpu.module(tessera-linearize-global-accesses,cse,"
          "tessera-predicate-global-accesses,"
          "tessera-expand-float8-casts{f16x2-conversions=" +
              std::string(arch.computeCapability >= 89 ? "true" : "false") +
              "},"
              "arith-emulate-unsupported-floats{source-types=bf16,f16 "
              "target-type=f32},"
              "tessera-expand-arith-for-gpu,"
              "tessera-approximate-math{keep=exp,exp2,log,log2},"
              "tessera-math-to-sfu,"
              "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
              "tessera-gpu-mma-to-nvvm,convert-nvgpu-to-nvvm,"
              "convert-gpu-to-nvvm{index-bitwidth=64},convert-nvvm-to-llvm,"
              "canonicalize,cse),"
              "reconcile-unrealized-casts"));
  TESSERA_RETURN_IF_ERROR(
      runPasses(pm, module, "NVVM lowering", StatusCode::kInvalidArgument));
  // convert-scf-to-cf leaves a loop's `llvm.loop_annotation` on its latch
  // branch as a discardable attribute; the branch's own loop_annotation is
  // what becomes `!llvm.loop` metadata (and `.pragma "nounroll"`).
  module.walk([](mlir::Operation *op) {
    auto ann = op->getAttrOfType<mlir::LLVM::LoopAnnotationAttr>(
        "llvm.loop_annotation");
    if (!ann)
      return;
    if (auto br = mlir::dyn_cast<mlir::LLVM::BrOp>(op))
      br.setLoopAnnotationAttr(ann);
    else if (auto cbr = mlir::dyn_cast<mlir::LLVM::CondBrOp>(op))
      cbr.setLoopAnnotationAttr(ann);
    op->removeAttr("llvm.loop_annotation");
  });
  // Tensor maps (`tile.tensor_maps`, the kernel's last arguments) are
  // 128-byte kernel parameters read in place: byval grid constants, whose
  // address the TMA instructions take (gpu-to-nvvm keeps neither
  // attribute on a gpu.func argument).
  module.walk([](mlir::LLVM::LLVMFuncOp f) {
    auto maps = f->getAttrOfType<mlir::ArrayAttr>("tile.tensor_maps");
    if (!maps)
      return;
    mlir::MLIRContext *ctx = f.getContext();
    unsigned n = f.getNumArguments();
    for (unsigned i = n - maps.size(); i < n; ++i) {
      f.setArgAttr(i, mlir::LLVM::LLVMDialect::getByValAttrName(),
                   mlir::TypeAttr::get(mlir::LLVM::LLVMArrayType::get(
                       mlir::IntegerType::get(ctx, 8), 128)));
      f.setArgAttr(i, mlir::NVVM::NVVMDialect::getGridConstantAttrName(),
                   mlir::UnitAttr::get(ctx));
    }
  });
  // The dynamic shared-memory arena must be an *external* zero-length
  // array (`.extern .shared .b8 x[]` in PTX) so that it denotes the memory
  // given at launch; the upstream lowering makes it internal, which PTX
  // turns into a 1-byte static object.
  module.walk([](mlir::LLVM::GlobalOp g) {
    auto array = mlir::dyn_cast<mlir::LLVM::LLVMArrayType>(g.getGlobalType());
    if (g.getAddrSpace() == 3 && array && array.getNumElements() == 0)
      g.setLinkage(mlir::LLVM::Linkage::External);
  });
  PassManager pm2(module.getContext());
  // convert-gpu-to-nvvm turns the math left after the approximations
  // (fma, floor, ...) into libdevice calls: link libdevice from the CUDA
  // toolkit so that the PTX is self-contained. Without a toolkit the PTX
  // keeps external __nv_* calls (and could not be assembled here anyway).
  std::string libdevice;
  for (const char *root : {static_cast<const char *>(std::getenv("CUDA_HOME")),
                           static_cast<const char *>(std::getenv("CUDA_PATH")),
                           "/usr/local/cuda"}) {
    if (!root)
      continue;
    std::string p = std::string(root) + "/nvvm/libdevice/libdevice.10.bc";
    if (llvm::sys::fs::exists(p)) {
      libdevice = p;
      break;
    }
  }
  TESSERA_RETURN_IF_ERROR(
      addPipeline(pm2, "nvvm-attach-target{chip=" + arch.name +
                           " features=" + arch.ptxFeature + " O=3" +
                           (libdevice.empty() ? "" : " l=" + libdevice) + "}"));
  TESSERA_RETURN_IF_ERROR(
      runPasses(pm2, module, "PTX generation", StatusCode::kInvalidArgument));
  // What gpu-module-to-binary{format=isa} does, with one step between the
  // LLVM optimisation and the NVPTX back end: the per-thread vector
  // arithmetic is split into scalar instructions in element order. The
  // back end splits what is left itself, in an order of its own (the
  // conversions of a row's last elements first), and ptxas allocates
  // registers along the order it is given: layer norm in f16 over a
  // 4096-element row takes 63 registers on sm_90a from the back end's
  // order and 56 from element order.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diagnostics);
      os << d.getLocation() << ": " << d << "\n";
      return mlir::success();
    });
    mlir::gpu::TargetOptions options(
        /*toolkitPath=*/{}, /*librariesToLink=*/{}, /*cmdOptions=*/{},
        /*elfSection=*/{}, mlir::gpu::CompilationTarget::Assembly,
        /*getSymbolTableCallback=*/{}, /*initialLlvmIRCallback=*/{},
        /*linkedLlvmIRCallback=*/{},
        /*optimizedLlvmIRCallback=*/scalarizeInElementOrder);
    if (mlir::failed(mlir::gpu::transformGpuModulesToBinaries(
            module, /*handler=*/nullptr, options)))
      return invalidArgument("PTX generation failed:\n%s", diagnostics.c_str());
  }
  std::string ptx;
  module.walk([&](mlir::gpu::BinaryOp bin) {
    for (Attribute o : bin.getObjects())
      if (auto obj = mlir::dyn_cast<mlir::gpu::ObjectAttr>(o))
        ptx += obj.getObject().getValue().str();
  });
  if (ptx.empty())
    return internalError("PTX generation produced no object");
  return ptx;
}

Status gpu::lowerForSim(ModuleOp module, std::vector<std::string> *sites,
                        bool counters) {
  {
    PassManager pm(module.getContext());
    TESSERA_RETURN_IF_ERROR(addPipeline(
        pm, std::string("tessera-lower-subgroup-reduce,tessera-gpu-to-host") +
                (counters ? "{counters=true}" : "")));
    TESSERA_RETURN_IF_ERROR(
        runPasses(pm, module, "sim lowering", StatusCode::kInvalidArgument));
  }
  if (sites)
    module.walk([&](mlir::func::FuncOp f) {
      if (auto a = f->getAttrOfType<mlir::ArrayAttr>("tile.sim_sites"))
        for (Attribute s : a)
          sites->push_back(mlir::cast<mlir::StringAttr>(s).getValue().str());
    });
  PassManager pm(module.getContext());
  TESSERA_RETURN_IF_ERROR(addPipeline(
      pm, "canonicalize,"
          "func.func(tessera-expand-float8-casts),"
          "func.func(arith-emulate-unsupported-floats{source-types=bf16,f16 "
          "target-type=f32}),"
          "func.func(arith-expand{include-bf16=true}),"
          "tessera-approximate-math,"
          "expand-strided-metadata,lower-affine,convert-scf-to-cf"));
  TESSERA_RETURN_IF_ERROR(addLLVMConversion(pm));
  return runPasses(pm, module, "sim lowering", StatusCode::kInvalidArgument);
}
