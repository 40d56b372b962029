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
    # program -> (row block, column block), row blocks grouped GROUP_SIZE_M at a time
    pid = tl.program_id(axis=0)
    n_row_blocks = tl.cdiv(EM, BLOCK_SIZE_M)
    n_col_blocks: tl.constexpr = (N + BLOCK_SIZE_N - 1) // BLOCK_SIZE_N
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

    x_ptrs = (x_ptr + (tok // top_k).to(tl.int64)[:, None] * stride_xm
              + ks[None, :] * stride_xk)
    qw_base = qw_ptr + expert * stride_we + cols.to(tl.int64)[None, :] * stride_wn
    s_base = scale_ptr + expert * stride_se + cols[None, :] * stride_sn
    if INT4:
        # two K values per byte: even k in the low nibble, odd k in the high one
        q_row = ks // 2
        q_shift = (ks % 2) * 4
        zero_point = 8
    else:
        q_row = ks
        zero_point = 128

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for kb in range(0, (K + BLOCK_SIZE_K - 1) // BLOCK_SIZE_K):
        k0 = kb * BLOCK_SIZE_K
        if EVEN_K:
            x_mask = live[:, None]
            w_mask = col_ok[None, :]
        else:
            k_ok = ks < K - k0
            x_mask = live[:, None] & k_ok[None, :]
            w_mask = k_ok[:, None] & col_ok[None, :]
        x_tile = tl.load(x_ptrs, mask=x_mask, other=0.0)

        # raw weight codes [BK, BN]
        if INT4:
            q = tl.load(qw_base + (k0 // 2 + q_row)[:, None] * stride_wk,
                        mask=w_mask, other=0).to(tl.int32)
            q = (q >> q_shift[:, None]) & 0xF
        else:
            q = tl.load(qw_base + (k0 + q_row)[:, None] * stride_wk,
                        mask=w_mask, other=0).to(tl.int32)
        # scale of each element's K group, gathered to the same [BK, BN] tile
        s_tile = tl.load(s_base + ((k0 + ks) // group_size)[:, None] * stride_sk,
                         mask=w_mask, other=0.0)
        w_tile = (q - zero_point).to(compute_type) * s_tile.to(compute_type)

        acc = tl.dot(x_tile, w_tile, acc=acc)
        x_ptrs += BLOCK_SIZE_K * stride_xk

    if MUL_ROUTED_WEIGHT:
        gate = tl.load(route_w_ptr + tok, mask=live, other=0.0)
        acc = acc * gate[:, None]

    # scatter the tile back to the routed rows
    o_ptrs = (out_ptr + tok.to(tl.int64)[:, None] * stride_om
              + cols[None, :] * stride_on)
    tl.store(o_ptrs, acc.to(compute_type), mask=live[:, None] & col_ok[None, :])


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
