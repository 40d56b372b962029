"""fp8e4b15 quantisation for GPUs without fp8 hardware (Ampere), the way
Triton's own fp8 matmul code used Triton's software format: a per-tensor
scale from the absolute maximum, codes kept in uint8 storage (torch has no
fp8e4b15 dtype), and a matmul that loads the codes back and multiplies them
in fp16. The format holds at most 1.875 and its conversion saturates at
1.75, so tensors are scaled into [-1.75, 1.75] first."""
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import convert_custom_float8_sm80

# the largest value the conversion gives (the format's 1.875 is out of its reach)
FP8E4B15_MAX = tl.constexpr(1.75)


@triton.jit
def _absmax_kernel(x_ptr, amax_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0).to(tl.float32)
    tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0))


@triton.jit
def _quant_fp8e4b15_kernel(x_ptr, amax_ptr, q_ptr, scale_ptr, n_elements, EPS: tl.constexpr,
                           BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    amax = tl.maximum(tl.load(amax_ptr), EPS)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # Triton's own conversion: fp32 truncated to fp16, clamped, ties away from zero
    q = convert_custom_float8_sm80(x * (FP8E4B15_MAX / amax), tl.float8e4b15)
    tl.store(q_ptr + offs, q.to(tl.uint8, bitcast=True), mask=mask)
    if pid == 0:
        tl.store(scale_ptr, amax / FP8E4B15_MAX)


@triton.jit
def _dequant_fp8e4b15_kernel(q_ptr, scale_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    q = tl.load(q_ptr + offs, mask=mask, other=0).to(tl.float8e4b15, bitcast=True)
    out = q.to(tl.float32) * tl.load(scale_ptr)
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _fp8e4b15_matmul_kernel(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, M, N, K,
                            stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0)
        # the uint8 storage viewed as codes; tl.dot multiplies fp8e4b15 in fp16
        acc = tl.dot(a.to(tl.float8e4b15, bitcast=True), b.to(tl.float8e4b15, bitcast=True), acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = acc * (tl.load(a_scale_ptr) * tl.load(b_scale_ptr))
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def quantize_fp8e4b15(x: torch.Tensor, eps: float = 1e-12):
    """Per-tensor quantisation: (uint8 codes shaped like x, fp32 scale of
    one element) with x ~= decoded codes * scale."""
    x = x.contiguous()
    n = x.numel()
    amax = torch.zeros(1, device=x.device, dtype=torch.float32)
    q = torch.empty(x.shape, device=x.device, dtype=torch.uint8)
    scale = torch.empty(1, device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(n, 1024),)
    _absmax_kernel[grid](x, amax, n, BLOCK=1024)
    _quant_fp8e4b15_kernel[grid](x, amax, q, scale, n, EPS=eps, BLOCK=1024)
    return q, scale


def dequantize_fp8e4b15(q: torch.Tensor, scale: torch.Tensor, dtype=torch.float32):
    out = torch.empty(q.shape, device=q.device, dtype=dtype)
    n = q.numel()
    _dequant_fp8e4b15_kernel[(triton.cdiv(n, 1024),)](q, scale, out, n, BLOCK=1024)
    return out


def fp8e4b15_matmul(a_q, a_scale, b_q, b_scale, out_dtype=torch.float16):
    """(a_q * a_scale) @ (b_q * b_scale) from uint8 codes, in fp16 with an fp32 accumulator."""
    M, K = a_q.shape
    _, N = b_q.shape
    c = torch.empty((M, N), device=a_q.device, dtype=out_dtype)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    _fp8e4b15_matmul_kernel[grid](a_q, b_q, c, a_scale, b_scale, M, N, K, a_q.stride(0),
                                  a_q.stride(1), b_q.stride(0), b_q.stride(1), c.stride(0),
                                  c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c


if __name__ == "__main__":
    a = torch.randn(256, 512, device="cuda")
    b = torch.randn(512, 128, device="cuda")
    (aq, sa), (bq, sb) = quantize_fp8e4b15(a), quantize_fp8e4b15(b)
    print((dequantize_fp8e4b15(aq, sa) - a).abs().max().item())
    print((fp8e4b15_matmul(aq, sa, bq, sb).float() - a @ b).abs().max().item())
