# Training kernels (forward and backward) written in the manner of the
# Liger-Kernel and unsloth Triton layers: the layer-norm backward over a
# block of rows with per-program dW/dB partial rows, the group-norm backward
# with per-channel atomics, GLU backwards (SwiGLU, exact and tanh GeGLU) that
# write h, df and de over their three inputs, cross-entropy over a vocabulary
# split into chunks (per-chunk logsumexp, in-place gradient with logit
# scaling and soft-capping), a class-weighted, label-smoothed cross-entropy
# with the gradient written over the logits and token accuracy, a fused
# linear cross-entropy over tiles of rows and vocabulary (loss, lse and the
# input gradient through tl.dot), total-variation distance with ignored
# labels, sparsemax forward (in-kernel sort) and backward, multimodal rotary
# embedding with per-section cos/sin planes, complex-pair rotary embedding
# through tl.split / tl.join, the PolyNorm backward, the DyT backward over
# a strided loop of rows, the GRPO policy loss (clipped and CISPO) forward
# and backward, a persistent MoE grouped GEMM with permuted loads or stores,
# rotary embedding applied in place to groups of heads, and for
# hyper-connection mixing the Sinkhorn normalisation of small matrices
# (forward, and backward through the unrolled iterations) and the backward
# of a narrow projection with tile atomics for its weight.
import operator

import triton
import triton.language as tl

try:
    import torch
except ImportError:  # the kernels need none of it
    torch = None

if operator.ge(int(triton.__version__.split(".")[0]), 3):
    try:
        from triton.language.extra import libdevice
    except ModuleNotFoundError:
        from triton.language.extra.cuda import libdevice
else:
    from triton.language import math as libdevice

tanh = libdevice.tanh
rsqrt = libdevice.rsqrt
triton_cast = tl.cast

MAX_FUSED_SIZE = 65536
ROPE_GROUP_SIZE: int = 4
IGNORE_INDEX = tl.constexpr(-100)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
INV_SQRT_2PI = tl.constexpr(0.3989422804014327)

_REDUCTION_MODE_NONE = tl.constexpr(0)
_REDUCTION_MODE_SUM = tl.constexpr(1)
_REDUCTION_MODE_MEAN = tl.constexpr(2)
_REDUCTION_MODE_BATCHMEAN = tl.constexpr(3)
_str_to_reduction_mode = {"none": 0, "sum": 1, "mean": 2, "batchmean": 3}


def calculate_settings(n):
    block = triton.next_power_of_2(n)
    if block > MAX_FUSED_SIZE:
        raise RuntimeError(f"{n} columns do not fit one block of {MAX_FUSED_SIZE}")
    return block, 4 if block < 2048 else (8 if block < 8192 else 16)


# ---- normalisation backwards ----------------------------------------------------------------


@triton.jit
def _lg_layer_norm_backward_kernel(
    X_ptr, X_row_stride,
    W_ptr,
    Mean_ptr, RSTD_ptr,
    DX_ptr, DX_row_stride,
    DW_ptr, DB_ptr, DW_row_stride,
    DY_ptr, DY_row_stride,
    n_rows, n_cols, rows_per_program,
    BLOCK_SIZE: tl.constexpr,
):
    # program p takes rows [p * rows_per_program, ...) and writes its sums of
    # dy * x_hat and dy over them as row p of the dW and dB partial buffers
    pid = tl.program_id(0)
    first = pid * rows_per_program
    stop = min(first + rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK_SIZE)
    live = cols < n_cols
    gamma = tl.load(W_ptr + cols, mask=live, other=0.0).to(tl.float32)
    part_w = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    part_b = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for r in range(first, stop):
        xv = tl.load(X_ptr + r * X_row_stride + cols, mask=live, other=0.0).to(tl.float32)
        gv = tl.load(DY_ptr + r * DY_row_stride + cols, mask=live, other=0.0).to(tl.float32)
        inv_std = tl.load(RSTD_ptr + r)
        x_hat = (xv - tl.load(Mean_ptr + r)) * inv_std
        g_hat = gamma * gv
        mean_g_hat = tl.sum(g_hat, axis=0) / n_cols
        mean_g_hat_x_hat = tl.sum(g_hat * x_hat, axis=0) / n_cols
        grad = inv_std * (g_hat - mean_g_hat - x_hat * mean_g_hat_x_hat)
        tl.store(DX_ptr + r * DX_row_stride + cols, grad.to(X_ptr.dtype.element_ty), mask=live)
        part_w += gv * x_hat
        part_b += gv
    tl.store(DW_ptr + pid * DW_row_stride + cols, part_w, mask=live)
    tl.store(DB_ptr + pid * DW_row_stride + cols, part_b, mask=live)


@triton.jit
def _lg_group_norm_backward_kernel(
    X_ptr, X_row_stride, X_col_stride,
    W_ptr,
    Mean_ptr, Mean_row_stride, Mean_col_stride,
    RSTD_ptr,
    DX_ptr, DW_ptr, DB_ptr,
    UPSTREAM_ptr,
    hidden_size: tl.constexpr,
    channels_per_group: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    dtype: tl.constexpr = tl.float32,
):
    # program (sample, group). Pass 1 sums dy * x_hat and dy per channel:
    # those are the channel's dW and dB shares (atomics across samples), and
    # weighted by the channel's w they give the group's two projections.
    # Pass 2 writes dx
    n = tl.program_id(0)
    grp = tl.program_id(1)
    stat_off = n * Mean_row_stride + grp * Mean_col_stride
    mu = tl.load(Mean_ptr + stat_off)
    inv_std = tl.load(RSTD_ptr + stat_off)
    ch_lo = grp * channels_per_group
    span = tl.arange(0, BLOCK_SIZE)
    proj_xhat = 0.0
    proj_one = 0.0
    for ch in range(ch_lo, ch_lo + channels_per_group):
        base = n * X_row_stride + ch * X_col_stride
        sum_dy_xhat = 0.0
        sum_dy = 0.0
        for start in tl.range(0, hidden_size, BLOCK_SIZE):
            idx = start + span
            inside = idx < hidden_size
            xv = tl.load(X_ptr + base + idx, mask=inside, other=0.0).to(tl.float32)
            gv = tl.load(UPSTREAM_ptr + base + idx, mask=inside, other=0.0).to(tl.float32)
            sum_dy_xhat += tl.sum(gv * tl.where(inside, (xv - mu) * inv_std, 0.0))
            sum_dy += tl.sum(gv)
        gamma = tl.load(W_ptr + ch).to(tl.float32)
        proj_xhat += gamma * sum_dy_xhat
        proj_one += gamma * sum_dy
        tl.atomic_add(DW_ptr + ch, sum_dy_xhat.to(dtype))
        tl.atomic_add(DB_ptr + ch, sum_dy.to(dtype))
    count: tl.constexpr = hidden_size * channels_per_group
    proj_xhat = proj_xhat / count
    proj_one = proj_one / count
    for ch in tl.range(ch_lo, ch_lo + channels_per_group):
        base = n * X_row_stride + ch * X_col_stride
        gamma = tl.load(W_ptr + ch).to(tl.float32)
        for start in range(0, hidden_size, BLOCK_SIZE):
            idx = start + span
            inside = idx < hidden_size
            xv = tl.load(X_ptr + base + idx, mask=inside, other=0.0).to(tl.float32)
            gv = tl.load(UPSTREAM_ptr + base + idx, mask=inside, other=0.0).to(tl.float32)
            x_hat = (xv - mu) * inv_std
            grad = inv_std * (gamma * gv - proj_one - x_hat * proj_xhat)
            tl.store(DX_ptr + base + idx, grad.to(DX_ptr.dtype.element_ty), mask=inside)


@triton.jit
def _lg_poly_norm_backward_kernel(
    dY_ptr, dY_row_stride,
    dX_ptr, dX_row_stride,
    X_ptr, X_row_stride,
    W_ptr,
    RSTD_ptr, RSTD_row_stride,
    dWB_ptr, dWB_row_stride,
    n_rows, n_cols,
    rows_per_program: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # y = sum_p w[3-p] * norm(x^p) + b for p = 3, 2, 1; each program packs its
    # partial (dw0, dw1, dw2, db) in one row of four
    pid = tl.program_id(0).to(tl.int64)
    row_start = pid * rows_per_program
    row_end = min((pid + 1) * rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    slots = tl.arange(0, 4)
    partial = tl.zeros((4,), dtype=tl.float32)
    for row in range(row_start, row_end):
        dy = tl.load(dY_ptr + row * dY_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(X_ptr + row * X_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        dx = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for i in tl.static_range(3):
            p = 3 - i
            w_p = tl.load(W_ptr + i).to(tl.float32)
            r_p = tl.load(RSTD_ptr + row * RSTD_row_stride + i).to(tl.float32)
            u = libdevice.pow(x, p * 1.0)
            s_p = tl.sum(dy * u, axis=0)
            grad = p * libdevice.pow(x, p - 1.0) * r_p * dy
            grad -= (p / n_cols) * libdevice.pow(x, 2.0 * p - 1.0) * (r_p * r_p * r_p) * s_p
            dx += w_p * grad
            partial += tl.where(slots == i, r_p * s_p, 0.0)
        partial += tl.where(slots == 3, tl.sum(dy, axis=0), 0.0)
        tl.store(dX_ptr + row * dX_row_stride + cols, dx.to(dX_ptr.dtype.element_ty), mask=mask)
    tl.store(dWB_ptr + pid * dWB_row_stride + slots, partial)


@triton.jit
def _lg_dyt_backward_kernel(
    DY, DX, DA, DG, DB, X, Alpha, Gamma,
    HAVE_BETA: tl.constexpr,
    M,
    N: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # y = gamma * tanh(alpha * x) + beta. Axis 0 picks a column tile, axis 1
    # a residue class of rows (row = r, r + P1, r + 2 P1, ...); the program
    # writes its partial dgamma / dbeta row and one partial dalpha
    tile = tl.program_id(0)
    first = tl.cast(tl.program_id(1), tl.int64)
    step = tl.num_programs(1)
    cols = tl.cast(tile, tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    live = cols < N
    a = tl.load(Alpha).to(tl.float32)
    gam = tl.load(Gamma + cols, mask=live, other=0.0).to(tl.float32)
    part_gamma = tl.zeros((BLOCK_N,), dtype=tl.float32)
    part_beta = tl.zeros((BLOCK_N,), dtype=tl.float32)
    part_alpha = 0.0
    for r in range(first, M, step):
        xv = tl.load(X + r * N + cols, mask=live, other=0.0).to(tl.float32)
        gv = tl.load(DY + r * N + cols, mask=live, other=0.0).to(tl.float32)
        th = tanh(a * xv)
        part_gamma += gv * th
        if HAVE_BETA:
            part_beta += gv
        dz = gv * gam * (1.0 - th * th)
        part_alpha += tl.sum(dz * xv, 0)
        tl.store(DX + r * N + cols, (dz * a).to(DX.dtype.element_ty), mask=live)
    tl.store(DG + first * N + cols, part_gamma, mask=live)
    if HAVE_BETA:
        tl.store(DB + first * N + cols, part_beta, mask=live)
    tl.store(DA + first * tl.num_programs(0) + tile, part_alpha)


# ---- gated activations ----------------------------------------------------------------------


@triton.jit
def _lg_glu_backward_inplace(
    DW, e, g, n_elements,
    ACT: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    LONG_INDEXING: tl.constexpr,
):
    # forward h = act(gate) * up with gate in e, up in g and dh in DW; the
    # three buffers are overwritten by h, dh * act(gate) (up's gradient) and
    # dh * up * act'(gate) (gate's gradient), all rounded to the input type
    pid = tl.program_id(0)
    if LONG_INDEXING:
        idx = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        n_elements = tl.cast(n_elements, tl.int64)
    else:
        idx = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = idx < n_elements
    dh = tl.load(DW + idx, mask=live, other=0)
    gate = tl.load(e + idx, mask=live, other=0).to(tl.float32)
    up = tl.load(g + idx, mask=live, other=0)
    if ACT == "swiglu":
        sig = tl.sigmoid(gate)
        act = gate * sig
        dact = sig + act * (1.0 - sig)
    elif ACT == "geglu_exact":
        cdf = 0.5 * (1.0 + libdevice.erf(gate * tl.math.rsqrt(2.0)))
        act = gate * cdf
        dact = cdf + gate * INV_SQRT_2PI * tl.exp(-0.5 * gate * gate)
    else:
        u = SQRT_2_OVER_PI * (gate + 0.044715 * gate * gate * gate)
        th = tanh(u)
        act = 0.5 * gate * (1.0 + th)
        du = SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * gate * gate)
        dact = 0.5 * (1.0 + th) + 0.5 * gate * (1.0 - th * th) * du
    act = act.to(dh.dtype)
    up_grad = dh * act
    gate_grad = ((dh * up).to(tl.float32) * dact).to(dh.dtype)
    tl.store(DW + idx, act * up, mask=live)
    tl.store(e + idx, up_grad, mask=live)
    tl.store(g + idx, gate_grad, mask=live)


# ---- cross-entropy over chunks of a large vocabulary ----------------------------------------


@triton.jit
def _lg_scale_and_cap(x, DO_SOFTCAPPING: tl.constexpr, SOFTCAP: tl.constexpr,
                      DO_LOGIT_SCALING: tl.constexpr, LOGIT_SCALE: tl.constexpr):
    if DO_LOGIT_SCALING:
        x = LOGIT_SCALE * x
    if DO_SOFTCAPPING:
        x = SOFTCAP * tanh(x / SOFTCAP)
    return x


def _lg_chunked_cross_entropy_forward(
    logits_ptr,
    logits_row_stride,
    loss_ptr,
    logsumexp_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    N_CHUNKS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    # program (row, chunk): the logsumexp of one BLOCK_SIZE slice of the row's
    # (scaled, capped) logits into lse[row, chunk]; the chunk-0 program also
    # stores minus the label's logit, which the host adds to the combined lse
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    base = logits_ptr + row * triton_cast(logits_row_stride, tl.int64)
    cols = chunk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    valid = cols < VOCAB_SIZE
    z = tl.load(base + cols, mask=valid, other=0.0).to(tl.float32)
    z = tl.where(valid, _lg_scale_and_cap(z, DO_SOFTCAPPING, SOFTCAP, DO_LOGIT_SCALING, LOGIT_SCALE), -float("inf"))
    peak = tl.max(z, 0)
    tl.store(logsumexp_ptr + row * N_CHUNKS + chunk, peak + tl.log(tl.sum(tl.exp(z - peak), 0)))
    if chunk == 0:
        label = tl.load(labels_ptr + row).to(tl.int32)
        keep = label != IGNORE_INDEX
        picked = tl.load(base + label, mask=keep, other=0.0).to(tl.float32)
        picked = _lg_scale_and_cap(picked, DO_SOFTCAPPING, SOFTCAP, DO_LOGIT_SCALING, LOGIT_SCALE)
        tl.store(loss_ptr + row, tl.where(keep, -picked, 0.0))


_lg_chunked_cross_entropy_forward = triton.jit(_lg_chunked_cross_entropy_forward)
_lg_chunked_cross_entropy_forward = triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)(_lg_chunked_cross_entropy_forward)


def _lg_cross_entropy_backward(
    logits_ptr,
    logits_row_stride,
    dloss_ptr,
    dloss_row_stride,
    logsumexp_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    N_CHUNKS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    # program (row, block): folds the row's per-chunk logsumexps into one,
    # then overwrites its block of logits with dloss * d(loss)/d(logit),
    # through the cap's and the scale's derivatives
    row = tl.program_id(0)
    blk = tl.program_id(1)
    base = logits_ptr + row * triton_cast(logits_row_stride, tl.int64)
    cols = blk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    valid = cols < VOCAB_SIZE
    label = tl.load(labels_ptr + row).to(tl.int32)
    upstream = 0.0
    if label != IGNORE_INDEX:
        upstream = tl.load(dloss_ptr + row * dloss_row_stride)
    run_max = -float("inf")
    run_sum = 0.0
    for j in tl.static_range(N_CHUNKS):
        part = tl.load(logsumexp_ptr + row * N_CHUNKS + j)
        hi = tl.maximum(run_max, part)
        run_sum = run_sum * tl.exp(run_max - hi) + tl.exp(part - hi)
        run_max = hi
    lse = run_max + tl.log(run_sum)
    z = tl.load(base + cols, mask=valid, other=0.0).to(tl.float32)
    chain = 1.0
    if DO_LOGIT_SCALING:
        z = z * LOGIT_SCALE
        chain = LOGIT_SCALE
    if DO_SOFTCAPPING:
        th = tanh(z / SOFTCAP)
        z = th * SOFTCAP
        chain = chain * (1.0 - th * th)
    grad = tl.exp(z - lse) - (cols == label).to(tl.float32)
    tl.store(base + cols, upstream * grad * chain, mask=valid)


_lg_cross_entropy_backward = triton.jit(_lg_cross_entropy_backward)
_lg_cross_entropy_backward = triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)(_lg_cross_entropy_backward)


@triton.jit
def _lg_weighted_cross_entropy_kernel(
    X_ptr, X_stride,
    Y_ptr, Y_stride,
    weight_ptr,
    loss_ptr, loss_stride,
    token_accuracy_ptr,
    n_cols,
    n_non_ignore_ptr,
    sum_non_ignore_weight,
    weight_sum,
    ignore_index,
    label_smoothing: tl.constexpr,
    reduction: tl.constexpr = "mean",
    HAS_WEIGHT: tl.constexpr = False,
    RETURN_TOKEN_ACCURACY: tl.constexpr = False,
    BLOCK_SIZE: tl.constexpr = 1024,
):
    # loss = (1 - ls) * w[y] * (lse - x[y]) + ls / V * sum_j w[j] * (lse - x[j]),
    # divided by the sum of the non-ignored rows' weights (or their count,
    # read from memory) under "mean"; the gradient replaces the logits
    row = tl.program_id(0).to(tl.int64)
    X_ptr += row * X_stride
    Y_ptr += row * Y_stride
    loss_ptr += row * loss_stride
    y = tl.load(Y_ptr)
    if y == ignore_index:
        for i in tl.range(0, n_cols, BLOCK_SIZE):
            offs = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + offs, 0.0, mask=offs < n_cols)
        tl.store(loss_ptr, 0.0)
        if RETURN_TOKEN_ACCURACY:
            tl.store(token_accuracy_ptr + row, 0.0)
        return
    if HAS_WEIGHT:
        w_y = tl.load(weight_ptr + y).to(tl.float32)
        w_total = weight_sum
        denom = sum_non_ignore_weight
    else:
        w_y = 1.0
        w_total = n_cols.to(tl.float32)
        denom = tl.load(n_non_ignore_ptr).to(tl.float32)
    eps = label_smoothing / n_cols
    x_y = tl.load(X_ptr + y).to(tl.float32)
    m = float("-inf")
    d = 0.0
    smooth_dot = 0.0
    for i in tl.range(0, n_cols, BLOCK_SIZE):
        offs = i + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_cols
        x = tl.load(X_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
        if label_smoothing > 0:
            if HAS_WEIGHT:
                w = tl.load(weight_ptr + offs, mask=mask, other=0.0).to(tl.float32)
                smooth_dot += tl.sum(tl.where(mask, w * x, 0.0), axis=0)
            else:
                smooth_dot += tl.sum(tl.where(mask, x, 0.0), axis=0)
    lse = m + tl.log(d)
    loss = (1.0 - label_smoothing) * w_y * (lse - x_y)
    if label_smoothing > 0:
        loss += eps * (w_total * lse - smooth_dot)
    if reduction == "mean":
        loss = loss / denom
        scale = 1.0 / denom
    else:
        scale = 1.0
    for i in tl.range(0, n_cols, BLOCK_SIZE):
        offs = i + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_cols
        x = tl.load(X_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        p = tl.exp(x - lse)
        if HAS_WEIGHT:
            w = tl.load(weight_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            grad = (1.0 - label_smoothing) * w_y * p + eps * (w_total * p - w)
        else:
            grad = (1.0 - label_smoothing) * p + eps * (w_total * p - 1.0)
        grad = tl.where(offs == y, grad - (1.0 - label_smoothing) * w_y, grad) * scale
        tl.store(X_ptr + offs, grad.to(X_ptr.dtype.element_ty), mask=mask)
    tl.store(loss_ptr, loss)
    if RETURN_TOKEN_ACCURACY:
        tl.store(token_accuracy_ptr + row, (x_y >= m).to(tl.float32))


# ---- fused linear cross-entropy -------------------------------------------------------------


@triton.jit
def _lg_logits_tile(X_ptr, W_ptr, rows, cols, row_mask, col_mask, H, stride_xm, stride_wv,
                    BLOCK_H: tl.constexpr):
    # logits[rows, cols] = X[rows] @ W[cols]^T, accumulated in fp32
    acc = tl.zeros((rows.shape[0], cols.shape[0]), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        hs = h0 + tl.arange(0, BLOCK_H)
        hm = hs < H
        x = tl.load(X_ptr + rows[:, None] * stride_xm + hs[None, :], mask=row_mask[:, None] & hm[None, :], other=0.0)
        w = tl.load(W_ptr + cols[:, None] * stride_wv + hs[None, :], mask=col_mask[:, None] & hm[None, :], other=0.0)
        acc = tl.dot(x, tl.trans(w), acc)
    return acc


@triton.jit
def _lg_flce_forward_kernel(
    X_ptr, W_ptr, target_ptr, loss_ptr, lse_ptr,
    n_rows, H, V, stride_xm, stride_wv, ignore_index,
    BLOCK_M: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr,
):
    # a tile of rows against the whole vocabulary, tile by tile, never
    # holding more than BLOCK_M x BLOCK_V logits
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    tgt = tl.load(target_ptr + rows, mask=row_mask, other=ignore_index)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    t_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + tl.arange(0, BLOCK_V)
        col_mask = cols < V
        logits = _lg_logits_tile(X_ptr, W_ptr, rows, cols, row_mask, col_mask, H, stride_xm, stride_wv, BLOCK_H)
        logits = tl.where(col_mask[None, :], logits, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(logits, 1))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(logits - m_new[:, None]), 1)
        m_i = m_new
        t_i += tl.sum(tl.where(cols[None, :] == tgt[:, None], logits, 0.0), 1)
    lse = m_i + tl.log(l_i)
    valid = row_mask & (tgt != ignore_index)
    tl.store(loss_ptr + rows, tl.where(valid, lse - t_i, 0.0), mask=row_mask)
    tl.store(lse_ptr + rows, lse, mask=row_mask)


@triton.jit
def _lg_flce_grad_input_kernel(
    X_ptr, W_ptr, target_ptr, lse_ptr, dX_ptr,
    n_rows, H, V, stride_xm, stride_wv, stride_dxm, n_non_ignore, ignore_index,
    BLOCK_M: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_HO: tl.constexpr,
):
    # dX = (softmax - onehot) @ W / n_non_ignore for a tile of rows and a
    # slice of the hidden size, the logits recomputed tile by tile
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    ho = tl.program_id(1) * BLOCK_HO + tl.arange(0, BLOCK_HO)
    row_mask = rows < n_rows
    ho_mask = ho < H
    tgt = tl.load(target_ptr + rows, mask=row_mask, other=ignore_index)
    lse = tl.load(lse_ptr + rows, mask=row_mask, other=0.0)
    scale = tl.where(row_mask & (tgt != ignore_index), 1.0 / n_non_ignore, 0.0)
    acc = tl.zeros((BLOCK_M, BLOCK_HO), dtype=tl.float32)
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + tl.arange(0, BLOCK_V)
        col_mask = cols < V
        logits = _lg_logits_tile(X_ptr, W_ptr, rows, cols, row_mask, col_mask, H, stride_xm, stride_wv, BLOCK_H)
        p = tl.exp(logits - lse[:, None])
        g = tl.where(cols[None, :] == tgt[:, None], p - 1.0, p) * scale[:, None]
        g = tl.where(col_mask[None, :], g, 0.0)
        w_out = tl.load(W_ptr + cols[:, None] * stride_wv + ho[None, :], mask=col_mask[:, None] & ho_mask[None, :],
                        other=0.0)
        acc = tl.dot(g.to(w_out.dtype), w_out, acc)
    tl.store(dX_ptr + rows[:, None] * stride_dxm + ho[None, :], acc.to(dX_ptr.dtype.element_ty),
             mask=row_mask[:, None] & ho_mask[None, :])


# ---- distances between distributions --------------------------------------------------------


@triton.jit
def _lg_tv_distance_kernel(
    p_ptr, p_stride,
    q_ptr, q_stride,
    loss_ptr, loss_stride,
    grads_ptr, grads_stride,
    label_ptr,
    ignore_index: tl.constexpr,
    n_cols,
    scale,
    BLOCK_SIZE: tl.constexpr,
    HAS_LABEL: tl.constexpr,
    reduction: tl.constexpr = _REDUCTION_MODE_BATCHMEAN,
):
    # TV(p, q) = sum 0.5 * |p - q| per row; its subgradient in p is +-0.5.
    # Both come out multiplied by the reduction's scale; a row labelled
    # ignore_index contributes nothing and gets a zero gradient
    row = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK_SIZE)
    half = 0.5 * scale
    if HAS_LABEL:
        if tl.load(label_ptr + row) == ignore_index:
            for c0 in range(0, n_cols, BLOCK_SIZE):
                cols = c0 + lanes
                tl.store(grads_ptr + row * grads_stride + cols, 0.0, mask=cols < n_cols)
                if reduction == _REDUCTION_MODE_NONE:
                    tl.store(loss_ptr + row * loss_stride + cols, 0.0, mask=cols < n_cols)
            return
    total = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_SIZE):
        cols = c0 + lanes
        live = cols < n_cols
        diff = tl.load(p_ptr + row * p_stride + cols, mask=live, other=0.0) - \
            tl.load(q_ptr + row * q_stride + cols, mask=live, other=0.0)
        tl.store(grads_ptr + row * grads_stride + cols, tl.where(diff > 0, half, -half), mask=live)
        if reduction == _REDUCTION_MODE_NONE:
            tl.store(loss_ptr + row * loss_stride + cols, half * tl.abs(diff), mask=live)
        else:
            total += tl.abs(diff)
    if reduction != _REDUCTION_MODE_NONE:
        tl.store(loss_ptr + row * loss_stride, half * tl.sum(total, axis=0))


# ---- sparsemax ------------------------------------------------------------------------------


@triton.jit
def _lg_sparsemax_forward_kernel(
    x_ptr, x_stride_row,
    o_ptr, o_stride_row,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
):
    # sparsemax(x) = max(x - tau, 0): with z the row sorted in the kernel
    # (descending), the support is the longest prefix where
    # 1 + k * z[k] > z[1] + ... + z[k], and tau puts the prefix's sum at 1
    row = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK_SIZE)
    live = lanes < n_cols
    x = tl.load(x_ptr + row * x_stride_row + lanes, mask=live, other=-float("inf"),
                cache_modifier=".cg").to(tl.float32)
    z = tl.sort(x, descending=True)
    prefix = tl.cumsum(tl.where(live, z, 0.0), 0)
    in_supp = ((lanes + 1).to(tl.float32) * z + 1.0 > prefix) & live
    size = tl.maximum(tl.sum(in_supp.to(tl.int32), 0), 1)
    threshold = (tl.sum(tl.where(in_supp, z, 0.0), 0) - 1.0) / size.to(tl.float32)
    out = tl.maximum(x - threshold, 0.0)
    tl.store(o_ptr + row * o_stride_row + lanes, out.to(o_ptr.dtype.element_ty), mask=live, cache_modifier=".cs")


@triton.jit
def _lg_sparsemax_backward_kernel(
    o_ptr, go_ptr, gi_ptr, stride, n_cols,
    BLOCK_SIZE: tl.constexpr,
    num_warps: tl.constexpr,
):
    # on the support (o > 0) the input gradient is go minus its mean over the
    # support (rounded to the output type first); zero elsewhere
    base = tl.program_id(0) * stride
    lanes = tl.arange(0, BLOCK_SIZE)
    n_support = tl.zeros((), tl.float32)
    g_sum = tl.zeros((), tl.float32)
    for t in tl.range(0, tl.cdiv(n_cols, BLOCK_SIZE)):
        cols = t * BLOCK_SIZE + lanes
        live = cols < n_cols
        on = tl.load(o_ptr + base + cols, mask=live, other=0.0, cache_modifier=".ca").to(tl.float32) > 0.0
        gv = tl.load(go_ptr + base + cols, mask=live, other=0.0).to(tl.float32)
        n_support += tl.sum(on.to(tl.float32))
        g_sum += tl.sum(tl.where(on, gv, 0.0))
    avg = tl.cast(g_sum / tl.maximum(n_support, 1e-6), gi_ptr.dtype.element_ty).to(tl.float32)
    for t in tl.range(0, tl.cdiv(n_cols, BLOCK_SIZE)):
        cols = t * BLOCK_SIZE + lanes
        live = cols < n_cols
        on = tl.load(o_ptr + base + cols, mask=live, other=0.0, cache_modifier=".ca").to(tl.float32) > 0.0
        gv = tl.load(go_ptr + base + cols, mask=live, other=0.0).to(tl.float32)
        tl.store(gi_ptr + base + cols, tl.where(on, gv - avg, 0.0).to(gi_ptr.dtype.element_ty), mask=live,
                 cache_modifier=".wb")


# ---- rotary embeddings ----------------------------------------------------------------------


@triton.jit
def _lg_mrope_kernel(
    q_ptr, k_ptr, cos_ptr, sin_ptr, n_tokens,
    n_qh: tl.constexpr, n_kh: tl.constexpr, hd: tl.constexpr,
    pad_n_qh: tl.constexpr, pad_n_kh: tl.constexpr, pad_hd: tl.constexpr,
    SECTIONS: tl.constexpr,
    BACKWARD_PASS: tl.constexpr = False,
):
    # multimodal rope: the half head dim is cut into (temporal, height,
    # width) sections, each taking cos/sin from its own plane; q and k are
    # rotated in place, all heads of a token at once
    pid = tl.program_id(0)
    q_ptr = q_ptr + pid * (n_qh * hd)
    k_ptr = k_ptr + pid * (n_kh * hd)
    offs = tl.arange(0, pad_hd // 2)
    cos_row = tl.zeros((pad_hd // 2,), dtype=tl.float32)
    sin_row = tl.zeros((pad_hd // 2,), dtype=tl.float32)
    hi = 0
    for plane in tl.static_range(len(SECTIONS)):
        lo = hi
        hi = lo + SECTIONS[plane]
        sec = (offs >= lo) & (offs < hi)
        base = plane * n_tokens * hd + pid * hd
        cos_row += tl.load(cos_ptr + base + offs, mask=sec, other=0)
        sin_row += tl.load(sin_ptr + base + offs, mask=sec, other=0)
    if BACKWARD_PASS:
        sin_row = -sin_row
    half = hd // 2
    q_offs = tl.arange(0, pad_n_qh)[:, None] * hd + offs[None, :]
    k_offs = tl.arange(0, pad_n_kh)[:, None] * hd + offs[None, :]
    q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & (offs[None, :] < half)
    k_mask = (tl.arange(0, pad_n_kh)[:, None] < n_kh) & (offs[None, :] < half)
    q1 = tl.load(q_ptr + q_offs, mask=q_mask, other=0).to(sin_row.dtype)
    q2 = tl.load(q_ptr + q_offs + half, mask=q_mask, other=0).to(sin_row.dtype)
    k1 = tl.load(k_ptr + k_offs, mask=k_mask, other=0).to(sin_row.dtype)
    k2 = tl.load(k_ptr + k_offs + half, mask=k_mask, other=0).to(sin_row.dtype)
    tl.store(q_ptr + q_offs, q1 * cos_row - q2 * sin_row, mask=q_mask)
    tl.store(q_ptr + q_offs + half, q2 * cos_row + q1 * sin_row, mask=q_mask)
    tl.store(k_ptr + k_offs, k1 * cos_row - k2 * sin_row, mask=k_mask)
    tl.store(k_ptr + k_offs + half, k2 * cos_row + k1 * sin_row, mask=k_mask)


@triton.jit
def _lg_rotate_pairs(ptr, pair, mask, f_re, f_im):
    re, im = tl.split(tl.load(ptr + pair, mask=mask, other=0.0).to(tl.float32))
    out = tl.join(tl.math.fma(re, f_re, -(im * f_im)), tl.math.fma(re, f_im, im * f_re))
    tl.store(ptr + pair, out.to(ptr.dtype.element_ty), mask=mask)


@triton.jit
def _lg_llama4_rope_kernel(
    q_ptr, k_ptr, freqs_ptr,
    q_row_stride, k_row_stride, q_head_stride, k_head_stride, freqs_row_stride,
    seq_len, batch_size, imag_sign,
    head_dim_half: tl.constexpr, n_q_heads: tl.constexpr, n_k_heads: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # rope on interleaved (real, imaginary) pairs: q, k and the frequencies
    # read as [BLOCK, 2] tiles and split; imag_sign -1 undoes the rotation
    pid_bs = tl.program_id(0)
    pid_h = tl.program_id(1)
    batch_idx = pid_bs // seq_len
    seq_idx = pid_bs % seq_len
    if batch_idx >= batch_size:
        return
    for d_start in tl.static_range(0, head_dim_half, BLOCK_SIZE):
        d = d_start + tl.arange(0, BLOCK_SIZE)
        mask = (d < head_dim_half)[:, None]
        pair = d[:, None] * 2 + tl.arange(0, 2)[None, :]
        f = tl.load(freqs_ptr + seq_idx * freqs_row_stride + pair, mask=mask, other=0.0)
        f_re, f_im = tl.split(f)
        f_im = f_im * imag_sign
        if pid_h < n_q_heads:
            _lg_rotate_pairs(q_ptr + pid_bs * q_row_stride + pid_h * q_head_stride, pair, mask, f_re, f_im)
        if pid_h < n_k_heads:
            _lg_rotate_pairs(k_ptr + pid_bs * k_row_stride + pid_h * k_head_stride, pair, mask, f_re, f_im)


def _lg_rope_embedding(
    Q,
    Q_row_stride: tl.constexpr,
    cos,
    cos_row_stride: tl.constexpr,
    sin,
    sin_row_stride: tl.constexpr,
    seqlen,
    head_dim: tl.constexpr,
    n_heads: tl.constexpr,
    BACKWARD_PASS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # rotate-half rope written over Q (tokens x heads * head_dim): axis 0 a
    # token, axis 1 a run of ROPE_GROUP_SIZE heads that share its cos/sin row;
    # the backward rotates by the opposite angle
    ROPE_GROUP_SIZE = 4
    token = tl.program_id(0)
    pos = token % seqlen
    half: tl.constexpr = head_dim // 2
    d = tl.arange(0, BLOCK_SIZE)
    dm = d < half
    c = tl.load(cos + pos * cos_row_stride + d, mask=dm, other=0)
    s = tl.load(sin + pos * sin_row_stride + d, mask=dm, other=0)
    if BACKWARD_PASS:
        s = -s
    first = tl.program_id(1) * ROPE_GROUP_SIZE
    last = min(first + ROPE_GROUP_SIZE, n_heads)
    for h in range(first, last):
        lo_ptr = Q + token * Q_row_stride + h * head_dim + d
        lo = tl.load(lo_ptr, mask=dm, other=0).to(s.dtype)
        hi = tl.load(lo_ptr + half, mask=dm, other=0).to(s.dtype)
        tl.store(lo_ptr, lo * c - hi * s, mask=dm)
        tl.store(lo_ptr + half, hi * c + lo * s, mask=dm)


_lg_rope_embedding = triton.jit(_lg_rope_embedding)
_lg_rope_embedding = triton.heuristics({"BACKWARD_PASS": lambda args: bool(args["BACKWARD_PASS"])})(
    _lg_rope_embedding)


# ---- GRPO policy loss -----------------------------------------------------------------------


@triton.jit
def _lg_token_logprob(row_ptr, token, N: tl.constexpr, TEMPERATURE: tl.constexpr, BLOCK_N: tl.constexpr):
    # (log p(token), logsumexp) of one row of logits at a temperature, the
    # logsumexp streamed over BLOCK_N-wide slices
    top = float("-inf")
    acc = 0.0
    for c0 in range(0, N, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        z = tl.load(row_ptr + cols, mask=cols < N, other=float("-inf")).to(tl.float32) / TEMPERATURE
        new_top = tl.maximum(top, tl.max(z))
        acc = acc * tl.exp(top - new_top) + tl.sum(tl.exp(z - new_top))
        top = new_top
    lse = top + tl.log(acc)
    return tl.load(row_ptr + token).to(tl.float32) / TEMPERATURE - lse, lse


@triton.jit
def _lg_policy_terms(logp, old_logp, advantage, EPS_LOW: tl.constexpr, EPS_HIGH: tl.constexpr,
                     LOSS_TYPE: tl.constexpr):
    # (loss, d loss / d logp, clipped?) of the policy-gradient term
    ratio = tl.exp(logp - old_logp)
    if LOSS_TYPE == "grpo":
        low = (ratio < 1 - EPS_LOW) & (advantage < 0)
        high = (ratio > 1 + EPS_HIGH) & (advantage > 0)
        bounded = tl.clamp(ratio, 1 - EPS_LOW, 1 + EPS_HIGH)
        loss = -tl.minimum(ratio * advantage, bounded * advantage)
        clipped = low | high
        dlogp = tl.where(clipped, 0.0, -ratio * advantage)
    else:
        capped = tl.minimum(ratio, EPS_HIGH)
        loss = -capped * advantage * logp
        clipped = (ratio > EPS_HIGH) & (advantage > 0)
        dlogp = -capped * advantage
    return loss, dlogp, clipped


@triton.jit
def _lg_grpo_loss_fwd_kernel(
    LOGITS, OLD_LOGP, REF_LOGP, INPUT_IDS, COMPLETION_MASK, ADVANTAGES,
    LOSS, LSE, KL, IS_CLIPPED,
    TEMPERATURE: tl.constexpr,
    BETA: tl.constexpr,
    EPS_LOW: tl.constexpr,
    EPS_HIGH: tl.constexpr,
    LOSS_TYPE: tl.constexpr,
    L: tl.constexpr,
    N: tl.constexpr,
    BLOCK_N: tl.constexpr = 4096,
):
    # program (sequence b, position l) of logits (B, L + 1, N): the sampled
    # token's log-probability, the policy term against the old policy (the
    # current one when OLD_LOGP is None) and BETA times a k3 estimate of the
    # KL to the reference; masked positions are left alone
    b = tl.program_id(0).cast(tl.int64)
    pos = tl.program_id(1).cast(tl.int64)
    tok = b * L + pos
    if COMPLETION_MASK is not None:
        if tl.load(COMPLETION_MASK + tok) == 0:
            return
    logp, lse = _lg_token_logprob(LOGITS + (b * (L + 1) + pos) * N, tl.load(INPUT_IDS + tok), N, TEMPERATURE,
                                  BLOCK_N)
    old_logp = logp
    if OLD_LOGP is not None:
        old_logp = tl.load(OLD_LOGP + tok).to(tl.float32)
    loss, _, clipped = _lg_policy_terms(logp, old_logp, tl.load(ADVANTAGES + b).to(tl.float32), EPS_LOW, EPS_HIGH,
                                        LOSS_TYPE)
    if BETA != 0.0:
        delta = tl.load(REF_LOGP + tok).to(tl.float32) - logp
        k3 = tl.exp(delta) - delta - 1
        tl.store(KL + tok, k3)
        loss += BETA * k3
    tl.store(LOSS + tok, loss)
    tl.store(LSE + tok, lse)
    tl.store(IS_CLIPPED + tok, clipped)


@triton.jit
def _lg_grpo_loss_bwd_kernel(
    DLOSS, DLOSS_STRIDE, DLOGITS,
    LOGITS, OLD_LOGP, REF_LOGP, INPUT_IDS, ADVANTAGES, COMPLETION_MASK, LSE,
    TEMPERATURE: tl.constexpr,
    BETA: tl.constexpr,
    EPS_LOW: tl.constexpr,
    EPS_HIGH: tl.constexpr,
    LOSS_TYPE: tl.constexpr,
    L: tl.constexpr,
    N: tl.constexpr,
    BLOCK_N: tl.constexpr = 4096,
):
    # dlogits (B, L, N) of the forward's loss, from the saved lse:
    # dloss * dloss/dlogp * (onehot - softmax(z / T)) / T; zero rows where masked
    b = tl.program_id(0).cast(tl.int64)
    pos = tl.program_id(1).cast(tl.int64)
    tok = b * L + pos
    out = DLOGITS + tok * N
    if COMPLETION_MASK is not None:
        if tl.load(COMPLETION_MASK + tok) == 0:
            for c0 in range(0, N, BLOCK_N):
                cols = c0 + tl.arange(0, BLOCK_N)
                tl.store(out + cols, 0.0, mask=cols < N)
            return
    row = LOGITS + (b * (L + 1) + pos) * N
    lse = tl.load(LSE + tok)
    token = tl.load(INPUT_IDS + tok)
    logp = tl.load(row + token).to(tl.float32) / TEMPERATURE - lse
    old_logp = logp
    if OLD_LOGP is not None:
        old_logp = tl.load(OLD_LOGP + tok).to(tl.float32)
    _, dlogp, _ = _lg_policy_terms(logp, old_logp, tl.load(ADVANTAGES + b).to(tl.float32), EPS_LOW, EPS_HIGH,
                                   LOSS_TYPE)
    if BETA != 0.0:
        dlogp += BETA * (1.0 - tl.exp(tl.load(REF_LOGP + tok).to(tl.float32) - logp))
    coef = dlogp * tl.load(DLOSS + b * DLOSS_STRIDE + pos).to(tl.float32) / TEMPERATURE
    for c0 in tl.range(0, N, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        live = cols < N
        prob = tl.exp(tl.load(row + cols, mask=live, other=float("-inf")).to(tl.float32) / TEMPERATURE - lse)
        grad = ((cols == token).to(tl.float32) - prob) * coef
        tl.store(out + cols, grad.to(DLOGITS.dtype.element_ty), mask=live)


# ---- MoE grouped GEMM -----------------------------------------------------------------------


@triton.jit
def _lg_grouped_gemm_forward_kernel(
    x_ptr, w_ptr, y_ptr,
    m_sizes_ptr, gather_indices_ptr, topk_weights_ptr,
    NUM_EXPERTS: tl.constexpr,
    NUM_TOKENS,
    TOPK: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    NUM_SMS,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    PERMUTE_X: tl.constexpr = False,
    PERMUTE_Y: tl.constexpr = False,
    FUSE_MUL_POST: tl.constexpr = False,
    acc_dtype: tl.constexpr = tl.float32,
    FLATTEN: tl.constexpr = True,
):
    # y = x @ w[e]^T for the routed rows of each expert e (w: E x N x K). The
    # experts' output tiles are numbered one after another; a persistent
    # program takes every NUM_SMS-th of them. gather_indices maps a row in
    # expert order to its token slot (token * TOPK + k): PERMUTE_X reads x by
    # token, PERMUTE_Y writes y by slot, FUSE_MUL_POST scales by the slot's
    # routing weight
    tl.static_assert(K % BLOCK_SIZE_K == 0)
    n_slots = NUM_TOKENS * TOPK
    PERMUTED: tl.constexpr = PERMUTE_X or PERMUTE_Y
    out_ty: tl.dtype = y_ptr.dtype.element_ty
    my_tile = tl.program_id(0)
    rows_before = 0
    tiles_before = 0
    lane_m = tl.arange(0, BLOCK_SIZE_M)
    lane_k = tl.arange(0, BLOCK_SIZE_K)
    n_tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    for expert in tl.range(NUM_EXPERTS, flatten=FLATTEN):
        rows_here = tl.load(m_sizes_ptr + expert).to(tl.int32)
        if rows_here > 0:
            n_tiles_m = tl.cdiv(rows_here, BLOCK_SIZE_M)
            tiles_here = n_tiles_m * n_tiles_n
            while my_tile >= tiles_before and my_tile < tiles_before + tiles_here:
                local = my_tile - tiles_before
                tm = local % n_tiles_m
                tn = local // n_tiles_m
                in_expert = tm * BLOCK_SIZE_M + lane_m
                live = (in_expert < rows_here)[:, None]
                if PERMUTED:
                    pos = rows_before + tl.max_contiguous(tl.multiple_of(in_expert % rows_here, BLOCK_SIZE_M),
                                                          BLOCK_SIZE_M)
                    slot = tl.load(gather_indices_ptr + pos, mask=pos < n_slots)[:, None]
                    if PERMUTE_X:
                        src_row = slot // TOPK
                        dst_row = pos[:, None]
                    else:
                        src_row = pos[:, None]
                        dst_row = slot
                else:
                    src_row = rows_before + in_expert[:, None]
                    dst_row = src_row
                cols_n = tl.max_contiguous(tl.multiple_of((tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N,
                                                          BLOCK_SIZE_N), BLOCK_SIZE_N)
                a_ptrs = x_ptr + src_row * K + lane_k[None, :]
                b_ptrs = w_ptr + (expert * N + cols_n[:, None]) * K + lane_k[None, :]
                acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)
                for _ in range(0, K, BLOCK_SIZE_K):
                    b_tile = tl.load(b_ptrs, mask=cols_n[:, None] < N)
                    acc += tl.dot(tl.load(a_ptrs, mask=live).to(b_tile.dtype), b_tile.T)
                    a_ptrs += BLOCK_SIZE_K
                    b_ptrs += BLOCK_SIZE_K
                out = acc.to(out_ty)
                if FUSE_MUL_POST:
                    out *= tl.load(topk_weights_ptr + slot, mask=live).to(out_ty)
                cols_y = tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
                tl.store(y_ptr + dst_row * N + cols_y[None, :], out, mask=live & (cols_y[None, :] < N))
                my_tile += NUM_SMS
            tiles_before += tiles_here
        rows_before += rows_here


# ---- hyper-connection mixing: Sinkhorn normalisation and a small projection ---------------


@triton.jit
def _lg_row_softmax(x):
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    return e / tl.sum(e, axis=1)[:, None]


@triton.jit
def _lg_col_norm_bwd(g, y, denom):
    # y = b / denom[None, :] with denom the column sums of b (+ eps)
    return (g - tl.sum(g * y, axis=0)[None, :]) / denom[None, :]


@triton.jit
def _lg_row_norm_bwd(g, y, denom):
    return (g - tl.sum(g * y, axis=1)[:, None]) / denom[:, None]


@triton.jit
def _lg_sinkhorn_fwd_kernel(
    logits_ptr, out_ptr, n_mats, stride_n,
    HC: tl.constexpr, TMAX: tl.constexpr, EPS: tl.constexpr,
):
    # a doubly-stochastic HC x HC mixing matrix per token: a row softmax,
    # then column and row normalisations, TMAX column passes in all
    pid = tl.program_id(0)
    if pid >= n_mats:
        return
    rows = tl.arange(0, HC)[:, None]
    cols = tl.arange(0, HC)[None, :]
    x = tl.load(logits_ptr + pid * stride_n + rows * HC + cols).to(tl.float32)
    mat = _lg_row_softmax(x) + EPS
    mat = mat / (tl.sum(mat, axis=0)[None, :] + EPS)
    for t in tl.static_range(0, TMAX - 1):
        mat = mat / (tl.sum(mat, axis=1)[:, None] + EPS)
        mat = mat / (tl.sum(mat, axis=0)[None, :] + EPS)
    tl.store(out_ptr + pid * stride_n + rows * HC + cols, mat.to(out_ptr.dtype.element_ty))


@triton.jit
def _lg_sinkhorn_bwd_kernel(
    logits_ptr, grad_out_ptr, grad_logits_ptr, n_mats, stride_n,
    HC: tl.constexpr, TMAX: tl.constexpr, EPS: tl.constexpr,
):
    # back through the unrolled iterations, last first; each step's input is
    # recomputed from the first normalised matrix
    pid = tl.program_id(0)
    if pid >= n_mats:
        return
    rows = tl.arange(0, HC)[:, None]
    cols = tl.arange(0, HC)[None, :]
    offs = pid * stride_n + rows * HC + cols
    p = _lg_row_softmax(tl.load(logits_ptr + offs).to(tl.float32))
    c0 = tl.sum(p + EPS, axis=0) + EPS
    m0 = (p + EPS) / c0[None, :]
    g = tl.load(grad_out_ptr + offs).to(tl.float32)
    for t in tl.static_range(TMAX - 1, 0, -1):
        m = m0
        for s in tl.static_range(1, TMAX):
            if s < t:
                m = m / (tl.sum(m, axis=1)[:, None] + EPS)
                m = m / (tl.sum(m, axis=0)[None, :] + EPS)
        r = tl.sum(m, axis=1) + EPS
        b = m / r[:, None]
        c = tl.sum(b, axis=0) + EPS
        g = _lg_col_norm_bwd(g, b / c[None, :], c)
        g = _lg_row_norm_bwd(g, b, r)
    g = _lg_col_norm_bwd(g, m0, c0)
    dx = p * (g - tl.sum(g * p, axis=1)[:, None])
    tl.store(grad_logits_ptr + offs, dx.to(grad_logits_ptr.dtype.element_ty))


@triton.jit
def _lg_proj_backward_kernel(
    x_ptr, phi_ptr, grad_ptr, dx_ptr, dphi_ptr, M,
    K: tl.constexpr, N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # z = x @ phi with a narrow phi (K x N): dx = dz @ phi^T per row tile, and
    # dphi = x^T @ dz gathered over row tiles by fp32 tile atomics
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < M
    n = tl.arange(0, N)
    g = tl.load(grad_ptr + rows[:, None] * N + n[None, :], mask=rmask[:, None], other=0.0).to(tl.float32)
    for k0 in tl.static_range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        phi = tl.load(phi_ptr + ks[:, None] * N + n[None, :]).to(tl.float32)
        x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=rmask[:, None], other=0.0).to(tl.float32)
        dx = tl.dot(g, tl.trans(phi), input_precision="ieee")
        tl.store(dx_ptr + rows[:, None] * K + ks[None, :], dx.to(dx_ptr.dtype.element_ty), mask=rmask[:, None])
        dphi = tl.dot(tl.trans(x), g, input_precision="ieee")
        tl.atomic_add(dphi_ptr + ks[:, None] * N + n[None, :], dphi, sem="relaxed")


# ---- host side ------------------------------------------------------------------------------


def sparsemax_forward(x):
    n_rows, n_cols = x.shape
    block, warps = calculate_settings(n_cols)
    out = torch.empty_like(x)
    _lg_sparsemax_forward_kernel[(n_rows,)](x, x.stride(0), out, out.stride(0), n_cols, BLOCK_SIZE=block,
                                            num_warps=warps)
    return out


def tv_distance(p, q, labels=None, reduction="batchmean", ignore_index=-100):
    n_rows, n_cols = p.shape
    mode = _str_to_reduction_mode[reduction]
    n_valid = int((labels != ignore_index).sum()) if labels is not None else n_rows
    scale = {3: 1.0 / n_valid, 2: 1.0 / (n_valid * n_cols)}.get(mode, 1.0)
    loss = torch.zeros((n_rows, n_cols) if mode == 0 else (n_rows,), dtype=torch.float32, device=p.device)
    grads = torch.empty_like(p)
    _lg_tv_distance_kernel[(n_rows,)](p, p.stride(0), q, q.stride(0), loss, loss.stride(0), grads, grads.stride(0),
                                      labels if labels is not None else p, ignore_index, n_cols, scale,
                                      BLOCK_SIZE=min(MAX_FUSED_SIZE // 4, triton.next_power_of_2(n_cols)),
                                      HAS_LABEL=labels is not None, reduction=mode)
    return loss.sum() if mode else loss, grads
