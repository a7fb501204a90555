//===- MLIRGen.cpp - Tile language to tile dialect ------------------------===//
//
// Kernel set-up: the function signature from the kernel's parameters and
// specialisation (tensors as memrefs, shape symbols bound, scalars), the body
// through the emitter, and the verification of the result. The emitter's
// parts are described in Emitter.h.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera::sema::detail {

//===----------------------------------------------------------------------===//
// Kernel entry
//===----------------------------------------------------------------------===//

EmittedKernel Emitter::run() {
  EmittedKernel out;
  const FunctionDef &fn = *decl.fn;
  Location fnLoc = loc(fn.loc());
  OwningOpRef<ModuleOp> mod = ModuleOp::create(fnLoc);
  b.setInsertionPointToEnd(mod->getBody());

  auto has = [](const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };

  SmallVector<Type> argTypes;
  struct Bound {
    int param;
    int arg;
  };
  std::vector<Bound> bound;
  for (auto [pi, p] : llvm::enumerate(info.params)) {
    if (p.kind == ParamKind::Constexpr)
      continue;
    if (p.kind == ParamKind::Tensor) {
      if (p.optional && has(spec.absentTensors, p.name))
        continue;
      DType dt;
      if (auto d = parseDType(p.dtype)) {
        dt = *d;
      } else if (auto d = dtypeFromName(p.dtype)) {
        dt = *d;
      } else if (auto it = env.find(p.dtype);
                 it != env.end() && it->second.isDType()) {
        dt = it->second.getDType();
      } else {
        diags.error(SourceLoc{fn.loc().file, p.line, p.col, 1},
                    "dtype '" + p.dtype + "' of parameter '" + p.name +
                        "' is not bound");
        return out;
      }
      int64_t rank = p.dims.size();
      bool unit = has(spec.unitStrideTensors, p.name) && rank > 0;
      SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
      SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
      if (unit)
        strides.back() = 1;
      // The runtime passes every tensor with its first element as the
      // aligned pointer (descriptor offset 0).
      auto layout = StridedLayoutAttr::get(&ctx, /*offset=*/0, strides);
      argTypes.push_back(MemRefType::get(shape, storageType(dt), layout));
      AbiArg a;
      a.param = pi;
      a.isTensor = true;
      a.dtype = dt;
      a.rank = rank;
      a.unitInnerStride = unit;
      out.abi.push_back(a);
    } else {
      DType dt = p.scalarKind == ScalarKind::Int ? DType::I64 : DType::F32;
      if (p.scalarKind == ScalarKind::Bool)
        dt = DType::Bool;
      argTypes.push_back(scalarType(dt));
      AbiArg a;
      a.param = pi;
      a.dtype = dt;
      out.abi.push_back(a);
    }
    bound.push_back({(int)pi, (int)argTypes.size() - 1});
  }

  auto funcType = b.getFunctionType(argTypes, {});
  auto func = func::FuncOp::create(b, fnLoc, info.name, funcType);
  func->setAttr("tile.kernel", b.getUnitAttr());
  // One program instance per thread (tessera-outline-simt-kernels).
  if (info.simt)
    func->setAttr("tile.simt", b.getUnitAttr());
  out.numWarps = env.count("num_warps") ? env["num_warps"].getInt() : 4;
  out.numStages = env.count("num_stages") ? env["num_stages"].getInt() : 2;
  func->setAttr("tile.num_warps", b.getI32IntegerAttr(out.numWarps));
  func->setAttr("tile.num_stages", b.getI32IntegerAttr(out.numStages));
  // The program schedule: blocks that loop over the programs (persistent)
  // and the order programs are taken in (groups of program_group along
  // axis 0). The GPU lowering implements both (outlineKernel).
  // (bindSpecialization checked both values.)
  if (auto it = env.find("persistent");
      it != env.end() && it->second.isBool() && it->second.getBool())
    func->setAttr("tile.persistent", b.getUnitAttr());
  if (auto it = env.find("program_group");
      it != env.end() && it->second.isInt() && it->second.getInt() > 0)
    func->setAttr(
        "tile.program_group",
        b.getI32IntegerAttr(static_cast<int32_t>(it->second.getInt())));
  // A producer warpgroup feeding the TMA rings of consumer warpgroups
  // (tessera-warp-specialize), where the GPU lowering has such rings.
  if (auto it = env.find("warp_specialize");
      it != env.end() && it->second.isBool() && it->second.getBool())
    func->setAttr("tile.warp_specialize", b.getUnitAttr());
  // Two consumer warpgroups taking turns at the tensor cores
  // (tessera-warpgroup-pingpong), where warp specialisation gives two.
  if (auto it = env.find("pingpong");
      it != env.end() && it->second.isBool() && it->second.getBool())
    func->setAttr("tile.pingpong", b.getUnitAttr());
  // VECTOR_WIDTH, where a configuration binds it, caps the elements per
  // vector access of the GPU lowering (tessera-gpu-vectorize-elementwise).
  if (auto it = env.find("VECTOR_WIDTH");
      it != env.end() && it->second.isInt() && it->second.getInt() >= 1)
    func->setAttr("tile.vector_width",
                  b.getI32IntegerAttr(static_cast<int32_t>(
                      std::min<int64_t>(it->second.getInt(), 64))));
  // Indices of every tensor fit in 31 bits (Specialization::index32).
  if (spec.index32)
    func->setAttr("tile.index32", b.getUnitAttr());
  // tile.dot inputs may run on tf32 tensor cores (precision "tf32").
  if (auto policy = PrecisionPolicy::parse(spec.precision, nullptr);
      policy && policy->tf32Dots)
    func->setAttr("tile.dot_precision", b.getStringAttr("tf32"));
  // The shape symbol of every tensor dimension ("" for a fixed extent):
  // dimensions with the same symbol are equal at launch (checked by the
  // runtime), which tessera-unify-shape-dims exploits.
  for (const Bound &bd : bound) {
    const ParamInfo &p = info.params[bd.param];
    if (p.kind != ParamKind::Tensor)
      continue;
    SmallVector<Attribute> syms;
    for (const auto &d : p.dims)
      syms.push_back(b.getStringAttr(d.symbol));
    func.setArgAttr(bd.arg, "tile.dim_symbols", b.getArrayAttr(syms));
    // Alignment facts of the launch (Specialization::alignedTensors).
    bool unit = has(spec.unitStrideTensors, p.name) && !p.dims.empty();
    if (unit && has(spec.alignedTensors, p.name))
      func.setArgAttr(bd.arg, "tile.aligned", b.getBoolAttr(true));
    else if (spec.alignmentKnown)
      func.setArgAttr(bd.arg, "tile.aligned", b.getBoolAttr(false));
  }
  mlir::Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // Parameters, absent optionals, shape symbols.
  std::map<std::string, SVal> symbols;
  for (const Bound &bd : bound) {
    const ParamInfo &p = info.params[bd.param];
    Value arg = entry->getArgument(bd.arg);
    if (p.kind == ParamKind::Tensor) {
      SVal v;
      v.kind = SVal::Kind::Tensor;
      v.value = arg;
      v.param = bd.param;
      v.dtype = out.abi[bd.arg].dtype;
      v.name = p.name;
      std::vector<SVal> dims;
      for (auto [di, d] : llvm::enumerate(p.dims)) {
        if (d.symbol.empty()) {
          dims.push_back(SVal::constant(ConstValue::integer(d.fixed)));
          continue;
        }
        auto it = symbols.find(d.symbol);
        if (it == symbols.end()) {
          Value dim = memref::DimOp::create(b, fnLoc, arg, di);
          Value i64 = arith::IndexCastOp::create(b, fnLoc, b.getI64Type(), dim);
          it = symbols.emplace(d.symbol, SVal::typed(i64, DType::I64)).first;
        }
        dims.push_back(it->second);
      }
      vars["\x01shape:" + std::to_string(bd.param)] =
          SVal::tuple(std::move(dims), SVal::Kind::Shape);
      vars[p.name] = v;
    } else {
      SVal v = SVal::typed(arg, out.abi[bd.arg].dtype);
      v.param = bd.param;
      vars[p.name] = v;
    }
  }
  for (const ParamInfo &p : info.params)
    if (p.kind == ParamKind::Tensor && p.optional &&
        has(spec.absentTensors, p.name))
      vars[p.name] = SVal::constant(ConstValue::none());
  for (auto &[sym, v] : symbols)
    if (!vars.count(sym))
      vars[sym] = v;
  for (const ParamInfo &p : info.params)
    if (p.kind == ParamKind::Constexpr)
      if (auto it = env.find(p.name); it != env.end())
        vars[p.name] = SVal::constant(it->second);

  emitWork({{&fn.body, 0}});
  if (entry->empty() || !entry->back().hasTrait<OpTrait::IsTerminator>()) {
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, fnLoc);
  }
  if (diags.hasErrors())
    return out;

  // Verify; a failure here is a compiler bug, reported at the op's location.
  std::string verifyMessage;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      llvm::raw_string_ostream os(verifyMessage);
      os << d.getLocation() << ": " << d.str() << "\n";
      return success();
    });
    if (failed(verify(*mod))) {
      diags.error(fn.loc(), "internal compiler error: generated IR does not "
                            "verify:\n" +
                                verifyMessage);
      return out;
    }
  }
  out.module = std::move(mod);
  return out;
}

} // namespace tessera::sema::detail

namespace tessera::sema {

EmittedKernel emitKernel(mlir::MLIRContext &context, const ast::Module &module,
                         const KernelDecl &decl, const ConstEnv &env,
                         const Specialization &spec, const SourceManager &sm,
                         DiagnosticEngine &diags) {
  using namespace mlir;
  context.loadDialect<detail::tl::TileDialect, arith::ArithDialect,
                      func::FuncDialect, gpu::GPUDialect, math::MathDialect,
                      memref::MemRefDialect, scf::SCFDialect,
                      tensor::TensorDialect, cf::ControlFlowDialect>();
  return detail::Emitter(context, module, decl, env, spec, sm, diags).run();
}

void registerTesseraDialects(mlir::DialectRegistry &registry) {
  using namespace mlir;
  registry
      .insert<detail::tl::TileDialect, arith::ArithDialect, func::FuncDialect,
              gpu::GPUDialect, math::MathDialect, memref::MemRefDialect,
              scf::SCFDialect, tensor::TensorDialect, cf::ControlFlowDialect>();
}

} // namespace tessera::sema
