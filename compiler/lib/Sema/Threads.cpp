//===- Threads.cpp - The thread-level built-ins of SIMT programs ----------===//
//
// Coordinates (thread, lane, warp, block), warp reductions, shared arrays
// and the block barrier. They emit the gpu dialect directly; block ids are
// tile.program_id / tile.num_programs, which the GPU outlining maps to the
// grid as in tile programs (one block runs one program instance there, one
// block of num_warps * 32 instances here).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera::sema::detail {

namespace {
/// Threads per block of the kernel being emitted.
int64_t blockThreads(Emitter &em) {
  auto it = em.env.find("num_warps");
  return 32 *
         (it != em.env.end() && it->second.isInt() ? it->second.getInt() : 4);
}
} // namespace

SVal lowerContext(Emitter &em, BuiltinCall &call) {
  (void)em;
  if (!call.accept(0, 0))
    return SVal::invalid();
  return SVal::constant(ConstValue::none());
}

SVal lowerThreadCoordinate(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  const std::string &name = call.name;
  const bool takesAxis =
      name == "block_id" || name == "num_blocks" || name == "thread_id";
  if (!call.accept(0, takesAxis ? 1 : 0, takesAxis ? "axis" : nullptr))
    return SVal::invalid();
  int64_t axis = 0;
  if (!call.args.empty()) {
    auto a = em.constInt(call.args[0], call.sl, "axis");
    if (!a)
      return SVal::invalid();
    axis = *a;
  }
  if (axis < 0 || axis > 2)
    return call.error(name + "() axis must be 0, 1 or 2, got " +
                      std::to_string(axis));
  if (name == "thread_id" && axis != 0)
    return call.error("blocks of SIMT programs are one-dimensional: "
                      "tile.thread_id() has axis 0 only");
  const int64_t threads = blockThreads(em);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto threadId = [&]() -> Value {
    Value t = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
    return arith::IndexCastUIOp::create(b, l, i32, t);
  };
  if (name == "block_size")
    return SVal::constant(ConstValue::integer(threads));
  if (name == "thread_id")
    return SVal::typed(threadId(), DType::I32);
  if (name == "lane_id") {
    Value lane = gpu::LaneIdOp::create(b, l, b.getIndexAttr(32));
    return SVal::typed(arith::IndexCastUIOp::create(b, l, i32, lane),
                       DType::I32);
  }
  if (name == "warp_id")
    return SVal::typed(
        arith::DivUIOp::create(
            b, l, threadId(),
            arith::ConstantIntOp::create(b, l, i32, 32).getResult()),
        DType::I32);
  if (name == "block_id")
    return SVal::typed(tl::ProgramIdOp::create(b, l, i64, axis), DType::I64);
  if (name == "num_blocks")
    return SVal::typed(tl::NumProgramsOp::create(b, l, i64, axis), DType::I64);
  // linear_id
  Value block = tl::ProgramIdOp::create(b, l, i64, 0);
  Value base = arith::MulIOp::create(
      b, l, block, arith::ConstantIntOp::create(b, l, i64, threads));
  Value t = arith::ExtUIOp::create(b, l, i64, threadId());
  return SVal::typed(arith::AddIOp::create(b, l, base, t), DType::I64);
}

SVal lowerWarpReduce(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  const std::string &name = call.name;
  if (!call.accept(1, 1))
    return SVal::invalid();
  SVal x = call.args[0];
  if (x.isTile() || (!x.isTyped() && !x.isConst()) ||
      (x.isConst() && !x.cval.isNumber()))
    return call.error("tile." + name + "() reduces one scalar per thread, " +
                      "got " + describe(x));
  DType t =
      x.isConst() ? (x.cval.isFloat() ? DType::F32 : DType::I32) : x.dtype;
  // 16-bit and 8-bit floats reduce in f32, narrow integers in i32 (a
  // shuffle moves 32 bits).
  if (isFloatT(t) && t != DType::F32)
    t = DType::F32;
  if (t == DType::Bool || t == DType::I8)
    t = DType::I32;
  SVal v = em.castTo(x, t, l);
  if (!v.ok())
    return v;
  const bool isFloat = isFloatT(t);
  gpu::AllReduceOperation op =
      name == "warp_reduce_sum"   ? gpu::AllReduceOperation::ADD
      : name == "warp_reduce_max" ? (isFloat ? gpu::AllReduceOperation::MAXIMUMF
                                             : gpu::AllReduceOperation::MAXSI)
                                  : (isFloat ? gpu::AllReduceOperation::MINIMUMF
                                             : gpu::AllReduceOperation::MINSI);
  if (t != DType::I64)
    return SVal::typed(gpu::SubgroupReduceOp::create(b, l, v.value, op, false),
                       t);
  // 64-bit integers: a shuffle moves 32 bits, so each butterfly step moves
  // both halves.
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value acc = v.value;
  Value c32 = arith::ConstantIntOp::create(b, l, i64, 32);
  for (int32_t offset = 16; offset >= 1; offset /= 2) {
    Value lo = arith::TruncIOp::create(b, l, i32, acc);
    Value hi = arith::TruncIOp::create(b, l, i32,
                                       arith::ShRUIOp::create(b, l, acc, c32));
    Value slo =
        gpu::ShuffleOp::create(b, l, lo, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    Value shi =
        gpu::ShuffleOp::create(b, l, hi, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    Value other = arith::OrIOp::create(
        b, l, arith::ExtUIOp::create(b, l, i64, slo),
        arith::ShLIOp::create(b, l, arith::ExtUIOp::create(b, l, i64, shi),
                              c32));
    acc = op == gpu::AllReduceOperation::ADD
              ? arith::AddIOp::create(b, l, acc, other).getResult()
          : op == gpu::AllReduceOperation::MAXSI
              ? arith::MaxSIOp::create(b, l, acc, other).getResult()
              : arith::MinSIOp::create(b, l, acc, other).getResult();
  }
  return SVal::typed(acc, t);
}

SVal lowerAllocShared(Emitter &em, BuiltinCall &call) {
  OpBuilder &b = em.b;
  Location l = call.l;
  // tile.alloc_shared[dtype](n), or tile.alloc_shared(n, dtype=...).
  std::optional<DType> dt;
  if (call.isMethod) {
    dt = call.args[0].cval.getDType();
    call.args.erase(call.args.begin());
  } else if (auto d = call.kwarg("dtype")) {
    dt = em.constDTypeArg(*d, call.sl);
    if (!dt)
      return SVal::invalid();
  }
  if (!call.accept(1, 1))
    return SVal::invalid();
  if (!dt)
    return call.error("tile.alloc_shared needs an element type: "
                      "tile.alloc_shared[dtype](n)");
  SVal n = call.args[0];
  if (!n.isConst() || !n.cval.isInt()) {
    em.noteRuntimeParameters(n);
    return call.error("tile.alloc_shared needs a compile-time size (a "
                      "constexpr integer), got " +
                      describe(n));
  }
  if (n.cval.getInt() < 1 || n.cval.getInt() > (int64_t(1) << 20))
    return call.error("tile.alloc_shared size must be 1 to 1048576 "
                      "elements, got " +
                      std::to_string(n.cval.getInt()));
  auto space = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto type = MemRefType::get({n.cval.getInt()}, em.storageType(*dt),
                              MemRefLayoutAttrInterface(), space);
  SVal v;
  v.kind = SVal::Kind::Tensor;
  v.value = memref::AllocaOp::create(b, l, type);
  v.dtype = *dt;
  v.name = "shared array";
  return v;
}

SVal lowerBarrier(Emitter &em, BuiltinCall &call) {
  if (!call.accept(0, 0))
    return SVal::invalid();
  gpu::BarrierOp::create(em.b, call.l);
  return SVal::constant(ConstValue::none());
}

} // namespace tessera::sema::detail
