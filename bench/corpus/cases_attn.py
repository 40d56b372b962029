"""Corpus cases: varlen GQA prefill, paged GQA decode, split-KV decode,
block-sparse decode over selected KV blocks."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out


def attn(q, k, v, scale, causal):
    s = q @ k.T * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


def varlen_make(rng, S):
    lens = rng.integers(S["lmin"], S["lmax"], S["b"])
    cu = np.concatenate([[0], np.cumsum(lens)])
    t, h, kh, d = int(cu[-1]), S["h"], S["kh"], S["d"]
    return {"q": floats(rng, (t, h, d), "f16"), "k": floats(rng, (t, kh, d), "f16"),
            "v": floats(rng, (t, kh, d), "f16"), "o": out((t, h, d), "f16"),
            "cu": Buf(cu, "i32")}


def varlen_ref(X, S):
    cu = X["cu"].astype(int)
    o = np.zeros(X["q"].shape)
    g = S["h"] // S["kh"]
    for b in range(S["b"]):
        sl = slice(cu[b], cu[b + 1])
        for h in range(S["h"]):
            o[sl, h] = attn(X["q"][sl, h], X["k"][sl, h // g], X["v"][sl, h // g],
                            S["d"] ** -0.5, True)
    return {"o": o}


case(name="attn_varlen_gqa_causal", klass="attention", module="attention_kernels.py",
     kernel="_fwd_varlen_gqa", make=varlen_make,
     args=lambda S, b: ["q", "k", "v", "o", "cu", F32(S["d"] ** -0.5), I32(S["h"] * S["d"]),
                        I32(S["d"]), I32(S["kh"] * S["d"]), I32(S["d"]), I32(S["h"] * S["d"]),
                        I32(S["d"])],
     consts=lambda S: dict(kv_group_num=S["h"] // S["kh"], BLOCK_M=S["BM"], BLOCK_DMODEL=S["d"],
                           BLOCK_N=S["BN"], IS_CAUSAL=True),
     grid=lambda S: (S["b"], S["h"], cdiv(S["lmax"], S["BM"])), ref=varlen_ref,
     shape=lambda S: f"b{S['b']} h{S['h']}/{S['kh']} len<{S['lmax']} d{S['d']}",
     gpu=dict(b=4, h=16, kh=4, d=128, lmin=1024, lmax=2048, BM=128, BN=64, warps=8, stages=2),
     interp=dict(b=3, h=4, kh=2, d=16, lmin=5, lmax=40, BM=16, BN=16, stages=2), tol=5e-3)


def paged_make(rng, S):
    b, kh, g, d, ps, maxlen = S["b"], S["kh"], S["g"], S["d"], S["ps"], S["maxlen"]
    lens = rng.integers(1, maxlen, b)
    pages_per = cdiv(maxlen, ps)
    nblocks = b * pages_per + 3
    table = rng.permutation(nblocks)[:b * pages_per].reshape(b, pages_per)
    return {"q": floats(rng, (b, kh * g, d), "f16"),
            "kc": floats(rng, (nblocks, ps, kh, d), "f16"),
            "vc": floats(rng, (nblocks, ps, kh, d), "f16"), "bt": Buf(table, "i32"),
            "lens": Buf(lens, "i32"), "o": out((b, kh * g, d), "f16")}


def paged_ref(X, S):
    g, ps = S["g"], S["ps"]
    o = np.zeros(X["q"].shape)
    for b in range(S["b"]):
        n = int(X["lens"][b])
        pages = X["bt"][b].astype(int)
        k = X["kc"][pages].reshape(-1, S["kh"], S["d"])[:n]
        v = X["vc"][pages].reshape(-1, S["kh"], S["d"])[:n]
        for h in range(S["kh"] * g):
            o[b, h] = attn(X["q"][b, h:h + 1], k[:, h // g], v[:, h // g], S["d"] ** -0.5,
                           False)[0]
    return {"o": o}


def paged_args(S, b):
    kh, g, d, ps = S["kh"], S["g"], S["d"], S["ps"]
    return ["q", "kc", "vc", "bt", "lens", "o", F32(d ** -0.5), I32(kh * g * d), I32(d),
            I32(b["bt"].arr.shape[1]), I32(ps * kh * d), I32(kh * d), I32(d), I32(kh * g * d),
            I32(d)]


case(name="paged_decode_gqa", klass="attention", module="attention_kernels.py",
     kernel="_paged_decode_gqa", make=paged_make, args=paged_args,
     consts=lambda S: dict(QUERY_GROUP=S["g"], PAGE_SIZE=S["ps"], HEAD_DIM=S["d"],
                           PADDED_GROUP=16),
     grid=lambda S: (S["b"], S["kh"]), ref=paged_ref,
     shape=lambda S: f"b{S['b']} kvh{S['kh']}x{S['g']} len<{S['maxlen']} page{S['ps']}",
     gpu=dict(b=32, kh=8, g=4, d=128, ps=16, maxlen=2048, warps=4, stages=2),
     interp=dict(b=3, kh=2, g=4, d=16, ps=16, maxlen=50, stages=2), tol=5e-3)


def split_make(rng, S):
    b, h, d, n = S["b"], S["h"], S["d"], S["n"]
    return {"q": floats(rng, (b, h, d), "f16"), "k": floats(rng, (b, n, h, d), "f16"),
            "v": floats(rng, (b, n, h, d), "f16"),
            "mo": out((b, h, S["sp"], d), "f32"), "ml": out((b, h, S["sp"]), "f32"),
            "lens": Buf(rng.integers(1, n // S["sp"], b) * S["sp"], "i32")}


def split_ref(X, S):
    sp, scale = S["sp"], S["d"] ** -0.5
    mo = np.zeros(X["mo"].shape)
    ml = np.zeros(X["ml"].shape)
    for b in range(S["b"]):
        n = int(X["lens"][b])
        per = -(-n // sp)
        for h in range(S["h"]):
            for s in range(sp):
                lo, hi = s * per, min(s * per + per, n)
                if hi <= lo:
                    mo[b, h, s], ml[b, h, s] = 0, -np.inf
                    continue
                sc = X["k"][b, lo:hi, h] @ X["q"][b, h] * scale
                m = sc.max()
                p = np.exp(sc - m)
                mo[b, h, s] = p @ X["v"][b, lo:hi, h] / p.sum()
                ml[b, h, s] = m + np.log(p.sum())
    return {"mo": mo, "ml": ml}


case(name="decode_split_kv_stage1", klass="attention", module="attention_kernels.py",
     kernel="_decode_split_kv_stage1", make=split_make,
     args=lambda S, b: ["q", "k", "v", "mo", "ml", "lens", F32(S["d"] ** -0.5), I32(S["h"] * S["d"]),
                        I32(S["n"] * S["h"] * S["d"]), I32(S["h"] * S["d"]),
                        I32(S["h"] * S["sp"] * S["d"]), I32(S["sp"] * S["d"]), I32(S["d"]),
                        I32(S["h"])],
     consts=lambda S: dict(KV_SPLITS=S["sp"], BLOCK_N=S["BN"], HEAD_DIM=S["d"]),
     grid=lambda S: (S["b"], S["h"], S["sp"]), ref=split_ref,
     gpu=dict(b=8, h=32, d=128, n=4096, sp=8, BN=64, warps=4),
     interp=dict(b=2, h=3, d=16, n=60, sp=4, BN=8), tol=1e-4)


def stage2_make(rng, S):
    b, h, sp, d = S["b"], S["h"], S["sp"], S["d"]
    return {"mo": floats(rng, (b, h, sp, d), "f32"), "ml": floats(rng, (b, h, sp), "f32", 3.0),
            "o": out((b, h, d), "f16")}


def stage2_ref(X, S):
    w = np.exp(X["ml"] - X["ml"].max(axis=2, keepdims=True))
    return {"o": (w[..., None] * X["mo"]).sum(axis=2) / w.sum(axis=2)[..., None]}


case(name="decode_split_kv_stage2", klass="attention", module="attention_kernels.py",
     kernel="_decode_split_kv_stage2", make=stage2_make,
     args=lambda S, b: ["mo", "ml", "o", I32(S["h"] * S["sp"] * S["d"]), I32(S["sp"] * S["d"]),
                        I32(S["d"]), I32(S["h"] * S["d"]), I32(S["h"])],
     consts=lambda S: dict(KV_SPLITS=S["sp"], HEAD_DIM=S["d"]),
     grid=lambda S: (S["b"], S["h"]), ref=stage2_ref,
     gpu=dict(b=64, h=64, sp=16, d=128, warps=4), interp=dict(b=2, h=3, sp=4, d=16), tol=2e-3)


def sdpa_mask_make(rng, S):
    b, h, n, d = S["b"], S["h"], S["n"], S["d"]
    return {"q": floats(rng, (b, h, n, d), "f16"), "k": floats(rng, (b, h, n, d), "f16"),
            "v": floats(rng, (b, h, n, d), "f16"), "mask": floats(rng, (b, 1, n, n), "f16"),
            "o": out((b, h, n, d), "f16")}


def sdpa_mask_ref(X, S):
    scale = S["d"] ** -0.5
    s = np.einsum("bhmd,bhnd->bhmn", X["q"], X["k"]) * scale + X["mask"]
    p = np.exp(s - s.max(axis=3, keepdims=True))
    return {"o": np.einsum("bhmn,bhnd->bhmd", p / p.sum(axis=3, keepdims=True), X["v"])}


def sdpa_mask_args(S, b):
    h, n, d = S["h"], S["n"], S["d"]
    qs = [I32(h * n * d), I32(n * d), I32(d)]
    return ["q", "k", "v", "mask", "o", F32(d ** -0.5)] + qs * 3 + \
        [I32(n * n), I32(0), I32(n)] + qs + [I32(h), I32(n)]


case(name="sdpa_additive_mask", klass="attention", module="attention_mask_kernels.py",
     kernel="_sdpa_fwd_additive_mask", make=sdpa_mask_make, args=sdpa_mask_args,
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BM"]), S["b"] * S["h"]), ref=sdpa_mask_ref,
     shape=lambda S: f"b{S['b']} h{S['h']} n{S['n']} d{S['d']} mask b,1,n,n",
     gpu=dict(b=4, h=16, n=2048, d=64, BM=128, BN=64, warps=4, stages=3),
     interp=dict(b=2, h=2, n=40, d=16, BM=16, BN=16), tol=5e-3)


case(name="paged_decode_padded_head", klass="attention", module="paged_attention_2d.py",
     kernel="_paged_decode_padded_head", make=paged_make, args=paged_args,
     consts=lambda S: dict(QUERY_GROUP=S["g"], PAGE_SIZE=S["ps"], HEAD_SIZE=S["d"],
                           HEAD_SIZE_PADDED=S["dp"], PADDED_GROUP=16),
     grid=lambda S: (S["b"], S["kh"]), ref=paged_ref,
     shape=lambda S: f"b{S['b']} kvh{S['kh']}x{S['g']} len<{S['maxlen']} page{S['ps']} "
                     f"d{S['d']}/{S['dp']}",
     gpu=dict(b=32, kh=8, g=4, d=96, dp=128, ps=16, maxlen=2048, warps=4, stages=2),
     interp=dict(b=3, kh=2, g=4, d=12, dp=16, ps=16, maxlen=50, stages=2), tol=5e-3)


case(name="paged_decode_group_rows", klass="attention", module="paged_attention_2d.py",
     kernel="_paged_decode_group_rows", make=paged_make, args=paged_args,
     consts=lambda S: dict(QUERY_GROUP=S["g"], PAGE_SIZE=S["ps"], HEAD_SIZE=S["d"]),
     grid=lambda S: (S["b"], S["kh"]), ref=paged_ref,
     shape=lambda S: f"b{S['b']} kvh{S['kh']}x{S['g']} len<{S['maxlen']} page{S['ps']} "
                     f"d{S['d']}",
     gpu=dict(b=32, kh=8, g=4, d=128, ps=16, maxlen=2048, warps=4, stages=2),
     interp=dict(b=3, kh=2, g=4, d=16, ps=16, maxlen=50, stages=2), tol=5e-3)


def topk_make(rng, S):
    b, kh, g, d, bk, t, n = S["b"], S["kh"], S["g"], S["d"], S["bk"], S["topk"], S["maxlen"]
    lens = rng.integers(n // 2, n, b)
    idx = np.full((b, kh, t), -1)
    for i in range(b):
        nb = cdiv(int(lens[i]), bk)
        for h in range(kh):  # the picks, last block always among them, in any order
            pick = rng.permutation(nb - 1)[:min(t, nb) - 1]
            idx[i, h, :len(pick) + 1] = rng.permutation(np.append(pick, nb - 1))
    return {"q": floats(rng, (b, kh * g, d), "bf16"), "k": floats(rng, (b, n, kh, d), "bf16"),
            "v": floats(rng, (b, n, kh, d), "bf16"), "idx": Buf(idx, "i32"),
            "lens": Buf(lens, "i32"), "o": out((b, kh * g, d), "bf16")}


def topk_ref(X, S):
    g, bk = S["g"], S["bk"]
    o = np.zeros(X["q"].shape)
    for b in range(S["b"]):
        n = int(X["lens"][b])
        for h in range(S["kh"]):
            blocks = [int(x) for x in X["idx"][b, h] if x >= 0]
            keys = np.concatenate([np.arange(x * bk, min(n, (x + 1) * bk)) for x in blocks])
            k, v = X["k"][b, keys, h], X["v"][b, keys, h]
            o[b, h * g:(h + 1) * g] = attn(X["q"][b, h * g:(h + 1) * g], k, v, S["d"] ** -0.5,
                                           False)
    return {"o": o}


def topk_args(S, b):
    kh, g, d, t, n = S["kh"], S["g"], S["d"], S["topk"], S["maxlen"]
    return ["q", "k", "v", "idx", "lens", "o", F32(d ** -0.5), I32(kh * g * d), I32(d),
            I32(n * kh * d), I32(kh * d), I32(d), I32(kh * t), I32(t), I32(kh * g * d), I32(d),
            I32(g)]


case(name="topk_block_decode", klass="attention", module="attention_kernels.py",
     kernel="_topk_block_decode", make=topk_make, args=topk_args,
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_K=S["bk"], BLOCK_H=max(16, S["g"]),
                           TOPK=S["topk"]),
     grid=lambda S: (S["b"], S["kh"]), ref=topk_ref,
     shape=lambda S: f"b{S['b']} kvh{S['kh']}x{S['g']} top{S['topk']}x{S['bk']} "
                     f"len<{S['maxlen']}",
     gpu=dict(b=64, kh=4, g=16, d=128, bk=64, topk=16, maxlen=8192, warps=8, stages=3),
     interp=dict(b=3, kh=2, g=3, d=16, bk=16, topk=4, maxlen=100, stages=2), tol=2e-2)


# ---- split-KV decode over a paged cache, BLOCK_N keys gathered a step --------------------

def split_make(rng, S):
    b, hq, hk, lk, ps = S["b"], S["hq"], S["hk"], S["lk"], S["ps"]
    lens = rng.integers(S["lmin"], S["lmax"], b)
    pages_per = cdiv(S["lmax"], ps)
    nblocks = b * pages_per + 5
    table = rng.permutation(nblocks)[:b * pages_per].reshape(b, pages_per)
    d = {"q": floats(rng, (b, hq, lk), "bf16"), "kc": floats(rng, (nblocks * ps, hk, lk), "bf16"),
         "bt": Buf(table, "i32"), "lens": Buf(lens, "i32"),
         "part": out((b, hq, S["splits"], S["lv"] + 1), "f32")}
    if S["lv"] == lk:
        d["vc"] = floats(rng, (nblocks * ps, hk, lk), "bf16")
    return d


def split_ref(X, S):
    hq, hk, ps, lv, ns = S["hq"], S["hk"], S["ps"], S["lv"], S["splits"]
    vc = X.get("vc", X["kc"])
    part = np.zeros((S["b"], hq, ns, lv + 1))
    for b in range(S["b"]):
        n = int(X["lens"][b])
        pos = np.arange(n)
        slot = X["bt"][b].astype(int)[pos // ps] * ps + pos % ps
        per = cdiv(n, ns)
        for h in range(hq):
            s = X["kc"][slot, h // (hq // hk)] @ X["q"][b, h] * S["scale"]
            v = vc[slot, h // (hq // hk), :lv]
            for i in range(ns):
                lo, hi = i * per, min(i * per + per, n)
                m = s[lo:hi].max()
                p = np.exp(s[lo:hi] - m)
                part[b, h, i, :lv] = p @ v[lo:hi] / p.sum()
                part[b, h, i, lv] = m + np.log(p.sum())
    return {"part": part}


def split_args(S, b):
    hq, hk, lk, lv, ns = S["hq"], S["hk"], S["lk"], S["lv"], S["splits"]
    v = "vc" if lv == lk else "kc"
    return ["q", "kc", v, F32(S["scale"]), "bt", "lens", "part", I32(b["bt"].arr.shape[1]),
            I32(hq * lk), I32(lk), I32(hk * lk), I32(lk), I32(hk * lk), I32(lk),
            I32(hq * ns * (lv + 1)), I32(ns * (lv + 1)), I32(lv + 1)]


def split_case(name, gpu, interp):
    case(name=name, klass="attention", module="decode_split_kv.py",
         kernel="_decode_split_stage1", make=split_make, args=split_args,
         consts=lambda S: dict(group=S["hq"] // S["hk"], n_q_heads=S["hq"],
                               BLOCK_DMODEL=S["lk"] - S["dpe"], BLOCK_DPE=S["dpe"],
                               BLOCK_DV=S["lv"], BLOCK_N=S["BN"], BLOCK_H=16,
                               NUM_SPLITS=S["splits"], PAGE=S["ps"], Lk=S["lk"] - S["dpe"],
                               Lv=S["lv"]),
         grid=lambda S: (S["b"], cdiv(S["hq"], min(16, S["hq"] // S["hk"])), S["splits"]),
         ref=split_ref,
         shape=lambda S: f"b{S['b']} h{S['hq']}/{S['hk']} len<{S['lmax']} page{S['ps']} "
                         f"{S['lk']}/{S['lv']} x{S['splits']}",
         gpu=gpu, interp=interp, tol=1e-2)


# MLA (DeepSeek over 8 ranks: 16 heads on one 512 + 64 latent head, page 64, 4 splits)
split_case("decode_split_mla",
           gpu=dict(b=64, hq=16, hk=1, lk=576, dpe=64, lv=512, ps=64, splits=4, lmin=2048,
                    lmax=4096, BN=32, scale=192 ** -0.5, warps=4, stages=2),
           interp=dict(b=3, hq=4, hk=1, lk=48, dpe=16, lv=32, ps=4, splits=3, lmin=20, lmax=60,
                       BN=16, scale=0.2, warps=4, stages=2))
# GQA 32/8, head 128, page 16, 8 splits (16 x 32 scores of 4 live heads)
split_case("decode_split_gqa",
           gpu=dict(b=64, hq=32, hk=8, lk=128, dpe=0, lv=128, ps=16, splits=8, lmin=2048,
                    lmax=4096, BN=32, scale=128 ** -0.5, warps=4, stages=2),
           interp=dict(b=3, hq=8, hk=2, lk=32, dpe=0, lv=32, ps=4, splits=3, lmin=20, lmax=60,
                       BN=16, scale=0.2, warps=4, stages=2))
