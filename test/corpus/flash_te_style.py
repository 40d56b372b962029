# Training and inference kernels written in the manner of flash-attention's
# Triton ops, NVIDIA TransformerEngine's Triton kernels, native sparse
# attention / MoBA block-sparse attention and lightning attention.
#
# flash-attention side: the one-pass layer norm / RMS norm forward with
# dropout (Philox with 7 rounds, one seed per row), an added residual, a
# per-row scale, a second input x1 and a second weight/bias pair w1/b1
# (heuristics on `is not None`, autotuned over warps), zero-centred
# weights; its backward over a block of rows per program that writes the
# partial dW/dB rows, dx1 through its own dropout mask and the residual
# gradient; rotary embedding over (head, seqlen, dim) tiles with interleaved
# pairs through tl.reshape/tl.split/tl.join, conjugation, sequence offsets
# given as a tensor or an int and packed sequences through cu_seqlens; the
# older 2-D rotary form with swapped column indices; cross-entropy forward
# split over vocabulary blocks (class_start_idx for a vocabulary shard,
# label smoothing, logit scale, z-loss) and its backward.
#
# TransformerEngine side: the row-id map's last pass (each token's destination
# rows sorted in descending order together with their experts through one
# tl.sort of packed int64 keys), MoE token permutation and unpermutation
# through the row-id map with probabilities (a zero probability marks a
# padded slot), the unpermute backward with merging probabilities (a while
# loop over the hidden size), the per-rank online softmax statistics of a
# tensor-parallel cross-entropy (non-ignored tokens counted with
# tl.atomic_add), the cross-entropy with label smoothing that merges the
# ranks' statistics, writes the gradient in chunks and fixes the target's
# entry after a barrier, padding / unpadding of per-expert row chunks to an
# aligned size, and the map that reorders row chunks (a chunk's new first row
# from a prefix sum of the sizes taken in output order).
#
# Block-sparse attention side: mean-pooled compression of K/V blocks, top-k
# selection of KV blocks per query token from the compressed keys (the
# token's own block always kept, -1 where fewer blocks exist), and the
# forward over the selected blocks with an online softmax in base 2 for the
# group of query heads sharing a KV head, through block pointers (keys read
# transposed, boundary checks), packed sequences through cu_seqlens and a
# token-index table (heuristics on `is not None`, autotuned over warps).
#
# Lightning attention side: the forward that walks the sequence block by
# block, the intra-block part through a decay mask exp(-s (i - j)) and the
# inter-block part through a KV state carried across the loop.
import triton
import triton.language as tl


def _norm_autotune_configs():
    return [triton.Config({}, num_warps=w) for w in (1, 2, 4, 8, 16)]


# ---- flash-attention: layer norm / RMS norm --------------------------------------------------------


@triton.jit
def _fan_dropout_keep(SEEDS, seed_idx, cols, p):
    """The keep mask of one dropped-out row: Philox draws (7 rounds) from the row's own seed,
    counters running over the columns; a draw above p survives."""
    row_seed = tl.load(SEEDS + seed_idx).to(tl.uint32)
    return tl.rand(row_seed, cols, n_rounds=7) > p


@triton.jit
def _fan_scale_shift(x_hat, W, B, cols, in_row, ADD_SHIFT: tl.constexpr, PLUS_ONE: tl.constexpr):
    """x_hat * w (+ b), in float32; with PLUS_ONE the stored weight is centred on zero."""
    w = tl.load(W + cols, mask=in_row, other=0.0).to(tl.float32)
    if PLUS_ONE:
        w = w + 1.0
    res = x_hat * w
    if ADD_SHIFT:
        res = res + tl.load(B + cols, mask=in_row, other=0.0).to(tl.float32)
    return res


@triton.autotune(
    configs=_norm_autotune_configs(),
    key=["N", "HAS_RESIDUAL", "STORE_RESIDUAL_OUT", "IS_RMS_NORM", "HAS_BIAS"],
)
@triton.heuristics({"HAS_X1": lambda args: args["X1"] is not None})
@triton.heuristics({"HAS_W1": lambda args: args["W1"] is not None})
@triton.heuristics({"HAS_B1": lambda args: args["B1"] is not None})
@triton.jit
def _fan_layer_norm_fwd_1pass_kernel(
    X,  # input rows
    Y,  # output rows
    W,  # weight
    B,  # bias
    RESIDUAL,  # residual added after dropout
    X1,  # second input, dropped out and added
    W1,  # second weight (a parallel output)
    B1,
    Y1,
    RESIDUAL_OUT,  # the pre-norm sum, for the next block
    ROWSCALE,
    SEEDS,  # one dropout seed per row (2 * M with X1)
    DROPOUT_MASK,
    Mean,
    Rstd,
    stride_x_row,
    stride_y_row,
    stride_res_row,
    stride_res_out_row,
    stride_x1_row,
    stride_y1_row,
    M,
    N,
    eps,
    dropout_p,
    zero_centered_weight: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    STORE_RESIDUAL_OUT: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_DROPOUT: tl.constexpr,
    STORE_DROPOUT_MASK: tl.constexpr,
    HAS_ROWSCALE: tl.constexpr,
    HAS_X1: tl.constexpr,
    HAS_W1: tl.constexpr,
    HAS_B1: tl.constexpr,
):
    # A whole row fits in one BLOCK_N tile, so one program normalises one row in a single pass.
    # Inputs x (and x1) are scaled, dropped out and summed with the residual before the norm;
    # row `i` of x uses seed and row scale `i`, row `i` of x1 uses entry M + i of both.
    i = tl.program_id(0)
    i64 = i.to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    in_row = cols < N

    acc = tl.load(X + i64 * stride_x_row + cols, mask=in_row, other=0.0).to(tl.float32)
    if HAS_ROWSCALE:
        acc = acc * tl.load(ROWSCALE + i).to(tl.float32)
    if HAS_DROPOUT:
        kept = _fan_dropout_keep(SEEDS, i, cols, dropout_p)
        acc = tl.where(kept, acc * (1.0 / (1.0 - dropout_p)), 0.0)
        if STORE_DROPOUT_MASK:
            tl.store(DROPOUT_MASK + i64 * N + cols, kept.to(tl.int8), mask=in_row)
    if HAS_X1:
        extra = tl.load(X1 + i64 * stride_x1_row + cols, mask=in_row, other=0.0).to(tl.float32)
        if HAS_ROWSCALE:
            extra = extra * tl.load(ROWSCALE + M + i).to(tl.float32)
        if HAS_DROPOUT:
            kept1 = _fan_dropout_keep(SEEDS, M + i, cols, dropout_p)
            extra = tl.where(kept1, extra * (1.0 / (1.0 - dropout_p)), 0.0)
            if STORE_DROPOUT_MASK:
                tl.store(DROPOUT_MASK + (i64 + M) * N + cols, kept1.to(tl.int8), mask=in_row)
        acc = acc + extra
    if HAS_RESIDUAL:
        acc = acc + tl.load(RESIDUAL + i64 * stride_res_row + cols, mask=in_row, other=0.0).to(tl.float32)
    if STORE_RESIDUAL_OUT:
        tl.store(RESIDUAL_OUT + i64 * stride_res_out_row + cols, acc, mask=in_row)

    # statistics over the N real columns (the padding lanes hold zeros)
    if IS_RMS_NORM:
        dev = tl.where(in_row, acc, 0.0)
    else:
        mu = tl.sum(acc, axis=0) / N
        tl.store(Mean + i, mu)
        dev = tl.where(in_row, acc - mu, 0.0)
    inv_sigma = tl.rsqrt(tl.sum(dev * dev, axis=0) / N + eps)
    tl.store(Rstd + i, inv_sigma)
    x_hat = dev * inv_sigma

    out = _fan_scale_shift(x_hat, W, B, cols, in_row, HAS_BIAS, zero_centered_weight)
    tl.store(Y + i64 * stride_y_row + cols, out.to(Y.dtype.element_ty), mask=in_row)
    if HAS_W1:
        out1 = _fan_scale_shift(x_hat, W1, B1, cols, in_row, HAS_B1, zero_centered_weight)
        tl.store(Y1 + i64 * stride_y1_row + cols, out1.to(Y1.dtype.element_ty), mask=in_row)


@triton.jit
def _fan_norm_input_grad(x_hat, g, inv_sigma, n, RMS: tl.constexpr):
    """d(loss)/d(input) of a normalised row, given g = w * dy summed over the outputs."""
    along_x = tl.sum(x_hat * g, axis=0) / n
    if RMS:
        return (g - x_hat * along_x) * inv_sigma
    else:
        along_one = tl.sum(g, axis=0) / n
        return (g - x_hat * along_x - along_one) * inv_sigma


@triton.autotune(
    configs=_norm_autotune_configs(),
    key=["N", "HAS_DRESIDUAL", "STORE_DRESIDUAL", "IS_RMS_NORM", "HAS_BIAS", "HAS_DROPOUT"],
)
@triton.heuristics({"HAS_ROWSCALE": lambda args: args["ROWSCALE"] is not None})
@triton.heuristics({"HAS_DY1": lambda args: args["DY1"] is not None})
@triton.heuristics({"HAS_DX1": lambda args: args["DX1"] is not None})
@triton.heuristics({"HAS_B1": lambda args: args["DB1"] is not None})
@triton.heuristics({"RECOMPUTE_OUTPUT": lambda args: args["Y"] is not None})
@triton.jit
def _fan_layer_norm_bwd_kernel(
    X,  # the pre-norm sum saved by the forward
    W,
    B,
    Y,  # the output, recomputed when given
    DY,
    DX,
    DW,  # partial dW, one row per program
    DB,
    DRESIDUAL,
    W1,
    DY1,
    DX1,
    DW1,
    DB1,
    DRESIDUAL_IN,
    ROWSCALE,
    SEEDS,
    Mean,
    Rstd,
    stride_x_row,
    stride_y_row,
    stride_dy_row,
    stride_dx_row,
    stride_dres_row,
    stride_dy1_row,
    stride_dx1_row,
    stride_dres_in_row,
    M,
    N,
    eps,
    dropout_p,
    rows_per_program,
    zero_centered_weight: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_DRESIDUAL: tl.constexpr,
    STORE_DRESIDUAL: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_DROPOUT: tl.constexpr,
    HAS_ROWSCALE: tl.constexpr,
    HAS_DY1: tl.constexpr,
    HAS_DX1: tl.constexpr,
    HAS_B1: tl.constexpr,
    RECOMPUTE_OUTPUT: tl.constexpr,
):
    # Program `blk` walks rows [blk * rows_per_program, min(M, (blk + 1) * rows_per_program)),
    # writes dx (and dx1) of each, and leaves the sums of its rows' weight and bias gradients
    # in row `blk` of DW / DB / DW1 / DB1; the host adds those rows up.
    blk = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    in_row = cols < N
    lo = blk * rows_per_program
    hi = tl.minimum(lo + rows_per_program, M)

    gamma = tl.load(W + cols, mask=in_row, other=0.0).to(tl.float32)
    if zero_centered_weight:
        gamma = gamma + 1.0
    if HAS_DY1:
        gamma1 = tl.load(W1 + cols, mask=in_row, other=0.0).to(tl.float32)
        if zero_centered_weight:
            gamma1 = gamma1 + 1.0
    if RECOMPUTE_OUTPUT:
        if HAS_BIAS:
            beta = tl.load(B + cols, mask=in_row, other=0.0).to(tl.float32)

    sum_dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    if HAS_BIAS:
        sum_db = tl.zeros([BLOCK_N], dtype=tl.float32)
    if HAS_DY1:
        sum_dw1 = tl.zeros([BLOCK_N], dtype=tl.float32)
        if HAS_B1:
            sum_db1 = tl.zeros([BLOCK_N], dtype=tl.float32)

    for r in range(lo, hi):
        r64 = tl.cast(r, tl.int64)
        xv = tl.load(X + r64 * stride_x_row + cols, mask=in_row, other=0.0).to(tl.float32)
        inv_sigma = tl.load(Rstd + r)
        if IS_RMS_NORM:
            x_hat = xv * inv_sigma
        else:
            x_hat = (xv - tl.load(Mean + r)) * inv_sigma
        x_hat = tl.where(in_row, x_hat, 0.0)
        if RECOMPUTE_OUTPUT:
            y_again = x_hat * gamma
            if HAS_BIAS:
                y_again = y_again + beta
            tl.store(Y + r64 * stride_y_row + cols, y_again.to(Y.dtype.element_ty), mask=in_row)

        g_out = tl.load(DY + r64 * stride_dy_row + cols, mask=in_row, other=0.0).to(tl.float32)
        sum_dw += g_out * x_hat
        if HAS_BIAS:
            sum_db += g_out
        g = g_out * gamma
        if HAS_DY1:
            g_out1 = tl.load(DY1 + r64 * stride_dy1_row + cols, mask=in_row, other=0.0).to(tl.float32)
            sum_dw1 += g_out1 * x_hat
            if HAS_B1:
                sum_db1 += g_out1
            g = g + g_out1 * gamma1

        d_in = _fan_norm_input_grad(x_hat, g, inv_sigma, N, IS_RMS_NORM)
        if HAS_DRESIDUAL:
            d_in += tl.load(DRESIDUAL + r64 * stride_dres_row + cols, mask=in_row, other=0.0).to(tl.float32)
        if STORE_DRESIDUAL:
            tl.store(DRESIDUAL_IN + r64 * stride_dres_in_row + cols, d_in, mask=in_row)
        if HAS_DX1:
            # x1 took the second half of the seeds in the forward
            if HAS_DROPOUT:
                kept1 = _fan_dropout_keep(SEEDS, M + r, cols, dropout_p)
                d_x1 = tl.where(kept1, d_in * (1.0 / (1.0 - dropout_p)), 0.0)
            else:
                d_x1 = d_in
            tl.store(DX1 + r64 * stride_dx1_row + cols, d_x1.to(DX1.dtype.element_ty), mask=in_row)
        d_x = d_in
        if HAS_DROPOUT:
            kept = _fan_dropout_keep(SEEDS, r, cols, dropout_p)
            d_x = tl.where(kept, d_x * (1.0 / (1.0 - dropout_p)), 0.0)
        if HAS_ROWSCALE:
            d_x = d_x * tl.load(ROWSCALE + r).to(tl.float32)
        tl.store(DX + r64 * stride_dx_row + cols, d_x.to(DX.dtype.element_ty), mask=in_row)

    part = blk.to(tl.int64) * N + cols
    tl.store(DW + part, sum_dw, mask=in_row)
    if HAS_BIAS:
        tl.store(DB + part, sum_db, mask=in_row)
    if HAS_DY1:
        tl.store(DW1 + part, sum_dw1, mask=in_row)
        if HAS_B1:
            tl.store(DB1 + part, sum_db1, mask=in_row)


# ---- flash-attention: rotary embedding -------------------------------------------------------------


@triton.jit
def _fan_rotary_kernel(
    OUT,  # [batch, seqlen, nheads, headdim] or [total_seqlen, nheads, headdim]
    X,
    COS,  # [seqlen_ro, rotary_dim / 2]
    SIN,
    CU_SEQLENS,
    SEQLEN_OFFSETS,  # [batch] or an int
    seqlen,
    nheads,
    seqlen_ro,
    stride_out_batch,
    stride_out_seqlen,
    stride_out_nheads,
    stride_out_headdim,
    stride_x_batch,
    stride_x_seqlen,
    stride_x_nheads,
    stride_x_headdim,
    ROTARY_DIM: tl.constexpr,
    IS_SEQLEN_OFFSETS_TENSOR: tl.constexpr,
    IS_VARLEN: tl.constexpr,
    INTERLEAVED: tl.constexpr,
    CONJUGATE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    BLOCK_K: tl.constexpr = triton.next_power_of_2(ROTARY_DIM)
    ROTARY_DIM_HALF = ROTARY_DIM // 2
    pid_head = tl.program_id(axis=0)
    pid_m = tl.program_id(axis=1)
    pid_batch = tl.program_id(axis=2)

    if not IS_VARLEN:
        X = X + pid_batch * stride_x_batch
        OUT = OUT + pid_batch * stride_out_batch
    else:
        start_idx = tl.load(CU_SEQLENS + pid_batch)
        seqlen = tl.load(CU_SEQLENS + pid_batch + 1) - start_idx
        X = X + start_idx * stride_x_seqlen
        OUT = OUT + start_idx * stride_out_seqlen

    if pid_m * BLOCK_M >= seqlen:
        return

    rh = pid_head * BLOCK_H + tl.arange(0, BLOCK_H)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    if not IS_SEQLEN_OFFSETS_TENSOR:
        rm_cs = rm + SEQLEN_OFFSETS
    else:
        rm_cs = rm + tl.load(SEQLEN_OFFSETS + pid_batch)

    rk_half = tl.arange(0, BLOCK_K // 2)
    COS = COS + (rm_cs[:, None] * ROTARY_DIM_HALF + rk_half[None, :])
    SIN = SIN + (rm_cs[:, None] * ROTARY_DIM_HALF + rk_half[None, :])
    mask_cs = (rm_cs[:, None] < seqlen_ro) & (rk_half[None, :] < ROTARY_DIM_HALF)
    cos = tl.load(COS, mask=mask_cs, other=1.0).to(tl.float32)
    sin = tl.load(SIN, mask=mask_cs, other=0.0).to(tl.float32)
    if CONJUGATE:
        sin = -sin

    if not INTERLEAVED:
        X = X + (rh[:, None, None] * stride_x_nheads + rm[None, :, None] * stride_x_seqlen
                 + rk_half[None, None, :] * stride_x_headdim)
        OUT = OUT + (rh[:, None, None] * stride_out_nheads + rm[None, :, None] * stride_out_seqlen
                     + rk_half[None, None, :] * stride_out_headdim)
        mask = ((rh[:, None, None] < nheads) & (rm[None, :, None] < seqlen)
                & (rk_half[None, None, :] < ROTARY_DIM_HALF))
        x0 = tl.load(X, mask=mask, other=0.0).to(tl.float32)
        x1 = tl.load(X + ROTARY_DIM_HALF * stride_x_headdim, mask=mask, other=0.0).to(tl.float32)
        o0 = x0 * cos - x1 * sin
        o1 = x0 * sin + x1 * cos
        tl.store(OUT, o0, mask=mask)
        tl.store(OUT + ROTARY_DIM_HALF * stride_out_headdim, o1, mask=mask)
    else:
        rk = tl.arange(0, BLOCK_K)
        X = X + (rh[:, None, None] * stride_x_nheads + rm[None, :, None] * stride_x_seqlen
                 + rk[None, None, :] * stride_x_headdim)
        OUT = OUT + (rh[:, None, None] * stride_out_nheads + rm[None, :, None] * stride_out_seqlen
                     + rk[None, None, :] * stride_out_headdim)
        mask = (rh[:, None, None] < nheads) & (rm[None, :, None] < seqlen) & (rk[None, None, :] < ROTARY_DIM)
        x = tl.load(X, mask=mask, other=0.0).to(tl.float32)
        x0, x1 = tl.split(tl.reshape(x, [BLOCK_H, BLOCK_M, BLOCK_K // 2, 2]))
        o0 = x0 * cos - x1 * sin
        o1 = x0 * sin + x1 * cos
        o = tl.reshape(tl.join(o0, o1), [BLOCK_H, BLOCK_M, BLOCK_K])
        tl.store(OUT, o, mask=mask)


@triton.jit
def _fan_rotary_kernel_2d(
    OUT,  # [batch, seqlen, nheads, headdim]
    X,
    COS,  # [seqlen_ro, rotary_dim / 2]
    SIN,
    SEQLEN_OFFSETS,  # [batch] or an int
    seqlen,
    rotary_dim,
    seqlen_ro,
    stride_out_batch,
    stride_out_seqlen,
    stride_out_nheads,
    stride_x_batch,
    stride_x_seqlen,
    stride_x_nheads,
    BLOCK_K: tl.constexpr,
    IS_SEQLEN_OFFSETS_TENSOR: tl.constexpr,
    INTERLEAVED: tl.constexpr,
    CONJUGATE: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    pid_batch = tl.program_id(axis=1)
    pid_head = tl.program_id(axis=2)
    rotary_dim_half = rotary_dim // 2

    X = X + pid_batch * stride_x_batch + pid_head * stride_x_nheads
    OUT = OUT + pid_batch * stride_out_batch + pid_head * stride_out_nheads

    if pid_m * BLOCK_M >= seqlen:
        return
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    if not IS_SEQLEN_OFFSETS_TENSOR:
        rm_cs = rm + SEQLEN_OFFSETS
    else:
        rm_cs = rm + tl.load(SEQLEN_OFFSETS + pid_batch)
    rk = tl.arange(0, BLOCK_K)
    rk_half = tl.arange(0, BLOCK_K // 2)

    if not INTERLEAVED:
        X = X + (rm[:, None] * stride_x_seqlen + rk_half[None, :])
        COS = COS + (rm_cs[:, None] * rotary_dim_half + rk_half[None, :])
        SIN = SIN + (rm_cs[:, None] * rotary_dim_half + rk_half[None, :])
        mask_cs = (rm_cs[:, None] < seqlen_ro) & (rk_half[None, :] < rotary_dim_half)
        cos = tl.load(COS, mask=mask_cs, other=1.0).to(tl.float32)
        sin = tl.load(SIN, mask=mask_cs, other=0.0).to(tl.float32)
        mask_x = (rm[:, None] < seqlen) & (rk_half[None, :] < rotary_dim_half)
        x0 = tl.load(X, mask=mask_x, other=0.0).to(tl.float32)
        x1 = tl.load(X + rotary_dim_half, mask=mask_x, other=0.0).to(tl.float32)
        if CONJUGATE:
            sin = -sin
        o0 = x0 * cos - x1 * sin
        o1 = x0 * sin + x1 * cos
        OUT = OUT + (rm[:, None] * stride_out_seqlen + rk_half[None, :])
        tl.store(OUT, o0, mask=mask_x)
        tl.store(OUT + rotary_dim_half, o1, mask=mask_x)
    else:
        # each column reads its partner: 1, 0, 3, 2, ...
        rk_swap = rk + ((rk + 1) % 2) * 2 - 1
        rk_repeat = tl.arange(0, BLOCK_K) // 2
        X0 = X + (rm[:, None] * stride_x_seqlen + rk[None, :])
        X1 = X + (rm[:, None] * stride_x_seqlen + rk_swap[None, :])
        COS = COS + (rm_cs[:, None] * rotary_dim_half + rk_repeat[None, :])
        SIN = SIN + (rm_cs[:, None] * rotary_dim_half + rk_repeat[None, :])
        mask_cs = (rm_cs[:, None] < seqlen_ro) & (rk_repeat[None, :] < rotary_dim_half)
        cos = tl.load(COS, mask=mask_cs, other=1.0).to(tl.float32)
        sin = tl.load(SIN, mask=mask_cs, other=0.0).to(tl.float32)
        x0 = tl.load(X0, mask=(rm[:, None] < seqlen) & (rk[None, :] < rotary_dim), other=0.0).to(tl.float32)
        x1 = tl.load(X1, mask=(rm[:, None] < seqlen) & (rk_swap[None, :] < rotary_dim), other=0.0).to(tl.float32)
        if CONJUGATE:
            sin = -sin
        x0_cos = x0 * cos
        x1_sin = x1 * sin
        out = tl.where(rk[None, :] % 2 == 0, x0_cos - x1_sin, x0_cos + x1_sin)
        OUT = OUT + (rm[:, None] * stride_out_seqlen + rk[None, :])
        tl.store(OUT, out, mask=(rm[:, None] < seqlen) & (rk[None, :] < rotary_dim))


# ---- flash-attention: cross-entropy split over the vocabulary ------------------------------------


@triton.heuristics({"HAS_SMOOTHING": lambda args: args["smoothing"] > 0.0})
@triton.jit
def _fan_cross_entropy_fwd_kernel(
    loss_ptr,  # [n_splits, n_rows]
    lse_ptr,  # [n_splits, n_rows]
    z_loss_ptr,  # [n_splits, n_rows]
    logits_ptr,
    labels_ptr,
    smoothing,
    logit_scale,
    lse_square_scale,
    ignore_index,
    total_classes,
    class_start_idx,  # first class of this shard of the vocabulary
    n_cols,  # classes of this shard
    n_rows,
    logits_row_stride,
    BLOCK_SIZE: tl.constexpr,
    HAS_SMOOTHING: tl.constexpr,
    SPLIT: tl.constexpr,
):
    row_idx = tl.program_id(0)
    col_block_idx = tl.program_id(1)
    logits_ptr = logits_ptr + row_idx * logits_row_stride.to(tl.int64)
    col_offsets = col_block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    label_idx = tl.load(labels_ptr + row_idx)
    logits = tl.load(logits_ptr + col_offsets, mask=col_offsets < n_cols, other=-float("inf"))
    logits = logits.to(tl.float32) * logit_scale
    max_logits = tl.max(logits, 0)
    if HAS_SMOOTHING:
        sum_logits = tl.sum(tl.where(col_offsets < n_cols, logits, 0.0), 0)
    lse = tl.log(tl.sum(tl.exp(logits - max_logits), 0)) + max_logits
    tl.store(lse_ptr + col_block_idx * n_rows + row_idx, lse)
    if label_idx == ignore_index:
        loss = 0.0
        z_loss = 0.0
    else:
        label_idx -= class_start_idx
        if label_idx >= col_block_idx * BLOCK_SIZE and label_idx < min(n_cols, (col_block_idx + 1) * BLOCK_SIZE):
            logits_label = tl.load(logits_ptr + label_idx).to(tl.float32) * logit_scale
            if HAS_SMOOTHING:
                loss = ((lse if not SPLIT else 0.0) - smoothing * sum_logits / total_classes
                        - (1 - smoothing) * logits_label)
            else:
                loss = (lse if not SPLIT else 0.0) - logits_label
        else:
            # the label is not in this block: only the smoothing term
            if HAS_SMOOTHING:
                loss = smoothing * ((lse if not SPLIT else 0.0) - sum_logits / total_classes)
            else:
                loss = 0.0
        if not SPLIT:
            z_loss = lse_square_scale * lse * lse
            loss += z_loss
        else:
            z_loss = 0.0
    tl.store(loss_ptr + col_block_idx * n_rows + row_idx, loss)
    if not SPLIT:
        tl.store(z_loss_ptr + col_block_idx * n_rows + row_idx, z_loss)


@triton.heuristics({"HAS_SMOOTHING": lambda args: args["smoothing"] > 0.0})
@triton.jit
def _fan_cross_entropy_bwd_kernel(
    dlogits_ptr,
    dloss_ptr,
    logits_ptr,
    lse_ptr,
    labels_ptr,
    smoothing,
    logit_scale,
    lse_square_scale,
    ignore_index,
    total_classes,
    class_start_idx,
    n_cols,
    logits_row_stride,
    dlogits_row_stride,
    dloss_row_stride,
    BLOCK_SIZE: tl.constexpr,
    HAS_SMOOTHING: tl.constexpr,
):
    row_idx = tl.program_id(0)
    col_block_idx = tl.program_id(1)
    logits_ptr = logits_ptr + row_idx * logits_row_stride.to(tl.int64)
    dlogits_ptr = dlogits_ptr + row_idx * dlogits_row_stride.to(tl.int64)
    col_offsets = col_block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    label_idx = tl.load(labels_ptr + row_idx)
    if label_idx != ignore_index:
        dloss = tl.load(dloss_ptr + row_idx * dloss_row_stride)
    else:
        dloss = 0.0
    logits = tl.load(logits_ptr + col_offsets, mask=col_offsets < n_cols, other=-float("inf"))
    logits = logits.to(tl.float32) * logit_scale
    lse = tl.load(lse_ptr + row_idx)
    probs = tl.exp(logits - lse)
    probs += 2.0 * lse_square_scale * lse * probs
    label_idx -= class_start_idx
    if HAS_SMOOTHING:
        smooth_positive = 1.0 - smoothing
        smooth_negative = smoothing / total_classes
        probs = tl.where(col_offsets == label_idx, probs - smooth_positive, probs) - smooth_negative
    else:
        probs = tl.where(col_offsets == label_idx, probs - 1.0, probs)
    tl.store(dlogits_ptr + col_offsets, (dloss * logit_scale) * probs, mask=col_offsets < n_cols)


# ---- TransformerEngine: MoE permutation ------------------------------------------------------------


@triton.jit
def _te_row_id_map_pass_3_kernel(
    row_id_map_ptr,  # [num_tokens, 2 * num_experts + 1]
    num_experts,
    stride_row_id_map_token,
    stride_row_id_map_expert,
    LOAD_SIZE: tl.constexpr,
):
    # On entry a token's first num_experts entries hold its destination row for each expert, or -1
    # where it is not routed.  On exit they hold its routed rows in descending order, the next
    # num_experts entries the expert of each of those rows, and the last entry how many there are;
    # entries past that count are left as they were.  One program per token.
    token = tl.program_id(0)
    entry = row_id_map_ptr + token.to(tl.int64) * stride_row_id_map_token
    lane = tl.arange(0, LOAD_SIZE)
    is_expert = lane < num_experts
    dest = tl.load(entry + lane * stride_row_id_map_expert, mask=is_expert, other=-1)
    n_routed = tl.sum((dest != -1).to(tl.int32), axis=0)

    # A row and its expert travel as one int64 key: the row in the upper 32 bits, the expert in
    # the lower ones.  Rows are distinct, so a descending sort of the keys orders the rows and
    # drags each expert along; a -1 row gives a negative key and lands after every routed one.
    key = (dest.to(tl.int64) << 32) | lane.to(tl.int64)
    key = tl.sort(key, descending=True)
    rows_desc = (key >> 32).to(tl.int32)
    experts_desc = (key & 0xFFFFFFFF).to(tl.int32)

    written = lane < n_routed
    tl.store(entry + lane * stride_row_id_map_expert, rows_desc, mask=written)
    tl.store(entry + (num_experts + lane) * stride_row_id_map_expert, experts_desc, mask=written)
    tl.store(entry + 2 * num_experts * stride_row_id_map_expert, n_routed)


@triton.jit
def _te_routed_slot(map_row, slot, num_experts, stride_row_id_map_expert):
    """(destination row as int64, expert) of a token's `slot`-th routed entry in the row-id map."""
    row = tl.load(map_row + slot * stride_row_id_map_expert).to(tl.int64)
    expert = tl.load(map_row + (num_experts + slot) * stride_row_id_map_expert)
    return row, expert


@triton.jit
def _te_permute_kernel(
    input_ptr,
    row_id_map_ptr,
    probs_ptr,
    stride_row_id_map_token,
    stride_row_id_map_expert,
    stride_input_token,
    stride_input_hidden,
    stride_output_token,
    stride_output_hidden,
    stride_probs_token,
    stride_probs_expert,
    stride_permuted_probs_token,
    output_ptr,
    permuted_probs_ptr,
    num_experts: tl.constexpr,
    hidden_size: tl.constexpr,
    PERMUTE_PROBS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # grid: (tokens, hidden blocks).  The token's slice of the hidden size is read once and
    # written to every row the map routes it to.  With probabilities, each destination row also
    # gets the token's probability for that expert (stored by the first hidden block only), and
    # a zero probability marks a padded slot whose row is written as zeros.
    token = tl.program_id(0).to(tl.int64)
    hblk = tl.program_id(1)
    h = hblk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_h = h < hidden_size
    map_row = row_id_map_ptr + token * stride_row_id_map_token
    src = tl.load(input_ptr + token * stride_input_token + h * stride_input_hidden, mask=in_h)
    n_routed = tl.load(map_row + 2 * num_experts * stride_row_id_map_expert)
    for slot in tl.range(0, n_routed):
        row, expert = _te_routed_slot(map_row, slot, num_experts, stride_row_id_map_expert)
        dst = output_ptr + row * stride_output_token + h * stride_output_hidden
        if PERMUTE_PROBS:
            prob = tl.load(probs_ptr + token * stride_probs_token + expert * stride_probs_expert)
            if hblk == 0:
                tl.store(permuted_probs_ptr + row * stride_permuted_probs_token, prob)
            tl.store(dst, tl.where(prob != 0.0, src, tl.zeros_like(src)), mask=in_h)
        else:
            tl.store(dst, src, mask=in_h)


@triton.jit
def _te_unpermute_kernel(
    input_ptr,
    row_id_map_ptr,
    merging_probs_ptr,
    permuted_probs_ptr,
    stride_row_id_map_token,
    stride_row_id_map_expert,
    stride_input_token,
    stride_input_hidden,
    stride_output_token,
    stride_output_hidden,
    stride_merging_probs_token,
    stride_merging_probs_expert,
    stride_permuted_probs_token,
    stride_unpermuted_probs_token,
    stride_unpermuted_probs_expert,
    output_ptr,
    unpermuted_probs_ptr,
    num_experts: tl.constexpr,
    hidden_size: tl.constexpr,
    PROBS_LOAD_WIDTH: tl.constexpr,
    WITH_MERGING_PROBS: tl.constexpr,
    PERMUTE_PROBS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # grid: (tokens, hidden blocks).  A token's output is the sum of the rows it was permuted
    # to, each weighted by its merging probability when given, accumulated in float32.  With
    # PERMUTE_PROBS the permuted probabilities go back to [token, expert] (zero for the experts
    # the token skipped), written by the first hidden block.
    token = tl.program_id(0).to(tl.int64)
    hblk = tl.program_id(1)
    h = hblk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_h = h < hidden_size
    map_row = row_id_map_ptr + token * stride_row_id_map_token
    n_routed = tl.load(map_row + 2 * num_experts * stride_row_id_map_expert)

    total = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    if PERMUTE_PROBS:
        e_lane = tl.arange(0, PROBS_LOAD_WIDTH)
        back = tl.zeros([PROBS_LOAD_WIDTH], dtype=tl.float32)
    for slot in tl.range(0, n_routed):
        row, expert = _te_routed_slot(map_row, slot, num_experts, stride_row_id_map_expert)
        part = tl.load(input_ptr + row * stride_input_token + h * stride_input_hidden, mask=in_h, other=0.0)
        part = part.to(tl.float32)
        if WITH_MERGING_PROBS:
            part *= tl.load(merging_probs_ptr + token * stride_merging_probs_token
                            + expert * stride_merging_probs_expert)
        total += part
        if PERMUTE_PROBS:
            p = tl.load(permuted_probs_ptr + row * stride_permuted_probs_token)
            back = tl.where(e_lane == expert, p, back)
    tl.store(output_ptr + token * stride_output_token + h * stride_output_hidden,
             total.to(output_ptr.dtype.element_ty), mask=in_h)
    if PERMUTE_PROBS:
        if hblk == 0:
            tl.store(unpermuted_probs_ptr + token * stride_unpermuted_probs_token
                     + e_lane * stride_unpermuted_probs_expert, back, mask=e_lane < num_experts)


@triton.jit
def _te_unpermute_bwd_with_merging_probs_kernel(
    fwd_output_grad_ptr,
    fwd_input_grad_ptr,
    fwd_input_ptr,
    merging_probs_ptr,
    merging_probs_grad_ptr,
    row_id_map_ptr,
    num_experts: tl.constexpr,
    hidden_size: tl.constexpr,
    stride_row_id_map_token,
    stride_row_id_map_expert,
    stride_fwd_output_grad_token,
    stride_fwd_output_grad_hidden,
    stride_fwd_input_grad_token,
    stride_fwd_input_grad_hidden,
    stride_fwd_input_token,
    stride_fwd_input_hidden,
    stride_merging_probs_token,
    stride_merging_probs_expert,
    stride_merging_probs_grad_token,
    stride_merging_probs_grad_expert,
    PROBS_LOAD_WIDTH: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # One program per token; it walks the whole hidden size for each routed slot.  The forward
    # computed out[t] = sum_e prob[t, e] * in[row(t, e)], so
    #   d in[row(t, e)] = prob[t, e] * d out[t]   and   d prob[t, e] = <in[row(t, e)], d out[t]>.
    # Experts the token skipped get a zero probability gradient.
    token = tl.program_id(0).to(tl.int64)
    map_row = row_id_map_ptr + token * stride_row_id_map_token
    grad_row = fwd_output_grad_ptr + token * stride_fwd_output_grad_token
    e_lane = tl.arange(0, PROBS_LOAD_WIDTH)
    d_probs = tl.zeros([PROBS_LOAD_WIDTH], dtype=tl.float32)
    n_routed = tl.load(map_row + 2 * num_experts * stride_row_id_map_expert)
    for slot in tl.range(0, n_routed):
        row, expert = _te_routed_slot(map_row, slot, num_experts, stride_row_id_map_expert)
        weight = tl.load(merging_probs_ptr + token * stride_merging_probs_token
                         + expert * stride_merging_probs_expert)
        inner = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        h0 = 0
        while h0 < hidden_size:
            h = h0 + tl.arange(0, BLOCK_SIZE)
            in_h = h < hidden_size
            g = tl.load(grad_row + h * stride_fwd_output_grad_hidden, mask=in_h, other=0.0).to(tl.float32)
            tl.store(fwd_input_grad_ptr + row * stride_fwd_input_grad_token + h * stride_fwd_input_grad_hidden,
                     (g * weight).to(fwd_input_grad_ptr.dtype.element_ty), mask=in_h)
            xin = tl.load(fwd_input_ptr + row * stride_fwd_input_token + h * stride_fwd_input_hidden,
                          mask=in_h, other=0.0)
            inner += xin.to(tl.float32) * g
            h0 += BLOCK_SIZE
        d_probs = tl.where(e_lane == expert, tl.sum(inner, axis=0), d_probs)
    tl.store(merging_probs_grad_ptr + token * stride_merging_probs_grad_token
             + e_lane * stride_merging_probs_grad_expert,
             d_probs.to(merging_probs_grad_ptr.dtype.element_ty), mask=e_lane < num_experts)


# ---- TransformerEngine: tensor-parallel cross-entropy ----------------------------------------------


@triton.jit
def _te_online_softmax_kernel(
    X_ptr,
    X_stride,
    Y_ptr,
    Y_stride,
    m_d_X_y_ptr,
    m_d_X_y_stride,
    rank,
    n_cols,
    ignore_idx,
    n_non_ignore,  # a counter, incremented once per kept token
    BLOCK_SIZE: tl.constexpr,
):
    # One program per token over this rank's vocabulary shard [rank * n_cols, (rank + 1) * n_cols).
    # It leaves (max logit, sum of exp(logit - max), target logit or -inf when the target lives on
    # another rank) for the token, so the ranks can merge their softmax statistics afterwards.
    t = tl.program_id(0).to(tl.int64)
    target = tl.load(Y_ptr + t * Y_stride)
    tl.atomic_add(n_non_ignore, (target != ignore_idx).to(tl.int32))

    logits = X_ptr + t * X_stride
    lanes = tl.arange(0, BLOCK_SIZE)
    hi = tl.full([], float("-inf"), tl.float32)
    z = tl.zeros([], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_SIZE):
        c = c0 + lanes
        v = tl.load(logits + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        hi_next = tl.maximum(hi, tl.max(v, axis=0))
        z = z * tl.exp(hi - hi_next) + tl.sum(tl.exp(v - hi_next), axis=0)
        hi = hi_next

    local = target - rank * n_cols
    here = (local >= 0) & (local < n_cols)
    picked = tl.load(logits + local, mask=here, other=float("-inf")).to(tl.float32)

    stats = m_d_X_y_ptr + t * (3 * m_d_X_y_stride)
    tl.store(stats, hi)
    tl.store(stats + m_d_X_y_stride, z)
    tl.store(stats + 2 * m_d_X_y_stride, picked)


@triton.jit
def _te_cross_entropy_kernel(
    X_ptr,
    X_stride,
    grad_input_ptr,
    grad_input_stride,
    Y_ptr,
    Y_stride,
    loss_ptr,
    loss_stride,
    m_d_X_y_ptr,  # [world_size, n_rows, 3], gathered from the ranks
    m_d_X_y_stride,
    rank,
    world_size,
    ignore_idx,
    n_cols,
    n_rows,
    n_non_ignore,
    reduce_loss: tl.constexpr,
    label_smoothing: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # One program per token.  The ranks' (max, exp-sum, target logit) triples give the global
    # log-sum-exp; the program then writes softmax - eps over its own shard of the gradient
    # (eps = label_smoothing / vocabulary size; divided by the kept-token count for a mean), and
    # the loss  (1 - s) * (lse - x_target) + s * lse - eps * sum(x).  The target's own gradient
    # entry takes its extra -(1 - s) afterwards, when its rank holds it.  Ignored tokens get a
    # zero gradient and no loss.
    t = tl.program_id(0).to(tl.int64)
    target = tl.load(Y_ptr + t * Y_stride)
    lanes = tl.arange(0, BLOCK_SIZE)
    logits = X_ptr + t * X_stride
    grads = grad_input_ptr + t * grad_input_stride

    if target == ignore_idx:
        for c0 in range(0, n_cols, BLOCK_SIZE):
            c = c0 + lanes
            tl.store(grads + c, tl.zeros([BLOCK_SIZE], dtype=tl.float32), mask=c < n_cols)
    else:
        row_stats = m_d_X_y_ptr + t * (3 * m_d_X_y_stride)
        per_rank = n_rows.to(tl.int64) * (3 * m_d_X_y_stride)
        big = tl.load(row_stats)
        z = tl.load(row_stats + m_d_X_y_stride)
        x_target = tl.load(row_stats + 2 * m_d_X_y_stride)
        for k in range(1, world_size):
            theirs = row_stats + k * per_rank
            big_k = tl.load(theirs)
            z_k = tl.load(theirs + m_d_X_y_stride)
            top = tl.maximum(big, big_k)
            z = z * tl.exp(big - top) + z_k * tl.exp(big_k - top)
            big = top
            # only the target's rank holds a finite value, the others -inf
            x_target = tl.maximum(x_target, tl.load(theirs + 2 * m_d_X_y_stride))
        lse = big + tl.log(z)

        eps = label_smoothing / (n_cols * world_size)
        if reduce_loss:
            norm = 1.0 / tl.load(n_non_ignore).to(tl.float32)
        else:
            norm = 1.0
        x_sum = tl.zeros([], dtype=tl.float32)
        for c0 in range(0, n_cols, BLOCK_SIZE):
            c = c0 + lanes
            inside = c < n_cols
            v = tl.load(logits + c, mask=inside, other=0.0).to(tl.float32)
            tl.store(grads + c, (tl.exp(v - lse) - eps) * norm, mask=inside)
            if label_smoothing > 0:
                x_sum += tl.sum(v, axis=0)

        nll = lse - x_target
        if label_smoothing > 0:
            nll = (1.0 - label_smoothing) * nll + label_smoothing * lse - eps * x_sum
        tl.store(loss_ptr + t * loss_stride, nll)

        # the target's entry was written by the loop above: make those stores visible first
        tl.debug_barrier()
        local = target - rank * n_cols
        if (local >= 0) & (local < n_cols):
            slot = grads + local
            tl.store(slot, tl.load(slot) - (1.0 - label_smoothing) * norm)


# ---- TransformerEngine: padding of per-expert row chunks -----------------------------------------


@triton.jit
def _te_chunk_bounds(sizes, ALIGN: tl.constexpr):
    """First and one-past-last row of each chunk, packed and padded to a multiple of ALIGN."""
    padded = tl.cdiv(sizes, ALIGN) * ALIGN
    packed_end = tl.cumsum(sizes, axis=0)
    padded_end = tl.cumsum(padded, axis=0)
    return packed_end - sizes, packed_end, padded_end - padded, padded_end


@triton.jit
def _te_chunk_pad_kernel(
    input_ptr,
    output_ptr,
    m_splits_ptr,  # rows of each chunk before padding
    num_splits,
    hidden_size,
    stride_input_token,
    stride_output_token,
    ALIGN: tl.constexpr,
    SPLITS_LOAD_WIDTH: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    UNPAD: tl.constexpr,
):
    # grid: (output rows, hidden blocks).  The rows of consecutive expert chunks are laid out
    # either packed or with each chunk rounded up to ALIGN rows (the extra rows zero).  Each
    # program finds the chunk its output row falls in by comparing against every chunk's range
    # at once, then copies the matching input row, or writes zeros for a padding row.
    out_row = tl.program_id(0)
    hblk = tl.program_id(1)
    k = tl.arange(0, SPLITS_LOAD_WIDTH)
    sizes = tl.load(m_splits_ptr + k, mask=k < num_splits, other=0)
    pk_lo, pk_hi, pd_lo, pd_hi = _te_chunk_bounds(sizes, ALIGN)

    h = hblk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_h = h < hidden_size
    if UNPAD:
        # packed output row <- the same row of its chunk in the padded input
        hit = (out_row >= pk_lo) & (out_row < pk_hi)
        in_row = tl.sum(tl.where(hit, pd_lo + (out_row - pk_lo), 0), axis=0)
        take = in_h
    else:
        # padded output row <- its packed input row, unless it lies in the chunk's padding
        hit = (out_row >= pd_lo) & (out_row < pd_hi)
        depth = out_row - pd_lo
        in_row = tl.sum(tl.where(hit, pk_lo + depth, 0), axis=0)
        real = tl.sum((hit & (depth < sizes)).to(tl.int32), axis=0) > 0
        take = in_h & real
    vals = tl.load(input_ptr + in_row.to(tl.int64) * stride_input_token + h, mask=take, other=0.0)
    tl.store(output_ptr + out_row.to(tl.int64) * stride_output_token + h, vals, mask=in_h)


@triton.jit
def _te_make_chunk_sort_map_kernel(
    split_sizes_ptr,  # rows of each chunk, in input order
    sorted_indices_ptr,  # the chunks' order in the output
    dst_rows_ptr,  # [num_tokens], the output row of each input row
    num_splits: tl.constexpr,
    IDX_LOAD_WIDTH: tl.constexpr,
):
    # One program per input row.  Output chunk j is input chunk sorted_indices[j], so the chunk's
    # new first row is the sum of the sizes of the chunks placed before it; the row keeps its
    # offset inside the chunk.
    src = tl.program_id(0)
    j = tl.arange(0, IDX_LOAD_WIDTH)
    used = j < num_splits
    sizes = tl.load(split_sizes_ptr + j, mask=used, other=0)
    ends = tl.cumsum(sizes, axis=0)
    mine = (src >= ends - sizes) & (src < ends)
    chunk = tl.sum(tl.where(mine, j, 0), axis=0)
    offset = src - tl.sum(tl.where(mine, ends - sizes, 0), axis=0)

    order = tl.load(sorted_indices_ptr + j, mask=used, other=-1)
    placed = tl.load(split_sizes_ptr + order, mask=used, other=0)  # sizes in output order
    before = tl.cumsum(placed, axis=0) - placed
    new_first = tl.sum(tl.where(order == chunk, before, 0), axis=0)
    tl.store(dst_rows_ptr + src, (new_first + offset).to(tl.int32))


# ---- block-sparse attention: compression, block selection, forward ------------------------------


@triton.jit
def _nsa_compress_kv_kernel(
    k,  # [B, T, H, D]
    v,
    k_cmp,  # [B, NC, H, D]
    v_cmp,
    T,
    H: tl.constexpr,
    D: tl.constexpr,
    BS: tl.constexpr,
    BD: tl.constexpr,
):
    # mean of each block of BS keys / values (the last block may be partial)
    i_c, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    NC = tl.cdiv(T, BS)
    o_t = i_c * BS + tl.arange(0, BS)
    o_d = tl.arange(0, BD)
    m_t = o_t < T
    m_d = o_d < D
    p_k = k + ((i_b * T + o_t[:, None]) * H + i_h) * D + o_d[None, :]
    p_v = v + ((i_b * T + o_t[:, None]) * H + i_h) * D + o_d[None, :]
    b_k = tl.load(p_k, mask=m_t[:, None] & m_d[None, :], other=0.0).to(tl.float32)
    b_v = tl.load(p_v, mask=m_t[:, None] & m_d[None, :], other=0.0).to(tl.float32)
    n = tl.minimum(T - i_c * BS, BS).to(tl.float32)
    b_kc = tl.sum(b_k, 0) / n
    b_vc = tl.sum(b_v, 0) / n
    o_c = ((i_b * NC + i_c) * H + i_h) * D + o_d
    tl.store(k_cmp + o_c, b_kc.to(k_cmp.dtype.element_ty), mask=m_d)
    tl.store(v_cmp + o_c, b_vc.to(v_cmp.dtype.element_ty), mask=m_d)


@triton.jit
def _nsa_topk_kernel(
    q,  # [B, T, HQ, K]
    k_cmp,  # [B, NC, H, K]
    block_indices,  # [B, T, H, S]
    scale,
    T,
    NC,
    H: tl.constexpr,
    HQ: tl.constexpr,
    G: tl.constexpr,
    K: tl.constexpr,
    S: tl.constexpr,
    BS: tl.constexpr,
    BC: tl.constexpr,
    BK: tl.constexpr,
    BH: tl.constexpr,
):
    # importance of each compressed block: softmax over the visible blocks
    # per query head, summed over the heads of the group; the token's own
    # block is always chosen first
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    o_h = tl.arange(0, BH)
    o_k = tl.arange(0, BK)
    o_c = tl.arange(0, BC)
    m_h = o_h < G
    p_q = q + ((i_b * T + i_t) * HQ + i_h * G + o_h[:, None]) * K + o_k[None, :]
    b_q = tl.load(p_q, mask=m_h[:, None] & (o_k[None, :] < K), other=0.0)
    p_k = k_cmp + ((i_b * NC + o_c[None, :]) * H + i_h) * K + o_k[:, None]
    b_k = tl.load(p_k, mask=(o_c[None, :] < NC) & (o_k[:, None] < K), other=0.0)
    b_s = tl.dot(b_q, b_k) * scale
    visible = (o_c * BS <= i_t) & (o_c < NC)
    b_s = tl.where(m_h[:, None] & visible[None, :], b_s, float("-inf"))
    b_m = tl.max(b_s, 1)
    b_m = tl.where(m_h, b_m, 0.0)
    b_p = tl.exp(b_s - b_m[:, None])
    b_p = b_p / tl.where(m_h, tl.sum(b_p, 1), 1.0)[:, None]
    b_i = tl.sum(tl.where(m_h[:, None], b_p, 0.0), 0)
    b_i = tl.where(o_c == i_t // BS, float("inf"), b_i)
    b_i = tl.where(visible, b_i, float("-inf"))
    p_out = block_indices + ((i_b * T + i_t) * H + i_h) * S
    for i_s in tl.static_range(S):
        b_best = tl.max(b_i, 0)
        i_best = tl.argmax(b_i, 0)
        tl.store(p_out + i_s, tl.where(b_best > float("-inf"), i_best, -1).to(tl.int32))
        b_i = tl.where(o_c == i_best, float("-inf"), b_i)


@triton.heuristics({"USE_OFFSETS": lambda args: args["offsets"] is not None})
@triton.autotune(
    configs=[triton.Config({}, num_warps=num_warps) for num_warps in (1, 2, 4, 8)],
    key=["BS", "BK", "BV"],
)
@triton.jit
def _nsa_selected_attn_fwd_kernel(
    q,  # [B, T, HQ, K] or packed [total, HQ, K]
    k,  # [B, T, H, K]
    v,  # [B, T, H, V]
    o,  # [B, T, HQ, V]
    lse,  # [B, T, HQ]
    scale,
    block_indices,  # [B, T, H, S], in blocks, relative to the sequence
    offsets,  # cu_seqlens
    token_indices,  # (sequence, position) of each packed token
    T,
    H: tl.constexpr,
    HQ: tl.constexpr,
    G: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    S: tl.constexpr,
    BS: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    USE_OFFSETS: tl.constexpr,
):
    # one program per (token, value block, batch x kv head): the G query
    # heads sharing the KV head attend to the S selected key blocks
    i_t, i_v, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    if USE_OFFSETS:
        i_n, i_t = tl.load(token_indices + i_t * 2).to(tl.int32), tl.load(token_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(offsets + i_n).to(tl.int32), tl.load(offsets + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T

    k += (bos * H + i_h) * K
    v += (bos * H + i_h) * V
    block_indices += (bos + i_t) * H * S + i_h * S

    p_q = tl.make_block_ptr(q + (bos + i_t) * HQ * K, (HQ, K), (K, 1), (i_h * G, 0), (G, BK), (1, 0))
    p_o = tl.make_block_ptr(o + (bos + i_t) * HQ * V, (HQ, V), (V, 1), (i_h * G, i_v * BV), (G, BV), (1, 0))
    p_lse = lse + (bos + i_t) * HQ + i_h * G + tl.arange(0, G)

    b_q = tl.load(p_q, boundary_check=(0, 1))
    # scores in base 2
    b_q = (b_q * scale * 1.44269504).to(b_q.dtype)

    b_o = tl.zeros([G, BV], dtype=tl.float32)
    b_m = tl.full([G], float("-inf"), dtype=tl.float32)
    b_acc = tl.zeros([G], dtype=tl.float32)
    for i in range(S):
        i_s = tl.load(block_indices + i).to(tl.int32) * BS
        if i_s <= i_t and i_s >= 0:
            p_k = tl.make_block_ptr(k, (K, T), (1, H * K), (0, i_s), (BK, BS), (0, 1))
            p_v = tl.make_block_ptr(v, (T, V), (H * V, 1), (i_s, i_v * BV), (BS, BV), (1, 0))
            b_k = tl.load(p_k, boundary_check=(0, 1))
            b_v = tl.load(p_v, boundary_check=(0, 1))
            b_s = tl.dot(b_q, b_k)
            b_s = tl.where((i_t >= (i_s + tl.arange(0, BS)))[None, :], b_s, float("-inf"))
            b_m, b_mp = tl.maximum(b_m, tl.max(b_s, 1)), b_m
            b_r = tl.exp2(b_mp - b_m)
            b_p = tl.exp2(b_s - b_m[:, None])
            b_acc = b_acc * b_r + tl.sum(b_p, 1)
            b_o = b_o * b_r[:, None] + tl.dot(b_p.to(b_q.dtype), b_v)
    b_o = b_o / b_acc[:, None]
    b_m += tl.log2(b_acc)
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))
    if i_v == 0:
        tl.store(p_lse, b_m.to(p_lse.dtype.element_ty))


# ---- lightning attention: forward with decay ------------------------------------------------------


@triton.jit
def _la_fwd_kernel(
    Q,  # [b, h, n, d]
    K,
    V,  # [b, h, n, e]
    Out,
    S,  # [h], per-head decay rate
    b: tl.constexpr,
    h: tl.constexpr,
    n,
    d: tl.constexpr,
    e: tl.constexpr,
    BLOCK: tl.constexpr,
    NUM_BLOCK,
    BLOCK_MODEL: tl.constexpr,
):
    off_bh = tl.program_id(0)
    off_h = off_bh % h
    off_e = tl.program_id(1)
    qk_offset = off_bh * n * d
    v_offset = off_bh * n * e
    o_offset = off_bh * n * e
    e_offset = off_e * BLOCK_MODEL

    Q_block_ptr = Q + qk_offset + tl.arange(0, d)[None, :]
    K_trans_block_ptr = K + qk_offset + tl.arange(0, d)[:, None]
    V_block_ptr = V + v_offset + e_offset + tl.arange(0, BLOCK_MODEL)[None, :]
    O_block_ptr = Out + o_offset + e_offset + tl.arange(0, BLOCK_MODEL)[None, :]
    S_block_ptr = S + off_h
    s = tl.load(S_block_ptr)

    off_block = tl.arange(0, BLOCK)
    q_decay = tl.exp(-s.to(tl.float32) * off_block[:, None])
    k_trans_decay = tl.exp(-s.to(tl.float32) * (BLOCK - off_block[None, :]))
    block_decay = tl.exp(-s.to(tl.float32) * BLOCK)
    index = off_block[:, None] - off_block[None, :]
    s_index = s * index
    s_index = tl.where(index >= 0, -s_index, float("-inf"))
    diag_decay = tl.exp(s_index)
    kv = tl.zeros([d, BLOCK_MODEL], dtype=tl.float32)

    for i in range(NUM_BLOCK):
        q = tl.load(Q_block_ptr + off_block[:, None] * d, mask=off_block[:, None] < n, other=0.0).to(tl.float32)
        k_trans = tl.load(K_trans_block_ptr + off_block[None, :] * d, mask=off_block[None, :] < n,
                          other=0.0).to(tl.float32)
        v = tl.load(V_block_ptr + off_block[:, None] * e, mask=off_block[:, None] < n, other=0.0).to(tl.float32)
        qk = tl.dot(q, k_trans) * diag_decay
        o_intra = tl.dot(qk, v)
        o_inter = tl.dot(q, kv) * q_decay
        o = o_intra + o_inter
        tl.store(O_block_ptr + off_block[:, None] * e, o.to(O_block_ptr.dtype.element_ty),
                 mask=off_block[:, None] < n)
        kv = block_decay * kv + tl.dot(k_trans * k_trans_decay, v)
        off_block += BLOCK
