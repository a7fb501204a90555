"""The block and warp rule of the row kernels (softmax, layernorm)."""

from .common import MAX_FUSED_BYTES, next_pow2, storage_bytes
from .common import warps as config_warps

# Most row elements one thread keeps in registers before more warps are
# used (keeps a resident f32 row at <= 64 registers per thread).
MAX_ELEMENTS_PER_THREAD = 64

# Tessera's tuning hints that a Triton kernel has no use for.
ROW_HINTS = ("BLOCK_SIZE", "VECTOR_WIDTH", "WARP_REDUCE",
             "WARP_REDUCE_STAGES", "ONE_BLOCK")


def row_block(dtype, row_len, config, default_warps=None):
    """(BLOCK_SIZE, ONE_BLOCK, num_warps, notes) for a row of `row_len`.

    Triton style: BLOCK_SIZE is the next power of 2 of the row, at most
    MAX_FUSED_BYTES of storage; a row that fits is one block kept in
    registers (ONE_BLOCK), a longer one is walked in blocks of that size.
    num_warps is the configuration's (Tessera's) when given, otherwise the
    layer-norm tutorial's min(max(BLOCK_SIZE // 256, 1), 8) or
    `default_warps`; it is raised when a thread would hold more than
    MAX_ELEMENTS_PER_THREAD elements of the block."""
    cap = MAX_FUSED_BYTES // storage_bytes(dtype)
    block = min(next_pow2(row_len), cap)
    one_block = next_pow2(row_len) <= cap
    notes = [f"BLOCK_SIZE = next_pow2(row length {row_len}) capped at "
             f"{MAX_FUSED_BYTES} bytes of storage ({cap} elements); "
             + ("the row is one block held in registers" if one_block
                else "the row is read in blocks of that size")]
    for hint in ROW_HINTS:
        if config.take(hint) is not None:
            notes.append(f"Tessera's {hint} is not used (Triton picks the "
                         "block and the access width)")
    if config.has("num_warps"):
        warps = config_warps(config)
        source = "the configuration's num_warps"
    else:
        warps = default_warps or min(max(block // 256, 1), 8)
        source = "Triton's tutorial choice of num_warps"
    needed = min(32, max(1, block // (32 * MAX_ELEMENTS_PER_THREAD)))
    if warps < needed:
        notes.append(f"{source} ({warps}) raised to {needed} so that a "
                     f"thread holds at most {MAX_ELEMENTS_PER_THREAD} "
                     "elements")
        warps = needed
    else:
        notes.append(f"num_warps is {source}")
    return block, one_block, warps, notes
