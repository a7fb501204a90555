//===- FiberScheduler.h - GPU threads as fibers for the sim device
//---------===//
//
// Runs a thread block of a per-thread kernel entry (see
// driver::SimExecutable) on the calling OS thread: one ucontext fiber per GPU
// thread, switched at `gpu.barrier` (tessera_sim_barrier). A barrier that only
// part of the block reaches is reported, never silently released.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_SIM_FIBERSCHEDULER_H
#define TESSERA_RUNTIME_SIM_FIBERSCHEDULER_H

#include "Sim/Counters.h"
#include "tessera/Support/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessera::sim {

/// The barrier entry point the JIT'd kernels call (registered as the
/// symbol "tessera_sim_barrier").
extern "C" void tessera_sim_barrier(int64_t context, int64_t site);
/// bar.sync `id`, `count` (nvvm.barrier with its operands): waits until
/// `count` threads wait at barrier `id` (0 threads: the whole block, as
/// tessera_sim_barrier); more than `count`, or a wait no other thread can
/// complete, fails the launch.
extern "C" void tessera_sim_named_barrier(int64_t context, int64_t id,
                                          int64_t count, int64_t site);
/// bar.arrive `id`, `count` (nvvm.barrier.arrive): counts this thread
/// towards the current phase of barrier `id` without waiting. A phase
/// completes once its waiters and arrivals make `count`; arrivals alone
/// complete it with nobody released. Ids 1-15 only.
extern "C" void tessera_sim_named_barrier_arrive(int64_t context, int64_t id,
                                                 int64_t count, int64_t site);
/// A warp shuffle (mode: 0 xor, 1 down, 2 up, 3 idx, as gpu.shuffle):
/// waits until every lane of the warp has issued the same shuffle, then
/// returns (valid << 32) | the source lane's 32-bit value.
extern "C" int64_t tessera_sim_shuffle(int64_t context, int64_t value,
                                       int64_t offset, int64_t width,
                                       int64_t mode, int64_t site);
/// ldmatrix.sync.aligned.m8n8.x{tiles}[.trans].b16, a warp collective:
/// `address` is this lane's row (16 bytes), `out` receives its 2*tiles
/// 16-bit elements.
extern "C" void tessera_sim_ldmatrix(int64_t context, int64_t address,
                                     int64_t tiles, int64_t transpose,
                                     int64_t out, int64_t site);
/// mma.sync.aligned.m16n8k16.row.col with f32 accumulation, a warp
/// collective over the lanes' fragments (a: 8 x 16-bit, b: 4 x 16-bit,
/// c and d: 4 x f32). kind: 0 f16 inputs, 1 bf16 inputs.
extern "C" void tessera_sim_mma(int64_t context, int64_t kind, int64_t a,
                                int64_t b, int64_t c, int64_t d, int64_t site);
/// wgmma.mma_async.sync.aligned.m64nNk16 (m64nNk32 for fp8, m64nNk8 for
/// tf32) with f32
/// accumulation, a warpgroup collective (the four warps of threads
/// 128g .. 128g+127): A and B are read from shared memory through their
/// matrix descriptors (`descA`, `descB`), `acc` holds this thread's N/2 f32
/// accumulators and receives D. `config` packs the instruction: bits 0-8
/// N, bit 9 tf32 inputs (m64nNk8, bits 10-11 then 0), bits 10-11 the input
/// format (0 f16, 1 bf16, 2 e4m3, 3 e5m2), bit 12 A
/// transposed (MN-major), bit 13 B transposed, bit 14 scale-d (0: D = A B,
/// ignoring the accumulators), bit 15 A from registers (`descA` is then the
/// address of this thread's 4 words of A, the m64k16 register fragment),
/// bits 16 and up the accumulator's chain (the products that continue one
/// another's accumulators, numbered by the sim lowering).
extern "C" void tessera_sim_wgmma(int64_t context, int64_t config,
                                  int64_t descA, int64_t descB, int64_t acc,
                                  int64_t site);
/// A read of the accumulators of chain `chain` (a use other than moving
/// them): fails the launch unless a wgmma.wait_group of this thread has
/// retired the chain's latest product.
extern "C" void tessera_sim_wgmma_read(int64_t context, int64_t chain,
                                       int64_t site);
/// mbarriers (nvgpu.mbarrier.*), shared by the block. `create` returns the
/// first of the `n` barriers of the group created at `site` (the same for
/// every thread). `init` sets a barrier's arrival count; `arrive` counts
/// one arrival after adding `tx` expected transaction bytes and returns the
/// phase it arrived in (-1 when `predicate` is 0); a phase completes when
/// all its arrivals are in and its transaction bytes have landed.
/// `test_wait` is 1 once the phase of `token` has completed; `wait_parity`
/// blocks the thread until the phase of parity `parity` has completed
/// (a wait that can never end fails the launch as a deadlock naming the
/// waiting threads, and a wait that passes on a phase the thread already
/// waited for fails it as a wrong-phase wait).
extern "C" int64_t tessera_sim_mbarrier_create(int64_t context, int64_t n,
                                               int64_t site);
extern "C" void tessera_sim_mbarrier_init(int64_t context, int64_t id,
                                          int64_t count, int64_t predicate,
                                          int64_t site);
extern "C" int64_t tessera_sim_mbarrier_arrive(int64_t context, int64_t id,
                                               int64_t tx, int64_t predicate,
                                               int64_t site);
extern "C" int64_t tessera_sim_mbarrier_test_wait(int64_t context, int64_t id,
                                                  int64_t token, int64_t site);
extern "C" void tessera_sim_mbarrier_wait_parity(int64_t context, int64_t id,
                                                 int64_t parity, int64_t site);
/// A tensor map as the sim's TMA copies read it: the runtime fills one per
/// tensor-map kernel argument, whose slot holds its address. Dimensions are
/// innermost first, as cuTensorMapEncodeTiled takes them.
struct SimTensorMap {
  int64_t base = 0; ///< address of element (0, ..., 0)
  int64_t rank = 0;
  int64_t dims[5] = {0, 0, 0, 0, 0};    ///< elements
  int64_t strides[5] = {0, 0, 0, 0, 0}; ///< bytes (strides[0]: the element)
  int64_t box[5] = {0, 0, 0, 0, 0};     ///< elements
  int64_t elementBytes = 0;
  int64_t swizzle = 0; ///< bytes: 0, 32, 64 or 128
};
/// cp.async.bulk.tensor (nvgpu.tma.async.load) of the box at coordinates
/// c0..c4 (innermost first) of the tensor `map` describes into shared
/// memory at `dst`: elements outside the tensor are zeros, rows are laid
/// out densely and swizzled on the address bits as the hardware does. The
/// copy lands at once and completes its bytes on mbarrier `id`; until a
/// thread has waited for the phase it completes, that thread reading the
/// destination fails the launch (as does the copy overwriting bytes a
/// wgmma still reads or another thread accessed in the same barrier
/// epoch).
extern "C" void tessera_sim_tma_load(int64_t context, int64_t map, int64_t id,
                                     int64_t dst, int64_t c0, int64_t c1,
                                     int64_t c2, int64_t c3, int64_t c4,
                                     int64_t predicate, int64_t site);
/// wgmma.fence / commit_group / wait_group N of the issuing thread.
extern "C" void tessera_sim_wgmma_fence(int64_t context);
extern "C" void tessera_sim_wgmma_commit(int64_t context);
extern "C" void tessera_sim_wgmma_wait(int64_t context, int64_t pending);
/// cp.async (nvgpu.device_async_copy): recorded, performed when the thread
/// waits for its group (or when it ends); bytes past `srcBytes` are zeros.
/// Addresses not aligned to `bytes` fail the launch (naming `site`).
extern "C" void tessera_sim_cp_async(int64_t context, int64_t dst, int64_t src,
                                     int64_t bytes, int64_t srcBytes,
                                     int64_t site);
/// cp.async.commit_group: the copies issued since the last commit form a
/// group.
extern "C" void tessera_sim_cp_async_commit(int64_t context);
/// cp.async.wait_group N: completes all but the N most recent groups.
extern "C" void tessera_sim_cp_async_wait(int64_t context, int64_t pending);
/// Reports a faulting access at `site` (the access was skipped): `reason`
/// 0 out of bounds, 1 a vector access not aligned as it promised.
extern "C" void tessera_sim_fault(int64_t context, int64_t site,
                                  int64_t reason);
/// Every memory access: byte address, size, kind (0 read, 1 write,
/// 2 atomic) and site. Accesses to the block's shared arena are checked
/// for races within a barrier epoch.
extern "C" void tessera_sim_access(int64_t context, int64_t address,
                                   int64_t bytes, int64_t kind, int64_t site);
/// The access hook of code compiled with counters: tessera_sim_access, then
/// the access is counted when the block counts.
extern "C" void tessera_sim_access_counted(int64_t context, int64_t address,
                                           int64_t bytes, int64_t kind,
                                           int64_t site);
/// A conditional branch about to be taken (`taken` 1) or not (0), reported
/// by code compiled with counters; counted when the block counts.
extern "C" void tessera_sim_branch(int64_t context, int64_t site,
                                   int64_t taken);

/// What a block needs: the entry, its argument slots and the block shape.
struct BlockLaunch {
  void (*entry)(void **) = nullptr;
  /// Kernel argument slots followed by the shared-buffer descriptors; the
  /// scheduler appends thread id, block ids, grid and context per thread.
  const std::vector<int64_t> *slots = nullptr;
  int64_t blockSize = 0;
  int64_t block[3] = {0, 0, 0};
  int64_t grid[3] = {1, 1, 1};
  std::string kernel; ///< for messages
  /// The shared-memory arena (for the race checker); may be empty.
  const unsigned char *arena = nullptr;
  int64_t arenaBytes = 0;
  /// Descriptions of the instrumented access sites, by id.
  const std::vector<std::string> *sites = nullptr;
  /// When set, the block's accesses, branches and barriers are counted
  /// (Counters.h) and added to it once the block has run. Null: nothing
  /// is counted.
  LaunchCounts *counts = nullptr;
};

/// Runs one block to completion on this OS thread. Fails when a barrier is
/// reached by only part of the block (the block is abandoned), and after
/// the block when an access was out of bounds or two threads raced on a
/// shared-memory word within one barrier epoch (the first problem found is
/// reported: kernel, block, thread(s), the access site).
Status runBlock(const BlockLaunch &launch);

/// The simulator's entry points by the names the sim lowering calls them
/// (tessera_sim_barrier, _shuffle, _fault, _access, _branch, ...), for the
/// JIT.
std::vector<std::pair<std::string, void *>> runtimeSymbols();

} // namespace tessera::sim

#endif // TESSERA_RUNTIME_SIM_FIBERSCHEDULER_H
