//===- ConversionUtils.cpp - Helpers shared by the conversion passes ------===//

#include "ConversionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

bool tessera::writesMemory(Operation *op) {
  bool writes = false;
  op->walk([&](Operation *nested) {
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(nested)) {
      if (effects.hasEffect<MemoryEffects::Write>() ||
          effects.hasEffect<MemoryEffects::Allocate>() ||
          effects.hasEffect<MemoryEffects::Free>())
        writes = true;
    } else if (!nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
               !isa<gpu::BarrierOp>(nested)) {
      // Unknown effects: assume the worst.
      writes = true;
    }
    return writes ? WalkResult::interrupt() : WalkResult::advance();
  });
  return writes;
}

bool tessera::isWorkgroupMemRef(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(m);
}

bool tessera::reachesSharedMemory(Value v) {
  while (true) {
    if (isWorkgroupMemRef(v.getType()))
      return true;
    if (auto cast = v.getDefiningOp<memref::MemorySpaceCastOp>())
      v = cast.getSource();
    else if (auto sv = v.getDefiningOp<memref::SubViewOp>())
      v = sv.getSource();
    else if (auto sel = v.getDefiningOp<arith::SelectOp>())
      return reachesSharedMemory(sel.getTrueValue()) ||
             reachesSharedMemory(sel.getFalseValue());
    else
      return false;
  }
}

bool tessera::hasUnitInnerStride(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return t.getRank() > 0 && succeeded(t.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

int64_t tessera::fittingTile(int64_t extent, int64_t want, int64_t least) {
  for (int64_t t = want; t >= least; t /= 2)
    if (t > 0 && extent % t == 0)
      return t;
  return 0;
}

Value tessera::alignedAt(OpBuilder &b, Location l, Value m, int64_t bytes,
                         int64_t align) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, l, m);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, l, m);
  Value eb = arith::ConstantIndexOp::create(b, l, bytes);
  Value al = arith::ConstantIndexOp::create(b, l, align);
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  auto isMultiple = [&](Value byteCount) {
    Value r = arith::RemUIOp::create(b, l, byteCount, al);
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r, zero)
        .getResult();
  };
  Value first = arith::AddIOp::create(
      b, l, ptr, arith::MulIOp::create(b, l, meta.getOffset(), eb));
  Value ok = isMultiple(first);
  auto strides = meta.getStrides();
  for (size_t d = 0; d + 1 < strides.size(); ++d)
    ok = arith::AndIOp::create(
        b, l, ok, isMultiple(arith::MulIOp::create(b, l, strides[d], eb)));
  return ok;
}

/// Runs the programs of a scheduled kernel (see outlineKernel): the
/// program ids of linear program `t` in grouped order, for the grid of
/// programs the last three arguments give. With `persistent`, each block
/// loops over programs blockIdx.x, blockIdx.x + gridDim.x, ... (the loop
/// carries `tile.program_loop`); otherwise block x runs program x.
static void scheduleProgramsOf(gpu::GPUFuncOp kernel, bool persistent,
                               int64_t group, ArrayRef<Operation *> ids) {
  Block &body = kernel.getBody().front();
  Location l = kernel.getLoc();
  MLIRContext *ctx = kernel.getContext();
  Type i64 = IntegerType::get(ctx, 64);
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  Value grid[3];
  for (Value &g : grid)
    g = body.addArgument(i64, l);
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  auto idx = [&](Value v) {
    return arith::IndexCastOp::create(b, l, b.getIndexType(), v).getResult();
  };
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, l, v).getResult();
  };
  Value g0 = idx(grid[0]), g1 = idx(grid[1]), g2 = idx(grid[2]);
  Value plane = arith::MulIOp::create(b, l, g0, g1);
  Value t = gpu::BlockIdOp::create(b, l, gpu::Dimension::x);
  if (persistent) {
    Value total = arith::MulIOp::create(b, l, plane, g2);
    Value step = gpu::GridDimOp::create(b, l, gpu::Dimension::x);
    auto loop = scf::ForOp::create(b, l, t, total, step);
    loop->setAttr("tile.program_loop", UnitAttr::get(ctx));
    for (Operation *op : ops)
      op->moveBefore(loop.getBody()->getTerminator());
    t = loop.getInductionVar();
    b.setInsertionPointToStart(loop.getBody());
  }
  // Axis 2 outermost; within a plane, groups of `group` programs along
  // axis 0 (the last one smaller), each taken axis 0 fastest, then axis 1.
  // Without groups, the launch order: axis 0 fastest.
  Value pid[3];
  pid[2] = arith::DivUIOp::create(b, l, t, plane);
  Value r = arith::RemUIOp::create(b, l, t, plane);
  if (group > 0) {
    Value width = arith::MulIOp::create(b, l, c(group), g1);
    Value first = arith::MulIOp::create(
        b, l, arith::DivUIOp::create(b, l, r, width), c(group));
    Value size = arith::MinUIOp::create(
        b, l, arith::SubIOp::create(b, l, g0, first), c(group));
    Value within = arith::RemUIOp::create(b, l, r, width);
    pid[0] = arith::AddIOp::create(b, l, first,
                                   arith::RemUIOp::create(b, l, within, size));
    pid[1] = arith::DivUIOp::create(b, l, within, size);
  } else {
    pid[0] = arith::RemUIOp::create(b, l, r, g0);
    pid[1] = arith::DivUIOp::create(b, l, r, g0);
  }
  for (Operation *op : ids) {
    OpBuilder ob(op);
    Value v;
    if (auto p = dyn_cast<mlir::tessera::tile::ProgramIdOp>(op))
      v = arith::IndexCastOp::create(
          ob, op->getLoc(), op->getResult(0).getType(), pid[p.getAxis()]);
    else if (Value g =
                 grid[cast<mlir::tessera::tile::NumProgramsOp>(op).getAxis()];
             g.getType() == op->getResult(0).getType())
      v = g;
    else
      v = arith::IndexCastOp::create(ob, op->getLoc(),
                                     op->getResult(0).getType(), g);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }
}

FailureOr<int64_t> tessera::blockThreads(func::FuncOp f) {
  int64_t warps = tile::numWarps(f);
  int64_t threads = warps * 32;
  if (threads > 1024)
    return f.emitError() << "num_warps=" << warps << " gives " << threads
                         << " threads per block; the limit is 1024";
  return threads;
}

gpu::GPUFuncOp tessera::outlineKernel(ModuleOp module, func::FuncOp f,
                                      int64_t threads) {
  MLIRContext *ctx = module.getContext();
  OpBuilder mb(module.getBodyRegion());
  mb.setInsertionPointToEnd(module.getBody());
  auto gpuModule =
      gpu::GPUModuleOp::create(mb, f.getLoc(), (f.getName() + "_module").str());
  OpBuilder gb = OpBuilder::atBlockBegin(gpuModule.getBody());
  llvm::SetVector<StringRef> globals;
  f.walk([&](memref::GetGlobalOp g) { globals.insert(g.getName()); });
  for (StringRef name : globals)
    if (auto g = module.lookupSymbol<memref::GlobalOp>(name))
      gb.clone(*g);

  // A scheduled kernel (tile.persistent, tile.program_group) takes the
  // extents of its grid of programs after its arguments: the launch's own
  // grid is the blocks that run them.
  bool persistent = f->hasAttr("tile.persistent");
  int64_t group = 0;
  if (auto g = f->getAttrOfType<IntegerAttr>("tile.program_group"))
    group = g.getInt();
  bool scheduled = persistent || group > 0;
  if (scheduled && !llvm::hasSingleElement(f.getBody())) {
    f.emitError("a persistent or grouped program schedule needs structured "
                "control flow");
    return {};
  }
  FunctionType type = f.getFunctionType();
  Type i64 = IntegerType::get(ctx, 64);
  if (scheduled) {
    SmallVector<Type> inputs(type.getInputs());
    inputs.append(3, i64);
    type = FunctionType::get(ctx, inputs, type.getResults());
  }
  auto kernel = gpu::GPUFuncOp::create(gb, f.getLoc(), f.getName(), type);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  kernel.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {int32_t(threads), 1, 1}));
  for (StringRef a : {"tile.num_warps", "tile.num_stages", "tile.index32",
                      "tile.warp_specialize", "tile.pingpong"})
    if (Attribute v = f->getAttr(a))
      kernel->setAttr(a, v);

  // The launch keeps each grid axis within tile.grid_bound (index32).
  auto bound = f->getAttrOfType<DenseI64ArrayAttr>("tile.grid_bound");
  if (scheduled) {
    kernel->setAttr("tile.logical_grid", UnitAttr::get(ctx));
    for (StringRef a :
         {"tile.persistent", "tile.program_group", "tile.grid_bound"})
      if (Attribute v = f->getAttr(a))
        kernel->setAttr(a, v);
  }
  // The launch keeps each axis named in tile.grid_symbols below that shape
  // symbol's extent: the extent of the argument dimension that
  // tessera-unify-shape-dims kept for it, for tessera-fold-grid-bounds.
  auto gridSymbols = f->getAttrOfType<ArrayAttr>("tile.grid_symbols");
  if (gridSymbols && !scheduled) {
    SmallVector<ArrayAttr> symbols;
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      symbols.push_back(f.getArgAttrOfType<ArrayAttr>(i, "tile.dim_symbols"));
    SmallVector<int64_t> extents(6, -1);
    for (auto [axis, s] : llvm::enumerate(gridSymbols)) {
      auto name = dyn_cast<StringAttr>(s);
      if (axis >= 3 || !name || name.getValue().empty())
        continue;
      if (auto at = firstWithSymbol(symbols, name)) {
        extents[2 * axis] = at->first;
        extents[2 * axis + 1] = at->second;
      }
    }
    kernel->setAttr("tile.grid_extents", DenseI64ArrayAttr::get(ctx, extents));
  }

  // Move the body over (the new function's entry block is replaced).
  Region &dst = kernel.getBody();
  dst.getBlocks().clear();
  dst.getBlocks().splice(dst.end(), f.getBody().getBlocks());
  for (Block &b : dst)
    if (auto ret = dyn_cast<func::ReturnOp>(b.getTerminator())) {
      OpBuilder rb(ret);
      gpu::ReturnOp::create(rb, ret.getLoc());
      ret.erase();
    }
  f.erase();

  static const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                        gpu::Dimension::z};
  SmallVector<Operation *> ids;
  kernel.walk([&](Operation *op) {
    if (isa<tile::ProgramIdOp, tile::NumProgramsOp>(op))
      ids.push_back(op);
  });
  if (scheduled) {
    scheduleProgramsOf(kernel, persistent, group, ids);
    return kernel;
  }
  for (Operation *op : ids) {
    OpBuilder ob(op);
    Value v;
    int64_t axis = 0;
    if (auto p = dyn_cast<tile::ProgramIdOp>(op))
      axis = p.getAxis();
    else
      axis = cast<tile::NumProgramsOp>(op).getAxis();
    auto dim = gpu::DimensionAttr::get(ctx, dims[axis]);
    IntegerAttr upper;
    if (bound && axis < int64_t(bound.size()))
      upper = ob.getIndexAttr(bound[axis]);
    if (isa<tile::ProgramIdOp>(op))
      v = gpu::BlockIdOp::create(ob, op->getLoc(), dim, upper);
    else
      v = gpu::GridDimOp::create(ob, op->getLoc(), dim, upper);
    v = arith::IndexCastOp::create(ob, op->getLoc(), op->getResult(0).getType(),
                                   v);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }
  return kernel;
}

std::optional<std::pair<unsigned, int64_t>>
tessera::firstWithSymbol(ArrayRef<ArrayAttr> symbols, StringAttr symbol) {
  for (auto [i, dims] : llvm::enumerate(symbols))
    if (dims)
      for (auto [j, s] : llvm::enumerate(dims))
        if (s == symbol)
          return std::pair(unsigned(i), int64_t(j));
  return std::nullopt;
}

std::pair<unsigned, int64_t>
tessera::firstWithSymbol(ArrayRef<ArrayAttr> symbols, unsigned arg, int64_t d) {
  ArrayAttr own = arg < symbols.size() ? symbols[arg] : ArrayAttr();
  auto sym = own && d < int64_t(own.size()) ? dyn_cast<StringAttr>(own[d])
                                            : StringAttr();
  if (!sym || sym.getValue().empty())
    return {arg, d};
  return firstWithSymbol(symbols, sym).value_or(std::pair(arg, d));
}

Value tessera::byteAddress(OpBuilder &b, Location l, Value memref,
                           ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  // Aligned base + (offset + sum(i_d * stride_d)) * element size.
  auto meta = memref::ExtractStridedMetadataOp::create(b, l, memref);
  Value lin = meta.getOffset();
  for (auto [d, ix] : llvm::enumerate(indices))
    lin = arith::AddIOp::create(
        b, l, lin, arith::MulIOp::create(b, l, ix, meta.getStrides()[d]));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, l, memref);
  return arith::AddIOp::create(
      b, l, base,
      arith::MulIOp::create(b, l, lin,
                            arith::ConstantIndexOp::create(b, l, bytes)));
}

/// The kernel's `tile.grid_bound` on axis `axis` (kNoGridBound's value when
/// it has none).
static int64_t gridBoundOf(Operation *op, int64_t axis) {
  int64_t programs = (int64_t(1) << 31) - 1;
  auto f = op->getParentOfType<func::FuncOp>();
  auto bound =
      f ? f->getAttrOfType<DenseI64ArrayAttr>("tile.grid_bound") : nullptr;
  if (bound && axis < int64_t(bound.size()))
    programs = std::min(programs, bound[axis]);
  return programs;
}

/// The induction variable's loop, when `v` is one.
static scf::ForOp loopOf(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return {};
  auto loop = dyn_cast_or_null<scf::ForOp>(arg.getOwner()->getParentOp());
  return loop && loop.getInductionVar() == v ? loop : scf::ForOp();
}

std::optional<int64_t> tessera::index32Bound(Value v, unsigned depth) {
  constexpr int64_t kMax31 = (int64_t(1) << 31) - 1;
  if (depth > 8)
    return std::nullopt;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return i.getValue().getSignificantBits() <= 40
                 ? std::optional<int64_t>(std::abs(i.getValue().getSExtValue()))
                 : std::nullopt;
  // lb <= iv < ub (the step is positive).
  if (scf::ForOp loop = loopOf(v)) {
    auto lo = index32Bound(loop.getLowerBound(), depth + 1);
    auto hi = index32Bound(loop.getUpperBound(), depth + 1);
    if (lo && hi)
      return std::max(*lo, *hi);
    return std::nullopt;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<memref::DimOp>(def))
    return kMax31;
  if (auto p = dyn_cast<tile::ProgramIdOp>(def))
    return std::max<int64_t>(gridBoundOf(def, p.getAxis()) - 1, 0);
  if (auto n = dyn_cast<tile::NumProgramsOp>(def))
    return gridBoundOf(def, n.getAxis());
  if (auto id = dyn_cast<gpu::BlockIdOp>(def))
    return id.getUpperBound()
               ? std::max<int64_t>(id.getUpperBound()->getSExtValue() - 1, 0)
               : kMax31 - 1;
  if (auto n = dyn_cast<gpu::GridDimOp>(def))
    return n.getUpperBound() ? n.getUpperBound()->getSExtValue() : kMax31;
  if (isa<gpu::ThreadIdOp>(def))
    return 1023;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp>(def)) {
    // An unsigned extension of a negative value is not bounded by |value|;
    // a truncation keeps values that fit.
    Value in = def->getOperand(0);
    if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(def) &&
        !knownNonNegative(in, depth + 1))
      return std::nullopt;
    auto b = index32Bound(in, depth + 1);
    if (auto t = dyn_cast<arith::TruncIOp>(def)) {
      unsigned bits = getElementTypeOrSelf(t.getType()).getIntOrFloatBitWidth();
      if (b && (bits < 2 || (bits <= 63 && *b >= (int64_t(1) << (bits - 1)))))
        return std::nullopt;
    }
    return b;
  }
  // The minimum of non-negative values is below each of their bounds.
  if (isa<arith::MinSIOp, arith::MinUIOp>(def) &&
      knownNonNegative(def->getOperand(0), depth + 1) &&
      knownNonNegative(def->getOperand(1), depth + 1)) {
    auto x = index32Bound(def->getOperand(0), depth + 1);
    auto y = index32Bound(def->getOperand(1), depth + 1);
    if (x && y)
      return std::min(*x, *y);
    return x ? x : y;
  }
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
    auto x = index32Bound(def->getOperand(0), depth + 1);
    auto y = index32Bound(def->getOperand(1), depth + 1);
    int64_t r;
    if (!x || !y ||
        (isa<arith::MulIOp>(def) ? llvm::MulOverflow(*x, *y, r)
                                 : llvm::AddOverflow(*x, *y, r)))
      return std::nullopt;
    return r;
  }
  return std::nullopt;
}

bool tessera::knownNonNegative(Value v, unsigned depth) {
  if (depth > 8)
    return false;
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return !i.getValue().isNegative();
    if (auto d = dyn_cast<DenseIntElementsAttr>(c.getValue()))
      return llvm::none_of(d.getValues<APInt>(),
                           [](const APInt &x) { return x.isNegative(); });
    return false;
  }
  if (scf::ForOp loop = loopOf(v))
    return knownNonNegative(loop.getLowerBound(), depth + 1);
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<memref::DimOp, tile::ProgramIdOp, tile::NumProgramsOp, gpu::BlockIdOp,
          gpu::GridDimOp, gpu::ThreadIdOp>(def))
    return true;
  if (auto a = dyn_cast<tile::ArangeOp>(def))
    return a.getStartValue() >= 0;
  if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(def))
    return true;
  if (isa<tile::SplatOp, arith::IndexCastOp, arith::ExtSIOp>(def))
    return knownNonNegative(def->getOperand(0), depth + 1);
  if (isa<arith::MinSIOp, arith::MinUIOp, arith::MaxSIOp>(def))
    return knownNonNegative(def->getOperand(0), depth + 1) &&
           knownNonNegative(def->getOperand(1), depth + 1);
  // A truncation keeps non-negative values that fit in its type's sign.
  if (isa<arith::TruncIOp>(def)) {
    auto b = index32Bound(def->getOperand(0), depth + 1);
    unsigned bits = getElementTypeOrSelf(def->getResult(0).getType())
                        .getIntOrFloatBitWidth();
    return b && bits >= 2 && bits <= 63 && *b < (int64_t(1) << (bits - 1)) &&
           knownNonNegative(def->getOperand(0), depth + 1);
  }
  if (isa<arith::AddIOp, arith::MulIOp>(def)) {
    auto x = index32Bound(def->getOperand(0), depth + 1);
    auto y = index32Bound(def->getOperand(1), depth + 1);
    // The result stays below the sign bit of its type (index: 64 bits).
    Type t = getElementTypeOrSelf(def->getResult(0).getType());
    unsigned bits = t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
    int64_t r;
    return x && y &&
           !(isa<arith::MulIOp>(def) ? llvm::MulOverflow(*x, *y, r)
                                     : llvm::AddOverflow(*x, *y, r)) &&
           (bits >= 64 || r < (int64_t(1) << (bits - 1))) &&
           knownNonNegative(def->getOperand(0), depth + 1) &&
           knownNonNegative(def->getOperand(1), depth + 1);
  }
  return false;
}

Value mlir::tessera::callF32Intrinsic(OpBuilder &b, Location l, StringRef name,
                                      ValueRange operands) {
  auto call = [&](ValueRange xs) {
    return LLVM::CallIntrinsicOp::create(b, l, b.getF32Type(),
                                         b.getStringAttr(name), xs)
        .getResult(0);
  };
  auto vt = dyn_cast<VectorType>(operands.front().getType());
  if (!vt)
    return call(operands);
  auto flat = VectorType::get({vt.getNumElements()}, b.getF32Type());
  SmallVector<Value> flats;
  for (Value v : operands)
    flats.push_back(vector::ShapeCastOp::create(b, l, flat, v));
  SmallVector<Value> results;
  for (int64_t i = 0; i < vt.getNumElements(); ++i) {
    SmallVector<Value> elements;
    for (Value v : flats)
      elements.push_back(vector::ExtractOp::create(b, l, v, i));
    results.push_back(call(elements));
  }
  Value r = vector::FromElementsOp::create(b, l, flat, results);
  return vector::ShapeCastOp::create(b, l, vt, r);
}

std::optional<int64_t> mlir::tessera::simWgmmaConfig(NVVM::WGMMATypes in,
                                                     int64_t n, bool transA,
                                                     bool transB, bool scaleD,
                                                     bool registerA) {
  int64_t format;
  switch (in) {
  case NVVM::WGMMATypes::f16:
    format = 0;
    break;
  case NVVM::WGMMATypes::bf16:
    format = 1;
    break;
  case NVVM::WGMMATypes::e4m3:
    format = 2;
    break;
  case NVVM::WGMMATypes::e5m2:
    format = 3;
    break;
  case NVVM::WGMMATypes::tf32:
    // Bit 9 (N stays below 512): tf32, the format bits 0.
    if (registerA || transA || transB)
      return std::nullopt;
    return n | int64_t(1) << 9 | int64_t(scaleD) << 14;
  default:
    return std::nullopt;
  }
  return n | format << 10 | int64_t(transA) << 12 | int64_t(transB) << 13 |
         int64_t(scaleD) << 14 | int64_t(registerA) << 15;
}

int64_t mlir::tessera::consumerRegisters(int64_t consumerWarps) {
  int64_t consumers = consumerWarps * 32, threads = consumers + 128;
  // What ptxas allows each thread of the block at entry (.maxntid threads,
  // .minnctapersm 1), then the consumers' share of the block's pool.
  int64_t entry = std::min<int64_t>(255, 65536 / threads) / 8 * 8;
  int64_t share =
      (entry * threads - 128 * kProducerRegisters) / consumers / 8 * 8;
  return std::min<int64_t>(240, share);
}
