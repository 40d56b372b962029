"""Corpus cases: work along the leading (non-contiguous) dim of a matrix:
an inclusive prefix sum over dim 0 with a per-column carry, an
index_select of whole rows through int64 indices, and the dgamma/dbeta
column reductions of a LayerNorm backward."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, out

# ---- cumsum over dim 0 ----------------------------------------------------------------------


def cumsum0_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "f16", 1.0, 0.05), "y": out((m, n), "f16")}


def cumsum0_ref(X, S):
    y = X["x"].copy()
    for i in range(1, S["m"]):  # row by row: a few times faster than np.cumsum(axis=0) here
        np.add(y[i], y[i - 1], out=y[i])
    return {"y": y}


# interp: M and N both ragged against their blocks (the last chunk has 6 rows, the last strip
# 13 columns), so masked rows must leave the carry alone
case(name="cumsum_dim0", klass="scan", module="cumsum_dim0.py", kernel="cumsum_dim0_kernel",
     make=cumsum0_make,
     args=lambda S, b: ["x", "y", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(1), I32(S["n"]),
                        I32(1)],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]),),
     ref=cumsum0_ref,
     gpu=dict(m=16384, n=8192, BM=128, BN=32, warps=4),
     interp=dict(m=70, n=45, BM=16, BN=16), tol=2e-3)


# ---- index_select of rows ---------------------------------------------------------------------


def isel_make(rng, S):
    v, d, k = S["v"], S["d"], S["k"]
    # random rows with repeats; the first and last table rows are always among them
    idx = rng.integers(0, v, k)
    idx[:2] = [v - 1, 0]
    return {"x": floats(rng, (v, d), "bf16"), "idx": Buf(idx, "i64"), "o": out((k, d), "bf16")}


# interp: 45 indices against BLOCK_M 8 and 70 columns against BLOCK_N 32 (ragged on both dims)
case(name="index_select_rows", klass="gather", module="index_select_rows.py",
     kernel="index_select_rows_kernel", make=isel_make,
     args=lambda S, b: ["x", "idx", "o", I32(S["k"]), I32(S["d"]), I32(S["d"]), I32(1),
                        I32(S["d"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["k"], S["BM"]), cdiv(S["d"], S["BN"])),
     ref=lambda X, S: {"o": X["x"][X["idx"].astype(np.int64)]},
     shape=lambda S: f"table {S['v']}x{S['d']} idx{S['k']}",
     gpu=dict(v=32768, d=4096, k=65536, BM=16, BN=512, warps=4),
     interp=dict(v=37, d=70, k=45, BM=8, BN=32), tol=0.0)


# ---- LayerNorm backward: dgamma, dbeta --------------------------------------------------------


def ln_dwdb_make(rng, S):
    m, n = S["m"], S["n"]
    x = floats(rng, (m, n), "f16", 1.5, 0.25)
    xf = x.f64()
    mean = xf.mean(axis=1)
    rstd = 1.0 / np.sqrt(xf.var(axis=1) + 1e-5)
    return {"dy": floats(rng, (m, n), "f16"), "x": x, "mean": Buf(mean, "f32"),
            "rstd": Buf(rstd, "f32"), "dw": out(n, "f32"), "db": out(n, "f32")}


def ln_dwdb_ref(X, S):
    dy, x, mean, rstd = X["dy"], X["x"], X["mean"], X["rstd"]
    dw = np.zeros(S["n"])
    for r0 in range(0, S["m"], 2048):  # row chunks keep the float64 temporaries small
        r = slice(r0, r0 + 2048)
        dw += (dy[r] * ((x[r] - mean[r, None]) * rstd[r, None])).sum(axis=0)
    return {"dw": dw, "db": dy.sum(axis=0)}


# interp: M = 70 leaves a 6-row last chunk, N = 45 a 13-column last strip
case(name="layernorm_bwd_dwdb", klass="norm", module="layernorm_bwd_dwdb.py",
     kernel="layer_norm_bwd_dwdb_kernel", make=ln_dwdb_make,
     args=lambda S, b: ["dy", "x", "mean", "rstd", "dw", "db", I32(S["m"]), I32(S["n"]),
                        I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]),), ref=ln_dwdb_ref,
     gpu=dict(m=16384, n=8192, BM=128, BN=32, warps=4),
     interp=dict(m=70, n=45, BM=16, BN=16), tol=1e-4)
