"""The fused MoE GEMM with int8 weights and 16-bit activations (w8a16),
one fp32 scale per expert output channel: each K step widens the int8
weight tile to the activations' type straight into the dot
(`tl.dot(a, w.to(compute_type), acc=acc)`), and the channel scales,
loaded once as a [1, BLOCK_N] row before the loop, multiply the
accumulator after it. Rows gathered through the expert-sorted token ids,
group-ordered programs, the router weight applied when asked."""
import torch
import triton
import triton.language as tl


@triton.jit
def moe_w8a16_kernel(a_ptr, w_ptr, out_ptr, w_scale_ptr, route_w_ptr, sorted_ids_ptr,
                     block_expert_ptr, n_sorted_ptr, N, K, EM, n_valid, stride_am, stride_ak,
                     stride_we, stride_wk, stride_wn, stride_om, stride_on, stride_wse,
                     stride_wsn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                     BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                     MUL_ROUTED_WEIGHT: tl.constexpr, top_k: tl.constexpr,
                     compute_type: tl.constexpr):
    # program -> (row block, column block), row blocks grouped GROUP_SIZE_M at a time
    pid = tl.program_id(axis=0)
    n_row_blocks = tl.cdiv(EM, BLOCK_SIZE_M)
    n_col_blocks = tl.cdiv(N, BLOCK_SIZE_N)
    if pid >= n_row_blocks * n_col_blocks:
        return
    per_group = GROUP_SIZE_M * n_col_blocks
    row_base = (pid // per_group) * GROUP_SIZE_M
    rows_here = tl.minimum(n_row_blocks - row_base, GROUP_SIZE_M)
    blk_m = row_base + (pid % per_group) % rows_here
    blk_n = (pid % per_group) // rows_here

    # row blocks past the end of the sorted list do no work
    if blk_m * BLOCK_SIZE_M >= tl.load(n_sorted_ptr):
        return

    slot = blk_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    tok = tl.load(sorted_ids_ptr + slot, mask=slot < EM, other=n_valid)
    live = tok < n_valid
    expert = tl.load(block_expert_ptr + blk_m).to(tl.int64)

    cols = blk_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    col_ok = cols < N
    ks = tl.arange(0, BLOCK_SIZE_K)

    # gathered activation rows [BM, BK] and the expert's weight tile [BK, BN]
    a_ptrs = (a_ptr + (tok // top_k).to(tl.int64)[:, None] * stride_am
              + ks[None, :] * stride_ak)
    w_ptrs = (w_ptr + expert * stride_we + ks[:, None] * stride_wk
              + cols.to(tl.int64)[None, :] * stride_wn)

    # one fp32 scale per output channel of this expert
    ch_scale = tl.load(w_scale_ptr + expert * stride_wse + cols[None, :] * stride_wsn,
                       mask=col_ok[None, :], other=0.0)

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - kb * BLOCK_SIZE_K
        a_tile = tl.load(a_ptrs, mask=live[:, None] & (ks[None, :] < k_left), other=0.0)
        w_tile = tl.load(w_ptrs, mask=(ks[:, None] < k_left) & col_ok[None, :], other=0)
        acc = tl.dot(a_tile, w_tile.to(compute_type), acc=acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        w_ptrs += BLOCK_SIZE_K * stride_wk

    acc = acc * ch_scale
    if MUL_ROUTED_WEIGHT:
        gate = tl.load(route_w_ptr + tok, mask=live, other=0.0)
        acc = acc * gate[:, None]

    # scatter the tile back to the routed rows
    o_ptrs = (out_ptr + tok.to(tl.int64)[:, None] * stride_om
              + cols[None, :] * stride_on)
    tl.store(o_ptrs, acc.to(compute_type), mask=live[:, None] & col_ok[None, :])


def moe_w8a16(a, w, w_scale, route_w, sorted_ids, block_expert, n_sorted, top_k, config,
              mul_routed_weight=False):
    """a [T, K] bf16 or fp16; w [E, N, K] int8; w_scale [E, N] fp32;
    returns [T * top_k, N] in a's type, in routed order."""
    T, K = a.shape
    E, N, _ = w.shape
    out = torch.empty((T * top_k, N), device=a.device, dtype=a.dtype)
    BM, BN = config["BLOCK_SIZE_M"], config["BLOCK_SIZE_N"]
    grid = (triton.cdiv(sorted_ids.shape[0], BM) * triton.cdiv(N, BN),)
    moe_w8a16_kernel[grid](
        a, w, out, w_scale, route_w, sorted_ids, block_expert, n_sorted, N, K,
        sorted_ids.shape[0], T * top_k, a.stride(0), a.stride(1), w.stride(0), w.stride(2),
        w.stride(1), out.stride(0), out.stride(1), w_scale.stride(0), w_scale.stride(1),
        MUL_ROUTED_WEIGHT=mul_routed_weight, top_k=top_k,
        compute_type=tl.bfloat16 if a.dtype == torch.bfloat16 else tl.float16, **config)
    return out
