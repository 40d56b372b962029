# A microscaled (MX) matmul in the style of the block-scaled GEMM tutorials:
# the weights in mxfp4 (e2m1, two per byte along K) or mxfp8 (e4m3 bits),
# the activations in mxfp8, each with one e8m0 exponent per 32 elements of
# K, multiplied with tl.dot_scaled into an fp32 accumulator. An mxfp4
# operand may instead hold its two values per byte along M (lhs) or N (rhs):
# A_K_PACK / B_K_PACK = False, passed on as lhs_k_pack / rhs_k_pack.
import triton
import triton.language as tl


@triton.jit
def mx_matmul_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K,
                     stride_am, stride_bk, stride_cm,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     A_FORMAT: tl.constexpr, B_FORMAT: tl.constexpr,
                     A_K_PACK: tl.constexpr = True, B_K_PACK: tl.constexpr = True):
    GROUP: tl.constexpr = 32
    A_PACK: tl.constexpr = 2 if A_FORMAT == "e2m1" else 1
    B_PACK: tl.constexpr = 2 if B_FORMAT == "e2m1" else 1
    A_PACK_K: tl.constexpr = A_PACK if A_K_PACK else 1
    A_PACK_M: tl.constexpr = 1 if A_K_PACK else A_PACK
    B_PACK_K: tl.constexpr = B_PACK if B_K_PACK else 1
    B_PACK_N: tl.constexpr = 1 if B_K_PACK else B_PACK
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_am = (pid_m * (BLOCK_M // A_PACK_M) + tl.arange(0, BLOCK_M // A_PACK_M)) % (M // A_PACK_M)
    offs_bn = (pid_n * (BLOCK_N // B_PACK_N) + tl.arange(0, BLOCK_N // B_PACK_N)) % (N // B_PACK_N)
    offs_ak = tl.arange(0, BLOCK_K // A_PACK_K)
    offs_bk = tl.arange(0, BLOCK_K // B_PACK_K)
    offs_s = tl.arange(0, BLOCK_K // GROUP)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptr + offs_am[:, None] * stride_am + (k * BLOCK_K // A_PACK_K + offs_ak)[None, :])
        b = tl.load(b_ptr + (k * BLOCK_K // B_PACK_K + offs_bk)[:, None] * stride_bk + offs_bn[None, :])
        a_scale = tl.load(a_scale_ptr + offs_m[:, None] * (K // GROUP) + (k * BLOCK_K // GROUP + offs_s)[None, :])
        b_scale = tl.load(b_scale_ptr + offs_n[:, None] * (K // GROUP) + (k * BLOCK_K // GROUP + offs_s)[None, :])
        acc = tl.dot_scaled(a, a_scale, A_FORMAT, b, b_scale, B_FORMAT, acc=acc,
                            lhs_k_pack=A_K_PACK, rhs_k_pack=B_K_PACK)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], acc, mask=mask)


@triton.jit
def mx_bmm_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K,
                  BATCH: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, A_K_PACK: tl.constexpr):
    # Batched: mxfp4 a (BATCH, M, K) times mxfp8 b (BATCH, K, N), one
    # (BLOCK_M, BLOCK_N) tile of every product per program, the batch as
    # the leading dim of 3-D blocks.
    GROUP: tl.constexpr = 32
    PACK_K: tl.constexpr = 2 if A_K_PACK else 1
    PACK_M: tl.constexpr = 1 if A_K_PACK else 2
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_b = tl.arange(0, BATCH)[:, None, None]
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_am = pid_m * (BLOCK_M // PACK_M) + tl.arange(0, BLOCK_M // PACK_M)
    offs_ak = tl.arange(0, BLOCK_K // PACK_K)
    offs_k = tl.arange(0, BLOCK_K)
    offs_s = tl.arange(0, BLOCK_K // GROUP)
    a_rows = M // PACK_M
    a_cols = K // PACK_K
    acc = tl.zeros((BATCH, BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptr + offs_b * (a_rows * a_cols) + offs_am[None, :, None] * a_cols
                    + (k * BLOCK_K // PACK_K + offs_ak)[None, None, :])
        b = tl.load(b_ptr + offs_b * (K * N) + (k * BLOCK_K + offs_k)[None, :, None] * N
                    + offs_n[None, None, :])
        sk = (k * BLOCK_K // GROUP + offs_s)[None, None, :]
        a_scale = tl.load(a_scale_ptr + offs_b * (M * (K // GROUP)) + offs_m[None, :, None] * (K // GROUP) + sk)
        b_scale = tl.load(b_scale_ptr + offs_b * (N * (K // GROUP)) + offs_n[None, :, None] * (K // GROUP) + sk)
        acc = tl.dot_scaled(a, a_scale, "e2m1", b, b_scale, "e4m3", acc=acc, lhs_k_pack=A_K_PACK)
    c_ptrs = c_ptr + offs_b * (M * N) + offs_m[None, :, None] * N + offs_n[None, None, :]
    tl.store(c_ptrs, acc)
