"""Corpus cases: softmax and Welford mean/variance over the leading
(non-contiguous) dim of a matrix, and the per-head q/k RMSNorm + NeoX
rotary of qk-norm attention."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, ints, out

# ---- softmax over dim 0 ---------------------------------------------------------------------


def sm0_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "f16", 2.0), "y": out((m, n), "f16")}


def sm0_ref(X, S):
    e = np.exp(X["x"] - X["x"].max(axis=0, keepdims=True))
    return {"y": e / e.sum(axis=0, keepdims=True)}


# interp: M and N both ragged against their blocks (the last row chunk is 6 rows)
case(name="softmax_dim0", klass="softmax", module="softmax_dim0.py",
     kernel="softmax_dim0_kernel", make=sm0_make,
     args=lambda S, b: ["y", "x", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]),), ref=sm0_ref,
     gpu=dict(m=4096, n=16384, BM=128, BN=32, warps=4),
     interp=dict(m=70, n=45, BM=16, BN=16), tol=2e-3)


# ---- Welford mean / variance over dim 0 -------------------------------------------------------


def vm0_make(rng, S):
    m, n = S["m"], S["n"]
    # a large common offset: a naive sum-of-squares variance would lose most of its digits
    return {"x": floats(rng, (m, n), "bf16", 1.5, 40.0), "mean": out(n, "f32"),
            "var": out(n, "f32")}


def vm0_ref(X, S):
    x = X["x"]
    return {"mean": x.mean(axis=0), "var": x.var(axis=0, ddof=1 if S["unbiased"] else 0)}


# interp: the last row chunk holds 4 of 16 rows, the last column block 13 of 16 columns
case(name="var_mean_dim0_welford", klass="welford", module="welford_dim0.py",
     kernel="var_mean_dim0_kernel", make=vm0_make,
     args=lambda S, b: ["x", "mean", "var", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(1)],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], UNBIASED=S["unbiased"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]),), ref=vm0_ref,
     shape=lambda S: f"{S['m']}x{S['n']} unbiased={S['unbiased']}",
     gpu=dict(m=32768, n=4096, unbiased=True, BM=128, BN=32, warps=4),
     interp=dict(m=100, n=45, unbiased=True, BM=16, BN=16), tol=1e-5)


# ---- qk-norm: per-head RMSNorm + NeoX rotary, in place -------------------------------------


def qkn_make(rng, S):
    t, hq, hk, d, mp = S["t"], S["hq"], S["hk"], S["d"], S["mp"]
    q, k = floats(rng, (t, hq, d), "bf16", 1.0, 0.2), floats(rng, (t, hk, d), "bf16", 3.0)
    q.inout = k.inout = True
    inv = 1.0 / (1000000.0 ** (np.arange(0, d, 2) / d))
    ang = np.arange(mp)[:, None] * inv[None, :]
    return {"q": q, "k": k, "qw": floats(rng, d, "bf16", 0.2, 1.0),
            "kw": floats(rng, d, "bf16", 0.2, 1.0), "cos": Buf(np.cos(ang), "f32"),
            "sin": Buf(np.sin(ang), "f32"), "pos": ints(rng, t, 0, mp, "i64")}


def qkn_ref(X, S):
    h, eps = S["d"] // 2, 1e-6
    p = X["pos"].astype(int)
    cos, sin = X["cos"][p][:, None, :], X["sin"][p][:, None, :]

    def norm_rot(x, w):
        x = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w
        x1, x2 = x[..., :h], x[..., h:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return {"q": norm_rot(X["q"], X["qw"]), "k": norm_rot(X["k"], X["kw"])}


def qkn_args(S, b):
    hq, hk, d = S["hq"], S["hk"], S["d"]
    return ["q", "k", "qw", "kw", "cos", "sin", "pos", I32(hq * d), I32(d), I32(hk * d), I32(d),
            I32(d // 2), I32(hq), I32(hk), F32(1e-6)]


# interp: Hq = 5 and Hk = 3 against BLOCK_H = 2, so both tensors end on a half-empty block
case(name="qk_rmsnorm_rope", klass="rotary", module="qk_norm_rope.py",
     kernel="qk_rmsnorm_rope_kernel", make=qkn_make, args=qkn_args,
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_H=S["BH"]),
     grid=lambda S: (S["t"], cdiv(S["hq"], S["BH"]) + cdiv(S["hk"], S["BH"])), ref=qkn_ref,
     shape=lambda S: f"t{S['t']} hq{S['hq']} hk{S['hk']} d{S['d']}",
     gpu=dict(t=16384, hq=32, hk=8, d=128, mp=32768, BH=8, warps=4),
     interp=dict(t=7, hq=5, hk=3, d=16, mp=40, BH=2), tol=1e-2)
