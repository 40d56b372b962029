# Weights prefetched by hand: the next step's tile is loaded at the end of a
# pipelined loop's body and carried into the next iteration, where it is
# interleaved with a scaled copy of itself (join and reshape), as int4 GEMMs
# unpack their packed weights.
import triton
import triton.language as tl


@triton.jit
def carried_prefetch_kernel(w_ptr, out_ptr, n_steps, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    ptrs = w_ptr + rows[:, None] * BN + cols[None, :]
    w = tl.load(ptrs)
    acc = tl.zeros((BM, 2 * BN), dtype=tl.float32)
    for i in tl.range(0, n_steps, num_stages=2):
        acc += tl.join(w, w * 2.0).reshape(BM, 2 * BN)
        ptrs += BM * BN
        w = tl.load(ptrs, mask=i + 1 < n_steps, other=0.0)
    tl.store(out_ptr + rows[:, None] * (2 * BN) + tl.arange(0, 2 * BN)[None, :], acc)
