"""Corpus cases: RMSNorm / LayerNorm / GroupNorm forward and backward,
Welford statistics, fused residual norms."""
import numpy as np

from registry import F32, I32, Buf, case, floats, out, zeros


def np2(n):
    return 1 << (n - 1).bit_length()


def rms_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "bf16"), "w": floats(rng, n, "bf16", 0.1),
            "y": out((m, n), "bf16"), "rstd": out(m, "f32")}


def rms_ref(X, S):
    x = X["x"]
    rstd = 1 / np.sqrt((x * x).mean(axis=1) + 1e-6)
    return {"y": x * rstd[:, None] * (1.0 + X["w"]), "rstd": rstd}


case(name="rmsnorm_fwd_offset", klass="norm", module="rms_norm.py",
     kernel="_rms_norm_forward_kernel", make=rms_make,
     args=lambda S, b: ["y", I32(S["n"]), "x", I32(S["n"]), "w", "rstd", I32(S["n"]), F32(1e-6),
                        F32(1.0)],
     consts=lambda S: dict(BLOCK_SIZE=np2(S["n"])), grid=lambda S: (S["m"],), ref=rms_ref,
     gpu=dict(m=16384, n=4096, warps=8), interp=dict(m=7, n=100), tol=1e-2)


def rms_bwd_make(rng, S):
    m, n, p = S["m"], S["n"], S["p"]
    x = floats(rng, (m, n), "f16")
    xf = x.f64()
    return {"dy": floats(rng, (m, n), "f16"), "x": x, "w": floats(rng, n, "f16"),
            "rstd": Buf(1 / np.sqrt((xf * xf).mean(axis=1) + 1e-6), "f32"),
            "dx": out((m, n), "f16"), "dw": out((p, n), "f32")}


def rms_bwd_ref(X, S):
    x, dy, w, rstd = X["x"], X["dy"], X["w"], X["rstd"][:, None]
    n, p = S["n"], S["p"]
    m = dy * w
    dx = rstd * m - rstd ** 3 / n * (m * x).sum(axis=1, keepdims=True) * x
    per = -(-S["m"] // p)
    part = dy * x * rstd
    dw = np.stack([part[i * per:(i + 1) * per].sum(axis=0) for i in range(p)])
    return {"dx": dx, "dw": dw}


case(name="rmsnorm_bwd_partial_dw", klass="norm", module="rms_norm.py",
     kernel="_rms_norm_backward_kernel", make=rms_bwd_make,
     args=lambda S, b: ["dy", I32(S["n"]), "dx", I32(S["n"]), "x", I32(S["n"]), "w", "rstd", "dw",
                        I32(S["n"]), I32(S["m"]), I32(S["n"]), F32(0.0),
                        I32(-(-S["m"] // S["p"]))],
     consts=lambda S: dict(BLOCK_SIZE=np2(S["n"])), grid=lambda S: (S["p"],), ref=rms_bwd_ref,
     gpu=dict(m=16384, n=4096, p=132, warps=8), interp=dict(m=9, n=40, p=4), tol=2e-3)


def ln_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "f16", 2.0, 0.5), "y": out((m, n), "f16"),
            "w": floats(rng, n, "f32"), "b": floats(rng, n, "f32"), "mean": out(m, "f32"),
            "rstd": out(m, "f32")}


def ln_ref(X, S):
    x = X["x"]
    mu = x.mean(axis=1)
    rstd = 1 / np.sqrt(x.var(axis=1) + 1e-5)
    return {"y": (x - mu[:, None]) * rstd[:, None] * X["w"] + X["b"], "mean": mu, "rstd": rstd}


case(name="layernorm_fwd_chunked", klass="norm", module="layer_norm.py",
     kernel="_layer_norm_fwd_fused", make=ln_make,
     args=lambda S, b: ["x", "y", "w", "b", "mean", "rstd", I32(S["n"]), I32(S["n"]), F32(1e-5)],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"]), grid=lambda S: (S["m"],), ref=ln_ref,
     gpu=dict(m=8192, n=8192, BS=4096, warps=8), interp=dict(m=5, n=100, BS=32), tol=2e-3)


def ln_bwd_make(rng, S):
    m, n, g = S["m"], S["n"], S["g"]
    d = ln_make(rng, S)
    r = ln_ref({k: b.f64() for k, b in d.items()}, S)
    d["dy"] = floats(rng, (m, n), "f16")
    d["mean"], d["rstd"] = Buf(r["mean"], "f32"), Buf(r["rstd"], "f32")
    d["dx"] = out((m, n), "f16")
    d["dw"], d["db"] = zeros((g, n), "f32"), zeros((g, n), "f32")
    d["lock"] = zeros(2 * g, "i32")
    del d["y"], d["b"]
    return d


def ln_bwd_ref(X, S):
    x, dy, w = X["x"], X["dy"], X["w"]
    xhat = (x - X["mean"][:, None]) * X["rstd"][:, None]
    wdy = w * dy
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    dx = (wdy - (xhat * c1 + c2)) * X["rstd"][:, None]
    g = S["g"]
    rows = np.arange(S["m"]) % g
    dw = np.stack([(dy * xhat)[rows == i].sum(axis=0) for i in range(g)])
    db = np.stack([dy[rows == i].sum(axis=0) for i in range(g)])
    return {"dx": dx, "dw": dw, "db": db}


case(name="layernorm_bwd_dx_locks", klass="norm", module="layer_norm.py",
     kernel="_layer_norm_bwd_dx_fused", make=ln_bwd_make,
     args=lambda S, b: ["dx", "dy", "dw", "db", "x", "w", "mean", "rstd", "lock", I32(S["n"]),
                        I32(S["n"])],
     consts=lambda S: dict(GROUP_SIZE_M=S["g"], BLOCK_SIZE_N=np2(S["n"])),
     grid=lambda S: (S["m"],), ref=ln_bwd_ref,
     gpu=dict(m=8192, n=4096, g=64, warps=8), interp=dict(m=10, n=40, g=4), tol=3e-3)


def add_rms_make(rng, S):
    m, n = S["m"], S["n"]
    x, r = floats(rng, (m, n), "f16"), floats(rng, (m, n), "f16")
    x.inout = r.inout = True
    return {"x": x, "r": r, "w": floats(rng, n, "f16")}


def add_rms_ref(X, S):
    h = X["x"] + X["r"]
    return {"r": h, "x": h / np.sqrt((h * h).mean(axis=1, keepdims=True) + 1e-6) * X["w"]}


case(name="fused_add_rmsnorm_inplace", klass="norm", module="norm_variants.py",
     kernel="fused_add_rms_norm_kernel", make=add_rms_make,
     args=lambda S, b: ["x", "r", "w", I32(S["n"]), I32(S["n"]), I32(S["n"]), F32(1e-6)],
     consts=lambda S: dict(BLOCK_N=np2(S["n"])), grid=lambda S: (S["m"],), ref=add_rms_ref,
     gpu=dict(m=8192, n=5120, warps=8), interp=dict(m=6, n=50), tol=2e-3)


def gated_make(rng, S):
    m, n, g = S["m"], S["n"], S["g"]
    return {"x": floats(rng, (m, n * g), "bf16"), "z": floats(rng, (m, n * g), "bf16"),
            "w": floats(rng, n * g, "f32"), "y": out((m, n * g), "f32"),
            "rstd": out((g, m), "f32")}


def gated_ref(X, S):
    m, n, g = S["m"], S["n"], S["g"]
    z = X["z"]
    x = (X["x"] * z / (1 + np.exp(-z))).reshape(m, g, n)
    rstd = 1 / np.sqrt((x * x).mean(axis=2) + 1e-5)
    y = x * rstd[:, :, None] * X["w"].reshape(g, n)
    return {"y": y.reshape(m, g * n), "rstd": rstd.T}


case(name="gated_rmsnorm_groups", klass="norm", module="norm_variants.py",
     kernel="_gated_rms_norm_fwd", make=gated_make,
     args=lambda S, b: ["x", "y", "w", "z", "rstd", I32(S["n"] * S["g"]), I32(S["n"] * S["g"]),
                        I32(S["n"] * S["g"]), I32(S["m"]), I32(S["n"]), F32(1e-5)],
     consts=lambda S: dict(BLOCK_N=np2(S["n"]), HAS_Z=True, NORM_BEFORE_GATE=False),
     grid=lambda S: (S["m"], S["g"]), ref=gated_ref,
     gpu=dict(m=8192, n=1024, g=8, warps=4), interp=dict(m=5, n=24, g=3), tol=2e-5)


def gn_make(rng, S):
    b, c, hw, g = S["b"], S["c"], S["hw"], S["g"]
    return {"x": floats(rng, (b, c, hw), "f16", 1.5, 0.3), "y": out((b, c, hw), "f32"),
            "w": floats(rng, c, "f32"), "bias": floats(rng, c, "f32"),
            "mean": out(b * g, "f32"), "rstd": out(b * g, "f32")}


def gn_ref(X, S):
    b, c, hw, g = S["b"], S["c"], S["hw"], S["g"]
    x = X["x"].reshape(b, g, -1)
    mu, var = x.mean(axis=2), x.var(axis=2)
    rstd = 1 / np.sqrt(var + 1e-5)
    y = ((x - mu[..., None]) * rstd[..., None]).reshape(b, c, hw)
    y = y * X["w"][None, :, None] + X["bias"][None, :, None]
    return {"y": y, "mean": mu.ravel(), "rstd": rstd.ravel()}


case(name="group_norm_welford", klass="welford", module="norm_variants.py",
     kernel="group_norm_fwd_kernel", make=gn_make,
     args=lambda S, b: ["x", "y", "w", "bias", "mean", "rstd",
                        I32(S["c"] // S["g"] * S["hw"]), I32(S["hw"]), I32(S["g"]), I32(S["c"]),
                        F32(1e-5)],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"]), grid=lambda S: (S["b"] * S["g"],), ref=gn_ref,
     gpu=dict(b=16, c=512, hw=4096, g=32, BS=2048, warps=8),
     interp=dict(b=2, c=6, hw=10, g=3, BS=8), tol=1e-4)
