"""Corpus cases: serving and fine-tuning kernels (serving_kernels.py). A
chunk of the fused linear + cross-entropy forward with ignored targets,
NeoX rotary embedding in place from a bf16 cos/sin cache and int64
positions, the paged fp8 KV-cache store with padding slots, and top-p
renormalisation by bisection with a top_p per row. The interpreter sizes
keep every edge ragged (rows, vocabulary and hidden tiles, head groups)."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, fp8_decode, fp8_encode, out, to_dt
from cases_elem import rope_ref  # the same neox rotation of q and k

FP8_MAX = 448.0
IGNORE = -100


def np2(n):
    return 1 << (n - 1).bit_length()


# ---- fused linear + cross-entropy chunk ------------------------------------------------------

def flce_make(rng, S):
    r, v, h = S["rows"], S["vocab"], S["hidden"]
    tgt = rng.integers(0, v, r)
    tgt[3::7] = IGNORE  # prompt tokens masked out of the loss
    # weights ~ 1.5 / sqrt(hidden): logits of standard deviation about 1.5
    return {"x": floats(rng, (r, h), "bf16"), "w": floats(rng, (v, h), "bf16", 1.5 / np.sqrt(h)),
            "t": Buf(tgt, "i64"), "loss": out(r, "f32"), "lse": out(r, "f32")}


def flce_ref(X, S):
    z = X["x"] @ X["w"].T
    m = z.max(axis=1)
    lse = m + np.log(np.exp(z - m[:, None]).sum(axis=1))
    t = X["t"].astype(int)
    keep = t != IGNORE
    picked = z[np.arange(z.shape[0]), np.where(keep, t, 0)]
    return {"loss": np.where(keep, lse - picked, 0.0), "lse": lse}


case(name="fused_linear_ce_chunk", klass="softmax", module="serving_kernels.py",
     kernel="fused_linear_ce_chunk_kernel", make=flce_make,
     args=lambda S, b: ["x", "w", "t", "loss", "lse", I32(S["rows"]), I32(S["vocab"]),
                        I32(S["hidden"]), I32(S["hidden"]), I32(S["hidden"]), I32(IGNORE)],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(S["rows"], S["BM"]),), ref=flce_ref,
     gpu=dict(rows=512, vocab=16384, hidden=1024, BM=64, BN=128, BK=64, warps=4, stages=3),
     interp=dict(rows=20, vocab=200, hidden=40, BM=16, BN=32, BK=16, warps=4, stages=2),
     tol=1e-4)


# ---- rotary embedding from a cos/sin cache ---------------------------------------------------

def rope_make(rng, S):
    t, hq, hk, d, mp = S["t"], S["hq"], S["hk"], S["d"], S["mp"]
    q, k = floats(rng, (t, hq, d), "bf16"), floats(rng, (t, hk, d), "bf16")
    q.inout = k.inout = True
    inv = 1.0 / (10000.0 ** (np.arange(0, d, 2) / d))
    ang = np.arange(mp)[:, None] * inv[None, :]
    cache = np.concatenate([np.cos(ang), np.sin(ang)], axis=1)
    return {"q": q, "k": k, "cs": Buf(to_dt(cache, "bf16"), "bf16"),
            "pos": Buf(rng.integers(0, mp, t), "i64")}


case(name="rope_cos_sin_cache", klass="rotary", module="serving_kernels.py",
     kernel="rope_cos_sin_cache_kernel", make=rope_make,
     args=lambda S, b: ["q", "k", "cs", "pos", I32(S["hq"] * S["d"]), I32(S["hk"] * S["d"]),
                        I32(S["d"]), I32(S["hq"]), I32(S["hk"])],
     consts=lambda S: dict(HEAD_SIZE=S["d"], HEAD_GROUP=S["HG"]),
     grid=lambda S: (S["t"],), ref=rope_ref,
     gpu=dict(t=16384, hq=32, hk=8, d=128, mp=32768, HG=8, warps=4),
     interp=dict(t=7, hq=5, hk=2, d=32, mp=40, HG=2, warps=4), tol=1e-2)


# ---- paged fp8 KV cache store ------------------------------------------------------------------

def fp8_round(y):
    return fp8_decode(fp8_encode(y))


def kv8_make(rng, S):
    t, kh, d, bs, nb = S["t"], S["kh"], S["d"], S["bs"], S["nb"]
    slots = rng.permutation(nb * bs)[:t]
    slots[1::6] = -1  # padding tokens
    kc = floats(rng, (nb, kh, bs, d), "f8e4", 100.0)  # earlier tokens' entries stay
    vc = floats(rng, (nb, kh, bs, d), "f8e4", 100.0)
    kc.inout = vc.inout = True
    # scales a little under the data's range: the few outliers past 3 (4) sigma clamp
    return {"k": floats(rng, (t, kh, d), "bf16"), "v": floats(rng, (t, kh, d), "bf16"),
            "kc": kc, "vc": vc, "slots": Buf(slots, "i64"),
            "ks": Buf(np.array([3.0 / FP8_MAX]), "f32"),
            "vs": Buf(np.array([4.0 / FP8_MAX]), "f32")}


def kv8_ref(X, S):
    bs = S["bs"]
    s = X["slots"].astype(int)
    live = s >= 0
    s = s[live]
    res = {}
    for src, cache, sc in (("k", "kc", "ks"), ("v", "vc", "vs")):
        c = X[cache].copy()
        c[s // bs, :, s % bs, :] = fp8_round(np.clip(X[src][live] / X[sc][0], -FP8_MAX, FP8_MAX))
        res[cache] = c
    return res


case(name="kv_cache_fp8_store", klass="quant", module="serving_kernels.py",
     kernel="kv_cache_fp8_store_kernel", make=kv8_make,
     args=lambda S, b: ["k", "v", "kc", "vc", "slots", "ks", "vs", I32(S["kh"] * S["d"]),
                        I32(S["kh"] * S["d"]), I32(S["kh"] * S["bs"] * S["d"]),
                        I32(S["bs"] * S["d"]), I32(S["kh"]), I32(S["bs"])],
     consts=lambda S: dict(HEAD_SIZE=S["d"], BLOCK_H=np2(S["kh"]), FP8_MAX=FP8_MAX),
     grid=lambda S: (S["t"],), ref=kv8_ref,
     gpu=dict(t=8192, kh=8, d=128, bs=16, nb=1024, warps=4),
     interp=dict(t=20, kh=3, d=16, bs=4, nb=8, warps=4), tol=1e-2)


# ---- top-p renormalisation -------------------------------------------------------------------

def topp_make(rng, S):
    r, v = S["rows"], S["vocab"]
    z = rng.standard_normal((r, v)) * 3.0
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    srt = -np.sort(-p.astype(np.float64), axis=1)
    c = np.cumsum(srt, axis=1)
    # top_p per request, halfway through the probability that first reaches the goal:
    # the kept set is one answer, whatever the order of the fp32 sums
    goal = rng.uniform(0.5, 0.95, r)
    k = np.array([np.searchsorted(c[i], goal[i]) for i in range(r)])
    top_p = np.where(k > 0, c[np.arange(r), np.maximum(k - 1, 0)], 0.0) + srt[np.arange(r), k] / 2
    return {"p": Buf(p, "f32"), "top_p": Buf(top_p, "f32"), "o": out((r, v), "f32")}


def topp_ref(X, S):
    p = X["p"]
    srt = -np.sort(-p, axis=1)
    c = np.cumsum(srt, axis=1)
    r = np.arange(p.shape[0])
    k = np.array([np.searchsorted(c[i], X["top_p"][i]) for i in r])
    keep = p >= srt[r, k][:, None]
    kept = np.where(keep, p, 0.0)
    return {"o": kept / kept.sum(axis=1, keepdims=True)}


case(name="top_p_renorm_sort", klass="sampling", module="serving_kernels.py",
     kernel="top_p_renorm_sort_kernel", make=topp_make,
     args=lambda S, b: ["p", "top_p", "o", I32(S["vocab"]), I32(S["vocab"]), I32(S["vocab"])],
     consts=lambda S: dict(N_ITERS=S["ITERS"], BLOCK=S["BS"]),
     grid=lambda S: (S["rows"],), ref=topp_ref,
     gpu=dict(rows=256, vocab=32768, ITERS=32, BS=2048, warps=4),
     interp=dict(rows=6, vocab=300, ITERS=32, BS=128, warps=4), tol=1e-5)
