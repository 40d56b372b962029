"""Corpus cases: the dK/dV kernel of a flash-attention backward (plain and
causal), and an fp32 GEMM with tf32 products and a bias epilogue."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out

LOG2E = 1.4426950408889634


# ---- attention backward, dK and dV ------------------------------------------------------

def _scores(q, k, scale, causal):
    """Scaled scores of one head, -inf above the diagonal when causal."""
    s = q @ k.T * scale
    if causal:
        n = s.shape[0]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    return s


def attn_bwd_make(causal):
    """fp16 q, k, v, dO; the forward's fp16 output O and base-2 logsumexp
    (fp32), from a float64 forward; Delta = rowsum(dO * O) in fp32, as the
    host wrapper computes it."""
    def make(rng, S):
        b, h, n, d = S["b"], S["h"], S["n"], S["d"]
        bufs = {x: floats(rng, (b, h, n, d), "f16") for x in ("q", "k", "v", "do")}
        lse = np.zeros((b, h, n))
        delta = np.zeros((b, h, n))
        scale = d ** -0.5
        q_, k_, v_, do_ = (bufs[x].f64() for x in ("q", "k", "v", "do"))
        for z in range(b):
            for y in range(h):
                q, k, v, do = q_[z, y], k_[z, y], v_[z, y], do_[z, y]
                s = _scores(q, k, scale, causal)
                mx = s.max(axis=1, keepdims=True)
                p = np.exp(s - mx)
                den = p.sum(axis=1, keepdims=True)
                o = (p @ v / den).astype(np.float16).astype(np.float64)
                lse[z, y] = (mx[:, 0] + np.log(den[:, 0])) * LOG2E
                delta[z, y] = (do * o).sum(axis=1)
        bufs["lse"] = Buf(lse, "f32")
        bufs["delta"] = Buf(delta, "f32")
        bufs["dk"] = out((b, h, n, d), "f16")
        bufs["dv"] = out((b, h, n, d), "f16")
        return bufs
    return make


def attn_bwd_ref(causal):
    def ref(X, S):
        dk = np.zeros(X["k"].shape)
        dv = np.zeros(X["v"].shape)
        scale = S["d"] ** -0.5
        for z in range(S["b"]):
            for y in range(S["h"]):
                q, k, v, do = (X[x][z, y] for x in ("q", "k", "v", "do"))
                p = np.exp(_scores(q, k, scale, causal) - X["lse"][z, y][:, None] / LOG2E)
                dv[z, y] = p.T @ do
                ds = p * (do @ v.T - X["delta"][z, y][:, None])
                dk[z, y] = ds.T @ q * scale
        return {"dk": dk, "dv": dv}
    return ref


def attn_bwd_args(S, bufs):
    h, n, d = S["h"], S["n"], S["d"]
    st = [I32(h * n * d), I32(n * d), I32(d)]
    return ["q", "k", "v", "do", "lse", "delta", "dk", "dv", F32(S["d"] ** -0.5)] + st * 4 + \
        [I32(h), I32(n)]


ATTN_BWD_GPU = dict(b=4, h=16, n=2048, d=64, BM=64, BN=128, warps=8, stages=2)
ATTN_BWD_INT = dict(b=1, h=2, n=100, d=16, BM=16, BN=32, warps=4, stages=2)

for _causal in (False, True):
    case(name="attn_bwd_dkdv" + ("_causal" if _causal else ""), klass="attention",
         module="attention_bwd_dkdv.py", kernel="_attn_bwd_dkdv", make=attn_bwd_make(_causal),
         args=attn_bwd_args,
         consts=lambda S, c=_causal: dict(HEAD_DIM=S["d"], BLOCK_M=S["BM"], BLOCK_N=S["BN"],
                                          CAUSAL=c),
         grid=lambda S: (cdiv(S["n"], S["BN"]), S["b"] * S["h"]), ref=attn_bwd_ref(_causal),
         gpu=ATTN_BWD_GPU, interp=ATTN_BWD_INT, tol=5e-3)


# ---- fp32 GEMM with tf32 products -------------------------------------------------------

def tf32_make(rng, S):
    m, n, k = S["m"], S["n"], S["k"]
    return {"a": floats(rng, (m, k), "f32"), "b": floats(rng, (k, n), "f32"),
            "bias": floats(rng, (n,), "f32"), "c": out((m, n), "f32")}


# tf32 keeps 10 of fp32's 23 fraction bits: against an exact product the
# relative error is about 3e-4 with round-to-nearest operands and 8e-4 where
# the tensor cores truncate them, so 2e-3 passes tf32 and still catches a
# wrong tile or a dropped K tail
case(name="matmul_tf32_bias", klass="gemm", module="matmul_tf32.py",
     kernel="_tf32_linear_kernel", make=tf32_make,
     args=lambda S, b: ["a", "b", "bias", "c", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["k"]), I32(1), I32(S["n"]), I32(1), I32(S["n"]), I32(1)],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=S["G"],
                           HAS_BIAS=True),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"c": X["a"] @ X["b"] + X["bias"][None, :]},
     gpu=dict(m=4096, n=4096, k=4096, BM=128, BN=128, BK=32, G=8, warps=8, stages=3),
     interp=dict(m=40, n=36, k=70, BM=16, BN=16, BK=16, G=2, warps=4, stages=2), tol=2e-3)
