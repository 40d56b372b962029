"""Corpus cases: gathers, scatters, atomics, rotary, activations,
quantisation."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, ints, out, zeros


def np2(n):
    return 1 << (n - 1).bit_length()


case(name="embedding_fwd_int64", klass="gather", module="gather_scatter.py",
     kernel="embedding_fwd_kernel",
     make=lambda rng, S: {"ids": ints(rng, S["t"], 0, S["v"]),
                          "w": floats(rng, (S["v"], S["h"]), "f16"),
                          "o": out((S["t"], S["h"]), "f16")},
     args=lambda S, b: ["ids", "w", "o", I32(S["t"]), I32(S["h"])],
     consts=lambda S: dict(BLOCK_T=S["BT"], BLOCK_H=S["BH"]),
     grid=lambda S: (cdiv(S["t"], S["BT"]), cdiv(S["h"], S["BH"])),
     ref=lambda X, S: {"o": X["w"][X["ids"].astype(int)]},
     gpu=dict(t=16384, v=128256, h=4096, BT=16, BH=512, warps=4),
     interp=dict(t=20, v=50, h=40, BT=8, BH=16), tol=0.0)


def emb_bwd_ref(X, S):
    gw = X["gw"].copy()
    np.add.at(gw, X["ids"].astype(int), X["g"])
    return {"gw": gw}


case(name="embedding_bwd_atomic_scatter", klass="scatter", module="gather_scatter.py",
     kernel="embedding_bwd_kernel",
     make=lambda rng, S: {"g": floats(rng, (S["t"], S["h"]), "f32"),
                          "gw": zeros((S["v"], S["h"]), "f32"),
                          "ids": ints(rng, S["t"], 0, S["v"])},
     args=lambda S, b: ["g", "gw", "ids", I32(S["t"]), I32(S["h"])],
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"]),
     grid=lambda S: (cdiv(S["t"], S["BM"]), cdiv(S["h"], S["BN"])), ref=emb_bwd_ref,
     gpu=dict(t=16384, v=32000, h=4096, BM=32, BN=128, warps=4),
     interp=dict(t=30, v=7, h=40, BM=8, BN=16), tol=1e-6)


def cache_make(rng, S):
    t, nb, bs, n = S["t"], S["nb"], S["bs"], S["nh"] * S["hs"]
    slots = rng.permutation(nb * bs)[:t]
    slots[::5] = -1
    kc, vc = floats(rng, (nb, bs, n), "f16"), floats(rng, (nb, bs, n), "f16")
    kc.inout = vc.inout = True
    return {"k": floats(rng, (t, n), "f16"), "v": floats(rng, (t, n), "f16"), "kc": kc,
            "vc": vc, "slots": Buf(slots, "i64")}


def cache_ref(X, S):
    kc, vc = X["kc"].copy(), X["vc"].copy()
    bs = S["bs"]
    for t, s in enumerate(X["slots"].astype(int)):
        if s >= 0:
            kc[s // bs, s % bs] = X["k"][t]
            vc[s // bs, s % bs] = X["v"][t]
    return {"kc": kc, "vc": vc}


case(name="kv_cache_slot_scatter", klass="scatter", module="gather_scatter.py",
     kernel="reshape_and_cache_kernel", make=cache_make,
     args=lambda S, b: ["k", "v", "kc", "vc", "slots", I32(S["nh"] * S["hs"]),
                        I32(S["nh"] * S["hs"]), I32(S["bs"] * S["nh"] * S["hs"]),
                        I32(S["nh"] * S["hs"]), I32(S["nh"]), I32(S["hs"]), I32(S["bs"])],
     consts=lambda S: dict(BLOCK_HD=S["BHD"]), grid=lambda S: (S["t"],), ref=cache_ref,
     gpu=dict(t=8192, nb=1024, bs=16, nh=8, hs=128, BHD=1024, warps=4),
     interp=dict(t=20, nb=4, bs=8, nh=2, hs=12, BHD=16), tol=0.0)


def bincount_ref(X, S):
    return {"c": np.bincount(X["ids"].astype(int), minlength=S["v"]).astype(np.float64)}


case(name="bincount_int_atomics", klass="scatter", module="gather_scatter.py",
     kernel="bincount_kernel",
     make=lambda rng, S: {"ids": ints(rng, S["n"], 0, S["v"]), "c": zeros(S["v"], "i32")},
     args=lambda S, b: ["ids", "c", I32(S["n"])], consts=lambda S: dict(BLOCK=S["BS"]),
     grid=lambda S: (cdiv(S["n"], S["BS"]),), ref=bincount_ref,
     gpu=dict(n=1 << 24, v=32000, BS=1024, warps=4), interp=dict(n=100, v=9, BS=32), tol=0.0)


def rope_make(rng, S):
    t, hq, hk, d, mp = S["t"], S["hq"], S["hk"], S["d"], S["mp"]
    q, k = floats(rng, (t, hq, d), "bf16"), floats(rng, (t, hk, d), "bf16")
    q.inout = k.inout = True
    inv = 1.0 / (10000 ** (np.arange(0, d, 2) / d))
    ang = np.arange(mp)[:, None] * inv[None, :]
    return {"q": q, "k": k, "cs": Buf(np.concatenate([np.cos(ang), np.sin(ang)], axis=1), "f32"),
            "pos": ints(rng, t, 0, mp)}


def rope_ref(X, S):
    h = S["d"] // 2
    cs = X["cs"][X["pos"].astype(int)]
    cos, sin = cs[:, None, :h], cs[:, None, h:]

    def rot(x):
        x1, x2 = x[..., :h], x[..., h:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return {"q": rot(X["q"]), "k": rot(X["k"])}


case(name="rotary_neox_inplace", klass="rotary", module="elementwise_kernels.py",
     kernel="rotary_neox_kernel", make=rope_make,
     args=lambda S, b: ["q", "k", "cs", "pos", I32(S["hq"] * S["d"]), I32(S["hk"] * S["d"]),
                        I32(S["hq"]), I32(S["hk"])],
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_H=np2(max(S["hq"], S["hk"]))),
     grid=lambda S: (S["t"],), ref=rope_ref,
     gpu=dict(t=16384, hq=32, hk=8, d=128, mp=8192, warps=4),
     interp=dict(t=6, hq=3, hk=1, d=16, mp=20), tol=1e-2)


def silu(x):
    return x / (1 + np.exp(-x))


case(name="silu_and_mul", klass="activation", module="elementwise_kernels.py",
     kernel="silu_and_mul_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], 2 * S["d"]), "bf16"),
                          "o": out((S["m"], S["d"]), "bf16")},
     args=lambda S, b: ["x", "o", I32(S["d"]), I32(2 * S["d"]), I32(S["d"])],
     consts=lambda S: dict(BLOCK=S["BS"]), grid=lambda S: (S["m"], cdiv(S["d"], S["BS"])),
     ref=lambda X, S: {"o": silu(X["x"][:, :S["d"]]) * X["x"][:, S["d"]:]},
     gpu=dict(m=8192, d=14336, BS=1024, warps=4), interp=dict(m=5, d=40, BS=16), tol=1e-2)


def fp8q_ref(X, S):
    x = X["x"]
    s = np.maximum(np.abs(x).max(axis=1), 1e-10) / 448.0
    return {"q": x / s[:, None], "s": s}


case(name="per_token_quant_fp8", klass="quant", module="elementwise_kernels.py",
     kernel="per_token_quant_fp8_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f16"),
                          "q": out((S["m"], S["n"]), "f8e4"), "s": out(S["m"], "f32")},
     args=lambda S, b: ["x", "q", "s", I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(FP8_MAX=448.0, BLOCK=np2(S["n"])), grid=lambda S: (S["m"],),
     ref=fp8q_ref, gpu=dict(m=16384, n=7168, warps=8), interp=dict(m=5, n=40),
     tol={"q": 0.05, "s": 1e-6})


def int8g_ref(X, S):
    y = X["y"].reshape(-1, S["gs"])
    s = np.maximum(np.abs(y).max(axis=1), 1e-10) / 127.0
    q = np.clip(y / s[:, None], -128, 127)
    q = np.where(q >= 0, np.floor(q + 0.5), np.ceil(q - 0.5))
    return {"q": q.reshape(-1), "s": s}


case(name="per_token_group_quant_int8", klass="quant", module="elementwise_kernels.py",
     kernel="per_token_group_quant_int8_kernel",
     make=lambda rng, S: {"y": floats(rng, S["m"] * S["n"], "f16"),
                          "q": out(S["m"] * S["n"], "i8"),
                          "s": out(S["m"] * S["n"] // S["gs"], "f32")},
     args=lambda S, b: ["y", "q", "s", I32(S["gs"]), F32(1e-10)],
     consts=lambda S: dict(BLOCK=np2(S["gs"])), grid=lambda S: (S["m"] * S["n"] // S["gs"],),
     ref=int8g_ref, gpu=dict(m=16384, n=7168, gs=128, warps=1), interp=dict(m=4, n=48, gs=16),
     tol={"q": 1e-2, "s": 1e-6})


case(name="moe_topk_weighted_sum", klass="moe", module="elementwise_kernels.py",
     kernel="moe_sum_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["t"] * S["k"], S["h"]), "bf16"),
                          "w": Buf(rng.random((S["t"], S["k"])), "f32"),
                          "o": out((S["t"], S["h"]), "bf16")},
     args=lambda S, b: ["x", "w", "o", I32(S["h"])],
     consts=lambda S: dict(TOPK=S["k"], BLOCK=S["BS"]),
     grid=lambda S: (S["t"], cdiv(S["h"], S["BS"])),
     ref=lambda X, S: {"o": (X["x"].reshape(S["t"], S["k"], S["h"]) * X["w"][..., None]).sum(1)},
     gpu=dict(t=16384, k=8, h=4096, BS=1024, warps=4), interp=dict(t=5, k=3, h=40, BS=16),
     tol=1e-2)
