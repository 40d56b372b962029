"""Kernels that address their tiles through block pointers and tensor
descriptors, written the way Triton's tutorials and torchao's int8 GEMMs
write them: a matmul whose block pointers advance along K, a fused
attention forward pass over block pointers, a persistent matmul over
device-side tensor descriptors, and an int8 GEMM with per-row and
per-column scales."""
import triton
import triton.language as tl


@triton.jit
def matmul_block_ptr_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                            stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            GROUP_M: tl.constexpr):
    # 1-D launch; tiles are visited in bands of GROUP_M tile-rows so that
    # neighbouring programs share rows of A and columns of B
    pid = tl.program_id(0)
    n_tm = tl.cdiv(M, BLOCK_M)
    n_tn = tl.cdiv(N, BLOCK_N)
    band = GROUP_M * n_tn
    band_id = pid // band
    row0 = band_id * GROUP_M
    rows_here = tl.minimum(n_tm - row0, GROUP_M)
    local = pid % band
    tm = row0 + local % rows_here
    tn = local // rows_here
    a_blk = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                              offsets=(tm * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K),
                              order=(1, 0))
    b_blk = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                              offsets=(0, tn * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N),
                              order=(1, 0))
    total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _k in range(0, K, BLOCK_K):
        a_t = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b_t = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        total = tl.dot(a_t, b_t, total)
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
        b_blk = tl.advance(b_blk, (BLOCK_K, 0))
    c_blk = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                              offsets=(tm * BLOCK_M, tn * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                              order=(1, 0))
    tl.store(c_blk, total.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def _attn_tile(acc, l_i, m_i, q, k_blk, v_blk, lo, hi, offs_m, offs_n, qk_scale,
               CAUSAL_DIAG: tl.constexpr, BLOCK_N: tl.constexpr):
    # the key/value block pointers start at `lo` and move BLOCK_N rows a step
    # online softmax in base 2: qk_scale already carries log2(e)
    for start in range(lo, hi, BLOCK_N):
        kt = tl.load(k_blk, boundary_check=(0, 1), padding_option="zero")
        s = tl.dot(q, tl.trans(kt)) * qk_scale
        if CAUSAL_DIAG:
            keep = offs_m[:, None] >= (start + offs_n)[None, :]
            s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        rescale = tl.math.exp2(m_i - m_new)
        l_i = l_i * rescale + tl.sum(p, 1)
        vt = tl.load(v_blk, boundary_check=(0, 1), padding_option="zero")
        acc = acc * rescale[:, None]
        acc = tl.dot(p.to(vt.dtype), vt, acc)
        m_i = m_new
        k_blk = tl.advance(k_blk, (BLOCK_N, 0))
        v_blk = tl.advance(v_blk, (BLOCK_N, 0))
    return acc, l_i, m_i


@triton.jit
def attn_fwd_block_ptr(Q, K, V, sm_scale, M, Out,
                       stride_qz, stride_qh, stride_qm, stride_qk,
                       stride_kz, stride_kh, stride_kn, stride_kk,
                       stride_vz, stride_vh, stride_vk, stride_vn,
                       stride_oz, stride_oh, stride_om, stride_on,
                       Z, H, N_CTX,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       CAUSAL: tl.constexpr):
    # grid: (query blocks, Z * H); M receives the base-2 log-sum-exp per row
    qb = tl.program_id(0)
    zh = tl.program_id(1)
    z_i = zh // H
    h_i = zh % H
    q_base = Q + z_i.to(tl.int64) * stride_qz + h_i.to(tl.int64) * stride_qh
    k_base = K + z_i.to(tl.int64) * stride_kz + h_i.to(tl.int64) * stride_kh
    v_base = V + z_i.to(tl.int64) * stride_vz + h_i.to(tl.int64) * stride_vh
    o_base = Out + z_i.to(tl.int64) * stride_oz + h_i.to(tl.int64) * stride_oh
    row0 = qb * BLOCK_M
    q_blk = tl.make_block_ptr(base=q_base, shape=(N_CTX, HEAD_DIM), strides=(stride_qm, stride_qk),
                              offsets=(row0, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    k_blk = tl.make_block_ptr(base=k_base, shape=(N_CTX, HEAD_DIM), strides=(stride_kn, stride_kk),
                              offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))
    v_blk = tl.make_block_ptr(base=v_base, shape=(N_CTX, HEAD_DIM), strides=(stride_vk, stride_vn),
                              offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))
    o_blk = tl.make_block_ptr(base=o_base, shape=(N_CTX, HEAD_DIM), strides=(stride_om, stride_on),
                              offsets=(row0, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    offs_m = row0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    q = tl.load(q_blk, boundary_check=(0, 1), padding_option="zero")
    if CAUSAL:
        # blocks fully below the diagonal, then the diagonal block with a mask
        acc, l_i, m_i = _attn_tile(acc, l_i, m_i, q, k_blk, v_blk, 0, row0, offs_m, offs_n,
                                   qk_scale, False, BLOCK_N)
        k_d = tl.advance(k_blk, (row0, 0))
        v_d = tl.advance(v_blk, (row0, 0))
        acc, l_i, m_i = _attn_tile(acc, l_i, m_i, q, k_d, v_d, row0, row0 + BLOCK_M, offs_m,
                                   offs_n, qk_scale, True, BLOCK_N)
    else:
        acc, l_i, m_i = _attn_tile(acc, l_i, m_i, q, k_blk, v_blk, 0, N_CTX, offs_m, offs_n,
                                   qk_scale, False, BLOCK_N)
    out = acc / l_i[:, None]
    lse2 = m_i + tl.math.log2(l_i)
    m_ptrs = M + zh.to(tl.int64) * N_CTX + offs_m
    tl.store(m_ptrs, lse2, mask=offs_m < N_CTX)
    tl.store(o_blk, out.to(Out.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def persistent_desc_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           NUM_SMS: tl.constexpr):
    # descriptors built on the device over row-major A (M, K), B (K, N), C (M, N)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1],
                                       block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS):
        om = (tile // tiles_n) * BLOCK_M
        on = (tile % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_steps):
            ok = ki * BLOCK_K
            a = a_desc.load([om, ok])
            b = b_desc.load([ok, on])
            acc = tl.dot(a, b, acc)
        c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def int8_scaled_mm_kernel(a_ptr, b_ptr, row_scale_ptr, col_scale_ptr, c_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # int8 x int8 accumulated in int32, then scaled per row of A and per
    # column of B into the output dtype
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak), (pid_m * BLOCK_M, 0),
                             (BLOCK_M, BLOCK_K), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, pid_n * BLOCK_N),
                             (BLOCK_K, BLOCK_N), (0, 1))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for _ in range(tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b, out_dtype=tl.int32)
        a_bp = tl.advance(a_bp, (0, BLOCK_K))
        b_bp = tl.advance(b_bp, (BLOCK_K, 0))
    rs_bp = tl.make_block_ptr(row_scale_ptr, (M,), (1,), (pid_m * BLOCK_M,), (BLOCK_M,), (0,))
    cs_bp = tl.make_block_ptr(col_scale_ptr, (N,), (1,), (pid_n * BLOCK_N,), (BLOCK_N,), (0,))
    rs = tl.load(rs_bp, boundary_check=(0,), padding_option="zero")
    cs = tl.load(cs_bp, boundary_check=(0,), padding_option="zero")
    out = acc.to(tl.float32) * rs[:, None] * cs[None, :]
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, stride_cn), (pid_m * BLOCK_M, pid_n * BLOCK_N),
                             (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_bp, out.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def desc_add_rows(x_ptr, y_ptr, out_ptr, acc_ptr, R, C, BLOCK_R: tl.constexpr,
                  BLOCK_C: tl.constexpr):
    # out = x + y tile by tile through descriptors; every tile also adds its
    # x into acc (a descriptor atomic); ragged edges are dropped on store
    x_d = tl.make_tensor_descriptor(x_ptr, [R, C], [C, 1], [BLOCK_R, BLOCK_C])
    y_d = tl.make_tensor_descriptor(y_ptr, [R, C], [C, 1], [BLOCK_R, BLOCK_C])
    o_d = tl.make_tensor_descriptor(out_ptr, [R, C], [C, 1], [BLOCK_R, BLOCK_C])
    a_d = tl.make_tensor_descriptor(acc_ptr, [R, C], [C, 1], [BLOCK_R, BLOCK_C])
    r0 = tl.program_id(0) * BLOCK_R
    c0 = tl.program_id(1) * BLOCK_C
    x = x_d.load([r0, c0])
    o_d.store([r0, c0], x + y_d.load([r0, c0]))
    a_d.atomic_add([r0, c0], x)
