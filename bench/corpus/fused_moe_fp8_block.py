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
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    if pid_m * BLOCK_SIZE_M >= tl.load(num_tokens_post_padded_ptr):
        return
    offs_token = tl.load(sorted_token_ids_ptr + pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M))
    token_mask = offs_token < num_valid_tokens
    off_expert = tl.load(expert_ids_ptr + pid_m)
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_rows = offs_token // top_k
    a_ptrs = a_ptr + a_rows[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + off_expert * stride_be + offs_bn[None, :] * stride_bn + offs_k[:, None]
    a_scale_ptrs = a_scale_ptr + a_rows * stride_asm
    b_scale_ptrs = b_scale_ptr + off_expert * stride_bse + (offs_bn // group_n) * stride_bsn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        kmask = offs_k < K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=token_mask[:, None] & kmask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=kmask[:, None], other=0.0)
        ks = (k * BLOCK_SIZE_K) // group_k
        a_s = tl.load(a_scale_ptrs + ks, mask=token_mask, other=0.0)
        b_s = tl.load(b_scale_ptrs + ks)
        acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K
    w = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0.0)
    acc = acc * w[:, None]
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + offs_token[:, None] * stride_cm + offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=token_mask[:, None] & (offs_cn[None, :] < N))
