"""Corpus cases: softmax and cross-entropy, tuple scans and reductions,
chunked state-space-model kernels."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, ints, out


def np2(n):
    return 1 << (n - 1).bit_length()


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


case(name="softmax_persistent_rows", klass="softmax", module="softmax_kernels.py",
     kernel="softmax_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f32"),
                          "y": out((S["m"], S["n"]), "f32")},
     args=lambda S, b: ["y", "x", I32(S["n"]), I32(S["n"]), I32(S["m"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_SIZE=np2(S["n"]), num_stages=S["stages"]),
     grid=lambda S: (S["p"],), ref=lambda X, S: {"y": softmax(X["x"])},
     gpu=dict(m=32768, n=1000, p=264, warps=8, stages=4), interp=dict(m=9, n=50, p=4, stages=2),
     tol=1e-5)

case(name="softmax_online_wide", klass="softmax", module="softmax_kernels.py",
     kernel="softmax_online_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f16", 3.0),
                          "y": out((S["m"], S["n"]), "f16")},
     args=lambda S, b: ["y", "x", I32(S["m"]), I32(S["n"])],
     consts=lambda S: dict(TILE_N=S["TN"]), grid=lambda S: (S["m"],),
     ref=lambda X, S: {"y": softmax(X["x"])},
     gpu=dict(m=4096, n=50257, TN=4096, warps=8), interp=dict(m=4, n=300, TN=64), tol=2e-3)


def sm_bwd_make(rng, S):
    m, n = S["m"], S["n"]
    y = softmax(rng.standard_normal((m, n)))
    return {"y": Buf(y, "f16"), "dy": floats(rng, (m, n), "f16"), "dx": out((m, n), "f16")}


case(name="softmax_bwd_tiles", klass="softmax", module="softmax_kernels.py",
     kernel="softmax_backward_kernel", make=sm_bwd_make,
     args=lambda S, b: ["y", "dy", "dx", I32(S["m"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=np2(S["n"])),
     grid=lambda S: (cdiv(S["m"], S["BM"]),),
     ref=lambda X, S: {"dx": X["y"] * (X["dy"] - (X["y"] * X["dy"]).sum(axis=1, keepdims=True))},
     gpu=dict(m=16384, n=1024, BM=4, warps=4), interp=dict(m=10, n=40, BM=4), tol=3e-3)


def ce_make(rng, S):
    m, v = S["m"], S["v"]
    y = rng.integers(0, v, m)
    y[::7] = -100
    x = floats(rng, (m, v), "f32", 2.0)
    x.inout = True
    return {"x": x, "y": Buf(y, "i64"), "loss": out(m, "f32")}


def ce_ref(X, S):
    x, y, ls = X["x"], X["y"].astype(int), S["ls"]
    m, v = x.shape
    valid = y != -100
    n = valid.sum()
    mx = x.max(axis=1, keepdims=True)
    lse = (mx + np.log(np.exp(x - mx).sum(axis=1, keepdims=True)))[:, 0]
    yy = np.where(valid, y, 0)
    xy = x[np.arange(m), yy]
    eps = ls / v
    loss = (lse - xy) * (1 - ls) + (-eps * x.sum(axis=1) + ls * lse)
    grad = np.exp(x - lse[:, None]) - eps
    grad[np.arange(m), yy] -= (1 - ls)
    grad /= n
    grad[~valid] = 0
    return {"loss": np.where(valid, loss / n, 0), "x": grad}


case(name="cross_entropy_inplace_grad", klass="softmax", module="cross_entropy.py",
     kernel="liger_style_cross_entropy_kernel", make=ce_make,
     args=lambda S, b: ["x", I32(S["v"]), "y", "loss", I32(S["v"]),
                        I32(int((b["y"].arr != -100).sum())), I32(-100)],
     consts=lambda S: dict(label_smoothing=S["ls"], BLOCK_SIZE=S["BS"]),
     grid=lambda S: (S["m"],), ref=ce_ref,
     gpu=dict(m=4096, v=32000, ls=0.1, BS=8192, warps=32), interp=dict(m=9, v=100, ls=0.1, BS=32),
     tol=1e-4)

# ---- scans and tuple reductions ---------------------------------------------------------


def cummax_ref(X, S):
    """Running max and the first index where it was reached (ties keep the earlier)."""
    x = X["x"]
    v = np.maximum.accumulate(x, axis=1)
    prev = np.concatenate([np.full((x.shape[0], 1), -np.inf), v[:, :-1]], axis=1)
    cols = np.broadcast_to(np.arange(x.shape[1]), x.shape)
    return {"v": v, "i": np.maximum.accumulate(np.where(x > prev, cols, 0), axis=1)}


case(name="cummax_tuple_scan", klass="scan", module="scans.py", kernel="cummax_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f32"),
                          "v": out((S["m"], S["n"]), "f32"), "i": out((S["m"], S["n"]), "i32")},
     args=lambda S, b: ["x", "v", "i", I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_N=np2(S["n"])), grid=lambda S: (S["m"],), ref=cummax_ref,
     gpu=dict(m=8192, n=2048, warps=8), interp=dict(m=5, n=40), tol=0.0)


def argmax_ref(X, S):
    x = X["x"]
    return {"i": x.argmax(axis=1), "v": x.max(axis=1)}


case(name="argmax_tuple_reduce", klass="reduce", module="scans.py", kernel="argmax_rows_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "bf16"), "i": out(S["m"], "i32"),
                          "v": out(S["m"], "f32")},
     args=lambda S, b: ["x", "i", "v", I32(S["m"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]),), ref=argmax_ref,
     gpu=dict(m=4096, n=32000, BM=4, BN=1024, warps=8), interp=dict(m=10, n=100, BM=4, BN=32),
     tol=0.0)

case(name="cumsum_blocked_carry", klass="scan", module="scans.py", kernel="blocked_cumsum_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f32"),
                          "y": out((S["m"], S["n"]), "f32")},
     args=lambda S, b: ["x", "y", I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK=S["BS"]), grid=lambda S: (S["m"],),
     ref=lambda X, S: {"y": np.cumsum(X["x"], axis=1)},
     gpu=dict(m=1024, n=65536, BS=2048, warps=8), interp=dict(m=3, n=100, BS=32), tol=1e-5)

# ---- state-space models -----------------------------------------------------------------


def softplus(x):
    return np.where(x <= 20, np.log1p(np.exp(np.minimum(x, 20))), x)


def cumsum_make(rng, S):
    b, l, h, cs = S["b"], S["l"], S["h"], S["cs"]
    nc = cdiv(l, cs)
    return {"dt": floats(rng, (b, l, h), "f16"), "A": Buf(-rng.random(h) - 0.5, "f32"),
            "bias": floats(rng, h, "f32", 0.5), "dt_out": out((b, h, nc, cs), "f32"),
            "dA": out((b, h, nc, cs), "f32")}


def cumsum_ref(X, S):
    b, l, h, cs = S["b"], S["l"], S["h"], S["cs"]
    nc = cdiv(l, cs)
    dt = softplus(X["dt"] + X["bias"])
    pad = np.zeros((b, nc * cs, h))
    pad[:, :l] = dt
    dt = pad.reshape(b, nc, cs, h).transpose(0, 3, 1, 2)
    dA = np.cumsum(dt * X["A"][None, :, None, None], axis=3)
    return {"dt_out": dt, "dA": dA}


case(name="ssm_chunk_cumsum", klass="ssm", module="ssm_kernels.py",
     kernel="_chunk_cumsum_fwd_kernel", make=cumsum_make,
     args=lambda S, b: ["dt", "A", "bias", "dt_out", "dA", I32(S["l"]), I32(S["h"]), I32(S["cs"]),
                        I32(S["l"] * S["h"]), I32(S["h"]),
                        I32(S["h"] * cdiv(S["l"], S["cs"]) * S["cs"]),
                        I32(cdiv(S["l"], S["cs"]) * S["cs"]), I32(S["cs"])],
     consts=lambda S: dict(DT_SOFTPLUS=True, BLOCK_SIZE_H=S["BH"], BLOCK_SIZE_CHUNK=S["cs"]),
     grid=lambda S: (S["b"], cdiv(S["l"], S["cs"]), cdiv(S["h"], S["BH"])), ref=cumsum_ref,
     gpu=dict(b=8, l=8192, h=64, cs=256, BH=16, warps=4), interp=dict(b=2, l=40, h=5, cs=16, BH=4),
     tol=1e-5)


def state_make(rng, S):
    bh, l, hd, ds, cs = S["bh"], S["l"], S["hd"], S["ds"], S["cs"]
    dt = rng.random((bh, l)) * 0.1
    dA = np.concatenate([np.cumsum(-dt[:, c:c + cs], axis=1) for c in range(0, l, cs)], axis=1)
    return {"x": floats(rng, (bh, l, hd), "f16"), "b": floats(rng, (bh, l, ds), "f16"),
            "dt": Buf(dt, "f32"), "dA": Buf(dA, "f32"),
            "states": out((bh, l // cs, hd, ds), "f32")}


def state_ref(X, S):
    bh, l, hd, ds, cs = S["bh"], S["l"], S["hd"], S["ds"], S["cs"]
    res = np.empty((bh, l // cs, hd, ds))
    for c in range(l // cs):
        sl = slice(c * cs, (c + 1) * cs)
        dA = X["dA"][:, sl]
        scale = np.exp(dA[:, -1:] - dA) * X["dt"][:, sl]
        res[:, c] = X["x"][:, sl].transpose(0, 2, 1) @ (X["b"][:, sl] * scale[..., None])
    return {"states": res}


case(name="ssm_chunk_state_dots", klass="ssm", module="ssm_kernels.py",
     kernel="_chunk_state_fwd_kernel", make=state_make,
     args=lambda S, b: ["x", "b", "states", "dt", "dA", I32(S["hd"]), I32(S["ds"]), I32(S["cs"]),
                        I32(S["l"]), I32(S["hd"]), I32(S["ds"]), I32(S["l"]),
                        I32(S["l"] * S["hd"] * S["ds"] // S["cs"])],
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["ds"], BLOCK_SIZE_K=S["BK"]),
     grid=lambda S: (cdiv(S["hd"], S["BM"]), S["bh"], S["l"] // S["cs"]), ref=state_ref,
     gpu=dict(bh=256, l=2048, hd=64, ds=128, cs=256, BM=64, BK=32, warps=4, stages=3),
     interp=dict(bh=2, l=64, hd=20, ds=16, cs=32, BM=16, BK=16, stages=2), tol=1e-2)


def upd_make(rng, S):
    b, d, n = S["b"], S["d"], S["n"]
    st = floats(rng, (b, d, n), "f32")
    st.inout = True
    return {"state": st, "x": floats(rng, (b, d), "f16"), "dt": floats(rng, (b, d), "f16"),
            "bias": floats(rng, d, "f32", 0.3), "A": Buf(-rng.random((d, n)) - 0.1, "f32"),
            "B": floats(rng, (b, n), "f16"), "C": floats(rng, (b, n), "f16"),
            "D": floats(rng, d, "f32"), "y": out((b, d), "f16")}


def upd_ref(X, S):
    dt = softplus(X["dt"] + X["bias"])
    st = X["state"] * np.exp(X["A"][None] * dt[..., None]) + \
        X["B"][:, None, :] * dt[..., None] * X["x"][..., None]
    return {"state": st, "y": (st * X["C"][:, None, :]).sum(axis=2) + X["x"] * X["D"]}


case(name="ssm_selective_state_update", klass="ssm", module="ssm_kernels.py",
     kernel="_selective_scan_update_kernel", make=upd_make,
     args=lambda S, b: ["state", "x", "dt", "bias", "A", "B", "C", "D", "y", I32(S["d"]),
                        I32(S["n"]), I32(S["d"] * S["n"]), I32(S["d"])],
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_DSTATE=np2(S["n"])),
     grid=lambda S: (cdiv(S["d"], S["BM"]), S["b"]), ref=upd_ref,
     gpu=dict(b=64, d=8192, n=128, BM=16, warps=4), interp=dict(b=3, d=20, n=16, BM=8), tol=2e-3)
