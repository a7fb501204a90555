//===- PrintOncePerBlock.cpp - A tile program prints from one thread ------===//
//
// See Passes.td: each gpu.printf of a kernel runs on thread (0, 0, 0).
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_PRINTONCEPERBLOCKPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {

struct PrintOncePerBlockPass
    : mlir::tessera::impl::PrintOncePerBlockPassBase<PrintOncePerBlockPass> {
  void runOnOperation() override {
    SmallVector<gpu::PrintfOp> prints;
    getOperation().walk([&](gpu::PrintfOp op) {
      if (op->getParentOfType<gpu::GPUFuncOp>())
        prints.push_back(op);
    });
    for (gpu::PrintfOp op : prints) {
      OpBuilder b(op);
      Location l = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, l, 0);
      Value first;
      for (gpu::Dimension d :
           {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
        Value is0 =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                  gpu::ThreadIdOp::create(b, l, d), zero);
        first = first ? arith::AndIOp::create(b, l, first, is0) : is0;
      }
      auto ifOp = scf::IfOp::create(b, l, first, /*withElseRegion=*/false);
      op->moveBefore(ifOp.thenBlock()->getTerminator());
    }
  }
};

} // namespace
