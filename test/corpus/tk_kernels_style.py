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
# Linear-attention side: chunk-local cumulative sums of scalar and vector
# gates (forward and reverse, optional scale, packed sequences through
# cu_seqlens/chunk_indices, head-first layout); whole-sequence sums of
# packed sequences in one segmented scan (segment flags from a histogram of
# the sequence starts or ends); the row L2 norm over 2-D block pointers and
# over 3-D block pointers and descriptors; the gated RMS norm over
# host-built tensor descriptors; the inverse of unit lower-triangular 16x16
# blocks by forward substitution and of 32x32 chunks merged from two such
# inverses (the dots' input precision a compile-time string); the WY
# recomputation of w and u; the beta-scaled gated K K^T of a chunk through
# tensor descriptors; the chunk output from per-chunk states and the gated
# causal q K^T (keys read transposed through column-major block pointers);
# the chunk-by-chunk state recurrence of the gated delta rule (state kept in
# 16-row slices, new values saved) and the reverse recurrence of its state
# gradient (block pointers stepped backwards, the initial-state gradient
# written through a transposed view); and the fused recurrent gated delta
# rule with grouped value heads, optional initial and final states and
# in-kernel q/k L2 normalisation.
import os

import triton
import triton.language as tl
from triton.language.extra import libdevice as tldevice

# the gate math is chosen once at import time
if os.environ.get("TKK_FAST_EXP", "0") == "1":
    exp = tldevice.fast_expf
    exp2 = tldevice.exp2
else:
    exp = tl.exp
    exp2 = tl.math.exp2

_TRITON_MINOR = tuple(int(p) for p in triton.__version__.split(".")[:2])
autotune_cache_kwargs = {"cache_results": True} if _TRITON_MINOR >= (3, 4) else {}


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
    s = a_glu / (1.0 + exp(-alpha * a_glu))
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
        e = exp2((y_val - y_max[:, None]) * 1.4426950408889634)
        y_val = e / tl.sum(e, axis=1)[:, None]
    offs_k = tl.arange(0, N_ACT)
    tl.store(Yv + offs_m[:, None] * stride_ym + offs_k[None, :], y_val, mask=mask_m[:, None])
    tl.store(Yi + offs_m[:, None] * stride_ym + offs_k[None, :], y_idx.to(tl.int16), mask=mask_m[:, None])
    # one bit per chosen expert, N_WORDS words per row
    word = y_idx // 32
    bit = tl.full([BLOCK_M, N_ACT], 1, tl.uint32) << (y_idx % 32).to(tl.uint32)
    offs_w = tl.arange(0, N_WORDS)
    hits = tl.where(word[:, :, None] == offs_w[None, None, :], bit[:, :, None], 0)
    words = tl.reduce_or(hits, axis=1)
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


@triton.heuristics({"HAS_SCALE": lambda args: args["scale"] is not None,
                    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in [1, 2, 4, 8]],
                 key=["B", "H", "BT", "IS_VARLEN", "REVERSE"], **autotune_cache_kwargs)
@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_local_cumsum_scalar(s, o, scale, cu_seqlens, chunk_indices, T,
                                   B: tl.constexpr, H: tl.constexpr, BT: tl.constexpr,
                                   REVERSE: tl.constexpr, HAS_SCALE: tl.constexpr,
                                   IS_VARLEN: tl.constexpr, HEAD_FIRST: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    if HEAD_FIRST:
        p_s = tl.make_block_ptr(s + bos * H + i_h * T, (T,), (1,), (i_t * BT,), (BT,), (0,))
        p_o = tl.make_block_ptr(o + bos * H + i_h * T, (T,), (1,), (i_t * BT,), (BT,), (0,))
    else:
        p_s = tl.make_block_ptr(s + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
        p_o = tl.make_block_ptr(o + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
    b_s = tl.load(p_s, boundary_check=(0,)).to(tl.float32)
    b_o = tl.cumsum(b_s, axis=0, reverse=REVERSE)
    if HAS_SCALE:
        b_o *= scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0,))


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.autotune(configs=[triton.Config({"BS": bs}, num_warps=w) for bs in [16, 32] for w in [2, 4]],
                 key=["S", "BT"], **autotune_cache_kwargs)
@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_local_cumsum_vector(s, o, cu_seqlens, chunk_indices, T,
                                   H: tl.constexpr, S: tl.constexpr, BT: tl.constexpr,
                                   BS: tl.constexpr, REVERSE: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_s, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    o_i = tl.arange(0, BT)
    if REVERSE:
        m_s = tl.where(o_i[:, None] <= o_i[None, :], 1.0, 0.0)
    else:
        m_s = tl.where(o_i[:, None] >= o_i[None, :], 1.0, 0.0)
    p_s = tl.make_block_ptr(s + (bos * H + i_h) * S, (T, S), (H * S, 1), (i_t * BT, i_s * BS), (BT, BS), (1, 0))
    p_o = tl.make_block_ptr(o + (bos * H + i_h) * S, (T, S), (H * S, 1), (i_t * BT, i_s * BS), (BT, BS), (1, 0))
    b_s = tl.load(p_s, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    b_o = tl.dot(m_s, b_s, input_precision="ieee")
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


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


@triton.autotune(configs=[triton.Config({"BT": bt}, num_warps=w) for bt in [8, 16] for w in [1, 2]],
                 key=["D"], **autotune_cache_kwargs)
@triton.jit
def _tkk_l2norm_fwd(x, y, rstd, eps, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr,
                    CHECK: tl.constexpr):
    i_t = tl.program_id(0)
    p_x = tl.make_block_ptr(x, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
    b_x = tl.load(p_x, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    b_rstd = 1 / tl.sqrt(tl.sum(b_x * b_x, 1) + eps)
    if CHECK:
        tl.device_assert(b_rstd > 0, "l2norm: non-positive rstd")
    b_y = b_x * b_rstd[:, None]
    p_y = tl.make_block_ptr(y, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
    tl.store(p_y, b_y.to(p_y.dtype.element_ty), boundary_check=(0, 1))
    p_r = tl.make_block_ptr(rstd, (T,), (1,), (i_t * BT,), (BT,), (0,))
    tl.store(p_r, b_rstd.to(p_r.dtype.element_ty), boundary_check=(0,))


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


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_solve_tril_16(A, Ai, cu_seqlens, chunk_indices, T, H: tl.constexpr, BT: tl.constexpr,
                       IS_VARLEN: tl.constexpr):
    tl.static_assert(BT % 16 == 0)
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    o_i = tl.arange(0, 16)
    col = (i_t * 16) % BT
    A = A + (bos * H + i_h) * BT
    Ai = Ai + (bos * H + i_h) * 16
    p_A = tl.make_block_ptr(A, (T, BT), (H * BT, 1), (i_t * 16, col), (16, 16), (1, 0))
    b_A = tl.load(p_A, boundary_check=(0, 1)).to(tl.float32)
    b_A = -tl.where(o_i[:, None] > o_i[None, :], b_A, 0)
    for i in range(2, min(16, T - i_t * 16)):
        b_a = -tl.load(A + (i_t * 16 + i) * H * BT + col + o_i)
        b_a = tl.where(o_i < i, b_a, 0.0)
        b_a = b_a + tl.sum(b_a[:, None] * b_A, 0)
        b_A = tl.where((o_i == i)[:, None], b_a, b_A)
    b_A += (o_i[:, None] == o_i[None, :]).to(tl.float32)
    p_Ai = tl.make_block_ptr(Ai, (T, 16), (H * 16, 1), (i_t * 16, 0), (16, 16), (1, 0))
    tl.store(p_Ai, b_A.to(p_Ai.dtype.element_ty), boundary_check=(0, 1))


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_recompute_w_u(k, v, beta, w, u, A, g, cu_seqlens, chunk_indices, T,
                       H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                       BK: tl.constexpr, BV: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    p_beta = tl.make_block_ptr(beta + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
    p_A = tl.make_block_ptr(A + (bos * H + i_h) * BT, (T, BT), (H * BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    b_beta = tl.load(p_beta, boundary_check=(0,))
    b_A = tl.load(p_A, boundary_check=(0, 1))
    for i_v in range(tl.cdiv(V, BV)):
        p_v = tl.make_block_ptr(v + (bos * H + i_h) * V, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_u = tl.make_block_ptr(u + (bos * H + i_h) * V, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        b_v = tl.load(p_v, boundary_check=(0, 1))
        b_vb = (b_v * b_beta[:, None]).to(b_v.dtype)
        b_u = tl.dot(b_A, b_vb, allow_tf32=False)
        tl.store(p_u, b_u.to(p_u.dtype.element_ty), boundary_check=(0, 1))
    if g is not None:
        p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
        b_g = exp(tl.load(p_g, boundary_check=(0,)))
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_w = tl.make_block_ptr(w + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        if g is not None:
            b_kb = b_k * (b_beta * b_g)[:, None]
        else:
            b_kb = b_k * b_beta[:, None]
        b_w = tl.dot(b_A, b_kb.to(b_k.dtype), allow_tf32=False)
        tl.store(p_w, b_w.to(p_w.dtype.element_ty), boundary_check=(0, 1))


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None,
                    "USE_G": lambda args: args["g"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_scaled_dot_kkt(k, g, beta, A, cu_seqlens, chunk_indices, T,
                              H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                              USE_G: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    desc_k = tl.make_tensor_descriptor(k + (bos * H + i_h) * K, shape=[T, K], strides=[H * K, 1],
                                       block_shape=[BT, BK])
    desc_a = tl.make_tensor_descriptor(A + (bos * H + i_h) * BT, shape=[T, BT], strides=[H * BT, 1],
                                       block_shape=[BT, BT])
    p_b = tl.make_block_ptr(beta + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
    b_beta = tl.load(p_b, boundary_check=(0,))
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in tl.range(tl.cdiv(K, BK)):
        b_k = desc_k.load([i_t * BT, i_k * BK])
        b_A += tl.dot(b_k, tl.trans(b_k), input_precision="ieee")
    if USE_G:
        p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,))
        b_A *= exp(b_g[:, None] - b_g[None, :])
    b_A *= b_beta[:, None]
    keep = (o_t[:, None] > o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    b_A = tl.where(keep, b_A, 0.0)
    desc_a.store([i_t * BT, 0], b_A.to(desc_a.dtype))


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_fwd_o(q, k, v, h, g, o, cu_seqlens, chunk_indices, scale, T,
                     H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                     BK: tl.constexpr, BV: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_tg = i_t
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        NT = tl.cdiv(T, BT)
        i_tg = i_b * NT + i_t
        bos, eos = i_b * T, i_b * T + T
    q += (bos * H + i_h) * K
    k += (bos * H + i_h) * K
    v += (bos * H + i_h) * V
    o += (bos * H + i_h) * V
    h += (i_tg * H + i_h).to(tl.int64) * K * V
    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_q = tl.make_block_ptr(q, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_k = tl.make_block_ptr(k, (K, T), (1, H * K), (i_k * BK, i_t * BT), (BK, BT), (0, 1))
        p_h = tl.make_block_ptr(h, (K, V), (V, 1), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        b_q = tl.load(p_q, boundary_check=(0, 1))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_h = tl.load(p_h, boundary_check=(0, 1))
        b_o += tl.dot(b_q, b_h, input_precision="ieee")
        b_A += tl.dot(b_q, b_k, input_precision="ieee")
    if g is not None:
        p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,))
        b_o = b_o * exp(b_g)[:, None]
        b_A = b_A * exp(b_g[:, None] - b_g[None, :])
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    m_A = (o_t[:, None] >= o_t[None, :]) & (m_t[:, None] & m_t)
    b_A = tl.where(m_A, b_A, 0)
    p_v = tl.make_block_ptr(v, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    p_o = tl.make_block_ptr(o, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1))
    b_o = b_o * scale + tl.dot(b_A.to(b_v.dtype), b_v, input_precision="ieee") * scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


@triton.heuristics({"USE_G": lambda args: args["g"] is not None,
                    "USE_INITIAL_STATE": lambda args: args["h0"] is not None,
                    "STORE_FINAL_STATE": lambda args: args["ht"] is not None,
                    "SAVE_NEW_VALUE": lambda args: args["v_new"] is not None,
                    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_gdr_fwd_h(k, v, w, v_new, g, h, h0, ht, cu_seqlens, chunk_offsets, T,
                         H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                         BV: tl.constexpr, DOT_PRECISION: tl.constexpr, USE_G: tl.constexpr,
                         USE_INITIAL_STATE: tl.constexpr, STORE_FINAL_STATE: tl.constexpr,
                         SAVE_NEW_VALUE: tl.constexpr, IS_VARLEN: tl.constexpr):
    # the state is carried in 16-row slices of K (at most two)
    tl.static_assert(K <= 32, "two state slices at most")
    i_v, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // H, i_nh % H
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
        NT = tl.cdiv(T, BT)
        boh = tl.load(chunk_offsets + i_n).to(tl.int32)
    else:
        bos, eos = i_n * T, i_n * T + T
        NT = tl.cdiv(T, BT)
        boh = i_n * NT
    b_h1 = tl.zeros([16, BV], dtype=tl.float32)
    if K > 16:
        b_h2 = tl.zeros([16, BV], dtype=tl.float32)
    h += (boh * H + i_h).to(tl.int64) * K * V
    k += (bos * H + i_h) * K
    w += (bos * H + i_h) * K
    v += (bos * H + i_h) * V
    if SAVE_NEW_VALUE:
        v_new += (bos * H + i_h) * V
    if USE_INITIAL_STATE:
        h0 = h0 + i_nh * K * V
        p_h0 = tl.make_block_ptr(h0, (K, V), (V, 1), (0, i_v * BV), (16, BV), (1, 0))
        b_h1 += tl.load(p_h0, boundary_check=(0, 1)).to(tl.float32)
        if K > 16:
            p_h0 = tl.make_block_ptr(h0, (K, V), (V, 1), (16, i_v * BV), (16, BV), (1, 0))
            b_h2 += tl.load(p_h0, boundary_check=(0, 1)).to(tl.float32)
    for i_t in range(NT):
        p_h1 = tl.make_block_ptr(h + i_t * H * K * V, (K, V), (V, 1), (0, i_v * BV), (16, BV), (1, 0))
        tl.store(p_h1, b_h1.to(p_h1.dtype.element_ty), boundary_check=(0, 1))
        if K > 16:
            p_h2 = tl.make_block_ptr(h + i_t * H * K * V, (K, V), (V, 1), (16, i_v * BV), (16, BV), (1, 0))
            tl.store(p_h2, b_h2.to(p_h2.dtype.element_ty), boundary_check=(0, 1))
        p_w = tl.make_block_ptr(w, (T, K), (H * K, 1), (i_t * BT, 0), (BT, 16), (1, 0))
        b_w = tl.load(p_w, boundary_check=(0, 1))
        b_v = tl.dot(b_w, b_h1.to(b_w.dtype), input_precision=DOT_PRECISION)
        if K > 16:
            p_w = tl.make_block_ptr(w, (T, K), (H * K, 1), (i_t * BT, 16), (BT, 16), (1, 0))
            b_w = tl.load(p_w, boundary_check=(0, 1))
            b_v += tl.dot(b_w, b_h2.to(b_w.dtype), input_precision=DOT_PRECISION)
        p_v = tl.make_block_ptr(v, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        b_v = tl.load(p_v, boundary_check=(0, 1)) - b_v
        if SAVE_NEW_VALUE:
            p_vn = tl.make_block_ptr(v_new, (T, V), (H * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
            tl.store(p_vn, b_v.to(p_vn.dtype.element_ty), boundary_check=(0, 1))
        last_idx = min((i_t + 1) * BT, T) - 1
        if USE_G:
            m_t = (i_t * BT + tl.arange(0, BT)) < T
            b_g_last = tl.load(g + bos * H + last_idx * H + i_h)
            p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
            b_g = tl.load(p_g, boundary_check=(0,))
            b_v = b_v * tl.where(m_t, exp(b_g_last - b_g), 0)[:, None]
            b_g_last = exp(b_g_last)
            b_h1 *= b_g_last
            if K > 16:
                b_h2 *= b_g_last
        b_v = b_v.to(k.dtype.element_ty)
        p_k = tl.make_block_ptr(k, (K, T), (1, H * K), (0, i_t * BT), (16, BT), (0, 1))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_h1 += tl.dot(b_k, b_v, input_precision=DOT_PRECISION)
        if K > 16:
            p_k = tl.make_block_ptr(k, (K, T), (1, H * K), (16, i_t * BT), (16, BT), (0, 1))
            b_k = tl.load(p_k, boundary_check=(0, 1))
            b_h2 += tl.dot(b_k, b_v, input_precision=DOT_PRECISION)
    if STORE_FINAL_STATE:
        p_ht = tl.make_block_ptr(ht + i_nh * K * V, (K, V), (V, 1), (0, i_v * BV), (16, BV), (1, 0))
        tl.store(p_ht, b_h1.to(p_ht.dtype.element_ty), boundary_check=(0, 1))
        if K > 16:
            p_ht = tl.make_block_ptr(ht + i_nh * K * V, (K, V), (V, 1), (16, i_v * BV), (16, BV), (1, 0))
            tl.store(p_ht, b_h2.to(p_ht.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_bwd_dh(q, g, do, dh, dh0, dht, scale, T, H: tl.constexpr, K: tl.constexpr,
                      V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    # reverse recurrence of the state gradient over the chunks of each sequence
    i_k, i_v, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    NT = tl.cdiv(T, BT)
    bos = i_b * T
    b_dh = tl.zeros([BK, BV], dtype=tl.float32)
    if dht is not None:
        p_dht = tl.make_block_ptr(dht + i_bh * K * V, (K, V), (V, 1), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        b_dh += tl.load(p_dht, boundary_check=(0, 1))
    p_do = tl.make_block_ptr(do + (bos * H + i_h) * V, (T, V), (H * V, 1), ((NT - 1) * BT, i_v * BV),
                             (BT, BV), (1, 0))
    p_q = tl.make_block_ptr(q + (bos * H + i_h) * K, (T, K), (H * K, 1), ((NT - 1) * BT, i_k * BK),
                            (BT, BK), (1, 0))
    for i_t in range(NT - 1, -1, -1):
        p_dh = tl.make_block_ptr(dh + ((i_b * NT + i_t) * H + i_h) * K * V, (K, V), (V, 1),
                                 (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        tl.store(p_dh, b_dh.to(p_dh.dtype.element_ty), boundary_check=(0, 1))
        last_idx = min((i_t + 1) * BT, T) - 1
        b_g_last = tl.load(g + (bos + last_idx) * H + i_h)
        o_t = i_t * BT + tl.arange(0, BT)
        b_g = tl.load(g + (bos + o_t) * H + i_h, mask=o_t < T, other=0.0)
        b_q = tl.load(p_q, boundary_check=(0, 1))
        b_q = b_q * (exp(b_g) * scale)[:, None]
        b_do = tl.load(p_do, boundary_check=(0, 1))
        b_dh = b_dh * exp(b_g_last) + tl.dot(b_q.T, b_do, input_precision="ieee")
        p_q = tl.advance(p_q, (-BT, 0))
        p_do = tl.advance(p_do, (-BT, 0))
    if dh0 is not None:
        # written through the transposed view: (V, K) with unit stride along V
        p_dh0 = tl.make_block_ptr(dh0 + i_bh * K * V, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1))
        tl.store(p_dh0, tl.trans(b_dh).to(p_dh0.dtype.element_ty), boundary_check=(0, 1))


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


@triton.jit
def _tkk_inverse_16(A, row_stride, o_i, n_rows):
    # (I + tril(A, -1))^-1 of a 16x16 diagonal block by forward substitution
    b_A = tl.load(A + o_i[:, None] * row_stride + o_i[None, :],
                  mask=(o_i < n_rows)[:, None] & (o_i[:, None] > o_i[None, :]), other=0.0)
    b_A = -b_A
    for i in range(2, min(16, n_rows)):
        b_a = -tl.load(A + i * row_stride + o_i, mask=o_i < i, other=0.0)
        b_a = b_a + tl.sum(b_a[:, None] * b_A, 0)
        b_A = tl.where((o_i == i)[:, None], b_a, b_A)
    return b_A + (o_i[:, None] == o_i[None, :]).to(tl.float32)


@triton.heuristics({"IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_solve_tril_32(A, Ai, cu_seqlens, chunk_indices, T, H: tl.constexpr,
                       DOT_PRECISION: tl.constexpr, IS_VARLEN: tl.constexpr):
    # inverse of a 32x32 unit lower-triangular chunk from its two 16x16 diagonal inverses
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    o_i = tl.arange(0, 16)
    A += (bos * H + i_h) * 32
    Ai += (bos * H + i_h) * 32
    r0 = i_t * 32
    n = T - r0
    b_Ai11 = _tkk_inverse_16(A + r0 * H * 32, H * 32, o_i, n)
    b_Ai22 = _tkk_inverse_16(A + (r0 + 16) * H * 32 + 16, H * 32, o_i, n - 16)
    p_A21 = tl.make_block_ptr(A, (T, 32), (H * 32, 1), (r0 + 16, 0), (16, 16), (1, 0))
    b_A21 = tl.load(p_A21, boundary_check=(0, 1), padding_option="zero")
    b_Ai21 = -tl.dot(tl.dot(b_Ai22, b_A21, input_precision=DOT_PRECISION), b_Ai11,
                     input_precision=DOT_PRECISION)
    BLOCKS = ((b_Ai11, 0, 0), (b_Ai21, 16, 0), (b_Ai22, 16, 16), (tl.zeros([16, 16], tl.float32), 0, 16))
    for j in tl.static_range(len(BLOCKS)):
        blk, r, c = BLOCKS[j]
        p = tl.make_block_ptr(Ai, (T, 32), (H * 32, 1), (r0 + r, c), (16, 16), (1, 0))
        tl.store(p, blk.to(p.dtype.element_ty), boundary_check=(0, 1))


# ---- linear attention: recurrent form ----------------------------------------------------------


@triton.heuristics({"USE_INITIAL_STATE": lambda args: args["h0"] is not None,
                    "STORE_FINAL_STATE": lambda args: args["ht"] is not None,
                    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_fused_recurrent_gdr_fwd(q, k, v, g, beta, o, h0, ht, cu_seqlens, scale, T,
                                 H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
                                 BK: tl.constexpr, BV: tl.constexpr,
                                 USE_INITIAL_STATE: tl.constexpr, STORE_FINAL_STATE: tl.constexpr,
                                 USE_QK_L2NORM_IN_KERNEL: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_v, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_hv = i_nh // HV, i_nh % HV
    i_h = i_hv // (HV // H)
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = eos - bos
    else:
        bos, eos = i_n * T, i_n * T + T
    o_k = tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    mask_k = o_k < K
    mask_v = o_v < V
    mask_h = mask_k[:, None] & mask_v[None, :]
    p_q = q + (bos * H + i_h) * K + o_k
    p_k = k + (bos * H + i_h) * K + o_k
    p_v = v + (bos * HV + i_hv) * V + o_v
    p_g = g + bos * HV + i_hv
    p_beta = beta + bos * HV + i_hv
    p_o = o + (bos * HV + i_hv) * V + o_v
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        p_h0 = h0 + i_nh * K * V + o_k[:, None] * V + o_v[None, :]
        b_h += tl.load(p_h0, mask=mask_h, other=0).to(tl.float32)
    for _ in range(0, T):
        b_q = tl.load(p_q, mask=mask_k, other=0).to(tl.float32)
        b_k = tl.load(p_k, mask=mask_k, other=0).to(tl.float32)
        b_v = tl.load(p_v, mask=mask_v, other=0).to(tl.float32)
        b_g = tl.load(p_g).to(tl.float32)
        b_beta = tl.load(p_beta).to(tl.float32)
        if USE_QK_L2NORM_IN_KERNEL:
            b_q = b_q / tl.sqrt(tl.sum(b_q * b_q) + 1e-6)
            b_k = b_k / tl.sqrt(tl.sum(b_k * b_k) + 1e-6)
        b_q = b_q * scale
        b_h *= exp(b_g)
        b_v -= tl.sum(b_h * b_k[:, None], 0)
        b_v *= b_beta
        b_h += b_k[:, None] * b_v[None, :]
        b_o = tl.sum(b_h * b_q[:, None], 0)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=mask_v)
        p_q += H * K
        p_k += H * K
        p_v += HV * V
        p_g += HV
        p_beta += HV
        p_o += HV * V
    if STORE_FINAL_STATE:
        p_ht = ht + i_nh * K * V + o_k[:, None] * V + o_v[None, :]
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), mask=mask_h)
