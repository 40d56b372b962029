# Kernels in the style of an ATen operator library written in Triton
# (FlagGems): reductions over an arbitrary dim with the input viewed as
# (M, N, K), keepdim-free outputs, dtype limits from constexpr dtype
# introspection, tl.reduce / tl.associative_scan with user combine
# functions (`a and b` on tensors), Welford var/mean, softmax along inner
# and non-inner dims, group norm, index_select / gather / scatter_add,
# where / clamp / masked_fill with scalar-or-tensor operands and type
# promotion, isclose/allclose, erf-GELU and integer pow through libdevice,
# bitwise ops, Philox rand/randn, nonzero by prefix counts and top-k by
# sorting packed int64 keys.
import triton
import triton.language as tl
from triton.language.extra import libdevice


# ---- helpers -------------------------------------------------------------------------------


@triton.jit
def dtype_lowest(dtype: tl.constexpr):
    # a value no element of dtype is below (the identity of max)
    dt = dtype.value
    if dt.is_floating():
        res: tl.constexpr = float("-inf")
    elif dt.is_int_signed():
        res: tl.constexpr = -(2 ** (dt.int_bitwidth - 1))
    else:
        res: tl.constexpr = 0
    return res


@triton.jit
def _mul_fn(a, b):
    return a * b


@triton.jit
def _and_fn(a, b):
    return a and b


@triton.jit
def _or_fn(a, b):
    return a or b


@triton.jit
def _welford_fn(mean_a, m2_a, cnt_a, mean_b, m2_b, cnt_b):
    cnt = cnt_a + cnt_b
    frac = tl.where(cnt == 0.0, 0.0, cnt_b / tl.maximum(cnt, 1.0))
    delta = mean_b - mean_a
    mean = mean_a + delta * frac
    m2 = m2_a + m2_b + delta * delta * cnt_a * frac
    return mean, m2, cnt


# ---- reductions over a dim -----------------------------------------------------------------


@triton.jit
def sum_mean_dim_kernel(inp, out_sum, out_mean, M, N, K,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # input viewed as (M, N, K); reduce over N; outputs (M, K) in inp's dtype
    pid_m = tl.program_id(0).to(tl.int64)
    pid_k = tl.program_id(1)
    k_offs = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    k_mask = k_offs < K
    base = inp + pid_m * N * K
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        n_offs = start + tl.arange(0, BLOCK_N)
        mask = (n_offs[:, None] < N) & k_mask[None, :]
        x = tl.load(base + n_offs[:, None] * K + k_offs[None, :], mask=mask, other=0.0)
        acc += x.to(tl.float32)
    s = tl.sum(acc, axis=0)
    m = s / N
    o = pid_m * K + k_offs
    tl.store(out_sum + o, s.to(out_sum.dtype.element_ty), mask=k_mask)
    tl.store(out_mean + o, m.to(out_mean.dtype.element_ty), mask=k_mask)


@triton.jit
def amax_argmax_kernel(inp, out_val, out_idx, M, N,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # inner-dim amax and argmax (first index of the max), any dtype
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rows64 = rows.to(tl.int64)
    r_mask = rows < M
    lowest = dtype_lowest(inp.type.element_ty)
    best = tl.full([BLOCK_M], lowest, dtype=inp.type.element_ty)
    best_i = tl.zeros([BLOCK_M], dtype=tl.int64)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = r_mask[:, None] & (cols[None, :] < N)
        x = tl.load(inp + rows64[:, None] * N + cols[None, :], mask=mask, other=lowest)
        v, i = tl.max(x, axis=1, return_indices=True)
        upd = v > best
        best = tl.where(upd, v, best)
        best_i = tl.where(upd, (i + start).to(tl.int64), best_i)
    tl.store(out_val + rows64, best, mask=r_mask)
    tl.store(out_idx + rows64, best_i, mask=r_mask)


@triton.jit
def prod_all_any_kernel(inp, out_prod, out_all, out_any, M, N, K,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # (M, N, K) reduced over N with user combine functions
    pid_m = tl.program_id(0).to(tl.int64)
    pid_k = tl.program_id(1)
    k_offs = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    k_mask = k_offs < K
    p = tl.full([1, BLOCK_K], 1.0, dtype=tl.float32)
    a_all = tl.full([1, BLOCK_K], 1, dtype=tl.int1)
    a_any = tl.zeros([1, BLOCK_K], dtype=tl.int1)
    for start in range(0, N, BLOCK_N):
        n_offs = start + tl.arange(0, BLOCK_N)
        mask = (n_offs[:, None] < N) & k_mask[None, :]
        x = tl.load(inp + pid_m * N * K + n_offs[:, None] * K + k_offs[None, :], mask=mask, other=1.0)
        x = x.to(tl.float32)
        p = p * tl.reduce(x, axis=0, combine_fn=_mul_fn, keep_dims=True)
        nz = x != 0.0
        a_all = _and_fn(a_all, tl.reduce(nz, axis=0, combine_fn=_and_fn, keep_dims=True))
        any_nz = tl.where(mask, nz, False)
        a_any = a_any | tl.reduce(any_nz, axis=0, combine_fn=_or_fn, keep_dims=True)
    o = pid_m * K + k_offs[None, :]
    om = k_mask[None, :]
    tl.store(out_prod + o, p.to(out_prod.dtype.element_ty), mask=om)
    tl.store(out_all + o, a_all.to(tl.int8), mask=om)
    tl.store(out_any + o, a_any.to(tl.int8), mask=om)


@triton.jit
def cumsum_cumprod_kernel(inp, out_sum, out_prod, M, N, K, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, REVERSE: tl.constexpr):
    # scans along N of (M, N, K), chunk by chunk with a carried total
    pid_m = tl.program_id(0).to(tl.int64)
    pid_k = tl.program_id(1)
    k_offs = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    k_mask = k_offs < K
    base = pid_m * N * K
    carry_s = tl.zeros([BLOCK_K], dtype=tl.float32)
    carry_p = tl.full([BLOCK_K], 1.0, dtype=tl.float32)
    num_chunks = tl.cdiv(N, BLOCK_N)
    for c in range(num_chunks):
        if REVERSE:
            start = N - (c + 1) * BLOCK_N
        else:
            start = c * BLOCK_N
        n_offs = start + tl.arange(0, BLOCK_N)
        mask = (n_offs[:, None] >= 0) & (n_offs[:, None] < N) & k_mask[None, :]
        offs = base + n_offs[:, None] * K + k_offs[None, :]
        x = tl.load(inp + offs, mask=mask, other=0.0).to(tl.float32)
        xp = tl.where(mask, x, 1.0)
        cs = tl.cumsum(x, axis=0, reverse=REVERSE) + carry_s[None, :]
        cp = tl.associative_scan(xp, 0, _mul_fn, reverse=REVERSE) * carry_p[None, :]
        tl.store(out_sum + offs, cs.to(out_sum.dtype.element_ty), mask=mask)
        tl.store(out_prod + offs, cp, mask=mask)
        carry_s += tl.sum(x, axis=0)
        carry_p *= tl.reduce(xp, 0, _mul_fn)


@triton.jit
def var_mean_kernel(inp, out_var, out_mean, out_std, M, N, correction,
                    BLOCK_N: tl.constexpr):
    # Welford per lane over chunks of the row, then a three-field tl.reduce
    row = tl.program_id(0).to(tl.int64)
    mean = tl.zeros([BLOCK_N], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    cnt = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(inp + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        new_cnt = cnt + mask.to(tl.float32)
        delta = x - mean
        new_mean = mean + tl.where(mask, delta / tl.maximum(new_cnt, 1.0), 0.0)
        m2 = m2 + tl.where(mask, delta * (x - new_mean), 0.0)
        mean = new_mean
        cnt = new_cnt
    mean_r, m2_r, cnt_r = tl.reduce((mean, m2, cnt), 0, _welford_fn)
    var = m2_r / tl.maximum(cnt_r - correction, 0.0)
    tl.store(out_var + row, var.to(out_var.dtype.element_ty))
    tl.store(out_mean + row, mean_r.to(out_mean.dtype.element_ty))
    tl.store(out_std + row, tl.sqrt(var).to(out_std.dtype.element_ty))


# ---- softmax and norms ---------------------------------------------------------------------


@triton.jit
def softmax_non_inner_kernel(out, inp, M, N, K, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, LOG: tl.constexpr):
    # softmax over dim N of (M, N, K): online max and sum, then a second pass
    pid_m = tl.program_id(0).to(tl.int64)
    pid_k = tl.program_id(1)
    k_offs = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    k_mask = k_offs < K
    base = pid_m * N * K
    m = tl.full([BLOCK_N, BLOCK_K], value=float("-inf"), dtype=tl.float32)
    z = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        n_offs = start + tl.arange(0, BLOCK_N)
        mask = (n_offs[:, None] < N) & k_mask[None, :]
        x = tl.load(inp + base + n_offs[:, None] * K + k_offs[None, :], mask=mask,
                    other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        z = z * alpha + tl.where(mask, tl.exp(x - m_new), 0.0)
        m = m_new
    m_red = tl.max(m, 0)
    z = z * tl.where(m == float("-inf"), 0.0, tl.exp(m - m_red[None, :]))
    z_red = tl.sum(z, 0)
    for start in range(0, N, BLOCK_N):
        n_offs = start + tl.arange(0, BLOCK_N)
        mask = (n_offs[:, None] < N) & k_mask[None, :]
        offs = base + n_offs[:, None] * K + k_offs[None, :]
        x = tl.load(inp + offs, mask=mask, other=float("-inf")).to(tl.float32)
        if LOG:
            y = x - m_red[None, :] - tl.log(z_red)[None, :]
        else:
            y = tl.exp(x - m_red[None, :]) / z_red[None, :]
        tl.store(out + offs, y.to(out.dtype.element_ty), mask=mask)


@triton.jit
def log_softmax_inner_kernel(out, inp, M, N, TILE_N: tl.constexpr, ONE_TILE: tl.constexpr):
    # log_softmax over the last dim, one row per program
    row = tl.program_id(0).to(tl.int64)
    if ONE_TILE:
        cols = tl.arange(0, TILE_N)
        x = tl.load(inp + row * N + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        mx = tl.max(x, 0)
        lse = mx + tl.log(tl.sum(tl.exp(x - mx), 0))
        tl.store(out + row * N + cols, (x - lse).to(out.dtype.element_ty), mask=cols < N)
    else:
        mx = tl.full([TILE_N], -float("inf"), tl.float32)
        acc = tl.zeros([TILE_N], tl.float32)
        for start in range(0, N, TILE_N):
            cols = start + tl.arange(0, TILE_N)
            x = tl.load(inp + row * N + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
            new_mx = tl.maximum(mx, x)
            acc = acc * tl.exp(mx - new_mx) + tl.exp(x - new_mx)
            acc = tl.where(new_mx == -float("inf"), 0.0, acc)
            mx = new_mx
        row_mx = tl.max(mx, 0)
        acc = tl.where(mx == -float("inf"), 0.0, acc * tl.exp(mx - row_mx))
        lse = row_mx + tl.log(tl.sum(acc, 0))
        for start in range(0, N, TILE_N):
            cols = start + tl.arange(0, TILE_N)
            x = tl.load(inp + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
            tl.store(out + row * N + cols, (x - lse).to(out.dtype.element_ty), mask=cols < N)


@triton.jit
def group_norm_kernel(X, Y, W, B, Mean, Rstd, group_size, C, HW, num_groups, eps,
                      BLOCK_GROUP_SIZE: tl.constexpr, BLOCK_HW: tl.constexpr):
    # X is (N, C, HW); one program normalises one (batch, group)
    pid = tl.program_id(0)
    group = pid % num_groups
    batch = pid // num_groups
    ch = group * group_size + tl.arange(0, BLOCK_GROUP_SIZE)
    hw = tl.arange(0, BLOCK_HW)
    ch_mask = tl.arange(0, BLOCK_GROUP_SIZE) < group_size
    mask = ch_mask[:, None] & (hw[None, :] < HW)
    offs = batch.to(tl.int64) * C * HW + ch[:, None] * HW + hw[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    numel = group_size * HW
    mean = tl.sum(x) / numel
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc) / numel
    rstd = tl.rsqrt(var + eps)
    if W is None:
        w = 1.0
    else:
        w = tl.load(W + ch, mask=ch_mask, other=0.0)[:, None]
    if B is None:
        b = 0.0
    else:
        b = tl.load(B + ch, mask=ch_mask, other=0.0)[:, None]
    y = xc * rstd * w + b
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Mean + pid, mean)
    tl.store(Rstd + pid, rstd)


# ---- indexing ------------------------------------------------------------------------------


@triton.jit
def index_select_kernel(inp, out, index, M, N, L, BLOCK_M: tl.constexpr, BLOCK_L: tl.constexpr):
    # out[m, l] = inp[m, index[l]] (index_select along dim 1 of (M, N))
    pid_m = tl.program_id(0)
    pid_l = tl.program_id(1)
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    ls = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    l_mask = ls < L
    idx = tl.load(index + ls, mask=l_mask, other=0)
    idx = tl.where(idx < 0, idx + N, idx)
    mask = (rows[:, None] < M) & l_mask[None, :]
    v = tl.load(inp + rows[:, None] * N + idx[None, :], mask=mask)
    tl.store(out + rows[:, None] * L + ls[None, :], v, mask=mask)


@triton.jit
def gather_dim0_kernel(inp, index, out, M_in, M_out, N, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    # out[i, j] = inp[index[i, j], j]
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M_out) & (cols[None, :] < N)
        o = rows[:, None].to(tl.int64) * N + cols[None, :]
        src = tl.load(index + o, mask=mask, other=0)
        v = tl.load(inp + src * N + cols[None, :], mask=mask & (src >= 0) & (src < M_in), other=0.0)
        tl.store(out + o, v, mask=mask)


@triton.jit
def scatter_add_dim1_kernel(out, index, src, M, N_src, N_out, BLOCK: tl.constexpr):
    # out[m, index[m, j]] += src[m, j] (flat over the (M, N_src) index grid)
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < M * N_src
    m = offs // N_src
    idx = tl.load(index + offs, mask=mask, other=0)
    v = tl.load(src + offs, mask=mask, other=0.0)
    tl.atomic_add(out + m * N_out + idx, v, mask=mask)


# ---- pointwise -----------------------------------------------------------------------------


@triton.jit
def where_clamp_fill_kernel(cond, x, y, lo, out_where, out_clamp, out_fill, out_add,
                            n, other, hi, fill_value,
                            HAS_LO_TENSOR: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = tl.load(cond + offs, mask=mask, other=0).to(tl.int1)
    xv = tl.load(x + offs, mask=mask, other=0.0)
    yv = tl.load(y + offs, mask=mask, other=0)
    # where(cond, x, scalar): the result keeps x's dtype
    w = tl.where(c, xv, other)
    tl.store(out_where + offs, w, mask=mask)
    # clamp(x, min=tensor or scalar, max=scalar) in float32
    xf = xv.to(tl.float32)
    if HAS_LO_TENSOR:
        low = tl.load(lo + offs, mask=mask, other=0.0).to(tl.float32)
    else:
        low = -0.5
    cl = tl.minimum(tl.maximum(xf, low), hi)
    tl.store(out_clamp + offs, cl.to(out_clamp.dtype.element_ty), mask=mask)
    # masked_fill(x, ~cond, value)
    f = tl.where(c == 0, fill_value, xv)
    tl.store(out_fill + offs, f.to(out_fill.dtype.element_ty), mask=mask)
    # int32 + fp16 promotes to fp16 in Triton; the op computes it in fp32
    s = yv.to(tl.float32) + xf * 2
    tl.store(out_add + offs, s, mask=mask)


@triton.jit
def isclose_kernel(a, b, out, flag, n, rtol, atol, EQUAL_NAN: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(a + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(b + offs, mask=mask, other=0.0).to(tl.float32)
    eq = x == y
    finite = (tl.abs(x) != float("inf")) & (tl.abs(y) != float("inf"))
    close = eq | (finite & (tl.abs(x - y) <= atol + rtol * tl.abs(y)))
    if EQUAL_NAN:
        close = close | ((x != x) & (y != y))
    tl.store(out + offs, close.to(tl.int8), mask=mask)
    all_close = tl.min(tl.where(mask, close, True).to(tl.int32), axis=0)
    tl.atomic_and(flag, all_close)


@triton.jit
def _ipow(x, e):
    # x ** e for e >= 0 by squaring
    r = tl.full(x.shape, 1, x.dtype)
    base = x
    while e > 0:
        if e % 2 == 1:
            r = r * base
        base = base * base
        e = e // 2
    return r


@triton.jit
def gelu_pow_kernel(x_ptr, i_ptr, gelu_out, dgelu_out, powf_out, powi_out, n, exponent,
                    APPROX: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if APPROX == "tanh":
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        t = libdevice.tanh(inner)
        g = 0.5 * x * (1.0 + t)
        dg = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 0.134145 * x * x)
    else:
        cdf = 0.5 * (1.0 + libdevice.erf(x * 0.7071067811865476))
        pdf = tl.exp(-0.5 * x * x) * 0.3989422804014327
        g = x * cdf
        dg = cdf + x * pdf
    tl.store(gelu_out + offs, g.to(gelu_out.dtype.element_ty), mask=mask)
    tl.store(dgelu_out + offs, dg, mask=mask)
    tl.store(powf_out + offs, libdevice.pow(x, exponent), mask=mask)
    iv = tl.load(i_ptr + offs, mask=mask, other=0)
    tl.store(powi_out + offs, _ipow(iv, exponent), mask=mask)


@triton.jit
def bitwise_kernel(a_ptr, b_ptr, and_out, or_out, xor_out, not_out, shl_out, shr_out, lshr_out,
                   n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    tl.store(and_out + offs, a & b, mask=mask)
    tl.store(or_out + offs, a | b, mask=mask)
    tl.store(xor_out + offs, a ^ b, mask=mask)
    tl.store(not_out + offs, ~a, mask=mask)
    sh = (b & 7).to(a.dtype)
    tl.store(shl_out + offs, a << sh, mask=mask)
    tl.store(shr_out + offs, a >> SHIFT, mask=mask)
    u = a.to(tl.uint32, bitcast=True)
    tl.store(lshr_out + offs, (u >> SHIFT).to(tl.int32, bitcast=True), mask=mask)


@triton.jit
def rand_randn_kernel(out_u, out_n, out_i, n, seed, philox_offset, BLOCK: tl.constexpr):
    # uniform_ / normal_ style: one Philox counter per element, base offset added
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = philox_offset + offs
    u = tl.rand(seed, c)
    r = tl.randn(seed, c)
    i = tl.randint(seed, c)
    tl.store(out_u + offs, u, mask=mask)
    tl.store(out_n + offs, r, mask=mask)
    tl.store(out_i + offs, i.to(tl.int32, bitcast=True), mask=mask)


# ---- prefix counts and top-k ---------------------------------------------------------------


@triton.jit
def nonzero_kernel(inp, out_idx, out_count, n, BLOCK: tl.constexpr):
    # one program: positions of non-zero elements in order, and their count
    base = tl.zeros([], dtype=tl.int64)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(inp + offs, mask=mask, other=0)
        nz = (x != 0) & mask
        pos = tl.cumsum(nz.to(tl.int32), axis=0) - 1
        tl.store(out_idx + base + pos, offs.to(tl.int64), mask=nz)
        base += tl.sum(nz.to(tl.int64), axis=0)
    tl.store(out_count, base)


@triton.jit
def topk_packed_kernel(inp, out_val, out_idx, M, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # top-k of each row by sorting int64 keys: order-preserving float bits in
    # the high word, the reversed column in the low word (ties -> lower index)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(inp + row * N + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
    bits = x.to(tl.int32, bitcast=True)
    key_hi = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)
    key = (key_hi.to(tl.int64) << 32) | (BLOCK_N - 1 - cols).to(tl.int64)
    key = tl.sort(key, descending=True)
    hi = (key >> 32).to(tl.int32)
    v = tl.where(hi < 0, hi ^ 0x7FFFFFFF, hi).to(tl.float32, bitcast=True)
    i = BLOCK_N - 1 - (key & 0xFFFFFFFF).to(tl.int32)
    pos = tl.arange(0, BLOCK_N)
    keep = pos < K
    tl.store(out_val + row * K + pos, v.to(out_val.dtype.element_ty), mask=keep)
    tl.store(out_idx + row * K + pos, i.to(tl.int64), mask=keep)


# ---- promotion of reductions, NaN-propagating min/max --------------------------------------


@triton.jit
def _xor_fn(a, b):
    return a ^ b


@triton.jit
def int_reductions_kernel(x8, xu8, xb, out_sum8, out_sumu8, out_count, out_cum8, out_cumb,
                          out_xor, out_total, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # count_nonzero / sum of int8 and uint8 (accumulated in 32 bits), cumsum of
    # int8 and bf16 (promoted), a user xor reduction and a whole-tile reduce
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    a = tl.load(x8 + offs, mask=mask, other=0)
    b = tl.load(xu8 + offs, mask=mask, other=0)
    c = tl.load(xb + offs, mask=mask, other=0.0)
    rmask = rows < M
    tl.store(out_sum8 + rows, tl.sum(a, axis=1), mask=rmask)
    tl.store(out_sumu8 + rows, tl.sum(b, axis=1).to(tl.int64), mask=rmask)
    tl.store(out_count + rows, tl.sum(a != 0, axis=1), mask=rmask)
    tl.store(out_cum8 + offs, tl.cumsum(a, axis=1), mask=mask)
    tl.store(out_cumb + offs, tl.cumsum(c, axis=1), mask=mask)
    tl.store(out_xor + rows, tl.reduce(a.to(tl.int32), 1, _xor_fn), mask=rmask)
    total = tl.reduce(tl.where(mask, a.to(tl.int32), 0), None, _xor_fn)
    tl.atomic_xor(out_total, total)


@triton.jit
def nan_minmax_kernel(x_ptr, y_ptr, max_all, min_all, clamp_all, n, lo, hi, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(max_all + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(min_all + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(clamp_all + offs, tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL), mask=mask)


# ---- pointwise_dynamic style: strided, broadcast, grid-stride over tiles --------------------


@triton.jit
def pid64(axis: tl.constexpr):
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def add_erf_strided_kernel(a, b, out, alpha, M, N, sa0, sa1, sb0, sb1, so0, so1, tiles_per_cta,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out = erf(a + alpha * b) with a and b given by strides (0 broadcasts)
    pid = pid64(0)
    num_ctas = tl.num_programs(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for t in range(0, tiles_per_cta):
        tile = pid + t * num_ctas
        tm = tile // tiles_n
        tn = tile % tiles_n
        i = tm * BLOCK_M + tl.arange(0, BLOCK_M)
        j = tn * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (i[:, None] < M) & (j[None, :] < N) & (tile < num_tiles)
        av = tl.load(a + i[:, None] * sa0 + j[None, :] * sa1, mask=mask)
        bv = tl.load(b + i[:, None] * sb0 + j[None, :] * sb1, mask=mask)
        r = av.to(tl.float32) + alpha * bv.to(tl.float32)
        r = tl.extra.cuda.libdevice.erf(r)
        tl.store(out + i[:, None] * so0 + j[None, :] * so1, r.to(out.dtype.element_ty), mask=mask)


# ---- Philox, four values per counter -------------------------------------------------------


@triton.jit
def _u32_to_unit(x):
    x = x.to(tl.int32, bitcast=True)
    x = tl.where(x < 0, -x - 1, x)
    return x * 4.6566127342e-10


@triton.jit
def normal_philox_kernel(out, n, mean, std, seed, philox_offset, BLOCK: tl.constexpr):
    # normal_: each counter gives four words, two Box-Muller pairs, stored
    # as four consecutive chunks of BLOCK
    pid = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    # a small offset is an i32 argument under Triton: widen before >> 32
    counter = philox_offset.to(tl.int64) + pid * BLOCK + i
    c0 = counter.to(tl.uint32)
    c1 = (counter >> 32).to(tl.uint32)
    z = c0 * 0
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, z, z)
    u0 = tl.maximum(_u32_to_unit(r0), 1.0e-7)
    u1 = _u32_to_unit(r1)
    u2 = tl.maximum(_u32_to_unit(r2), 1.0e-7)
    u3 = _u32_to_unit(r3)
    ra = tl.sqrt(-2.0 * tl.log(u0))
    rb = tl.sqrt(-2.0 * tl.log(u2))
    base = pid.to(tl.int64) * 4 * BLOCK + i
    tl.store(out + base, ra * tl.cos(6.283185307179586 * u1) * std + mean, mask=base < n)
    tl.store(out + base + BLOCK, ra * tl.sin(6.283185307179586 * u1) * std + mean, mask=base + BLOCK < n)
    tl.store(out + base + 2 * BLOCK, rb * tl.cos(6.283185307179586 * u3) * std + mean,
             mask=base + 2 * BLOCK < n)
    tl.store(out + base + 3 * BLOCK, rb * tl.sin(6.283185307179586 * u3) * std + mean,
             mask=base + 3 * BLOCK < n)


# ---- a hand-written bitonic argsort ---------------------------------------------------------


@triton.jit
def _split_pairs(x, i: tl.constexpr, n_dims: tl.constexpr):
    # the two halves of each pair at distance 2**(n_dims-1-i), each
    # broadcast back to x's shape
    n_outer: tl.constexpr = x.numel >> n_dims
    shape: tl.constexpr = [n_outer * 2 ** i, 2, 2 ** (n_dims - i - 1)]
    y = tl.reshape(x, shape)
    sel = tl.arange(0, 2)[None, :, None]
    lo = tl.sum(tl.where(sel == 0, y, 0), 1)[:, None, :]
    hi = tl.sum(tl.where(sel == 1, y, 0), 1)[:, None, :]
    lo = tl.reshape(tl.broadcast_to(lo, shape), x.shape)
    hi = tl.reshape(tl.broadcast_to(hi, shape), x.shape)
    return lo, hi


@triton.jit
def _cas(v, ids, flip, i: tl.constexpr, n_dims: tl.constexpr):
    v_lo, v_hi = _split_pairs(v, i, n_dims)
    i_lo, i_hi = _split_pairs(ids, i, n_dims)
    # descending with ties to the lower index: the low slot holds the "better"
    better_hi = (v_hi > v_lo) | ((v_hi == v_lo) & (i_hi < i_lo))
    swap = better_hi != flip
    n_outer: tl.constexpr = v.numel >> n_dims
    shape: tl.constexpr = [n_outer * 2 ** i, 2, 2 ** (n_dims - i - 1)]
    is_hi = tl.reshape(tl.broadcast_to(tl.arange(0, 2)[None, :, None], shape), v.shape) == 1
    new_v = tl.where(swap, tl.where(is_hi, v_lo, v_hi), v)
    new_i = tl.where(swap, tl.where(is_hi, i_lo, i_hi), ids)
    return new_v, new_i


@triton.jit
def _bitonic_merge(v, ids, stage: tl.constexpr, order: tl.constexpr, n_dims: tl.constexpr):
    n_outer: tl.constexpr = v.numel >> n_dims
    if order == 2:
        shape: tl.constexpr = [n_outer * 2 ** (n_dims - 1 - stage), 2, 2 ** stage]
        flip = tl.reshape(tl.broadcast_to(tl.arange(0, 2)[None, :, None], shape), v.shape)
    else:
        flip = order
    for i in tl.static_range(stage):
        v, ids = _cas(v, ids, flip, i + (n_dims - stage), n_dims)
    return v, ids


@triton.jit
def argsort_rows_kernel(inp, out_val, out_idx, N, BLOCK_N: tl.constexpr, LOG_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    v = tl.load(inp + row * N + cols, mask=cols < N, other=float("-inf"))
    ids = cols
    v2 = tl.reshape(v, [1, BLOCK_N])
    i2 = tl.reshape(ids, [1, BLOCK_N])
    for stage in tl.static_range(1, LOG_N + 1):
        v2, i2 = _bitonic_merge(v2, i2, stage, 2 if stage < LOG_N else 0, LOG_N)
    v = tl.reshape(v2, [BLOCK_N])
    ids = tl.reshape(i2, [BLOCK_N])
    tl.store(out_val + row * N + cols, v, mask=cols < N)
    tl.store(out_idx + row * N + cols, ids.to(tl.int64), mask=cols < N)


# ---- type promotion with Python scalars and mixed integer types ------------------------------


@triton.jit
def promote_kernel(a8_ptr, u8_ptr, h_ptr, b_ptr, k_ptr, s_ptr,
                   o_add8, o_mulu8, o_lit8, o_mix16, o_hmul, o_hdiv, o_bfadd, o_i8f, o_idiv,
                   o_u32, o_rt, n, s_int, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a8_ptr + offs, mask=mask, other=0)      # int8
    u = tl.load(u8_ptr + offs, mask=mask, other=0)      # uint8
    h = tl.load(h_ptr + offs, mask=mask, other=0.0)     # fp16
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)     # bf16
    k = tl.load(k_ptr + offs, mask=mask, other=0)       # int32
    s = tl.load(s_ptr + offs, mask=mask, other=0)       # int16
    tl.store(o_add8 + offs, (a + a).to(tl.int32), mask=mask)        # int8, wraps
    tl.store(o_mulu8 + offs, (u * u).to(tl.int32), mask=mask)       # uint8, wraps
    tl.store(o_lit8 + offs, (a + 100).to(tl.int32), mask=mask)      # the literal is int8
    tl.store(o_mix16 + offs, (a * s).to(tl.int32), mask=mask)       # int16, wraps
    tl.store(o_hmul + offs, (h * 0.1).to(tl.float32), mask=mask)    # fp16 * fp16(0.1)
    tl.store(o_hdiv + offs, h / 3.0, mask=mask)                     # fp32 division
    tl.store(o_bfadd + offs, (b + 0.1).to(tl.float32), mask=mask)   # bf16 + bf16(0.1)
    tl.store(o_i8f + offs, a * 0.3, mask=mask)                      # fp32
    tl.store(o_idiv + offs, k / 7, mask=mask)                       # fp32 true division
    d = k.to(tl.uint32) + k                                         # uint32 wins
    tl.store(o_u32 + offs, (d >> 28).to(tl.int32), mask=mask)
    tl.store(o_rt + offs, (a + s_int).to(tl.int32), mask=mask)      # runtime scalar: int32
