"""Per-token int8 quantisation of activations and the matching dequantise,
as inference engines do before an int8 GEMM: absmax scale per row, rounding
to nearest, an optional upper bound for the scale (None when unused)."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


def quant_configs():
    return [triton.Config({}, num_warps=w) for w in [1, 2, 4, 8, 16]]


@triton.autotune(configs=quant_configs(), key=["N"])
@triton.jit
def _per_token_quant_int8(x_ptr, xq_ptr, scale_ptr, scale_ub_ptr, stride_x, stride_xq, N,
                          EPS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    ok = c < N
    v = tl.load(x_ptr + r * stride_x + c, mask=ok, other=0.0).to(tl.float32)
    peak = tl.maximum(tl.max(tl.abs(v), axis=0), EPS)
    if scale_ub_ptr is not None:
        peak = tl.minimum(peak, tl.load(scale_ub_ptr).to(tl.float32))
    step = peak / 127.0
    q = libdevice.round(v / step)
    q = tl.minimum(tl.maximum(q, -127.0), 127.0)
    tl.store(xq_ptr + r * stride_xq + c, q.to(tl.int8), mask=ok)
    tl.store(scale_ptr + r, step)


@triton.jit
def _dequant_int8(xq_ptr, scale_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    q = tl.load(xq_ptr + row * N + cols, mask=mask, other=0)
    s = tl.load(scale_ptr + row)
    out = q.to(tl.float32) * s
    if out_ptr.dtype.element_ty.is_fp16() or out_ptr.dtype.element_ty.is_bf16():
        out = out.to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + row * N + cols, out, mask=mask)


def per_token_quant_int8(x, scale_ub=None):
    M, N = x.reshape(-1, x.shape[-1]).shape
    x_q = torch.empty((M, N), device=x.device, dtype=torch.int8)
    scales = torch.empty((M, 1), device=x.device, dtype=torch.float32)
    _per_token_quant_int8[(M,)](x, x_q, scales, scale_ub, x.stride(-2), x_q.stride(-2), N,
                                EPS=1e-10, BLOCK=triton.next_power_of_2(N))
    return x_q, scales


if __name__ == "__main__":
    x = torch.randn(16, 4096, device="cuda", dtype=torch.float16)
    xq, s = per_token_quant_int8(x)
    print(((xq.float() * s) - x.float()).abs().max())
