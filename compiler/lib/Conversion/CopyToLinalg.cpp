//===- CopyToLinalg.cpp - memref.copy as linalg.copy ----------------------===//

#include "tessera/Conversion/Passes.h"

namespace mlir::tessera {
#define GEN_PASS_DEF_COPYTOLINALGPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;

namespace {
struct CopyToLinalgPass
    : mlir::tessera::impl::CopyToLinalgPassBase<CopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      // A copy of a buffer onto itself (left by in-place bufferization of a
      // slice inserted where it came from) does nothing.
      if (op.getSource() != op.getTarget())
        linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};
} // namespace
