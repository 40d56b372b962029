"""A GEMM whose programs take 1 to 8 rows of A, fewer than the 16 rows a
tensor-core instruction computes (a decode step's tokens, a GQA group):
fp16, bf16, fp32 (tf32), fp8 e4m3 read from bytes and int8, A with K
contiguous or with M contiguous (read transposed), a K loop with a masked
tail."""
import triton
import triton.language as tl


@triton.jit
def small_rows_gemm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                    KIND: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr):
    # KIND 0: the buffers' float dtype; 1: e4m3 codes; 2: int8, int32 sums
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    if KIND == 2:
        acc = tl.zeros([BM, BN], dtype=tl.int32)
    else:
        acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        if KIND == 1:
            a = a.to(tl.float8e4nv, bitcast=True)
            b = b.to(tl.float8e4nv, bitcast=True)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def small_rows_chain(x_ptr, w1_ptr, w2_ptr, y_ptr, s_ptr, D: tl.constexpr, H: tl.constexpr,
                     BM: tl.constexpr):
    """Two dots in a row on BM rows, y = relu(x @ w1) @ w2, the first
    result feeding the second dot's A; then sums over the rows, which
    must count each row once however the layout repeats them."""
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    h = tl.arange(0, H)
    x = tl.load(x_ptr + rm[:, None] * D + d[None, :])
    w1 = tl.load(w1_ptr + d[:, None] * H + h[None, :])
    w2 = tl.load(w2_ptr + h[:, None] * D + d[None, :])
    t = tl.maximum(tl.dot(x, w1), 0.0)
    y = tl.dot(t.to(x.dtype), w2)
    tl.store(y_ptr + rm[:, None] * D + d[None, :], y - tl.max(y, axis=0)[None, :])
    tl.store(s_ptr + pid * H + h, tl.sum(t, axis=0))


@triton.jit
def router_softmax(x_ptr, w_ptr, p_ptr, load_ptr, T, D: tl.constexpr, E: tl.constexpr,
                   BT: tl.constexpr):
    """A MoE router: the scores of BT tokens against E (1 to 8) experts are
    one dot of E columns, fewer than an MMA's 8 or 16; a softmax over the
    experts, then each expert's load summed over the tokens."""
    pid = tl.program_id(0)
    rt = pid * BT + tl.arange(0, BT)
    d = tl.arange(0, D)
    e = tl.arange(0, E)
    live = rt < T
    x = tl.load(x_ptr + rt[:, None] * D + d[None, :], mask=live[:, None], other=0.0)
    w = tl.load(w_ptr + d[:, None] * E + e[None, :])
    s = tl.dot(x, w)
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    tl.store(p_ptr + rt[:, None] * E + e[None, :], p, mask=live[:, None])
    tl.store(load_ptr + pid * E + e, tl.sum(tl.where(live[:, None], p, 0.0), axis=0))


@triton.jit
def computed_b_gemm(a_ptr, b_ptr, c_ptr, n_tiles, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr):
    """C tile i = A tile i @ (2 B): B is scaled once before the loop, so
    the dot reads it from registers (mma.sync where the layout asked for
    warpgroup MMA), while A's tiles stream through the loop."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    b = (tl.load(b_ptr + rk[:, None] * BN + rn[None, :]) * 2).to(tl.float16)
    for i in range(0, n_tiles):
        a = tl.load(a_ptr + (i * BM + rm)[:, None] * BK + rk[None, :])
        acc = tl.dot(a, b)
        tl.store(c_ptr + (i * BM + rm)[:, None] * BN + rn[None, :], acc)
