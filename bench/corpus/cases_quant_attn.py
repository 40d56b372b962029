"""Corpus cases: attention with an int8 QK^T and per-block scales; causal
prefill over a sparse pattern of key blocks and gathered columns."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out

LOG2E = 1.4426950408889634


def quant_blocks(x, block, scale):
    """Codes and per-block scales of x [B, H, N, D] (numpy; as the module's
    host helper computes them)."""
    B, H, N, D = x.shape
    nb = cdiv(N, block)
    xs = np.zeros((B, H, nb * block, D))
    xs[:, :, :N] = x * scale
    xs = xs.reshape(B, H, nb, block, D)
    s = np.maximum(np.abs(xs).max(axis=(3, 4)), 1e-8) / 127.0
    codes = np.clip(np.round(xs / s[..., None, None]), -127, 127)
    return codes.reshape(B, H, nb * block, D)[:, :, :N], s


def int8_attn_make(rng, S):
    b, h, n, d = S["b"], S["h"], S["n"], S["d"]
    q = rng.standard_normal((b, h, n, d))
    k = rng.standard_normal((b, h, n, d))
    qi, qs = quant_blocks(q, S["BM"], d ** -0.5 * LOG2E)
    ki, ks = quant_blocks(k, S["BN"], 1.0)
    return {"q": Buf(qi, "i8"), "k": Buf(ki, "i8"), "v": floats(rng, (b, h, n, d), "f16"),
            "qs": Buf(qs, "f32"), "ks": Buf(ks, "f32"), "o": out((b, h, n, d), "f16")}


def int8_attn_ref(X, S):
    BM, BN = S["BM"], S["BN"]
    q = X["q"] * np.repeat(X["qs"], BM, axis=2)[:, :, :S["n"], None]
    k = X["k"] * np.repeat(X["ks"], BN, axis=2)[:, :, :S["n"], None]
    s = q @ k.transpose(0, 1, 3, 2)
    p = np.exp2(s - s.max(axis=3, keepdims=True))
    return {"o": p @ X["v"] / p.sum(axis=3, keepdims=True)}


def int8_attn_args(S, b):
    h, n, d = S["h"], S["n"], S["d"]
    st = [I32(h * n * d), I32(n * d), I32(d)]
    return ["q", "k", "v", "qs", "ks", "o"] + st * 4 + [I32(h), I32(n)]


case(name="attn_int8_qk_block_scales", klass="attention", module="int8_attention.py",
     kernel="_int8_qk_attn_fwd", make=int8_attn_make, args=int8_attn_args,
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BM"]), S["b"] * S["h"]), ref=int8_attn_ref,
     gpu=dict(b=4, h=16, n=4000, d=128, BM=128, BN=64, warps=8, stages=3),
     interp=dict(b=1, h=2, n=100, d=32, BM=32, BN=32, stages=2), tol=5e-3)


def sparse_make(rng, S):
    """Per query block: the diagonal block and up to nnz_s - 1 earlier key
    blocks, then vertical columns outside those blocks, before the block's
    last row."""
    b, h, n, d, BM, BN = S["b"], S["h"], S["n"], S["d"], S["BM"], S["BN"]
    mb = cdiv(n, BM)
    bc = np.zeros((b, h, mb), np.int32)
    bo = np.zeros((b, h, mb, S["nnz_s"]), np.int32)
    cc = np.zeros((b, h, mb), np.int32)
    ci = np.zeros((b, h, mb, S["nnz_v"]), np.int32)
    for z in range(b):
        for y in range(h):
            for m in range(mb):
                diag = m * BM // BN * BN
                earlier = rng.permutation(diag // BN)[:S["nnz_s"] - 1] * BN
                starts = np.sort(np.concatenate([earlier, [diag]]))
                bc[z, y, m] = len(starts)
                bo[z, y, m, :len(starts)] = starts
                covered = np.zeros(n, bool)
                for s in starts:
                    covered[s:s + BN] = True
                free = np.flatnonzero(~covered[:min(n, (m + 1) * BM)])
                cols = np.sort(rng.permutation(free)[:rng.integers(0, S["nnz_v"] + 1)])
                cc[z, y, m] = len(cols)
                ci[z, y, m, :len(cols)] = cols
    return {"q": floats(rng, (b, h, n, d), "f16"), "k": floats(rng, (b, h, n, d), "f16"),
            "v": floats(rng, (b, h, n, d), "f16"), "o": out((b, h, n, d), "f16"),
            "bc": Buf(bc, "i32"), "bo": Buf(bo, "i32"), "cc": Buf(cc, "i32"),
            "ci": Buf(ci, "i32")}


def sparse_ref(X, S):
    n, BM, BN = S["n"], S["BM"], S["BN"]
    o = np.zeros(X["q"].shape)
    scale = S["d"] ** -0.5
    for z in range(S["b"]):
        for y in range(S["h"]):
            for m in range(cdiv(n, BM)):
                keys = np.zeros(n, bool)
                for s in X["bo"][z, y, m, :int(X["bc"][z, y, m])].astype(int):
                    keys[s:s + BN] = True
                keys[X["ci"][z, y, m, :int(X["cc"][z, y, m])].astype(int)] = True
                rows = np.arange(m * BM, min(n, (m + 1) * BM))
                sel = np.flatnonzero(keys)
                sc = X["q"][z, y, rows] @ X["k"][z, y, sel].T * scale
                sc = np.where(sel[None, :] <= rows[:, None], sc, -np.inf)
                p = np.exp(sc - sc.max(axis=1, keepdims=True))
                o[z, y, rows] = p @ X["v"][z, y, sel] / p.sum(axis=1, keepdims=True)
    return {"o": o}


case(name="attn_sparse_prefill_gather", klass="attention", module="sparse_prefill_attention.py",
     kernel="_sparse_prefill_fwd", make=sparse_make,
     args=lambda S, b: ["q", "k", "v", "o", "bc", "bo", "cc", "ci", F32(S["d"] ** -0.5),
                        I32(S["h"] * S["n"] * S["d"]), I32(S["n"] * S["d"]), I32(S["d"]),
                        I32(S["h"]), I32(S["n"]), I32(S["nnz_s"]), I32(S["nnz_v"])],
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BM"]), S["b"] * S["h"]), ref=sparse_ref,
     shape=lambda S: f"b{S['b']} h{S['h']} n{S['n']} d{S['d']} blocks{S['nnz_s']} cols<={S['nnz_v']}",
     gpu=dict(b=2, h=16, n=4096, d=128, BM=64, BN=64, nnz_s=12, nnz_v=512, warps=4, stages=2),
     interp=dict(b=1, h=2, n=150, d=16, BM=32, BN=16, nnz_s=3, nnz_v=20, stages=2), tol=5e-3)
