"""Persistent matmuls whose tile loop is flattened by hand into one loop
over every K step of the program's tiles: the K index wraps at each tile,
an `if` on the first K step sets the tile's offsets, an `if` on the last
stores the tile and resets the accumulator. Two spellings of the wrap, and
an epilogue that stores through the carried offset vectors themselves."""
import triton
import triton.language as tl


@triton.jit
def flat_where(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
               stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    # the K index wraps through tl.where at the end of each step; the tile
    # advances by NUM_SMS whenever a new tile begins
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    n_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    my_tiles = tl.cdiv(n_tiles - pid, NUM_SMS)
    cur = pid - NUM_SMS
    kk = 0
    row_ids = tl.arange(0, BLOCK_M)
    col_ids = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for it in range(0, my_tiles * k_steps):
        if kk == 0:
            cur += NUM_SMS
            row_ids = (cur // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
            col_ids = (cur % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
        k_ids = kk * BLOCK_K + tl.arange(0, BLOCK_K)
        a_tile = tl.load(a_ptr + row_ids[:, None] * stride_am + k_ids[None, :] * stride_ak,
                         mask=(row_ids[:, None] < M) & (k_ids[None, :] < K), other=0.0)
        b_tile = tl.load(b_ptr + k_ids[:, None] * stride_bk + col_ids[None, :] * stride_bn,
                         mask=(k_ids[:, None] < K) & (col_ids[None, :] < N), other=0.0)
        acc += tl.dot(a_tile, b_tile)
        if kk == k_steps - 1:
            out_r = (cur // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
            out_c = (cur % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
            tl.store(c_ptr + out_r[:, None] * stride_cm + out_c[None, :] * stride_cn,
                     acc.to(c_ptr.dtype.element_ty),
                     mask=(out_r[:, None] < M) & (out_c[None, :] < N))
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        kk = tl.where(kk == k_steps - 1, 0, kk + 1)


@triton.jit
def flat_counter(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    # the wrap as a remainder at the end of the step; the tile found from
    # the loop index; masks on every dim
    pid = tl.program_id(0)
    n_n = tl.cdiv(N, BLOCK_N)
    n_k = tl.cdiv(K, BLOCK_K)
    tiles = tl.cdiv(M, BLOCK_M) * n_n
    steps = tl.cdiv(tiles - pid, NUM_SMS) * n_k
    ki = 0
    tm = 0
    tn = 0
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(steps):
        if ki == 0:
            t = pid + (step // n_k) * NUM_SMS
            tm = t // n_n
            tn = t % n_n
            offs_m = tm * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = tn * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        if ki == n_k - 1:
            cm = tm * BLOCK_M + tl.arange(0, BLOCK_M)
            cn = tn * BLOCK_N + tl.arange(0, BLOCK_N)
            mask = (cm[:, None] < M) & (cn[None, :] < N)
            tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn,
                     acc.to(c_ptr.dtype.element_ty), mask=mask)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        ki = (ki + 1) % n_k


@triton.jit
def flat_tile_epilogue(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                       stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    pid = tl.program_id(0)
    n_n = tl.cdiv(N, BLOCK_N)
    n_k = tl.cdiv(K, BLOCK_K)
    tiles = tl.cdiv(M, BLOCK_M) * n_n
    tile = pid - NUM_SMS
    ki = -1
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, n_k * tl.cdiv(tiles - pid, NUM_SMS)):
        ki = tl.where(ki == n_k - 1, 0, ki + 1)
        if ki == 0:
            tile += NUM_SMS
            rm = tl.max_contiguous(tl.multiple_of((tile // n_n) * BLOCK_M + tl.arange(0, BLOCK_M),
                                                  BLOCK_M), BLOCK_M)
            rn = tl.max_contiguous(tl.multiple_of((tile % n_n) * BLOCK_N + tl.arange(0, BLOCK_N),
                                                  BLOCK_N), BLOCK_N)
        rk = ki * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        if ki == n_k - 1:
            tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
                     acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
