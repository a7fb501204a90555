//===- LinearizeGlobalAccesses.cpp - Linear offsets for global accesses ---===//
//
// A tile load or store becomes one `scf.if` per run of registers (the run's
// bounds and mask decide), each holding a multi-dimensional access of the
// tensor. Lowered as is, every run recomputes the whole address inside its
// conditional block, where nothing can share it. This pass gives each
// access of a global tensor a 1-D view and a linear element offset computed
// in front of the conditionals, so that the runs share the outer indices'
// arithmetic and differ by constants the back end folds into the address.
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_LINEARIZEGLOBALACCESSESPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// A kernel argument's 1-D view and its strides, made at kernel entry.
struct FlatView {
  Value view;
  /// Per dimension: the stride in the offset's type, or null for a static
  /// unit stride.
  SmallVector<Value> strides;
};

class Linearizer {
public:
  Linearizer(gpu::GPUFuncOp kernel)
      : kernel(kernel), index32(kernel->hasAttr("tile.index32")) {}

  void run() {
    SmallVector<Operation *> accesses;
    SmallVector<nvgpu::DeviceAsyncCopyOp> copies;
    kernel.walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp, vector::LoadOp, vector::StoreOp>(
              op))
        if (viewFor(op->getOperand(memrefOperand(op))))
          accesses.push_back(op);
      if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
        if (viewFor(copy.getSrc()))
          copies.push_back(copy);
    });
    for (Operation *op : accesses)
      rewrite(op);
    for (nvgpu::DeviceAsyncCopyOp copy : copies)
      rewrite(copy);
  }

private:
  /// Where the memref operand of a load or store is: its indices follow.
  static unsigned memrefOperand(Operation *op) {
    return isa<memref::StoreOp, vector::StoreOp>(op) ? 1 : 0;
  }

  /// The view of a kernel argument in global memory with a strided layout,
  /// or null for other memrefs.
  const FlatView *viewFor(Value memref) {
    auto arg = dyn_cast<BlockArgument>(memref);
    if (!arg || arg.getOwner() != &kernel.getBody().front())
      return nullptr;
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type || type.getRank() == 0 || type.getMemorySpace())
      return nullptr;
    SmallVector<int64_t> staticStrides;
    int64_t staticOffset;
    if (failed(type.getStridesAndOffset(staticStrides, staticOffset)))
      return nullptr;
    auto it = views.find(memref);
    if (it != views.end())
      return &it->second;

    OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
    Location l = kernel.getLoc();
    auto meta = memref::ExtractStridedMetadataOp::create(b, l, memref);
    FlatView v;
    // The view's size is metadata only: the span of the tensor's elements.
    Value one = arith::ConstantIndexOp::create(b, l, 1);
    Value span = one;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      Value last = arith::SubIOp::create(b, l, meta.getSizes()[d], one);
      span = arith::AddIOp::create(
          b, l, span, arith::MulIOp::create(b, l, last, meta.getStrides()[d]));
      if (staticStrides[d] == 1) {
        v.strides.push_back(Value());
        continue;
      }
      Value s = meta.getStrides()[d];
      if (index32)
        s = arith::IndexCastOp::create(b, l, b.getI32Type(), s);
      v.strides.push_back(s);
    }
    span = arith::MaxSIOp::create(b, l, span, one);
    bool dynamicOffset = ShapedType::isDynamic(staticOffset);
    auto flatType = MemRefType::get(
        {ShapedType::kDynamic}, type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), staticOffset, {1}));
    if (!dynamicOffset && staticOffset == 0)
      flatType = MemRefType::get({ShapedType::kDynamic}, type.getElementType());
    OpFoldResult offset = dynamicOffset
                              ? OpFoldResult(meta.getOffset())
                              : OpFoldResult(b.getIndexAttr(staticOffset));
    v.view = memref::ReinterpretCastOp::create(
        b, l, flatType, memref, offset, SmallVector<OpFoldResult>{span},
        SmallVector<OpFoldResult>{b.getIndexAttr(1)});
    return &views.try_emplace(memref, std::move(v)).first->second;
  }

  /// The outermost operation around `op`, up through `scf.if`s only, in
  /// front of which every value in `operands` is defined.
  static Operation *hoistPoint(Operation *op, ValueRange operands) {
    Operation *at = op;
    while (auto ifOp = dyn_cast_or_null<scf::IfOp>(at->getParentOp())) {
      bool inside = llvm::any_of(operands, [&](Value v) {
        return ifOp->isAncestor(v.getParentRegion()->getParentOp());
      });
      if (inside)
        break;
      at = ifOp;
    }
    return at;
  }

  /// `i` in the offset's type: the i32 an index came from when it did.
  Value asOffset(OpBuilder &b, Location l, Value i) {
    if (!index32)
      return i;
    if (auto c = i.getDefiningOp<arith::IndexCastUIOp>())
      if (c.getIn().getType().isInteger(32))
        return c.getIn();
    if (auto c = i.getDefiningOp<arith::IndexCastOp>())
      if (c.getIn().getType().isInteger(32))
        return c.getIn();
    return arith::IndexCastOp::create(b, l, b.getI32Type(), i);
  }

  void rewrite(Operation *op) {
    unsigned at = memrefOperand(op);
    const FlatView &v = *viewFor(op->getOperand(at));
    SmallVector<Value> indices(op->getOperands().drop_front(at + 1));
    OpBuilder b(hoistPoint(op, indices));
    Value lin = linearOffset(b, op->getLoc(), v, indices);
    if (index32)
      lin =
          arith::IndexCastUIOp::create(b, op->getLoc(), b.getIndexType(), lin);
    // In place: the accesses keep their attributes (alignment, ...).
    op->setOperands(at, indices.size() + 1, {v.view, lin});
  }

  /// A cp.async from a global tensor reads the view at the linear offset.
  /// A copy that may fall outside the tensor comes with every index
  /// selected to 0 and a source size of 0 under one condition (it then
  /// fills zeros and reads nothing): the offset of the unselected indices
  /// is selected to 0 under that condition instead, once.
  void rewrite(nvgpu::DeviceAsyncCopyOp copy) {
    const FlatView &v = *viewFor(copy.getSrc());
    SmallVector<Value> indices(copy.getSrcIndices());
    OpBuilder b(copy);
    Location l = copy.getLoc();
    Value cond;
    SmallVector<Value> chosen;
    for (Value i : indices) {
      auto sel = i.getDefiningOp<arith::SelectOp>();
      std::optional<int64_t> zero =
          sel ? getConstantIntValue(sel.getFalseValue()) : std::nullopt;
      if (!sel || !zero || *zero != 0 || (cond && sel.getCondition() != cond))
        break;
      cond = sel.getCondition();
      chosen.push_back(sel.getTrueValue());
    }
    bool clamped = cond && chosen.size() == indices.size();
    Value lin = linearOffset(b, l, v, clamped ? chosen : indices);
    if (clamped) {
      Value zero = index32
                       ? arith::ConstantIntOp::create(b, l, b.getI32Type(), 0)
                             .getResult()
                       : arith::ConstantIndexOp::create(b, l, 0).getResult();
      lin = arith::SelectOp::create(b, l, cond, lin, zero);
    }
    if (index32)
      lin = arith::IndexCastUIOp::create(b, l, b.getIndexType(), lin);
    copy.getSrcMutable().assign(v.view);
    copy.getSrcIndicesMutable().assign(ValueRange{lin});
  }

  /// sum(indices[d] * stride_d) in the offset's type, in front of `b`'s
  /// insertion point.
  Value linearOffset(OpBuilder &b, Location l, const FlatView &v,
                     ArrayRef<Value> indices) {
    // The indices of an in-bounds access are non-negative and its offset
    // fits the offset type (31 bits under tile.index32, whose launches have
    // non-negative strides): no wrap, signed or unsigned. An access out of
    // bounds is not executed, so its offset may wrap.
    auto noWrap =
        arith::IntegerOverflowFlags::nsw | arith::IntegerOverflowFlags::nuw;
    // Outer dimensions first and the innermost index last, so that the runs
    // of one tile share everything but their last term.
    // A constant displacement c >= 0 of a unit-stride index i + c is added
    // last, where the back end folds it into the address. i alone may be
    // negative (a tile that starts before the tensor), so from there on
    // the sums are only known not to wrap as signed values.
    Value lin;
    std::optional<int64_t> displacement;
    auto flags = noWrap;
    for (auto [d, i] : llvm::enumerate(indices)) {
      Value term = asOffset(b, l, i);
      if (!v.strides[d] && !displacement)
        if (auto add = term.getDefiningOp<arith::AddIOp>())
          if (auto c = getConstantIntValue(add.getRhs());
              c && *c > 0 && *c < (int64_t(1) << 20)) {
            displacement = *c;
            term = add.getLhs();
            flags = arith::IntegerOverflowFlags::nsw;
          }
      if (v.strides[d])
        term = arith::MulIOp::create(b, l, term, v.strides[d], noWrap);
      lin = lin ? arith::AddIOp::create(b, l, lin, term, flags).getResult()
                : term;
    }
    if (displacement) {
      Value c =
          index32
              ? arith::ConstantIntOp::create(b, l, b.getI32Type(),
                                             *displacement)
                    .getResult()
              : arith::ConstantIndexOp::create(b, l, *displacement).getResult();
      lin = arith::AddIOp::create(b, l, lin, c, flags);
    }
    return lin;
  }

  gpu::GPUFuncOp kernel;
  bool index32;
  llvm::DenseMap<Value, FlatView> views;
};

struct LinearizeGlobalAccessesPass
    : mlir::tessera::impl::LinearizeGlobalAccessesPassBase<
          LinearizeGlobalAccessesPass> {
  void runOnOperation() override {
    getOperation()->walk([](gpu::GPUFuncOp f) {
      if (f.isKernel())
        Linearizer(f).run();
    });
  }
};

} // namespace
