"""The fused MoE GEMM with block-scaled fp8 weights and activations: per
token-group scales for A ([tokens, K / group_k]) and per (group_n x group_k)
block scales per expert for B, applied inside the K loop; rows gathered
through the expert-sorted token ids; bf16 out, router weight applied."""
import torch
import triton
import triton.language as tl


@triton.jit
def fused_moe_fp8_kernel(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, topk_weights_ptr,
                         sorted_token_ids_ptr, expert_ids_ptr, num_tokens_post_padded_ptr,
                         N, K, EM, num_valid_tokens, stride_am, stride_be, stride_bn, stride_cm,
                         stride_asm, stride_bse, stride_bsn, group_n: tl.constexpr,
                         group_k: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                         BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                         GROUP_SIZE_M: tl.constexpr, top_k: tl.constexpr):
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

    # fp8 tiles: A [BLOCK_SIZE_M, BLOCK_SIZE_K] gathered by token, B
    # [BLOCK_SIZE_K, BLOCK_SIZE_N] from the expert's K-contiguous [N, K] matrix
    a_tile_ptrs = a_ptr + src_rows[:, None] * stride_am + kk[None, :]
    b_tile_ptrs = b_ptr + expert * stride_be + kk[:, None] + cols[None, :] * stride_bn
    # scale rows: one per token for A, one per N group for B (K groups contiguous)
    a_scale_row = a_scale_ptr + src_rows * stride_asm
    b_scale_col = b_scale_ptr + expert * stride_bse + (cols // group_n) * stride_bsn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        k_ok = (k0 + kk) < K
        a_tile = tl.load(a_tile_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b_tile = tl.load(b_tile_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        k_group = k0 // group_k
        a_s = tl.load(a_scale_row + k_group, mask=row_ok, other=0.0)
        b_s = tl.load(b_scale_col + k_group, mask=col_ok, other=0.0)
        partial = tl.dot(a_tile, b_tile)
        acc += partial * a_s[:, None] * b_s[None, :]
        a_tile_ptrs += BLOCK_SIZE_K
        b_tile_ptrs += BLOCK_SIZE_K

    route_w = tl.load(topk_weights_ptr + flat_ids, mask=row_ok, other=0.0)
    acc = acc * route_w[:, None]

    # scatter the bf16 rows back to their (token, slot) positions
    out = acc.to(tl.bfloat16)
    c_tile_ptrs = c_ptr + flat_ids[:, None].to(tl.int64) * stride_cm + cols[None, :]
    tl.store(c_tile_ptrs, out, mask=row_ok[:, None] & col_ok[None, :])
