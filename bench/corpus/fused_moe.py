"""Fused mixture-of-experts GEMM: tokens are sorted by expert and padded to
a multiple of BLOCK_SIZE_M per expert (sorted_token_ids, with padding
entries >= num_valid_tokens), expert_ids gives each block's expert, and
each program multiplies its gathered token rows by that expert's weight
([E, N, K], read K-major), scaling by the router weight when asked."""
import torch
import triton
import triton.language as tl


@triton.jit
def fused_moe_kernel(a_ptr, b_ptr, c_ptr, topk_weights_ptr, sorted_token_ids_ptr, expert_ids_ptr,
                     num_tokens_post_padded_ptr, N, K, EM, num_valid_tokens, stride_am, stride_ak,
                     stride_be, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                     BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                     MUL_ROUTED_WEIGHT: tl.constexpr, top_k: tl.constexpr,
                     compute_type: tl.constexpr):
    # map the flat program id onto (row block, column block), walking
    # GROUP_SIZE_M row blocks down one column band before moving right
    pid = tl.program_id(0)
    n_row_blocks = tl.cdiv(EM, BLOCK_SIZE_M)
    n_col_blocks = tl.cdiv(N, BLOCK_SIZE_N)
    if pid >= n_row_blocks * n_col_blocks:
        return
    band_size = GROUP_SIZE_M * n_col_blocks
    band_first_row = (pid // band_size) * GROUP_SIZE_M
    band_rows = tl.minimum(n_row_blocks - band_first_row, GROUP_SIZE_M)
    in_band = pid % band_size
    row_blk = band_first_row + in_band % band_rows
    col_blk = in_band // band_rows

    # row blocks past the padded sorted length hold no work
    padded_len = tl.load(num_tokens_post_padded_ptr)
    if row_blk * BLOCK_SIZE_M >= padded_len:
        return

    # the sorted (token, slot) ids of this row block; padding ids are dropped
    slots = row_blk * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    flat_ids = tl.load(sorted_token_ids_ptr + slots, mask=slots < EM, other=num_valid_tokens)
    row_ok = flat_ids < num_valid_tokens
    src_rows = (flat_ids // top_k).to(tl.int64)
    expert = tl.load(expert_ids_ptr + row_blk).to(tl.int64)

    cols = col_blk * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    col_ok = cols < N
    kk = tl.arange(0, BLOCK_SIZE_K)

    # A tile [BLOCK_SIZE_M, BLOCK_SIZE_K] gathered by token; B tile
    # [BLOCK_SIZE_K, BLOCK_SIZE_N] read from the expert's [N, K] matrix
    a_tile_ptrs = a_ptr + src_rows[:, None] * stride_am + kk[None, :] * stride_ak
    b_tile_ptrs = (b_ptr + expert * stride_be + kk[:, None] * stride_bk
                   + cols[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        k_ok = (k0 + kk) < K
        a_tile = tl.load(a_tile_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b_tile = tl.load(b_tile_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a_tile_ptrs += BLOCK_SIZE_K * stride_ak
        b_tile_ptrs += BLOCK_SIZE_K * stride_bk

    if MUL_ROUTED_WEIGHT:
        route_w = tl.load(topk_weights_ptr + flat_ids, mask=row_ok, other=0.0)
        acc = acc * route_w[:, None]

    # scatter the rows back to their (token, slot) positions
    out = acc.to(compute_type)
    c_tile_ptrs = c_ptr + flat_ids[:, None].to(tl.int64) * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile_ptrs, out, mask=row_ok[:, None] & col_ok[None, :])


def invoke_fused_moe_kernel(A, B, C, topk_weights, sorted_token_ids, expert_ids,
                            num_tokens_post_padded, top_k, config, mul_routed_weight=True):
    EM = sorted_token_ids.shape[0]
    grid = lambda META: (triton.cdiv(EM, META["BLOCK_SIZE_M"]) * triton.cdiv(B.shape[1], META["BLOCK_SIZE_N"]),)
    fused_moe_kernel[grid](A, B, C, topk_weights, sorted_token_ids, expert_ids,
                           num_tokens_post_padded, B.shape[1], B.shape[2], EM,
                           topk_weights.numel(), A.stride(0), A.stride(1), B.stride(0),
                           B.stride(2), B.stride(1), C.stride(1), C.stride(2),
                           MUL_ROUTED_WEIGHT=mul_routed_weight, top_k=top_k,
                           compute_type=tl.bfloat16 if A.dtype == torch.bfloat16 else tl.float16,
                           **config)
