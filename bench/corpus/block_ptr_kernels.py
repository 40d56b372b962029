"""Kernels that address every tile through block pointers
(`tl.make_block_ptr`, `tl.advance`, `boundary_check=`, `padding_option=`)
instead of blocks of pointers and masks, as the libraries that adopted them
write it: a GEMM on a 1-D grid in GROUP_M order whose A and B pointers
advance along K; the older fused-attention forward pass, K read through a
transposed (order=(0, 1)) view; a flash-linear-attention chunk output
kernel that combines the inter-chunk state q @ h with the masked intra-chunk
q @ k^T @ v; and an RMSNorm that walks a wide row with a 1-D block pointer
in two passes."""
import torch
import triton
import triton.language as tl


# ---- GEMM --------------------------------------------------------------------------------

@triton.jit
def matmul_block_ptr_grouped(a_ptr, b_ptr, c_ptr, M, N, K,
                             stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # consecutive programs sweep GROUP_M tile rows column by column, so the
    # B panel a column needs is read once from DRAM for the whole group
    per_group = GROUP_M * tiles_n
    group_id = pid // per_group
    group_first = group_id * GROUP_M
    group_rows = min(tiles_m - group_first, GROUP_M)
    in_group = pid % per_group
    pid_m = group_first + in_group % group_rows
    pid_n = in_group // group_rows

    a_tile = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                               offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K),
                               order=(1, 0))
    b_tile = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                               offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N),
                               order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        # zero padding matters on the last K step and the ragged M/N edges:
        # what lies past the shape must add nothing to the dot
        a = tl.load(a_tile, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_tile, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b)
        a_tile = tl.advance(a_tile, (0, BLOCK_K))
        b_tile = tl.advance(b_tile, (BLOCK_K, 0))

    c_tile = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                               offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                               block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(c_tile, acc.to(tl.float16), boundary_check=(0, 1))


def matmul(a, b, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_block_ptr_grouped[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                   b.stride(1), c.stride(0), c.stride(1), BLOCK_M=BLOCK_M,
                                   BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                                   num_warps=8, num_stages=3)
    return c


# ---- attention forward -----------------------------------------------------------------------

@triton.jit
def attn_fwd_block_ptr(Q, K, V, sm_scale, Out,
                       stride_qz, stride_qh, stride_qm, stride_qk,
                       stride_kz, stride_kh, stride_kn, stride_kk,
                       stride_vz, stride_vh, stride_vk, stride_vn,
                       stride_oz, stride_oh, stride_om, stride_on,
                       Z, H, N_CTX,
                       BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    # q, k, v and o share one (z, h, seq, d) layout, so one head offset serves all four
    head_off = off_hz * stride_qh
    q_blk = tl.make_block_ptr(base=Q + head_off, shape=(N_CTX, BLOCK_DMODEL),
                              strides=(stride_qm, stride_qk), offsets=(start_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_DMODEL), order=(1, 0))
    # K^T as a (d, seq) view with the d axis fastest: the dot takes it as it is loaded
    kt_blk = tl.make_block_ptr(base=K + head_off, shape=(BLOCK_DMODEL, N_CTX),
                               strides=(stride_kk, stride_kn), offsets=(0, 0),
                               block_shape=(BLOCK_DMODEL, BLOCK_N), order=(0, 1))
    v_blk = tl.make_block_ptr(base=V + head_off, shape=(N_CTX, BLOCK_DMODEL),
                              strides=(stride_vk, stride_vn), offsets=(0, 0),
                              block_shape=(BLOCK_N, BLOCK_DMODEL), order=(1, 0))
    # the softmax runs in base 2: fold log2(e) into the scale once
    qk_scale = sm_scale * 1.44269504
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    q = tl.load(q_blk)
    for start_n in range(0, N_CTX, BLOCK_N):
        kt = tl.load(kt_blk)
        qk = tl.dot(q, kt)
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_new[:, None])
        # rescale what was summed under the old running maximum
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_blk)
        acc += tl.dot(p.to(tl.float16), v)
        m_i = m_new
        kt_blk = tl.advance(kt_blk, (0, BLOCK_N))
        v_blk = tl.advance(v_blk, (BLOCK_N, 0))
    acc = acc / l_i[:, None]
    o_blk = tl.make_block_ptr(base=Out + head_off, shape=(N_CTX, BLOCK_DMODEL),
                              strides=(stride_om, stride_on), offsets=(start_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_DMODEL), order=(1, 0))
    tl.store(o_blk, acc.to(tl.float16))


def attention(q, k, v, sm_scale, BLOCK_M=128, BLOCK_N=64):
    Z, H, N_CTX, D = q.shape
    assert N_CTX % BLOCK_M == 0 and N_CTX % BLOCK_N == 0, "no masking: whole tiles only"
    o = torch.empty_like(q)
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H)
    attn_fwd_block_ptr[grid](q, k, v, sm_scale, o, *q.stride(), *k.stride(), *v.stride(),
                             *o.stride(), Z, H, N_CTX, BLOCK_M=BLOCK_M, BLOCK_DMODEL=D,
                             BLOCK_N=BLOCK_N, num_warps=4, num_stages=3)
    return o


# ---- chunked linear attention: the output of each chunk ---------------------------------------

@triton.jit
def chunk_fwd_o_block_ptr(q, k, v, h, o, s_qk_h, s_qk_t, s_qk_d, s_vo_h, s_vo_t, s_vo_d,
                          s_h_h, s_h_t, scale, T,
                          K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                          BK: tl.constexpr, BV: tl.constexpr):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    # q h (inter-chunk) and q k^T (intra-chunk) both reduce over K, one BK slice at a time
    p_q = tl.make_block_ptr(q + i_bh * s_qk_h, (T, K), (s_qk_t, s_qk_d), (i_t * BT, 0),
                            (BT, BK), (1, 0))
    p_kt = tl.make_block_ptr(k + i_bh * s_qk_h, (K, T), (s_qk_d, s_qk_t), (0, i_t * BT),
                             (BK, BT), (0, 1))
    p_h = tl.make_block_ptr(h + i_bh * s_h_h + i_t * K * V, (K, V), (s_h_t, 1),
                            (0, i_v * BV), (BK, BV), (1, 0))
    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_s = tl.zeros([BT, BT], dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        b_q = tl.load(p_q, boundary_check=(0, 1), padding_option="zero")
        b_kt = tl.load(p_kt, boundary_check=(0, 1), padding_option="zero")
        b_h = tl.load(p_h, boundary_check=(0, 1), padding_option="zero")
        b_o += tl.dot(b_q, b_h)
        b_s += tl.dot(b_q, b_kt)
        p_q = tl.advance(p_q, (0, BK))
        p_kt = tl.advance(p_kt, (BK, 0))
        p_h = tl.advance(p_h, (BK, 0))
    o_t = tl.arange(0, BT)
    b_s = tl.where(o_t[:, None] >= o_t[None, :], b_s, 0.)
    p_v = tl.make_block_ptr(v + i_bh * s_vo_h, (T, V), (s_vo_t, s_vo_d), (i_t * BT, i_v * BV),
                            (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1), padding_option="zero")
    b_o = (b_o + tl.dot(b_s.to(b_v.dtype), b_v)) * scale
    p_o = tl.make_block_ptr(o + i_bh * s_vo_h, (T, V), (s_vo_t, s_vo_d), (i_t * BT, i_v * BV),
                            (BT, BV), (1, 0))
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


def chunk_fwd_o(q, k, v, h, scale, BT=64, BK=64, BV=64):
    BH, T, K = q.shape
    V = v.shape[-1]
    NT = triton.cdiv(T, BT)
    o = torch.empty_like(v)
    grid = (triton.cdiv(V, BV), NT, BH)
    chunk_fwd_o_block_ptr[grid](q, k, v, h, o, q.stride(0), q.stride(1), q.stride(2),
                                v.stride(0), v.stride(1), v.stride(2), h.stride(0), h.stride(2),
                                scale, T, K=K, V=V, BT=BT, BK=BK, BV=BV, num_warps=4,
                                num_stages=2)
    return o


# ---- RMSNorm over a wide row ------------------------------------------------------------------

@triton.jit
def rmsnorm_block_ptr_loop(X, Y, W, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    # the row is too wide for one block: pass 1 sums squares block by block
    x_blk = tl.make_block_ptr(base=X + row * stride_x, shape=(N,), strides=(1,), offsets=(0,),
                              block_shape=(BLOCK_N,), order=(0,))
    sq = tl.zeros([BLOCK_N], dtype=tl.float32)
    for _ in range(0, N, BLOCK_N):
        x = tl.load(x_blk, boundary_check=(0,), padding_option="zero").to(tl.float32)
        sq += x * x
        x_blk = tl.advance(x_blk, (BLOCK_N,))
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)

    # pass 2 rereads the row (mostly from L2) to normalise and scale it
    x_blk = tl.make_block_ptr(base=X + row * stride_x, shape=(N,), strides=(1,), offsets=(0,),
                              block_shape=(BLOCK_N,), order=(0,))
    w_blk = tl.make_block_ptr(base=W, shape=(N,), strides=(1,), offsets=(0,),
                              block_shape=(BLOCK_N,), order=(0,))
    y_blk = tl.make_block_ptr(base=Y + row * stride_y, shape=(N,), strides=(1,), offsets=(0,),
                              block_shape=(BLOCK_N,), order=(0,))
    for _ in range(0, N, BLOCK_N):
        x = tl.load(x_blk, boundary_check=(0,), padding_option="zero").to(tl.float32)
        w = tl.load(w_blk, boundary_check=(0,), padding_option="zero").to(tl.float32)
        y = x * rstd * w
        tl.store(y_blk, y.to(Y.dtype.element_ty), boundary_check=(0,))
        x_blk = tl.advance(x_blk, (BLOCK_N,))
        w_blk = tl.advance(w_blk, (BLOCK_N,))
        y_blk = tl.advance(y_blk, (BLOCK_N,))


def rmsnorm(x, w, eps=1e-6, BLOCK_N=2048):
    M, N = x.shape
    y = torch.empty_like(x)
    rmsnorm_block_ptr_loop[(M,)](x, y, w, x.stride(0), y.stride(0), N, eps, BLOCK_N=BLOCK_N,
                                 num_warps=8)
    return y
