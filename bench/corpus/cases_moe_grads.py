"""Corpus cases: a grouped GEMM's weight gradient over expert-sorted rows
(row blocks under an always-true guard, dY gathered through a
permutation), the router's top-k gating, and the backward of a normalised
tf32 projection with its weight gradient added by atomics."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, out, zeros


# ---- grouped weight gradient ---------------------------------------------------------------

def wgrad_make(rng, S):
    e, n, k = S["e"], S["n"], S["k"]
    sizes = rng.multinomial(S["rows"], rng.dirichlet(np.ones(e)))
    sizes[rng.integers(0, e)] = 0  # an expert no token was routed to
    rows = int(sizes.sum())
    return {"x": floats(rng, (rows, k), "bf16"), "dy": floats(rng, (rows, n), "bf16"),
            "dw": out((e, n, k), "bf16"), "sizes": Buf(sizes, "i32"),
            "perm": Buf(rng.permutation(rows), "i32")}


def wgrad_ref(X, S):
    x, dy, sizes, perm = X["x"], X["dy"], X["sizes"].astype(int), X["perm"].astype(int)
    dw = np.zeros((S["e"], S["n"], S["k"]))
    start = 0
    for g, m in enumerate(sizes):
        rows = np.arange(start, start + m)
        dw[g] = dy[perm[rows]].T @ x[rows]
        start += m
    return {"dw": dw}


case(name="moe_expert_wgrad_guarded", klass="gemm", module="moe_routing_grads.py",
     kernel="expert_wgrad_kernel", make=wgrad_make,
     args=lambda S, b: ["x", "dy", "dw", "sizes", "perm", I32(b["x"].arr.shape[0])],
     consts=lambda S: dict(NUM_EXPERTS=S["e"], N=S["n"], K=S["k"], BLOCK_M=S["BM"],
                           BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]) * cdiv(S["k"], S["BK"]),), ref=wgrad_ref,
     gpu=dict(rows=16384, e=16, n=2048, k=768, BM=64, BN=64, BK=64),
     interp=dict(rows=150, e=4, n=32, k=48, BM=16, BN=16, BK=16), tol=8e-3)


# ---- router top-k ----------------------------------------------------------------------------

def topk_make(rng, S):
    t, e = S["t"], S["e"]
    return {"logits": floats(rng, (t, e), "f32", scale=2.0), "w": out((t, S["k"]), "f32"),
            "ids": out((t, S["k"]), "i32")}


def topk_ref(X, S):
    x = X["logits"]
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ids = np.argsort(-p, axis=1, kind="stable")[:, :S["k"]]
    return {"w": np.take_along_axis(p, ids, axis=1), "ids": ids}


case(name="moe_topk_gating", klass="reduce", module="moe_routing_grads.py",
     kernel="topk_gating_kernel", make=topk_make,
     args=lambda S, b: ["logits", "w", "ids", I32(S["t"]), I32(S["e"]), I32(S["k"])],
     consts=lambda S: dict(BLOCK_T=S["BT"], BLOCK_E=S["BE"]),
     grid=lambda S: (cdiv(S["t"], S["BT"]),), ref=topk_ref,
     gpu=dict(t=16384, e=64, k=8, BT=16, BE=64), interp=dict(t=37, e=20, k=4, BT=8, BE=32),
     tol={"w": 1e-5, "ids": 0.0})


# ---- normalised projection backward (tf32, atomics) -------------------------------------------

def normmix_make(rng, S):
    n, k, m = S["n"], S["k"], S["m"]
    x = floats(rng, (n, k), "bf16")
    xf = x.f64()
    phi = floats(rng, (k, m), "f32", scale=0.02)
    rstd = 1.0 / np.sqrt((xf * xf).mean(axis=1) + 1e-6)
    mix = (xf @ phi.f64()) * rstd[:, None]
    dmix = floats(rng, (n, m), "f32")
    g = (dmix.f64() * mix).sum(axis=1) / rstd
    return {"x": x, "phi": phi, "rstd": Buf(rstd, "f32"), "g": Buf(g, "f32"), "dmix": dmix,
            "dx": out((n, k), "bf16"), "dphi": zeros((k, m), "f32")}


def normmix_ref(X, S):
    x, phi, rstd, g, dmix = X["x"], X["phi"], X["rstd"], X["g"], X["dmix"]
    gz = dmix * rstd[:, None]
    dx = gz @ phi.T - x * (g * rstd ** 3 / S["k"])[:, None]
    return {"dx": dx, "dphi": x.T @ gz}


case(name="norm_mix_bwd_tf32", klass="gemm", module="moe_routing_grads.py",
     kernel="norm_mix_bwd_kernel", make=normmix_make,
     args=lambda S, b: ["x", "phi", "rstd", "g", "dmix", "dx", "dphi", I32(S["n"])],
     consts=lambda S: dict(K=S["k"], M=S["m"], BLOCK_N=S["BN"], BLOCK_K=S["BK"],
                           BLOCK_M=S["BM"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]), cdiv(S["k"], S["BK"])), ref=normmix_ref,
     gpu=dict(n=2048, k=2048, m=24, BN=32, BK=256, BM=32),
     interp=dict(n=40, k=64, m=10, BN=16, BK=32, BM=16), tol=5e-3)
