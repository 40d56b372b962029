"""Batched matmuls over 3-D tensors read and written a [1, BLOCK, BLOCK]
block at a time: through tensor descriptors made in the kernel (the block
reshaped to 2-D for the dot, the result reshaped back for the store), and
through block pointers with boundary checks on the two inner dims."""
import triton
import triton.language as tl


@triton.jit
def bmm_desc3d(a_ptr, b_ptr, c_ptr, B, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    z = tl.program_id(2)
    a_d = tl.make_tensor_descriptor(a_ptr, shape=[B, M, K], strides=[M * K, K, 1],
                                    block_shape=[1, BLOCK_M, BLOCK_K])
    b_d = tl.make_tensor_descriptor(b_ptr, shape=[B, K, N], strides=[K * N, N, 1],
                                    block_shape=[1, BLOCK_K, BLOCK_N])
    c_d = tl.make_tensor_descriptor(c_ptr, shape=[B, M, N], strides=[M * N, N, 1],
                                    block_shape=[1, BLOCK_M, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_d.load([z, pid_m * BLOCK_M, k * BLOCK_K]).reshape(BLOCK_M, BLOCK_K)
        b = tl.reshape(b_d.load([z, k * BLOCK_K, pid_n * BLOCK_N]), (BLOCK_K, BLOCK_N))
        acc = tl.dot(a, b, acc)
    c_d.store([z, pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16)[None, :, :])


@triton.jit
def bmm_block_ptr3d(a_ptr, b_ptr, c_ptr, B, M, N, K, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    z = tl.program_id(2)
    a_bp = tl.make_block_ptr(a_ptr, shape=(B, M, K), strides=(M * K, K, 1),
                             offsets=(z, pid_m * BLOCK_M, 0), block_shape=(1, BLOCK_M, BLOCK_K),
                             order=(2, 1, 0))
    b_bp = tl.make_block_ptr(b_ptr, shape=(B, K, N), strides=(K * N, N, 1),
                             offsets=(z, 0, pid_n * BLOCK_N), block_shape=(1, BLOCK_K, BLOCK_N),
                             order=(2, 1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_bp, boundary_check=(1, 2), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(1, 2), padding_option="zero")
        acc += tl.dot(tl.reshape(a, (BLOCK_M, BLOCK_K)), tl.reshape(b, (BLOCK_K, BLOCK_N)))
        a_bp = tl.advance(a_bp, (0, 0, BLOCK_K))
        b_bp = tl.advance(b_bp, (0, BLOCK_K, 0))
    c_bp = tl.make_block_ptr(c_ptr, shape=(B, M, N), strides=(M * N, N, 1),
                             offsets=(z, pid_m * BLOCK_M, pid_n * BLOCK_N),
                             block_shape=(1, BLOCK_M, BLOCK_N), order=(2, 1, 0))
    tl.store(c_bp, tl.reshape(acc.to(tl.float16), (1, BLOCK_M, BLOCK_N)), boundary_check=(1, 2))
