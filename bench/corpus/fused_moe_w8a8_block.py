"""The fused MoE GEMM on w8a8 weights and activations (int8 or fp8) with
block-wise scales, written the way serving engines write it: int64 token
and column offsets, a K loop over k_start with the tail mask chosen by a
constexpr (EVEN_K), and, where the N tile is one scale block wide, the
weight scale loaded as one scalar per step and folded into the per-row
activation scale before it meets the dot (`dot * (a_s[:, None] * b_s)`).
Rows are gathered through the expert-sorted token ids; bf16 out, scaled by
the router weight."""
import torch
import triton
import triton.language as tl


@triton.jit
def moe_w8a8_block_kernel(x_ptr, w_ptr, out_ptr, x_scale_ptr, w_scale_ptr, route_w_ptr,
                          sorted_ids_ptr, block_expert_ptr, n_sorted_ptr,
                          N, K, EM, n_valid, stride_xm, stride_xk, stride_we, stride_wk,
                          stride_wn, stride_om, stride_on, stride_xsm, stride_xsk, stride_wse,
                          stride_wsk, stride_wsn, group_n: tl.constexpr, group_k: tl.constexpr,
                          BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                          BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                          top_k: tl.constexpr, EVEN_K: tl.constexpr):
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

    slot = blk_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    tok = tl.load(sorted_ids_ptr + slot, mask=slot < EM, other=n_valid).to(tl.int64)
    live = tok < n_valid
    src_row = tok // top_k
    expert = tl.load(block_expert_ptr + blk_m).to(tl.int64)

    cols = blk_n.to(tl.int64) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    col_ok = cols < N
    ks = tl.arange(0, BLOCK_SIZE_K)

    x_ptrs = x_ptr + src_row[:, None] * stride_xm + ks[None, :] * stride_xk
    w_ptrs = w_ptr + expert * stride_we + ks[:, None] * stride_wk + cols[None, :] * stride_wn
    # per-row activation scales, and the weight scales of this expert
    xs_ptrs = x_scale_ptr + src_row * stride_xsm
    if group_n >= BLOCK_SIZE_N:
        # the whole column tile shares one weight scale per K block
        ws_ptrs = w_scale_ptr + expert * stride_wse + (blk_n * BLOCK_SIZE_N // group_n) * stride_wsn
    else:
        ws_ptrs = w_scale_ptr + expert * stride_wse + (cols // group_n) * stride_wsn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k_start in range(0, K, BLOCK_SIZE_K):
        if EVEN_K:
            x_tile = tl.load(x_ptrs, mask=live[:, None], other=0)
            w_tile = tl.load(w_ptrs, mask=col_ok[None, :], other=0)
        else:
            k_ok = ks < K - k_start
            x_tile = tl.load(x_ptrs, mask=live[:, None] & k_ok[None, :], other=0)
            w_tile = tl.load(w_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0)
        kg = k_start // group_k
        x_s = tl.load(xs_ptrs + kg * stride_xsk, mask=live, other=0.0)
        if group_n >= BLOCK_SIZE_N:
            w_s = tl.load(ws_ptrs + kg * stride_wsk)
            acc += tl.dot(x_tile, w_tile).to(tl.float32) * (x_s[:, None] * w_s)
        else:
            w_s = tl.load(ws_ptrs + kg * stride_wsk, mask=col_ok, other=0.0)
            acc += tl.dot(x_tile, w_tile).to(tl.float32) * (x_s[:, None] * w_s[None, :])
        x_ptrs += BLOCK_SIZE_K * stride_xk
        w_ptrs += BLOCK_SIZE_K * stride_wk

    gate = tl.load(route_w_ptr + tok, mask=live, other=0.0)
    acc = acc * gate[:, None]

    # scatter the tile back to the routed rows
    o_ptrs = out_ptr + tok[:, None] * stride_om + cols[None, :] * stride_on
    tl.store(o_ptrs, acc.to(tl.bfloat16), mask=live[:, None] & col_ok[None, :])


def moe_w8a8_block(x, w, x_scale, w_scale, route_w, sorted_ids, block_expert, n_sorted,
                   top_k, block_shape, config):
    """x [T, K] and w [E, N, K] int8 or fp8; x_scale [T, K / gk]; w_scale
    [E, N / gn, K / gk]; returns [T * top_k, N] bf16 in routed order."""
    T, K = x.shape
    E, N, _ = w.shape
    gn, gk = block_shape
    out = torch.empty((T * top_k, N), device=x.device, dtype=torch.bfloat16)
    BM, BN, BK = config["BLOCK_SIZE_M"], config["BLOCK_SIZE_N"], config["BLOCK_SIZE_K"]
    grid = (triton.cdiv(sorted_ids.shape[0], BM) * triton.cdiv(N, BN),)
    moe_w8a8_block_kernel[grid](
        x, w, out, x_scale, w_scale, route_w, sorted_ids, block_expert, n_sorted,
        N, K, sorted_ids.shape[0], T * top_k, x.stride(0), x.stride(1), w.stride(0),
        w.stride(2), w.stride(1), out.stride(0), out.stride(1), x_scale.stride(0),
        x_scale.stride(1), w_scale.stride(0), w_scale.stride(2), w_scale.stride(1),
        group_n=gn, group_k=gk, top_k=top_k, EVEN_K=K % BK == 0, **config)
    return out
