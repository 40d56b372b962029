"""An fp8 (e4m3) GEMM with per-tensor scales, as inference libraries write
one for quantised linear layers: A row-major, B column-major (the layout
torch._scaled_mm takes), fp32 accumulation in the tensor cores, both scales
applied once to the accumulator, a bf16 result. Programs are ordered in
groups of GROUP rows of tiles; the K tail is masked. Used by both compilers
in bench/gemm_fp8.py."""
import triton
import triton.language as tl


@triton.jit
def matmul_fp8(a_ptr, b_ptr, c_ptr, a_scale, b_scale, M, N, K, stride_am, stride_ak,
               stride_bk, stride_bn, stride_cm, stride_cn, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    in_group = GROUP * tiles_n
    first_m = (pid // in_group) * GROUP
    group_rows = min(tiles_m - first_m, GROUP)
    pid_m = first_m + (pid % in_group) % group_rows
    pid_n = (pid % in_group) // group_rows
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    acc = acc * (tl.load(a_scale) * tl.load(b_scale))
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))
