"""Normalisation fused with the residual add and an fp8 output, as the
quantised serving paths write it: RMSNorm that adds the residual in place
and stores e4m3 through a static per-tensor scale (1/scale multiplied in,
then clamped to the fp8 range), and LayerNorm over x + residual that picks a
dynamic per-token scale (row absmax / FP8_MAX) and stores it beside the
quantised row."""
import torch
import triton
import triton.language as tl


@triton.jit
def _fused_add_rms_norm_static_fp8(x_ptr, residual_ptr, weight_ptr, out_ptr, scale_ptr,
                                   stride_x, stride_r, stride_out, n_cols, eps,
                                   BLOCK_N: tl.constexpr, FP8_MAX: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    res = tl.load(residual_ptr + row * stride_r + cols, mask=mask, other=0.0).to(tl.float32)
    h = x + res
    # the residual stream keeps the sum for the next layer
    tl.store(residual_ptr + row * stride_r + cols, h.to(residual_ptr.dtype.element_ty),
             mask=mask)
    ms = tl.sum(h * h, axis=0) / n_cols
    rstd = tl.rsqrt(ms + eps)
    w = tl.load(weight_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv_scale = 1.0 / tl.load(scale_ptr)
    y = tl.clamp(h * rstd * w * inv_scale, -FP8_MAX, FP8_MAX)
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_layer_norm_dynamic_fp8(x_ptr, residual_ptr, residual_out_ptr, weight_ptr, bias_ptr,
                                out_ptr, scale_out_ptr, stride_row, n_cols, eps,
                                BLOCK_N: tl.constexpr, FP8_MAX: tl.constexpr,
                                HAS_BIAS: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * stride_row
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    h = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    h += tl.load(residual_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(residual_out_ptr + base + cols, h, mask=mask)
    mean = tl.sum(h, axis=0) / n_cols
    xc = tl.where(mask, h - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1 / tl.sqrt(var + eps)
    y = xc * rstd * tl.load(weight_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    if HAS_BIAS:
        y += tl.load(bias_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(tl.where(mask, y, 0.0)), axis=0)
    scale = tl.maximum(amax / FP8_MAX, 1e-12)
    q = tl.clamp(y / scale, -FP8_MAX, FP8_MAX)
    tl.store(out_ptr + base + cols, q.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(scale_out_ptr + row, scale)
