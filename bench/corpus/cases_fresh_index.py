"""Corpus cases: indexed accumulation, index expansion and per-row
sampling / loss / norm kernels. FlagGems-style index_add along dim 0
(repeating int64 indices, fp32 atomics, alpha) and scatter along dim 1
(reduce='add' through atomics with repeated columns, and the plain store
with columns unique per row); repeat_interleave with a repeats tensor (an
offsets kernel with tl.cumsum before the checked copy, which finds source
rows by binary search); a Liger-style fused linear cross-entropy chunk with
the vocabulary split over programs, label smoothing and a z-loss, merged by
the last program of each row block; vLLM-style repetition / frequency /
presence penalties on fp32 logits; and FlagGems-style instance norm with a
Welford walk over NCHW fp16 planes. The interpreter sizes leave every edge
ragged (rows, columns, vocabulary slices, planes, pixels)."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out, to_dt, zeros

IGNORE = -100


def np2(n):
    return 1 << (int(n) - 1).bit_length()


# ---- index_add and scatter ------------------------------------------------------------------

def index_add_make(rng, S):
    m, n, cols = S["m"], S["n"], S["cols"]
    o = floats(rng, (m, cols), "f32")
    o.inout = True
    return {"out": o, "idx": Buf(rng.integers(0, m, n), "i64"),
            "src": floats(rng, (n, cols), "f32")}


def index_add_ref(X, S):
    o = X["out"].copy()
    np.add.at(o, X["idx"].astype(np.int64), S["alpha"] * X["src"])
    return {"out": o}


case(name="index_add_dim0_atomic", klass="scatter", module="index_add_scatter.py",
     kernel="index_add_dim0_kernel", make=index_add_make,
     args=lambda S, b: ["out", "idx", "src", F32(S["alpha"]), I32(S["n"]), I32(S["cols"]),
                        I32(S["cols"]), I32(S["cols"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BM"]), cdiv(S["cols"], S["BN"])), ref=index_add_ref,
     shape=lambda S: f"out {S['m']}x{S['cols']} += {S['alpha']} * src {S['n']}x{S['cols']}",
     gpu=dict(m=16384, n=32768, cols=1024, alpha=0.5, BM=16, BN=256, warps=4),
     interp=dict(m=7, n=19, cols=37, alpha=0.5, BM=4, BN=16), tol=1e-5)


def scatter_make(rng, S, unique):
    m, k, n = S["m"], S["k"], S["n"]
    o = floats(rng, (m, n), "f32")
    o.inout = True
    if unique:
        idx = np.argsort(rng.random((m, n)), axis=1)[:, :k]
    else:
        idx = rng.integers(0, n, (m, k))
    return {"out": o, "idx": Buf(idx, "i64"), "src": floats(rng, (m, k), "f32")}


def scatter_ref(X, S, unique):
    o = X["out"].copy()
    rows = np.repeat(np.arange(S["m"])[:, None], S["k"], axis=1)
    idx = X["idx"].astype(np.int64)
    if unique:
        o[rows, idx] = X["src"]
    else:
        np.add.at(o, (rows, idx), X["src"])
    return {"out": o}


for nm, unique in (("scatter_dim1_add_atomic", False), ("scatter_dim1_store", True)):
    case(name=nm, klass="scatter", module="index_add_scatter.py", kernel="scatter_dim1_kernel",
         make=lambda rng, S, u=unique: scatter_make(rng, S, u),
         args=lambda S, b: ["out", "idx", "src", I32(S["m"]), I32(S["k"]), I32(S["n"]),
                            I32(S["k"]), I32(S["k"])],
         consts=lambda S, u=unique: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], IS_ADD=not u),
         grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["k"], S["BN"])),
         ref=lambda X, S, u=unique: scatter_ref(X, S, u),
         shape=lambda S: f"out {S['m']}x{S['n']} index {S['m']}x{S['k']}",
         gpu=dict(m=4096, n=8192, k=2048, BM=8, BN=512, warps=4),
         interp=dict(m=5, n=23, k=13, BM=2, BN=8), tol=1e-5)


# ---- repeat_interleave ----------------------------------------------------------------------

def ri_repeats(S):
    """The repeats (0 to 3 per row, a run of zeros included), fixed by the sizes so that
    the output's row count is known to the arguments and the grid."""
    r = np.random.default_rng(S["rows"] * 7 + S["cols"]).integers(0, 4, S["rows"])
    r[2:5] = 0
    return r


def ri_out_rows(S):
    return int(ri_repeats(S).sum())


def ri_make(rng, S):
    rows, cols = S["rows"], S["cols"]
    return {"x": floats(rng, (rows, cols), "bf16"), "rep": Buf(ri_repeats(S), "i64"),
            "offs": out(rows + 1, "i64"), "y": out((ri_out_rows(S), cols), "bf16")}


def ri_ref(X, S):
    r = X["rep"].astype(np.int64)
    return {"y": np.repeat(X["x"], r, axis=0), "offs": np.concatenate([[0], np.cumsum(r)])}


case(name="repeat_interleave_search", klass="gather", module="repeat_interleave.py",
     kernel="repeat_interleave_copy_kernel", make=ri_make,
     args=lambda S, b: ["x", "offs", "y", I32(S["rows"]), I32(ri_out_rows(S)), I32(S["cols"]),
                        I32(max(S["rows"] - 1, 1).bit_length()), I32(S["cols"]),
                        I32(S["cols"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(ri_out_rows(S), S["BM"]), cdiv(S["cols"], S["BN"])),
     prelude=dict(kernel="repeat_offsets_kernel",
                  args=lambda S, b: ["rep", "offs", I32(S["rows"])],
                  consts=lambda S: dict(BLOCK=S["BR"]), grid=lambda S: (1,)),
     ref=ri_ref, shape=lambda S: f"{S['rows']}x{S['cols']} -> {ri_out_rows(S)} rows",
     gpu=dict(rows=16384, cols=4096, BM=16, BN=512, BR=1024, warps=4),
     interp=dict(rows=29, cols=21, BM=4, BN=16, BR=8), tol=0.0)


# ---- fused linear cross-entropy, vocabulary split --------------------------------------------

def flce_per_split(S):
    return cdiv(cdiv(S["vocab"], S["splits"]), S["BN"]) * S["BN"]


def flce_splits(S):
    return cdiv(S["vocab"], flce_per_split(S))


def flce_make(rng, S):
    r, v, h = S["rows"], S["vocab"], S["hidden"]
    tgt = rng.integers(0, v, r)
    tgt[5::9] = IGNORE
    ns, nb = flce_splits(S), cdiv(r, S["BM"])
    d = {"x": floats(rng, (r, h), "bf16"), "w": floats(rng, (v, h), "bf16", 1.5 / np.sqrt(h)),
         "t": Buf(tgt, "i64"), "ticket": zeros(nb, "i32"), "loss": out(r, "f32"),
         "lse": out(r, "f32")}
    for p in ("pmax", "psum", "pz", "pt"):
        d[p] = out((ns, r), "f32")
    return d


def flce_ref(X, S):
    eps, zs = S["eps"], S["zs"]
    loss, lse = np.empty(S["rows"]), np.empty(S["rows"])
    t = X["t"].astype(np.int64)
    for r0 in range(0, S["rows"], 128):
        z = X["x"][r0:r0 + 128] @ X["w"].T
        m = z.max(axis=1)
        l_ = m + np.log(np.exp(z - m[:, None]).sum(axis=1))
        tt = t[r0:r0 + 128]
        keep = tt != IGNORE
        zt = z[np.arange(z.shape[0]), np.where(keep, tt, 0)]
        ls = (1 - eps) * (l_ - zt) + eps * (l_ - z.mean(axis=1)) + zs * l_ * l_
        loss[r0:r0 + 128] = np.where(keep, ls, 0.0)
        lse[r0:r0 + 128] = l_
    return {"loss": loss, "lse": lse}


case(name="flce_split_vocab_smoothing", klass="softmax", module="flce_split_vocab.py",
     kernel="flce_split_vocab_fwd_kernel", make=flce_make,
     args=lambda S, b: ["x", "w", "t", "pmax", "psum", "pz", "pt", "ticket", "loss", "lse",
                        I32(S["rows"]), I32(S["vocab"]), I32(S["hidden"]),
                        I32(flce_per_split(S)), I32(flce_splits(S)), I32(S["hidden"]),
                        I32(S["hidden"]), I32(IGNORE), F32(S["eps"]), F32(S["zs"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"],
                           SPLITS_PAD=np2(flce_splits(S))),
     grid=lambda S: (cdiv(S["rows"], S["BM"]), flce_splits(S)), ref=flce_ref,
     shape=lambda S: f"{S['rows']}x{S['hidden']} V{S['vocab']} /{flce_splits(S)}",
     gpu=dict(rows=512, vocab=32000, hidden=2048, splits=32, eps=0.1, zs=1e-4, BM=64, BN=128,
              BK=64, warps=4, stages=3),
     interp=dict(rows=21, vocab=150, hidden=40, splits=3, eps=0.1, zs=1e-4, BM=16, BN=32,
                 BK=16, warps=4, stages=2),
     tol=1e-4)


# ---- sampling penalties --------------------------------------------------------------------

def pen_make(rng, S):
    rows, v = S["rows"], S["vocab"]
    logits = floats(rng, (rows, v), "f32", 3.0)
    logits.inout = True
    counts = np.where(rng.random((rows, v)) < 0.01, rng.integers(1, 6, (rows, v)), 0)
    prompt = (rng.random((rows, v)) < 0.01).astype(np.uint8)
    rep = rng.uniform(1.0, 1.5, rows)
    freq = rng.uniform(0.0, 0.5, rows)
    pres = rng.uniform(0.0, 0.5, rows)
    rep[::4], freq[::4], pres[::4] = 1.0, 0.0, 0.0  # rows without penalties
    freq[1::4] = 0.0
    return {"logits": logits, "counts": Buf(counts, "i32"), "prompt": Buf(prompt, "u8"),
            "rep": Buf(rep, "f32"), "freq": Buf(freq, "f32"), "pres": Buf(pres, "f32")}


def pen_ref(X, S):
    z, c = X["logits"].copy(), X["counts"]
    rep, freq, pres = X["rep"][:, None], X["freq"][:, None], X["pres"][:, None]
    seen = (X["prompt"] != 0) | (c > 0)
    z = np.where(seen, np.where(z > 0, z / rep, z * rep), z)
    z = z - freq * c - pres * (c > 0)
    return {"logits": z}


case(name="apply_penalties_counts", klass="sampling", module="logit_penalties.py",
     kernel="apply_penalties_kernel", make=pen_make,
     args=lambda S, b: ["logits", I32(S["vocab"]), "counts", I32(S["vocab"]), "prompt",
                        I32(S["vocab"]), "rep", "freq", "pres", I32(S["vocab"])],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"]),
     grid=lambda S: (S["rows"], cdiv(S["vocab"], S["BS"])), ref=pen_ref,
     gpu=dict(rows=256, vocab=128256, BS=8192, warps=8),
     interp=dict(rows=9, vocab=300, BS=128), tol=1e-6)


# ---- instance norm -------------------------------------------------------------------------

def inorm_make(rng, S):
    n, c, hw = S["n"], S["c"], S["h"] * S["w"]
    shift = rng.standard_normal((n * c, 1)) * 2.0
    x = rng.standard_normal((n * c, hw)) * rng.uniform(0.5, 2.0, (n * c, 1)) + shift
    return {"x": Buf(to_dt(x, "f16"), "f16"), "y": out((n * c, hw), "f16"),
            "wt": floats(rng, c, "f16", 0.2, 1.0), "b": floats(rng, c, "f16", 0.2),
            "mean": out(n * c, "f32"), "rstd": out(n * c, "f32")}


def inorm_ref(X, S):
    x = X["x"]
    mean = x.mean(axis=1)
    rstd = 1.0 / np.sqrt(x.var(axis=1) + S["eps"])
    ch = np.arange(S["n"] * S["c"]) % S["c"]
    y = (x - mean[:, None]) * rstd[:, None] * X["wt"][ch][:, None] + X["b"][ch][:, None]
    return {"y": y, "mean": mean, "rstd": rstd}


case(name="instance_norm_welford", klass="welford", module="instance_norm.py",
     kernel="instance_norm_fwd_kernel", make=inorm_make,
     args=lambda S, b: ["x", "y", "wt", "b", "mean", "rstd", I32(S["n"] * S["c"]), I32(S["c"]),
                        I32(S["h"] * S["w"]), F32(S["eps"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"] * S["c"], S["BM"]),), ref=inorm_ref,
     shape=lambda S: f"{S['n']}x{S['c']}x{S['h']}x{S['w']}",
     gpu=dict(n=64, c=128, h=96, w=96, eps=1e-5, BM=4, BN=1024, warps=8),
     interp=dict(n=2, c=5, h=7, w=9, eps=1e-5, BM=4, BN=16),
     tol={"y": 2e-3, "mean": 1e-5, "rstd": 1e-5})
