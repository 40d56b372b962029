"""Batched matmuls over 3-D tensors read and written a [1, BLOCK, BLOCK]
block at a time: through tensor descriptors made in the kernel (the block
reshaped to 2-D for the dot, the result reshaped back for the store), and
through block pointers with boundary checks on the two inner dims; and
persistent ones that make 2-D descriptors over each batch's matrices
again as they move to a tile of another batch (the descriptor a loop
carries)."""
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


@triton.jit
def bmm_desc_flat_persistent(a_ptr, b_ptr, c_ptr, B, M, N, K, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    # one loop over (tile, k step) pairs; a new tile may be of another batch,
    # whose matrices get descriptors of their own
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    per_batch = tiles_m * tiles_n
    total = B * per_batch
    mine = total // NUM_SMS + (pid < total % NUM_SMS)
    tile = pid - NUM_SMS
    ki = -1
    om = 0
    on = 0
    a_d = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_d = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_d = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, k_steps * mine):
        ki = tl.where(ki == k_steps - 1, 0, ki + 1)
        if ki == 0:
            tile += NUM_SMS
            z = tile // per_batch
            rest = tile % per_batch
            om = (rest // tiles_n) * BLOCK_M
            on = (rest % tiles_n) * BLOCK_N
            a_d = tl.make_tensor_descriptor(a_ptr + z * M * K, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
            b_d = tl.make_tensor_descriptor(b_ptr + z * K * N, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
            c_d = tl.make_tensor_descriptor(c_ptr + z * M * N, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
        a = a_d.load([om, ki * BLOCK_K])
        b = b_d.load([ki * BLOCK_K, on])
        acc = tl.dot(a, b, acc)
        if ki == k_steps - 1:
            c_d.store([om, on], acc.to(tl.float16))
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)


@triton.jit
def bmm_desc_per_batch(a_ptr, b_ptr, c_ptr, B, M, N, K, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # one program a tile position, looping over the batches; each batch's
    # descriptors replace the last one's at the end of the body
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_d = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    c_d = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    b_d = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    for z in range(B):
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_d.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_d.load([k * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_d.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))
        a_d = tl.make_tensor_descriptor(a_ptr + (z + 1) * M * K, [M, K], [K, 1],
                                        [BLOCK_M, BLOCK_K])
        b_d = tl.make_tensor_descriptor(b_ptr + (z + 1) * K * N, [K, N], [N, 1],
                                        [BLOCK_K, BLOCK_N])
        c_d = tl.make_tensor_descriptor(c_ptr + (z + 1) * M * N, [M, N], [N, 1],
                                        [BLOCK_M, BLOCK_N])
