"""More language features in library idioms: tl.cat, ravel and view over
tiles, downcasts that truncate (fp_downcast_rounding="rtz"), module-level
constexprs, dtypes and coefficient tuples walked by static_range, helpers
returning nested tuples and a noinline one with early returns, a persistent
batched transpose over a 3-D grid, heads split and merged with reshape/permute,
an interleaved SwiGLU taken apart with split, a segmented scan over
(value, flag) pairs, an embedding bag with cache and eviction hints,
Gumbel-max sampling from tl.rand, a dot loop under tl.range's options,
balanced-ternary packing (floor division and remainders of negatives), and
Newton iterations run while a block's error is large."""
import triton
import triton.language as tl

# module-level constants, as libraries keep them (Triton reads globals that are
# tl.constexpr instances or dtypes)
LOG2E = tl.constexpr(1.4426950408889634)
OUT_DT = tl.float16
POLY = tl.constexpr((1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333))
MAX_BLOCK = tl.constexpr(1024)
MODE_SUM = tl.constexpr(0)
MODE_MEAN = tl.constexpr(1)
MODE_MAX = tl.constexpr(2)


# ---- cat, ravel, view --------------------------------------------------------------------


@triton.jit
def cat_stats_kernel(a_ptr, b_ptr, out_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    # order-free statistics of two tiles taken as one
    r = tl.arange(0, BM)[:, None] * stride + tl.arange(0, BN)[None, :]
    a = tl.ravel(tl.load(a_ptr + r))
    b = tl.view(tl.load(b_ptr + r), (BM * BN,))
    both = tl.cat(a, b, can_reorder=True)
    tl.store(out_ptr, tl.sum(both, 0))
    tl.store(out_ptr + 1, tl.max(both, 0))
    tl.store(out_ptr + 2, tl.sum(both * both, 0))
    flat = tl.reshape(tl.load(a_ptr + r), (BM * BN // 2, 2), can_reorder=True)
    tl.store(out_ptr + 3, tl.sum(tl.sum(flat, 1), 0))


# ---- truncating downcasts ------------------------------------------------------------------


@triton.jit
def downcast_modes_kernel(x_ptr, h_rne_ptr, h_rtz_ptr, b_rne_ptr, b_rtz_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(h_rne_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtne"), mask=mask)
    tl.store(h_rtz_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtz"), mask=mask)
    tl.store(b_rne_ptr + offs, x.to(tl.bfloat16), mask=mask)
    tl.store(b_rtz_ptr + offs, tl.cast(x, tl.bfloat16, fp_downcast_rounding="rtz"), mask=mask)


# ---- module constants and constexpr choices -----------------------------------------------


@triton.jit
def _expm1_poly(x):
    # Horner over the module's coefficient tuple, unrolled
    acc = tl.zeros_like(x) + POLY[len(POLY) - 1]
    for i in tl.static_range(len(POLY) - 2, -1, -1):
        acc = acc * x + POLY[i]
    return acc * x


@triton.jit
def const_globals_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, USE_EXP2: tl.constexpr):
    B: tl.constexpr = min(BLOCK, MAX_BLOCK)
    HALF: tl.constexpr = max(B // 2, 1)
    tl.static_assert(B <= MAX_BLOCK)
    offs = tl.program_id(0) * B + tl.arange(0, B)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if tl.constexpr(USE_EXP2 and HALF > 1):
        e = tl.exp2(x * LOG2E) - 1.0
    else:
        e = tl.exp(x) - 1.0
    small = tl.abs(x) < (0.25 if B >= 64 else 0.125)
    y = tl.where(small, _expm1_poly(x), e)
    tl.store(y_ptr + offs, y.to(OUT_DT), mask=mask)


# ---- helpers returning tuples ---------------------------------------------------------------


@triton.jit
def _moments(x, mask):
    xs = tl.where(mask, x, 0.0)
    n = tl.sum(mask.to(tl.float32), 0)
    s = tl.sum(xs, 0)
    return s / n, (tl.sum(xs * xs, 0) / n, n)


@triton.jit(noinline=True)
def _safe_rsqrt(v, eps):
    # a real call: Triton allows noinline helpers scalar arguments only
    if v <= 0.0:
        return 1.0 / tl.sqrt(eps)
    return tl.rsqrt(v + eps)


@triton.jit
def standardize_kernel(x_ptr, y_ptr, stats_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean, rest = _moments(x, mask)
    sq, n = rest
    var = sq - mean * mean
    inv = _safe_rsqrt(var, eps)
    tl.store(y_ptr + row * stride + cols, (x - mean) * inv, mask=mask)
    tl.store(stats_ptr + row * 3, mean)
    tl.store(stats_ptr + row * 3 + 1, inv)
    tl.store(stats_ptr + row * 3 + 2, n)


# ---- persistent batched transpose on a 3-D grid --------------------------------------------


@triton.jit
def batched_transpose_kernel(x_ptr, y_ptr, B, M, N, stride_b, stride_m, BM: tl.constexpr,
                             BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    for b in range(tl.program_id(2), B, tl.num_programs(2)):
        base = b.to(tl.int64) * stride_b
        tile = tl.load(x_ptr + base + rm[:, None] * stride_m + rn[None, :], mask=mask)
        # y[b] is N x M, contiguous
        tl.store(y_ptr + base + rn[:, None] * M + rm[None, :], tl.trans(tile), mask=tl.trans(mask))


# ---- heads split and merged -----------------------------------------------------------------


@triton.jit
def split_heads_kernel(x_ptr, y_ptr, bias_ptr, T, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
    # x: [T, H * D] -> y: [H, T, D], plus a per-head bias broadcast over tokens and dims
    t = tl.program_id(0) * BT + tl.arange(0, BT)
    hd = tl.arange(0, H * D)
    x = tl.load(x_ptr + t[:, None] * (H * D) + hd[None, :], mask=t[:, None] < T, other=0.0)
    x3 = tl.reshape(x, (BT, H, D))
    bias = tl.expand_dims(tl.load(bias_ptr + tl.arange(0, H)), (0, 2))
    x3 = x3 + tl.broadcast_to(bias, (BT, H, D))
    y = tl.permute(x3, (1, 0, 2))
    h = tl.arange(0, H)[:, None, None]
    tt = t[None, :, None]
    d = tl.arange(0, D)[None, None, :]
    tl.store(y_ptr + h * (T * D) + tt * D + d, y, mask=tt < T)


# ---- interleaved SwiGLU ----------------------------------------------------------------------


@triton.jit
def swiglu_interleaved_kernel(x_ptr, out_ptr, M, N, alpha, limit, BM: tl.constexpr, BN: tl.constexpr):
    # columns alternate gate, linear, gate, linear ...
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    c2 = tl.program_id(1) * (2 * BN) + tl.arange(0, 2 * BN)
    x = tl.load(x_ptr + rm[:, None] * (2 * N) + c2[None, :],
                mask=(rm[:, None] < M) & (c2[None, :] < 2 * N), other=0.0).to(tl.float32)
    gate, lin = tl.split(tl.reshape(x, (BM, BN, 2)))
    gate = tl.minimum(gate, limit)
    lin = tl.clamp(lin, -limit, limit)
    out = gate * tl.sigmoid(alpha * gate) * (lin + 1)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], out.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# ---- segmented scan ---------------------------------------------------------------------------


@triton.jit
def _seg_add(v0, f0, v1, f1):
    return tl.where(f1, v1, v0 + v1), f0 | f1


@triton.jit
def segmented_cumsum_kernel(x_ptr, start_ptr, y_ptr, total_ptr, n, BLOCK: tl.constexpr):
    # a running sum that restarts wherever start is set
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    f = tl.load(start_ptr + offs, mask=mask, other=1) != 0
    y, _ = tl.associative_scan((x, f), 0, _seg_add)
    tl.store(y_ptr + offs, y, mask=mask)
    tl.store(total_ptr, tl.sum(tl.where(mask & f, 1, 0), 0))


# ---- embedding bag with hints ------------------------------------------------------------------


@triton.jit
def embedding_bag_kernel(weight_ptr, idx_ptr, offsets_ptr, psw_ptr, out_ptr, D,
                         MODE: tl.constexpr, HAS_PSW: tl.constexpr, BLOCK_D: tl.constexpr):
    bag = tl.program_id(0)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    dmask = d < D
    start = tl.load(offsets_ptr + bag)
    end = tl.load(offsets_ptr + bag + 1)
    if MODE == MODE_MAX:
        acc = tl.full((BLOCK_D,), float("-inf"), tl.float32)
    else:
        acc = tl.zeros((BLOCK_D,), tl.float32)
    for i in range(start, end):
        row = tl.load(idx_ptr + i, cache_modifier=".ca").to(tl.int64)
        w = tl.load(weight_ptr + row * D + d, mask=dmask, other=0.0, eviction_policy="evict_last")
        w = w.to(tl.float32)
        if HAS_PSW:
            w = w * tl.load(psw_ptr + i, volatile=True)
        if MODE == MODE_MAX:
            acc = tl.maximum(acc, w)
        else:
            acc += w
    if MODE == MODE_MEAN:
        acc = acc / tl.maximum(end - start, 1).to(tl.float32)
    if MODE == MODE_MAX:
        acc = tl.where(end > start, acc, 0.0)
    tl.store(out_ptr + bag * D + d, acc, mask=dmask, cache_modifier=".cs")


# ---- Gumbel-max sampling ----------------------------------------------------------------------


@triton.jit
def gumbel_sample_kernel(probs_ptr, seeds_ptr, out_ptr, n_vocab, stride, BLOCK_V: tl.constexpr):
    # argmax of p / E with E exponential: a sample from p, drawn with one seed a row
    row = tl.program_id(0)
    seed = tl.load(seeds_ptr + row)
    cols = tl.arange(0, BLOCK_V)
    mask = cols < n_vocab
    p = tl.load(probs_ptr + row * stride + cols, mask=mask, other=0.0)
    u = tl.rand(seed, row * stride + cols)
    q = -tl.log(tl.maximum(u, 1e-10))
    score = tl.where(mask, p / q, -1.0)
    tl.store(out_ptr + row, tl.argmax(score, 0))


# ---- a dot loop with tl.range's options --------------------------------------------------------


@triton.jit
def range_options_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                            BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3, disallow_acc_multi_buffer=True, flatten=False):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.zeros((BN,), dtype=tl.float32)
    for j in tl.range(0, 4, loop_unroll_factor=2):
        bias += j * 0.25
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc + bias[None, :],
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# ---- balanced ternary -----------------------------------------------------------------------


@triton.jit
def ternary_pack_kernel(t_ptr, packed_ptr, back_ptr, n_groups, BLOCK: tl.constexpr):
    # five trits in {-1, 0, 1} a byte; they come back from the byte's signed
    # value through C-style remainders of negative numbers
    g = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = g < n_groups
    code = tl.zeros((BLOCK,), tl.int32)
    for i in tl.static_range(5):
        t = tl.load(t_ptr + g * 5 + i, mask=mask, other=0).to(tl.int32)
        code += (t + 1) * (3 ** i)
    packed = code.to(tl.uint8)
    tl.store(packed_ptr + g, packed, mask=mask)
    v = packed.to(tl.int32) - 121          # the balanced value, -121 .. 121
    for i in tl.static_range(5):
        d = v % 3                           # -2 .. 2, the sign of v
        d = tl.where(d > 1, d - 3, tl.where(d < -1, d + 3, d))
        tl.store(back_ptr + g * 5 + i, d.to(tl.int8), mask=mask)
        v = (v - d) // 3


# ---- Newton iterations under a block-wide condition --------------------------------------------


@triton.jit
def newton_rsqrt_kernel(x_ptr, y_ptr, iters_ptr, n, tol, max_iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.full((BLOCK,), 1.0, tl.float32) / tl.maximum(x, 1.0)
    err = float("inf")
    it = 0
    while (err > tol) & (it < max_iters):
        y_next = y * (1.5 - 0.5 * x * y * y)
        err = tl.max(tl.abs(y_next - y), 0)
        y = y_next
        it += 1
    tl.store(y_ptr + offs, y, mask=mask)
    tl.store(iters_ptr + tl.program_id(0), it)


def embedding_bag(weight, indices, offsets, mode="sum", per_sample_weights=None):
    n_bags = offsets.numel() - 1
    D = weight.shape[1]
    out = weight.new_empty((n_bags, D), dtype=weight.dtype)
    modes = {"sum": 0, "mean": 1, "max": 2}
    BLOCK_D = min(triton.next_power_of_2(D), 256)
    grid = (n_bags, triton.cdiv(D, BLOCK_D))
    embedding_bag_kernel[grid](weight, indices, offsets, per_sample_weights, out, D, MODE=modes[mode],
                               HAS_PSW=per_sample_weights is not None, BLOCK_D=BLOCK_D)
    return out
