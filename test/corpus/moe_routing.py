# Mixture-of-experts routing and small sorts, as serving libraries write
# them: the router's top-k experts per token found with tl.topk on keys
# that pack an order-preserving copy of the score above the expert id, a
# row sort with padding, and the merge of two sorted runs with
# tl.bitonic_merge.
import triton
import triton.language as tl


@triton.jit
def _ordered_key(score, expert, N_EXPERTS: tl.constexpr):
    # fp32 bits as an int32 that orders like the float, widened above the
    # reversed expert id: ties keep the lower expert first.
    bits = score.to(tl.int32, bitcast=True)
    ordered = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    return (ordered.to(tl.int64) << 32) | (N_EXPERTS - 1 - expert).to(tl.int64)


@triton.jit
def _unpack_expert(key, N_EXPERTS: tl.constexpr):
    return (N_EXPERTS - 1 - (key & 0xFFFFFFFF)).to(tl.int32)


@triton.jit
def fused_topk_softmax_kernel(
    gating_ptr,
    topk_weights_ptr,
    topk_ids_ptr,
    num_tokens,
    stride_gm,
    N_EXPERTS: tl.constexpr,
    BLOCK_E: tl.constexpr,
    TOPK: tl.constexpr,
    BLOCK_T: tl.constexpr,
    RENORMALIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, BLOCK_E)
    mask_t = offs_t < num_tokens
    mask = mask_t[:, None] & (offs_e[None, :] < N_EXPERTS)
    logits = tl.load(gating_ptr + offs_t[:, None] * stride_gm + offs_e[None, :], mask=mask,
                     other=-float("inf")).to(tl.float32)

    row_max = tl.max(logits, axis=1)
    p = tl.exp(logits - row_max[:, None])
    probs = p / tl.sum(p, axis=1)[:, None]

    keys = _ordered_key(probs, offs_e[None, :], N_EXPERTS)
    keys = tl.where(offs_e[None, :] < N_EXPERTS, keys, -(1 << 62))
    top = tl.topk(keys, TOPK, dim=1)

    ids = _unpack_expert(top, N_EXPERTS)
    offs_k = tl.arange(0, TOPK)
    # the weights are read back from the probabilities by expert id, so
    # they are exact, not rebuilt from the key's bits
    hit = ids[:, :, None] == offs_e[None, None, :]
    weights = tl.sum(tl.where(hit, probs[:, None, :], 0.0), axis=2)
    if RENORMALIZE:
        weights = weights / tl.sum(weights, axis=1)[:, None]

    out = offs_t[:, None] * TOPK + offs_k[None, :]
    tl.store(topk_weights_ptr + out, weights, mask=mask_t[:, None])
    tl.store(topk_ids_ptr + out, ids, mask=mask_t[:, None])


@triton.jit
def sort_rows_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr, DESCENDING: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    pad = -float("inf") if DESCENDING else float("inf")
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=pad)
    y = tl.sort(x, descending=DESCENDING)
    tl.store(y_ptr + row * stride + offs, y, mask=offs < n_cols)


@triton.jit
def merge_sorted_kernel(a_ptr, b_ptr, out_ptr, HALF: tl.constexpr):
    # a and b each hold HALF ascending values; a followed by b reversed is
    # bitonic, so one merge sorts the pair.
    pid = tl.program_id(0)
    offs = tl.arange(0, 2 * HALF)
    first = offs < HALF
    a = tl.load(a_ptr + pid * HALF + offs, mask=first)
    b = tl.load(b_ptr + pid * HALF + (2 * HALF - 1 - offs), mask=~first)
    merged = tl.bitonic_merge(tl.where(first, a, b))
    tl.store(out_ptr + pid * 2 * HALF + offs, merged)
