"""Normalisation kernels for a library where triton is optional: the kernels
are defined only when the import succeeds, and plain PyTorch code stands in
for them otherwise (CPU-only installs, other accelerators)."""
import importlib.util
import warnings

import torch

try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:
    triton = None
    tl = None
    HAS_TRITON = False
    warnings.warn("triton is not installed; falling back to PyTorch for the fused norms")

_TRITON_SPEC = importlib.util.find_spec("triton") is not None

if HAS_TRITON:
    EPS_DEFAULT = tl.constexpr(1e-6)

    @triton.jit
    def _rsqrt_mean_square(x, n_cols, eps):
        return 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)

    @triton.jit
    def _add_rmsnorm_kernel(out_ptr, res_out_ptr, x_ptr, res_ptr, w_ptr, stride, n_cols, eps,
                            BLOCK: tl.constexpr):
        """out = rmsnorm(x + res) * w, and the sum x + res kept for the next
        residual branch (the pre-norm transformer pattern)."""
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        x += tl.load(res_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(res_out_ptr + row * stride + cols, x.to(res_out_ptr.dtype.element_ty), mask=mask)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = x * _rsqrt_mean_square(x, n_cols, eps) * w
        tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)

    def add_rmsnorm(x, residual, weight, eps=1e-6):
        x2 = x.reshape(-1, x.shape[-1])
        out, res_out = torch.empty_like(x2), torch.empty_like(x2)
        block = triton.next_power_of_2(x2.shape[1])
        _add_rmsnorm_kernel[(x2.shape[0],)](out, res_out, x2, residual.reshape(x2.shape), weight,
                                            x2.stride(0), x2.shape[1], eps, BLOCK=block)
        return out.view_as(x), res_out.view_as(x)
else:
    _add_rmsnorm_kernel = None

    def add_rmsnorm(x, residual, weight, eps=1e-6):
        s = x + residual
        return s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps) * weight, s


if not HAS_TRITON:
    def l2_normalize(x, eps=1e-12):
        return x / x.norm(dim=-1, keepdim=True).clamp_min(eps)
else:
    @triton.jit
    def _l2norm_kernel(y_ptr, x_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=0)), eps)
        tl.store(y_ptr + row * stride + cols, (x / norm).to(y_ptr.dtype.element_ty), mask=mask)

    def l2_normalize(x, eps=1e-12):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        _l2norm_kernel[(x2.shape[0],)](y, x2, x2.shape[1], x2.stride(0), eps,
                                       BLOCK=triton.next_power_of_2(x2.shape[1]))
        return y.view_as(x)

if triton is not None and _TRITON_SPEC:
    @triton.jit
    def _relu_sq_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
        """Squared ReLU (Primer), elementwise."""
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        r = tl.maximum(x, 0.0)
        tl.store(y_ptr + offs, r * r, mask=offs < n)
