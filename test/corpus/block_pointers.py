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
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    # grouped ordering: GROUP_M rows of tiles share their B panels in L2
    width = GROUP_M * grid_n
    group = pid // width
    first_m = group * GROUP_M
    rows = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % rows
    pid_n = (pid % width) // rows

    a_blk = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                              offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K),
                              order=(1, 0))
    b_blk = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                              offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N),
                              order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
        b_blk = tl.advance(b_blk, (BLOCK_K, 0))
    c_blk = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                              offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(c_blk, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def _attn_tile(acc, l_i, m_i, q, k_blk, v_blk, lo, hi, offs_m, offs_n, qk_scale,
               CAUSAL_DIAG: tl.constexpr, BLOCK_N: tl.constexpr):
    # the key/value block pointers start at `lo` and move BLOCK_N rows a step
    k_blk = tl.advance(k_blk, (0, lo))
    v_blk = tl.advance(v_blk, (lo, 0))
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_blk)
        qk = tl.dot(q, k)
        if CAUSAL_DIAG:
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_blk)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        k_blk = tl.advance(k_blk, (0, BLOCK_N))
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
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_off = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_off = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_off = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_off = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh

    q_blk = tl.make_block_ptr(Q + q_off, (N_CTX, HEAD_DIM), (stride_qm, stride_qk),
                              (start_m * BLOCK_M, 0), (BLOCK_M, HEAD_DIM), (1, 0))
    # K is read transposed: a (HEAD_DIM, BLOCK_N) tile of the (HEAD_DIM, N_CTX) view
    k_blk = tl.make_block_ptr(K + k_off, (HEAD_DIM, N_CTX), (stride_kk, stride_kn),
                              (0, 0), (HEAD_DIM, BLOCK_N), (0, 1))
    v_blk = tl.make_block_ptr(V + v_off, (N_CTX, HEAD_DIM), (stride_vk, stride_vn),
                              (0, 0), (BLOCK_N, HEAD_DIM), (1, 0))
    o_blk = tl.make_block_ptr(Out + o_off, (N_CTX, HEAD_DIM), (stride_om, stride_on),
                              (start_m * BLOCK_M, 0), (BLOCK_M, HEAD_DIM), (1, 0))

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # exp(x) = exp2(x * log2(e))
    q = tl.load(q_blk)
    if CAUSAL:
        # the blocks left of the diagonal, then the diagonal block with its mask
        acc, l_i, m_i = _attn_tile(acc, l_i, m_i, q, k_blk, v_blk, 0, start_m * BLOCK_M,
                                   offs_m, offs_n, qk_scale, False, BLOCK_N)
        acc, l_i, m_i = _attn_tile(acc, l_i, m_i, q, k_blk, v_blk, start_m * BLOCK_M,
                                   (start_m + 1) * BLOCK_M, offs_m, offs_n, qk_scale, True,
                                   BLOCK_N)
    else:
        acc, l_i, m_i = _attn_tile(acc, l_i, m_i, q, k_blk, v_blk, 0, N_CTX,
                                   offs_m, offs_n, qk_scale, False, BLOCK_N)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(o_blk, acc.to(Out.type.element_ty))


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
