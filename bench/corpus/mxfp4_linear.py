"""An mxfp4 linear layer as gpt-oss style MoE and dense paths run it on
GPUs without native fp4 MMA: the weight W [N, K] is stored as e2m1 codes
packed two per byte along K (element 2i in the low nibble), [N, K // 2]
uint8, with one e8m0 exponent per 32 elements of K per output row,
[N, K // 32] uint8; the activations x [M, K] stay in bf16 and go in
unscaled. y = x @ (W * 2^s)^T through tl.dot_scaled (lhs "bf16" with
scale None, rhs "e2m1"), fp32 accumulation, bf16 out. K need not be a
multiple of BLOCK_K (gpt-oss' hidden size of 2880 is not): the last K
step masks the activations, the packed bytes and the scales."""
import torch
import triton
import triton.language as tl


@triton.jit
def mxfp4_matmul_kernel(x_ptr, w_ptr, w_scale_ptr, y_ptr, M, N, K,
                        stride_xm, stride_wn, stride_wsn, stride_ym,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    MX_GROUP: tl.constexpr = 32
    PACKED_K: tl.constexpr = BLOCK_K // 2
    SCALE_K: tl.constexpr = BLOCK_K // MX_GROUP
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_xm = offs_m % M
    offs_wn = offs_n % N
    offs_k = tl.arange(0, BLOCK_K)
    offs_pk = tl.arange(0, PACKED_K)
    offs_sk = tl.arange(0, SCALE_K)

    x_ptrs = x_ptr + offs_xm[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_wn[None, :] * stride_wn + offs_pk[:, None]
    ws_ptrs = w_scale_ptr + offs_wn[:, None] * stride_wsn + offs_sk[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        w = tl.load(w_ptrs, mask=offs_pk[:, None] < k_left // 2, other=0)
        w_scale = tl.load(ws_ptrs, mask=offs_sk[None, :] < k_left // MX_GROUP, other=0)
        acc = tl.dot_scaled(x, None, "bf16", w, w_scale, "e2m1", acc=acc)
        x_ptrs += BLOCK_K
        w_ptrs += PACKED_K
        ws_ptrs += SCALE_K

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    y_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(y_ptrs, acc.to(tl.bfloat16), mask=y_mask)


def mxfp4_linear(x, w_packed, w_scale):
    """x [M, K] bf16; w_packed [N, K // 2] uint8 (e2m1 pairs); w_scale [N, K // 32] uint8."""
    M, K = x.shape
    N = w_packed.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.bfloat16)
    decode = M <= 16
    block_m, block_n = (16, 64) if decode else (128, 128)
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    mxfp4_matmul_kernel[grid](x, w_packed, w_scale, y, M, N, K, x.stride(0), w_packed.stride(0),
                              w_scale.stride(0), y.stride(0), BLOCK_M=block_m, BLOCK_N=block_n,
                              BLOCK_K=256 if decode else 128, num_warps=4 if decode else 8,
                              num_stages=3)
    return y
