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
    # one program per (row, group); the group is a contiguous run of N channels
    row = tl.program_id(0)
    grp = tl.program_id(1)
    offs = tl.arange(0, BLOCK_N)
    in_grp = offs < N
    x_row = X + row * stride_x_row + grp * N
    y_row = Y + row * stride_y_row + grp * N
    x = tl.load(x_row + offs, mask=in_grp, other=0.0).to(tl.float32)
    if HAS_Z:
        z_row = Z + row * stride_z_row + grp * N
        z = tl.load(z_row + offs, mask=in_grp, other=0.0).to(tl.float32)
        gate = z * tl.sigmoid(z)
        if not NORM_BEFORE_GATE:
            x = x * gate
    # mean of squares over the group (masked lanes hold zero)
    ms = tl.sum(x * x, axis=0) / N
    inv_rms = 1.0 / tl.sqrt(ms + eps)
    tl.store(Rstd + grp * M + row, inv_rms)
    w = tl.load(W + grp * N + offs, mask=in_grp, other=0.0).to(tl.float32)
    out = x * inv_rms * w
    if HAS_Z:
        if NORM_BEFORE_GATE:
            out = out * gate
    tl.store(y_row + offs, out.to(Y.dtype.element_ty), mask=in_grp)


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    # merge two partial states; an empty side (weight 0) contributes nothing
    total = weight_1 + weight_2
    share_2 = tl.where(total > 0, weight_2 / tl.where(total > 0, total, 1.0), 0.0)
    gap = mean_2 - mean_1
    merged_mean = mean_1 + gap * share_2
    merged_m2 = m2_1 + m2_2 + gap * gap * weight_1 * share_2
    return merged_mean, merged_m2, total


@triton.jit
def group_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, group_size, HW, num_groups, C, eps,
                          BLOCK_SIZE: tl.constexpr):
    # one program per (batch, group); the group's channels x HW values are contiguous
    pid = tl.program_id(0)
    grp = pid % num_groups
    ch_per_grp = C // num_groups
    base = pid.to(tl.int64) * group_size
    lanes = tl.arange(0, BLOCK_SIZE)

    # pass 1: per-lane running Welford statistics across the tiles of the group
    run_mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    run_m2 = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    run_cnt = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        idx = start + lanes
        valid = idx < group_size
        v = tl.load(X + base + idx, mask=valid, other=0.0).to(tl.float32)
        cnt_new = run_cnt + valid.to(tl.float32)
        d = v - run_mean
        mean_new = tl.where(valid, run_mean + d / tl.maximum(cnt_new, 1.0), run_mean)
        run_m2 = tl.where(valid, run_m2 + d * (v - mean_new), run_m2)
        run_mean = mean_new
        run_cnt = cnt_new

    # fold the lanes into one group statistic
    g_mean, g_m2, g_cnt = tl.reduce((run_mean, run_m2, run_cnt), 0, welford_combine)
    g_var = g_m2 / g_cnt
    g_rstd = 1.0 / tl.sqrt(g_var + eps)
    tl.store(Mean + pid, g_mean)
    tl.store(Rstd + pid, g_rstd)

    # pass 2: normalise and apply the per-channel affine transform
    for start in range(0, group_size, BLOCK_SIZE):
        idx = start + lanes
        valid = idx < group_size
        v = tl.load(X + base + idx, mask=valid, other=0.0).to(tl.float32)
        ch = grp * ch_per_grp + idx // HW
        gamma = tl.load(W + ch, mask=valid, other=0.0).to(tl.float32)
        beta = tl.load(B + ch, mask=valid, other=0.0).to(tl.float32)
        out = (v - g_mean) * g_rstd * gamma + beta
        tl.store(Y + base + idx, out.to(Y.dtype.element_ty), mask=valid)
