"""Attention backward for one block of keys per program: K and V are
loaded once, before the loop over query blocks, and every step reads them
transposed (q @ k.T, do @ v.T) to rebuild the probabilities and their
gradient, then accumulates dK and dV. The query count is no multiple of
the query block, so the last step is masked. dkdv_kv_blocks walks several
key blocks per program, loading K and V again for each."""
import triton
import triton.language as tl


@triton.jit
def _kv_grads(Q, DO, LSE, DELTA, k, v, stride_tok, n_q, BM: tl.constexpr, BN: tl.constexpr,
              D: tl.constexpr):
    # dK and dV of one key block over every query block: K and V are read
    # transposed in each step
    dims = tl.arange(0, D)
    dk = tl.zeros((BN, D), dtype=tl.float32)
    dv = tl.zeros((BN, D), dtype=tl.float32)
    for start in range(0, n_q, BM):
        rows = start + tl.arange(0, BM)
        ok = rows < n_q
        q = tl.load(Q + rows[:, None] * stride_tok + dims[None, :], mask=ok[:, None], other=0.0)
        do = tl.load(DO + rows[:, None] * stride_tok + dims[None, :], mask=ok[:, None],
                     other=0.0)
        lse = tl.load(LSE + rows, mask=ok, other=0.0)
        delta = tl.load(DELTA + rows, mask=ok, other=0.0)
        p = tl.math.exp2(tl.dot(q, k.T) - lse[:, None])
        dp = tl.dot(do, v.T)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(ds.to(q.dtype).T, q)
        dv += tl.dot(p.to(do.dtype).T, do)
    return dk, dv


@triton.jit
def dkdv_fixed_kv(Q, K, V, DO, LSE, DELTA, DK, DV, stride_tok, n_q, BM: tl.constexpr,
                  BN: tl.constexpr, D: tl.constexpr):
    keys = tl.program_id(0) * BN + tl.arange(0, BN)
    kv = keys[:, None] * stride_tok + tl.arange(0, D)[None, :]
    k = tl.load(K + kv)
    v = tl.load(V + kv)
    dk, dv = _kv_grads(Q, DO, LSE, DELTA, k, v, stride_tok, n_q, BM, BN, D)
    tl.store(DK + kv, dk.to(DK.dtype.element_ty))
    tl.store(DV + kv, dv.to(DV.dtype.element_ty))


@triton.jit
def dkdv_kv_blocks(Q, K, V, DO, LSE, DELTA, DK, DV, stride_tok, n_q, n_kb, BM: tl.constexpr,
                   BN: tl.constexpr, D: tl.constexpr):
    # each program walks key blocks kb = pid, pid + programs, ...: K and V
    # are loaded again for every block, the query loop inside
    for kb in range(tl.program_id(0), n_kb, tl.num_programs(0)):
        kv = (kb * BN + tl.arange(0, BN))[:, None] * stride_tok + tl.arange(0, D)[None, :]
        k = tl.load(K + kv)
        v = tl.load(V + kv)
        dk, dv = _kv_grads(Q, DO, LSE, DELTA, k, v, stride_tok, n_q, BM, BN, D)
        tl.store(DK + kv, dk.to(DK.dtype.element_ty))
        tl.store(DV + kv, dv.to(DV.dtype.element_ty))
