//===- PredicateGlobalAccesses.cpp - predicated accesses, not branches ----===//
//
// A run of a tile load or store is an `scf.if` on the run's bounds and
// mask around one access. Lowered as branches, LLVM sinks the whole
// computation of a stored value into its store's conditional block, and
// ptxas, which schedules block by block, issues every load that feeds the
// stores before the first of them, each holding its registers until then.
// This pass makes such a run one predicated PTX access (`@p ld.global.v4`,
// `@p st.global.v4`), as Triton's loads and stores are, so the code around
// it stays one straight-line block. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"
#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_PREDICATEGLOBALACCESSESPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

/// The bytes a load or store of `type` (a scalar or a 1-D fixed vector)
/// moves; 0 for other types.
int64_t bytesOf(Type type) {
  if (auto vt = dyn_cast<VectorType>(type))
    return vt.getRank() == 1 && !vt.isScalable() &&
                   vt.getElementType().isIntOrFloat()
               ? vt.getNumElements() * vt.getElementTypeBitWidth() / 8
               : 0;
  return type.isIntOrFloat() ? type.getIntOrFloatBitWidth() / 8 : 0;
}

/// Whether `op`, a load or store inside `ifOp`, can be one predicated PTX
/// global access: a plain (not nontemporal) access of 2, 4, 8 or 16 bytes,
/// aligned to its size (scalars naturally), of a 1-D unit-stride global
/// memref, with every operand from outside `ifOp`.
bool predicable(scf::IfOp ifOp, Operation *op) {
  Value base;
  Type type;
  std::optional<uint64_t> align;
  bool nontemporal = false;
  if (auto o = dyn_cast<vector::LoadOp>(op)) {
    base = o.getBase(), type = o.getVectorType(), align = o.getAlignment();
    nontemporal = o.getNontemporal();
  } else if (auto o = dyn_cast<vector::StoreOp>(op)) {
    base = o.getBase(), type = o.getVectorType(), align = o.getAlignment();
    nontemporal = o.getNontemporal();
  } else if (auto o = dyn_cast<memref::LoadOp>(op)) {
    base = o.getMemRef(), type = o.getType(), align = bytesOf(type);
    nontemporal = o.getNontemporal();
  } else if (auto o = dyn_cast<memref::StoreOp>(op)) {
    base = o.getMemRef(), type = o.getValueToStore().getType();
    align = bytesOf(type), nontemporal = o.getNontemporal();
  } else {
    return false;
  }
  auto mt = cast<MemRefType>(base.getType());
  int64_t bytes = bytesOf(type);
  if (nontemporal || mt.getRank() != 1 || mt.getMemorySpace() ||
      !mt.isLastDimUnitStride() ||
      (bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) ||
      int64_t(align.value_or(0)) < bytes)
    return false;
  return llvm::none_of(op->getOperands(), [&](Value v) {
    return ifOp->isAncestor(v.getParentRegion()->getParentOp());
  });
}

/// The store alone in `ifOp`'s then-block (no results, no else), when it
/// is `predicable`.
Operation *soleStore(scf::IfOp ifOp) {
  if (ifOp.getNumResults() || !ifOp.getElseRegion().empty())
    return nullptr;
  Block &then = ifOp.getThenRegion().front();
  Operation *st = &then.front();
  if (then.getOperations().size() != 2 || st->getNumResults() ||
      !predicable(ifOp, st))
    return nullptr;
  return st;
}

/// The load alone in `ifOp`'s then-block, yielded, when it is `predicable`
/// and the else-block yields a value from outside (or its broadcast): the
/// padded read of one run.
Operation *soleLoad(scf::IfOp ifOp, Value &other) {
  if (ifOp.getNumResults() != 1 || ifOp.getElseRegion().empty())
    return nullptr;
  Block &then = ifOp.getThenRegion().front();
  Block &els = ifOp.getElseRegion().front();
  Operation *ld = &then.front();
  if (then.getOperations().size() != 2 || ld->getNumResults() != 1 ||
      then.getTerminator()->getOperand(0) != ld->getResult(0))
    return nullptr;
  other = els.getTerminator()->getOperand(0);
  if (els.getOperations().size() == 2) {
    auto bc = dyn_cast<vector::BroadcastOp>(&els.front());
    if (!bc || bc.getResult() != other)
      return nullptr;
    other = bc.getSource();
  } else if (els.getOperations().size() != 1) {
    return nullptr;
  }
  if (ifOp->isAncestor(other.getParentRegion()->getParentOp()) ||
      !predicable(ifOp, ld))
    return nullptr;
  return ld;
}

/// The byte address of base[index] as an LLVM pointer (`byteAddress`) and
/// a constant displacement in
/// bytes to add to it: `index` = `i + c` (without signed wrap) gives the
/// address of base[i] and c * element size, which the access encodes
/// (`[%rd+2048]`) so that the runs of one tile share one address. i may be
/// negative where i + c is not, so an i32 index is widened as a signed
/// value.
std::pair<Value, int64_t> addressOf(OpBuilder &b, Location l, Value base,
                                    Value index) {
  int64_t elemBytes = std::max<int64_t>(
      1, cast<MemRefType>(base.getType()).getElementTypeBitWidth() / 8);
  int64_t displacement = 0;
  auto peel = [&](Value v) -> Value {
    auto add = v.getDefiningOp<arith::AddIOp>();
    if (!add || !bitEnumContainsAll(add.getOverflowFlags(),
                                    arith::IntegerOverflowFlags::nsw))
      return {};
    std::optional<int64_t> c = getConstantIntValue(add.getRhs());
    if (!c || *c <= 0 || *c >= (int64_t(1) << 20))
      return {};
    displacement = *c * elemBytes;
    return add.getLhs();
  };
  auto cast = index.getDefiningOp<arith::IndexCastUIOp>();
  if (cast && cast.getIn().getType().isInteger(32)) {
    // An executed access is in bounds, where the i32 index (31 bits under
    // tile.index32) is non-negative: widened as a signed value it matches
    // the widening of the runs whose displacement is peeled, so all runs
    // share one address.
    Value narrow = cast.getIn();
    if (Value rest = peel(narrow))
      narrow = rest;
    index = arith::IndexCastOp::create(b, l, b.getIndexType(), narrow);
  } else if (Value rest = peel(index)) {
    index = rest;
  }
  Value addr = tessera::byteAddress(b, l, base, index);
  Value ptr = LLVM::IntToPtrOp::create(
      b, l, LLVM::LLVMPointerType::get(b.getContext()),
      arith::IndexCastUIOp::create(b, l, b.getI64Type(), addr).getResult());
  return {ptr, displacement};
}

/// "[$n]" or "[$n+d]".
std::string addressOperand(int64_t n, int64_t displacement) {
  std::string s = "[$" + std::to_string(n);
  if (displacement)
    s += "+" + std::to_string(displacement);
  return s + "]";
}

/// How a value of `type` moves through PTX registers: `count` words of
/// 16 bits (2-byte values) or 32 bits.
struct Words {
  Type word;
  int64_t count;
  std::string bits, constraint;
};

Words wordsFor(OpBuilder &b, Type type) {
  int64_t bytes = bytesOf(type);
  if (bytes == 2)
    return {b.getI16Type(), 1, "b16", "h"};
  return {b.getI32Type(), bytes / 4, "b32", "r"};
}

/// `value` as its words.
SmallVector<Value> toWords(OpBuilder &b, Location l, Value value,
                           const Words &w) {
  auto wv = VectorType::get({w.count}, w.word);
  if (!isa<VectorType>(value.getType()))
    value = vector::BroadcastOp::create(
        b, l, VectorType::get({1}, value.getType()), value);
  Value asWords = vector::BitCastOp::create(b, l, wv, value);
  SmallVector<Value> out;
  for (int64_t i = 0; i < w.count; ++i)
    out.push_back(vector::ExtractOp::create(b, l, asWords, i));
  return out;
}

/// "{$a, $a+1, ...}" for `count` operands from `first`, or "$first".
std::string registerList(int64_t first, int64_t count) {
  SmallVector<std::string> regs;
  for (int64_t i = 0; i < count; ++i)
    regs.push_back("$" + std::to_string(first + i));
  return count == 1 ? regs[0] : "{" + llvm::join(regs, ", ") + "}";
}

std::string vectorSuffix(int64_t count) {
  return count == 1 ? "" : ".v" + std::to_string(count);
}

LLVM::InlineAsmOp inlinePtx(OpBuilder &b, Location l, TypeRange results,
                            ValueRange operands, StringRef text,
                            StringRef constraints) {
  // Side effects: LLVM keeps the accesses in order with the other memory
  // operations and barriers (ptxas still schedules them as it does any
  // global access).
  return LLVM::InlineAsmOp::create(
      b, l, results, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
}

void predicateStore(scf::IfOp ifOp, Operation *st) {
  OpBuilder b(ifOp);
  Location l = st->getLoc();
  Value value = st->getOperand(0);
  auto [ptr, displacement] =
      addressOf(b, l, st->getOperand(1), st->getOperand(2));
  Words w = wordsFor(b, value.getType());
  SmallVector<Value> operands{ifOp.getCondition(), ptr};
  llvm::append_range(operands, toWords(b, l, value, w));
  std::string text = "@$0 st.global" + vectorSuffix(w.count) + "." + w.bits +
                     " " + addressOperand(1, displacement) + ", " +
                     registerList(2, w.count) + ";";
  std::string constraints = "b,l";
  for (int64_t i = 0; i < w.count; ++i)
    constraints += "," + w.constraint;
  inlinePtx(b, l, TypeRange{}, operands, text, constraints);
  ifOp.erase();
}

void predicateLoad(scf::IfOp ifOp, Operation *ld, Value other) {
  OpBuilder b(ifOp);
  Location l = ld->getLoc();
  Type type = ld->getResult(0).getType();
  auto [ptr, displacement] =
      addressOf(b, l, ld->getOperand(0), ld->getOperand(1));
  Words w = wordsFor(b, type);
  // Outputs $0 .. $k-1 start as the padding, then the predicated load
  // overwrites them. Padding nobody reads (poison) is still zero: ptxas
  // allocates registers for a predicated load whose destinations have no
  // prior value far worse (see the whole-row layer norm on the scorecard).
  bool pad = true;
  if (other.getDefiningOp<LLVM::PoisonOp>() ||
      other.getDefiningOp<ub::PoisonOp>()) {
    Type et = getElementTypeOrSelf(other.getType());
    other = arith::ConstantOp::create(b, l, b.getZeroAttr(et));
  }
  SmallVector<Value> operands{ifOp.getCondition(), ptr};
  std::string text, constraints;
  for (int64_t i = 0; i < w.count; ++i)
    constraints += std::string(i ? "," : "") + "=" + w.constraint;
  constraints += ",b,l";
  if (pad) {
    if (isa<VectorType>(other.getType()) != isa<VectorType>(type))
      other = vector::BroadcastOp::create(b, l, type, other);
    llvm::append_range(operands, toWords(b, l, other, w));
    for (int64_t i = 0; i < w.count; ++i) {
      text += "mov." + w.bits + " $" + std::to_string(i) + ", $" +
              std::to_string(w.count + 2 + i) + ";\n\t";
      constraints += "," + w.constraint;
    }
  }
  text += "@$" + std::to_string(w.count) + " ld.global" +
          vectorSuffix(w.count) + "." + w.bits + " " +
          registerList(0, w.count) + ", " +
          addressOperand(w.count + 1, displacement) + ";";
  Type resultType =
      w.count == 1 ? w.word
                   : LLVM::LLVMStructType::getLiteral(
                         b.getContext(), SmallVector<Type>(w.count, w.word));
  Value r = inlinePtx(b, l, resultType, operands, text, constraints).getRes();
  SmallVector<Value> words;
  if (w.count == 1)
    words.push_back(r);
  else
    for (int64_t i = 0; i < w.count; ++i)
      words.push_back(LLVM::ExtractValueOp::create(b, l, r, i));
  Value asVector = vector::FromElementsOp::create(
      b, l, VectorType::get({w.count}, w.word), words);
  auto vt = dyn_cast<VectorType>(type);
  Value result = vector::BitCastOp::create(
      b, l, vt ? vt : VectorType::get({1}, type), asVector);
  if (!vt)
    result = vector::ExtractOp::create(b, l, result, 0);
  ifOp.getResult(0).replaceAllUsesWith(result);
  ifOp.erase();
}

struct PredicateGlobalAccessesPass
    : mlir::tessera::impl::PredicateGlobalAccessesPassBase<
          PredicateGlobalAccessesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::IfOp, Operation *>> stores;
    SmallVector<std::tuple<scf::IfOp, Operation *, Value>> loads;
    getOperation()->walk([&](gpu::GPUFuncOp f) {
      if (!f.isKernel())
        return;
      f.walk([&](scf::IfOp ifOp) {
        Value other;
        if (Operation *st = soleStore(ifOp))
          stores.push_back({ifOp, st});
        else if (Operation *ld = soleLoad(ifOp, other))
          loads.push_back({ifOp, ld, other});
      });
    });
    for (auto [ifOp, st] : stores)
      predicateStore(ifOp, st);
    for (auto [ifOp, ld, other] : loads)
      predicateLoad(ifOp, ld, other);
  }
};

} // namespace
