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
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(EM, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    per_group = GROUP_SIZE_M * tiles_n
    first_m = (pid // per_group) * GROUP_SIZE_M
    rows_here = min(tiles_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + ((pid % per_group) % rows_here)
    pid_n = (pid % per_group) // rows_here
    if pid_m * BLOCK_SIZE_M >= tl.load(n_sorted_ptr):
        return
    slot = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    token = tl.load(sorted_ids_ptr + slot)
    live = token < n_valid
    expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
    cols = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (token[:, None] // top_k * stride_am + ks[None, :] * stride_ak)
    w_ptrs = w_ptr + expert * stride_we + (ks[:, None] * stride_wk + cols[None, :] * stride_wn)
    w_scale = tl.load(w_scale_ptr + expert * stride_wse + cols[None, :] * stride_wsn)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=live[:, None] & (ks[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=ks[:, None] < k_left, other=0)
        acc = tl.dot(a, w.to(compute_type), acc=acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        w_ptrs += BLOCK_SIZE_K * stride_wk
    acc *= w_scale
    if MUL_ROUTED_WEIGHT:
        acc *= tl.load(route_w_ptr + token, mask=live, other=0)[:, None]
    out_cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    o_ptrs = out_ptr + stride_om * token[:, None] + stride_on * out_cols[None, :]
    tl.store(o_ptrs, acc.to(compute_type), mask=live[:, None] & (out_cols[None, :] < N))


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
