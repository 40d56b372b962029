"""Kernels in the style of tritonbench's operator kernels, the HSTU
(generative-recommenders) jagged kernels, Apple's cut-cross-entropy and the
Triton grouped GEMMs of MoE training stacks.

Jagged tensors are given as a values buffer [total_rows, M] plus an offsets
buffer [B + 1]; batch b owns rows offsets[b] .. offsets[b + 1]. Kernels that
loop over a padded maximum length take it as MAX_SEQLEN and mask every row
past the batch's own end.

Cut-cross-entropy kernels compute with the classifier C [V, D] and the
embeddings E [N, D] without materialising the logits E @ C^T: each program
builds one (rows x vocab) block by a loop over D.
"""
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:
    from triton.language.extra.cuda import libdevice


# ---- jagged reductions -----------------------------------------------------------------------


@triton.jit
def _tb_jagged_sum_kernel(
    values_ptr,  # [total, M]
    offsets_ptr,  # [B + 1]
    out_ptr,  # [B, M]
    M,
    MAX_SEQLEN,
    BLOCK_SIZE_RAGGED: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
):
    # one program per (batch, column block); the rows are walked over the
    # padded maximum length and summed into a 2-D buffer reduced at the end
    pid = tl.program_id(0)
    n_col_blocks = tl.cdiv(M, BLOCK_SIZE_M)
    pid_b = pid // n_col_blocks
    pid_m = pid % n_col_blocks

    row_begin = tl.load(offsets_ptr + pid_b)
    row_end = tl.load(offsets_ptr + pid_b + 1)

    cols = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    col_ok = cols < M
    partial = tl.zeros((BLOCK_SIZE_RAGGED, BLOCK_SIZE_M), dtype=tl.float32)
    for start in range(0, MAX_SEQLEN, BLOCK_SIZE_RAGGED):
        rows = row_begin + start + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        chunk = tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=0.0)
        partial += chunk.to(tl.float32)
    total = tl.sum(partial, axis=0)
    tl.store(out_ptr + pid_b * M + cols, total.to(out_ptr.dtype.element_ty), mask=col_ok)


@triton.jit
def _tb_jagged_mean_kernel(
    values_ptr,
    offsets_ptr,
    out_ptr,
    M,
    BLOCK_SIZE_RAGGED: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
):
    # the loop runs to the batch's own end instead of the padded length; the
    # running sum is a 1-D vector, and an empty batch gives 0
    pid_b = tl.program_id(0)
    pid_m = tl.program_id(1)
    row_begin = tl.load(offsets_ptr + pid_b).to(tl.int64)
    row_end = tl.load(offsets_ptr + pid_b + 1).to(tl.int64)
    n_rows = row_end - row_begin

    cols = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    col_ok = cols < M
    running = tl.zeros((BLOCK_SIZE_M,), dtype=tl.float32)
    for row0 in tl.range(row_begin, row_end, BLOCK_SIZE_RAGGED):
        rows = row0 + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        chunk = tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=0.0)
        running += tl.sum(chunk.to(tl.float32), axis=0)
    denom = tl.maximum(n_rows, 1).to(tl.float32)
    tl.store(out_ptr + pid_b * M + cols, (running / denom).to(out_ptr.dtype.element_ty), mask=col_ok)


@triton.jit
def _tb_jagged_softmax_kernel(
    values_ptr,
    offsets_ptr,
    out_ptr,  # jagged like values
    M,
    MAX_SEQLEN,
    BLOCK_SIZE_RAGGED: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
):
    # softmax down the ragged dimension, separately for every column: one
    # pass for the column maxima, one for the sums of exponentials, one to
    # write the normalised values
    pid_b = tl.program_id(0)
    pid_m = tl.program_id(1)
    row_begin = tl.load(offsets_ptr + pid_b)
    row_end = tl.load(offsets_ptr + pid_b + 1)
    cols = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    col_ok = cols < M

    col_max = tl.full((BLOCK_SIZE_M,), float("-inf"), dtype=tl.float32)
    for start in range(0, MAX_SEQLEN, BLOCK_SIZE_RAGGED):
        rows = row_begin + start + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        x = tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=float("-inf"))
        col_max = tl.maximum(col_max, tl.max(x.to(tl.float32), axis=0))

    denom = tl.zeros((BLOCK_SIZE_M,), dtype=tl.float32)
    for start in range(0, MAX_SEQLEN, BLOCK_SIZE_RAGGED):
        rows = row_begin + start + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        x = tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=float("-inf"))
        e = tl.where(ok, tl.exp(x.to(tl.float32) - col_max[None, :]), 0.0)
        denom += tl.sum(e, axis=0)

    for start in range(0, MAX_SEQLEN, BLOCK_SIZE_RAGGED):
        rows = row_begin + start + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        x = tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=0.0)
        y = tl.exp(x.to(tl.float32) - col_max[None, :]) / denom[None, :]
        tl.store(out_ptr + rows[:, None] * M + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _tb_jagged_layer_norm_kernel(
    values_ptr,
    offsets_ptr,
    out_ptr,
    M,
    MAX_SEQLEN,
    eps,
    BLOCK_SIZE_RAGGED: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
):
    # layer norm of each batch's whole (rows x M) slice: a pass for the mean,
    # a pass for the centred second moment, a pass to normalise
    pid_b = tl.program_id(0)
    row_begin = tl.load(offsets_ptr + pid_b)
    row_end = tl.load(offsets_ptr + pid_b + 1)
    count = ((row_end - row_begin) * M).to(tl.float32)
    cols = tl.arange(0, BLOCK_SIZE_M)
    col_ok = cols < M

    acc = tl.zeros((BLOCK_SIZE_RAGGED, BLOCK_SIZE_M), dtype=tl.float32)
    for start in range(0, MAX_SEQLEN, BLOCK_SIZE_RAGGED):
        rows = row_begin + start + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        acc += tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=0.0).to(tl.float32)
    mean = tl.sum(tl.sum(acc, axis=1), axis=0) / count

    acc = tl.zeros((BLOCK_SIZE_RAGGED, BLOCK_SIZE_M), dtype=tl.float32)
    for start in range(0, MAX_SEQLEN, BLOCK_SIZE_RAGGED):
        rows = row_begin + start + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        x = tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        centred = tl.where(ok, x - mean, 0.0)
        acc += centred * centred
    var = tl.sum(tl.sum(acc, axis=1), axis=0) / count
    rstd = tl.math.rsqrt(var + eps)

    for start in range(0, MAX_SEQLEN, BLOCK_SIZE_RAGGED):
        rows = row_begin + start + tl.arange(0, BLOCK_SIZE_RAGGED)
        ok = (rows < row_end)[:, None] & col_ok[None, :]
        x = tl.load(values_ptr + rows[:, None] * M + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        tl.store(out_ptr + rows[:, None] * M + cols[None, :], ((x - mean) * rstd).to(out_ptr.dtype.element_ty),
                 mask=ok)


# ---- HSTU ragged attention -------------------------------------------------------------------


@triton.jit
def _hstu_pair_mask(
    pos_m,  # adjusted query positions [BLOCK_M]
    pos_n,  # adjusted key positions [BLOCK_N]
    offs_m,
    offs_n,
    seq_len,
    max_attn_len,
    CAUSAL: tl.constexpr,
    HAS_MAX_ATTN_LEN: tl.constexpr,
):
    gap = pos_m[:, None] - pos_n[None, :]
    live = (offs_m[:, None] < seq_len) & (offs_n[None, :] < seq_len)
    if CAUSAL:
        allowed = (gap > 0) | (offs_m[:, None] == offs_n[None, :])
    else:
        allowed = (gap != 0) | (offs_m[:, None] == offs_n[None, :])
    if HAS_MAX_ATTN_LEN:
        allowed = allowed & (gap <= max_attn_len) & (gap >= -max_attn_len)
    return live & allowed


@triton.heuristics({"HAS_MULTIPLE_TARGETS": lambda args: args["num_targets"] is not None})
@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_warps=2),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=2),
    ],
    key=["AUTOTUNE_MAX_SEQ_LEN", "BLOCK_D_Q", "BLOCK_D_V", "CAUSAL"],
)
@triton.jit
def _hstu_ragged_attn_fwd_kernel(
    Q,  # [total, H, DimQ]
    K,  # [total, H, DimQ]
    V,  # [total, H, DimV]
    seq_offsets,  # [B + 1]
    num_targets,  # [B] or None
    TS,  # timestamps [total]
    PW,  # position weights [2 * MAX_POS - 1]
    TW,  # time bucket weights [NUM_BUCKETS + 1]
    Out,  # [total, H, DimV]
    stride_qm,
    stride_qh,
    stride_kn,
    stride_kh,
    stride_vn,
    stride_vh,
    stride_om,
    stride_oh,
    alpha,
    H,
    MAX_SEQ_LEN,
    AUTOTUNE_MAX_SEQ_LEN,
    max_attn_len,
    inv_time_bucket_div,
    DimQ,
    DimV,
    MAX_POS: tl.constexpr,
    NUM_BUCKETS: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_MULTIPLE_TARGETS: tl.constexpr,
    HAS_MAX_ATTN_LEN: tl.constexpr,
    USE_POS_BIAS: tl.constexpr,
    USE_TIME_BIAS: tl.constexpr,
    BLOCK_D_Q: tl.constexpr,
    BLOCK_D_V: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # SiLU attention over one jagged sequence: grid (query blocks over the
    # maximum length, batch * heads); query blocks past the sequence end exit
    start_m = tl.program_id(0) * BLOCK_M
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    seq_start = tl.load(seq_offsets + off_z).to(tl.int64)
    seq_len = (tl.load(seq_offsets + off_z + 1) - seq_start).to(tl.int32)
    if start_m >= seq_len:
        return
    if HAS_MULTIPLE_TARGETS:
        n_targets = tl.load(num_targets + off_z).to(tl.int32)
        last_hist = seq_len - n_targets
    else:
        last_hist = seq_len

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D_Q)
    offs_v = tl.arange(0, BLOCK_D_V)
    pos_m = tl.minimum(offs_m, last_hist)

    q_base = Q + seq_start * stride_qm + off_h * stride_qh
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=(offs_m[:, None] < seq_len) & (offs_d[None, :] < DimQ), other=0.0)
    if USE_TIME_BIAS:
        ts_m = tl.load(TS + seq_start + offs_m, mask=offs_m < seq_len, other=0).to(tl.float32)

    acc = tl.zeros((BLOCK_M, BLOCK_D_V), dtype=tl.float32)
    if CAUSAL:
        hi = tl.minimum(seq_len, start_m + BLOCK_M)
    else:
        hi = seq_len
    k_base = K + seq_start * stride_kn + off_h * stride_kh
    v_base = V + seq_start * stride_vn + off_h * stride_vh
    for start_n in range(0, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + tl.arange(0, BLOCK_N)
        # K read transposed: [BLOCK_D_Q, BLOCK_N]
        k = tl.load(k_base + offs_n[None, :] * stride_kn + offs_d[:, None],
                    mask=(offs_n[None, :] < seq_len) & (offs_d[:, None] < DimQ), other=0.0)
        qk = tl.dot(q, k, allow_tf32=False) * alpha
        pos_n = tl.minimum(offs_n, last_hist)
        if USE_POS_BIAS:
            rel = pos_m[:, None] - pos_n[None, :] + MAX_POS - 1
            rel = tl.minimum(tl.maximum(rel, 0), 2 * MAX_POS - 2)
            qk += tl.load(PW + rel)
        if USE_TIME_BIAS:
            ts_n = tl.load(TS + seq_start + offs_n, mask=offs_n < seq_len, other=0).to(tl.float32)
            delta = tl.abs(ts_m[:, None] - ts_n[None, :])
            bucket = (tl.log(1.0 + delta) * inv_time_bucket_div).to(tl.int32)
            bucket = tl.minimum(tl.maximum(bucket, 0), NUM_BUCKETS)
            qk += tl.load(TW + bucket)
        keep = _hstu_pair_mask(pos_m, pos_n, offs_m, offs_n, seq_len, max_attn_len, CAUSAL, HAS_MAX_ATTN_LEN)
        silu = qk * tl.sigmoid(qk) / MAX_SEQ_LEN
        silu = tl.where(keep, silu, 0.0)
        v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_v[None, :],
                    mask=(offs_n[:, None] < seq_len) & (offs_v[None, :] < DimV), other=0.0)
        acc += tl.dot(silu.to(v.dtype), v, allow_tf32=False)

    o_base = Out + seq_start * stride_om + off_h * stride_oh
    tl.store(o_base + offs_m[:, None] * stride_om + offs_v[None, :], acc.to(Out.dtype.element_ty),
             mask=(offs_m[:, None] < seq_len) & (offs_v[None, :] < DimV))


# ---- jagged x dense --------------------------------------------------------------------------


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
    ],
    key=["N", "K", "AUTOTUNE_MAX_SEQ_LEN"],
)
@triton.jit
def _tb_jagged_dense_bmm_broadcast_add_kernel(
    seq_offsets,
    Jagged,  # [total, K]
    Dense,  # [B, K, N]
    Bias,  # [B, N]
    Out,  # [total, N]
    AUTOTUNE_MAX_SEQ_LEN,
    N,
    K,
    stride_jm,
    stride_db,
    stride_dk,
    stride_dn,
    stride_bias_b,
    stride_om,
    HAS_BIAS: tl.constexpr,
    ALLOW_TF32: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # out[rows of b] = jagged[rows of b] @ dense[b] (+ bias[b]);
    # grid (row blocks of the maximum length, column blocks, batch)
    off_m = tl.program_id(0)
    off_n = tl.program_id(1)
    off_b = tl.program_id(2)
    seq_start = tl.load(seq_offsets + off_b).to(tl.int64)
    seq_end = tl.load(seq_offsets + off_b + 1)
    n_rows = (seq_end - seq_start).to(tl.int32)
    start_m = off_m * BLOCK_M
    if start_m >= n_rows:
        return
    rows = start_m + tl.arange(0, BLOCK_M)
    cols = off_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    jag = Jagged + seq_start * stride_jm
    den = Dense + off_b.to(tl.int64) * stride_db

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(jag + rows[:, None] * stride_jm + (k0 + ks)[None, :],
                    mask=(rows[:, None] < n_rows) & ((k0 + ks)[None, :] < K), other=0.0)
        b = tl.load(den + (k0 + ks)[:, None] * stride_dk + cols[None, :] * stride_dn,
                    mask=((k0 + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, allow_tf32=ALLOW_TF32)
    if HAS_BIAS:
        bias = tl.load(Bias + off_b * stride_bias_b + cols, mask=cols < N, other=0.0)
        acc += bias[None, :].to(tl.float32)
    tl.store(Out + seq_start * stride_om + rows[:, None] * stride_om + cols[None, :], acc.to(Out.dtype.element_ty),
             mask=(rows[:, None] < n_rows) & (cols[None, :] < N))


@triton.jit
def _tb_jagged_to_padded_dense_kernel(
    values_ptr,  # [total, M]
    offsets_ptr,
    dense_ptr,  # [B, MAX_LEN, M]
    M,
    MAX_LEN,
    padding_value,
    BLOCK_L: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    # rows past a batch's length (and rows beyond MAX_LEN of a longer batch
    # are dropped) read as padding_value
    pid_b = tl.program_id(0)
    pid_l = tl.program_id(1)
    begin = tl.load(offsets_ptr + pid_b)
    length = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, MAX_LEN)
    rows = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    row_in = rows < MAX_LEN
    for m0 in range(0, M, BLOCK_M):
        cols = m0 + tl.arange(0, BLOCK_M)
        col_ok = cols < M
        have = (rows < length)[:, None] & col_ok[None, :]
        x = tl.load(values_ptr + (begin + rows)[:, None] * M + cols[None, :], mask=have, other=padding_value)
        dst = dense_ptr + (pid_b * MAX_LEN + rows)[:, None].to(tl.int64) * M + cols[None, :]
        tl.store(dst, x.to(dense_ptr.dtype.element_ty), mask=row_in[:, None] & col_ok[None, :])


# ---- gather gemv, dropout, norms -------------------------------------------------------------


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_K": bk}, num_warps=w)
             for bm, bk, w in ((16, 64, 2), (32, 128, 4), (64, 256, 8))],
    key=["M", "K"],
)
@triton.jit
def _tb_gather_gemv_kernel(
    W_ptr,  # [E, M, K]
    x_ptr,  # [K]
    idx_ptr,  # [1] which of the E matrices
    out_ptr,  # [M]
    M,
    K,
    stride_we,
    stride_wm,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    row_ok = rows < M
    sel = tl.load(idx_ptr).to(tl.int64)
    w_rows = W_ptr + sel * stride_we + rows[:, None] * stride_wm
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_K), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        ks = k0 + tl.arange(0, BLOCK_SIZE_K)
        k_ok = ks < K
        w = tl.load(w_rows + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        x = tl.load(x_ptr + ks, mask=k_ok, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(out_ptr + rows, y.to(out_ptr.dtype.element_ty), mask=row_ok)


@triton.jit
def _tb_low_mem_dropout_kernel(
    x_ptr,
    out_ptr,
    n_elements,
    p,
    seed,
    BLOCK_SIZE: tl.constexpr,
):
    # the keep mask is regenerated from (seed, offset) instead of stored
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_range = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_range)
    draw = tl.rand(seed, offsets)
    survives = draw > p
    y = tl.where(survives, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, y, mask=in_range)


@triton.jit
def _tb_welford_layer_norm_fwd_kernel(
    X,
    Y,
    W,
    B,
    Mean,
    Rstd,
    stride,
    N,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    # statistics in one read: each chunk's count, mean and M2 are merged into
    # the running ones (the parallel form of Welford's update)
    row = tl.program_id(0).to(tl.int64)
    x_row = X + row * stride
    run_n = 0.0
    run_mean = 0.0
    run_m2 = 0.0
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        ok = cols < N
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32)
        n_here = tl.sum(ok.to(tl.float32), axis=0)
        mean_here = tl.sum(x, axis=0) / n_here
        dev = tl.where(ok, x - mean_here, 0.0)
        m2_here = tl.sum(dev * dev, axis=0)
        merged = run_n + n_here
        delta = mean_here - run_mean
        run_mean += delta * (n_here / merged)
        run_m2 += m2_here + delta * delta * (run_n * n_here / merged)
        run_n = merged
    rstd = 1 / tl.sqrt(run_m2 / N + eps)
    tl.store(Mean + row, run_mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        ok = cols < N
        w = tl.load(W + cols, mask=ok)
        b = tl.load(B + cols, mask=ok)
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32)
        y = (x - run_mean) * rstd * w + b
        tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=ok)


@triton.jit
def _hstu_ln_mul_dropout_fwd_kernel(
    X,  # [rows, D]
    U,  # [rows, D]
    Y,  # [rows, D]
    W,
    B,
    Mean,
    Rstd,
    D,
    eps,
    dropout_ratio,
    stride_x,
    stride_u,
    stride_y,
    seed,
    TRAINING: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # y = dropout(u * layer_norm(x)); the keep mask is drawn per (row, column)
    # from one seed, so the backward can draw it again
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    ok = cols < D
    x = tl.load(X + row * stride_x + cols, mask=ok, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / D
    xc = tl.where(ok, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / D
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=ok).to(tl.float32)
    b = tl.load(B + cols, mask=ok).to(tl.float32)
    u = tl.load(U + row * stride_u + cols, mask=ok, other=0.0).to(tl.float32)
    y = (xc * rstd * w + b) * u
    if TRAINING:
        rnd = tl.rand(seed, row * D + cols)
        y = tl.where(rnd > dropout_ratio, y / (1.0 - dropout_ratio), 0.0)
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=ok)


# ---- cut cross-entropy -----------------------------------------------------------------------


@triton.jit
def _cce_softcap(v, cap):
    return libdevice.tanh(v / cap) * cap


@triton.heuristics(
    {
        "HAS_VALIDS": lambda args: args["Valids"] is not None,
        "HAS_SOFTCAP": lambda args: args["softcap"] is not None,
        "EVEN_D": lambda args: args["D"] % args["BLOCK_D"] == 0,
    }
)
@triton.jit
def _cce_lse_forward_kernel(
    E,  # [BT, D]
    C,  # [V, D]
    LSE,  # [B] starts at -inf
    Locks,  # one int32 per row block
    Valids,  # [B] rows of E taken, or None
    softcap,
    B,
    V,
    D,
    stride_eb,
    stride_ed,
    stride_cv,
    stride_cd,
    stride_lse,
    stride_vb,
    BLOCK_B: tl.constexpr,
    BLOCK_V: tl.constexpr,
    BLOCK_D: tl.constexpr,
    GROUP_B: tl.constexpr,
    HAS_VALIDS: tl.constexpr,
    HAS_SOFTCAP: tl.constexpr,
    EVEN_D: tl.constexpr,
):
    # one (row block, vocab block) of the logits per program; its row-wise
    # log-sum-exp is folded into LSE under the row block's lock
    pid = tl.program_id(axis=0)
    n_b_blocks = tl.cdiv(B, BLOCK_B)
    n_v_blocks = tl.cdiv(V, BLOCK_V)
    per_group = GROUP_B * n_v_blocks
    group = pid // per_group
    first_b = group * GROUP_B
    group_rows = min(n_b_blocks - first_b, GROUP_B)
    pid_b = first_b + ((pid % per_group) % group_rows)
    pid_v = (pid % per_group) // group_rows

    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    if HAS_VALIDS:
        e_rows = tl.load(Valids + stride_vb * offs_b, mask=offs_b < B, other=0).to(tl.int64)
    else:
        e_rows = offs_b.to(tl.int64)
    offs_v = pid_v * BLOCK_V + tl.arange(0, BLOCK_V)
    offs_d = tl.arange(0, BLOCK_D)
    e_ptrs = E + e_rows[:, None] * stride_eb + offs_d[None, :] * stride_ed
    c_ptrs = C + offs_v[None, :] * stride_cv + offs_d[:, None] * stride_cd

    logits = tl.zeros((BLOCK_B, BLOCK_V), dtype=tl.float32)
    for d in range(0, tl.cdiv(D, BLOCK_D)):
        if EVEN_D:
            e = tl.load(e_ptrs, mask=(offs_b < B)[:, None], other=0.0)
            c = tl.load(c_ptrs, mask=(offs_v < V)[None, :], other=0.0)
        else:
            left = D - d * BLOCK_D
            e = tl.load(e_ptrs, mask=(offs_b < B)[:, None] & (offs_d[None, :] < left), other=0.0)
            c = tl.load(c_ptrs, mask=(offs_v < V)[None, :] & (offs_d[:, None] < left), other=0.0)
        logits = tl.dot(e, c, logits)
        e_ptrs += BLOCK_D * stride_ed
        c_ptrs += BLOCK_D * stride_cd

    if HAS_SOFTCAP:
        logits = _cce_softcap(logits, softcap)
    logits = tl.where((offs_v < V)[None, :], logits, float("-inf"))
    blk_max = tl.max(logits, axis=1)
    blk_lse = blk_max + tl.log(tl.sum(tl.exp(logits - blk_max[:, None]), axis=1))

    lse_ptrs = LSE + stride_lse * offs_b
    lock = Locks + pid_b
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    prev = tl.load(lse_ptrs, mask=offs_b < B, other=0.0, eviction_policy="evict_last")
    hi = tl.maximum(prev, blk_lse)
    merged = hi + tl.log(tl.exp(prev - hi) + tl.exp(blk_lse - hi))
    tl.store(lse_ptrs, merged, mask=offs_b < B)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def _cce_logits_block(E, C, offs_b, offs_v, B, V, D: tl.constexpr, BLOCK_B: tl.constexpr,
                      BLOCK_V: tl.constexpr, BLOCK_D: tl.constexpr):
    """The (rows x vocab) block of E @ C^T, accumulated over D."""
    logits = tl.zeros((BLOCK_B, BLOCK_V), dtype=tl.float32)
    for d0 in tl.range(0, D, BLOCK_D):
        offs_d = d0 + tl.arange(0, BLOCK_D)
        e = tl.load(E + offs_b[:, None] * D + offs_d[None, :], mask=(offs_b < B)[:, None] & (offs_d < D)[None, :],
                    other=0.0)
        ct = tl.load(C + offs_v[None, :] * D + offs_d[:, None], mask=(offs_v < V)[None, :] & (offs_d < D)[:, None],
                     other=0.0)
        logits += tl.dot(e, ct)
    return logits


@triton.jit
def _cce_row_max_kernel(
    E,
    C,
    RowMax,  # [B] starts at -inf
    B,
    V,
    D: tl.constexpr,
    BLOCK_B: tl.constexpr,
    BLOCK_V: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # the lock-free form, first pass: the block's row maxima folded in with
    # atomic_max; a second pass (_cce_sum_exp_kernel) sums the exponentials
    pid_b = tl.program_id(0)
    pid_v = tl.program_id(1)
    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_v = pid_v * BLOCK_V + tl.arange(0, BLOCK_V)
    logits = _cce_logits_block(E, C, offs_b, offs_v, B, V, D, BLOCK_B, BLOCK_V, BLOCK_D)
    logits = tl.where((offs_v < V)[None, :], logits, float("-inf"))
    tl.atomic_max(RowMax + offs_b, tl.max(logits, axis=1), mask=offs_b < B)


@triton.jit
def _cce_sum_exp_kernel(
    E,
    C,
    RowMax,
    SumExp,  # [B] starts at 0
    B,
    V,
    D: tl.constexpr,
    BLOCK_B: tl.constexpr,
    BLOCK_V: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_v = tl.program_id(1)
    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_v = pid_v * BLOCK_V + tl.arange(0, BLOCK_V)
    logits = _cce_logits_block(E, C, offs_b, offs_v, B, V, D, BLOCK_B, BLOCK_V, BLOCK_D)
    m = tl.load(RowMax + offs_b, mask=offs_b < B, other=0.0)
    p = tl.where((offs_v < V)[None, :], tl.exp(logits - m[:, None]), 0.0)
    tl.atomic_add(SumExp + offs_b, tl.sum(p, axis=1), mask=offs_b < B)


@triton.heuristics(
    {
        "HAS_VALIDS": lambda args: args["Valids"] is not None,
        "HAS_SOFTCAP": lambda args: args["softcap"] is not None,
    }
)
@triton.jit
def _cce_indexed_neg_dot_kernel(
    E,
    C,
    Targets,  # [BT] class of each row of E
    Valids,
    Out,  # [B]
    softcap,
    B,
    D,
    stride_eb,
    stride_cv,
    BLOCK_B: tl.constexpr,
    BLOCK_D: tl.constexpr,
    HAS_VALIDS: tl.constexpr,
    HAS_SOFTCAP: tl.constexpr,
):
    # out[i] = -(E[r] . C[target[r]]) for r = valids[i] (or i): the target
    # logit, negated so that loss = lse + out
    pid = tl.program_id(0)
    offs_b = pid * BLOCK_B + tl.arange(0, BLOCK_B)
    live = offs_b < B
    if HAS_VALIDS:
        rows = tl.load(Valids + offs_b, mask=live, other=0).to(tl.int64)
    else:
        rows = offs_b.to(tl.int64)
    cls = tl.load(Targets + rows, mask=live, other=0).to(tl.int64)
    dot = tl.zeros((BLOCK_B,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        offs_d = d0 + tl.arange(0, BLOCK_D)
        ok = live[:, None] & (offs_d[None, :] < D)
        e = tl.load(E + rows[:, None] * stride_eb + offs_d[None, :], mask=ok, other=0.0)
        c = tl.load(C + cls[:, None] * stride_cv + offs_d[None, :], mask=ok, other=0.0)
        dot += tl.sum(e.to(tl.float32) * c.to(tl.float32), axis=1)
    if HAS_SOFTCAP:
        dot = _cce_softcap(dot, softcap)
    tl.store(Out + offs_b, -dot, mask=live)


@triton.heuristics(
    {
        "HAS_VALIDS": lambda args: args["Valids"] is not None,
        "HAS_SOFTCAP": lambda args: args["softcap"] is not None,
        "GRAD_IS_SCALAR": lambda args: args["grad_stride"] == 0,
    }
)
@triton.jit
def _cce_backward_kernel(
    E,
    C,
    LSE,  # [B]
    dOut,  # [B] or one value (grad_stride == 0)
    grad_scale,
    Valids,
    Targets,
    softcap,
    dE,  # fp32 [BT, D], accumulated
    dC,  # fp32 [V, D], accumulated
    B,
    V,
    D,
    grad_stride,
    filter_eps,
    BLOCK_B: tl.constexpr,
    BLOCK_V: tl.constexpr,
    BLOCK_D: tl.constexpr,
    HAS_VALIDS: tl.constexpr,
    HAS_SOFTCAP: tl.constexpr,
    GRAD_IS_SCALAR: tl.constexpr,
    FILTER_GRAD: tl.constexpr,
):
    # the logit block is recomputed, turned into d(loss)/d(logits), and pushed
    # into dE and dC with atomics; blocks whose gradient is all below
    # filter_eps are skipped
    pid_b = tl.program_id(0)
    pid_v = tl.program_id(1)
    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_v = pid_v * BLOCK_V + tl.arange(0, BLOCK_V)
    offs_d = tl.arange(0, BLOCK_D)
    b_ok = offs_b < B
    v_ok = offs_v < V
    if HAS_VALIDS:
        rows = tl.load(Valids + offs_b, mask=b_ok, other=0).to(tl.int64)
    else:
        rows = offs_b.to(tl.int64)

    logits = tl.zeros((BLOCK_B, BLOCK_V), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        dd = d0 + offs_d
        e = tl.load(E + rows[:, None] * D + dd[None, :], mask=b_ok[:, None] & (dd < D)[None, :], other=0.0)
        ct = tl.load(C + offs_v[None, :] * D + dd[:, None], mask=v_ok[None, :] & (dd < D)[:, None], other=0.0)
        logits = tl.dot(e, ct, logits)
    if HAS_SOFTCAP:
        capped = _cce_softcap(logits, softcap)
    else:
        capped = logits

    lse = tl.load(LSE + offs_b, mask=b_ok, other=float("inf"))
    probs = tl.exp(capped - lse[:, None])
    probs = tl.where(v_ok[None, :], probs, 0.0)
    tgt = tl.load(Targets + rows, mask=b_ok, other=-1)
    grad = probs - (offs_v[None, :] == tgt[:, None]).to(tl.float32)

    if FILTER_GRAD:
        if tl.max(tl.abs(grad)) < filter_eps:
            return

    if GRAD_IS_SCALAR:
        g = tl.load(dOut)
        grad = grad * (g * grad_scale)
    else:
        g = tl.load(dOut + offs_b * grad_stride, mask=b_ok, other=0.0)
        grad = grad * (g * grad_scale)[:, None]
    if HAS_SOFTCAP:
        t = capped / softcap
        grad = grad * (1.0 - t * t)
    grad_lo = grad.to(E.dtype.element_ty)

    for d0 in range(0, D, BLOCK_D):
        dd = d0 + offs_d
        d_ok = dd < D
        c = tl.load(C + offs_v[:, None] * D + dd[None, :], mask=v_ok[:, None] & d_ok[None, :], other=0.0)
        tl.atomic_add(dE + rows[:, None] * D + dd[None, :], tl.dot(grad_lo, c), mask=b_ok[:, None] & d_ok[None, :],
                      sem="relaxed")
        e = tl.load(E + rows[:, None] * D + dd[None, :], mask=b_ok[:, None] & d_ok[None, :], other=0.0)
        tl.atomic_add(dC + offs_v[:, None] * D + dd[None, :], tl.dot(tl.trans(grad_lo), e),
                      mask=v_ok[:, None] & d_ok[None, :], sem="relaxed")


# ---- MoE grouped GEMM ------------------------------------------------------------------------


@triton.jit
def _mg_grouped_gemm_fwd_kernel(
    x_ptr,  # [M_total, K], rows grouped by expert
    w_ptr,  # [G, N, K]
    y_ptr,  # [M_total, N]
    m_sizes,  # [G] rows per expert
    G: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    NUM_SMS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    USE_TMA: tl.constexpr = False,
):
    # persistent: the (expert, tile) pairs are numbered one expert after
    # another; program p takes pairs p, p + NUM_SMS, ...; the experts' row
    # offsets are the running sum of m_sizes. With USE_TMA each expert gets
    # device-side descriptors over its own rows, whose bounds clip the last
    # row tile (and the K tail) instead of masks
    tile = tl.program_id(0)
    n_tiles_n: tl.constexpr = (N + BLOCK_N - 1) // BLOCK_N
    seen_tiles = 0
    row_base = 0
    for g in range(G):
        rows_g = tl.load(m_sizes + g)
        tiles_g = tl.cdiv(rows_g, BLOCK_M) * n_tiles_n
        if rows_g > 0:
            if USE_TMA:
                x_desc = tl.make_tensor_descriptor(x_ptr + row_base * K, shape=[rows_g, K], strides=[K, 1],
                                                   block_shape=[BLOCK_M, BLOCK_K])
                w_desc = tl.make_tensor_descriptor(w_ptr + g * N * K, shape=[N, K], strides=[K, 1],
                                                   block_shape=[BLOCK_N, BLOCK_K])
                y_desc = tl.make_tensor_descriptor(y_ptr + row_base * N, shape=[rows_g, N], strides=[N, 1],
                                                   block_shape=[BLOCK_M, BLOCK_N])
            while tile - seen_tiles < tiles_g:
                local = tile - seen_tiles
                tm = local // n_tiles_n
                tn = local % n_tiles_n
                acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                if USE_TMA:
                    for k0 in range(0, K, BLOCK_K):
                        a = x_desc.load([tm * BLOCK_M, k0])
                        b = w_desc.load([tn * BLOCK_N, k0])
                        acc += tl.dot(a, b.T)
                    y_desc.store([tm * BLOCK_M, tn * BLOCK_N], acc.to(y_ptr.dtype.element_ty))
                else:
                    offs_m = tm * BLOCK_M + tl.arange(0, BLOCK_M)
                    offs_n = tn * BLOCK_N + tl.arange(0, BLOCK_N)
                    m_ok = offs_m < rows_g
                    n_ok = offs_n < N
                    x_rows = x_ptr + (row_base + offs_m)[:, None].to(tl.int64) * K
                    w_rows = w_ptr + g * N * K + offs_n[None, :] * K
                    for k0 in range(0, K, BLOCK_K):
                        offs_k = k0 + tl.arange(0, BLOCK_K)
                        k_ok = offs_k < K
                        a = tl.load(x_rows + offs_k[None, :], mask=m_ok[:, None] & k_ok[None, :], other=0.0)
                        b = tl.load(w_rows + offs_k[:, None], mask=n_ok[None, :] & k_ok[:, None], other=0.0)
                        acc += tl.dot(a, b)
                    dst = y_ptr + (row_base + offs_m)[:, None].to(tl.int64) * N + offs_n[None, :]
                    tl.store(dst, acc.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])
                tile += NUM_SMS
        seen_tiles += tiles_g
        row_base += rows_g


@triton.jit
def _mg_grouped_gemm_dw_kernel(
    x_ptr,  # [M_total, K]
    dy_ptr,  # [M_total, N]
    dw_ptr,  # [G, N, K]
    m_sizes,
    G,
    N: tl.constexpr,
    K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # dW[g] = dY_g^T @ X_g: the reduction runs over the expert's own rows,
    # the last chunk masked at the expert's end; an expert with no rows gets
    # zeros. grid (G, N tiles * K tiles)
    g = tl.program_id(0)
    pid = tl.program_id(1)
    n_tiles_k = tl.cdiv(K, BLOCK_K)
    tn = pid // n_tiles_k
    tk = pid % n_tiles_k
    row_base = 0
    for h in range(0, g):
        row_base += tl.load(m_sizes + h)
    rows_g = tl.load(m_sizes + g)
    offs_n = tn * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tk * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for m0 in range(0, rows_g, BLOCK_M):
        offs_m = m0 + tl.arange(0, BLOCK_M)
        m_ok = offs_m < rows_g
        dyt = tl.load(dy_ptr + (row_base + offs_m)[None, :] * N + offs_n[:, None],
                      mask=m_ok[None, :] & (offs_n < N)[:, None], other=0.0)
        x = tl.load(x_ptr + (row_base + offs_m)[:, None] * K + offs_k[None, :],
                    mask=m_ok[:, None] & (offs_k < K)[None, :], other=0.0)
        acc += tl.dot(dyt, x)
    dst = dw_ptr + g.to(tl.int64) * N * K + offs_n[:, None] * K + offs_k[None, :]
    tl.store(dst, acc.to(dw_ptr.dtype.element_ty), mask=(offs_n < N)[:, None] & (offs_k < K)[None, :])
