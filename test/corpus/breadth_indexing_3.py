"""Lookback reads that start before the tensor (block pointers with NaN
padding, descriptors at negative coordinates), top-k expert routing through
tl.sort and tl.gather, and a gather that picks each token's source buffer
with tl.where on pointers, written with tensor methods and negative axes."""
import triton
import triton.language as tl

exp = tl.exp


@triton.jit
def lookback_kernel(x_ptr, y_bp_ptr, y_desc_ptr, T, D: tl.constexpr, BT: tl.constexpr,
                    LOOKBACK: tl.constexpr):
    # row t of both outputs is row t - LOOKBACK of x; rows before the start
    # read the padding (NaN through the block pointer, zero through the
    # descriptor)
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (pid * BT - LOOKBACK, 0), (BT, D), (1, 0))
    dst = tl.make_block_ptr(y_bp_ptr, (T, D), (D, 1), (pid * BT, 0), (BT, D), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1), padding_option="nan"), boundary_check=(0,))
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[T, D], strides=[D, 1], block_shape=[BT, D])
    y_desc = tl.make_tensor_descriptor(y_desc_ptr, shape=[T, D], strides=[D, 1], block_shape=[BT, D])
    y_desc.store([pid * BT, 0], x_desc.load([pid * BT - LOOKBACK, 0]))


@triton.jit
def topk_route_kernel(logits_ptr, perm_ptr, weights_ptr, permuted_ptr, counts_ptr, num_tokens,
                      E: tl.constexpr, TOPK: tl.constexpr, BLOCK_T: tl.constexpr,
                      RENORMALIZE: tl.constexpr):
    # each token keeps its TOPK largest logits (the TOPK-th of the sorted
    # row is the threshold) and softmaxes over them; counts_ptr gets how
    # many tokens of the block chose each expert, permuted_ptr the logits
    # in the order of a loaded permutation of the experts
    pid = tl.program_id(0)
    rows = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, E)
    rmask = rows < num_tokens
    logits = tl.load(logits_ptr + rows[:, None] * E + cols[None, :], mask=rmask[:, None],
                     other=float("-inf"))
    ranked = tl.sort(logits, dim=1, descending=True)
    thr = tl.sum(tl.where(cols[None, :] == TOPK - 1, ranked, 0.0), axis=-1)
    chosen = (logits >= thr[:, None]) & rmask[:, None]
    top = ranked.max(axis=-1)
    p = tl.where(chosen, exp(logits - top[:, None]), 0.0)
    if RENORMALIZE:
        p = p / p.sum(axis=-1, keep_dims=True)
    tl.store(weights_ptr + rows[:, None] * E + cols[None, :], p, mask=rmask[:, None])
    perm = tl.load(perm_ptr + cols)
    idx = tl.broadcast_to(perm[None, :], (BLOCK_T, E))
    tl.store(permuted_ptr + rows[:, None] * E + cols[None, :], tl.gather(logits, idx, 1),
             mask=rmask[:, None])
    tl.store(counts_ptr + pid * E + cols, chosen.to(tl.int32).sum(0))


@triton.jit
def select_source_kernel(cache_ptr, new_ptr, slot_ptr, out_ptr, rowsum_ptr, num_tokens,
                         D: tl.constexpr, BLOCK_T: tl.constexpr):
    # tokens with a slot >= 0 read their row from the cache at that slot,
    # the others read row `token` of the new buffer; one gather through a
    # block of pointers chosen by tl.where
    pid = tl.program_id(0)
    toks = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = toks < num_tokens
    d = tl.arange(0, D)
    slot = tl.load(slot_ptr + toks, mask=tmask, other=-1).to(tl.int64)
    from_cache = slot >= 0
    ptrs = tl.where(from_cache[:, None], cache_ptr + slot[:, None] * D + d[None, :],
                    new_ptr + toks[:, None] * D + d[None, :])
    x = tl.load(ptrs, mask=tmask[:, None], other=0.0).to(tl.float32)
    tl.store(out_ptr + toks[:, None] * D + d[None, :], x.trans().trans(), mask=tmask[:, None])
    tl.store(rowsum_ptr + toks, x.cumsum(-1).max(axis=-1), mask=tmask)
