"""Corpus cases: kernels addressed through block pointers (make_block_ptr,
advance, boundary_check, padding_option): a grouped-order GEMM with ragged
edges, the fused attention forward with a transposed K view, the
flash-linear-attention chunk output, and a two-pass RMSNorm over a wide
row. The interpreter sizes keep the edges ragged so that the boundary
checks and zero padding are exercised."""
import numpy as np

from registry import F32, I32, case, cdiv, floats, out

# ---- GEMM ---------------------------------------------------------------------------------


def mm_make(rng, S):
    m, n, k = S["m"], S["n"], S["k"]
    return {"a": floats(rng, (m, k), "f16"), "b": floats(rng, (k, n), "f16"),
            "c": out((m, n), "f16")}


def mm_args(S, b):
    m, n, k = S["m"], S["n"], S["k"]
    return ["a", "b", "c", I32(m), I32(n), I32(k), I32(k), I32(1), I32(n), I32(1), I32(n), I32(1)]


# neither M nor N a multiple of its tile: the last tile row and column store through the check
case(name="matmul_block_ptr_grouped", klass="gemm", module="block_ptr_kernels.py",
     kernel="matmul_block_ptr_grouped", make=mm_make, args=mm_args,
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=S["G"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"c": X["a"] @ X["b"]},
     gpu=dict(m=3968, n=4000, k=4096, BM=128, BN=256, BK=64, G=8, warps=8, stages=3),
     interp=dict(m=40, n=36, k=70, BM=16, BN=32, BK=16, G=2, warps=4, stages=2), tol=1e-2)


# ---- attention forward ------------------------------------------------------------------------

def attn_make(rng, S):
    z, h, n, d = S["z"], S["h"], S["n"], S["d"]
    return {"q": floats(rng, (z, h, n, d), "f16", 0.5), "k": floats(rng, (z, h, n, d), "f16", 0.5),
            "v": floats(rng, (z, h, n, d), "f16"), "o": out((z, h, n, d), "f16")}


def attn_ref(X, S):
    # one head at a time: a (seq, seq) float64 score matrix per head stays small
    q, k, v = (X[t].reshape(-1, S["n"], S["d"]) for t in "qkv")
    o = np.empty(q.shape)
    for i in range(q.shape[0]):
        s = q[i] @ k[i].T * S["scale"]
        s -= s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        o[i] = (s @ v[i]) / s.sum(axis=1, keepdims=True)
    return {"o": o.reshape(X["q"].shape)}


def attn_args(S, b):
    h, n, d = S["h"], S["n"], S["d"]
    st = [I32(h * n * d), I32(n * d), I32(d), I32(1)]
    return ["q", "k", "v", F32(S["scale"]), "o"] + st * 4 + [I32(S["z"]), I32(h), I32(n)]


case(name="attn_fwd_block_ptr", klass="attention", module="block_ptr_kernels.py",
     kernel="attn_fwd_block_ptr", make=attn_make, args=attn_args,
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_DMODEL=S["d"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BM"]), S["z"] * S["h"]), ref=attn_ref,
     shape=lambda S: f"z{S['z']} h{S['h']} n{S['n']} d{S['d']}",
     gpu=dict(z=2, h=8, n=4096, d=64, scale=0.125, BM=128, BN=64, warps=4, stages=3),
     interp=dict(z=1, h=2, n=48, d=16, scale=0.25, BM=16, BN=16, warps=4, stages=2), tol=5e-3)


# ---- chunked linear attention: chunk output ------------------------------------------------

def chunk_make(rng, S):
    bh, t, k, v, bt = S["bh"], S["t"], S["k"], S["v"], S["BT"]
    return {"q": floats(rng, (bh, t, k), "bf16"), "k": floats(rng, (bh, t, k), "bf16"),
            "v": floats(rng, (bh, t, v), "bf16"),
            "h": floats(rng, (bh, cdiv(t, bt), k, v), "bf16", 0.3),
            "o": out((bh, t, v), "bf16")}


def chunk_ref(X, S):
    bt, scale = S["BT"], S["k"] ** -0.5
    o = np.empty(X["v"].shape)
    for c in range(cdiv(S["t"], bt)):
        sl = slice(c * bt, min((c + 1) * bt, S["t"]))
        q, k, v = X["q"][:, sl], X["k"][:, sl], X["v"][:, sl]
        s = q @ k.swapaxes(1, 2) * scale * np.tril(np.ones((q.shape[1], q.shape[1])))
        o[:, sl] = q @ X["h"][:, c] * scale + s @ v
    return {"o": o}


def chunk_args(S, b):
    t, k, v, nt = S["t"], S["k"], S["v"], cdiv(S["t"], S["BT"])
    return ["q", "k", "v", "h", "o", I32(t * k), I32(k), I32(1), I32(t * v), I32(v), I32(1),
            I32(nt * k * v), I32(v), F32(k ** -0.5), I32(t)]


case(name="chunk_fwd_o_block_ptr", klass="linear-attn", module="block_ptr_kernels.py",
     kernel="chunk_fwd_o_block_ptr", make=chunk_make, args=chunk_args,
     consts=lambda S: dict(K=S["k"], V=S["v"], BT=S["BT"], BK=S["BK"], BV=S["BV"]),
     grid=lambda S: (cdiv(S["v"], S["BV"]), cdiv(S["t"], S["BT"]), S["bh"]), ref=chunk_ref,
     gpu=dict(bh=32, t=4096, k=128, v=128, BT=64, BK=64, BV=64, warps=4, stages=2),
     interp=dict(bh=2, t=40, k=32, v=32, BT=16, BK=16, BV=16, warps=4, stages=2), tol=1e-2)


# ---- RMSNorm, two passes over a wide row ---------------------------------------------------

def rms_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "bf16"), "w": floats(rng, n, "bf16", 0.2, 1.0),
            "y": out((m, n), "bf16")}


def rms_ref(X, S):
    x = X["x"]
    return {"y": x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * X["w"]}


case(name="rmsnorm_block_ptr_loop", klass="norm", module="block_ptr_kernels.py",
     kernel="rmsnorm_block_ptr_loop", make=rms_make,
     args=lambda S, b: ["x", "y", "w", I32(S["n"]), I32(S["n"]), I32(S["n"]), F32(1e-6)],
     consts=lambda S: dict(BLOCK_N=S["BN"]), grid=lambda S: (S["m"],), ref=rms_ref,
     gpu=dict(m=4096, n=8192, BN=2048, warps=8), interp=dict(m=5, n=100, BN=32), tol=4e-3)
