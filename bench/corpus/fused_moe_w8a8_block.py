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
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(EM, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    per_group = GROUP_SIZE_M * tiles_n
    first_m = (pid // per_group) * GROUP_SIZE_M
    rows_here = min(tiles_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % per_group) % rows_here
    pid_n = (pid % per_group) // rows_here
    if pid_m * BLOCK_SIZE_M >= tl.load(n_sorted_ptr):
        return
    slot = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    token = tl.load(sorted_ids_ptr + slot).to(tl.int64)
    live = token < n_valid
    expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
    cols = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    ks = tl.arange(0, BLOCK_SIZE_K)
    x_ptrs = x_ptr + (token[:, None] // top_k * stride_xm + ks[None, :] * stride_xk)
    w_ptrs = w_ptr + expert * stride_we + (ks[:, None] * stride_wk + cols[None, :] * stride_wn)
    xs_ptrs = x_scale_ptr + (token // top_k) * stride_xsm
    if BLOCK_SIZE_N > group_n:
        ws_cols = cols // group_n
    else:
        ws_cols = pid_n * BLOCK_SIZE_N // group_n
    ws_ptrs = w_scale_ptr + expert * stride_wse + ws_cols * stride_wsn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k_start in range(0, K, BLOCK_SIZE_K):
        if EVEN_K:
            x = tl.load(x_ptrs, mask=live[:, None], other=0.0)
            w = tl.load(w_ptrs)
        else:
            x = tl.load(x_ptrs, mask=live[:, None] & (ks[None, :] < K - k_start), other=0.0)
            w = tl.load(w_ptrs, mask=ks[:, None] < K - k_start, other=0.0)
        kb = k_start // group_k
        x_s = tl.load(xs_ptrs + kb * stride_xsk, mask=live, other=0.0)
        w_s = tl.load(ws_ptrs + kb * stride_wsk)
        if BLOCK_SIZE_N > group_n:
            acc += tl.dot(x, w) * x_s[:, None] * w_s[None, :]
        else:
            acc += tl.dot(x, w) * (x_s[:, None] * w_s)
        x_ptrs += BLOCK_SIZE_K * stride_xk
        w_ptrs += BLOCK_SIZE_K * stride_wk
    rw = tl.load(route_w_ptr + token, mask=live, other=0)
    acc *= rw[:, None]
    out_cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    o_ptrs = out_ptr + stride_om * token[:, None] + stride_on * out_cols[None, :]
    tl.store(o_ptrs, acc.to(tl.bfloat16), mask=live[:, None] & (out_cols[None, :] < N))


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
