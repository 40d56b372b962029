"""The fused MoE GEMM on weight-only quantised experts (w4a16 and w8a16,
GPTQ/AWQ style), as serving engines write it: int4 weights packed two to a
byte along K (`offs_k // 2` rows, a nibble shift chosen by `offs_k % 2`),
int8 weights one to a byte, a zero point (8 or 128) subtracted and a bf16
scale per group of K gathered as a [BLOCK_K, BLOCK_N] tile in every step;
the weight dequantised to the activations' type before `tl.dot(x, w,
acc=acc)`. N and K are constexprs; rows gathered through the
expert-sorted token ids, the router weight applied at the end."""
import torch
import triton
import triton.language as tl


@triton.jit
def moe_wna16_kernel(x_ptr, qw_ptr, out_ptr, scale_ptr, route_w_ptr, sorted_ids_ptr,
                     block_expert_ptr, n_sorted_ptr, EM, n_valid, stride_xm, stride_xk,
                     stride_we, stride_wk, stride_wn, stride_om, stride_on, stride_se,
                     stride_sk, stride_sn, N: tl.constexpr, K: tl.constexpr,
                     group_size: tl.constexpr,
                     BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                     BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                     MUL_ROUTED_WEIGHT: tl.constexpr, top_k: tl.constexpr,
                     compute_type: tl.constexpr, INT4: tl.constexpr, EVEN_K: tl.constexpr):
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
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    x_ptrs = x_ptr + (token[:, None] // top_k * stride_xm + offs_k[None, :] * stride_xk)
    if INT4:
        w_ptrs = (qw_ptr + expert * stride_we + (offs_k[:, None] // 2) * stride_wk +
                  cols[None, :] * stride_wn)
        nibble = (offs_k[:, None] % 2) * 4
        zero_point = 8
    else:
        w_ptrs = qw_ptr + expert * stride_we + offs_k[:, None] * stride_wk + cols[None, :] * stride_wn
        zero_point = 128
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if EVEN_K:
            k_mask = None
            k_other = None
        else:
            k_mask = offs_k[:, None] < K - k * BLOCK_SIZE_K
            k_other = 0.0
        x = tl.load(x_ptrs, mask=live[:, None] & (offs_k[None, :] < K - k * BLOCK_SIZE_K),
                    other=0.0)
        w = tl.load(w_ptrs)
        if INT4:
            w = (w >> nibble) & 0xF
        s_ptrs = (scale_ptr + expert * stride_se + cols[None, :] * stride_sn +
                  ((offs_k[:, None] + BLOCK_SIZE_K * k) // group_size) * stride_sk)
        s = tl.load(s_ptrs, mask=k_mask, other=k_other).to(tl.float32)
        w = ((w.to(tl.float32) - zero_point) * s).to(compute_type)
        acc = tl.dot(x, w, acc=acc)
        x_ptrs += BLOCK_SIZE_K * stride_xk
        if INT4:
            w_ptrs += (BLOCK_SIZE_K // 2) * stride_wk
        else:
            w_ptrs += BLOCK_SIZE_K * stride_wk
    if MUL_ROUTED_WEIGHT:
        rw = tl.load(route_w_ptr + token, mask=live, other=0)
        acc = acc * rw[:, None]
    out_cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    o_ptrs = out_ptr + stride_om * token[:, None] + stride_on * out_cols[None, :]
    tl.store(o_ptrs, acc.to(compute_type), mask=live[:, None] & (out_cols[None, :] < N))


def moe_wna16(x, qw, scales, route_w, sorted_ids, block_expert, n_sorted, top_k, group_size,
              config, int4=True, mul_routed_weight=False):
    """x [T, K] bf16; qw [E, N, K // 2] uint8 (int4, two along K a byte) or
    [E, N, K] uint8; scales [E, N, K // group_size] bf16; returns
    [T * top_k, N] bf16 in routed order."""
    T, K = x.shape
    E, N, _ = qw.shape
    out = torch.empty((T * top_k, N), device=x.device, dtype=x.dtype)
    BM, BN, BK = config["BLOCK_SIZE_M"], config["BLOCK_SIZE_N"], config["BLOCK_SIZE_K"]
    grid = (triton.cdiv(sorted_ids.shape[0], BM) * triton.cdiv(N, BN),)
    moe_wna16_kernel[grid](
        x, qw, out, scales, route_w, sorted_ids, block_expert, n_sorted, sorted_ids.shape[0],
        T * top_k, x.stride(0), x.stride(1), qw.stride(0), qw.stride(2), qw.stride(1),
        out.stride(0), out.stride(1), scales.stride(0), scales.stride(2), scales.stride(1),
        N=N, K=K, group_size=group_size, MUL_ROUTED_WEIGHT=mul_routed_weight,
        top_k=top_k, compute_type=tl.bfloat16, INT4=int4, EVEN_K=K % BK == 0, **config)
    return out
