"""Corpus cases: a max/argmax over the leading (non-contiguous) dim of a
matrix, the chunk-local inverse of a unit lower-triangular matrix of
delta-rule linear attention, and attention with ALiBi slopes and a sliding
causal window."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out, to_dt

# ---- max / argmax over dim 0 ----------------------------------------------------------------


def dim0_make(rng, S):
    m, n = S["m"], S["n"]
    # values on a grid of 1/4: many equal maxima, so the lowest-row tie-break is checked
    x = np.round(rng.standard_normal((m, n)) * 4) / 4
    return {"x": Buf(to_dt(x, "f16"), "f16"), "v": out(n, "f16"), "i": out(n, "i64")}


# interp: M and N both ragged against their blocks
case(name="reduce_dim0_argmax", klass="reduce", module="reduce_dim0_max.py",
     kernel="max_dim0_kernel", make=dim0_make,
     args=lambda S, b: ["x", "v", "i", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(1)],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"v": X["x"].max(axis=0), "i": X["x"].argmax(axis=0)},
     gpu=dict(m=16384, n=8192, BM=128, BN=32, warps=4),
     interp=dict(m=70, n=45, BM=16, BN=16), tol=0.0)


# ---- chunk-local (I + A)^-1 -------------------------------------------------------------------


def tril_make(rng, S):
    bh, t, bt = S["bh"], S["t"], 64
    a = rng.standard_normal((bh, t, bt)) * 0.15
    # the kernel reads only the strictly lower part of each chunk: fill the rest with noise
    row_in_chunk = (np.arange(t) % bt)[:, None]
    a = np.where(row_in_chunk > np.arange(bt)[None, :], a, rng.standard_normal((bh, t, bt)))
    return {"a": Buf(a, "f32"), "ai": out((bh, t, bt), "f32")}


def tril_ref(X, S):
    a, bt = X["a"], 64
    bh, t = a.shape[:2]
    ai = np.zeros(a.shape)
    for c0 in range(0, t, bt):
        r = min(bt, t - c0)
        blk = np.tril(a[:, c0:c0 + r, :r], -1) + np.eye(r)
        ai[:, c0:c0 + r, :r] = np.linalg.inv(blk)
    return {"ai": ai}


# interp: T = 150, so the last chunk has 22 rows (one partial 16-block, two empty ones)
case(name="solve_tril_chunk", klass="linear_attn", module="solve_tril_chunk.py",
     kernel="solve_tril_64_kernel", make=tril_make,
     args=lambda S, b: ["a", "ai", I32(S["t"])],
     consts=lambda S: dict(BT=64, DOT_PRECISION=S["prec"]),
     grid=lambda S: (cdiv(S["t"], 64), S["bh"]), ref=tril_ref,
     shape=lambda S: f"bh{S['bh']} t{S['t']} bt64 {S['prec']}",
     gpu=dict(bh=32, t=16384, prec="ieee", warps=4, stages=2),
     interp=dict(bh=3, t=150, prec="ieee", stages=2), tol=1e-5)


# ---- ALiBi + sliding-window attention ---------------------------------------------------------


def alibi_make(rng, S):
    z, h, n, d = S["z"], S["h"], S["n"], S["d"]
    slopes = 2.0 ** (-8.0 * np.arange(1, h + 1) / h)
    return {"q": floats(rng, (z, h, n, d), "f16", 0.5), "k": floats(rng, (z, h, n, d), "f16", 0.5),
            "v": floats(rng, (z, h, n, d), "f16"), "slopes": Buf(slopes, "f32"),
            "o": out((z, h, n, d), "f16")}


def alibi_ref(X, S):
    n, d, w = S["n"], S["d"], S["window"]
    q, k, v, sl = X["q"], X["k"], X["v"], X["slopes"][None, :, None, None]
    o = np.zeros(q.shape)
    step = 256
    for m0 in range(0, n, step):  # query blocks, each against the keys its window reaches
        m1, k0 = min(n, m0 + step), max(0, m0 - w)
        rel = np.arange(k0, m1)[None, :] - np.arange(m0, m1)[:, None]
        s = q[:, :, m0:m1] @ k[:, :, k0:m1].transpose(0, 1, 3, 2) * d ** -0.5 + sl * rel
        s = np.where((rel <= 0) & (rel >= -w), s, -np.inf)
        p = np.exp(s - s.max(axis=3, keepdims=True))
        o[:, :, m0:m1] = (p / p.sum(axis=3, keepdims=True)) @ v[:, :, k0:m1]
    return {"o": o}


def alibi_args(S, b):
    h, n, d = S["h"], S["n"], S["d"]
    st = [I32(h * n * d), I32(n * d), I32(d)]
    return ["q", "k", "v", "slopes", "o", F32(d ** -0.5)] + st * 4 + \
        [I32(h), I32(n), I32(S["window"])]


# interp: window 37 is not a multiple of BLOCK_N, and late rows of a query block find their
# first key block wholly outside the window
case(name="attn_alibi_sliding_window", klass="attention", module="attention_alibi_window.py",
     kernel="_attn_fwd_alibi_window", make=alibi_make, args=alibi_args,
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BM"]), S["z"] * S["h"]), ref=alibi_ref,
     shape=lambda S: f"z{S['z']} h{S['h']} n{S['n']} d{S['d']} window{S['window']}",
     gpu=dict(z=1, h=16, n=8192, d=128, window=2048, BM=128, BN=64, warps=8, stages=3),
     interp=dict(z=2, h=2, n=90, d=16, window=37, BM=16, BN=16, stages=2), tol=5e-3)
