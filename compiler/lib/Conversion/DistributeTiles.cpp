//===- DistributeTiles.cpp - Tiles in registers on GPU threads ------------===//
//
// The register lowering: every tile carries a distributed layout
// (tessera-assign-layouts) and becomes, in each thread, a vector of the
// elements its layout gives that thread. See the pass description in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "ConversionUtils.h"

#include "tessera/Dialect/Tile/IR/Layouts.h"
#include "tessera/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <deque>
#include <map>
#include <numeric>
#include <optional>

namespace mlir::tessera {
#define GEN_PASS_DEF_DISTRIBUTETILESPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

/// Loop metadata that keeps LLVM and ptxas from unrolling a loop.
LLVM::LoopAnnotationAttr noUnroll(MLIRContext *ctx) {
  auto unroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/BoolAttr::get(ctx, true), /*count=*/{},
      /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
      /*followupRemainder=*/{}, /*followupAll=*/{});
  return LLVM::LoopAnnotationAttr::get(
      ctx, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{}, unroll,
      /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{}, /*pipeline=*/{},
      /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
      /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
      /*parallelAccesses=*/{});
}

/// The workgroup (shared-memory) address space.
gpu::AddressSpaceAttr workgroupSpace(MLIRContext *ctx) {
  return gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
}

/// The f16 image of an fp8 tile (tessera-widen-float8-dots puts one after
/// each fp8 dot operand's load): staged in shared memory in place of its
/// source.
arith::ExtFOp widening(Operation *op) {
  auto e = dyn_cast<arith::ExtFOp>(op);
  if (!e || !isFloat8(getElementTypeOrSelf(e.getIn().getType())) ||
      !getElementTypeOrSelf(e.getType()).isF16())
    return {};
  return e;
}

/// Whether `ld` loads an fp8 block staged as its f16 image: every use
/// widens it. (The fp8 blocks of sm_90a's k32 products are staged as
/// they are.)
bool widenedBlock(LoadOp ld) {
  return isFloat8(ld.getType().getElementType()) &&
         !ld.getResult().use_empty() &&
         llvm::all_of(ld.getResult().getUsers(),
                      [](Operation *u) { return widening(u); });
}

/// Whether `ld` loads an f32 [K, N] block that dots read as their B operand
/// as stored (N innermost): wgmma reads tf32 operands K-major only, so the
/// block goes through registers and is stored transposed, [N, K].
bool transposedBlock(LoadOp ld) {
  if (!ld.getType().getElementType().isF32() || ld.getType().getRank() != 2 ||
      ld.getResult().use_empty())
    return false;
  return llvm::all_of(ld.getResult().getUsers(), [](Operation *u) {
    auto c = dyn_cast<ConvertLayoutOp>(u);
    auto layout =
        c ? dyn_cast<DotOperandLayoutAttr>(getLayout(c.getType())) : nullptr;
    return layout && layout.getOpIdx() == 1;
  });
}

/// The innermost loop around `op`, null for an op outside every loop. The
/// loop of a persistent kernel over its programs (`tile.program_loop`)
/// does not count: its body is what a block of another kernel runs once.
Operation *enclosingLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<scf::ForOp, scf::WhileOp>(p) && !p->hasAttr("tile.program_loop"))
      return p;
  return nullptr;
}

/// The loop of a persistent kernel over its programs around `op`, if any.
Operation *programLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->hasAttr("tile.program_loop"))
      return p;
  return nullptr;
}

bool touchesTensors(Operation *op) {
  auto isT = [](Type t) { return isa<RankedTensorType>(t); };
  bool any = llvm::any_of(op->getOperandTypes(), isT) ||
             llvm::any_of(op->getResultTypes(), isT);
  if (any)
    return true;
  return op
      ->walk([&](Operation *n) {
        if (n != op && (llvm::any_of(n->getOperandTypes(), isT) ||
                        llvm::any_of(n->getResultTypes(), isT)))
          return WalkResult::interrupt();
        for (Region &r : n->getRegions())
          for (Block &b : r)
            for (BlockArgument a : b.getArguments())
              if (isT(a.getType()))
                return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// wgmma.mma_async m64nNk16 (f32 += f16/bf16 x f16/bf16) with A from
/// registers: NVVM's op reads A only through a shared-memory descriptor, so
/// the instruction is inline PTX here. `words`: this thread's 4 words of
/// A; `descB`: B's matrix descriptor; `acc`: the N/2 f32 accumulators (a
/// struct), tied to the results; `scaleD` false: D = A B, the
/// accumulators ignored. The op carries `tile.wgmma`, the
/// instruction packed as the sim's tessera_sim_wgmma reads it
/// (simWgmmaConfig), for the sim lowering.
Value registerWgmma(OpBuilder &b, Location l, Type accType, Value acc,
                    ArrayRef<Value> words, Value descB, int64_t n, bool bf16,
                    bool transB, bool scaleD) {
  int64_t fields = n / 2;
  std::string in = bf16 ? "bf16" : "f16";
  std::string text = std::string("{\n.reg .pred p;\nsetp.ne.b32 p, ") +
                     (scaleD ? "1" : "0") +
                     ", 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + in + "." + in + " {";
  std::string constraints;
  for (int64_t f = 0; f < fields; ++f) {
    text += (f ? ", $" : "$") + std::to_string(f);
    constraints += "=f,";
  }
  text += "}, {";
  for (int64_t w = 0; w < 4; ++w)
    text += (w ? ", $" : "$") + std::to_string(fields + w);
  text += "}, $" + std::to_string(fields + 4) + ", p, 1, 1, " +
          (transB ? "1" : "0") + ";\n}";
  constraints += "r,r,r,r,l";
  SmallVector<Value> operands(words);
  operands.push_back(descB);
  for (int64_t f = 0; f < fields; ++f) {
    operands.push_back(LLVM::ExtractValueOp::create(b, l, acc, f));
    constraints += "," + std::to_string(f);
  }
  auto op = LLVM::InlineAsmOp::create(
      b, l, accType, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  op->setAttr("tile.wgmma",
              b.getI64IntegerAttr(*tessera::simWgmmaConfig(
                  bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16, n,
                  /*transA=*/false, transB, scaleD, /*registerA=*/true)));
  return op.getResult(0);
}

/// Cap of the divisibility analyses (a multiple of every run width).
constexpr int64_t kMaxDivisor = int64_t(1) << 20;

/// Largest power of two dividing `x` (0: every one, capped).
int64_t pow2Divisor(int64_t x) {
  if (x == 0)
    return kMaxDivisor;
  x = x < 0 ? -x : x;
  return std::min<int64_t>(kMaxDivisor, x & -x);
}

/// Largest power of two dividing the value of the scalar `v` (capped), from
/// how it is computed: constants, products, sums, minima and maxima, and
/// loop counters.
/// `dimDivisibility`, when given, answers for `memref.dim` (the innermost
/// extent of a 16-byte aligned tensor is a multiple of 16 bytes).
int64_t divisibility(
    Value v, unsigned depth = 0,
    llvm::function_ref<int64_t(memref::DimOp)> dimDivisibility = nullptr) {
  if (depth > 12)
    return 1;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return pow2Divisor(i.getInt());
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
      if (arg == loop.getInductionVar())
        return std::min(
            divisibility(loop.getLowerBound(), depth + 1, dimDivisibility),
            divisibility(loop.getStep(), depth + 1, dimDivisibility));
  Operation *def = v.getDefiningOp();
  if (!def)
    return 1;
  auto operand = [&](unsigned i) {
    return divisibility(def->getOperand(i), depth + 1, dimDivisibility);
  };
  if (auto dim = dyn_cast<memref::DimOp>(def))
    return dimDivisibility ? std::min(kMaxDivisor, dimDivisibility(dim)) : 1;
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(
          def))
    return operand(0); // (truncation keeps the low bits)
  if (isa<arith::MulIOp>(def))
    return std::min(kMaxDivisor, operand(0) * operand(1));
  if (isa<arith::AddIOp, arith::SubIOp, arith::MinSIOp, arith::MinUIOp,
          arith::MaxSIOp, arith::MaxUIOp>(def))
    return std::min(operand(0), operand(1));
  return 1;
}

/// Identity of a reduction in the working type.
Value identity(OpBuilder &b, Location l, ReduceKind kind, Type t) {
  if (auto ft = dyn_cast<FloatType>(t)) {
    if (kind == ReduceKind::sum)
      return arith::ConstantOp::create(b, l, b.getFloatAttr(t, 0.0));
    return arith::ConstantOp::create(
        b, l,
        b.getFloatAttr(t, llvm::APFloat::getInf(ft.getFloatSemantics(),
                                                kind == ReduceKind::max)));
  }
  unsigned w = t.getIntOrFloatBitWidth();
  llvm::APInt v = kind == ReduceKind::sum   ? llvm::APInt(w, 0)
                  : kind == ReduceKind::max ? llvm::APInt::getSignedMinValue(w)
                                            : llvm::APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, l, b.getIntegerAttr(t, v));
}

Value combine(OpBuilder &b, Location l, ReduceKind kind, Value x, Value y) {
  bool fp = isa<FloatType>(getElementTypeOrSelf(x.getType()));
  switch (kind) {
  case ReduceKind::sum:
    return fp ? arith::AddFOp::create(b, l, x, y).getResult()
              : arith::AddIOp::create(b, l, x, y).getResult();
  case ReduceKind::max:
    return fp ? arith::MaximumFOp::create(b, l, x, y).getResult()
              : arith::MaxSIOp::create(b, l, x, y).getResult();
  case ReduceKind::min:
    return fp ? arith::MinimumFOp::create(b, l, x, y).getResult()
              : arith::MinSIOp::create(b, l, x, y).getResult();
  }
  return {};
}

/// The 32-bit type a reduction crosses lanes in.
Type workType(Type t) {
  Builder b(t.getContext());
  if (isa<FloatType>(t))
    return t.getIntOrFloatBitWidth() <= 32 ? b.getF32Type() : Type();
  return t.getIntOrFloatBitWidth() <= 32 ? b.getI32Type() : Type();
}

Value widen(OpBuilder &b, Location l, Value v, Type to) {
  Type t = v.getType();
  if (t == to)
    return v;
  if (isa<FloatType>(t))
    return arith::ExtFOp::create(b, l, to, v);
  if (t.isInteger(1))
    return arith::ExtUIOp::create(b, l, to, v);
  return arith::ExtSIOp::create(b, l, to, v);
}

Value narrow(OpBuilder &b, Location l, Value v, Type to) {
  if (v.getType() == to)
    return v;
  if (isa<FloatType>(to))
    return arith::TruncFOp::create(b, l, to, v);
  return arith::TruncIOp::create(b, l, to, v);
}

Value cIndex(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

/// Per-thread coordinates of a layout: the base of each tile dimension and
/// whether this thread only repeats another thread's elements.
struct ThreadBase {
  SmallVector<Value> base; // index, per tile dimension
  Value duplicate;         // i1, or null when no dimension is replicated
};

/// The register holding each element offset (`getRegisterOffsets`
/// inverted).
std::map<SmallVector<int64_t>, int64_t>
registerOf(ArrayRef<SmallVector<int64_t>> offsets) {
  std::map<SmallVector<int64_t>, int64_t> index;
  for (auto [i, o] : llvm::enumerate(offsets))
    index[o] = i;
  return index;
}

/// How dimension `axis` of a blocked or mma layout is spread over a tile of
/// `shape`: for mma, lanes l % 4 (columns) or l / 4 (rows) and warps
/// w % wn or w / wn, two elements per thread per instruction tile.
DimSpread axisSpread(Attribute layout, ArrayRef<int64_t> shape, unsigned axis) {
  if (auto b = dyn_cast<BlockedLayoutAttr>(layout))
    return getDimSpreads(b, shape)[axis];
  ArrayRef<int64_t> w = cast<MmaLayoutAttr>(layout).getWarpsPerCTA();
  DimSpread s;
  s.size = shape[axis];
  s.perThread = 2;
  if (axis == 1) {
    s.lanes = 4;
    s.laneStride = 1;
    s.warps = w[1];
    s.warpStride = 1;
  } else {
    s.lanes = 8;
    s.laneStride = 4;
    s.warps = w[0];
    s.warpStride = w[1];
  }
  return s;
}

/// A dot operand tile held in shared memory instead of registers: a
/// `rows` x `cols` block (cols contiguous) at element `base` of `buffer`,
/// its 16-byte chunks XOR-swizzled so that ldmatrix reads and cp.async
/// writes hit distinct banks. `transposed`: the tile value is the
/// transpose of the stored block. For warpgroup products the block is
/// stored as `cols / atomCols` atoms of `rows` x `atomCols`, one after the
/// other, each swizzled on its own (the hardware's swizzle atoms); 0: one
/// atom (the ldmatrix layout).
struct Staged {
  Value buffer; // workgroup memref<N x T, 3>
  Value base;   // index
  int64_t rows = 0, cols = 0;
  bool transposed = false;
  int64_t atomCols = 0;
  int64_t atom() const { return atomCols ? atomCols : cols; }
  /// Bytes per element.
  int64_t bytes() const {
    return cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8;
  }
};

/// The XOR swizzle of a shared block with `cols` elements of `bytes` bytes
/// per row: chunk `c` (16 bytes) of row `r` goes to chunk
/// `c ^ ((r / perPhase) % maxPhase)`, so that any 8 consecutive rows at one
/// chunk cover 8 distinct 16-byte bank groups.
struct Swizzle {
  int64_t cols, chunkElems, perPhase = 1, maxPhase = 1;
  explicit Swizzle(int64_t cols, int64_t bytes = 2)
      : cols(cols), chunkElems(16 / bytes) {
    int64_t rowBytes = cols * bytes;
    perPhase = std::max<int64_t>(1, 128 / rowBytes);
    maxPhase = 8 / perPhase;
  }
  /// The phase of row `row` (index); rows 8 apart share it.
  Value phase(OpBuilder &b, Location l, Value row) const {
    return arith::RemUIOp::create(
        b, l,
        arith::DivUIOp::create(b, l, row,
                               arith::ConstantIndexOp::create(b, l, perPhase)),
        arith::ConstantIndexOp::create(b, l, maxPhase));
  }
  /// The element offset of chunk `chunk` of row `row` (both index).
  Value offset(OpBuilder &b, Location l, Value row, Value chunk) const {
    Value swz = arith::XOrIOp::create(b, l, chunk, phase(b, l, row));
    return arith::AddIOp::create(
        b, l,
        arith::MulIOp::create(b, l, row,
                              arith::ConstantIndexOp::create(b, l, cols)),
        arith::MulIOp::create(
            b, l, swz, arith::ConstantIndexOp::create(b, l, chunkElems)));
  }
  /// The element offset of chunk `chunk` of row `row` in a block of `rows`
  /// rows and `blockCols` columns staged in atoms of this swizzle's
  /// columns, each rows x cols and swizzled on its own.
  Value blockOffset(OpBuilder &b, Location l, int64_t rows, int64_t blockCols,
                    Value row, Value chunk) const {
    if (blockCols == cols)
      return offset(b, l, row, chunk);
    Value perAtom = arith::ConstantIndexOp::create(b, l, cols / chunkElems);
    Value atom = arith::DivUIOp::create(b, l, chunk, perAtom);
    Value within = arith::RemUIOp::create(b, l, chunk, perAtom);
    return arith::AddIOp::create(
        b, l,
        arith::MulIOp::create(
            b, l, atom, arith::ConstantIndexOp::create(b, l, rows * cols)),
        offset(b, l, row, within));
  }
};

class KernelLowering {
public:
  /// `aligned[i]`: what the launch guarantees about argument i's
  /// alignment (`tile.aligned`), if anything.
  KernelLowering(gpu::GPUFuncOp kernel, int64_t warps, int64_t vectorCap,
                 int64_t maxTileRegisters,
                 SmallVector<std::optional<bool>> aligned, bool index32,
                 int64_t stages, bool warpgroupMma, bool tensorCopies)
      : kernel(kernel), warps(warps), vectorCap(vectorCap),
        maxTileRegisters(maxTileRegisters), aligned(std::move(aligned)),
        index32(index32), ring(stages - 1), warpgroupMma(warpgroupMma),
        tensorCopies(warpgroupMma && tensorCopies) {}

  LogicalResult run();

private:
  gpu::GPUFuncOp kernel;
  int64_t warps, vectorCap, maxTileRegisters;
  SmallVector<std::optional<bool>> aligned;
  /// Indices and bounds in 32 bits (`tile.index32`).
  bool index32;
  /// Shared-memory slots of the copy pipeline of a loop over dot operands:
  /// num_stages - 1, as Triton counts on sm_80 (the stage being computed
  /// is the oldest slot); with fewer than two, copies are not pipelined.
  int64_t ring;
  /// Dots may lower to wgmma (sm_90a).
  bool warpgroupMma;
  /// Pipelined wgmma operands may be copied by TMA.
  bool tensorCopies;
  /// Warp specialisation (`tile.warp_specialize`): the TMA rings are fed by
  /// a producer warpgroup after the `warps` consumer warps, which release
  /// each slot on an mbarrier of its own once they are done reading it;
  /// tessera-warp-specialize splits the kernel along the ops marked
  /// `tile.producer`. Its copies are issued by the producer's first
  /// thread (`producerLeader`).
  bool specialise = false, fedRings = false;
  Value producerLeader;
  /// Whether the producer warpgroup alone can compute where `op` copies
  /// from: its offsets and the bounds of the loops around it read no
  /// memory.
  bool producerComputable(LoadOp op);
  /// A tensor map the kernel receives as an added argument: the argument
  /// whose tensor it maps, the box (in the tensor's dimension order) and
  /// the swizzle span in bytes.
  struct TensorMap {
    unsigned source;
    SmallVector<int64_t> box;
    int64_t swizzle;
    Value descriptor; // !nvgpu.tensormap.descriptor, at the entry
  };
  SmallVector<TensorMap> tensorMaps;
  /// The tensor map of `op`'s block (its source is kernel argument `src`),
  /// added on first use.
  Value tensorMapFor(LoadOp op, BlockArgument src);
  /// Whether the pipelined copy of `op` goes through TMA: a wgmma operand
  /// from a kernel argument whose alignment allows vector copies, with a
  /// box TMA can describe; its source argument in `src`.
  bool tensorCopy(LoadOp op, IRMapping &map, BlockArgument &src);
  /// The part of tensorCopy() known before lowering: the operand, its
  /// tensor's alignment and strides, the box.
  bool tensorCopyShape(LoadOp op);
  /// Whether `op` is copied through a TMA ring: a block tensorCopyShape()
  /// allows, pipelined by the outermost loop around it.
  bool inTensorRing(LoadOp op) {
    auto f = dyn_cast_or_null<scf::ForOp>(enclosingLoop(op));
    SmallVector<Operation *> slice;
    return f && !enclosingLoop(f) && ring >= 2 && tensorCopyShape(op) &&
           pipelineable(op, f, slice);
  }
  /// Dots lowered to wgmma, and the atom width (columns) of the staged
  /// loads that feed them.
  DenseSet<Operation *> wgmmaDots;
  DenseMap<Operation *, int64_t> atomColumns;
  /// wgmma dots of pipelined loops whose products stay in flight across
  /// an iteration (wgmma.wait_group 1).
  DenseSet<Operation *> asyncDots;
  /// Per staged buffer and descriptor fields, its matrix descriptor.
  DenseMap<std::pair<Value, uint64_t>, Value> bufferDescriptor;
  std::optional<bool> alignmentOf(Value memref) const {
    if (auto a = dyn_cast<BlockArgument>(memref);
        a && a.getArgNumber() < aligned.size())
      return aligned[a.getArgNumber()];
    return std::nullopt;
  }
  Value tid, lane, warp, arena;
  OpBuilder *entry = nullptr; // builds at the kernel entry (after the ids)
  Block *entryBlock = nullptr;
  /// Per (layout, shape), this thread's base coordinates. The deque keeps
  /// every ThreadBase in place, so references stay valid as more are made.
  DenseMap<std::pair<Attribute, Attribute>, ThreadBase *> bases;
  std::deque<ThreadBase> baseStore;
  /// The next free byte of the arena, and the most it has reached.
  int64_t sharedBytes = 0, sharedPeak = 0;
  /// The fence and barrier after a pipelined loop that runs once per
  /// kernel, whose buffers (below `limit`) the code after it reuses: kept
  /// when a later buffer overlaps them, erased otherwise.
  struct Reuse {
    SmallVector<Operation *> ops;
    int64_t limit;
  };
  SmallVector<Reuse> pendingReuse;
  /// Erases the fences and barriers no later buffer needed.
  void dropPendingReuse() {
    for (Reuse &r : pendingReuse)
      for (Operation *op : r.ops)
        op->erase();
    pendingReuse.clear();
  }
  bool vectorOK = false;
  /// Per global tensor (kernel argument), the widest vector access, in the
  /// order the body first accesses the tensors (the entry's alignment test
  /// follows it: the same source gives the same PTX).
  llvm::MapVector<Value, int64_t> widest;
  /// Per kernel argument, its `tile.dim_symbols` (null for scalars).
  SmallVector<ArrayAttr> dimSymbols;
  /// Loads of dot operands that go to shared memory (cp.async), and the
  /// source tiles that live there while a body is lowered.
  DenseSet<Operation *> stagedLoads;
  /// The staged f32 blocks stored transposed for wgmma (transposedBlock).
  DenseSet<Operation *> transposedLoads;
  DenseMap<Value, Staged> staged;
  /// Per-thread values computed once at the kernel entry, by key.
  std::map<std::string, Value> entryValues;
  /// Loop-invariant dot operands are read into registers once (they fit).
  bool hoistFragments = true;

public:
  void setDimSymbols(SmallVector<ArrayAttr> symbols) {
    dimSymbols = std::move(symbols);
  }

private:
  bool paddingUnobservable(LoadOp op);
  /// The extent of dimension `d` of `memref`: of a kernel argument, the
  /// extent of the first dimension of any argument with the same shape
  /// symbol (the launch checks they agree), so that the bounds of tensors
  /// of one shape are one value.
  Value extentOf(OpBuilder &b, Location l, Value memref, int64_t d);
  bool stageable(LoadOp op);
  /// A workgroup-memory buffer of `elements` elements in the kernel's
  /// dynamic shared memory, `align` bytes aligned in it.
  Value sharedBuffer(OpBuilder &b, Location l, int64_t elements, Type t,
                     int64_t align = 16);
  /// The staged load a dot operand comes from (through reshapes,
  /// transpositions and its operand conversion), if any.
  LoadOp stagedSource(Value operand);
  /// The dots that read the block `op` stages.
  SmallVector<DotOp> dotsReading(LoadOp op);
  /// Whether `d` lowers to wgmma: 16-bit operands, B staged and A staged
  /// or in registers, or fp8 or tf32 operands both staged with K innermost
  /// (a tf32 B stored [K, N] is staged transposed); every warp along M.
  /// Records the atom width of its staged operands' blocks.
  bool planWgmma(DotOp d);
  LogicalResult lowerWgmmaDot(DotOp op, OpBuilder &b, IRMapping &map);
  /// The offset of staged block `st` in its buffer, in 16-byte units
  /// (i64); null when it starts the buffer.
  Value blockUnits(OpBuilder &b, Location l, const Staged &st);
  /// The matrix descriptor of a staged wgmma operand `offset` 16-byte units
  /// (i64) into its block, with the block's strides and swizzle mode.
  Value descriptor(OpBuilder &b, Location l, const Staged &st, Value offset,
                   int64_t lbo, int64_t sbo);
  /// Makes this thread's generic-proxy writes to shared memory (copies)
  /// visible to the tensor cores' async proxy, when wgmma reads them.
  Operation *fenceForWgmma(OpBuilder &b, Location l, bool any) {
    if (!any)
      return nullptr;
    return NVVM::FenceProxyOp::create(
        b, l, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  /// Copies the block `op` loads (its offsets in `map`) into the shared
  /// block at `base` of `buffer`: cp.async of 16-byte chunks, zero-filled
  /// outside the tensor (`async`; `pred`, when given, false: the whole
  /// block is), or element by element.
  void copyToShared(OpBuilder &b, LoadOp op, IRMapping &map, Value buffer,
                    Value base, bool async, Value pred = Value());
  bool useAsyncCopy(LoadOp op) const {
    return vectorOK && alignmentOf(op.getSource()) != false &&
           tessera::hasUnitInnerStride(
               cast<MemRefType>(op.getSource().getType()));
  }
  LogicalResult lowerStagedLoad(LoadOp op, OpBuilder &b, IRMapping &map);
  /// Stores `regs`, a tile of type `t` (f16 elements, in `t`'s layout),
  /// into the staged block `buffer` in atoms of `atom` swizzled columns.
  void storeStaged(OpBuilder &b, Location l, RankedTensorType t, Value regs,
                   Value buffer, int64_t atom);
  /// Stores `regs`, a [K, N] tile of type `t` (f32 elements, in `t`'s
  /// layout), transposed into the staged [N, K] block `buffer`, in atoms of
  /// `atom` swizzled columns along K: an element per store.
  void storeTransposed(OpBuilder &b, Location l, RankedTensorType t, Value regs,
                       Value buffer, int64_t atom);
  /// fp8 tiles loaded into registers whose widening and stores to their
  /// staged blocks (or f32 tiles whose transposed stores, transposedBlock)
  /// wait until an operation reads shared memory: the loads of consecutive
  /// operands are all in flight before one barrier.
  struct PendingStage {
    RankedTensorType type;
    Value regs, buffer;
    int64_t atom;
    bool inLoop, wgmma;
    /// An f32 block stored transposed (transposedBlock), not widened.
    bool transpose = false;
  };
  SmallVector<PendingStage> pendingStages;
  /// Whether lowering `op` leaves the pending stores pending: it reads no
  /// staged block (scalar code, another widened load, views).
  bool keepsPendingStages(Operation *op);
  /// Barrier (in a loop: the previous iteration's reads), the pending
  /// stores, fence and barrier.
  void flushPendingStages(OpBuilder &b, Location l);
  LogicalResult lowerPipelinedLoop(scf::ForOp loop, ArrayRef<LoadOp> loads,
                                   OpBuilder &b, IRMapping &map);
  /// Whether `loop` can copy `op`'s block ahead: not a widened fp8 block
  /// (widened in registers at its own iteration), and its offsets, in `loop`'s
  /// body, depend only on the induction variable and values from outside
  /// the loop (`slice`: the body's operations that compute them, in
  /// order).
  bool pipelineable(LoadOp op, scf::ForOp loop,
                    SmallVector<Operation *> &slice);
  LogicalResult lowerDot(DotOp op, OpBuilder &b, IRMapping &map);
  /// Stores of tiles above this many bits per thread computed from loads
  /// are lowered `kFuseBatchRegisters` registers at a time (loads,
  /// arithmetic, stores), so that the loaded tile and the stored one are
  /// never live in full together.
  static constexpr int64_t kFuseAboveBits = 64 * 32;
  static constexpr int64_t kFuseBatchRegisters = 32;
  /// Registers of a tensor-core kernel beyond its tiles, fragments and
  /// copy addresses (indices, bounds, loop state), for the estimate that
  /// refuses configurations which would spill.
  static constexpr int64_t kRegisterOverhead = 40;
  /// More beside the f16 image of an fp8 block when the target may widen
  /// by integer arithmetic (every target without wgmma).
  static constexpr int64_t kSoftWideningRegisters = 12;
  /// More for a wgmma kernel with 64-bit indices, and more again when an
  /// element-by-element body stands beside the vector one.
  static constexpr int64_t kWideIndexRegisters = 24;
  static constexpr int64_t kScalarCopyRegisters = 16;
  /// More for an mma.sync kernel that loops over its programs (persistent):
  /// its tensors' bases, strides and extents, and the loop's state, stay
  /// live across the programs (calibrated against ptxas on sm_80, where
  /// the library's 240-word configurations spill by up to 31 words; its
  /// wgmma configurations do not).
  static constexpr int64_t kPersistentRegisters = 16;
  /// The suspend-time hint of each mbarrier try-wait, in ns (the wait
  /// loops until the phase completes).
  static constexpr int64_t kMbarrierWaitTicks = 10000000;
  bool fusibleStore(StoreOp st, SmallVector<Operation *> &ops);
  LogicalResult lowerFusedStore(StoreOp st, ArrayRef<Operation *> ops,
                                OpBuilder &b, IRMapping &map);
  /// The fragments of one K step of a staged operand, one per repetition
  /// along M (vector<4x2>) or N (vector<2x2>).
  SmallVector<Value> stagedFragments(OpBuilder &b, Location l, const Staged &st,
                                     unsigned opIdx, MmaLayoutAttr mma,
                                     int64_t reps, int64_t kStep);
  /// ldmatrix of the 8x8 blocks of one fragment group of a staged operand.
  Value loadFragments(OpBuilder &b, Location l, const Staged &st,
                      unsigned opIdx, MmaLayoutAttr mma, int64_t rep,
                      int64_t kStep, int64_t tiles);

  Type convert(Type t) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt)
      return t;
    if (rt.getRank() == 0)
      return rt.getElementType();
    return VectorType::get({getNumRegisters(getLayout(rt), rt.getShape())},
                           rt.getElementType());
  }

  const ThreadBase &baseFor(Attribute layout, ArrayRef<int64_t> shape);
  /// This thread's lane and warp index along one dimension of a layout.
  Value laneIndex(OpBuilder &b, Location l, const DimSpread &s);
  Value warpIndex(OpBuilder &b, Location l, const DimSpread &s);
  /// The first element this thread holds along the dimension, before a
  /// tile smaller than the layout wraps it around.
  Value firstElement(OpBuilder &b, Location l, const DimSpread &s);
  int64_t accessWidth(RankedTensorType tile, Value memref, Value lastOffset);
  void planAccesses(Block &body);
  Value sharedView(OpBuilder &b, Location l, int64_t elements, Type t);

  LogicalResult lowerBlock(Block &src, OpBuilder &b, IRMapping &map);
  LogicalResult lowerOp(Operation *op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerLoad(LoadOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerStore(StoreOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerGather(GatherOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerScatter(ScatterOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerReduce(ReduceOp op, OpBuilder &b, IRMapping &map);
  LogicalResult lowerConvert(ConvertLayoutOp op, OpBuilder &b, IRMapping &map);
  /// A conversion between two layouts whose threads hold runs of
  /// consecutive elements along the last dimension, through shared memory:
  /// one vector access per run, a padded row pitch, in rounds of blocks of
  /// rows and columns.
  struct RunConversion {
    int64_t srcRun, dstRun, pitch, chunkRows, chunkCols;
    /// Each register's element offset, and the first register of each run.
    SmallVector<SmallVector<int64_t>> srcOffs, dstOffs;
    SmallVector<int64_t> srcStarts, dstStarts;
  };
  /// The plan of `op` as such a conversion, if it is one (no IR but the
  /// threads' bases).
  std::optional<RunConversion> planRunConversion(ConvertLayoutOp op);
  /// Emits `plan`; `sink` takes each run read back (its first register and
  /// the run), in place of the converted value when given.
  void
  convertByRuns(ConvertLayoutOp op, const RunConversion &plan, OpBuilder &b,
                IRMapping &map,
                function_ref<void(OpBuilder &, int64_t, Value)> sink = nullptr);
  Value arange(ArangeOp op, OpBuilder &b);
  /// An integer comparison whose result is constant over runs of c > 1
  /// registers (`maskConstancy`): one comparison per run, spread over the
  /// run; null when no such runs exist.
  Value runConstantCompare(arith::CmpIOp cmp, OpBuilder &b, IRMapping &map);
  /// A block access's offsets and the tensor's extents, in 32 bits under
  /// `tile.index32` (with `fits`: the offsets did fit), index otherwise.
  struct BlockAccess {
    SmallVector<Value> offsets, extents;
    Value fits;
  };
  /// A block load or store, prepared for emission one run of `w`
  /// consecutive registers at a time.
  struct RunAccess {
    const ThreadBase *tb = nullptr;
    SmallVector<SmallVector<int64_t>> offs;
    Value memref, other, mask, owner;
    BlockAccess access;
    Type et;
    int64_t bytes = 1, w = 1;
    /// The mask is the same for every element of a run: one predicated
    /// vector access, no element-by-element fallback.
    bool uniformMask = false;
  };
  /// Largest power of two c such that the i1 tile `mask` has one value on
  /// every run of c elements of its innermost dimension that starts at a
  /// multiple of c (Triton's "constancy"), from how it is computed:
  /// `arange + s < n` with s and n multiples of c, and combinations.
  int64_t maskConstancy(Value mask, unsigned depth = 0);
  /// For a tile whose elements along the innermost dimension are `i + s`
  /// (i the index there, s the same for the whole run), the divisibility of
  /// s; nullopt for other tiles.
  std::optional<int64_t> innermostRamp(Value v, unsigned depth);
  /// For a tile with one value along its innermost dimension, the
  /// divisibility of that value (integers); nullopt otherwise.
  std::optional<int64_t> innermostUniform(Value v, unsigned depth);
  /// `divisibility` with what the launch guarantees about tensor extents.
  int64_t divisibilityOf(Value scalar) {
    return divisibility(scalar, 0, [&](memref::DimOp dim) -> int64_t {
      auto mt = dyn_cast<MemRefType>(dim.getSource().getType());
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!mt || !index || *index != mt.getRank() - 1 ||
          alignmentOf(dim.getSource()) != true ||
          !tessera::hasUnitInnerStride(mt))
        return 1;
      int64_t bits = mt.getElementTypeBitWidth();
      return bits >= 8 && bits % 8 == 0 && 16 % (bits / 8) == 0
                 ? 16 / (bits / 8)
                 : 1;
    });
  }
  /// What loads and stores share: layout, registers, access width, mask
  /// and the block's offsets and extents (operands of the source IR).
  RunAccess planAccess(OpBuilder &b, Location l, RankedTensorType t,
                       Value memref, ValueRange offsets, Value mask,
                       IRMapping &map);
  RunAccess planLoad(LoadOp op, OpBuilder &b, IRMapping &map);
  RunAccess planStore(StoreOp op, OpBuilder &b, IRMapping &map);
  /// Registers r .. r + w - 1 (a scalar when w is 1).
  Value loadRun(OpBuilder &b, Location l, const RunAccess &a, int64_t r);
  void storeRun(OpBuilder &b, Location l, const RunAccess &a, int64_t r,
                Value part);
  BlockAccess prepare(OpBuilder &b, Location l, Value memref,
                      ArrayRef<Value> offsets);
  /// Element indices (index) of a register at `regOffset` from the thread's
  /// base, and in `cond` whether it lies in the tensor.
  SmallVector<Value> indicesAt(OpBuilder &b, Location l, const BlockAccess &a,
                               const ThreadBase &base,
                               ArrayRef<int64_t> regOffset, Value &cond);
  /// The element indices of register `r` of a gather or scatter (from its
  /// index tiles), and in `cond` whether they lie in `memref` and `mask`
  /// (if any) keeps the element.
  SmallVector<Value> elementIndices(OpBuilder &b, Location l, Value memref,
                                    ValueRange indices, Value mask,
                                    IRMapping &map, int64_t r, Value &cond);
  bool needsLeadingBarrier(Operation *site);
};

const ThreadBase &KernelLowering::baseFor(Attribute layout,
                                          ArrayRef<int64_t> shape) {
  auto key = std::make_pair(
      layout, Attribute(DenseI64ArrayAttr::get(layout.getContext(), shape)));
  if (auto it = bases.find(key); it != bases.end())
    return *it->second;
  auto remember = [&](ThreadBase tb) -> const ThreadBase & {
    baseStore.push_back(std::move(tb));
    return *(bases[key] = &baseStore.back());
  };
  OpBuilder &b = *entry;
  Location l = kernel.getLoc();
  MmaLayoutAttr mma = getMmaParent(layout);
  auto dotOp = dyn_cast<DotOperandLayoutAttr>(layout);
  if (dotOp)
    mma = dotOp.getParent();
  auto mmaSlice = dyn_cast<SliceLayoutAttr>(layout);
  if (mma && !dotOp && !mmaSlice && shape.size() > 2) {
    // Leading unit dimensions: base 0.
    ThreadBase tb = baseFor(layout, shape.take_back(2));
    tb.base.insert(tb.base.begin(), shape.size() - 2, cIndex(b, l, 0));
    return remember(std::move(tb));
  }
  if (mma) {
    // Lane l sits at row l / 4 and column pair l % 4 of an instruction
    // tile; warp w at row w / wn, column w % wn of the warp grid.
    ArrayRef<int64_t> w = mma.getWarpsPerCTA();
    Value wm = arith::DivUIOp::create(b, l, warp, cIndex(b, l, w[1]));
    Value wn = arith::RemUIOp::create(b, l, warp, cIndex(b, l, w[1]));
    Value g = arith::DivUIOp::create(b, l, lane, cIndex(b, l, 4));
    Value t2 = arith::MulIOp::create(
        b, l, arith::RemUIOp::create(b, l, lane, cIndex(b, l, 4)),
        cIndex(b, l, 2));
    auto plus = [&](Value warpIdx, int64_t scale, Value laneVal) {
      return arith::AddIOp::create(
                 b, l,
                 arith::MulIOp::create(b, l, warpIdx, cIndex(b, l, scale)),
                 laneVal)
          .getResult();
    };
    ThreadBase tb;
    auto notFirst = [&](Value idx, int64_t count) -> Value {
      if (count == 1)
        return {};
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, idx,
                                   cIndex(b, l, 0));
    };
    if (!dotOp) {
      tb.base = {plus(wm, 16, g), plus(wn, 8, t2)};
      // A collapsed (unit) or sliced dimension: the threads past its first
      // position repeat the others' elements.
      SmallVector<int64_t> full(shape);
      if (mmaSlice)
        full.insert(full.begin() + mmaSlice.getDim(), 1);
      for (unsigned d = 0; d < 2; ++d) {
        if (full[d] != 1)
          continue;
        Value dup = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                          tb.base[d], cIndex(b, l, 0));
        tb.duplicate =
            tb.duplicate ? arith::OrIOp::create(b, l, tb.duplicate, dup) : dup;
        tb.base[d] = cIndex(b, l, 0);
      }
      if (mmaSlice)
        tb.base.erase(tb.base.begin() + mmaSlice.getDim());
    } else if (dotOp.getOpIdx() == 0) {
      // The warps of one grid row hold the same left operand.
      tb.base = {plus(wm, 16, g), t2};
      tb.duplicate = notFirst(wn, w[1]);
    } else {
      tb.base = {t2, plus(wn, 8, g)};
      tb.duplicate = notFirst(wm, w[0]);
    }
    return remember(std::move(tb));
  }
  BlockedLayoutAttr parent = getBlockedParent(layout);
  SmallVector<int64_t> pshape(shape);
  auto slice = dyn_cast<SliceLayoutAttr>(layout);
  if (slice)
    pshape.insert(pshape.begin() + slice.getDim(), 1);
  ThreadBase tb;
  for (auto [d, s] : llvm::enumerate(getDimSpreads(parent, pshape))) {
    if (slice && d == slice.getDim())
      continue;
    Value raw = firstElement(b, l, s);
    if (s.replicated()) {
      Value dup = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, raw,
                                        cIndex(b, l, s.size));
      tb.duplicate =
          tb.duplicate ? arith::OrIOp::create(b, l, tb.duplicate, dup) : dup;
      raw = arith::RemUIOp::create(b, l, raw, cIndex(b, l, s.size));
    }
    tb.base.push_back(raw);
  }
  return remember(std::move(tb));
}

Value KernelLowering::extentOf(OpBuilder &b, Location l, Value memref,
                               int64_t d) {
  auto arg = dyn_cast<BlockArgument>(memref);
  Block &entry = kernel.getBody().front();
  if (!arg || arg.getOwner() != &entry)
    return memref::DimOp::create(b, l, memref, d);
  auto [i, j] = tessera::firstWithSymbol(dimSymbols, arg.getArgNumber(), d);
  return memref::DimOp::create(b, l, entry.getArgument(i), j);
}

KernelLowering::BlockAccess KernelLowering::prepare(OpBuilder &b, Location l,
                                                    Value memref,
                                                    ArrayRef<Value> offsets) {
  BlockAccess a;
  Type i32 = b.getI32Type();
  for (auto [d, off] : llvm::enumerate(offsets)) {
    Value dim = extentOf(b, l, memref, d);
    if (!index32) {
      a.offsets.push_back(
          arith::IndexCastOp::create(b, l, b.getIndexType(), off));
      a.extents.push_back(dim);
      continue;
    }
    // The launch guarantees 31-bit extents; an offset outside 32 bits
    // addresses nothing in the tensor. Offsets known to fit need no test.
    Value o = arith::TruncIOp::create(b, l, i32, off);
    if (std::optional<int64_t> bound = tessera::index32Bound(off);
        bound && *bound <= std::numeric_limits<int32_t>::max()) {
      a.offsets.push_back(o);
      a.extents.push_back(arith::IndexCastOp::create(b, l, i32, dim));
      continue;
    }
    Value back = arith::ExtSIOp::create(b, l, off.getType(), o);
    Value fits =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, back, off);
    a.fits =
        a.fits ? arith::AndIOp::create(b, l, a.fits, fits).getResult() : fits;
    a.offsets.push_back(o);
    a.extents.push_back(arith::IndexCastOp::create(b, l, i32, dim));
  }
  return a;
}

Value KernelLowering::laneIndex(OpBuilder &b, Location l, const DimSpread &s) {
  return arith::RemUIOp::create(
      b, l, arith::DivUIOp::create(b, l, lane, cIndex(b, l, s.laneStride)),
      cIndex(b, l, s.lanes));
}

Value KernelLowering::warpIndex(OpBuilder &b, Location l, const DimSpread &s) {
  return arith::RemUIOp::create(
      b, l, arith::DivUIOp::create(b, l, warp, cIndex(b, l, s.warpStride)),
      cIndex(b, l, s.warps));
}

Value KernelLowering::firstElement(OpBuilder &b, Location l,
                                   const DimSpread &s) {
  Value thread = arith::AddIOp::create(
      b, l,
      arith::MulIOp::create(b, l, warpIndex(b, l, s), cIndex(b, l, s.lanes)),
      laneIndex(b, l, s));
  return arith::MulIOp::create(b, l, thread, cIndex(b, l, s.perThread));
}

SmallVector<Value> KernelLowering::indicesAt(OpBuilder &b, Location l,
                                             const BlockAccess &a,
                                             const ThreadBase &base,
                                             ArrayRef<int64_t> regOffset,
                                             Value &cond) {
  SmallVector<Value> idx;
  cond = a.fits;
  for (size_t d = 0; d < a.offsets.size(); ++d) {
    Value t = base.base[d];
    Value c;
    if (index32) {
      t = arith::IndexCastOp::create(b, l, b.getI32Type(), t);
      c = arith::ConstantIntOp::create(b, l, b.getI32Type(), regOffset[d]);
    } else {
      c = cIndex(b, l, regOffset[d]);
    }
    Value i = arith::AddIOp::create(b, l, a.offsets[d], t);
    if (regOffset[d])
      i = arith::AddIOp::create(b, l, i, c);
    // Unsigned: a negative index is out of bounds too.
    Value in =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, i, a.extents[d]);
    cond = cond ? arith::AndIOp::create(b, l, cond, in).getResult() : in;
    idx.push_back(index32
                      ? arith::IndexCastUIOp::create(b, l, b.getIndexType(), i)
                            .getResult()
                      : i);
  }
  if (!cond)
    cond = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
  return idx;
}

SmallVector<Value> KernelLowering::elementIndices(OpBuilder &b, Location l,
                                                  Value memref,
                                                  ValueRange indices,
                                                  Value mask, IRMapping &map,
                                                  int64_t r, Value &cond) {
  SmallVector<Value> idx;
  cond = {};
  for (auto [d, i] : llvm::enumerate(indices)) {
    Value x = arith::IndexCastOp::create(
        b, l, b.getIndexType(),
        vector::ExtractOp::create(b, l, map.lookup(i), r));
    // Unsigned: a negative index is out of bounds too.
    Value in = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, x,
                                     memref::DimOp::create(b, l, memref, d));
    cond = cond ? arith::AndIOp::create(b, l, cond, in).getResult() : in;
    idx.push_back(x);
  }
  if (!cond)
    cond = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
  if (mask)
    cond = arith::AndIOp::create(
        b, l, cond, vector::ExtractOp::create(b, l, map.lookup(mask), r));
  return idx;
}

/// The number of consecutive elements one access of `tile` to `memref`
/// moves: a vector of up to 16 bytes along the unit-stride innermost
/// dimension when the layout gives a thread consecutive elements there, the
/// offset keeps them aligned; 1 otherwise. (A masked run is one vector
/// access when its mask is all true, element accesses otherwise.)
int64_t KernelLowering::accessWidth(RankedTensorType tile, Value memref,
                                    Value lastOffset) {
  Attribute layout = getLayout(tile);
  unsigned last = tile.getRank() - 1;
  auto mt = cast<MemRefType>(memref.getType());
  int64_t contiguous = getContiguousDim(layout);
  if (isa<MmaLayoutAttr>(layout))
    contiguous += tile.getRank() - 2; // after leading unit dimensions
  if (isa<SliceLayoutAttr>(layout) || contiguous != int64_t(last) ||
      tile.getShape()[last] == 1 || !tessera::hasUnitInnerStride(mt) ||
      alignmentOf(memref) == false)
    return 1;
  int64_t bits = tile.getElementTypeBitWidth();
  if (bits < 8 || bits % 8 != 0)
    return 1;
  int64_t w = std::min<int64_t>(
      {getContiguousRegisters(layout, tile.getShape()), 16 / (bits / 8),
       vectorCap, divisibilityOf(lastOffset)});
  int64_t p = 1;
  while (p * 2 <= w)
    p *= 2;
  return p;
}

void KernelLowering::planAccesses(Block &body) {
  body.walk([&](Operation *op) {
    if (auto ld = dyn_cast<LoadOp>(op); ld && stagedLoads.contains(op)) {
      // 16-byte cp.async chunks from unit-stride rows.
      int64_t w = alignmentOf(ld.getSource()) == false ||
                          !tessera::hasUnitInnerStride(
                              cast<MemRefType>(ld.getSource().getType()))
                      ? 1
                      : 128 / ld.getType().getElementTypeBitWidth();
      widest[ld.getSource()] = std::max(widest[ld.getSource()], w);
    } else if (auto ld = dyn_cast<LoadOp>(op)) {
      int64_t w =
          accessWidth(ld.getType(), ld.getSource(), ld.getOffsets().back());
      widest[ld.getSource()] = std::max(widest[ld.getSource()], w);
    } else if (auto st = dyn_cast<StoreOp>(op)) {
      int64_t w = accessWidth(cast<RankedTensorType>(st.getValue().getType()),
                              st.getDest(), st.getOffsets().back());
      widest[st.getDest()] = std::max(widest[st.getDest()], w);
    }
  });
}

Value KernelLowering::sharedView(OpBuilder &b, Location l, int64_t elements,
                                 Type t) {
  Value view = sharedBuffer(b, l, elements, t);
  return memref::MemorySpaceCastOp::create(
      *entry, l, MemRefType::get({elements}, t), view);
}

Value KernelLowering::sharedBuffer(OpBuilder &b, Location l, int64_t elements,
                                   Type t, int64_t align) {
  MLIRContext *ctx = b.getContext();
  int64_t bytes = std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
  int64_t offset = (sharedBytes + align - 1) / align * align;
  sharedBytes = offset + elements * bytes;
  sharedPeak = std::max(sharedPeak, sharedBytes);
  llvm::erase_if(pendingReuse,
                 [&](const Reuse &r) { return offset < r.limit; });
  auto wg = workgroupSpace(ctx);
  if (!arena)
    arena = gpu::DynamicSharedMemoryOp::create(
        *entry, l,
        MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8),
                        MemRefLayoutAttrInterface(), wg));
  return memref::ViewOp::create(
      *entry, l,
      MemRefType::get({elements}, t, MemRefLayoutAttrInterface(), wg), arena,
      cIndex(*entry, l, offset), ValueRange{});
}

/// A cross-warp exchange reuses its shared buffer on the next iteration of
/// an enclosing loop; unless another exchange in the same loop body (whose
/// barrier every thread passes after its read) separates the two, the
/// write waits for a barrier.
bool KernelLowering::needsLeadingBarrier(Operation *site) {
  Operation *parent = site->getParentOp();
  // A persistent kernel's programs start after a barrier.
  if (!enclosingLoop(site))
    return false;
  if (!isa<scf::ForOp>(parent))
    return true;
  int64_t others = 0;
  for (Operation &op : site->getBlock()->getOperations()) {
    if (&op == site)
      continue;
    if (isa<ConvertLayoutOp>(op))
      ++others;
    if (auto r = dyn_cast<ReduceOp>(op)) {
      auto t = r.getSource().getType();
      Attribute lay = getLayout(t);
      if (isa_and_nonnull<BlockedLayoutAttr, MmaLayoutAttr>(lay) &&
          axisSpread(lay, t.getShape(), r.getAxis()).warps > 1)
        ++others;
    }
  }
  return others == 0;
}

/// The source of a shape op that keeps every element's innermost index
/// (a reshape or broadcast with the same innermost extent, a layout
/// conversion), or null.
static Value sameInnermostSource(Operation *def) {
  if (!def)
    return Value();
  if (auto c = dyn_cast<ConvertLayoutOp>(def))
    return c.getSource();
  if (!isa<ReshapeOp, BroadcastOp>(def))
    return Value();
  auto from = cast<RankedTensorType>(def->getOperand(0).getType());
  auto to = cast<RankedTensorType>(def->getResult(0).getType());
  if (from.getRank() == 0 || to.getRank() == 0 ||
      from.getShape().back() != to.getShape().back())
    return Value();
  if (isa<BroadcastOp>(def) && from.getRank() != to.getRank())
    return Value();
  return def->getOperand(0);
}

std::optional<int64_t> KernelLowering::innermostUniform(Value v,
                                                        unsigned depth) {
  if (depth > 12)
    return std::nullopt;
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.getElementType().isSignlessInteger())
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto splat = dyn_cast<SplatOp>(def))
    return divisibilityOf(splat.getScalar());
  DenseIntElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return pow2Divisor(dense.getSplatValue<APInt>().getSExtValue());
  if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(def))
    return innermostUniform(def->getOperand(0), depth + 1);
  if (Value src = sameInnermostSource(def))
    return innermostUniform(src, depth + 1);
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
    auto x = innermostUniform(def->getOperand(0), depth + 1);
    auto y = innermostUniform(def->getOperand(1), depth + 1);
    if (!x || !y)
      return std::nullopt;
    return isa<arith::MulIOp>(def) ? std::min(kMaxDivisor, *x * *y)
                                   : std::min(*x, *y);
  }
  return std::nullopt;
}

std::optional<int64_t> KernelLowering::innermostRamp(Value v, unsigned depth) {
  if (depth > 12)
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto ar = dyn_cast<ArangeOp>(def))
    return pow2Divisor(ar.getStart());
  if (isa<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(def))
    return innermostRamp(def->getOperand(0), depth + 1);
  if (Value src = sameInnermostSource(def))
    return innermostRamp(src, depth + 1);
  if (isa<arith::AddIOp, arith::SubIOp>(def)) {
    // ramp + uniform, uniform + ramp, ramp - uniform.
    for (unsigned i = 0; i < 2; ++i) {
      if (i == 1 && isa<arith::SubIOp>(def))
        break;
      auto ramp = innermostRamp(def->getOperand(i), depth + 1);
      auto uniform = innermostUniform(def->getOperand(1 - i), depth + 1);
      if (ramp && uniform)
        return std::min(*ramp, *uniform);
    }
  }
  return std::nullopt;
}

int64_t KernelLowering::maskConstancy(Value mask, unsigned depth) {
  constexpr int64_t kMax = kMaxDivisor;
  if (depth > 12)
    return 1;
  Operation *def = mask.getDefiningOp();
  if (!def)
    return 1;
  if (isa<SplatOp>(def) || matchPattern(mask, m_Constant()))
    return kMax;
  if (auto bc = dyn_cast<BroadcastOp>(def)) {
    auto from = cast<RankedTensorType>(bc.getSource().getType());
    if (from.getRank() > 0 && from.getShape().back() == 1)
      return kMax; // one value along the innermost dimension
  }
  if (Value src = sameInnermostSource(def))
    return maskConstancy(src, depth + 1);
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(def))
    return std::min(maskConstancy(def->getOperand(0), depth + 1),
                    maskConstancy(def->getOperand(1), depth + 1));
  if (auto cmp = dyn_cast<arith::CmpIOp>(def)) {
    Value x = cmp.getLhs(), y = cmp.getRhs();
    auto ux = innermostUniform(x, depth + 1);
    auto uy = innermostUniform(y, depth + 1);
    if (ux && uy)
      return kMax;
    using P = arith::CmpIPredicate;
    P p = cmp.getPredicate();
    // `ramp < n` and `ramp >= n` change value only where the ramp reaches n:
    // a multiple of c when both the ramp's start and n are.
    if (uy && (p == P::slt || p == P::sge || p == P::ult || p == P::uge))
      if (auto ramp = innermostRamp(x, depth + 1))
        return std::min(*ramp, *uy);
    if (ux && (p == P::sgt || p == P::sle || p == P::ugt || p == P::ule))
      if (auto ramp = innermostRamp(y, depth + 1))
        return std::min(*ramp, *ux);
  }
  return 1;
}

Value KernelLowering::runConstantCompare(arith::CmpIOp cmp, OpBuilder &b,
                                         IRMapping &map) {
  auto t = dyn_cast<RankedTensorType>(cmp.getType());
  Attribute layout = t ? getLayout(t) : Attribute();
  if (!layout || t.getRank() == 0)
    return {};
  auto offs = getRegisterOffsets(layout, t.getShape());
  int64_t n = offs.size();
  int64_t c = std::min<int64_t>(maskConstancy(cmp.getResult()), n);
  // The largest c whose runs are whole in each thread's registers: run k
  // is registers k*c .. k*c + c - 1, consecutive along the innermost
  // dimension from a multiple of c.
  auto runsInRegisters = [&](int64_t c) {
    if (n % c)
      return false;
    for (int64_t r = 0; r < n; r += c) {
      if (offs[r].back() % c)
        return false;
      for (int64_t e = 1; e < c; ++e) {
        SmallVector<int64_t> want(offs[r]);
        want.back() += e;
        if (ArrayRef<int64_t>(offs[r + e]) != ArrayRef<int64_t>(want))
          return false;
      }
    }
    return true;
  };
  while (c > 1 && !runsInRegisters(c))
    c /= 2;
  if (c <= 1)
    return {};
  // Compare each run's first register only, then spread the results.
  Location l = cmp.getLoc();
  SmallVector<int64_t> firsts, spread;
  for (int64_t r = 0; r < n; r += c)
    firsts.push_back(r);
  for (int64_t r = 0; r < n; ++r)
    spread.push_back(r / c);
  auto pick = [&](Value v) -> Value {
    return vector::ShuffleOp::create(b, l, v, v, firsts);
  };
  Value few = arith::CmpIOp::create(b, l, cmp.getPredicate(),
                                    pick(map.lookup(cmp.getLhs())),
                                    pick(map.lookup(cmp.getRhs())));
  return vector::ShuffleOp::create(b, l, few, few, spread);
}

Value KernelLowering::arange(ArangeOp op, OpBuilder &b) {
  Location l = op.getLoc();
  auto t = op.getType();
  Attribute layout = getLayout(t);
  const ThreadBase &tb = baseFor(layout, t.getShape());
  auto offs = getRegisterOffsets(layout, t.getShape());
  Type et = t.getElementType();
  Value start =
      arith::AddIOp::create(b, l, tb.base[0], cIndex(b, l, op.getStartValue()));
  start = arith::IndexCastOp::create(b, l, et, start);
  auto vt = VectorType::get({int64_t(offs.size())}, et);
  SmallVector<Attribute> consts;
  for (auto &o : offs)
    consts.push_back(b.getIntegerAttr(et, o[0]));
  Value c =
      arith::ConstantOp::create(b, l, vt, DenseElementsAttr::get(vt, consts));
  Value splat = vector::BroadcastOp::create(b, l, vt, start);
  return arith::AddIOp::create(b, l, splat, c);
}

/// Whether the mask is true for all of registers r .. r + w - 1.
static Value wholeRun(OpBuilder &b, Location l, Value mask, int64_t r,
                      int64_t w) {
  Value all;
  for (int64_t e = r; e < r + w; ++e) {
    Value m = vector::ExtractOp::create(b, l, mask, e);
    all = all ? arith::AndIOp::create(b, l, all, m).getResult() : m;
  }
  return all;
}

/// `idx` moved `e` elements along the innermost dimension.
static SmallVector<Value> shifted(OpBuilder &b, Location l, ArrayRef<Value> idx,
                                  int64_t e) {
  SmallVector<Value> s(idx);
  if (e)
    s.back() = arith::AddIOp::create(b, l, s.back(), cIndex(b, l, e));
  return s;
}

KernelLowering::RunAccess
KernelLowering::planAccess(OpBuilder &b, Location l, RankedTensorType t,
                           Value memref, ValueRange offsets, Value mask,
                           IRMapping &map) {
  RunAccess a;
  Attribute layout = getLayout(t);
  a.tb = &baseFor(layout, t.getShape());
  a.offs = getRegisterOffsets(layout, t.getShape());
  a.memref = map.lookup(memref);
  SmallVector<Value> mapped;
  for (Value o : offsets)
    mapped.push_back(map.lookup(o));
  a.et = t.getElementType();
  a.w = vectorOK ? accessWidth(t, memref, offsets.back()) : 1;
  a.mask = mask ? map.lookup(mask) : Value();
  a.uniformMask = mask && a.w > 1 && maskConstancy(mask) % a.w == 0;
  a.bytes = std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
  a.access = prepare(b, l, a.memref, mapped);
  return a;
}

KernelLowering::RunAccess KernelLowering::planLoad(LoadOp op, OpBuilder &b,
                                                   IRMapping &map) {
  Location l = op.getLoc();
  RunAccess a = planAccess(b, l, op.getType(), op.getSource(), op.getOffsets(),
                           op.getMask(), map);
  Type et = a.et;
  a.other = op.getOther() ? map.lookup(op.getOther()) : Value();
  if (LLVM::isCompatibleType(et) && paddingUnobservable(op))
    // Nothing reads the elements outside the tensor: no padding value, so
    // the code need not materialise one (predicated loads, no zeroing).
    a.other = LLVM::PoisonOp::create(b, l, et);
  else if (!a.other)
    a.other = isa<FloatType>(et)
                  ? arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0))
                        .getResult()
                  : arith::ConstantOp::create(b, l, b.getIntegerAttr(et, 0))
                        .getResult();
  return a;
}

Value KernelLowering::loadRun(OpBuilder &b, Location l, const RunAccess &a,
                              int64_t r) {
  int64_t w = a.w;
  Value memref = a.memref, mask = a.mask, other = a.other;
  Value cond;
  SmallVector<Value> idx = indicesAt(b, l, a.access, *a.tb, a.offs[r], cond);
  Value inBoundsOnly = cond;
  if (mask && w == 1)
    cond = arith::AndIOp::create(b, l, cond,
                                 vector::ExtractOp::create(b, l, mask, r));
  if (w == 1)
    return scf::IfOp::create(
               b, l, cond,
               [&](OpBuilder &tb2, Location) {
                 scf::YieldOp::create(
                     tb2, l,
                     ValueRange{memref::LoadOp::create(tb2, l, memref, idx)});
               },
               [&](OpBuilder &eb, Location) {
                 scf::YieldOp::create(eb, l, ValueRange{other});
               })
        .getResult(0);
  auto pt = VectorType::get({w}, a.et);
  // A masked run: one vector when the mask keeps all of it (runs are
  // wholly in or out of bounds), element by element otherwise -- unless the
  // mask is uniform over runs, when its first element decides.
  Value whole = cond;
  if (mask && a.uniformMask) {
    whole = arith::AndIOp::create(b, l, inBoundsOnly,
                                  vector::ExtractOp::create(b, l, mask, r));
    mask = Value();
  } else if (mask) {
    whole =
        arith::AndIOp::create(b, l, inBoundsOnly, wholeRun(b, l, mask, r, w));
  }
  return scf::IfOp::create(
             b, l, whole,
             [&](OpBuilder &tb2, Location) {
               Value v = vector::LoadOp::create(tb2, l, pt, memref, idx,
                                                /*nontemporal=*/false,
                                                llvm::MaybeAlign(w * a.bytes));
               scf::YieldOp::create(tb2, l, ValueRange{v});
             },
             [&](OpBuilder &eb, Location) {
               if (!mask) {
                 scf::YieldOp::create(
                     eb, l,
                     ValueRange{vector::BroadcastOp::create(eb, l, pt, other)});
                 return;
               }
               SmallVector<Value> elems;
               for (int64_t e = 0; e < w; ++e) {
                 Value ok = arith::AndIOp::create(
                     eb, l, inBoundsOnly,
                     vector::ExtractOp::create(eb, l, mask, r + e));
                 SmallVector<Value> at = shifted(eb, l, idx, e);
                 elems.push_back(
                     scf::IfOp::create(
                         eb, l, ok,
                         [&](OpBuilder &ib, Location) {
                           scf::YieldOp::create(
                               ib, l,
                               ValueRange{
                                   memref::LoadOp::create(ib, l, memref, at)});
                         },
                         [&](OpBuilder &ib, Location) {
                           scf::YieldOp::create(ib, l, ValueRange{other});
                         })
                         .getResult(0));
               }
               scf::YieldOp::create(eb, l,
                                    ValueRange{vector::FromElementsOp::create(
                                        eb, l, pt, elems)});
             })
      .getResult(0);
}

/// `whole` with registers r .. r + part's width - 1 replaced by `part` (a
/// scalar for one register).
static Value insertRun(OpBuilder &b, Location l, Value whole, Value part,
                       int64_t r) {
  auto pt = dyn_cast<VectorType>(part.getType());
  if (!pt)
    return vector::InsertOp::create(b, l, part, whole, r);
  // Shuffles (not strided-slice ops) so that every target lowers them.
  int64_t n = cast<VectorType>(whole.getType()).getNumElements();
  int64_t w = pt.getNumElements();
  SmallVector<int64_t> lanes;
  for (int64_t i = 0; i < n; ++i)
    lanes.push_back(i >= r && i < r + w ? n + i - r : i);
  // A shuffle takes operands of one type: widen the part first.
  SmallVector<int64_t> widen;
  for (int64_t i = 0; i < n; ++i)
    widen.push_back(i < w ? i : 0);
  if (w != n)
    part = vector::ShuffleOp::create(b, l, part, part, widen);
  return vector::ShuffleOp::create(b, l, whole, part, lanes);
}

/// Registers r .. r + w - 1 of `whole` (a scalar for one register).
static Value extractRun(OpBuilder &b, Location l, Value whole, int64_t r,
                        int64_t w) {
  if (w == 1)
    return vector::ExtractOp::create(b, l, whole, r);
  SmallVector<int64_t> lanes;
  for (int64_t i = r; i < r + w; ++i)
    lanes.push_back(i);
  return vector::ShuffleOp::create(b, l, whole, whole, lanes);
}

LogicalResult KernelLowering::lowerLoad(LoadOp op, OpBuilder &b,
                                        IRMapping &map) {
  Location l = op.getLoc();
  RunAccess a = planLoad(op, b, map);
  auto vt = cast<VectorType>(convert(op.getType()));
  Value result = vector::BroadcastOp::create(b, l, vt, a.other);
  for (int64_t r = 0; r < int64_t(a.offs.size()); r += a.w)
    result = insertRun(b, l, result, loadRun(b, l, a, r), r);
  map.map(op.getResult(), result);
  return success();
}

/// Whether the padding of `op`'s out-of-bounds elements can never be seen:
/// the loaded tile only flows, through element-wise operations and
/// unit-dimension reshapes, into stores whose bounds imply the load's (the
/// same offsets into dimensions with the same shape symbols), so an
/// element outside the loaded tensor is never stored.
bool KernelLowering::paddingUnobservable(LoadOp op) {
  if (op.getMask())
    return false;
  // (offset, shape symbol) of each dimension of an access, split into the
  // tile's non-unit dimensions (in order) and its unit ones.
  using Dim = std::pair<Value, StringRef>;
  auto dimsOf = [&](Value memref, ValueRange offsets, RankedTensorType tile,
                    SmallVector<Dim> &wide, SmallVector<Dim> &unit) {
    auto arg = dyn_cast<BlockArgument>(memref);
    if (!arg || arg.getArgNumber() >= dimSymbols.size() ||
        !dimSymbols[arg.getArgNumber()])
      return false;
    ArrayAttr syms = dimSymbols[arg.getArgNumber()];
    for (auto [d, off] : llvm::enumerate(offsets)) {
      auto sym = d < syms.size() ? dyn_cast<StringAttr>(syms[d]) : nullptr;
      if (!sym || sym.getValue().empty())
        return false;
      (tile.getShape()[d] == 1 ? unit : wide).push_back({off, sym.getValue()});
    }
    return true;
  };
  SmallVector<Dim> loadWide, loadUnit;
  if (!dimsOf(op.getSource(), op.getOffsets(), op.getType(), loadWide,
              loadUnit))
    return false;
  SmallVector<Value> work{op.getResult()};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto st = dyn_cast<StoreOp>(user)) {
        if (use.getOperandNumber() != 0)
          return false;
        SmallVector<Dim> wide, unit;
        if (!dimsOf(st.getDest(), st.getOffsets(),
                    cast<RankedTensorType>(st.getValue().getType()), wide,
                    unit) ||
            wide != loadWide)
          return false;
        for (const Dim &d : loadUnit)
          if (!llvm::is_contained(unit, d))
            return false;
        continue;
      }
      Dialect *d = user->getDialect();
      bool elementwise = d && isa<arith::ArithDialect, math::MathDialect>(d) &&
                         user->getNumRegions() == 0 &&
                         llvm::all_of(user->getResultTypes(), [](Type t) {
                           auto rt = dyn_cast<RankedTensorType>(t);
                           return rt && rt.getRank() > 0;
                         });
      if (!elementwise && !isa<ReshapeOp>(user))
        return false;
      for (Value r : user->getResults())
        work.push_back(r);
    }
  }
  return true;
}

KernelLowering::RunAccess KernelLowering::planStore(StoreOp op, OpBuilder &b,
                                                    IRMapping &map) {
  Location l = op.getLoc();
  RunAccess a =
      planAccess(b, l, cast<RankedTensorType>(op.getValue().getType()),
                 op.getDest(), op.getOffsets(), op.getMask(), map);
  if (a.tb->duplicate)
    a.owner = arith::XOrIOp::create(
        b, l, a.tb->duplicate,
        arith::ConstantIntOp::create(b, l, b.getI1Type(), 1));
  return a;
}

void KernelLowering::storeRun(OpBuilder &b, Location l, const RunAccess &a,
                              int64_t r, Value part) {
  int64_t w = a.w;
  Value memref = a.memref, mask = a.mask;
  Value cond;
  SmallVector<Value> idx = indicesAt(b, l, a.access, *a.tb, a.offs[r], cond);
  if (a.owner)
    cond = arith::AndIOp::create(b, l, cond, a.owner);
  auto elem = [&](OpBuilder &ob, int64_t e) {
    return w == 1 ? part
                  : vector::ExtractOp::create(ob, l, part, e).getResult();
  };
  if (mask && w > 1 && !a.uniformMask) {
    // One vector when the mask keeps the whole run, elements otherwise.
    Value whole = arith::AndIOp::create(b, l, cond, wholeRun(b, l, mask, r, w));
    auto ifOp = scf::IfOp::create(b, l, whole, /*withElse=*/true);
    OpBuilder vb = ifOp.getThenBodyBuilder();
    vector::StoreOp::create(vb, l, part, memref, idx, /*nontemporal=*/false,
                            llvm::MaybeAlign(w * a.bytes));
    OpBuilder eb = ifOp.getElseBodyBuilder();
    for (int64_t e = 0; e < w; ++e) {
      Value ok = arith::AndIOp::create(
          eb, l, cond, vector::ExtractOp::create(eb, l, mask, r + e));
      auto one = scf::IfOp::create(eb, l, ok, /*withElse=*/false);
      OpBuilder ob = one.getThenBodyBuilder();
      memref::StoreOp::create(ob, l, elem(ob, e), memref,
                              shifted(ob, l, idx, e));
    }
    return;
  }
  if (mask)
    cond = arith::AndIOp::create(b, l, cond,
                                 vector::ExtractOp::create(b, l, mask, r));
  auto ifOp = scf::IfOp::create(b, l, cond, /*withElse=*/false);
  OpBuilder ib = ifOp.getThenBodyBuilder();
  if (w == 1)
    memref::StoreOp::create(ib, l, part, memref, idx);
  else
    vector::StoreOp::create(ib, l, part, memref, idx, /*nontemporal=*/false,
                            llvm::MaybeAlign(w * a.bytes));
}

LogicalResult KernelLowering::lowerStore(StoreOp op, OpBuilder &b,
                                         IRMapping &map) {
  Location l = op.getLoc();
  RunAccess a = planStore(op, b, map);
  Value value = map.lookup(op.getValue());
  for (int64_t r = 0; r < int64_t(a.offs.size()); r += a.w)
    storeRun(b, l, a, r, extractRun(b, l, value, r, a.w));
  return success();
}

LogicalResult KernelLowering::lowerGather(GatherOp op, OpBuilder &b,
                                          IRMapping &map) {
  Location l = op.getLoc();
  RankedTensorType t = op.getType();
  Type et = t.getElementType();
  Value memref = map.lookup(op.getSource());
  int64_t n = getNumRegisters(getLayout(t), t.getShape());
  Value other = op.getOther() ? map.lookup(op.getOther()) : Value();
  if (!other)
    other = isa<FloatType>(et)
                ? arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0))
                      .getResult()
                : arith::ConstantOp::create(b, l, b.getIntegerAttr(et, 0))
                      .getResult();
  Value result =
      vector::BroadcastOp::create(b, l, VectorType::get({n}, et), other);
  for (int64_t r = 0; r < n; ++r) {
    Value cond;
    SmallVector<Value> idx = elementIndices(b, l, memref, op.getIndices(),
                                            op.getMask(), map, r, cond);
    auto ifOp = scf::IfOp::create(
        b, l, cond,
        [&](OpBuilder &tb2, Location) {
          scf::YieldOp::create(
              tb2, l, ValueRange{memref::LoadOp::create(tb2, l, memref, idx)});
        },
        [&](OpBuilder &eb, Location) {
          scf::YieldOp::create(eb, l, ValueRange{other});
        });
    result = vector::InsertOp::create(b, l, ifOp.getResult(0), result, r);
  }
  map.map(op.getResult(), result);
  return success();
}

LogicalResult KernelLowering::lowerScatter(ScatterOp op, OpBuilder &b,
                                           IRMapping &map) {
  Location l = op.getLoc();
  auto t = cast<RankedTensorType>(op.getValue().getType());
  Value memref = map.lookup(op.getDest());
  Value value = map.lookup(op.getValue());
  const ThreadBase &tb = baseFor(getLayout(t), t.getShape());
  int64_t n = getNumRegisters(getLayout(t), t.getShape());
  for (int64_t r = 0; r < n; ++r) {
    Value cond;
    SmallVector<Value> idx = elementIndices(b, l, memref, op.getIndices(),
                                            op.getMask(), map, r, cond);
    if (tb.duplicate)
      cond = arith::AndIOp::create(
          b, l, cond,
          arith::XOrIOp::create(
              b, l, tb.duplicate,
              arith::ConstantIntOp::create(b, l, b.getI1Type(), 1)));
    auto ifOp = scf::IfOp::create(b, l, cond, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    memref::StoreOp::create(ib, l, vector::ExtractOp::create(ib, l, value, r),
                            memref, idx);
  }
  return success();
}

LogicalResult KernelLowering::lowerReduce(ReduceOp op, OpBuilder &b,
                                          IRMapping &map) {
  Location l = op.getLoc();
  auto st = op.getSource().getType();
  Attribute layout = getLayout(st);
  if (!isa<BlockedLayoutAttr, MmaLayoutAttr>(layout))
    return op.emitOpError("of a sliced tile has no register lowering");
  unsigned axis = op.getAxis();
  Type et = st.getElementType();
  Type wt = workType(et);
  if (!wt)
    return op.emitOpError("of ") << et << " has no register lowering";
  ReduceKind kind = op.getKind();
  SmallVector<int64_t> outShape(st.getShape());
  outShape.erase(outShape.begin() + axis);
  auto slice = SliceLayoutAttr::get(op.getContext(), axis, layout);
  auto inOffs = getRegisterOffsets(layout, st.getShape());
  auto outOffs = getRegisterOffsets(slice, outShape);
  auto outIndex = registerOf(outOffs);
  Value src = map.lookup(op.getSource());
  const DimSpread sa = axisSpread(layout, st.getShape(), axis);

  // 1. In the thread.
  SmallVector<Value> acc(outOffs.size());
  for (auto [r, o] : llvm::enumerate(inOffs)) {
    SmallVector<int64_t> key(o);
    key.erase(key.begin() + axis);
    int64_t out = outIndex.at(key);
    Value x = widen(b, l, vector::ExtractOp::create(b, l, src, r), wt);
    acc[out] = acc[out] ? combine(b, l, kind, acc[out], x) : x;
  }
  // Threads that repeat others along the axis contribute nothing.
  if (sa.replicated()) {
    // This dimension's duplicate flag alone.
    Value raw = firstElement(b, l, sa);
    Value dup = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, raw,
                                      cIndex(b, l, sa.size));
    Value id = identity(b, l, kind, wt);
    for (Value &a : acc)
      a = arith::SelectOp::create(b, l, dup, id, a);
  }
  // 2. Across the lanes along the axis: butterfly shuffles.
  if (sa.lanes > 1) {
    Value width = arith::ConstantIntOp::create(b, l, b.getI32Type(), 32);
    for (int64_t k = sa.laneStride; k < sa.laneStride * sa.lanes; k *= 2) {
      Value off = arith::ConstantIntOp::create(b, l, b.getI32Type(), k);
      for (Value &a : acc) {
        Value other =
            gpu::ShuffleOp::create(b, l, a, off, width, gpu::ShuffleMode::XOR)
                .getShuffleResult();
        a = combine(b, l, kind, a, other);
      }
    }
  }
  // 3. Across the warps along the axis: through a small shared buffer.
  if (sa.warps > 1) {
    int64_t lanesRest = 32 / sa.lanes, warpsRest = warps / sa.warps;
    int64_t slots = lanesRest * warpsRest, nOut = acc.size();
    Value buf = sharedView(b, l, sa.warps * slots * nOut, wt);
    auto compact = [&](Value id, int64_t stride, int64_t count) {
      // Drops the index bits of the axis from a lane or warp id.
      Value low = arith::RemUIOp::create(b, l, id, cIndex(b, l, stride));
      Value high =
          arith::DivUIOp::create(b, l, id, cIndex(b, l, stride * count));
      return arith::AddIOp::create(
          b, l, low, arith::MulIOp::create(b, l, high, cIndex(b, l, stride)));
    };
    Value laneRest = compact(lane, sa.laneStride, sa.lanes);
    Value warpRest = compact(warp, sa.warpStride, sa.warps);
    Value slot = arith::AddIOp::create(
        b, l, arith::MulIOp::create(b, l, warpRest, cIndex(b, l, lanesRest)),
        laneRest);
    Value laneIdx = laneIndex(b, l, sa);
    Value warpIdx = warpIndex(b, l, sa);
    if (needsLeadingBarrier(op))
      gpu::BarrierOp::create(b, l);
    Value writer = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                         laneIdx, cIndex(b, l, 0));
    auto at = [&](OpBuilder &ob, Value w, int64_t o) {
      Value row = arith::AddIOp::create(
          ob, l, arith::MulIOp::create(ob, l, w, cIndex(ob, l, slots)), slot);
      return arith::AddIOp::create(
          ob, l, arith::MulIOp::create(ob, l, row, cIndex(ob, l, nOut)),
          cIndex(ob, l, o));
    };
    auto ifOp = scf::IfOp::create(b, l, writer, /*withElse=*/false);
    {
      OpBuilder ib = ifOp.getThenBodyBuilder();
      for (auto [o, a] : llvm::enumerate(acc))
        memref::StoreOp::create(ib, l, a, buf, ValueRange{at(ib, warpIdx, o)});
    }
    gpu::BarrierOp::create(b, l);
    for (auto [o, a] : llvm::enumerate(acc)) {
      Value r;
      for (int64_t k = 0; k < sa.warps; ++k) {
        Value v = memref::LoadOp::create(b, l, buf,
                                         ValueRange{at(b, cIndex(b, l, k), o)});
        r = r ? combine(b, l, kind, r, v) : v;
      }
      a = r;
    }
  }
  for (Value &a : acc)
    a = narrow(b, l, a, et);
  if (outShape.empty()) {
    map.map(op.getResult(), acc[0]);
    return success();
  }
  auto vt = VectorType::get({int64_t(acc.size())}, et);
  Value v = vector::FromElementsOp::create(b, l, vt, acc);
  map.map(op.getResult(), v);
  return success();
}

/// The row and column (last two dimensions) of the first element lane
/// `lane` of warp 0 holds in a tile of `shape` under an mma or blocked
/// `layout`.
static std::pair<int64_t, int64_t>
laneOrigin(Attribute layout, ArrayRef<int64_t> shape, int64_t lane) {
  if (isa<MmaLayoutAttr>(layout))
    return {lane / 4, 2 * (lane % 4)};
  SmallVector<DimSpread> spreads =
      getDimSpreads(cast<BlockedLayoutAttr>(layout), shape);
  auto at = [&](const DimSpread &s) {
    return (lane / s.laneStride) % s.lanes * s.perThread % s.size;
  };
  return {at(spreads[spreads.size() - 2]), at(spreads.back())};
}

/// Runs of `run` registers along the last dimension: the first register
/// of each, or nothing when some run is not `run` consecutive elements of
/// one row starting at a multiple of `run`.
static std::optional<SmallVector<int64_t>>
runStarts(ArrayRef<SmallVector<int64_t>> offs, int64_t run,
          ArrayRef<int64_t> origins) {
  SmallVector<int64_t> starts;
  if (offs.size() % run != 0)
    return std::nullopt;
  for (size_t r = 0; r < offs.size(); r += run) {
    ArrayRef<int64_t> o = offs[r];
    for (int64_t k = 1; k < run; ++k) {
      ArrayRef<int64_t> n = offs[r + k];
      if (n.back() != o.back() + k || n.drop_back() != o.drop_back())
        return std::nullopt;
    }
    for (int64_t c : origins)
      if ((c + o.back()) % run != 0)
        return std::nullopt;
    starts.push_back(r);
  }
  return starts;
}

std::optional<KernelLowering::RunConversion>
KernelLowering::planRunConversion(ConvertLayoutOp op) {
  auto from = op.getSource().getType();
  auto to = op.getType();
  Type et = from.getElementType();
  ArrayRef<int64_t> shape = from.getShape();
  int64_t rank = shape.size();
  if (et.isInteger(1) || rank < 2 ||
      !llvm::all_of(shape.drop_back(2), [](int64_t d) { return d == 1; }))
    return std::nullopt;
  Attribute src = getLayout(from), dst = getLayout(to);
  // The rows (dim 0) or columns (dim 1) one pass of a layout's threads
  // covers: a thread's elements lie in [period * i, period * (i + 1)) for
  // register offsets in the same range.
  auto period = [&](Attribute a, unsigned dim) -> int64_t {
    if (auto m = dyn_cast<MmaLayoutAttr>(a))
      return (dim == 0 ? 16 : 8) * m.getWarpsPerCTA()[dim];
    auto bl = dyn_cast<BlockedLayoutAttr>(a);
    if (!bl || getContiguousDim(a) != int64_t(bl.getOrder().size()) - 1)
      return 0;
    return getDimSpreads(bl, shape)[rank - 2 + dim].extent();
  };
  int64_t rowStep = std::lcm(period(src, 0), period(dst, 0));
  int64_t colStep = std::lcm(period(src, 1), period(dst, 1));
  if (!rowStep || !colStep)
    return std::nullopt;
  if (baseFor(dst, shape).duplicate)
    return std::nullopt;
  int64_t bytes = std::max<int64_t>(1, et.getIntOrFloatBitWidth() / 8);
  int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  auto srcOffs = getRegisterOffsets(src, shape);
  auto dstOffs = getRegisterOffsets(dst, shape);
  SmallVector<std::pair<int64_t, int64_t>> srcLane, dstLane;
  SmallVector<int64_t> srcCols, dstCols;
  for (int64_t i = 0; i < 32; ++i) {
    srcLane.push_back(laneOrigin(src, shape, i));
    dstLane.push_back(laneOrigin(dst, shape, i));
    srcCols.push_back(srcLane.back().second);
    dstCols.push_back(dstLane.back().second);
  }
  auto widest = [&](Attribute layout, ArrayRef<SmallVector<int64_t>> offs,
                    ArrayRef<int64_t> origins)
      -> std::pair<int64_t, SmallVector<int64_t>> {
    for (int64_t run = std::min<int64_t>(getContiguousRegisters(layout, shape),
                                         std::max<int64_t>(1, 16 / bytes));
         run > 1; run /= 2)
      if (auto starts = runStarts(offs, run, origins))
        return {run, *starts};
    return {0, {}};
  };
  auto [srcRun, srcStarts] = widest(src, srcOffs, srcCols);
  auto [dstRun, dstStarts] = widest(dst, dstOffs, dstCols);
  if (srcRun == 0 || dstRun == 0 || dstRun * bytes < 8)
    return std::nullopt;
  if (rows % rowStep != 0 || cols % colStep != 0)
    return std::nullopt;
  // The tile passes through shared memory in rounds of `chunkRows` x
  // `chunkCols` blocks (multiples of both layouts' periods): as few as fit
  // in the bytes the kernel holds anyway at its peak (counting a padding of
  // 8 elements per row), at most four; columns are split first, rows then.
  int64_t room = sharedPeak - sharedBytes, chunkRows = rows, chunkCols = cols;
  auto fits = [&]() { return chunkRows * (chunkCols + 8) * bytes <= room; };
  while (!fits() && (rows / chunkRows) * (cols / chunkCols) < 4) {
    if (chunkCols > colStep && (chunkCols / 2) % colStep == 0)
      chunkCols /= 2;
    else if (chunkRows > rowStep && (chunkRows / 2) % rowStep == 0)
      chunkRows /= 2;
    else
      break;
  }
  // The row pitch: the block's columns and the padding (whole 16-byte
  // chunks, so that every run stays aligned) with the fewest wavefronts
  // for warp 0's writes and reads.
  int64_t chunk = std::max<int64_t>(1, 16 / bytes);
  int64_t pitch = chunkCols, best = -1;
  for (int64_t pad = 0; pad <= 8 * chunk; pad += chunk) {
    int64_t p = chunkCols + pad, cost = 0;
    auto count = [&](ArrayRef<std::pair<int64_t, int64_t>> lanes,
                     ArrayRef<SmallVector<int64_t>> offs,
                     ArrayRef<int64_t> starts, int64_t run) {
      for (int64_t r : starts) {
        SmallVector<int64_t> at;
        for (auto [row, col] : lanes)
          at.push_back(((row + offs[r][rank - 2] % chunkRows) * p + col +
                        offs[r][rank - 1] % chunkCols) *
                       bytes);
        cost += tessera::sharedWavefronts(at, run * bytes);
      }
    };
    count(srcLane, srcOffs, srcStarts, srcRun);
    count(dstLane, dstOffs, dstStarts, dstRun);
    if (best < 0 || cost < best) {
      best = cost;
      pitch = p;
    }
  }
  return RunConversion{srcRun,  dstRun,  pitch,     chunkRows, chunkCols,
                       srcOffs, dstOffs, srcStarts, dstStarts};
}

void KernelLowering::convertByRuns(
    ConvertLayoutOp op, const RunConversion &plan, OpBuilder &b, IRMapping &map,
    function_ref<void(OpBuilder &, int64_t, Value)> sink) {
  Location l = op.getLoc();
  auto from = op.getSource().getType();
  Type et = from.getElementType();
  ArrayRef<int64_t> shape = from.getShape();
  int64_t rank = shape.size(), rows = shape[rank - 2], cols = shape[rank - 1];
  Attribute src = getLayout(from), dst = getLayout(op.getType());
  const ThreadBase &sb = baseFor(src, shape), &db = baseFor(dst, shape);
  ArrayRef<SmallVector<int64_t>> srcOffs = plan.srcOffs, dstOffs = plan.dstOffs;
  int64_t bytes = std::max<int64_t>(1, et.getIntOrFloatBitWidth() / 8);
  int64_t srcRun = plan.srcRun, dstRun = plan.dstRun, pitch = plan.pitch,
          chunkRows = plan.chunkRows, chunkCols = plan.chunkCols;
  int64_t colRounds = cols / chunkCols;
  Value buf = sharedView(b, l, chunkRows * pitch, et);
  // The round of a register offset, and its place in that round's block.
  auto roundOf = [&](ArrayRef<int64_t> off) {
    return off[rank - 2] / chunkRows * colRounds + off[rank - 1] / chunkCols;
  };
  auto index = [&](OpBuilder &ob, const ThreadBase &tb, ArrayRef<int64_t> off) {
    Value row = arith::AddIOp::create(
        ob, l, tb.base[rank - 2],
        cIndex(ob, l, off[rank - 2] - off[rank - 2] / chunkRows * chunkRows));
    Value col = arith::AddIOp::create(
        ob, l, tb.base[rank - 1],
        cIndex(ob, l, off[rank - 1] - off[rank - 1] / chunkCols * chunkCols));
    return arith::AddIOp::create(
        ob, l, arith::MulIOp::create(ob, l, row, cIndex(ob, l, pitch)), col);
  };
  Value v = map.lookup(op.getSource());
  VectorType runType = VectorType::get({dstRun}, et);
  SmallVector<Value> elems(dstOffs.size());
  for (int64_t round = 0; round < rows / chunkRows * colRounds; ++round) {
    if (round > 0 || needsLeadingBarrier(op))
      gpu::BarrierOp::create(b, l);
    OpBuilder wb = b;
    if (sb.duplicate) {
      // Threads past a replicated dimension's first position hold copies.
      Value own = arith::XOrIOp::create(
          b, l, sb.duplicate,
          arith::ConstantIntOp::create(b, l, b.getI1Type(), 1));
      wb =
          scf::IfOp::create(b, l, own, /*withElse=*/false).getThenBodyBuilder();
    }
    for (int64_t r : plan.srcStarts) {
      if (roundOf(srcOffs[r]) != round)
        continue;
      auto lanes = llvm::to_vector(llvm::seq<int64_t>(r, r + srcRun));
      Value part = vector::ShuffleOp::create(wb, l, v, v, lanes);
      vector::StoreOp::create(
          wb, l, part, buf, ValueRange{index(wb, sb, srcOffs[r])},
          /*nontemporal=*/false, llvm::MaybeAlign(srcRun * bytes));
    }
    gpu::BarrierOp::create(b, l);
    for (int64_t r : plan.dstStarts) {
      if (roundOf(dstOffs[r]) != round)
        continue;
      Value part = vector::LoadOp::create(
          b, l, runType, buf, ValueRange{index(b, db, dstOffs[r])},
          /*nontemporal=*/false, llvm::MaybeAlign(dstRun * bytes));
      if (sink) {
        sink(b, r, part);
        continue;
      }
      for (int64_t k = 0; k < dstRun; ++k)
        elems[r + k] = vector::ExtractOp::create(b, l, part, k);
    }
  }
  if (!sink)
    map.map(op.getResult(),
            vector::FromElementsOp::create(
                b, l, VectorType::get({int64_t(elems.size())}, et), elems));
}

LogicalResult KernelLowering::lowerConvert(ConvertLayoutOp op, OpBuilder &b,
                                           IRMapping &map) {
  Location l = op.getLoc();
  auto from = op.getSource().getType();
  auto to = op.getType();
  Type et = from.getElementType();
  Type st = et.isInteger(1) ? b.getI8Type() : et;
  ArrayRef<int64_t> shape = from.getShape();
  int64_t elements = from.getNumElements();
  // An accumulator whose warps all lie along M holds, in each thread, the
  // elements the left-operand fragments of the same warp grid want (as
  // FlashAttention's P): a register shuffle.
  if (auto mma = dyn_cast<MmaLayoutAttr>(getLayout(from))) {
    auto dot = dyn_cast<DotOperandLayoutAttr>(getLayout(to));
    if (dot && dot.getOpIdx() == 0 && dot.getParent() == mma &&
        mma.getWarpsPerCTA()[1] == 1) {
      auto index = registerOf(getRegisterOffsets(mma, shape));
      SmallVector<int64_t> lanes;
      for (const SmallVector<int64_t> &o : getRegisterOffsets(dot, shape))
        lanes.push_back(index.at(o));
      Value v = map.lookup(op.getSource());
      map.map(op.getResult(),
              vector::ShuffleOp::create(b, l, v, v, lanes).getResult());
      return success();
    }
  }
  if (auto plan = planRunConversion(op)) {
    convertByRuns(op, *plan, b, map);
    return success();
  }
  Value buf = sharedView(b, l, elements, st);
  auto linear = [&](OpBuilder &ob, const ThreadBase &tb,
                    ArrayRef<int64_t> off) {
    Value lin = cIndex(ob, l, 0);
    for (size_t d = 0; d < shape.size(); ++d) {
      Value i = arith::AddIOp::create(ob, l, tb.base[d], cIndex(ob, l, off[d]));
      lin = arith::AddIOp::create(
          ob, l, arith::MulIOp::create(ob, l, lin, cIndex(ob, l, shape[d])), i);
    }
    return lin;
  };
  const ThreadBase &src = baseFor(getLayout(from), shape);
  auto srcOffs = getRegisterOffsets(getLayout(from), shape);
  Value v = map.lookup(op.getSource());
  gpu::BarrierOp::create(b, l);
  for (auto [r, off] : llvm::enumerate(srcOffs)) {
    Value x = vector::ExtractOp::create(b, l, v, r);
    if (st != et)
      x = arith::ExtUIOp::create(b, l, st, x);
    Value idx = linear(b, src, off);
    if (src.duplicate) {
      auto ifOp =
          scf::IfOp::create(b, l,
                            arith::XOrIOp::create(b, l, src.duplicate,
                                                  arith::ConstantIntOp::create(
                                                      b, l, b.getI1Type(), 1)),
                            /*withElse=*/false);
      OpBuilder ib = ifOp.getThenBodyBuilder();
      memref::StoreOp::create(ib, l, x, buf, ValueRange{idx});
    } else {
      memref::StoreOp::create(b, l, x, buf, ValueRange{idx});
    }
  }
  gpu::BarrierOp::create(b, l);
  const ThreadBase &dst = baseFor(getLayout(to), shape);
  auto dstOffs = getRegisterOffsets(getLayout(to), shape);
  SmallVector<Value> elems;
  for (auto &off : dstOffs) {
    Value x =
        memref::LoadOp::create(b, l, buf, ValueRange{linear(b, dst, off)});
    if (st != et)
      x = arith::TruncIOp::create(b, l, et, x);
    elems.push_back(x);
  }
  map.map(op.getResult(),
          vector::FromElementsOp::create(
              b, l, VectorType::get({int64_t(elems.size())}, et), elems));
  return success();
}

//===----------------------------------------------------------------------===//
// Dot operands in shared memory and tensor-core products
//===----------------------------------------------------------------------===//

bool KernelLowering::stageable(LoadOp op) {
  RankedTensorType t = op.getType();
  Type et = t.getElementType();
  // An fp8 tile is staged as its f16 image (loaded into registers,
  // widened there and stored to shared memory) or, for wgmma k32, as it
  // is.
  bool widened = widenedBlock(op);
  // f32 blocks: the tf32 operands of wgmma k8 (sm_90a).
  if (!(et.isF16() || et.isBF16() || isFloat8(et) ||
        (et.isF32() && warpgroupMma)) ||
      op.getMask() || op.getOther())
    return false;
  int64_t rank = t.getRank();
  if (rank < 2)
    return false;
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (t.getShape()[d] != 1)
      return false;
  int64_t rows = t.getShape()[rank - 2], cols = t.getShape()[rank - 1];
  if (rows % 8 != 0 || cols * t.getElementTypeBitWidth() % 128 != 0)
    return false;
  // Every use of the tile is a dot operand, reached through unit-dimension
  // reshapes and transpositions (a loop-invariant operand may feed the
  // same product in several loops).
  SmallVector<Value> worklist{op.getResult()};
  if (widened)
    worklist = llvm::map_to_vector(
        op.getResult().getUsers(),
        [](Operation *u) -> Value { return u->getResult(0); });
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (v.use_empty())
      return false;
    for (Operation *user : v.getUsers()) {
      if (auto r = dyn_cast<ReshapeOp>(user)) {
        if (r.getType().getShape() != ArrayRef<int64_t>{rows, cols})
          return false;
        worklist.push_back(r.getResult());
        continue;
      }
      if (auto tr = dyn_cast<TransOp>(user)) {
        if (tr.getSource().getType().getRank() != 2)
          return false;
        worklist.push_back(tr.getResult());
        continue;
      }
      auto c = dyn_cast<ConvertLayoutOp>(user);
      if (!c)
        return false;
      auto layout = dyn_cast<DotOperandLayoutAttr>(getLayout(c.getType()));
      if (!layout)
        return false;
      for (OpOperand &use : c.getResult().getUses()) {
        auto dot = dyn_cast<DotOp>(use.getOwner());
        if (!dot || use.getOperandNumber() != layout.getOpIdx())
          return false;
      }
    }
  }
  return true;
}

void KernelLowering::copyToShared(OpBuilder &b, LoadOp op, IRMapping &map,
                                  Value buffer, Value base, bool async,
                                  Value pred) {
  Location l = op.getLoc();
  RankedTensorType t = op.getType();
  int64_t rank = t.getRank();
  int64_t rows = t.getShape()[rank - 2], cols = t.getShape()[rank - 1];
  int64_t bytes = t.getElementTypeBitWidth() / 8;
  int64_t vec = 16 / bytes; // elements per 16-byte chunk
  int64_t perRow = cols / vec, total = rows * perRow, threads = warps * 32;
  // Atoms of `atom` columns, each rows x atom and swizzled on its own.
  int64_t atom = atomColumns.lookup(op);
  if (!atom)
    atom = cols;
  Swizzle sw(atom, bytes);
  auto chunkOffset = [&](OpBuilder &ob, Value r, Value c) {
    return sw.blockOffset(ob, l, rows, cols, r, c);
  };
  Type et = t.getElementType();
  Value memref = map.lookup(op.getSource());
  SmallVector<Value> offsets;
  for (Value o : op.getOffsets())
    offsets.push_back(map.lookup(o));
  BlockAccess access = prepare(b, l, memref, offsets);
  if (!async) {
    // Element by element (unaligned or strided rows), the slow path: a
    // loop over this thread's chunks keeps few values live.
    Value generic = memref::MemorySpaceCastOp::create(
        b, l,
        MemRefType::get(cast<MemRefType>(buffer.getType()).getShape(), et),
        buffer);
    Value zeroV = arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0));
    int64_t rounds = (total + threads - 1) / threads;
    scf::ForOp::create(
        b, l, cIndex(b, l, 0), cIndex(b, l, rounds), cIndex(b, l, 1),
        ValueRange{}, [&](OpBuilder &lb, Location, Value j, ValueRange) {
          Value q = arith::AddIOp::create(
              lb, l, tid,
              arith::MulIOp::create(lb, l, j, cIndex(lb, l, threads)));
          Value r = arith::DivUIOp::create(lb, l, q, cIndex(lb, l, perRow));
          Value c = arith::RemUIOp::create(lb, l, q, cIndex(lb, l, perRow));
          Value dst = arith::AddIOp::create(lb, l, base, chunkOffset(lb, r, c));
          ThreadBase tb;
          for (int64_t d = 0; d + 2 < rank; ++d)
            tb.base.push_back(cIndex(lb, l, 0));
          tb.base.push_back(r);
          tb.base.push_back(
              arith::MulIOp::create(lb, l, c, cIndex(lb, l, vec)));
          auto inRange = scf::IfOp::create(
              lb, l,
              arith::CmpIOp::create(lb, l, arith::CmpIPredicate::ult, q,
                                    cIndex(lb, l, total)),
              /*withElse=*/false);
          OpBuilder ib = inRange.getThenBodyBuilder();
          for (int64_t e = 0; e < vec; ++e) {
            SmallVector<int64_t> at(rank, 0);
            at.back() = e;
            Value cond;
            SmallVector<Value> idx = indicesAt(ib, l, access, tb, at, cond);
            Value x =
                scf::IfOp::create(
                    ib, l, cond,
                    [&](OpBuilder &tb2, Location) {
                      scf::YieldOp::create(tb2, l,
                                           ValueRange{memref::LoadOp::create(
                                               tb2, l, memref, idx)});
                    },
                    [&](OpBuilder &eb, Location) {
                      scf::YieldOp::create(eb, l, ValueRange{zeroV});
                    })
                    .getResult(0);
            memref::StoreOp::create(ib, l, x, generic,
                                    ValueRange{arith::AddIOp::create(
                                        ib, l, dst, cIndex(ib, l, e))});
          }
          scf::YieldOp::create(lb, l);
        });
    return;
  }
  // Chunk j of this thread is chunk tid + j * threads. When a row holds a
  // whole number of those strides of 8 rows, chunk j lies `j * step` rows
  // below chunk 0 with the same swizzle phase: one set of per-thread
  // values and constant offsets.
  int64_t step = threads % perRow == 0 && (threads / perRow) % 8 == 0
                     ? threads / perRow
                     : 0;
  for (int64_t j = 0; j * threads < total; ++j) {
    std::string key = "copy:" + std::to_string(rows) + "x" +
                      std::to_string(cols) + "/" + std::to_string(atom) + ":" +
                      std::to_string(step ? 0 : j);
    int64_t rowC = step ? j * step : 0;
    if (!entryValues.count(key)) {
      OpBuilder &e = *entry;
      Value q = arith::AddIOp::create(e, l, tid,
                                      cIndex(e, l, step ? 0 : j * threads));
      Value r = arith::DivUIOp::create(e, l, q, cIndex(e, l, perRow));
      Value c = arith::RemUIOp::create(e, l, q, cIndex(e, l, perRow));
      entryValues[key + ":row"] = r;
      entryValues[key + ":col"] =
          arith::MulIOp::create(e, l, c, cIndex(e, l, vec));
      entryValues[key] = chunkOffset(e, r, c);
    }
    Value valid;
    if ((j + 1) * threads > total) {
      // The last round of chunks leaves threads idle.
      std::string vkey = key + ":valid:" + std::to_string(j);
      if (!entryValues.count(vkey))
        entryValues[vkey] = arith::CmpIOp::create(
            *entry, l, arith::CmpIPredicate::ult,
            arith::AddIOp::create(*entry, l, tid,
                                  cIndex(*entry, l, j * threads)),
            cIndex(*entry, l, total));
      valid = entryValues[vkey];
    }
    ThreadBase tb;
    for (int64_t d = 0; d + 2 < rank; ++d)
      tb.base.push_back(cIndex(b, l, 0));
    tb.base.push_back(entryValues[key + ":row"]);
    tb.base.push_back(entryValues[key + ":col"]);
    SmallVector<int64_t> zero(rank, 0);
    zero[rank - 2] = rowC;
    Value dst = arith::AddIOp::create(b, l, base, entryValues[key]);
    if (rowC)
      dst = arith::AddIOp::create(b, l, dst, cIndex(b, l, rowC * atom));
    OpBuilder cb = b;
    if (valid) {
      auto ifOp = scf::IfOp::create(b, l, valid, /*withElse=*/false);
      cb = ifOp.getThenBodyBuilder();
    }
    // Outside the tensor: no bytes read, the chunk zero-filled, and the
    // address kept inside the tensor.
    Value cond;
    SmallVector<Value> idx = indicesAt(cb, l, access, tb, zero, cond);
    if (pred)
      cond = arith::AndIOp::create(cb, l, cond, pred);
    Value c0 = cIndex(cb, l, 0);
    for (Value &i : idx)
      i = arith::SelectOp::create(cb, l, cond, i, c0);
    Value n = arith::SelectOp::create(cb, l, cond, cIndex(cb, l, vec), c0);
    nvgpu::DeviceAsyncCopyOp::create(
        cb, l, nvgpu::DeviceAsyncTokenType::get(b.getContext()), buffer,
        ValueRange{dst}, memref, idx, cb.getIndexAttr(vec), n,
        cb.getUnitAttr());
  }
}

LogicalResult KernelLowering::lowerStagedLoad(LoadOp op, OpBuilder &b,
                                              IRMapping &map) {
  if (staged.count(op.getResult()))
    return success(); // issued ahead by its pipelined loop
  Location l = op.getLoc();
  RankedTensorType t = op.getType();
  int64_t rank = t.getRank();
  int64_t rows = t.getShape()[rank - 2], cols = t.getShape()[rank - 1];
  // wgmma's swizzle follows the address bits: its blocks start on a
  // 1024-byte boundary.
  int64_t atom = atomColumns.lookup(op);
  bool widened = widenedBlock(op);
  Value buf = sharedBuffer(b, l, rows * cols,
                           widened ? b.getF16Type() : t.getElementType(),
                           atom ? 1024 : 16);
  bool inLoop = enclosingLoop(op) != nullptr;
  if (transposedLoads.contains(op)) {
    // Stored [N, K] (K innermost, in atoms of `atom` columns): the block's
    // transpose, as the dot reads it.
    staged[op.getResult()] = {buf, cIndex(b, l, 0), cols, rows, true, atom};
    if (failed(lowerLoad(op, b, map)))
      return failure();
    pendingStages.push_back({t, map.lookup(op.getResult()), buf, atom, inLoop,
                             true, /*transpose=*/true});
    return success();
  }
  staged[op.getResult()] = {buf, cIndex(b, l, 0), rows, cols, false, atom};
  if (widened) {
    // The loads go out now; their f16 image is stored once an operation
    // reads shared memory (flushPendingStages), with the loads of the
    // other operands in flight too.
    if (failed(lowerLoad(op, b, map)))
      return failure();
    pendingStages.push_back({t, map.lookup(op.getResult()), buf,
                             atom ? atom : cols, inLoop, atom != 0});
    return success();
  }
  // In a loop, the previous iteration's reads come first.
  if (inLoop)
    gpu::BarrierOp::create(b, l);
  bool async = useAsyncCopy(op);
  copyToShared(b, op, map, buf, cIndex(b, l, 0), async);
  if (async) {
    Value token = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, l, nvgpu::DeviceAsyncTokenType::get(b.getContext()), ValueRange{});
    nvgpu::DeviceAsyncWaitOp::create(b, l, token, b.getI32IntegerAttr(0));
  }
  fenceForWgmma(b, l, atom != 0);
  gpu::BarrierOp::create(b, l);
  return success();
}

bool KernelLowering::keepsPendingStages(Operation *op) {
  // The stores stay in the block of their loads.
  if (op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (!touchesTensors(op))
    return true;
  if (auto ld = dyn_cast<LoadOp>(op))
    return stagedLoads.contains(op) &&
           (widenedBlock(ld) || transposedLoads.contains(op));
  if (!(isa<ReshapeOp, TransOp, ConvertLayoutOp>(op) || widening(op)) ||
      !staged.count(op->getOperand(0)))
    return false;
  // A conversion used in another block reads its fragments here.
  return llvm::all_of(op->getResult(0).getUsers(), [&](Operation *u) {
    return u->getBlock() == op->getBlock();
  });
}

void KernelLowering::flushPendingStages(OpBuilder &b, Location l) {
  if (pendingStages.empty())
    return;
  if (llvm::any_of(pendingStages,
                   [](const PendingStage &p) { return p.inLoop; }))
    gpu::BarrierOp::create(b, l);
  for (const PendingStage &p : pendingStages) {
    if (p.transpose) {
      storeTransposed(b, l, p.type, p.regs, p.buffer, p.atom);
      continue;
    }
    auto vt = cast<VectorType>(p.regs.getType());
    Value wide = arith::ExtFOp::create(
        b, l, VectorType::get(vt.getShape(), b.getF16Type()), p.regs);
    storeStaged(b, l, p.type, wide, p.buffer, p.atom);
  }
  // Generic-proxy stores before wgmma's (async-proxy) reads.
  fenceForWgmma(b, l, llvm::any_of(pendingStages, [](const PendingStage &p) {
                  return p.wgmma;
                }));
  gpu::BarrierOp::create(b, l);
  pendingStages.clear();
}

/// A builder for the stores of the threads that hold their own elements:
/// threads past a replicated dimension's first position hold copies and
/// skip them.
static OpBuilder ownCopies(OpBuilder &b, Location l, const ThreadBase &tb) {
  if (!tb.duplicate)
    return b;
  Value own = arith::XOrIOp::create(
      b, l, tb.duplicate, arith::ConstantIntOp::create(b, l, b.getI1Type(), 1));
  return scf::IfOp::create(b, l, own, /*withElse=*/false).getThenBodyBuilder();
}

void KernelLowering::storeStaged(OpBuilder &b, Location l, RankedTensorType t,
                                 Value regs, Value buffer, int64_t atom) {
  Attribute layout = getLayout(t);
  ArrayRef<int64_t> shape = t.getShape();
  int64_t rank = shape.size(), rows = shape[rank - 2], cols = shape[rank - 1];
  const ThreadBase &tb = baseFor(layout, shape);
  auto offs = getRegisterOffsets(layout, shape);
  // Runs of consecutive registers along the rows, at most one 16-byte
  // chunk each (the swizzle moves whole chunks).
  int64_t run =
      getContiguousDim(layout) == rank - 1
          ? std::min<int64_t>(8, getContiguousRegisters(layout, shape))
          : 1;
  while (run > 1 && 8 % run != 0)
    --run;
  Swizzle sw(atom);
  OpBuilder ib = ownCopies(b, l, tb);
  for (int64_t r = 0; r < int64_t(offs.size()); r += run) {
    Value row = arith::AddIOp::create(ib, l, tb.base[rank - 2],
                                      cIndex(ib, l, offs[r][rank - 2]));
    Value col = arith::AddIOp::create(ib, l, tb.base[rank - 1],
                                      cIndex(ib, l, offs[r][rank - 1]));
    Value chunk = arith::DivUIOp::create(ib, l, col, cIndex(ib, l, 8));
    Value within = arith::RemUIOp::create(ib, l, col, cIndex(ib, l, 8));
    Value at = arith::AddIOp::create(
        ib, l, sw.blockOffset(ib, l, rows, cols, row, chunk), within);
    auto lanes = llvm::to_vector(llvm::seq<int64_t>(r, r + run));
    Value part = vector::ShuffleOp::create(ib, l, regs, regs, lanes);
    vector::StoreOp::create(ib, l, part, buffer, ValueRange{at});
  }
}

void KernelLowering::storeTransposed(OpBuilder &b, Location l,
                                     RankedTensorType t, Value regs,
                                     Value buffer, int64_t atom) {
  Attribute layout = getLayout(t);
  ArrayRef<int64_t> shape = t.getShape();
  int64_t k = shape[0], n = shape[1];
  const ThreadBase &tb = baseFor(layout, shape);
  auto offs = getRegisterOffsets(layout, shape);
  int64_t bytes = t.getElementTypeBitWidth() / 8, chunkElems = 16 / bytes;
  Swizzle sw(atom, bytes);
  OpBuilder ib = ownCopies(b, l, tb);
  for (int64_t r = 0; r < int64_t(offs.size()); ++r) {
    // Element (kk, nn) of the tile is element (nn, kk) of the block.
    Value kk =
        arith::AddIOp::create(ib, l, tb.base[0], cIndex(ib, l, offs[r][0]));
    Value nn =
        arith::AddIOp::create(ib, l, tb.base[1], cIndex(ib, l, offs[r][1]));
    Value chunk = arith::DivUIOp::create(ib, l, kk, cIndex(ib, l, chunkElems));
    Value within = arith::RemUIOp::create(ib, l, kk, cIndex(ib, l, chunkElems));
    Value at = arith::AddIOp::create(
        ib, l, sw.blockOffset(ib, l, n, k, nn, chunk), within);
    Value x = vector::ExtractOp::create(ib, l, regs, r);
    memref::StoreOp::create(ib, l, x, buffer, ValueRange{at});
  }
}

bool KernelLowering::pipelineable(LoadOp op, scf::ForOp loop,
                                  SmallVector<Operation *> &slice) {
  // A widened fp8 block goes through registers at its iteration.
  if (op->getParentOp() != loop || widenedBlock(op) ||
      transposedLoads.contains(op))
    return false;
  SetVector<Operation *> ops;
  SmallVector<Value> work(op.getOffsets().begin(), op.getOffsets().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == loop.getInductionVar())
      continue;
    if (auto a = dyn_cast<BlockArgument>(v)) {
      if (loop->isAncestor(a.getOwner()->getParentOp()))
        return false; // an iteration argument
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!loop->isAncestor(def))
      continue;
    if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0 ||
        !isMemoryEffectFree(def) || touchesTensors(def))
      return false;
    if (ops.insert(def))
      llvm::append_range(work, def->getOperands());
  }
  slice.assign(ops.begin(), ops.end());
  llvm::sort(slice,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return true;
}

bool KernelLowering::tensorCopy(LoadOp op, IRMapping &map, BlockArgument &src) {
  if (!useAsyncCopy(op) || !tensorCopyShape(op))
    return false;
  src = dyn_cast<BlockArgument>(map.lookup(op.getSource()));
  return src && src.getOwner() == entryBlock;
}

bool KernelLowering::tensorCopyShape(LoadOp op) {
  if (!tensorCopies || !atomColumns.count(op) ||
      alignmentOf(op.getSource()) == false ||
      !tessera::hasUnitInnerStride(
          cast<MemRefType>(op.getSource().getType())) ||
      !isa<BlockArgument>(op.getSource()))
    return false;
  // At most five dimensions and 256 elements per box dimension; the
  // swizzle span is the atom's row.
  RankedTensorType t = op.getType();
  int64_t rank = t.getRank();
  int64_t atomBytes = atomColumns.lookup(op) * t.getElementTypeBitWidth() / 8;
  return rank <= 5 && t.getShape()[rank - 2] <= 256 &&
         (atomBytes == 32 || atomBytes == 64 || atomBytes == 128);
}

Value KernelLowering::tensorMapFor(LoadOp op, BlockArgument src) {
  RankedTensorType t = op.getType();
  SmallVector<int64_t> box(t.getShape());
  box.back() = atomColumns.lookup(op);
  int64_t swizzle = box.back() * t.getElementTypeBitWidth() / 8;
  for (const TensorMap &m : tensorMaps)
    if (m.source == src.getArgNumber() && m.box == box)
      return m.descriptor;
  MLIRContext *ctx = kernel.getContext();
  Location l = op.getLoc();
  unsigned index = kernel.getNumArguments();
  // A 128-byte CUtensorMap, 64-byte aligned, passed by value.
  (void)kernel.insertArgument(
      index, LLVM::LLVMPointerType::get(ctx),
      DictionaryAttr::get(
          ctx,
          {NamedAttribute(StringAttr::get(ctx, "llvm.align"),
                          IntegerAttr::get(IntegerType::get(ctx, 64), 64))}),
      l);
  nvgpu::TensorMapSwizzleKind kind =
      swizzle == 128  ? nvgpu::TensorMapSwizzleKind::SWIZZLE_128B
      : swizzle == 64 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_64B
                      : nvgpu::TensorMapSwizzleKind::SWIZZLE_32B;
  auto type = nvgpu::TensorMapDescriptorType::get(
      ctx,
      MemRefType::get(box, t.getElementType(), MemRefLayoutAttrInterface(),
                      workgroupSpace(ctx)),
      kind, nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value descriptor = UnrealizedConversionCastOp::create(
                         *entry, l, type, entryBlock->getArgument(index))
                         .getResult(0);
  tensorMaps.push_back({src.getArgNumber(), box, swizzle, descriptor});
  return descriptor;
}

bool KernelLowering::producerComputable(LoadOp op) {
  SmallVector<Value> work(op.getOffsets());
  for (Operation *p = op->getParentOp(); p && p != kernel;
       p = p->getParentOp()) {
    if (auto f = dyn_cast<scf::ForOp>(p))
      work.append({f.getLowerBound(), f.getUpperBound(), f.getStep()});
    else if (auto i = dyn_cast<scf::IfOp>(p))
      work.push_back(i.getCondition());
  }
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    // A loop-carried value: its initial and yielded values.
    auto carried = [&](scf::ForOp f, unsigned i) {
      work.push_back(f.getInitArgs()[i]);
      work.push_back(f.getBody()->getTerminator()->getOperand(i));
    };
    if (auto a = dyn_cast<BlockArgument>(v)) {
      if (auto f = dyn_cast<scf::ForOp>(a.getOwner()->getParentOp());
          f && a.getArgNumber() > 0)
        carried(f, a.getArgNumber() - 1);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (auto f = dyn_cast<scf::ForOp>(def)) {
      carried(f, cast<OpResult>(v).getResultNumber());
      work.append({f.getLowerBound(), f.getUpperBound(), f.getStep()});
      continue;
    }
    if (!isMemoryEffectFree(def))
      return false;
    work.append(def->operand_begin(), def->operand_end());
    def->walk([&](scf::YieldOp y) {
      work.append(y->operand_begin(), y->operand_end());
    });
  }
  return true;
}

LogicalResult KernelLowering::lowerPipelinedLoop(scf::ForOp loop,
                                                 ArrayRef<LoadOp> loads,
                                                 OpBuilder &b, IRMapping &map) {
  Location l = loop.getLoc();
  MLIRContext *ctx = b.getContext();
  struct Pipe {
    LoadOp op;
    SmallVector<Operation *> slice;
    Value buffer;
    int64_t rows, cols;
    bool async;
    /// Copied by TMA through `descriptor`.
    bool tma = false;
    Value descriptor;
  };
  // A wgmma dot that only carries its accumulator from one iteration to
  // the next keeps its products in flight until the next iteration's wait:
  // one more slot, so that the copies never overwrite the slot those
  // products read (the copies of iteration j + ring - 1 go to the slot of
  // iteration j - 2, whose group the wait of iteration j - 1 completed).
  DotOp inFlight;
  for (Operation &o : *loop.getBody()) {
    auto d = dyn_cast<DotOp>(o);
    if (!d || !wgmmaDots.contains(d) || !d.getResult().hasOneUse())
      continue;
    auto acc = dyn_cast<BlockArgument>(d.getAcc());
    auto *yield = *d.getResult().getUsers().begin();
    LoadOp sa = stagedSource(d.getLhs()), sb = stagedSource(d.getRhs());
    if (acc && acc.getOwner() == loop.getBody() && acc.getArgNumber() > 0 &&
        isa<scf::YieldOp>(yield) &&
        yield->getOperand(acc.getArgNumber() - 1) == d.getResult() &&
        llvm::is_contained(loads, sa) && llvm::is_contained(loads, sb))
      inFlight = d;
  }
  int64_t slots = inFlight ? ring + 1 : ring;
  // TMA copies complete on mbarriers whose phases the loop counts: only a
  // loop that runs once per program uses them. In a persistent kernel the
  // loop runs once per program its block runs, and carries the ring's
  // slot and phase from one run to the next (the mbarriers are
  // initialised once, at the kernel's entry).
  bool outermost = !enclosingLoop(loop);
  bool continued = outermost && programLoop(loop);

  SmallVector<Pipe> pipes;
  for (LoadOp ld : loads) {
    Pipe p;
    p.op = ld;
    pipelineable(ld, loop, p.slice);
    RankedTensorType t = ld.getType();
    int64_t rank = t.getRank();
    p.rows = t.getShape()[rank - 2];
    p.cols = t.getShape()[rank - 1];
    p.buffer = sharedBuffer(b, l, slots * p.rows * p.cols, t.getElementType(),
                            atomColumns.count(ld) ? 1024 : 16);
    p.async = useAsyncCopy(ld);
    BlockArgument src;
    if (outermost && tensorCopy(ld, map, src)) {
      p.tma = true;
      p.descriptor = tensorMapFor(ld, src);
    }
    pipes.push_back(std::move(p));
  }
  bool anyTma = llvm::any_of(pipes, [](const Pipe &p) { return p.tma; });
  bool anyCp = llvm::any_of(pipes, [](const Pipe &p) { return !p.tma; });
  // A ring of TMA copies only is fed by the producer warpgroup of a
  // specialised kernel: a second mbarrier per slot counts the consumer
  // threads' releases of the slot, which the producer waits for before it
  // fills the slot again (the consumers' own barrier before each iteration's
  // copies is gone).
  bool producerFed = specialise && anyTma && !anyCp;
  fedRings |= producerFed;
  Value empties;
  UnitAttr producerMark = b.getUnitAttr();
  auto produces = [&](Operation *op) {
    if (producerFed)
      op->setAttr("tile.producer", producerMark);
    return op;
  };
  // One mbarrier per slot, initialised by thread 0 for one arrival (its
  // expect-tx) plus the stage's transaction bytes.
  Value bars, leader;
  int64_t stageBytes = 0;
  // The ring's state a continued loop starts from: slot, phase parity.
  Value ringState;
  Type i32 = b.getI32Type();
  auto c32 = [&](OpBuilder &ob, int64_t v) {
    return arith::ConstantIntOp::create(ob, l, i32, v).getResult();
  };
  if (anyTma) {
    // The producer's barriers are initialised where every thread of the
    // block passes, before the kernel splits.
    OpBuilder &ib = continued || producerFed ? *entry : b;
    auto groupType =
        nvgpu::MBarrierGroupType::get(ctx, workgroupSpace(ctx), slots);
    bars = nvgpu::MBarrierCreateOp::create(ib, l, groupType);
    leader = arith::CmpIOp::create(ib, l, arith::CmpIPredicate::eq, tid,
                                   cIndex(ib, l, 0));
    for (int64_t s = 0; s < slots; ++s)
      nvgpu::MBarrierInitOp::create(ib, l, bars, cIndex(ib, l, 1),
                                    cIndex(ib, l, s), leader);
    if (producerFed) {
      empties = nvgpu::MBarrierCreateOp::create(ib, l, groupType);
      for (int64_t s = 0; s < slots; ++s)
        nvgpu::MBarrierInitOp::create(ib, l, empties, cIndex(ib, l, warps * 32),
                                      cIndex(ib, l, s), leader);
      if (!producerLeader)
        producerLeader =
            arith::CmpIOp::create(*entry, l, arith::CmpIPredicate::eq, tid,
                                  cIndex(*entry, l, warps * 32));
    }
    // The initialised barriers visible to the copies' async proxy and to
    // every thread before any waits.
    fenceForWgmma(ib, l, true);
    Operation *ready = gpu::BarrierOp::create(ib, l);
    if (producerFed)
      ready->setAttr("tile.ring_entry", producerMark);
    if (continued) {
      ringState = memref::AllocaOp::create(ib, l, MemRefType::get({2}, i32));
      for (int64_t i = 0; i < 2; ++i)
        memref::StoreOp::create(ib, l, c32(ib, 0), ringState,
                                ValueRange{cIndex(ib, l, i)});
    }
    for (Pipe &p : pipes)
      if (p.tma)
        stageBytes +=
            p.rows * p.cols * p.op.getType().getElementTypeBitWidth() / 8;
  }
  Value lb = map.lookup(loop.getLowerBound());
  Value ub = map.lookup(loop.getUpperBound());
  Value step = map.lookup(loop.getStep());
  Type ivType = lb.getType();
  auto ivAt = [&](OpBuilder &ob, Value iv, int64_t k) -> Value {
    if (k == 0)
      return iv;
    Value c = isa<IndexType>(ivType)
                  ? cIndex(ob, l, k)
                  : arith::ConstantIntOp::create(ob, l, ivType, k).getResult();
    return arith::AddIOp::create(ob, l, iv,
                                 arith::MulIOp::create(ob, l, step, c));
  };
  auto before = [&](OpBuilder &ob, Value iv) {
    return arith::CmpIOp::create(ob, l,
                                 loop.getUnsignedCmp()
                                     ? arith::CmpIPredicate::ult
                                     : arith::CmpIPredicate::slt,
                                 iv, ub);
  };
  // The copies of the iteration at `iv` into ring slot `slot`. cp.async
  // copies past the last iteration read nothing and zero-fill their slot,
  // with no branch (a branch on the loop's own bound ahead of the loop
  // gives the path that skips it blocks of its own, where the
  // accumulator's initial values are then defined: ptxas serialises wgmma
  // pipelines that such definitions reach).
  bool allAsync = llvm::all_of(pipes, [](const Pipe &p) { return p.async; });
  // `fill`: the phase parity of the slot's fill (for the producer's wait
  // on its release).
  auto issue = [&](OpBuilder &ob, Value iv, Value slot, Value fill) -> Value {
    Value pred = before(ob, iv);
    // TMA: thread 0 (the producer's first thread) announces the stage's
    // bytes, then copies each atom of each block; nothing is issued past
    // the last iteration.
    if (anyTma) {
      Value go = arith::AndIOp::create(ob, l, pred,
                                       producerFed ? producerLeader : leader);
      if (producerFed) {
        // The slot's previous fill released (a fresh barrier's phase "-1"
        // counts as released).
        auto released = scf::IfOp::create(ob, l, pred, /*withElse=*/false);
        OpBuilder wb = released.getThenBodyBuilder();
        produces(nvgpu::MBarrierTryWaitParityOp::create(
            wb, l, empties,
            arith::XOrIOp::create(
                wb, l, fill,
                arith::ConstantIntOp::create(wb, l, wb.getI1Type(), 1)),
            cIndex(wb, l, kMbarrierWaitTicks), slot));
        produces(released);
      }
      produces(nvgpu::MBarrierArriveExpectTxOp::create(
          ob, l, bars, cIndex(ob, l, stageBytes), slot, go));
      for (Pipe &p : pipes) {
        if (!p.tma)
          continue;
        IRMapping m = map;
        m.map(loop.getInductionVar(), iv);
        for (Operation *op : p.slice)
          ob.clone(*op, m);
        RankedTensorType t = p.op.getType();
        int64_t rank = t.getRank();
        int64_t bytes = t.getElementTypeBitWidth() / 8;
        int64_t atom = atomColumns.lookup(p.op);
        // The box, as the tensor map's type gives it.
        MemRefType dstType =
            cast<nvgpu::TensorMapDescriptorType>(p.descriptor.getType())
                .getTensor();
        Value shift =
            cast<memref::ViewOp>(p.buffer.getDefiningOp()).getByteShift();
        Value slotShift = arith::AddIOp::create(
            ob, l, shift,
            arith::MulIOp::create(ob, l, slot,
                                  cIndex(ob, l, p.rows * p.cols * bytes)));
        // Coordinates innermost first.
        SmallVector<Value> offsets;
        for (Value o : p.op.getOffsets()) {
          Value v = m.lookup(o);
          offsets.push_back(
              v.getType().isIndex()
                  ? v
                  : arith::IndexCastOp::create(ob, l, ob.getIndexType(), v)
                        .getResult());
        }
        for (int64_t a = 0; a * atom < p.cols; ++a) {
          Value dst = memref::ViewOp::create(
              ob, l, dstType, arena,
              arith::AddIOp::create(ob, l, slotShift,
                                    cIndex(ob, l, a * p.rows * atom * bytes)),
              ValueRange{});
          SmallVector<Value> coords;
          coords.push_back(arith::AddIOp::create(ob, l, offsets[rank - 1],
                                                 cIndex(ob, l, a * atom)));
          for (int64_t d = rank - 2; d >= 0; --d)
            coords.push_back(offsets[d]);
          produces(nvgpu::TmaAsyncLoadOp::create(
              ob, l, dst, bars, p.descriptor, coords, slot,
              /*multicastMask=*/Value(), go));
        }
      }
    }
    if (!anyCp)
      return Value();
    OpBuilder ib = ob;
    if (!allAsync) {
      auto ifOp = scf::IfOp::create(ob, l, pred, /*withElse=*/false);
      ib = ifOp.getThenBodyBuilder();
      pred = Value();
    }
    for (Pipe &p : pipes) {
      if (p.tma)
        continue;
      IRMapping m = map;
      m.map(loop.getInductionVar(), iv);
      for (Operation *op : p.slice)
        ib.clone(*op, m);
      Value base =
          arith::MulIOp::create(ib, l, slot, cIndex(ib, l, p.rows * p.cols));
      copyToShared(ib, p.op, m, p.buffer, base, p.async, pred);
    }
    return nvgpu::DeviceAsyncCreateGroupOp::create(
               ob, l, nvgpu::DeviceAsyncTokenType::get(ctx), ValueRange{})
        .getResult();
  };
  // The slot of the loop's first iteration and its phase parity.
  Value firstSlot = c32(b, 0);
  Value firstParity = arith::ConstantIntOp::create(b, l, b.getI1Type(), 0);
  if (ringState) {
    firstSlot =
        memref::LoadOp::create(b, l, ringState, ValueRange{cIndex(b, l, 0)});
    firstParity = arith::TruncIOp::create(
        b, l, b.getI1Type(),
        memref::LoadOp::create(b, l, ringState, ValueRange{cIndex(b, l, 1)}));
  }
  // Slot `slot32 + k` modulo the slots, as an index (k < slots).
  auto slotAfter = [&](OpBuilder &ob, Value slot32, int64_t k) -> Value {
    Value ahead = arith::AddIOp::create(ob, l, slot32, c32(ob, k));
    Value wraps = arith::CmpIOp::create(ob, l, arith::CmpIPredicate::uge, ahead,
                                        c32(ob, slots));
    Value s = arith::SelectOp::create(
        ob, l, wraps, arith::SubIOp::create(ob, l, ahead, c32(ob, slots)),
        ahead);
    return arith::IndexCastUIOp::create(ob, l, ob.getIndexType(), s);
  };
  // The phase parity of slot `slot32 + k` when `slot32`'s is `parity`: it
  // flips where the ring wraps.
  auto parityAfter = [&](OpBuilder &ob, Value slot32, Value parity,
                         int64_t k) -> Value {
    Value wraps = arith::CmpIOp::create(
        ob, l, arith::CmpIPredicate::uge,
        arith::AddIOp::create(ob, l, slot32, c32(ob, k)), c32(ob, slots));
    return arith::XOrIOp::create(ob, l, parity, wraps);
  };
  // Prologue: the first ring - 1 iterations' copies in flight.
  Value token;
  for (int64_t s = 0; s + 1 < ring; ++s)
    token = issue(b, ivAt(b, lb, s),
                  ringState ? slotAfter(b, firstSlot, s) : cIndex(b, l, s),
                  producerFed ? parityAfter(b, firstSlot, firstParity, s)
                              : Value());

  SmallVector<Value> inits;
  for (Value v : loop.getInitArgs())
    inits.push_back(map.lookup(v));
  // The slot this iteration reads, counted in 32 bits.
  inits.push_back(firstSlot);
  // With TMA, the phase parity of the slot's mbarrier.
  if (anyTma)
    inits.push_back(firstParity);
  auto nl = scf::ForOp::create(b, l, lb, ub, step, inits);
  nl.setUnsignedCmp(loop.getUnsignedCmp());
  Block *nb = nl.getBody();
  if (!nb->empty() && nb->back().hasTrait<OpTrait::IsTerminator>())
    nb->back().erase();
  OpBuilder ib = OpBuilder::atBlockEnd(nb);
  Value iv = nl.getInductionVar();
  unsigned carried = anyTma ? 2 : 1;
  Value slot32 = nl.getRegionIterArgs()[inits.size() - carried];
  Value slot = arith::IndexCastUIOp::create(ib, l, b.getIndexType(), slot32);
  Value parity = anyTma ? nl.getRegionIterArgs().back() : Value();
  if (inFlight)
    asyncDots.insert(inFlight);
  // This iteration's copies have landed (ring - 2 younger groups may
  // still fly) and every thread is done with the slot the next copies
  // overwrite.
  if (anyCp) {
    nvgpu::DeviceAsyncWaitOp::create(ib, l, token,
                                     ib.getI32IntegerAttr(ring - 2));
    fenceForWgmma(ib, l, llvm::any_of(pipes, [&](const Pipe &p) {
                    return !p.tma && atomColumns.count(p.op);
                  }));
  }
  if (anyTma)
    nvgpu::MBarrierTryWaitParityOp::create(
        ib, l, bars, parity, cIndex(ib, l, kMbarrierWaitTicks), slot);
  // A persistent kernel's loop over programs, pipelined for the loads at
  // the top of a program (the next programs' blocks copied while this one
  // computes): the previous program's shared-memory writes are ordered
  // before this one's TMA copies, as in the loop's plain form.
  // A producer-fed ring has no such writes to order (its slots are
  // written by TMA only, and no buffer of the kernel is reused) and waits
  // for the slot's release instead.
  if (loop->hasAttr("tile.program_loop")) {
    nl->setAttr("tile.program_loop", b.getUnitAttr());
    nl->setAttr("llvm.loop_annotation", noUnroll(ctx));
    if (!producerFed)
      fenceForWgmma(ib, l, warpgroupMma);
  }
  if (!producerFed)
    gpu::BarrierOp::create(ib, l);
  // The copies run ring - 1 iterations ahead: slot + ring - 1, modulo
  // the slots.
  issue(ib, ivAt(ib, iv, ring - 1), slotAfter(ib, slot32, ring - 1),
        producerFed ? parityAfter(ib, slot32, parity, ring - 1) : Value());
  for (Pipe &p : pipes)
    staged[p.op.getResult()] = {
        p.buffer,
        arith::MulIOp::create(ib, l, slot, cIndex(ib, l, p.rows * p.cols)),
        p.rows,
        p.cols,
        false,
        atomColumns.lookup(p.op)};
  map.map(loop.getInductionVar(), iv);
  for (auto [a, n] : llvm::zip(loop.getRegionIterArgs(),
                               nl.getRegionIterArgs().drop_back(carried)))
    map.map(a, n);
  if (failed(lowerBlock(*loop.getBody(), ib, map)))
    return failure();
  auto yield = cast<scf::YieldOp>(nb->back());
  OpBuilder yb(yield);
  // The consumers release the slot whose products are complete: this
  // iteration's, or with products in flight the previous iteration's (the
  // last one's after the loop).
  auto release = [&](OpBuilder &ob, Value slotIndex) {
    nvgpu::MBarrierArriveOp::create(ob, l, nvgpu::MBarrierTokenType::get(ctx),
                                    empties, slotIndex);
  };
  if (producerFed && inFlight) {
    auto notFirst = scf::IfOp::create(
        yb, l, arith::CmpIOp::create(yb, l, arith::CmpIPredicate::ne, iv, lb),
        /*withElse=*/false);
    OpBuilder rb = notFirst.getThenBodyBuilder();
    release(rb, slotAfter(rb, slot32, slots - 1));
  } else if (producerFed) {
    release(yb, slot);
  }
  Value next = arith::AddIOp::create(yb, l, slot32, c32(yb, 1));
  Value wrap = arith::CmpIOp::create(yb, l, arith::CmpIPredicate::eq, next,
                                     c32(yb, slots));
  next = arith::SelectOp::create(yb, l, wrap, c32(yb, 0), next);
  yield->insertOperands(yield->getNumOperands(), ValueRange{next});
  if (anyTma)
    yield->insertOperands(
        yield->getNumOperands(),
        ValueRange{arith::XOrIOp::create(yb, l, parity, wrap)});
  for (Pipe &p : pipes)
    staged.erase(p.op.getResult());
  asyncDots.erase(inFlight);
  // Nothing stays in flight past the loop (TMA copies are issued for
  // iterations that run only, and each iteration waits for its own).
  if (anyCp)
    nvgpu::DeviceAsyncWaitOp::create(b, l, token, b.getI32IntegerAttr(0));
  if (inFlight)
    NVVM::WgmmaWaitGroupSyncOp::create(b, l, 0);
  if (producerFed && inFlight) {
    auto ran = scf::IfOp::create(b, l, before(b, lb), /*withElse=*/false);
    OpBuilder rb = ran.getThenBodyBuilder();
    release(rb, slotAfter(rb, nl.getResult(nl.getNumResults() - 2), slots - 1));
  }
  for (auto [a, n] : llvm::zip(loop.getResults(), nl.getResults()))
    map.map(a, n);
  // Where the next run of a continued loop starts.
  if (ringState) {
    unsigned n = nl.getNumResults();
    memref::StoreOp::create(b, l, nl.getResult(n - 2), ringState,
                            ValueRange{cIndex(b, l, 0)});
    memref::StoreOp::create(
        b, l, arith::ExtUIOp::create(b, l, i32, nl.getResult(n - 1)), ringState,
        ValueRange{cIndex(b, l, 1)});
  }
  return success();
}

Value KernelLowering::loadFragments(OpBuilder &b, Location l, const Staged &st,
                                    unsigned opIdx, MmaLayoutAttr mma,
                                    int64_t rep, int64_t kStep, int64_t tiles) {
  ArrayRef<int64_t> w = mma.getWarpsPerCTA();
  int64_t wm = w[0], wn = w[1], cols = st.cols;
  // Which stored block the fragments come from: the left operand stored
  // M x K (0) or K x M (1), the right one K x N (2) or N x K (3).
  int64_t kind = opIdx * 2 + (st.transposed ? 1 : 0);
  // ldmatrix.trans when a thread's pairs run down the stored columns.
  bool trans = kind == 1 || kind == 2;
  int64_t rowC = 0, chunkC = 0;
  switch (kind) {
  case 0:
    rowC = rep * 16 * wm;
    chunkC = 2 * kStep;
    break;
  case 1:
    rowC = 16 * kStep;
    chunkC = rep * 2 * wm;
    break;
  case 2:
    rowC = 16 * kStep;
    chunkC = rep * wn;
    break;
  default:
    rowC = rep * 8 * wn;
    chunkC = 2 * kStep;
    break;
  }
  // The row and chunk lane l supplies (for 8x8 block l / 8), less the
  // constants, computed once per thread: `rowT * cols` and the swizzled
  // chunk `X = chunkT ^ phase`, times 8. chunkT stays below `chunkBound`,
  // a power of two that divides chunkC, so chunkT + chunkC swizzles to
  // X ^ chunkC, which is X + chunkC when chunkC is also a multiple of the
  // swizzle's period.
  Swizzle sw(cols);
  int64_t chunkBound = kind == 0 || kind == 3 ? 2 : kind == 1 ? 2 * wm : 2 * wn;
  std::string key = "frag:" + std::to_string(kind) + ":" + std::to_string(wm) +
                    "x" + std::to_string(wn) + ":" + std::to_string(cols);
  if (!entryValues.count(key)) {
    OpBuilder &e = *entry;
    auto c = [&](int64_t v) { return cIndex(e, l, v); };
    auto add = [&](Value x, Value y) {
      return arith::AddIOp::create(e, l, x, y).getResult();
    };
    auto mul = [&](Value x, int64_t k) {
      return arith::MulIOp::create(e, l, x, c(k)).getResult();
    };
    Value wM = arith::DivUIOp::create(e, l, warp, c(wn));
    Value wN = arith::RemUIOp::create(e, l, warp, c(wn));
    Value r8 = arith::RemUIOp::create(e, l, lane, c(8));
    Value blk = arith::DivUIOp::create(e, l, lane, c(8)); // 8x8 block
    Value lo = arith::RemUIOp::create(e, l, blk, c(2));   // block % 2
    Value hi = arith::DivUIOp::create(e, l, blk, c(2));   // block / 2
    Value rowT, chunkT;
    switch (kind) {
    case 0: // blocks: rows +0/+8, then columns +0/+8
      rowT = add(add(mul(wM, 16), mul(lo, 8)), r8);
      chunkT = hi;
      break;
    case 1: // blocks: M +0/+8, then K +0/+8
      rowT = add(mul(hi, 8), r8);
      chunkT = add(mul(wM, 2), lo);
      break;
    case 2: // blocks: K +0/+8, then the next N repetition
      rowT = add(mul(lo, 8), r8);
      chunkT = add(wN, mul(hi, wn));
      break;
    default: // blocks: K +0/+8, then the next N repetition
      rowT = add(add(mul(wN, 8), mul(hi, 8 * wn)), r8);
      chunkT = lo;
      break;
    }
    Value rowOff = mul(rowT, cols);
    Value x8 =
        mul(arith::XOrIOp::create(e, l, chunkT, sw.phase(e, l, rowT)), 8);
    entryValues[key + ":row"] = rowOff;
    entryValues[key + ":x8"] = x8;
    entryValues[key] = add(rowOff, x8);
  }
  int64_t period = llvm::PowerOf2Ceil(std::max(chunkBound, sw.maxPhase));
  Value idx;
  if (chunkC % period == 0) {
    idx = arith::AddIOp::create(b, l, st.base, entryValues[key]);
    if (chunkC * 8 + rowC * cols)
      idx = arith::AddIOp::create(b, l, idx,
                                  cIndex(b, l, chunkC * 8 + rowC * cols));
  } else {
    Value x = arith::XOrIOp::create(b, l, entryValues[key + ":x8"],
                                    cIndex(b, l, chunkC * 8));
    idx = arith::AddIOp::create(
        b, l, arith::AddIOp::create(b, l, st.base, entryValues[key + ":row"]),
        x);
    if (rowC)
      idx = arith::AddIOp::create(b, l, idx, cIndex(b, l, rowC * cols));
  }
  Type et = cast<MemRefType>(st.buffer.getType()).getElementType();
  return nvgpu::LdMatrixOp::create(b, l, VectorType::get({tiles, 2}, et),
                                   st.buffer, ValueRange{idx}, trans,
                                   static_cast<uint32_t>(tiles));
}

SmallVector<Value>
KernelLowering::stagedFragments(OpBuilder &b, Location l, const Staged &st,
                                unsigned opIdx, MmaLayoutAttr mma, int64_t reps,
                                int64_t kStep) {
  SmallVector<Value> frags;
  if (opIdx == 0) {
    for (int64_t i = 0; i < reps; ++i)
      frags.push_back(loadFragments(b, l, st, 0, mma, i, kStep, 4));
    return frags;
  }
  // Two N repetitions per ldmatrix.x4 (an odd last one: x2).
  for (int64_t j = 0; j < reps; j += 2) {
    if (j + 1 == reps) {
      frags.push_back(loadFragments(b, l, st, 1, mma, j, kStep, 2));
      break;
    }
    Value x = loadFragments(b, l, st, 1, mma, j, kStep, 4);
    frags.push_back(vector::ShuffleOp::create(b, l, x, x, {0, 1}));
    frags.push_back(vector::ShuffleOp::create(b, l, x, x, {2, 3}));
  }
  return frags;
}

SmallVector<DotOp> KernelLowering::dotsReading(LoadOp op) {
  SmallVector<DotOp> dots;
  SmallVector<Value> worklist{op.getResult()};
  while (!worklist.empty())
    for (Operation *user : worklist.pop_back_val().getUsers()) {
      if (auto d = dyn_cast<DotOp>(user))
        dots.push_back(d);
      else if (isa<ConvertLayoutOp, ReshapeOp, TransOp>(user) || widening(user))
        worklist.push_back(user->getResult(0));
    }
  return dots;
}

LoadOp KernelLowering::stagedSource(Value operand) {
  Value v = operand;
  while (Operation *def = v.getDefiningOp()) {
    if (auto ld = dyn_cast<LoadOp>(def))
      return stagedLoads.contains(ld) ? ld : LoadOp();
    if (!isa<ConvertLayoutOp, ReshapeOp, TransOp>(def) && !widening(def))
      return {};
    v = def->getOperand(0);
  }
  return {};
}

bool KernelLowering::planWgmma(DotOp d) {
  if (!warpgroupMma)
    return false;
  Type in = d.getLhs().getType().getElementType();
  // fp8 (k32) and tf32 (k8) operands: both from shared memory with K
  // innermost (wgmma reads them K-major only).
  bool kMajorOnly = isFloat8(in) || in.isF32();
  if (!(in.isF16() || in.isBF16() || kMajorOnly) ||
      d.getRhs().getType().getElementType() != in)
    return false;
  // K per instruction: 32 bytes of operands.
  int64_t kInstr = 256 / in.getIntOrFloatBitWidth();
  auto mma = dyn_cast<MmaLayoutAttr>(getLayout(d.getType()));
  ArrayRef<int64_t> shape = d.getType().getShape();
  if (!mma || mma.getWarpsPerCTA() != ArrayRef<int64_t>{warps, 1} ||
      !fitsWarpgroupGrid(shape, warps) ||
      d.getLhs().getType().getShape()[1] % kInstr != 0)
    return false;
  LoadOp a = stagedSource(d.getLhs()), bl = stagedSource(d.getRhs());
  // A may come from registers in the operand layout of the accumulator's
  // own mma layout: each warp's 16 rows per K step are then the m64k16
  // register fragment of its warpgroup.
  auto al = dyn_cast<DotOperandLayoutAttr>(getLayout(d.getLhs().getType()));
  bool aRegisters = !a && al && al.getOpIdx() == 0 && al.getParent() == mma;
  if ((!a && !aRegisters) || !bl || a == bl)
    return false;
  auto transposes = [](Value v) {
    int count = 0;
    while (Operation *def = v.getDefiningOp()) {
      if (isa<LoadOp>(def))
        break;
      count += isa<TransOp>(def);
      v = def->getOperand(0);
    }
    return count;
  };
  // A transposed block is stored K-major: one more transposition.
  int bTransposes = transposes(d.getRhs()) + transposedLoads.contains(bl);
  if (kMajorOnly &&
      (!a || transposes(d.getLhs()) % 2 != 0 || bTransposes % 2 != 1))
    return false;
  // Atoms as wide as the hardware's swizzles allow: 128, 64 or 32 bytes.
  auto atomOf = [&](LoadOp ld) -> int64_t {
    // A transposed block's stored rows run along its first dimension.
    ArrayRef<int64_t> shape = ld.getType().getShape();
    int64_t cols =
        transposedLoads.contains(ld) ? shape[shape.size() - 2] : shape.back();
    // A widened fp8 block is staged as its f16 image.
    int64_t bytes =
        widenedBlock(ld) ? 2 : ld.getType().getElementTypeBitWidth() / 8;
    for (int64_t w : {128, 64, 32})
      if (cols * bytes % w == 0)
        return w / bytes;
    return 0;
  };
  int64_t wa = a ? atomOf(a) : 0, wb = atomOf(bl);
  if ((a && !wa) || !wb)
    return false;
  if (a)
    atomColumns[a] = wa;
  atomColumns[bl] = wb;
  wgmmaDots.insert(d);
  return true;
}

Value KernelLowering::descriptor(OpBuilder &b, Location l, const Staged &st,
                                 Value offset, int64_t lbo, int64_t sbo) {
  Type i64 = b.getI64Type();
  auto c64 = [&](OpBuilder &ob, int64_t v) {
    return arith::ConstantIntOp::create(ob, l, i64, v).getResult();
  };
  // Bits 0-13: address / 16 (18 bits of the shared window); 16-29: LBO /
  // 16; 32-45: SBO / 16; 62-63: swizzle (1: 128 bytes, 2: 64, 3: 32).
  int64_t rowBytes = st.atom() * st.bytes();
  int64_t mode = rowBytes == 128 ? 1 : rowBytes == 64 ? 2 : 3;
  uint64_t fields = (uint64_t(mode) << 62) | (uint64_t(sbo / 16) << 32) |
                    (uint64_t(lbo / 16) << 16);
  // The buffer's descriptor once, in the entry block; offsets within it
  // add to the address field, which never carries over (shared memory
  // stays below the 256 KiB the field spans).
  Value &start = bufferDescriptor[{st.buffer, fields}];
  if (!start) {
    OpBuilder &e = *entry;
    Value address = arith::IndexCastOp::create(
        e, l, i64,
        memref::ExtractAlignedPointerAsIndexOp::create(e, l, st.buffer));
    start = arith::OrIOp::create(
        e, l,
        arith::AndIOp::create(e, l,
                              arith::ShRUIOp::create(e, l, address, c64(e, 4)),
                              c64(e, 0x3FFF)),
        c64(e, int64_t(fields)));
  }
  Value at = start;
  if (Value units = blockUnits(b, l, st))
    at = arith::AddIOp::create(b, l, at, units);
  if (offset)
    at = arith::AddIOp::create(b, l, at, offset);
  return at;
}

Value KernelLowering::blockUnits(OpBuilder &b, Location l, const Staged &st) {
  if (matchPattern(st.base, m_Zero()))
    return {};
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, l, i64, v).getResult();
  };
  int64_t bytes = st.bytes();
  // A slot of a ring is a constant multiple of the slot number.
  APInt per;
  auto mul = st.base.getDefiningOp<arith::MulIOp>();
  if (mul && matchPattern(mul.getRhs(), m_ConstantInt(&per)) &&
      per.getSExtValue() * bytes % 16 == 0) {
    int64_t step = per.getSExtValue() * bytes / 16;
    // A 32-bit slot number multiplies in 32 bits.
    auto narrow = mul.getLhs().getDefiningOp<arith::IndexCastUIOp>();
    if (narrow && narrow.getIn().getType().isInteger(32))
      return arith::ExtUIOp::create(
          b, l, i64,
          arith::MulIOp::create(
              b, l, narrow.getIn(),
              arith::ConstantIntOp::create(b, l, b.getI32Type(), step)));
    return arith::MulIOp::create(
        b, l, arith::IndexCastOp::create(b, l, i64, mul.getLhs()), c64(step));
  }
  return arith::DivUIOp::create(
      b, l,
      arith::MulIOp::create(
          b, l, arith::IndexCastOp::create(b, l, i64, st.base), c64(bytes)),
      c64(16));
}

LogicalResult KernelLowering::lowerWgmmaDot(DotOp op, OpBuilder &b,
                                            IRMapping &map) {
  Location l = op.getLoc();
  MLIRContext *ctx = b.getContext();
  RankedTensorType rt = op.getType();
  auto mma = cast<MmaLayoutAttr>(getLayout(rt));
  auto [mr, nr] = getMmaRepetitions(mma, rt.getShape());
  int64_t n = rt.getShape()[1];
  Type in = op.getLhs().getType().getElementType();
  // K per instruction: 32 bytes of operands (k16 for 16-bit, k32 for
  // fp8, k8 for tf32).
  int64_t kInstr = 256 / in.getIntOrFloatBitWidth();
  int64_t ks = op.getLhs().getType().getShape()[1] / kInstr;
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  auto stagedA = staged.find(op.getLhs());
  const Staged *sa = stagedA == staged.end() ? nullptr : &stagedA->second;
  const Staged &sb = staged.find(op.getRhs())->second;
  auto c64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, l, i64, v).getResult();
  };
  // A K-major operand (its stored rows run along M or N) steps along K
  // inside an atom and from atom to atom; an MN-major one (stored rows
  // run along K) steps 16 rows at a time and spans atoms along M or N
  // (LBO apart). SBO: eight stored rows.
  auto kMajor = [](const Staged &st, unsigned opIdx) {
    return (opIdx == 0) != st.transposed;
  };
  auto kStepBytes = [&](const Staged &st, unsigned opIdx, int64_t s) {
    int64_t w = st.atom(), k = kInstr * s, e = st.bytes();
    if (kMajor(st, opIdx))
      return (k / w) * st.rows * w * e + (k % w) * e;
    return k * w * e;
  };
  // Bytes from the first stored M row or N column to row `mn` of it.
  auto mnBytes = [&](const Staged &st, unsigned opIdx, int64_t mn) {
    int64_t w = st.atom(), e = st.bytes();
    if (kMajor(st, opIdx))
      return mn * w * e;
    return (mn / w) * st.rows * w * e;
  };
  auto lboOf = [&](const Staged &st, unsigned opIdx) -> int64_t {
    return kMajor(st, opIdx) ? 16 : st.rows * st.atom() * st.bytes();
  };
  // Warpgroup g of this thread holds rows 64 g + 16 warps i of repetition
  // i (warps along M).
  Value groupOffset;
  if (sa && warps > 4) {
    int64_t perGroup = mnBytes(*sa, 0, 64) / 16; // in 16-byte units
    std::string key = "wgmma:group:" + std::to_string(perGroup);
    if (!entryValues.count(key)) {
      OpBuilder &e = *entry;
      Value g = arith::DivUIOp::create(e, l, warp, cIndex(e, l, 4));
      entryValues[key] = arith::IndexCastOp::create(
          e, l, i64, arith::MulIOp::create(e, l, g, cIndex(e, l, perGroup)));
    }
    groupOffset = entryValues[key];
  }
  // SBO: eight stored rows.
  Value baseA = sa ? descriptor(b, l, *sa, groupOffset, lboOf(*sa, 0),
                                8 * sa->atom() * sa->bytes())
                   : Value();
  Value baseB =
      descriptor(b, l, sb, Value(), lboOf(sb, 1), 8 * sb.atom() * sb.bytes());
  // The accumulator of repetition i: registers (i nr + j) 4 + e are field
  // 4 j + e of wgmma's m64nNk16 accumulator.
  auto accType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(nr * 4, f32));
  // A zero accumulator is not moved into the registers: the first K step
  // ignores it (scale-d 0).
  Value zero = op.getAcc();
  while (auto c = zero.getDefiningOp<ConvertLayoutOp>())
    zero = c.getSource();
  bool fromZero = matchPattern(zero, m_AnyZeroFloat());
  Value accV = fromZero ? Value() : map.lookup(op.getAcc());
  SmallVector<Value> acc;
  for (int64_t i = 0; i < mr; ++i) {
    Value st = LLVM::PoisonOp::create(b, l, accType);
    for (int64_t f = 0; !fromZero && f < nr * 4; ++f)
      st = LLVM::InsertValueOp::create(
          b, l, st, vector::ExtractOp::create(b, l, accV, i * nr * 4 + f), f);
    acc.push_back(st);
  }
  auto type = in.isBF16()                 ? NVVM::WGMMATypes::bf16
              : in.isF32()                ? NVVM::WGMMATypes::tf32
              : isa<Float8E4M3FNType>(in) ? NVVM::WGMMATypes::e4m3
              : isa<Float8E5M2Type>(in)   ? NVVM::WGMMATypes::e5m2
                                          : NVVM::WGMMATypes::f16;
  auto layoutA =
      !sa || kMajor(*sa, 0) ? NVVM::MMALayout::row : NVVM::MMALayout::col;
  auto layoutB = kMajor(sb, 1) ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  // The accumulator (and A's) registers were written by other
  // instructions.
  NVVM::WgmmaFenceAlignedOp::create(b, l);
  SmallVector<Value> db;
  for (int64_t s = 0; s < ks; ++s)
    db.push_back(
        arith::AddIOp::create(b, l, baseB, c64(kStepBytes(sb, 1, s) / 16)));
  // A from registers: repetition i, K step s holds 8 elements, the m16k16
  // fragment of mma.sync (Layouts.cpp), which is the warp's slice of
  // wgmma's m64k16 A fragment; as 4 words.
  Value wordsA;
  if (!sa) {
    Value ra = map.lookup(op.getLhs());
    int64_t count = cast<VectorType>(ra.getType()).getNumElements();
    wordsA = vector::BitCastOp::create(
        b, l, VectorType::get({count / 2}, b.getI32Type()), ra);
  }
  for (int64_t i = 0; i < mr; ++i) {
    for (int64_t s = 0; s < ks; ++s) {
      if (!sa) {
        SmallVector<Value> words;
        for (int64_t w = 0; w < 4; ++w)
          words.push_back(
              vector::ExtractOp::create(b, l, wordsA, (i * ks + s) * 4 + w));
        acc[i] =
            registerWgmma(b, l, accType, acc[i], words, db[s], n, in.isBF16(),
                          layoutB == NVVM::MMALayout::row, !fromZero || s > 0);
        continue;
      }
      int64_t bytes = kStepBytes(*sa, 0, s) + mnBytes(*sa, 0, i * 16 * warps);
      Value da = arith::AddIOp::create(b, l, baseA, c64(bytes / 16));
      acc[i] = NVVM::WgmmaMmaAsyncOp::create(
          b, l, accType, acc[i], da, db[s],
          NVVM::MMAShapeAttr::get(ctx, 64, n, kInstr), type, type,
          NVVM::WGMMATypes::f32,
          fromZero && s == 0 ? NVVM::WGMMAScaleOut::zero
                             : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, layoutA, layoutB,
          /*satfinite=*/NVVM::MMAIntOverflowAttr());
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, l);
  // In a pipelined loop the group stays in flight until the next
  // iteration's products are issued (the loop waits for all after it).
  NVVM::WgmmaWaitGroupSyncOp::create(b, l, asyncDots.contains(op) ? 1 : 0);
  SmallVector<Value> regs;
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t f = 0; f < nr * 4; ++f)
      regs.push_back(LLVM::ExtractValueOp::create(b, l, acc[i], f));
  map.map(op.getResult(),
          vector::FromElementsOp::create(
              b, l, VectorType::get({int64_t(regs.size())}, f32), regs));
  return success();
}

LogicalResult KernelLowering::lowerDot(DotOp op, OpBuilder &b, IRMapping &map) {
  if (wgmmaDots.contains(op))
    return lowerWgmmaDot(op, b, map);
  Location l = op.getLoc();
  RankedTensorType rt = op.getType();
  auto mma = cast<MmaLayoutAttr>(getLayout(rt));
  auto [mr, nr] = getMmaRepetitions(mma, rt.getShape());
  int64_t ks = op.getLhs().getType().getShape()[1] / 16;
  Type in = op.getLhs().getType().getElementType();
  Type f32 = b.getF32Type();
  Value accV = map.lookup(op.getAcc());
  SmallVector<Value> acc;
  for (int64_t r = 0; r < mr * nr * 4; ++r)
    acc.push_back(vector::ExtractOp::create(b, l, accV, r));
  const Staged *sa = nullptr, *sb = nullptr;
  if (auto it = staged.find(op.getLhs()); it != staged.end())
    sa = &it->second;
  if (auto it = staged.find(op.getRhs()); it != staged.end())
    sb = &it->second;
  Value ra = sa ? Value() : map.lookup(op.getLhs());
  Value rb = sb ? Value() : map.lookup(op.getRhs());
  auto fromRegs = [&](Value v, int64_t first, int64_t rows) {
    SmallVector<Value> e;
    for (int64_t i = 0; i < rows * 2; ++i)
      e.push_back(vector::ExtractOp::create(b, l, v, first + i));
    return vector::FromElementsOp::create(b, l, VectorType::get({rows, 2}, in),
                                          e)
        .getResult();
  };
  auto fragType = VectorType::get({2, 2}, f32);
  for (int64_t s = 0; s < ks; ++s) {
    // This K step's fragments, then its products.
    SmallVector<Value> fa, fb;
    if (sa)
      fa = stagedFragments(b, l, *sa, 0, mma, mr, s);
    else
      for (int64_t i = 0; i < mr; ++i)
        fa.push_back(fromRegs(ra, (i * ks + s) * 8, 4));
    if (sb)
      fb = stagedFragments(b, l, *sb, 1, mma, nr, s);
    else
      for (int64_t j = 0; j < nr; ++j)
        fb.push_back(fromRegs(rb, (j * ks + s) * 4, 2));
    for (int64_t i = 0; i < mr; ++i)
      for (int64_t j = 0; j < nr; ++j) {
        int64_t r0 = (i * nr + j) * 4;
        Value c = vector::FromElementsOp::create(
            b, l, fragType, ArrayRef<Value>(acc).slice(r0, 4));
        Value d = nvgpu::MmaSyncOp::create(b, l, fa[i], fb[j], c,
                                           ArrayRef<int64_t>{16, 8, 16});
        for (int64_t e = 0; e < 4; ++e)
          acc[r0 + e] = vector::ExtractOp::create(
              b, l, d, ArrayRef<int64_t>{e / 2, e % 2});
      }
  }
  map.map(op.getResult(),
          vector::FromElementsOp::create(
              b, l, VectorType::get({int64_t(acc.size())}, f32), acc));
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op, OpBuilder &b,
                                      IRMapping &map) {
  Location l = op->getLoc();
  if (!touchesTensors(op)) {
    if (!tessera::writesMemory(op)) {
      b.clone(*op, map);
      return success();
    }
    // Scalar code that writes memory (atomics): thread 0 does it once.
    Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, tid,
                                        cIndex(b, l, 0));
    if (op->getNumResults() != 0)
      return op->emitOpError("writes memory and returns values; it has no "
                             "register lowering");
    auto ifOp = scf::IfOp::create(b, l, first, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    ib.clone(*op, map);
    return success();
  }
  if (auto ld = dyn_cast<LoadOp>(op))
    return stagedLoads.contains(op) ? lowerStagedLoad(ld, b, map)
                                    : lowerLoad(ld, b, map);
  if (auto d = dyn_cast<DotOp>(op))
    return lowerDot(d, b, map);
  // Views of a tile in shared memory stay there; a conversion to operand
  // fragments outside its dot's block (a loop-invariant operand) reads
  // them all into registers once.
  if (auto c = dyn_cast<ConvertLayoutOp>(op))
    if (auto it = staged.find(c.getSource()); it != staged.end())
      if (auto dl = dyn_cast<DotOperandLayoutAttr>(getLayout(c.getType()));
          dl && hoistFragments && c.getResult().hasOneUse() &&
          !wgmmaDots.contains(*c.getResult().getUsers().begin()) &&
          (*c.getResult().getUsers().begin())->getBlock() != op->getBlock()) {
        Location l = op->getLoc();
        auto [reps, ks] = getOperandRepetitions(dl, c.getType().getShape());
        SmallVector<SmallVector<Value>> steps;
        for (int64_t k = 0; k < ks; ++k)
          steps.push_back(stagedFragments(b, l, it->second, dl.getOpIdx(),
                                          dl.getParent(), reps, k));
        SmallVector<Value> regs;
        for (int64_t i = 0; i < reps; ++i)
          for (int64_t k = 0; k < ks; ++k) {
            // Register order: repetition, K step, fragment (Layouts.cpp).
            Value x = steps[k][i];
            int64_t rows = cast<VectorType>(x.getType()).getShape()[0];
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t e = 0; e < 2; ++e)
                regs.push_back(vector::ExtractOp::create(
                    b, l, x, ArrayRef<int64_t>{r, e}));
          }
        map.map(c.getResult(),
                vector::FromElementsOp::create(
                    b, l,
                    VectorType::get({int64_t(regs.size())},
                                    c.getType().getElementType()),
                    regs));
        return success();
      }
  if (isa<ReshapeOp, TransOp, ConvertLayoutOp>(op) || widening(op))
    if (auto it = staged.find(op->getOperand(0)); it != staged.end()) {
      Staged st = it->second;
      if (isa<TransOp>(op))
        st.transposed = !st.transposed;
      staged[op->getResult(0)] = st;
      return success();
    }
  if (auto bc = dyn_cast<BroadcastOp>(op)) {
    // The source holds, in the result's layout with the broadcast
    // dimensions collapsed, what every thread needs: a register shuffle.
    auto from = bc.getSource().getType(), to = bc.getType();
    if (getLayout(from) != getLayout(to))
      return op->emitOpError("between layouts has no register lowering");
    auto index =
        registerOf(getRegisterOffsets(getLayout(from), from.getShape()));
    SmallVector<int64_t> lanes;
    for (SmallVector<int64_t> o :
         getRegisterOffsets(getLayout(to), to.getShape())) {
      for (unsigned d = 0; d < o.size(); ++d)
        if (from.getShape()[d] == 1)
          o[d] = 0;
      auto it = index.find(o);
      if (it == index.end())
        return op->emitOpError("source layout does not cover its result");
      lanes.push_back(it->second);
    }
    Value v = map.lookup(bc.getSource());
    map.map(bc.getResult(),
            vector::ShuffleOp::create(b, l, v, v, lanes).getResult());
    return success();
  }
  if (auto tr = dyn_cast<TransOp>(op)) {
    // A transposition to the permuted layout relabels the registers.
    auto from = tr.getSource().getType(), to = tr.getType();
    auto a = getRegisterOffsets(getLayout(from), from.getShape());
    auto c = getRegisterOffsets(getLayout(to), to.getShape());
    bool same = a.size() == c.size();
    for (size_t r = 0; same && r < a.size(); ++r)
      for (size_t d = 0; same && d < a[r].size(); ++d)
        same = c[r][d] == a[r][tr.getPermutation()[d]];
    if (!same)
      return op->emitOpError("to another layout has no register lowering");
    map.map(tr.getResult(), map.lookup(tr.getSource()));
    return success();
  }
  if (auto st = dyn_cast<StoreOp>(op))
    return lowerStore(st, b, map);
  if (auto g = dyn_cast<GatherOp>(op))
    return lowerGather(g, b, map);
  if (auto s = dyn_cast<ScatterOp>(op))
    return lowerScatter(s, b, map);
  if (auto r = dyn_cast<ReduceOp>(op))
    return lowerReduce(r, b, map);
  if (auto c = dyn_cast<ConvertLayoutOp>(op))
    return lowerConvert(c, b, map);
  if (auto a = dyn_cast<ArangeOp>(op)) {
    map.map(a.getResult(), arange(a, b));
    return success();
  }
  if (auto s = dyn_cast<SplatOp>(op)) {
    Value scalar = map.lookup(s.getScalar());
    Type t = convert(s.getType());
    map.map(s.getResult(),
            isa<VectorType>(t)
                ? vector::BroadcastOp::create(b, l, t, scalar).getResult()
                : scalar);
    return success();
  }
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    // Unit dimensions only: the registers are the same.
    auto from = r.getSource().getType(), to = r.getType();
    auto a = getRegisterOffsets(getLayout(from), from.getShape());
    auto c = getRegisterOffsets(getLayout(to), to.getShape());
    if (a.size() != c.size())
      return op->emitOpError("changes the registers of its tile");
    map.map(r.getResult(), map.lookup(r.getSource()));
    return success();
  }
  if (auto e = dyn_cast<tensor::ExtractOp>(op)) {
    if (!e.getIndices().empty())
      return op->emitOpError("on a tile has no register lowering");
    map.map(e.getResult(), map.lookup(e.getTensor()));
    return success();
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!dense || !dense.isSplat())
      return op->emitOpError("a constant tile that is not a splat has no "
                             "register lowering");
    Type t = convert(c.getType());
    TypedAttr v = dense.getSplatValue<TypedAttr>();
    if (auto vt = dyn_cast<VectorType>(t))
      map.map(c.getResult(), arith::ConstantOp::create(
                                 b, l, vt, DenseElementsAttr::get(vt, v)));
    else
      map.map(c.getResult(), arith::ConstantOp::create(b, l, v));
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    // Dot operands loaded at each iteration: copied ring - 1 iterations
    // ahead.
    SmallVector<LoadOp> ahead;
    SmallVector<Operation *> slice;
    if (ring >= 2)
      for (Operation &o : *loop.getBody())
        if (auto ld = dyn_cast<LoadOp>(o);
            ld && stagedLoads.contains(ld) && pipelineable(ld, loop, slice))
          ahead.push_back(ld);
    if (!ahead.empty()) {
      int64_t mark = sharedBytes;
      if (failed(lowerPipelinedLoop(loop, ahead, b, map)))
        return failure();
      // Nothing is in flight past the loop; once every thread is past it,
      // its rings (and the buffers of its body) are free for what follows.
      // The generic-proxy accesses are ordered before the async-proxy
      // copies of a later ring by the fence.
      // A specialised kernel reuses no buffer: its producer may copy into
      // a ring while the consumers still work in an earlier one.
      if (!enclosingLoop(loop) && sharedBytes > mark && !specialise) {
        Reuse r;
        r.limit = sharedBytes;
        if (warpgroupMma)
          r.ops.push_back(fenceForWgmma(b, loop.getLoc(), true));
        r.ops.push_back(gpu::BarrierOp::create(b, loop.getLoc()));
        pendingReuse.push_back(std::move(r));
        sharedBytes = mark;
      }
      return success();
    }
    SmallVector<Value> inits;
    for (Value v : loop.getInitArgs())
      inits.push_back(map.lookup(v));
    auto nl = scf::ForOp::create(b, l, map.lookup(loop.getLowerBound()),
                                 map.lookup(loop.getUpperBound()),
                                 map.lookup(loop.getStep()), inits);
    nl.setUnsignedCmp(loop.getUnsignedCmp());
    // An iteration of a loop over tiles is already a tile's worth of
    // unrolled vector work: unrolling the loop again (as ptxas does to a
    // loop of unknown trip count with a short body) grows the code and its
    // registers for nothing. `.pragma "nounroll"` in the PTX.
    if (!loop.getStaticTripCount() && touchesTensors(loop))
      nl->setAttr("llvm.loop_annotation", noUnroll(b.getContext()));
    map.map(loop.getInductionVar(), nl.getInductionVar());
    for (auto [a, n] :
         llvm::zip(loop.getRegionIterArgs(), nl.getRegionIterArgs()))
      map.map(a, n);
    Block *nb = nl.getBody();
    if (!nb->empty() && nb->back().hasTrait<OpTrait::IsTerminator>())
      nb->back().erase();
    OpBuilder ib = OpBuilder::atBlockEnd(nl.getBody());
    // A program of a persistent kernel starts once every thread is done
    // with the shared memory of the previous one (whose buffers its own
    // copies and exchanges reuse; TMA writes after the fence).
    if (loop->hasAttr("tile.program_loop")) {
      nl->setAttr("tile.program_loop", b.getUnitAttr());
      fenceForWgmma(ib, l, warpgroupMma);
      gpu::BarrierOp::create(ib, l);
    }
    if (failed(lowerBlock(*loop.getBody(), ib, map)))
      return failure();
    for (auto [a, n] : llvm::zip(loop.getResults(), nl.getResults()))
      map.map(a, n);
    return success();
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    SmallVector<Type> types;
    for (Type t : ifOp.getResultTypes())
      types.push_back(convert(t));
    auto ni = scf::IfOp::create(b, l, types, map.lookup(ifOp.getCondition()),
                                /*withElse=*/!ifOp.getElseRegion().empty());
    // The two branches' buffers share their bytes: a block whose threads
    // take different branches cannot pass the barriers around them anyway.
    int64_t mark = sharedBytes, end = sharedBytes;
    for (auto [src, dst] :
         {std::pair(&ifOp.getThenRegion(), &ni.getThenRegion()),
          std::pair(&ifOp.getElseRegion(), &ni.getElseRegion())}) {
      if (src->empty())
        continue;
      Block &blk = dst->front();
      if (!blk.empty() && blk.back().hasTrait<OpTrait::IsTerminator>())
        blk.back().erase();
      OpBuilder ib = OpBuilder::atBlockEnd(&blk);
      sharedBytes = mark;
      if (failed(lowerBlock(src->front(), ib, map)))
        return failure();
      end = std::max(end, sharedBytes);
    }
    sharedBytes = end;
    for (auto [a, n] : llvm::zip(ifOp.getResults(), ni.getResults()))
      map.map(a, n);
    return success();
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    if (Value v = runConstantCompare(cmp, b, map)) {
      map.map(cmp.getResult(), v);
      return success();
    }
  Dialect *d = op->getDialect();
  if (d && isa<arith::ArithDialect, math::MathDialect>(d) &&
      op->getNumRegions() == 0) {
    Operation *n = b.clone(*op, map);
    for (Value r : n->getResults())
      r.setType(convert(r.getType()));
    return success();
  }
  return op->emitOpError("has no register lowering");
}

/// A store of a large tile whose value only it uses, computed element-wise
/// (with splats and splat constants) from loads of the same layout in the
/// same block with nothing between them that writes memory: `ops` gets the
/// computation in block order.
bool KernelLowering::fusibleStore(StoreOp st, SmallVector<Operation *> &ops) {
  auto t = cast<RankedTensorType>(st.getValue().getType());
  Attribute layout = getLayout(t);
  if (st.getMask() || !layout ||
      getNumRegisters(layout, t.getShape()) * t.getElementTypeBitWidth() <=
          kFuseAboveBits)
    return false;
  SetVector<Operation *> tree;
  bool anyLoad = false;
  SmallVector<Value> work{st.getValue()};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    auto vt = dyn_cast<RankedTensorType>(v.getType());
    if (!def || def->getBlock() != st->getBlock() || !v.hasOneUse() || !vt ||
        getLayout(vt) != layout || tree.contains(def))
      continue;
    if (auto ld = dyn_cast<LoadOp>(def)) {
      if (stagedLoads.contains(ld) || ld.getMask())
        continue;
      tree.insert(def);
      anyLoad = true;
      continue;
    }
    if (isa<SplatOp>(def)) {
      tree.insert(def);
      continue;
    }
    if (auto c = dyn_cast<arith::ConstantOp>(def)) {
      if (auto d = dyn_cast<DenseElementsAttr>(c.getValue()); d && d.isSplat())
        tree.insert(def);
      continue;
    }
    Dialect *d = def->getDialect();
    if (!d || !isa<arith::ArithDialect, math::MathDialect>(d) ||
        def->getNumRegions() != 0 || def->getNumResults() != 1)
      continue;
    tree.insert(def);
    for (Value o : def->getOperands())
      if (isa<RankedTensorType>(o.getType()))
        work.push_back(o);
  }
  if (!anyLoad)
    return false;
  ops.assign(tree.begin(), tree.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *o = ops.front(); o != st; o = o->getNextNode())
    if (!tree.contains(o) && tessera::writesMemory(o))
      return false;
  return true;
}

LogicalResult KernelLowering::lowerFusedStore(StoreOp st,
                                              ArrayRef<Operation *> ops,
                                              OpBuilder &b, IRMapping &map) {
  Location l = st.getLoc();
  RunAccess sa = planStore(st, b, map);
  DenseMap<Operation *, RunAccess> plans;
  int64_t w = sa.w;
  for (Operation *o : ops)
    if (auto ld = dyn_cast<LoadOp>(o)) {
      plans[o] = planLoad(ld, b, map);
      w = std::min(w, plans[o].w);
    }
  sa.w = w;
  for (auto &[o, p] : plans)
    p.w = w;
  auto runType = [&](Type t) -> Type {
    Type e = getElementTypeOrSelf(t);
    return w == 1 ? e : VectorType::get({w}, e);
  };
  int64_t n = sa.offs.size();
  int64_t batch = std::max<int64_t>(w, kFuseBatchRegisters);
  for (int64_t r0 = 0; r0 < n; r0 += batch) {
    // A batch of runs: their loads and arithmetic, then their stores.
    SmallVector<std::pair<int64_t, Value>> parts;
    for (int64_t r = r0; r < std::min(n, r0 + batch); r += w) {
      DenseMap<Value, Value> local;
      auto get = [&](Value v) -> Value {
        if (Value x = local.lookup(v))
          return x;
        auto vt = dyn_cast<RankedTensorType>(v.getType());
        if (!vt || vt.getRank() == 0)
          return map.lookup(v);
        return local[v] = extractRun(b, l, map.lookup(v), r, w);
      };
      for (Operation *o : ops) {
        Value res;
        if (isa<LoadOp>(o)) {
          res = loadRun(b, l, plans[o], r);
        } else if (auto s = dyn_cast<SplatOp>(o)) {
          res = get(s.getScalar());
          if (w > 1)
            res = vector::BroadcastOp::create(b, l, runType(s.getType()), res);
        } else if (auto c = dyn_cast<arith::ConstantOp>(o)) {
          TypedAttr v =
              cast<DenseElementsAttr>(c.getValue()).getSplatValue<TypedAttr>();
          Type rt = runType(c.getType());
          res = w == 1 ? arith::ConstantOp::create(b, l, v).getResult()
                       : arith::ConstantOp::create(
                             b, l, cast<VectorType>(rt),
                             DenseElementsAttr::get(cast<VectorType>(rt), v))
                             .getResult();
        } else {
          IRMapping m;
          for (Value x : o->getOperands())
            m.map(x, get(x));
          Operation *copy = b.clone(*o, m);
          copy->getResult(0).setType(runType(o->getResult(0).getType()));
          res = copy->getResult(0);
        }
        local[o->getResult(0)] = res;
      }
      parts.push_back({r, get(st.getValue())});
    }
    for (auto [r, part] : parts)
      storeRun(b, l, sa, r, part);
  }
  return success();
}

LogicalResult KernelLowering::lowerBlock(Block &src, OpBuilder &b,
                                         IRMapping &map) {
  // Stores of large tiles computed from loads: in batches of register runs.
  DenseMap<Operation *, SmallVector<Operation *>> fused;
  DenseSet<Operation *> deferred;
  for (Operation &op : src)
    if (auto st = dyn_cast<StoreOp>(op)) {
      SmallVector<Operation *> ops;
      if (fusibleStore(st, ops)) {
        deferred.insert(ops.begin(), ops.end());
        fused[st] = std::move(ops);
      }
    }
  for (Operation &op : src) {
    if (deferred.contains(&op))
      continue;
    if (!keepsPendingStages(&op))
      flushPendingStages(b, op.getLoc());
    // A conversion for a store right after it (a tensor-core accumulator
    // stored in 16-byte vectors): each run read back is stored at once,
    // so that the converted tile never lives in registers whole.
    if (auto c = dyn_cast<ConvertLayoutOp>(op)) {
      auto st = dyn_cast_or_null<StoreOp>(c->getNextNode());
      if (st && st.getValue() == c.getResult() && c->hasOneUse())
        if (auto plan = planRunConversion(c)) {
          RunAccess a = planStore(st, b, map);
          convertByRuns(c, *plan, b, map,
                        [&](OpBuilder &ob, int64_t r, Value part) {
                          for (int64_t k = 0; k < plan->dstRun; k += a.w)
                            storeRun(ob, st.getLoc(), a, r + k,
                                     extractRun(ob, st.getLoc(), part, k, a.w));
                        });
          deferred.insert(st);
          continue;
        }
    }
    if (auto it = fused.find(&op); it != fused.end()) {
      if (failed(lowerFusedStore(cast<StoreOp>(op), it->second, b, map)))
        return failure();
      continue;
    }
    if (auto y = dyn_cast<scf::YieldOp>(op)) {
      SmallVector<Value> vs;
      for (Value v : y.getOperands())
        vs.push_back(map.lookup(v));
      scf::YieldOp::create(b, y.getLoc(), vs);
      continue;
    }
    if (isa<gpu::ReturnOp>(op))
      continue;
    if (failed(lowerOp(&op, b, map)))
      return failure();
  }
  return success();
}

/// Under `tile.index32`, a bound u with 0 <= v <= u < 2^32 for every
/// element of the integer tile `v`, from how it is computed: splats of
/// non-negative bounded scalars, non-negative aranges and constants, their
/// extensions and sums; nullopt when unknown.
static std::optional<int64_t> unsignedBound32(Value v, unsigned depth = 0) {
  constexpr int64_t kMaxU32 = (int64_t(1) << 32) - 1;
  if (depth > 8)
    return std::nullopt;
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    auto d = dyn_cast<DenseIntElementsAttr>(c.getValue());
    if (!d)
      return std::nullopt;
    int64_t most = 0;
    for (const APInt &x : d.getValues<APInt>()) {
      if (x.isNegative() || x.getActiveBits() > 32)
        return std::nullopt;
      most = std::max<int64_t>(most, x.getZExtValue());
    }
    return most;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto sp = dyn_cast<SplatOp>(def)) {
    auto b = tessera::index32Bound(sp.getScalar());
    if (b && *b <= kMaxU32 && tessera::knownNonNegative(sp.getScalar()))
      return b;
    return std::nullopt;
  }
  if (auto a = dyn_cast<ArangeOp>(def)) {
    if (a.getStartValue() < 0 || a.getEndValue() < 1 ||
        a.getEndValue() - 1 > kMaxU32)
      return std::nullopt;
    return a.getEndValue() - 1;
  }
  if (isa<arith::ExtSIOp, arith::ExtUIOp>(def)) {
    Value in = def->getOperand(0);
    unsigned bits = getElementTypeOrSelf(in.getType()).getIntOrFloatBitWidth();
    auto b = unsignedBound32(in, depth + 1);
    // A sign extension keeps values whose sign bit is clear.
    if (!b || bits > 32 ||
        (isa<arith::ExtSIOp>(def) && *b >= (int64_t(1) << (bits - 1))))
      return std::nullopt;
    return b;
  }
  if (isa<arith::AddIOp>(def)) {
    auto x = unsignedBound32(def->getOperand(0), depth + 1);
    auto y = unsignedBound32(def->getOperand(1), depth + 1);
    if (x && y && *x + *y <= kMaxU32)
      return *x + *y;
  }
  return std::nullopt;
}

/// `v` (with unsignedBound32) as an i32 tile of the same values read as
/// unsigned, built at `b`.
static Value narrowUnsigned32(OpBuilder &b, Location l, Value v) {
  Type i32 = b.getI32Type();
  auto t32 = cast<RankedTensorType>(v.getType()).clone(i32);
  if (getElementTypeOrSelf(v.getType()).isInteger(32))
    return v;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    return arith::ConstantOp::create(
        b, l,
        cast<DenseIntElementsAttr>(c.getValue())
            .mapValues(i32, [](const APInt &x) { return x.trunc(32); }));
  if (auto sp = v.getDefiningOp<SplatOp>())
    return SplatOp::create(b, l, t32,
                           arith::TruncIOp::create(b, l, i32, sp.getScalar()));
  if (auto a = v.getDefiningOp<ArangeOp>())
    return ArangeOp::create(b, l, t32, a.getStartAttr(), a.getEndAttr());
  Operation *def = v.getDefiningOp();
  if (isa<arith::ExtSIOp, arith::ExtUIOp>(def)) {
    // Non-negative: zero and sign extension agree.
    Value in = def->getOperand(0);
    if (getElementTypeOrSelf(in.getType()).isInteger(32))
      return in;
    return arith::ExtUIOp::create(b, l, t32, in);
  }
  auto add = cast<arith::AddIOp>(def);
  return arith::AddIOp::create(b, l, narrowUnsigned32(b, l, add.getLhs()),
                               narrowUnsigned32(b, l, add.getRhs()),
                               arith::IntegerOverflowFlags::nuw);
}

/// Under `tile.index32`, integer divisions and remainders of non-negative
/// i64 scalars below 2^31 (a program id split into batch and head, say)
/// as unsigned 32-bit ones: LLVM otherwise tests at run time whether the
/// operands fit in 32 bits and keeps a 64-bit division, which ptxas makes
/// a call.
static void narrowIndexDivisions(gpu::GPUFuncOp kernel) {
  constexpr int64_t kMax31 = (int64_t(1) << 31) - 1;
  SmallVector<Operation *> divs;
  kernel.walk([&](Operation *op) {
    if (isa<arith::FloorDivSIOp, arith::DivSIOp, arith::DivUIOp, arith::RemSIOp,
            arith::RemUIOp>(op) &&
        op->getResult(0).getType().isInteger(64) &&
        llvm::all_of(op->getOperands(), [](Value v) {
          std::optional<int64_t> b = tessera::index32Bound(v);
          return b && *b <= kMax31 && tessera::knownNonNegative(v);
        }))
      divs.push_back(op);
  });
  for (Operation *op : divs) {
    OpBuilder b(op);
    Location l = op->getLoc();
    Type i32 = b.getI32Type();
    Value x = arith::TruncIOp::create(b, l, i32, op->getOperand(0));
    Value y = arith::TruncIOp::create(b, l, i32, op->getOperand(1));
    Value r = isa<arith::RemSIOp, arith::RemUIOp>(op)
                  ? arith::RemUIOp::create(b, l, x, y).getResult()
                  : arith::DivUIOp::create(b, l, x, y).getResult();
    op->getResult(0).replaceAllUsesWith(
        arith::ExtUIOp::create(b, l, b.getI64Type(), r).getResult());
    op->erase();
  }
}

/// The unsigned form of a signed order predicate (the same order between
/// non-negative values); other predicates unchanged.
static arith::CmpIPredicate unsignedOrder(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::slt:
    return P::ult;
  case P::sle:
    return P::ule;
  case P::sgt:
    return P::ugt;
  case P::sge:
    return P::uge;
  default:
    return p;
  }
}

/// Under `tile.index32`, rewrites comparisons of i64 tiles whose operands
/// are sign-extended i32 tiles or splats of scalars that fit in 32 bits
/// (masks such as `arange < n`) into i32 comparisons: one 32-bit compare
/// per element instead of a 64-bit pair; both sides within [0, 2^32) make
/// an unsigned i32 comparison.
static void narrowIndexCompares(gpu::GPUFuncOp kernel) {
  constexpr int64_t kMax32 = (int64_t(1) << 31) - 1;
  SmallVector<arith::CmpIOp> cmps;
  kernel.walk([&](arith::CmpIOp c) {
    auto t = dyn_cast<RankedTensorType>(c.getLhs().getType());
    if (t && t.getElementType().isInteger(64))
      cmps.push_back(c);
  });
  using P = arith::CmpIPredicate;
  for (arith::CmpIOp c : cmps) {
    P p = c.getPredicate();
    // Both sides within [0, 2^32): an unsigned i32 comparison (a tile's
    // start near 2^31 plus its columns does not fit in a signed i32).
    if (unsignedBound32(c.getLhs()) && unsignedBound32(c.getRhs())) {
      OpBuilder b(c);
      c.getLhsMutable().assign(narrowUnsigned32(b, c.getLoc(), c.getLhs()));
      c.getRhsMutable().assign(narrowUnsigned32(b, c.getLoc(), c.getRhs()));
      c.setPredicate(unsignedOrder(p));
      continue;
    }
    if (p == P::ult || p == P::ule || p == P::ugt || p == P::uge)
      continue;
    auto narrowable = [&](Value v) {
      if (auto ext = v.getDefiningOp<arith::ExtSIOp>())
        return getElementTypeOrSelf(ext.getIn().getType()).isInteger(32);
      if (auto sp = v.getDefiningOp<SplatOp>()) {
        auto bound = tessera::index32Bound(sp.getScalar());
        return bound && *bound <= kMax32;
      }
      return false;
    };
    if (!narrowable(c.getLhs()) || !narrowable(c.getRhs()))
      continue;
    OpBuilder b(c);
    auto narrow32 = [&](Value v) -> Value {
      if (auto ext = v.getDefiningOp<arith::ExtSIOp>())
        return ext.getIn();
      auto sp = v.getDefiningOp<SplatOp>();
      Value scalar = arith::TruncIOp::create(b, c.getLoc(), b.getI32Type(),
                                             sp.getScalar());
      auto t = cast<RankedTensorType>(v.getType()).clone(b.getI32Type());
      return SplatOp::create(b, c.getLoc(), t, scalar);
    };
    bool nonNegative = tessera::knownNonNegative(c.getLhs()) &&
                       tessera::knownNonNegative(c.getRhs());
    Value lhs = narrow32(c.getLhs()), rhs = narrow32(c.getRhs());
    c.getLhsMutable().assign(lhs);
    c.getRhsMutable().assign(rhs);
    // Between non-negative values signed and unsigned order agree; the
    // unsigned form is the one of the bounds checks, which then share it.
    if (nonNegative)
      c.setPredicate(unsignedOrder(p));
  }
}

LogicalResult KernelLowering::run() {
  Region &body = kernel.getBody();
  if (index32) {
    narrowIndexCompares(kernel);
    narrowIndexDivisions(kernel);
  }
  body.walk([&](LoadOp ld) {
    if (!stageable(ld))
      return;
    stagedLoads.insert(ld);
    if (warpgroupMma && transposedBlock(ld))
      transposedLoads.insert(ld);
  });
  body.walk([&](DotOp d) { planWgmma(d); });
  // A block staged in wgmma's atoms is read by wgmma only: when one of the
  // dots sharing it stays on mma.sync (whose fragment loads assume one
  // swizzled block), they all do, and so on through their other operands.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : stagedLoads) {
      SmallVector<DotOp> dots = dotsReading(cast<LoadOp>(op));
      auto onWgmma = [&](DotOp d) { return wgmmaDots.contains(d); };
      if (llvm::none_of(dots, onWgmma)) {
        changed |= atomColumns.erase(op);
        continue;
      }
      if (llvm::all_of(dots, onWgmma) && atomColumns.count(op))
        continue;
      for (DotOp d : dots)
        wgmmaDots.erase(d);
      atomColumns.erase(op);
      changed = true;
    }
  }
  // fp8 operands reach this pass for wgmma k32 only (others are widened
  // by tessera-widen-float8-dots), f32 ones for wgmma k8 on tf32.
  WalkResult unplanned = body.walk([&](DotOp d) {
    Type in = d.getLhs().getType().getElementType();
    if (!(isFloat8(in) || in.isF32()) || wgmmaDots.contains(d))
      return WalkResult::advance();
    d.emitOpError() << "has " << (in.isF32() ? "tf32" : "fp8")
                    << " operands, which only wgmma reads, and cannot "
                       "be lowered to wgmma (both operands staged in shared "
                       "memory as wgmma reads them, the warps along M)";
    return WalkResult::interrupt();
  });
  if (unplanned.wasInterrupted())
    return failure();
  // The largest tile one thread holds, in 32-bit registers (wgmma's
  // operands stay in shared memory).
  int64_t words = 0;
  kernel.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(v.getType());
          t && t.getRank() && getLayout(t)) {
        if (LoadOp src = stagedSource(v); src && atomColumns.count(src))
          continue;
        words = std::max(words, (getNumRegisters(getLayout(t), t.getShape()) *
                                     t.getElementTypeBitWidth() +
                                 31) /
                                    32);
      }
  });
  kernel->setAttr(
      "tile.tile_registers",
      IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), words));
  // Tensor-core kernels hold the accumulator, one K step's fragments and,
  // hoisted out of the K loop, a 64-bit address per copied 16-byte chunk;
  // past what a thread may have (255, fewer when the block's threads
  // share the register file), ptxas would spill.
  auto leaveUnlowered = [&] {
    kernel->setAttr(
        "tile.shared_bytes",
        IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), 0));
    return success();
  };
  // Vector accesses on tensors whose alignment is tested at run time leave
  // an element-by-element copy of the body beside the vector one.
  planAccesses(body.front());
  bool scalarFallback = llvm::any_of(widest, [&](auto &entry) {
    return entry.second > 1 && alignmentOf(entry.first) != true;
  });
  // Registers are counted per loop: the products of the loop and of the
  // loops around it (the kernel's top level counts in every loop), and the
  // addresses of the copies the loop itself issues (those before every
  // loop are done before the first; TMA copies of a pipelined loop that
  // runs once per kernel have none: one thread issues them from the
  // tensor map and the coordinates). Sequential loops reuse registers, so
  // the kernel needs the most any loop needs.
  struct LoopRegisters {
    int64_t products = 0, hoisted = 0, addresses = 0;
  };
  llvm::MapVector<Operation *, LoopRegisters> perLoop;
  perLoop[nullptr] = {};
  bool anyDot = false;
  body.walk([&](DotOp d) {
    anyDot = true;
    LoopRegisters &in = perLoop[enclosingLoop(d)];
    auto mma = cast<MmaLayoutAttr>(getLayout(d.getType()));
    auto [mr, nr] = getMmaRepetitions(mma, d.getType().getShape());
    int64_t ks = d.getLhs().getType().getShape()[1] / 16;
    // wgmma reads its operands from shared memory: the accumulator. A
    // from registers is a value the kernel computed (attention's P, in
    // the registers of the product it came from): one K step's words.
    if (wgmmaDots.contains(d)) {
      in.products += mr * nr * 4 + (stagedSource(d.getLhs()) ? 0 : mr * 4);
      return;
    }
    // The accumulator and one K step's fragments; an operand converted
    // outside the dot's loop keeps all its K steps in registers across it.
    in.products += mr * nr * 4 + mr * 4 + nr * 2;
    auto hoisted = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && def->getBlock() != d->getBlock();
    };
    in.hoisted += (hoisted(d.getLhs()) ? ks - 1 : 0) * mr * 4;
    in.hoisted += (hoisted(d.getRhs()) ? ks - 1 : 0) * nr * 2;
  });
  int64_t threads = warps * 32;
  // Warp specialisation needs TMA rings (wgmma operands of a loop) whose
  // copies the producer warpgroup can address on its own, and whole
  // consumer warpgroups.
  if (kernel->hasAttr("tile.warp_specialize") && tensorCopies &&
      warps % 4 == 0 && ring >= 2) {
    bool rings = false, computable = true;
    for (Operation *op : stagedLoads) {
      auto ld = cast<LoadOp>(op);
      rings |= inTensorRing(ld);
      if (isa<scf::ForOp>(op->getParentOp()))
        computable &= producerComputable(ld);
    }
    specialise = rings && computable;
  }
  DenseMap<Operation *, int64_t> widestImage;
  for (Operation *op : stagedLoads) {
    auto ld = cast<LoadOp>(op);
    Operation *loop = enclosingLoop(op);
    if (inTensorRing(ld))
      continue;
    if (transposedLoads.contains(op)) {
      // Loaded into registers: a word per element, live until the stores
      // (the loads' addresses step from the tile's own).
      int64_t per = (ld.getType().getNumElements() + threads - 1) / threads;
      perLoop[loop].addresses += per;
      continue;
    }
    if (widenedBlock(ld)) {
      // Loaded into registers: the fp8 words (live until the stores widen
      // them) and an address per 16-byte load; the blocks are widened one
      // at a time, beside the largest f16 image.
      int64_t per = (ld.getType().getNumElements() + threads - 1) / threads;
      perLoop[loop].addresses += (per + 3) / 4 + 2 * ((per + 15) / 16);
      widestImage[loop] = std::max(widestImage[loop], (per + 1) / 2);
      continue;
    }
    // A 64-bit address per 16-byte chunk this thread copies.
    int64_t chunks = ld.getType().getNumElements() *
                     ld.getType().getElementTypeBitWidth() / 128;
    perLoop[loop].addresses += 2 * ((chunks + threads - 1) / threads);
  }
  // Kernels not on wgmma keep a margin for the widening's integer
  // arithmetic (calibrated against ptxas on sm_80, which has no conversion
  // instruction; sm_89 and sm_90 keep it too).
  for (auto [loop, words] : widestImage)
    perLoop[loop].addresses +=
        words + (warpgroupMma ? 0 : kSoftWideningRegisters);
  int64_t estimate = 0, hoistedWords = 0;
  for (Operation *loop : llvm::make_first_range(perLoop)) {
    int64_t words = 0, hoisted = 0;
    for (auto &[around, r] : perLoop) {
      if (around && !(loop && around->isAncestor(loop)))
        continue;
      words += r.products + (around || !loop ? r.addresses : 0);
      hoisted += r.hoisted;
    }
    if (words + hoisted > estimate + hoistedWords) {
      estimate = words;
      hoistedWords = hoisted;
    }
  }
  // Beside a wgmma accumulator, live across the whole loop: 64-bit offsets
  // and bounds, and the element-by-element copy's staging registers
  // (calibrated against ptxas on the library's configurations).
  if (!wgmmaDots.empty())
    estimate += (index32 ? 0 : kWideIndexRegisters) +
                (scalarFallback ? kScalarCopyRegisters : 0);
  if (anyDot) {
    estimate += kRegisterOverhead;
    if (wgmmaDots.empty() && kernel->hasAttr("tile.persistent"))
      estimate += kPersistentRegisters;
    int64_t budget = specialise ? tessera::consumerRegisters(warps)
                                : std::min<int64_t>(255, 65536 / threads);
    // Loop-invariant operands keep their fragments in registers when they
    // fit; otherwise every K step reads them from shared memory again.
    hoistFragments = estimate + hoistedWords <= budget;
    if (hoistFragments)
      estimate += hoistedWords;
    kernel->setAttr(
        "tile.register_estimate",
        IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), estimate));
    kernel->setAttr(
        "tile.register_budget",
        IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), budget));
    if (maxTileRegisters > 0 && estimate > budget)
      return leaveUnlowered();
  }
  // Too large to keep in registers: left as it is for the caller to refuse
  // (RESOURCE_EXHAUSTED), rather than unrolled into a huge body first.
  if (maxTileRegisters > 0 && words > maxTileRegisters)
    return leaveUnlowered();
  if (!llvm::hasSingleElement(body))
    return kernel.emitOpError("needs structured control flow");
  Block *old = &body.front();
  entryBlock = new Block();
  body.getBlocks().push_front(entryBlock);
  IRMapping map;
  for (BlockArgument a : old->getArguments())
    map.map(a, entryBlock->addArgument(a.getType(), a.getLoc()));
  Location l = kernel.getLoc();
  OpBuilder eb = OpBuilder::atBlockBegin(entryBlock);
  tid = gpu::ThreadIdOp::create(eb, l, gpu::Dimension::x);
  lane = arith::RemUIOp::create(eb, l, tid, cIndex(eb, l, 32));
  warp = arith::DivUIOp::create(eb, l, tid, cIndex(eb, l, 32));
  // Per-thread constants go before this point, the body after it.
  Operation *anchor = cIndex(eb, l, 0).getDefiningOp();
  eb.setInsertionPoint(anchor);
  entry = &eb;

  // Alignment is tested once: the body is lowered twice, with vector
  // accesses where the tested tensors allow them and without.
  Value alignedTest;
  bool anyVector = false;
  for (auto [memref, w] : widest) {
    if (w <= 1)
      continue;
    anyVector = true;
    // Known at launch: no test.
    if (alignmentOf(memref) == true)
      continue;
    Value m = map.lookup(memref);
    auto mt = cast<MemRefType>(m.getType());
    int64_t bytes = std::max<int64_t>(1, mt.getElementTypeBitWidth() / 8);
    Value ok = tessera::alignedAt(eb, l, m, bytes, w * bytes);
    // Whole vectors are in or out of bounds: the row length is a multiple.
    Value dim = memref::DimOp::create(eb, l, m, mt.getRank() - 1);
    Value rem = arith::RemUIOp::create(eb, l, dim, cIndex(eb, l, w));
    ok = arith::AndIOp::create(eb, l, ok,
                               arith::CmpIOp::create(eb, l,
                                                     arith::CmpIPredicate::eq,
                                                     rem, cIndex(eb, l, 0)));
    alignedTest =
        alignedTest ? arith::AndIOp::create(eb, l, alignedTest, ok).getResult()
                    : ok;
  }
  OpBuilder bb = OpBuilder::atBlockEnd(entryBlock);
  if (alignedTest) {
    auto ifOp = scf::IfOp::create(bb, l, alignedTest, /*withElse=*/true);
    vectorOK = true;
    OpBuilder tb = OpBuilder::atBlockBegin(ifOp.thenBlock());
    tb.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    IRMapping m1 = map;
    staged.clear();
    if (failed(lowerBlock(*old, tb, m1)))
      return failure();
    // The two copies never run together: the second reuses the first's
    // shared memory.
    int64_t vectorBytes = sharedPeak;
    sharedBytes = sharedPeak = 0;
    dropPendingReuse();
    vectorOK = false;
    OpBuilder fb = OpBuilder::atBlockBegin(ifOp.elseBlock());
    fb.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    IRMapping m2 = map;
    staged.clear();
    if (failed(lowerBlock(*old, fb, m2)))
      return failure();
    sharedPeak = std::max(sharedPeak, vectorBytes);
  } else {
    // Every vector access is on a tensor the launch guarantees aligned.
    vectorOK = anyVector;
    if (failed(lowerBlock(*old, bb, map)))
      return failure();
  }
  gpu::ReturnOp::create(bb, l);
  dropPendingReuse();
  old->dropAllDefinedValueUses();
  old->erase();
  if (!tensorMaps.empty()) {
    MLIRContext *ctx = kernel.getContext();
    Type i64 = IntegerType::get(ctx, 64);
    SmallVector<Attribute> maps;
    for (const TensorMap &t : tensorMaps)
      maps.push_back(DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, "source"),
                               IntegerAttr::get(i64, t.source)),
                NamedAttribute(StringAttr::get(ctx, "box"),
                               DenseI64ArrayAttr::get(ctx, t.box)),
                NamedAttribute(StringAttr::get(ctx, "swizzle"),
                               IntegerAttr::get(i64, t.swizzle))}));
    kernel->setAttr("tile.tensor_maps", ArrayAttr::get(ctx, maps));
  }
  kernel->setAttr(
      "tile.shared_bytes",
      IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), sharedPeak));
  // Split by tessera-warp-specialize where a ring is producer-fed.
  if (fedRings)
    kernel->setAttr(
        "tile.consumer_threads",
        IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), threads));
  else
    kernel->removeAttr("tile.warp_specialize");
  return success();
}

struct DistributeTilesPass
    : mlir::tessera::impl::DistributeTilesPassBase<DistributeTilesPass> {
  using DistributeTilesPassBase::DistributeTilesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp f : mlir::tessera::tileKernels(module)) {
      int64_t warps = tessera::tile::numWarps(f), cap = 16;
      if (auto a = f->getAttrOfType<IntegerAttr>("tile.vector_width"))
        cap = std::max<int64_t>(1, a.getInt());
      if (warps * 32 > 1024) {
        f.emitError() << "num_warps=" << warps << " gives " << warps * 32
                      << " threads per block; the limit is 1024";
        return signalPassFailure();
      }
      bool index32 = f->hasAttr("tile.index32");
      int64_t stages = 1;
      if (auto a = f->getAttrOfType<IntegerAttr>("tile.num_stages"))
        stages = a.getInt();
      SmallVector<std::optional<bool>> alignedArgs;
      SmallVector<ArrayAttr> symbols;
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        symbols.push_back(f.getArgAttrOfType<ArrayAttr>(i, "tile.dim_symbols"));
      for (unsigned i = 0; i < f.getNumArguments(); ++i) {
        auto a = f.getArgAttrOfType<BoolAttr>(i, "tile.aligned");
        alignedArgs.push_back(a ? std::optional<bool>(a.getValue())
                                : std::nullopt);
      }
      gpu::GPUFuncOp kernel =
          mlir::tessera::outlineKernel(module, f, warps * 32);
      if (!kernel)
        return signalPassFailure();
      KernelLowering lowering(kernel, warps, cap, maxTileRegisters,
                              std::move(alignedArgs), index32, stages,
                              warpgroupMma, tensorCopies);
      lowering.setDimSymbols(std::move(symbols));
      if (failed(lowering.run()))
        return signalPassFailure();
      int64_t shared =
          kernel->getAttrOfType<IntegerAttr>("tile.shared_bytes").getInt();
      if (maxSharedBytes > 0 && shared > maxSharedBytes) {
        kernel.emitError() << "this configuration needs " << shared
                           << " bytes of shared memory per block; the "
                              "target allows "
                           << static_cast<int64_t>(maxSharedBytes);
        return signalPassFailure();
      }
    }
  }
};

} // namespace
