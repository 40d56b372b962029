"""More index-heavy kernels: a reverse-time chunk recurrence over a block
pointer that steps backwards, tiles sized by a constexpr tuple, 3-D tensor
descriptors reshaped into 2-D tiles, a split reduction whose last program
finishes the sum, a chunked linear scan through tuple combines, a causal
depthwise conv1d unrolled over its taps, 3-D block pointers and a
while-loop attention over a sliding window."""
import triton
import triton.language as tl


@triton.jit
def reverse_chunk_state_kernel(k_ptr, v_ptr, dh_ptr, T, decay,
                               K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
    # backward-style recurrence: chunks from last to first, the state
    # leaving each chunk written before the chunk's own keys and values join
    i_b = tl.program_id(0)
    NT = tl.cdiv(T, BT)
    p_k = tl.make_block_ptr(k_ptr + i_b * T * K, (T, K), (K, 1), ((NT - 1) * BT, 0), (BT, K), (1, 0))
    p_v = tl.make_block_ptr(v_ptr + i_b * T * V, (T, V), (V, 1), ((NT - 1) * BT, 0), (BT, V), (1, 0))
    b_dh = tl.zeros([K, V], dtype=tl.float32)
    for i_t in range(NT - 1, -1, -1):
        p_dh = tl.make_block_ptr(dh_ptr + (i_b * NT + i_t) * K * V, (K, V), (V, 1), (0, 0),
                                 (K, V), (1, 0))
        tl.store(p_dh, b_dh)
        b_k = tl.load(p_k, boundary_check=(0,), padding_option="zero")
        b_v = tl.load(p_v, boundary_check=(0,), padding_option="zero")
        b_dh = b_dh * decay + tl.dot(tl.trans(b_k), b_v, allow_tf32=False)
        p_k = tl.advance(p_k, (-BT, 0))
        p_v = tl.advance(p_v, (-BT, 0))


@triton.jit
def tile_stats_kernel(x_ptr, rmax_ptr, ridx_ptr, rsuffix_ptr, M, N, stride_m,
                      BLOCK: tl.constexpr):
    # BLOCK is a (rows, cols) tuple: per row, the max and its column, and
    # the suffix sums along the row
    tl.static_assert(len(BLOCK) == 2)
    BM: tl.constexpr = BLOCK[0]
    BN: tl.constexpr = BLOCK[1]
    pid = tl.program_id(axis=0)
    rows = pid * BM + tl.arange(0, BLOCK[0])
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=float("-inf"))
    mx, idx = tl.max(x, axis=1, return_indices=True)
    x0 = tl.where(mask, x, 0.0)
    suffix = tl.cumsum(x0, axis=1, reverse=True)
    rmask = rows < M
    tl.store(rmax_ptr + rows, mx, mask=rmask)
    tl.store(ridx_ptr + rows, idx, mask=rmask)
    tl.store(rsuffix_ptr + rows[:, None] * N + cols[None, :], suffix, mask=mask)


@triton.jit
def desc_scores_kernel(q_ptr, k_ptr, s_ptr, T, scale, D: tl.constexpr, BT: tl.constexpr):
    # q, k: [heads, T, D] through 3-D descriptors whose blocks are one head's
    # BT rows; the scores tile goes out through a 3-D descriptor too
    bh = tl.program_id(0)
    tm = tl.program_id(1)
    tn = tl.program_id(2)
    H = tl.num_programs(0)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[H, T, D], strides=[T * D, D, 1],
                                       block_shape=[1, BT, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[H, T, D], strides=[T * D, D, 1],
                                       block_shape=[1, BT, D])
    s_desc = tl.make_tensor_descriptor(s_ptr, shape=[H, T, T], strides=[T * T, T, 1],
                                       block_shape=[1, BT, BT])
    q = q_desc.load([bh, tm * BT, 0]).reshape(BT, D)
    k = k_desc.load([bh, tn * BT, 0]).reshape(BT, D)
    s = tl.dot(q, k.T) * scale
    s_desc.store([bh, tm * BT, tn * BT], s.reshape(1, BT, BT))


@triton.jit
def split_sum_kernel(x_ptr, partial_ptr, counter_ptr, out_ptr, N, BLOCK: tl.constexpr,
                     MAX_PROGRAMS: tl.constexpr):
    # each program sums its slice; the program that finds the counter at
    # num_programs - 1 is the last one and adds the partial sums in order
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, N, nprog * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))
    done = tl.atomic_add(counter_ptr, 1, sem="acq_rel")
    if done == nprog - 1:
        p = tl.arange(0, MAX_PROGRAMS)
        parts = tl.load(partial_ptr + p, mask=p < nprog, other=0.0, volatile=True)
        tl.store(out_ptr, tl.sum(parts, axis=0))
        tl.store(counter_ptr, 0)


@triton.jit
def _linear_combine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def _argmax_combine(v1, i1, v2, i2):
    take = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take, v1, v2), tl.where(take, i1, i2)


@triton.jit
def chunk_scan_kernel(a_ptr, x_ptr, h_ptr, best_ptr, best_t_ptr, T, C,
                      BT: tl.constexpr, BC: tl.constexpr):
    # h_t = a_t * h_{t-1} + x_t per channel, BT steps a chunk through an
    # associative scan, the carry from chunk to chunk in a loop; then the
    # step of each channel's largest h through a tuple reduce
    pid_c = tl.program_id(0)
    offs_c = pid_c * BC + tl.arange(0, BC)
    cmask = offs_c < C
    carry = tl.zeros([BC], dtype=tl.float32)
    best = tl.full([BC], float("-inf"), tl.float32)
    best_t = tl.zeros([BC], dtype=tl.int32)
    for t0 in range(0, T, BT):
        offs_t = t0 + tl.arange(0, BT)
        m = (offs_t[:, None] < T) & cmask[None, :]
        a = tl.load(a_ptr + offs_t[:, None] * C + offs_c[None, :], mask=m, other=1.0)
        x = tl.load(x_ptr + offs_t[:, None] * C + offs_c[None, :], mask=m, other=0.0)
        a_cum, h = tl.associative_scan((a, x), axis=0, combine_fn=_linear_combine)
        h = h + a_cum * carry[None, :]
        tl.store(h_ptr + offs_t[:, None] * C + offs_c[None, :], h, mask=m)
        carry = tl.sum(tl.where(offs_t[:, None] == tl.minimum(T, t0 + BT) - 1, h, 0.0), axis=0)
        t_idx = tl.broadcast_to(offs_t[:, None], (BT, BC))
        hv = tl.where(m, h, float("-inf"))
        cb, ct = tl.reduce((hv, t_idx), 0, _argmax_combine)
        better = cb > best
        best = tl.where(better, cb, best)
        best_t = tl.where(better, ct, best_t)
    tl.store(best_ptr + offs_c, best, mask=cmask)
    tl.store(best_t_ptr + offs_c, best_t, mask=cmask)


@triton.jit
def causal_conv1d_kernel(x_ptr, w_ptr, bias_ptr, init_state_ptr, out_ptr, seqlen, dim,
                         stride_x_b, stride_x_d, stride_x_t,
                         WIDTH: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
                         HAS_BIAS: tl.constexpr, HAS_INIT: tl.constexpr, SILU: tl.constexpr):
    # depthwise causal conv over time, x: [batch, dim, seqlen] (any strides);
    # the WIDTH - 1 steps before t = 0 come from init_state [batch, dim,
    # WIDTH - 1] or are zero
    pid_t, pid_d, pid_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    dmask = offs_d < dim
    acc = tl.zeros((BLOCK_T, BLOCK_D), dtype=tl.float32)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + offs_d, mask=dmask, other=0.0).to(tl.float32)[None, :]
    x_base = x_ptr + pid_b.to(tl.int64) * stride_x_b
    for i in tl.static_range(WIDTH):
        src_t = offs_t - (WIDTH - 1) + i
        w = tl.load(w_ptr + offs_d * WIDTH + i, mask=dmask, other=0.0).to(tl.float32)
        xm = (src_t[:, None] >= 0) & (src_t[:, None] < seqlen) & dmask[None, :]
        xv = tl.load(x_base + src_t[:, None] * stride_x_t + offs_d[None, :] * stride_x_d,
                     mask=xm, other=0.0).to(tl.float32)
        if HAS_INIT:
            sm = (src_t[:, None] < 0) & dmask[None, :]
            s_off = (pid_b * dim + offs_d[None, :]) * (WIDTH - 1) + (WIDTH - 1) + src_t[:, None]
            xv += tl.load(init_state_ptr + s_off, mask=sm, other=0.0).to(tl.float32)
        acc += xv * w[None, :]
    if SILU:
        acc = acc * tl.sigmoid(acc)
    om = (offs_t[:, None] < seqlen) & dmask[None, :]
    tl.store(out_ptr + pid_b * stride_x_b + offs_t[:, None] * stride_x_t + offs_d[None, :] * stride_x_d,
             acc, mask=om)


@triton.jit
def block_ptr_3d_kernel(x_ptr, y_ptr, B, R, C, BB: tl.constexpr, BR: tl.constexpr,
                        BC: tl.constexpr):
    # y[b, c, r] = x[b, r, c] * 2 over ragged rows and columns, both sides
    # through 3-D block pointers; the y pointer has a transposed order
    pid_b, pid_r, pid_c = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    px = tl.make_block_ptr(x_ptr, shape=(B, R, C), strides=(R * C, C, 1),
                           offsets=(pid_b * BB, pid_r * BR, pid_c * BC),
                           block_shape=(BB, BR, BC), order=(2, 1, 0))
    py = tl.make_block_ptr(y_ptr, shape=(B, C, R), strides=(R * C, R, 1),
                           offsets=(pid_b * BB, pid_c * BC, pid_r * BR),
                           block_shape=(BB, BC, BR), order=(2, 1, 0))
    x = tl.load(px, boundary_check=(1, 2), padding_option="zero")
    tl.store(py, tl.trans(x, (0, 2, 1)) * 2, boundary_check=(1, 2))


@triton.jit
def _window_bounds(q_idx, window, BLOCK_N: tl.constexpr):
    lo = tl.maximum(q_idx - window + 1, 0)
    return lo // BLOCK_N * BLOCK_N, q_idx + 1


@triton.jit
def window_decode_kernel(q_ptr, k_ptr, v_ptr, o_ptr, q_pos_ptr, window, scale,
                         D: tl.constexpr, BLOCK_N: tl.constexpr):
    # one query per program at a loaded position, attending to the keys in
    # (pos - window, pos]; the key loop is a while over a carried tuple
    pid = tl.program_id(0)
    pos = tl.load(q_pos_ptr + pid)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + pid * D + offs_d)
    start, end = _window_bounds(pos, window, BLOCK_N)
    state = (tl.full((), float("-inf"), tl.float32), tl.full((), 0.0, tl.float32),
             tl.zeros([D], dtype=tl.float32))
    n = start
    while n < end:
        offs_n = n + tl.arange(0, BLOCK_N)
        keep = (offs_n <= pos) & (offs_n > pos - window)
        k = tl.load(k_ptr + offs_n[:, None] * D + offs_d[None, :], mask=keep[:, None], other=0.0)
        v = tl.load(v_ptr + offs_n[:, None] * D + offs_d[None, :], mask=keep[:, None], other=0.0)
        s = tl.where(keep, tl.sum(q[None, :] * k, axis=1) * scale, float("-inf"))
        m, l, acc = state
        m_new = tl.maximum(m, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m - m_new)
        state = (m_new, l * alpha + tl.sum(p, axis=0), acc * alpha + tl.sum(p[:, None] * v, axis=0))
        n += BLOCK_N
    m, l, acc = state
    tl.store(o_ptr + pid * D + offs_d, acc / l)
