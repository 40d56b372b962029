"""Language features as operator libraries use them, a kernel each: a
three-field Welford reduction, a layer-norm backward whose weight gradients
meet under a spin lock (atomic_cas/atomic_xchg), expert segment starts
found by binary search (a data-dependent while loop, and the same search
unrolled over a block), 4-bit codebook dequantisation (shifts on uint8,
gather, interleave), Jensen-Shannon divergence selected by a constexpr
beta, a fused recurrent delta rule with optional state pointers, top-p
renormalisation through a descending sort, dropout from randint4x words
(join, reshape, unsigned compares), float atomic max/min with sem and
scope, NaN-aware clamps, and a 32-bit hash into buckets."""
import triton
import triton.language as tl
from triton.language.extra import libdevice


# ---- Welford ---------------------------------------------------------------------------


@triton.jit
def _welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    frac = tl.where(n == 0.0, 0.0, n_b / tl.where(n == 0.0, 1.0, n))
    delta = mean_b - mean_a
    return mean_a + delta * frac, m2_a + m2_b + delta * delta * n_a * frac, n


@triton.jit
def welford_var_mean_kernel(x_ptr, mean_ptr, var_ptr, n_rows, n_cols, stride, correction,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < n_rows
    mean = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    m2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    cnt = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = rmask[:, None] & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride + cols[None, :], mask=mask,
                    other=0.0).to(tl.float32)
        cnt_next = cnt + mask.to(tl.float32)
        delta = x - mean
        mean = tl.where(mask, mean + delta / tl.maximum(cnt_next, 1.0), mean)
        m2 = tl.where(mask, m2 + delta * (x - mean), m2)
        cnt = cnt_next
    mean_r, m2_r, n_r = tl.reduce((mean, m2, cnt), 1, _welford_combine)
    var = m2_r / tl.maximum(n_r - correction, 1.0)
    tl.store(mean_ptr + rows, mean_r, mask=rmask)
    tl.store(var_ptr + rows, var, mask=rmask)


# ---- layer-norm backward with locked partial sums --------------------------------------


@triton.jit
def ln_bwd_dx_fused_kernel(dx_ptr, dy_ptr, dw_part_ptr, db_part_ptr, x_ptr, w_ptr, mean_ptr,
                           rstd_ptr, lock_ptr, stride, N, GROUP_SIZE_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    idx = tl.arange(0, BLOCK_N)
    inside = idx < N
    base = row.to(tl.int64) * stride
    xv = tl.load(x_ptr + base + idx, mask=inside, other=0.0).to(tl.float32)
    g_out = tl.load(dy_ptr + base + idx, mask=inside, other=0.0).to(tl.float32)
    wv = tl.load(w_ptr + idx, mask=inside, other=0.0).to(tl.float32)
    mu = tl.load(mean_ptr + row)
    inv_std = tl.load(rstd_ptr + row)
    xn = tl.where(inside, (xv - mu) * inv_std, 0.0)
    wg = tl.where(inside, wv * g_out, 0.0)
    proj = tl.sum(xn * wg, axis=0) / N
    avg = tl.sum(wg, axis=0) / N
    grad_x = (wg - (xn * proj + avg)) * inv_std
    tl.store(dx_ptr + base + idx, grad_x, mask=inside)
    # this row's share of dw/db goes into slot row % GROUP_SIZE_M under its lock
    slot = row % GROUP_SIZE_M
    mutex = lock_ptr + slot
    seen = lock_ptr + GROUP_SIZE_M + slot
    part_w = g_out * xn
    part_b = g_out
    while tl.atomic_cas(mutex, 0, 1) == 1:
        pass
    already = tl.load(seen)
    dw_at = dw_part_ptr + slot * N + idx
    db_at = db_part_ptr + slot * N + idx
    if already == 0:
        tl.atomic_xchg(seen, 1)
    else:
        part_w += tl.load(dw_at, mask=inside, other=0.0)
        part_b += tl.load(db_at, mask=inside, other=0.0)
    tl.store(dw_at, part_w, mask=inside)
    tl.store(db_at, part_b, mask=inside)
    tl.debug_barrier()
    tl.atomic_xchg(mutex, 0)


# ---- expert segments by binary search --------------------------------------------------


@triton.jit
def seg_start_search_kernel(sorted_ids_ptr, seg_ptr, n):
    # first position whose expert id is >= this program's expert
    e = tl.program_id(0)
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if tl.load(sorted_ids_ptr + mid) < e:
            lo = mid + 1
        else:
            hi = mid
    tl.store(seg_ptr + e, lo)


@triton.jit
def seg_start_block_kernel(sorted_ids_ptr, seg_ptr, n, num_experts, LOG_N: tl.constexpr,
                           BLOCK_E: tl.constexpr):
    # the same search for a block of experts at once: a fixed number of halvings
    e = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    lo = tl.zeros((BLOCK_E,), dtype=tl.int32)
    hi = tl.full((BLOCK_E,), 0, tl.int32) + n
    for _ in tl.static_range(LOG_N + 1):
        live = lo < hi
        mid = (lo + hi) // 2
        v = tl.load(sorted_ids_ptr + mid, mask=live, other=0)
        right = live & (v < e)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(live & ~right, mid, hi)
    tl.store(seg_ptr + e, lo, mask=e <= num_experts)


# ---- 4-bit codebook dequantisation ----------------------------------------------------


@triton.jit
def nf4_dequant_kernel(packed_ptr, code_ptr, absmax_ptr, out_ptr, n_bytes,
                       QBLOCK: tl.constexpr, BLOCK: tl.constexpr, USE_GATHER: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_bytes
    b = tl.load(packed_ptr + offs, mask=mask, other=0)
    hi = (b >> 4).to(tl.int32)
    lo = (b & 0xF).to(tl.int32)
    if USE_GATHER:
        code = tl.load(code_ptr + tl.arange(0, 16))
        v_hi = tl.gather(code, hi, 0)
        v_lo = tl.gather(code, lo, 0)
    else:
        v_hi = tl.load(code_ptr + hi)
        v_lo = tl.load(code_ptr + lo)
    # each byte holds two consecutive values: high nibble first
    scale = tl.load(absmax_ptr + (offs * 2) // QBLOCK, mask=mask, other=0.0)
    vals = tl.interleave(v_hi * scale, v_lo * scale)
    outs = tl.program_id(0) * (2 * BLOCK) + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + outs, vals.to(out_ptr.dtype.element_ty), mask=outs < 2 * n_bytes)


# ---- Jensen-Shannon divergence ---------------------------------------------------------


@triton.jit
def jsd_kernel(x_ptr, x_stride, y_ptr, y_stride, loss_ptr, loss_stride, dx_ptr, dx_stride,
               label_ptr, beta: tl.constexpr, n_non_ignore, ignore_index: tl.constexpr,
               n_cols, BLOCK: tl.constexpr, HAS_LABEL: tl.constexpr):
    # x: the student's log-probabilities, y: the teacher's
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * x_stride
    y_ptr += row * y_stride
    loss_ptr += row * loss_stride
    dx_ptr += row * dx_stride
    skip = False
    if HAS_LABEL:
        skip = tl.load(label_ptr + row) == ignore_index
    if skip:
        for c0 in range(0, n_cols, BLOCK):
            idx = c0 + tl.arange(0, BLOCK)
            tl.store(dx_ptr + idx, tl.zeros((BLOCK,), dtype=tl.float32), mask=idx < n_cols)
    else:
        for c0 in range(0, n_cols, BLOCK):
            idx = c0 + tl.arange(0, BLOCK)
            inside = idx < n_cols
            ls = tl.load(x_ptr + idx, mask=inside, other=0.0).to(tl.float32)
            lt = tl.load(y_ptr + idx, mask=inside, other=0.0).to(tl.float32)
            if beta == 0.0:
                pt = tl.exp(lt)
                elem = pt * (lt - ls)
                grad = -pt
            elif beta == 1.0:
                ps = tl.exp(ls)
                elem = ps * (ls - lt)
                grad = elem + ps
            else:
                ps = tl.exp(ls)
                pt = tl.exp(lt)
                mix = beta * pt + (1.0 - beta) * ps
                log_mix = tl.log(mix)
                elem = beta * pt * lt + (1.0 - beta) * ps * ls - mix * log_mix
                grad = (1.0 - beta) * ps * (ls - log_mix)
            tl.store(loss_ptr + idx, elem / n_non_ignore, mask=inside)
            tl.store(dx_ptr + idx, grad / n_non_ignore, mask=inside)


# ---- fused recurrent delta rule ---------------------------------------------------------


@triton.heuristics({
    "USE_INITIAL_STATE": lambda args: args["h0"] is not None,
    "STORE_FINAL_STATE": lambda args: args["ht"] is not None,
})
@triton.jit(do_not_specialize=["T"])
def fused_recurrent_delta_kernel(q, k, v, g, beta, o, h0, ht, scale, T, H: tl.constexpr,
                                 K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr,
                                 BV: tl.constexpr, USE_QK_L2NORM: tl.constexpr,
                                 USE_INITIAL_STATE: tl.constexpr, STORE_FINAL_STATE: tl.constexpr):
    # q, k: [B, T, H, K]; v, o: [B, T, H, V]; g, beta: [B, T, H]; h: [B, H, K, V]
    i_v = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    kk = tl.arange(0, BK)
    vv = i_v * BV + tl.arange(0, BV)
    k_in = kk < K
    v_in = vv < V
    kv_in = k_in[:, None] & v_in[None, :]
    # pointers at time step 0 of this (batch, head)
    step_qk = H * K
    step_v = H * V
    qk_off = (i_b * T * H + i_h).to(tl.int64) * K
    v_off = (i_b * T * H + i_h).to(tl.int64) * V
    gb_off = (i_b * T * H + i_h).to(tl.int64)
    state = tl.zeros((BK, BV), dtype=tl.float32)
    st_off = i_bh.to(tl.int64) * K * V + kk[:, None] * V + vv[None, :]
    if USE_INITIAL_STATE:
        state += tl.load(h0 + st_off, mask=kv_in, other=0.0).to(tl.float32)
    for t in range(0, T):
        q_t = tl.load(q + qk_off + kk, mask=k_in, other=0.0).to(tl.float32)
        k_t = tl.load(k + qk_off + kk, mask=k_in, other=0.0).to(tl.float32)
        v_t = tl.load(v + v_off + vv, mask=v_in, other=0.0).to(tl.float32)
        g_t = tl.load(g + gb_off).to(tl.float32)
        b_t = tl.load(beta + gb_off).to(tl.float32)
        if USE_QK_L2NORM:
            q_t = q_t / tl.sqrt(tl.sum(q_t * q_t, axis=0) + 1e-6)
            k_t = k_t / tl.sqrt(tl.sum(k_t * k_t, axis=0) + 1e-6)
        q_t = q_t * scale
        state = state * tl.exp(g_t)
        pred = tl.sum(state * k_t[:, None], axis=0)
        upd = (v_t - pred) * b_t
        state += k_t[:, None] * upd[None, :]
        out_t = tl.sum(state * q_t[:, None], axis=0)
        tl.store(o + v_off + vv, out_t.to(o.dtype.element_ty), mask=v_in)
        qk_off += step_qk
        v_off += step_v
        gb_off += H
    if STORE_FINAL_STATE:
        tl.store(ht + st_off, state.to(ht.dtype.element_ty), mask=kv_in)


# ---- top-p renormalisation --------------------------------------------------------------


@triton.jit
def top_p_renorm_kernel(logits_ptr, top_p_ptr, probs_ptr, n_vocab, stride, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_V)
    mask = cols < n_vocab
    logits = tl.load(logits_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    logits = logits.to(tl.float32)
    e = tl.exp(logits - tl.max(logits, 0))
    p = e / tl.sum(e, 0)
    top_p = tl.load(top_p_ptr + row)
    sorted_p = tl.sort(p, descending=True)
    before = tl.cumsum(sorted_p, 0) - sorted_p
    # the smallest probability still inside the nucleus
    cutoff = tl.min(tl.where(before < top_p, sorted_p, float("inf")), 0)
    kept = tl.where(p >= cutoff, p, 0.0)
    kept = kept / tl.sum(kept, 0)
    tl.store(probs_ptr + row * stride + cols, kept, mask=mask)


# ---- dropout from four random words per offset ------------------------------------------


@triton.jit
def dropout4x_kernel(x_ptr, out_ptr, keep_ptr, n_elements, p, seed, BLOCK: tl.constexpr):
    # offset i draws four words, for elements 4i .. 4i+3
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    r = tl.reshape(tl.join(tl.join(r0, r1), tl.join(r2, r3)), (BLOCK, 4))
    idx = offs[:, None] * 4 + tl.arange(0, 4)[None, :]
    mask = idx < n_elements
    x = tl.load(x_ptr + idx, mask=mask, other=0.0)
    threshold = (p * 4294967296.0).to(tl.uint32)
    keep = r >= threshold
    y = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + idx, y, mask=mask)
    tl.store(keep_ptr + idx, keep, mask=mask)


# ---- float atomics ----------------------------------------------------------------------


@triton.jit
def amax_amin_kernel(x_ptr, amax_ptr, lo_ptr, hi_ptr, n_elements, BLOCK: tl.constexpr):
    # per-tensor scaling statistics gathered by every program at once
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0), sem="relaxed", scope="gpu")
    tl.atomic_min(lo_ptr, tl.min(tl.where(mask, x, float("inf")), axis=0), sem="acq_rel")
    tl.atomic_max(hi_ptr, tl.max(tl.where(mask, x, -float("inf")), axis=0), scope="gpu")
    # and an elementwise one: a running maximum per position across programs
    tl.atomic_max(amax_ptr + 1 + offs % 8, x, mask=mask, sem="relaxed")


# ---- NaN-aware clamps -------------------------------------------------------------------


@triton.jit
def nan_guard_kernel(x_ptr, y_ptr, clamp_ptr, clampn_ptr, maxn_ptr, fixed_ptr, n_elements, lo, hi,
                     big, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(clamp_ptr + offs, tl.clamp(x, lo, hi), mask=mask)
    tl.store(clampn_ptr + offs, tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(maxn_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    # nan_to_num: NaN to 0, infinities to +-big
    inf = libdevice.isinf(x).to(tl.int1)
    neg = libdevice.signbit(x) != 0
    fixed = tl.where(x != x, 0.0, tl.where(inf, tl.where(neg, -big, big), x))
    tl.store(fixed_ptr + offs, fixed, mask=mask)


# ---- 32-bit hashing into buckets --------------------------------------------------------


@triton.jit
def _fmix32(h):
    h ^= h >> 16
    h *= 0x85EBCA6B
    h ^= h >> 13
    h *= 0xC2B2AE35
    h ^= h >> 16
    return h


@triton.jit
def hash_bucket_kernel(keys_ptr, bucket_ptr, counts_ptr, n, num_buckets, seed,
                       NUM_BUCKETS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    key = tl.load(keys_ptr + offs, mask=mask, other=0)
    lo = key.to(tl.uint32)
    hi = (key >> 32).to(tl.uint32)
    h = _fmix32(lo ^ _fmix32(hi + seed.to(tl.uint32)))
    bucket = (h % num_buckets.to(tl.uint32)).to(tl.int32)
    tl.store(bucket_ptr + offs, bucket, mask=mask)
    counts = tl.histogram(bucket, NUM_BUCKETS, mask=mask)
    tl.atomic_add(counts_ptr + tl.arange(0, NUM_BUCKETS), counts)


def var_mean(x, correction=1):
    n_rows, n_cols = x.shape
    mean = x.new_empty(n_rows, dtype=x.dtype)
    var = x.new_empty(n_rows, dtype=x.dtype)
    welford_var_mean_kernel[(triton.cdiv(n_rows, 4),)](x, mean, var, n_rows, n_cols, x.stride(0),
                                                        correction, BLOCK_M=4, BLOCK_N=128)
    return var, mean


def seg_starts(sorted_ids, num_experts):
    seg = sorted_ids.new_empty(num_experts + 1)
    seg_start_search_kernel[(num_experts + 1,)](sorted_ids, seg, sorted_ids.numel())
    return seg
