"""Kernels that build their tensor descriptors inside the kernel
(tl.make_tensor_descriptor) and read and write whole tiles through them
(desc.load / desc.store), as Triton 3.x's persistent-matmul and
fused-attention tutorials and newer library kernels do:

- matmul_desc_device: fp16 GEMM C = A @ B^T with B kept [N, K] (K-major),
  one program per output tile in grouped order, fp32 accumulator, C written
  through its descriptor;
- matmul_desc_persistent: the same GEMM as a persistent kernel, NUM_SMS
  programs striding over the tiles in one flattened tl.range;
- grouped_gemm_desc: a grouped (MoE-style) bf16 GEMM whose groups' operand
  addresses and sizes come from device tables, so each group's descriptors
  are made from loaded pointers; a fixed number of programs share the
  groups' tiles round-robin;
- bmm_desc_persistent: a batched fp16 GEMM as a persistent kernel whose
  2-D descriptors over one batch's matrices are made again when the tile
  loop reaches the next batch (descriptors a loop carries);
- attn_fwd_desc: non-causal attention forward over [Z*H*N_CTX, HEAD_DIM]
  row-major Q, K, V, O with an online softmax in base 2; it also writes
  each row's log2-sum-exp2 (what the backward pass reads).

A descriptor's shape bounds every access (reads past it give zero, writes
past it are dropped), so the GEMMs take ragged M, N and K (TMA wants
16-byte row strides: N and K multiples of 8); the attention kernel wants
N_CTX a multiple of BLOCK_M and BLOCK_N, since its descriptors span all
heads. On Triton the host must give the runtime a global-memory
allocator (triton.set_allocator) for the descriptors built on the device.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # GROUP_M rows of tiles are walked column by column, so that the programs
    # running together share A's row panels and B's column panels in L2
    per_group = GROUP_M * num_pid_n
    first_m = (tile // per_group) * GROUP_M
    rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    local = tile % per_group
    return first_m + local % rows, local // rows


@triton.jit
def matmul_desc_device(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    pid_m, pid_n = _grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N),
                                 GROUP_M)
    row = pid_m * BLOCK_M
    col = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in tl.range(0, tl.cdiv(K, BLOCK_K)):
        kk = kt * BLOCK_K
        a = a_desc.load([row, kk])
        b = b_desc.load([col, kk])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([row, col], acc.to(c_desc.dtype))


@triton.jit
def matmul_desc_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                           NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1],
                                       block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    n_tiles = num_pid_m * num_pid_n
    for tile in tl.range(tl.program_id(0), n_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M)
        row = pid_m * BLOCK_M
        col = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kt in range(k_steps):
            a = a_desc.load([row, kt * BLOCK_K])
            b = b_desc.load([col, kt * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([row, col], acc.to(c_desc.dtype))


@triton.jit
def bmm_desc_persistent(a_ptr, b_ptr, c_ptr, BATCH, M, N, K, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    per_batch = num_pid_m * num_pid_n
    k_steps = tl.cdiv(K, BLOCK_K)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    batch = 0
    for tile in tl.range(tl.program_id(0), BATCH * per_batch, NUM_SMS):
        z = tile // per_batch
        if z != batch:
            batch = z
            zl = z.to(tl.int64)
            a_desc = tl.make_tensor_descriptor(a_ptr + zl * M * K, [M, K], [K, 1],
                                               [BLOCK_M, BLOCK_K])
            b_desc = tl.make_tensor_descriptor(b_ptr + zl * N * K, [N, K], [K, 1],
                                               [BLOCK_N, BLOCK_K])
            c_desc = tl.make_tensor_descriptor(c_ptr + zl * M * N, [M, N], [N, 1],
                                               [BLOCK_M, BLOCK_N])
        rest = tile % per_batch
        row = (rest // num_pid_n) * BLOCK_M
        col = (rest % num_pid_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kt in range(k_steps):
            a = a_desc.load([row, kt * BLOCK_K])
            b = b_desc.load([col, kt * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([row, col], acc.to(c_desc.dtype))


@triton.jit
def grouped_gemm_desc(a_table, b_table, c_table, dims, n_groups, NUM_PROGRAMS: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # group g: C_g [M_g, N_g] = A_g [M_g, K_g] @ B_g^T, B_g kept [N_g, K_g];
    # dims holds (M_g, N_g, K_g) per group, the tables the three addresses
    pid = tl.program_id(0)
    done = 0  # tiles of the groups before g
    for g in range(n_groups):
        m = tl.load(dims + 3 * g)
        n = tl.load(dims + 3 * g + 1)
        k = tl.load(dims + 3 * g + 2)
        a_ptr = tl.load(a_table + g).to(tl.pointer_type(tl.bfloat16))
        b_ptr = tl.load(b_table + g).to(tl.pointer_type(tl.bfloat16))
        c_ptr = tl.load(c_table + g).to(tl.pointer_type(tl.bfloat16))
        a_desc = tl.make_tensor_descriptor(a_ptr, [m, k], [k, 1], [BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b_ptr, [n, k], [k, 1], [BLOCK_N, BLOCK_K])
        c_desc = tl.make_tensor_descriptor(c_ptr, [m, n], [n, 1], [BLOCK_M, BLOCK_N])
        n_tiles_n = tl.cdiv(n, BLOCK_N)
        n_tiles = tl.cdiv(m, BLOCK_M) * n_tiles_n
        # global tile done + t goes to program (done + t) % NUM_PROGRAMS
        first = (pid - done % NUM_PROGRAMS + NUM_PROGRAMS) % NUM_PROGRAMS
        for t in range(first, n_tiles, NUM_PROGRAMS):
            row = (t // n_tiles_n) * BLOCK_M
            col = (t % n_tiles_n) * BLOCK_N
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_K)):
                a = a_desc.load([row, kk * BLOCK_K])
                b = b_desc.load([col, kk * BLOCK_K])
                acc = tl.dot(a, b.T, acc)
            c_desc.store([row, col], acc.to(tl.bfloat16))
        done += n_tiles


@triton.jit
def _attn_kv_sweep(acc, l_i, m_i, q, k_desc, v_desc, kv_row, N_CTX, qk_scale,
                   BLOCK_N: tl.constexpr, dtype: tl.constexpr):
    # one pass over this head's keys; m_i is the running row maximum of the
    # scores in log2 units, l_i the running sum of exp2(score - m_i)
    for start in tl.range(0, N_CTX, BLOCK_N):
        k = k_desc.load([kv_row + start, 0])
        s = tl.dot(q, k.T)
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        corr = tl.math.exp2(m_i - m_new)
        l_i = l_i * corr + tl.sum(p, 1)
        v = v_desc.load([kv_row + start, 0])
        acc = tl.dot(p.to(dtype), v, acc * corr[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attn_fwd_desc(Q, K, V, Out, LSE, sm_scale, Z, H, N_CTX, HEAD_DIM: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    rows = Z * H * N_CTX
    q_desc = tl.make_tensor_descriptor(Q, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(K, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(V, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(Out, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    dtype = Out.dtype.element_ty
    kv_row = off_hz * N_CTX                 # this head's first row
    q_row = kv_row + start_m * BLOCK_M      # this program's first query row
    qk_scale = sm_scale * 1.4426950408889634  # scores to log2 units
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = q_desc.load([q_row, 0])
    acc, l_i, m_i = _attn_kv_sweep(acc, l_i, m_i, q, k_desc, v_desc, kv_row, N_CTX, qk_scale,
                                   BLOCK_N, dtype)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(LSE + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    o_desc.store([q_row, 0], (acc / l_i[:, None]).to(dtype))


def _set_allocator():
    triton.set_allocator(lambda size, alignment, stream:
                         torch.empty(size, dtype=torch.int8, device="cuda"))


def matmul_desc(a, b, persistent=False):
    """a [M, K], b [N, K] (fp16, contiguous) -> a @ b.T."""
    _set_allocator()
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    tiles = triton.cdiv(M, 128) * triton.cdiv(N, 256)
    if persistent:
        matmul_desc_persistent[(min(132, tiles),)](a, b, c, M, N, K, BLOCK_M=128, BLOCK_N=256,
                                                   BLOCK_K=64, GROUP_M=8, NUM_SMS=132,
                                                   num_warps=8, num_stages=3)
    else:
        matmul_desc_device[(tiles,)](a, b, c, M, N, K, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
                                     GROUP_M=8, num_warps=8, num_stages=3)
    return c


def attention(q, k, v, sm_scale):
    """q, k, v [Z, H, N_CTX, HEAD_DIM] fp16, contiguous -> (o, lse in log2 units)."""
    _set_allocator()
    Z, H, n_ctx, d = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((Z, H, n_ctx), device=q.device, dtype=torch.float32)
    attn_fwd_desc[(triton.cdiv(n_ctx, 128), Z * H)](q, k, v, o, lse, sm_scale, Z, H, n_ctx,
                                                    HEAD_DIM=d, BLOCK_M=128, BLOCK_N=128,
                                                    num_warps=8, num_stages=3)
    return o, lse
