"""Corpus cases: data-dependent counts and offsets (segment_kernels.py).
Expert counting one token at a time into a row of counters per program,
the prefix of those rows down each expert's column, and a jagged row sum
over segments of random lengths (empty ones included), its loop bounds
loaded from an offsets table."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, out


def count_make(rng, S):
    n, e, p = S["t"] * S["k"], S["e"], S["p"]
    # a skewed router: a few experts take most tokens, as in practice
    w = rng.gamma(0.5, size=e)
    ids = rng.choice(e, size=n, p=w / w.sum())
    return {"ids": Buf(ids, "i32"), "counts": Buf(np.zeros((p + 1, e)), "i32", inout=True)}


def count_ref(X, S):
    n, e, p = S["t"] * S["k"], S["e"], S["p"]
    per = cdiv(n, p)
    ids = X["ids"].astype(int)
    c = np.zeros((p + 1, e))
    for q in range(p):
        c[q + 1] = np.bincount(ids[q * per:(q + 1) * per], minlength=e)
    return {"counts": c}


case(name="expert_count_rows", klass="moe", module="segment_kernels.py",
     kernel="expert_count_rows_kernel", make=count_make,
     args=lambda S, b: ["ids", "counts", I32(S["t"] * S["k"])],
     consts=lambda S: dict(NUM_EXPERTS=S["e"], TOKENS_PER_PROGRAM=cdiv(S["t"] * S["k"], S["p"])),
     grid=lambda S: (S["p"],), ref=count_ref,
     gpu=dict(t=4096, k=8, e=64, p=64, warps=4), interp=dict(t=37, k=2, e=8, p=5), tol=0.0)


def prefix_make(rng, S):
    e, p = S["e"], S["p"]
    c = rng.integers(0, 50, (p + 1, e))
    c[0] = 0
    return {"counts": Buf(c, "i32", inout=True)}


case(name="expert_count_prefix", klass="moe", module="segment_kernels.py",
     kernel="expert_count_prefix_kernel", make=prefix_make,
     args=lambda S, b: ["counts", I32(S["p"] + 1)],
     consts=lambda S: dict(NUM_EXPERTS=S["e"]), grid=lambda S: (S["e"],),
     ref=lambda X, S: {"counts": np.cumsum(X["counts"], axis=0)},
     gpu=dict(e=256, p=1024, warps=4), interp=dict(e=8, p=6), tol=0.0)


def jagged_make(rng, S):
    lens = rng.integers(0, 2 * S["avg"], S["b"])
    lens[::9] = 0  # empty segments
    offs = np.concatenate([[0], np.cumsum(lens)])
    return {"values": floats(rng, (int(offs[-1]), S["d"]), "bf16"), "offsets": Buf(offs, "i64"),
            "out": out((S["b"], S["d"]), "bf16")}


def jagged_ref(X, S):
    offs = X["offsets"].astype(int)
    v = X["values"]
    return {"out": np.stack([v[offs[i]:offs[i + 1]].sum(axis=0) for i in range(S["b"])])}


case(name="jagged_row_sum", klass="reduction", module="segment_kernels.py",
     kernel="jagged_row_sum_kernel", make=jagged_make,
     args=lambda S, b: ["values", "offsets", "out", I32(S["d"])],
     consts=lambda S: dict(BLOCK_N=S["BN"], BLOCK_D=S["BD"]),
     grid=lambda S: (S["b"], cdiv(S["d"], S["BD"])), ref=jagged_ref,
     gpu=dict(b=2048, avg=64, d=512, BN=32, BD=128, warps=4),
     interp=dict(b=11, avg=5, d=40, BN=4, BD=16), tol=1e-2)
