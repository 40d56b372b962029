"""Normalisation variants from inference and state-space-model code:
vLLM-style fused residual-add + RMSNorm that updates both buffers in
place; a gated RMSNorm (y = norm(x) * w * silu(z)) over groups of a row,
as mamba's gated norm; and a GroupNorm forward whose statistics come from
a Welford combine written for tl.reduce over (mean, m2, count) tuples."""
import torch
import triton
import triton.language as tl


@triton.jit
def fused_add_rms_norm_kernel(x_ptr, residual_ptr, w_ptr, stride_x, stride_r, N, eps,
                              BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(residual_ptr + row * stride_r + cols, mask=mask, other=0.0).to(tl.float32)
    x += r
    tl.store(residual_ptr + row * stride_r + cols, x.to(residual_ptr.dtype.element_ty), mask=mask)
    var = tl.sum(x * x, axis=0) / N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * tl.rsqrt(var + eps) * w
    tl.store(x_ptr + row * stride_x + cols, y.to(x_ptr.dtype.element_ty), mask=mask)


@triton.heuristics({"HAS_Z": lambda args: args["Z"] is not None})
@triton.jit
def _gated_rms_norm_fwd(X, Y, W, Z, Rstd, stride_x_row, stride_y_row, stride_z_row, M, N, eps,
                        BLOCK_N: tl.constexpr, HAS_Z: tl.constexpr,
                        NORM_BEFORE_GATE: tl.constexpr):
    row = tl.program_id(0)
    group = tl.program_id(1)
    X += row * stride_x_row + group * N
    Y += row * stride_y_row + group * N
    if HAS_Z:
        Z += row * stride_z_row + group * N
    Rstd += group * M
    W += group * N
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    if HAS_Z and not NORM_BEFORE_GATE:
        z = tl.load(Z + cols, mask=cols < N).to(tl.float32)
        x *= z * tl.sigmoid(z)
    xbar = tl.where(cols < N, x, 0.)
    var = tl.sum(xbar * xbar, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Rstd + row, rstd)
    mask = cols < N
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    y = x * rstd * w
    if HAS_Z and NORM_BEFORE_GATE:
        z = tl.load(Z + cols, mask=mask).to(tl.float32)
        y *= z * tl.sigmoid(z)
    tl.store(Y + cols, y, mask=mask)


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
            new_weight)


@triton.jit
def group_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, group_size, HW, num_groups, C, eps,
                          BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    group = pid % num_groups
    base = pid.to(tl.int64) * group_size
    offs = tl.arange(0, BLOCK_SIZE)
    run_mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    run_m2 = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    run_w = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        idx = start + offs
        m = idx < group_size
        x = tl.load(X + base + idx, mask=m, other=0.0).to(tl.float32)
        new_w = run_w + m.to(tl.float32)
        delta = x - run_mean
        run_mean = tl.where(m, run_mean + delta / tl.maximum(new_w, 1.0), run_mean)
        run_m2 = tl.where(m, run_m2 + delta * (x - run_mean), run_m2)
        run_w = new_w
    mean, m2, w = tl.reduce((run_mean, run_m2, run_w), 0, welford_combine)
    rstd = tl.rsqrt(m2 / w + eps)
    tl.store(Mean + pid, mean)
    tl.store(Rstd + pid, rstd)
    chans = C // num_groups
    for start in range(0, group_size, BLOCK_SIZE):
        idx = start + offs
        m = idx < group_size
        ch = group * chans + idx // HW
        x = tl.load(X + base + idx, mask=m, other=0.0).to(tl.float32)
        wt = tl.load(W + ch, mask=m, other=1.0)
        bs = tl.load(B + ch, mask=m, other=0.0)
        tl.store(Y + base + idx, (x - mean) * rstd * wt + bs, mask=m)
