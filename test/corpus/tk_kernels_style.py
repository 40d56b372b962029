# Mixture-of-experts and linear-attention building blocks written in the
# manner of OpenAI's triton_kernels package and of flash-linear-attention.
#
# MoE side: the SwiGLU epilogue over interleaved gate/linear columns
# (clamped by an optional limit, written as fp16 with a flexpoint scale
# whose absolute maximum is published by an atomic max, or as bf16); the
# router's top-k over order-preserving packed keys with a softmax of the
# chosen logits and a bit-packed row mask of the chosen experts; the expert
# histogram and per-row popcount read back from such a bitmatrix; the
# masked compaction of routed (value, index) pairs against a bitmask of
# live experts; the expert offsets and packed (block, expert) tile table;
# the stable sort of routed entries by expert (histogram, tuple scan,
# gather of the expert starts); the gathered grouped matmul over the tile
# table (routing data and weight strides passed as tuples, optional bias,
# gammas); a persistent, group-swizzled fp16 x fp8 or fp8 x fp8 matmul with
# per-column weight scales writing saturated fp8 or fp16; the mxfp4 weight
# upcast (e2m1 nibbles and e8m0 scales decoded with bitcasts, to bf16 or
# fp32) and its inverse (power-of-two scales found on the fp32 bits,
# rounding by thresholds, pairs split and packed, scales optionally stored
# tile by tile in a permuted order); the per-row fp8 quantisation whose tile
# comes from a compile-time function (outputs and nested strides passed as
# tuples, the scale output optional); the masked reduction of fp8 e4m3
# expert outputs with a sum/count tuple reduction and a published absolute
# maximum; the gamma-weighted combine of scattered expert rows (e4m3 through
# a bitcast, or fp16 pairs packed in 32-bit words split apart), saturated
# with NaN propagation; and the absolute maximum, first argmax and scale of
# each tensor of a tuple.
#
# Linear-attention side (the chunked delta-rule kernels are in
# tkk_cumsum_norm.py, tkk_tril.py, tkk_wy_chunk.py, tkk_delta_state.py and
# tkk_recurrent.py): whole-sequence sums of packed sequences in one
# segmented scan (segment flags from a histogram of the sequence starts or
# ends); the row L2 norm over 3-D block pointers and descriptors; and the
# gated RMS norm over host-built tensor descriptors.
import triton
import triton.language as tl


# the storage formats of quantised rows
TKK_FP8_FORMATS = ("e4m3", "e5m2")
TKK_ROW_ALIGN = tl.constexpr(16)


@triton.constexpr_function
def _tkk_words(n_bits):
    # 32-bit words needed to hold n_bits
    return (n_bits + 31) // 32


@triton.constexpr_function
def _tkk_next_pow2(n):
    p = 1
    while p < n:
        p *= 2
    return p


@triton.constexpr_function
def _tkk_dtype_of(fmt):
    if fmt == "bf16":
        return tl.bfloat16
    if fmt == "fp16":
        return tl.float16
    return tl.float32


@triton.jit
def _tkk_cdiv(a, b):
    return (a + b - 1) // b


# ---- MoE: activation --------------------------------------------------------------------------


@triton.jit
def _tkk_swiglu(Out, OutActualScale, OutExpectedScale, A, alpha, limit, M, n_cols,
                stride_am, stride_om,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, OUT_FMT: tl.constexpr,
                FLEX_MAX: tl.constexpr):
    tl.static_assert(OUT_FMT == "flex" or OUT_FMT == "bf16", "unknown output format")
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_a = pid_n * 2 * BLOCK_N + tl.arange(0, 2 * BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < n_cols
    a = tl.load(A + offs_m[:, None] * stride_am + offs_a[None, :],
                mask=mask_m[:, None] & (offs_a < 2 * n_cols)[None, :], other=0.0)
    a_glu, a_lin = tl.split(tl.reshape(a, [BLOCK_M, BLOCK_N, 2]))
    a_glu = a_glu.to(tl.float32)
    a_lin = a_lin.to(tl.float32)
    if limit is not None:
        a_glu = tl.minimum(a_glu, limit)
        a_lin = tl.clamp(a_lin, -limit, limit)
    s = a_glu / (1.0 + tl.exp(-alpha * a_glu))
    out = s * (a_lin + 1.0)
    mask = mask_m[:, None] & mask_n[None, :]
    o_ptrs = Out + offs_m[:, None] * stride_om + offs_n[None, :]
    if OUT_FMT == "flex":
        amax = tl.max(tl.max(tl.where(mask, tl.abs(out), 0.0), axis=1), axis=0)
        tl.atomic_max(OutActualScale, amax, sem="relaxed")
        inv = 1.0 / tl.load(OutExpectedScale)
        out = tl.clamp(out * inv, -FLEX_MAX, FLEX_MAX)
        tl.store(o_ptrs, out.to(tl.float16), mask=mask)
    else:
        tl.store(o_ptrs, out.to(_tkk_dtype_of(OUT_FMT)), mask=mask)


# ---- MoE: routing -----------------------------------------------------------------------------


@triton.jit
def _tkk_key_of(x):
    # fp32 -> uint32 whose unsigned order is the float order
    b = x.to(tl.uint32, bitcast=True)
    return tl.where((b & 0x80000000) != 0, ~b, b | 0x80000000)


@triton.jit
def _tkk_value_of(k):
    b = tl.where((k & 0x80000000) != 0, k ^ 0x80000000, ~k)
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _tkk_topk_bitmatrix(Yv, Yi, Bits, X, n_rows, n_expts, stride_xm, stride_ym, stride_bm,
                        BLOCK_M: tl.constexpr, N_EXPTS_PAD: tl.constexpr, N_ACT: tl.constexpr,
                        APPLY_SOFTMAX: tl.constexpr):
    tl.static_assert(N_EXPTS_PAD % 32 == 0, "experts are padded to whole words")
    tl.static_assert(N_ACT <= N_EXPTS_PAD)
    N_WORDS: tl.constexpr = _tkk_words(N_EXPTS_PAD)
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_e = tl.arange(0, N_EXPTS_PAD)
    mask_m = offs_m < n_rows
    x = tl.load(X + offs_m[:, None] * stride_xm + offs_e[None, :],
                mask=mask_m[:, None] & (offs_e < n_expts)[None, :], other=float("-inf"))
    # the value's key above, the complement of the index below: ties go to the lower expert
    packed = (_tkk_key_of(x.to(tl.float32)).to(tl.uint64) << 16) | (0xFFFF - offs_e).to(tl.uint64)
    top = tl.topk(packed, N_ACT, dim=1)
    y_idx = (0xFFFF - (top & 0xFFFF)).to(tl.int32)
    y_val = _tkk_value_of((top >> 16).to(tl.uint32))
    if APPLY_SOFTMAX:
        y_max = tl.max(y_val, axis=1)
        e = tl.math.exp2((y_val - y_max[:, None]) * 1.4426950408889634)
        y_val = e / tl.sum(e, axis=1)[:, None]
    offs_k = tl.arange(0, N_ACT)
    tl.store(Yv + offs_m[:, None] * stride_ym + offs_k[None, :], y_val, mask=mask_m[:, None])
    tl.store(Yi + offs_m[:, None] * stride_ym + offs_k[None, :], y_idx.to(tl.int16), mask=mask_m[:, None])
    # the chosen experts are those whose packed key reaches the smallest chosen
    # key (keys are distinct: the index is part of them); expert e is bit e % 32
    # of word e // 32, so a row's words are its flags viewed 32 at a time, each
    # flag shifted to its bit and the 32 summed
    chosen = (packed >= tl.min(top, axis=1)[:, None]) & (offs_e < n_expts)[None, :]
    lanes = tl.reshape(chosen.to(tl.uint32), [BLOCK_M, N_WORDS, 32])
    words = tl.sum(lanes << tl.arange(0, 32).to(tl.uint32)[None, None, :], axis=2)
    offs_w = tl.arange(0, N_WORDS)
    tl.store(Bits + offs_m[:, None] * stride_bm + offs_w[None, :], words.to(tl.int32, bitcast=True),
             mask=mask_m[:, None])


@triton.jit
def _tkk_popcount(w):
    w = w - ((w >> 1) & 0x55555555)
    w = (w & 0x33333333) + ((w >> 2) & 0x33333333)
    w = (w + (w >> 4)) & 0x0F0F0F0F
    return (w * 0x01010101) >> 24


@triton.jit
def _tkk_bitmatrix_hist(Hist, RowCount, Bits, n_rows, n_expts, stride_bm,
                        BLOCK_M: tl.constexpr, N_WORDS: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_w = tl.arange(0, N_WORDS)
    mask_m = offs_m < n_rows
    w = tl.load(Bits + offs_m[:, None] * stride_bm + offs_w[None, :], mask=mask_m[:, None], other=0)
    w = w.to(tl.uint32, bitcast=True)
    tl.store(RowCount + offs_m, tl.sum(_tkk_popcount(w), axis=1).to(tl.int32), mask=mask_m)
    shifts = tl.arange(0, 32)
    ones = (w[:, :, None] >> shifts[None, None, :]) & 1
    per_expt = tl.reshape(tl.sum(ones.to(tl.int32), axis=0), [N_WORDS * 32])
    offs_e = tl.arange(0, N_WORDS * 32)
    tl.atomic_add(Hist + offs_e, per_expt, mask=(offs_e < n_expts) & (per_expt > 0), sem="relaxed")


@triton.jit
def _tkk_masked_compaction(RetYv, RetYi, Yv, Yi, BitMask, n_rows,
                           N_ACT: tl.constexpr, BLOCK_M: tl.constexpr, CHECK: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, N_ACT)
    mask_m = offs_m < n_rows
    ptrs = offs_m[:, None] * N_ACT + offs_k[None, :]
    yv = tl.load(Yv + ptrs, mask=mask_m[:, None], other=0.0)
    yi = tl.load(Yi + ptrs, mask=mask_m[:, None], other=0)
    if CHECK:
        tl.device_assert(yi >= 0, "negative expert index")
    word = tl.load(BitMask + yi // 32, mask=mask_m[:, None], other=0)
    keep = ((word >> (yi % 32)) & 1).to(tl.int1)
    kept = keep.to(tl.int32)
    n_keep = tl.sum(kept, axis=1)
    dst = tl.where(keep, tl.cumsum(kept, axis=1) - 1, n_keep[:, None] + tl.cumsum(1 - kept, axis=1) - 1)
    out = offs_m[:, None] * N_ACT + dst
    tl.store(RetYi + out, tl.where(keep, yi, -1), mask=mask_m[:, None])
    tl.store(RetYv + out, tl.where(keep, yv, 0.0), mask=mask_m[:, None])


@triton.jit
def _tkk_expt_offsets(TokenStarts, TileStarts, TileInfo, Hist, n_expts, max_tiles,
                      BLOCK_M: tl.constexpr, N_EXPTS_PAD: tl.constexpr, TILE_BLOCK: tl.constexpr):
    offs_e = tl.arange(0, N_EXPTS_PAD)
    mask_e = offs_e < n_expts
    h = tl.load(Hist + offs_e, mask=mask_e, other=0)
    tok_end = tl.cumsum(h, axis=0)
    tiles = _tkk_cdiv(h, BLOCK_M)
    tile_end = tl.cumsum(tiles, axis=0)
    tile_start = tile_end - tiles
    tl.store(TokenStarts + 1 + offs_e, tok_end, mask=mask_e)
    tl.store(TileStarts + 1 + offs_e, tile_end, mask=mask_e)
    tl.store(TokenStarts, 0)
    tl.store(TileStarts, 0)
    tile_end = tl.where(mask_e, tile_end, 0x7FFFFFFF)
    for t0 in tl.range(0, max_tiles, TILE_BLOCK, loop_unroll_factor=2):
        t = t0 + tl.arange(0, TILE_BLOCK)
        expt = tl.sum((tile_end[None, :] <= t[:, None]).to(tl.int32), axis=1)
        first = tl.sum(tl.where(offs_e[None, :] == expt[:, None], tile_start[None, :], 0), axis=1)
        info = tl.where(expt < n_expts, ((t - first) << 16) | expt, -1)
        tl.store(TileInfo + t, info, mask=t < max_tiles)


# ---- MoE: grouped matmul over routed rows ------------------------------------------------------


@triton.jit
def _tkk_gather_matmul(Y, stride_y, X, stride_x, W, W_STRIDES, Bias, stride_b, Gammas, GatherIndx,
                       EXPT_DATA, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       N_ACT: tl.constexpr, X_FMT: tl.constexpr, EVEN_K: tl.constexpr):
    tl.static_assert(len(W_STRIDES) == 3)
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_t = pid // num_pid_n
    pid_n = pid % num_pid_n
    token_starts, tile_info = EXPT_DATA
    info = tl.load(tile_info + pid_t)
    if info == -1:
        return
    expt = info & 0xFFFF
    blk = info >> 16
    start = tl.load(token_starts + expt)
    n_tok = tl.load(token_starts + expt + 1) - start
    offs_m = blk * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < n_tok
    rows = start + offs_m
    src = tl.load(GatherIndx + rows, mask=mask_m, other=0) // N_ACT
    sw_e, sw_k, sw_n = W_STRIDES
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_n = tl.max_contiguous(tl.multiple_of(offs_n % N, BLOCK_N), BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = X + src.to(tl.int64)[:, None] * stride_x + offs_k[None, :]
    w_ptrs = W + expt.to(tl.int64) * sw_e + offs_k[:, None] * sw_k + offs_n[None, :] * sw_n
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            x = tl.load(x_ptrs)
            w = tl.load(w_ptrs)
        else:
            k_left = K - k * BLOCK_K
            x = tl.load(x_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            w = tl.load(w_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(x.to(_tkk_dtype_of(X_FMT)), w.to(_tkk_dtype_of(X_FMT)), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * sw_k
    if Bias is not None:
        acc += tl.load(Bias + expt * stride_b + offs_n).to(tl.float32)[None, :]
    if Gammas is not None:
        acc *= tl.load(Gammas + rows, mask=mask_m, other=0.0)[:, None]
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(Y + rows[:, None] * stride_y + offs_n[None, :], acc.to(Y.dtype.element_ty),
             mask=mask_m[:, None] & (offs_n < N)[None, :])


# ---- MoE: weight formats -----------------------------------------------------------------------


@triton.jit
def _tkk_e2m1_to_bf16(nib):
    # sign, two exponent bits, one mantissa bit -> bf16 bits
    n = nib.to(tl.uint16)
    e = (n >> 1) & 3
    m = n & 1
    mag = tl.where(e == 0, m * 0x3F00, ((e + 126) << 7) | (m << 6))
    return (mag | ((n & 8) << 12)).to(tl.bfloat16, bitcast=True)


@triton.jit
def _tkk_e2m1_to_f32(nib):
    n = nib.to(tl.uint32)
    e = (n >> 1) & 3
    m = n & 1
    mag = tl.where(e == 0, m * 0x3F000000, ((e + 126) << 23) | (m << 22))
    return (mag | ((n & 8) << 28)).to(tl.float32, bitcast=True)


@triton.jit
def _tkk_mxfp4_upcast(Out, W, Scale, M, K, stride_wm, stride_sm, stride_om,
                      BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, OUT_FMT: tl.constexpr):
    tl.static_assert(BLOCK_K % 32 == 0, "whole scale groups")
    GROUPS: tl.constexpr = BLOCK_K // 32
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_p = pid_k * (BLOCK_K // 2) + tl.arange(0, BLOCK_K // 2)
    offs_g = pid_k * GROUPS + tl.arange(0, GROUPS)
    mask_m = offs_m < M
    packed = tl.load(W + offs_m[:, None] * stride_wm + offs_p[None, :],
                     mask=mask_m[:, None] & (offs_p < K // 2)[None, :], other=0)
    s8 = tl.load(Scale + offs_m[:, None] * stride_sm + offs_g[None, :],
                 mask=mask_m[:, None] & (offs_g < K // 32)[None, :], other=127)
    lo = packed & 0xF
    hi = packed >> 4
    if OUT_FMT == "bf16":
        vals = tl.join(_tkk_e2m1_to_bf16(lo), _tkk_e2m1_to_bf16(hi))
        scale = (s8.to(tl.uint16) << 7).to(tl.bfloat16, bitcast=True)
    else:
        vals = tl.join(_tkk_e2m1_to_f32(lo), _tkk_e2m1_to_f32(hi))
        scale = (s8.to(tl.uint32) << 23).to(tl.float32, bitcast=True)
    vals = tl.reshape(vals, [BLOCK_M, GROUPS, 32]) * scale[:, :, None]
    vals = tl.reshape(vals, [BLOCK_M, BLOCK_K])
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    tl.store(Out + offs_m[:, None] * stride_om + offs_k[None, :], vals.to(_tkk_dtype_of(OUT_FMT)),
             mask=mask_m[:, None] & (offs_k < K)[None, :])


@triton.jit
def _tkk_e4m3_to_f32(b):
    # e4m3 bytes placed in fp16 bits are the value times 2**-8, subnormals included
    u = b.to(tl.uint16)
    h = (((u & 0x80) << 8) | ((u & 0x7F) << 7)).to(tl.float16, bitcast=True)
    return h.to(tl.float32) * 256.0


@triton.jit
def _tkk_sum_count(a, na, b, nb):
    return a + b, na + nb


@triton.jit
def _tkk_masked_reduce(Y, Count, YAbsMax, X, XScale, Mask, n_k, M, N, stride_xk, stride_xm,
                       K_PAD: tl.constexpr, BLOCK_N: tl.constexpr, HAS_SCALE: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_k = tl.arange(0, K_PAD)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_k = offs_k < n_k
    mask_n = offs_n < N
    bits = tl.load(Mask + pid_m)
    live = ((bits >> offs_k) & 1) != 0
    raw = tl.load(X + offs_k[:, None] * stride_xk + pid_m * stride_xm + offs_n[None, :],
                  mask=(mask_k & live)[:, None] & mask_n[None, :], other=0)
    x = _tkk_e4m3_to_f32(raw)
    if HAS_SCALE:
        x = x * tl.load(XScale + offs_k, mask=mask_k, other=0.0)[:, None]
    cnt = tl.broadcast_to((mask_k & live).to(tl.int32)[:, None], [K_PAD, BLOCK_N])
    y, n = tl.reduce((x, cnt), 0, _tkk_sum_count)
    tl.store(Y + pid_m * N + offs_n, y, mask=mask_n)
    tl.store(Count + pid_m * N + offs_n, n, mask=mask_n)
    amax = tl.max(tl.where(mask_n, tl.abs(y), 0.0), axis=0)
    tl.atomic_max(YAbsMax, amax.to(tl.int32, bitcast=True), sem="relaxed")


_tkk_int_dtype = triton.constexpr_function(tl.core.get_int_dtype)


@triton.constexpr_function
def _tkk_fmt_max(fmt):
    # largest finite value of a storage format
    if fmt == "e4m3":
        return 448.0
    if fmt == "e5m2":
        return 57344.0
    return 65504.0


@triton.jit
def _tkk_scatter_combine(Y, X, ScatterIndx, Gammas, n_tokens, N, stride_x, stride_y, sat,
                         N_ACT: tl.constexpr, BLOCK_N: tl.constexpr, X_FMT: tl.constexpr):
    # Y[t] = sum over the token's N_ACT routed rows of gamma * X[row], rows found by ScatterIndx
    tl.static_assert(X_FMT == "e4m3" or X_FMT == "fp16x2", "X_FMT")
    t = tl.program_id(0)
    pid_n = tl.program_id(1)
    if X_FMT == "fp16x2":
        offs_w = pid_n * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
        mask_x = offs_w < N // 2
    else:
        offs_x = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        mask_x = offs_x < N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for k in tl.static_range(N_ACT):
        row = tl.load(ScatterIndx + t * N_ACT + k)
        gamma = tl.load(Gammas + t * N_ACT + k)
        if X_FMT == "fp16x2":
            w = tl.load(X + row * stride_x + offs_w, mask=mask_x, other=0)
            u = w.to(_tkk_int_dtype(32, False), bitcast=True)
            lo = (u & 0xFFFF).to(tl.uint16).to(tl.float16, bitcast=True)
            hi = (u >> 16).to(tl.uint16).to(tl.float16, bitcast=True)
            x = tl.reshape(tl.join(lo, hi), [BLOCK_N]).to(tl.float32)
        else:
            raw = tl.load(X + row * stride_x + offs_x, mask=mask_x, other=0)
            x = raw.to(tl.float8e4nv, bitcast=True).to(tl.float32)
        acc += gamma * x
    lim = tl.minimum(sat, _tkk_fmt_max("e4m3"))
    acc = tl.clamp(acc, -lim, lim, propagate_nan=tl.PropagateNan.ALL)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(Y + t * stride_y + offs_n, acc, mask=offs_n < N)


@triton.jit
def _tkk_argmax_combine(a, ia, b, ib):
    take_a = (a > b) | ((a == b) & (ia < ib))
    return tl.where(take_a, a, b), tl.where(take_a, ia, ib)


@triton.jit
def _tkk_multi_absmax(PTRS, NUMELS, Amax, Arg, Scale, BLOCK: tl.constexpr, FMT: tl.constexpr):
    # per tensor of the tuple: absolute maximum, its first index, and the scale to FMT
    tl.static_assert(len(PTRS) == len(NUMELS))
    offs = tl.arange(0, BLOCK)
    for i in tl.static_range(len(PTRS)):
        best = tl.full([BLOCK], 0.0, tl.float32)
        best_i = tl.full([BLOCK], 0x7FFFFFFF, tl.int32)
        n = NUMELS[i]
        for start in tl.range(0, n, BLOCK, loop_unroll_factor=2):
            o = start + offs
            x = tl.abs(tl.load(PTRS[i] + o, mask=o < n, other=0.0).to(tl.float32))
            upd = (x > best) | ((x == best) & (o < best_i) & (o < n))
            best = tl.where(upd, x, best)
            best_i = tl.where(upd, o, best_i)
        m, im = tl.reduce((best, best_i), 0, _tkk_argmax_combine)
        tl.store(Amax + i, m)
        tl.store(Arg + i, im)
        tl.store(Scale + i, m / _tkk_fmt_max(FMT))


@triton.jit
def _tkk_persistent_matmul(Y, YScale, X, W, WScale, M, N, K, stride_xm, stride_wk, stride_ym,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, OUT_FP8: tl.constexpr,
                           X_FP8: tl.constexpr = False):
    # persistent tiles over an fp16 (or e4m3) x e4m3 (per-column scaled) product, fp8 or fp16 out
    tl.assume(stride_xm > 0)
    tl.assume(stride_wk > 0)
    tl.assume(stride_ym > 0)
    tl.assume(M >= 0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = grid_m * grid_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = tl.swizzle2d(tile // grid_n, tile % grid_n, grid_m, grid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rm = tl.max_contiguous(tl.multiple_of(offs_m % M, BLOCK_M), BLOCK_M)
        rn = tl.max_contiguous(tl.multiple_of(offs_n % N, BLOCK_N), BLOCK_N)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for kt in range(k_tiles):
            offs_k = kt * BLOCK_K + tl.arange(0, BLOCK_K)
            x = tl.load(X + rm[:, None] * stride_xm + offs_k[None, :], mask=offs_k[None, :] < K, other=0)
            w8 = tl.load(W + offs_k[:, None] * stride_wk + rn[None, :], mask=offs_k[:, None] < K, other=0)
            if X_FP8:
                acc = tl.dot(x.to(tl.float8e4nv, bitcast=True), w8.to(tl.float8e4nv, bitcast=True), acc)
            else:
                acc = tl.dot(x, w8.to(tl.float8e4nv, bitcast=True).to(tl.float16), acc)
        acc *= tl.load(WScale + rn)[None, :]
        mask = (offs_m < M)[:, None] & (offs_n < N)[None, :]
        y_ptrs = Y + offs_m[:, None] * stride_ym + offs_n[None, :]
        if OUT_FP8:
            y = (acc * (1.0 / tl.load(YScale))).to(tl.float8e4nv)
            tl.store(y_ptrs, y.to(tl.uint8, bitcast=True), mask=mask)
        else:
            tl.store(y_ptrs, acc.to(tl.float16), mask=mask)


@triton.jit
def _tkk_add2(a, na, b, nb):
    return a + b, na + nb


@triton.jit
def _tkk_expert_sort(GatherIndx, ScatterIndx, ExptStarts, ExptActive, ExptIndx, n_entries,
                     N_EXPTS: tl.constexpr, BLOCK: tl.constexpr):
    # stable order of the routed entries by expert: where each entry goes and who lands where
    offs = tl.arange(0, BLOCK)
    valid = offs < n_entries
    e = tl.load(ExptIndx + offs, mask=valid, other=0).to(tl.int32)
    hist = tl.histogram(e, N_EXPTS, mask=valid)
    incl, n_active = tl.associative_scan((hist, (hist > 0).to(tl.int32)), 0, _tkk_add2)
    starts = incl - hist
    offs_e = tl.arange(0, N_EXPTS)
    tl.store(ExptStarts + offs_e, starts)
    tl.store(ExptStarts + N_EXPTS, tl.sum(hist, axis=0))
    tl.store(ExptActive, tl.max(n_active, axis=0))
    same = (e[:, None] == e[None, :]) & (offs[None, :] < offs[:, None]) & valid[None, :]
    rank = tl.sum(same.to(tl.int32), axis=1)
    dst = tl.gather(starts, tl.where(valid, e, 0), 0) + rank
    tl.store(ScatterIndx + offs, dst, mask=valid)
    tl.store(GatherIndx + dst, offs, mask=valid)


@triton.constexpr_function
def _tkk_row_tile(n_cols):
    # (rows, columns) of a tile covering whole rows
    cols = max(16, _tkk_next_pow2(n_cols))
    return max(1, 2048 // cols), cols


@triton.constexpr_function
def _tkk_is_fp8(fmt):
    return fmt in TKK_FP8_FORMATS


@triton.constexpr_function
def _tkk_fp8_dtype(fmt):
    return tl.float8e4nv if fmt == "e4m3" else tl.float8e5


@triton.jit
def _tkk_quant_rows(X, OUTS, STRIDES, M, N_COLS: tl.constexpr, OUT_FMT: tl.constexpr):
    # each row scaled so that its absolute maximum lands on the format's largest value
    TILE: tl.constexpr = _tkk_row_tile(N_COLS)
    BM: tl.constexpr = TILE[0]
    BN: tl.constexpr = TILE[1]
    tl.static_assert(BN % TKK_ROW_ALIGN == 0, f"tile of {BN} columns is not {TKK_ROW_ALIGN}-aligned")
    tl.static_assert(_tkk_is_fp8(OUT_FMT), "not an fp8 format")
    FMAX: tl.constexpr = _tkk_fmt_max(OUT_FMT)
    Q, Scale = OUTS
    strides_x, stride_qm = STRIDES
    stride_xm, stride_xn = strides_x
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    mask = (offs_m < M)[:, None] & (offs_n < N_COLS)[None, :]
    x = tl.load(X + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask, other=0.0)
    x = x.to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    amax = tl.where(amax == 0, 1.0, amax)
    q = (x * (FMAX / amax)[:, None]).to(_tkk_fp8_dtype(OUT_FMT))
    tl.store(Q + offs_m[:, None] * stride_qm + offs_n[None, :], q.to(tl.uint8, bitcast=True), mask=mask)
    if Scale is not None:
        tl.store(Scale + offs_m, amax / FMAX, mask=offs_m < M)


@triton.jit
def _tkk_f32_to_e2m1(v):
    # magnitude thresholds of round-to-nearest-even onto 0, .5, 1, 1.5, 2, 3, 4, 6
    a = tl.abs(v)
    code = ((a > 0.25).to(tl.uint8) + (a >= 0.75).to(tl.uint8) + (a > 1.25).to(tl.uint8)
            + (a >= 1.75).to(tl.uint8) + (a > 2.5).to(tl.uint8) + (a >= 3.5).to(tl.uint8)
            + (a > 5.0).to(tl.uint8))
    return tl.where(v < 0, code | 8, code)


@triton.jit
def _tkk_downcast_mxfp4(Out, OutScale, X, M, K, stride_xm, stride_om,
                        BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, SWIZZLE_SCALES: tl.constexpr):
    # fp32 rows to packed e2m1 pairs with one power-of-two (e8m0) scale per 32 values
    GROUPS: tl.constexpr = BLOCK_K // 32
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    x = tl.load(X + offs_m[:, None] * stride_xm + offs_k[None, :],
                mask=mask_m[:, None] & (offs_k < K)[None, :], other=0.0)
    xg = x.reshape([BLOCK_M, GROUPS, 32])
    amax = tl.max(tl.abs(xg), axis=2)
    # the scale is amax / 6 rounded up to a power of two
    e = ((amax / 6.0).to(tl.uint32, bitcast=True) + 0x7FFFFF) & 0x7F800000
    quant = ((0x7F000000 - e) & 0x7F800000).to(tl.float32, bitcast=True)
    q = _tkk_f32_to_e2m1(xg * quant[:, :, None]).reshape([BLOCK_M, BLOCK_K // 2, 2])
    lo, hi = q.split()
    packed = lo | (hi << 4)
    offs_p = pid_k * (BLOCK_K // 2) + tl.arange(0, BLOCK_K // 2)
    tl.store(Out + offs_m[:, None] * stride_om + offs_p[None, :], packed,
             mask=mask_m[:, None] & (offs_p < K // 2)[None, :])
    s8 = (e >> 23).to(tl.uint8)
    if SWIZZLE_SCALES:
        # tile-major scales: (row blocks of 8, groups, rows in block) order
        tile = pid_m * tl.cdiv(K, BLOCK_K) + pid_k
        sw = s8.reshape([BLOCK_M // 8, 8, GROUPS]).permute(0, 2, 1).reshape([BLOCK_M * GROUPS])
        tl.store(OutScale + tile * BLOCK_M * GROUPS + tl.arange(0, BLOCK_M * GROUPS), sw)
    else:
        offs_g = pid_k * GROUPS + tl.arange(0, GROUPS)
        tl.store(OutScale + offs_m[:, None] * (K // 32) + offs_g[None, :], s8,
                 mask=mask_m[:, None] & (offs_g < K // 32)[None, :])


# ---- linear attention: chunk-local cumulative sums ---------------------------------------------


@triton.jit
def _tkk_seg_add(a, fa, b, fb):
    # segmented sum: a flagged element starts a new segment
    return tl.where(fb != 0, b, a + b), fa | fb


@triton.jit
def _tkk_packed_cumsum(s, o, cu_seqlens, n_seqs, T_total, H: tl.constexpr, BLOCK: tl.constexpr,
                       REVERSE: tl.constexpr):
    # cumulative sums within each packed sequence of one block of tokens, in one scan
    o_t = tl.arange(0, BLOCK)
    o_h = tl.arange(0, H)
    o_n = tl.arange(0, BLOCK)
    m_n = o_n < n_seqs
    if REVERSE:
        edge = tl.load(cu_seqlens + 1 + o_n, mask=m_n, other=0) - 1
    else:
        edge = tl.load(cu_seqlens + o_n, mask=m_n, other=0)
    flag = (tl.histogram(edge.to(tl.int32), BLOCK, mask=m_n) > 0).to(tl.int32)
    m_t = o_t < T_total
    b_s = tl.load(s + o_t[:, None] * H + o_h[None, :], mask=m_t[:, None], other=0.0).to(tl.float32)
    b_f = tl.broadcast_to(flag[:, None], [BLOCK, H])
    b_o, _ = tl.associative_scan((b_s, b_f), 0, _tkk_seg_add, reverse=REVERSE)
    tl.store(o + o_t[:, None] * H + o_h[None, :], b_o.to(o.dtype.element_ty), mask=m_t[:, None])


# ---- linear attention: normalisation and triangular solves -------------------------------------


@triton.jit
def _tkk_rstd(b_x, eps, axis: tl.constexpr = 1, SQUARE_SUM: tl.constexpr = True):
    if SQUARE_SUM:
        return 1 / tl.sqrt(tl.sum(b_x * b_x, axis) + eps)
    return 1 / tl.sqrt(tl.sum(tl.abs(b_x), axis) + eps)


@triton.jit
def _tkk_l2norm_3d(x, y, rstd, eps, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr):
    # batched rows read through a 3-D block pointer and written through a 3-D descriptor
    i_t, i_b = tl.program_id(axis=0), tl.program_id(axis=1)
    B = tl.num_programs(1)
    p_x = tl.make_block_ptr(x, (B, T, D), (T * D, D, 1), (i_b, i_t * BT, 0), (1, BT, BD), (2, 1, 0))
    b_x = tl.reshape(tl.load(p_x, boundary_check=(1, 2), padding_option="zero"), [BT, BD]).to(tl.float32)
    b_r = _tkk_rstd(b_x, eps=eps, SQUARE_SUM=True)
    desc_y = tl.make_tensor_descriptor(y, shape=[B, T, D], strides=[T * D, D, 1], block_shape=[1, BT, BD])
    desc_y.store([i_b, i_t * BT, 0], (b_x * b_r[:, None]).reshape([1, BT, BD]).to(desc_y.dtype))
    o_t = i_t * BT + tl.arange(0, BT)
    tl.store(rstd + i_b * T + o_t, b_r, mask=o_t < T)


@triton.jit
def _tkk_rms_norm_gated_desc(x_desc, z_desc, y_desc, w, eps, T, D: tl.constexpr, BT: tl.constexpr,
                             ACTIVATION: tl.constexpr):
    # y = rms_norm(x) * w * act(z), tiles read and written through host-built descriptors
    tl.static_assert(ACTIVATION == "swish" or ACTIVATION == "sigmoid")
    i_t = tl.program_id(0)
    b_x = x_desc.load([i_t * BT, 0]).to(tl.float32)
    b_z = z_desc.load([i_t * BT, 0]).to(tl.float32)
    b_w = tl.load(w + tl.arange(0, D), eviction_policy="evict_last").to(tl.float32)
    b_rstd = tl.math.rsqrt(tl.sum(b_x * b_x, axis=1) / D + eps)
    b_y = b_x * b_rstd[:, None] * b_w[None, :]
    if ACTIVATION == "swish":
        b_y = b_y * b_z * tl.sigmoid(b_z)
    else:
        b_y = b_y * tl.sigmoid(b_z)
    y_desc.store([i_t * BT, 0], b_y.to(y_desc.dtype))
