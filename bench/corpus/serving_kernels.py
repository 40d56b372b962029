"""Kernels from the serving and fine-tuning stacks: a chunk of the fused
linear + cross-entropy forward (the logits of a row block computed tile by
tile over the vocabulary and folded straight into an online logsumexp, so
the [rows, vocab] logits never reach memory); NeoX rotary embedding of q
and k in place from a model-dtype cos/sin cache indexed by int64
positions, heads taken a group at a time; new keys and values written into
a paged fp8 (e4m3) KV cache in HND page layout through a slot mapping,
each divided by its per-tensor scale and clamped to the e4m3 range; and
top-p (nucleus) renormalisation of a probability row whose threshold is
found by bisection over probability values, each step a masked sum of the
row taken tile by tile."""
import torch
import triton
import triton.language as tl


# ---- fused linear + cross-entropy, one chunk of rows -----------------------------------------

@triton.jit
def fused_linear_ce_chunk_kernel(x_ptr, w_ptr, target_ptr, loss_ptr, lse_ptr,
                                 n_rows, vocab, hidden, stride_xm, stride_wv, ignore_index,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    target = tl.load(target_ptr + rows, mask=row_ok, other=ignore_index)
    offs_k = tl.arange(0, BLOCK_K)
    x_base = x_ptr + rows.to(tl.int64)[:, None] * stride_xm

    # running max, running sum of exp(logit - max), and the target's logit, per row
    row_max = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    target_logit = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for v_start in range(0, vocab, BLOCK_N):
        cols = v_start + tl.arange(0, BLOCK_N)
        col_ok = cols < vocab
        w_base = w_ptr + cols.to(tl.int64)[None, :] * stride_wv
        logits = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k_start in range(0, hidden, BLOCK_K):
            kk = k_start + offs_k
            k_ok = kk < hidden
            x = tl.load(x_base + kk[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            # W is [vocab, hidden]: read a [BLOCK_K, BLOCK_N] slab of W^T
            w = tl.load(w_base + kk[:, None], mask=k_ok[:, None] & col_ok[None, :], other=0.0)
            logits = tl.dot(x, w, logits)
        logits = tl.where(col_ok[None, :], logits, float("-inf"))
        tile_max = tl.max(logits, axis=1)
        new_max = tl.maximum(row_max, tile_max)
        row_sum = row_sum * tl.exp(row_max - new_max) + \
            tl.sum(tl.exp(logits - new_max[:, None]), axis=1)
        row_max = new_max
        # the target column falls in exactly one tile
        hit = cols[None, :] == target[:, None]
        target_logit += tl.sum(tl.where(hit, logits, 0.0), axis=1)

    lse = row_max + tl.log(row_sum)
    loss = tl.where(target == ignore_index, 0.0, lse - target_logit)
    tl.store(loss_ptr + rows, loss, mask=row_ok)
    # the logsumexp is kept for the backward chunk (softmax = exp(logit - lse))
    tl.store(lse_ptr + rows, lse, mask=row_ok)


def fused_linear_ce_chunk(x, weight, target, ignore_index=-100, BLOCK_M=64, BLOCK_N=128,
                          BLOCK_K=64):
    rows, hidden = x.shape
    vocab = weight.shape[0]
    loss = torch.empty(rows, device=x.device, dtype=torch.float32)
    lse = torch.empty(rows, device=x.device, dtype=torch.float32)
    fused_linear_ce_chunk_kernel[(triton.cdiv(rows, BLOCK_M),)](
        x, weight, target, loss, lse, rows, vocab, hidden, x.stride(0), weight.stride(0),
        ignore_index, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4,
        num_stages=3)
    return loss, lse


# ---- rotary embedding from a cos/sin cache ---------------------------------------------------

@triton.jit
def _rotate_neox_heads(head_base, num_heads, cos, sin, HEAD_SIZE: tl.constexpr,
                       HEAD_GROUP: tl.constexpr):
    HALF: tl.constexpr = HEAD_SIZE // 2
    d = tl.arange(0, HALF)
    g = tl.arange(0, HEAD_GROUP)
    for h_start in range(0, num_heads, HEAD_GROUP):
        heads = h_start + g
        live = (heads < num_heads)[:, None]
        first = head_base + heads[:, None] * HEAD_SIZE + d[None, :]
        x1 = tl.load(first, mask=live, other=0.0).to(tl.float32)
        x2 = tl.load(first + HALF, mask=live, other=0.0).to(tl.float32)
        o1 = x1 * cos - x2 * sin
        o2 = x2 * cos + x1 * sin
        tl.store(first, o1.to(head_base.dtype.element_ty), mask=live)
        tl.store(first + HALF, o2.to(head_base.dtype.element_ty), mask=live)


@triton.jit
def rope_cos_sin_cache_kernel(q_ptr, k_ptr, cos_sin_cache_ptr, positions_ptr, q_token_stride,
                              k_token_stride, cache_stride, num_q_heads, num_k_heads,
                              HEAD_SIZE: tl.constexpr, HEAD_GROUP: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    pos = tl.load(positions_ptr + token)
    HALF: tl.constexpr = HEAD_SIZE // 2
    d = tl.arange(0, HALF)
    # one cache row per position: cos in the first half, sin in the second (model dtype)
    cache_row = cos_sin_cache_ptr + pos * cache_stride
    cos = tl.load(cache_row + d).to(tl.float32)[None, :]
    sin = tl.load(cache_row + HALF + d).to(tl.float32)[None, :]
    _rotate_neox_heads(q_ptr + token * q_token_stride, num_q_heads, cos, sin, HEAD_SIZE,
                       HEAD_GROUP)
    _rotate_neox_heads(k_ptr + token * k_token_stride, num_k_heads, cos, sin, HEAD_SIZE,
                       HEAD_GROUP)


def rope_cos_sin_cache(positions, q, k, cos_sin_cache, HEAD_GROUP=8):
    tokens, num_q_heads, head_size = q.shape
    rope_cos_sin_cache_kernel[(tokens,)](
        q, k, cos_sin_cache, positions, q.stride(0), k.stride(0), cos_sin_cache.stride(0),
        num_q_heads, k.shape[1], HEAD_SIZE=head_size, HEAD_GROUP=HEAD_GROUP, num_warps=4)
    return q, k


# ---- paged fp8 KV cache store -----------------------------------------------------------------

@triton.jit
def kv_cache_fp8_store_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr,
                              slot_mapping_ptr, k_scale_ptr, v_scale_ptr, key_stride,
                              value_stride, block_stride, head_stride, num_kv_heads, block_size,
                              HEAD_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                              FP8_MAX: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_mapping_ptr + token)
    # padding tokens of a CUDA-graph batch carry slot -1 and own no cache entry
    if slot < 0:
        return
    page = slot // block_size
    in_page = slot % block_size
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, HEAD_SIZE)
    live = (h < num_kv_heads)[:, None]
    src = h[:, None] * HEAD_SIZE + d[None, :]
    # HND pages: [num_blocks, kv_heads, block_size, head_size]
    dst = page * block_stride + h[:, None] * head_stride + in_page * HEAD_SIZE + d[None, :]
    k_scale = tl.load(k_scale_ptr)
    v_scale = tl.load(v_scale_ptr)
    k = tl.load(key_ptr + token * key_stride + src, mask=live, other=0.0).to(tl.float32)
    v = tl.load(value_ptr + token * value_stride + src, mask=live, other=0.0).to(tl.float32)
    k = tl.clamp(k / k_scale, -FP8_MAX, FP8_MAX)
    v = tl.clamp(v / v_scale, -FP8_MAX, FP8_MAX)
    tl.store(key_cache_ptr + dst, k.to(key_cache_ptr.dtype.element_ty), mask=live)
    tl.store(value_cache_ptr + dst, v.to(value_cache_ptr.dtype.element_ty), mask=live)


def kv_cache_fp8_store(key, value, key_cache, value_cache, slot_mapping, k_scale, v_scale):
    tokens, num_kv_heads, head_size = key.shape
    kv_cache_fp8_store_kernel[(tokens,)](
        key, value, key_cache, value_cache, slot_mapping, k_scale, v_scale, key.stride(0),
        value.stride(0), key_cache.stride(0), key_cache.stride(1), num_kv_heads,
        key_cache.shape[2], HEAD_SIZE=head_size, BLOCK_H=triton.next_power_of_2(num_kv_heads),
        FP8_MAX=448.0, num_warps=4)


# ---- top-p renormalisation --------------------------------------------------------------------

@triton.jit
def top_p_renorm_sort_kernel(probs_ptr, top_p_ptr, out_ptr, vocab, stride_p, stride_o,
                             N_ITERS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    p_row = probs_ptr + row * stride_p
    o_row = out_ptr + row * stride_o
    top_p = tl.load(top_p_ptr + row)
    offs = tl.arange(0, BLOCK)

    # the largest probability bounds the search; the whole row's mass is what a
    # threshold of zero keeps
    tile_max = tl.zeros((BLOCK,), dtype=tl.float32)
    tile_sum = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, vocab, BLOCK):
        cols = start + offs
        p = tl.load(p_row + cols, mask=cols < vocab, other=0.0)
        tile_max = tl.maximum(tile_max, p)
        tile_sum += p
    hi = tl.max(tile_max, axis=0)
    lo = tl.zeros_like(hi)
    kept = tl.sum(tile_sum, axis=0)

    # invariant: the mass at or above lo reaches top_p, the mass at or above hi
    # does not (or hi is the largest probability); halve [lo, hi] N_ITERS times
    for _ in range(N_ITERS):
        mid = (lo + hi) * 0.5
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, vocab, BLOCK):
            cols = start + offs
            p = tl.load(p_row + cols, mask=cols < vocab, other=0.0)
            acc += tl.where(p >= mid, p, 0.0)
        mass = tl.sum(acc, axis=0)
        enough = mass >= top_p
        lo = tl.where(enough, mid, lo)
        hi = tl.where(enough, hi, mid)
        kept = tl.where(enough, mass, kept)

    for start in range(0, vocab, BLOCK):
        cols = start + offs
        m = cols < vocab
        p = tl.load(p_row + cols, mask=m, other=0.0)
        tl.store(o_row + cols, tl.where(p >= lo, p / kept, 0.0), mask=m)


def top_p_renorm(probs, top_p, N_ITERS=32, BLOCK=2048):
    rows, vocab = probs.shape
    out = torch.empty_like(probs)
    top_p_renorm_sort_kernel[(rows,)](probs, top_p, out, vocab, probs.stride(0), out.stride(0),
                                      N_ITERS=N_ITERS, BLOCK=BLOCK, num_warps=4)
    return out
