"""Corpus cases: the less common language features at model sizes. MoE
routing with tl.topk on packed (probability, expert) keys, a linear
recurrence through tl.associative_scan over a tuple with a carried state,
torch.bucketize as a data-dependent while loop, a bincount with
tl.histogram, tanh-GELU through tl.inline_asm_elementwise (pack 1 and a
packed f16x2 result), and a per-row permutation with tl.gather.

The inline-asm kernels take USE_ASM from the size dict: on the GPU the asm
runs; the interpreter runs no PTX, so there the same kernels check their
portable branch."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, ints, out, zeros


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---- MoE routing ----------------------------------------------------------------------------

def router_make(rng, S):
    t, e = S["t"], S["e"]
    # each row a random order of well separated levels (0.05 apart, jitter 0.02): no two
    # experts tie, even after fp32 rounding of the softmax, so the top-k ids are one answer
    levels = rng.permuted(np.tile(np.arange(e), (t, 1)), axis=1) * 0.05
    x = levels + rng.uniform(0.0, 0.02, (t, e)) + rng.standard_normal((t, 1))
    return {"logits": Buf(x, "f32"), "w": out((t, S["k"]), "f32"), "ids": out((t, S["k"]), "i32")}


def router_ref(X, S):
    x, k = X["logits"], S["k"]
    ids = np.argsort(-x, axis=1, kind="stable")[:, :k]
    w = np.take_along_axis(softmax(x), ids, axis=1)
    return {"w": w / w.sum(axis=1, keepdims=True), "ids": ids.astype(np.float64)}


case(name="moe_router_topk_sort", klass="sort", module="lang_features.py",
     kernel="moe_router_topk_sort_kernel", make=router_make,
     args=lambda S, b: ["logits", "w", "ids", I32(S["t"]), I32(S["e"])],
     consts=lambda S: dict(NUM_EXPERTS=S["e"], TOPK=S["k"], BLOCK_T=S["BT"], RENORMALIZE=True),
     grid=lambda S: (cdiv(S["t"], S["BT"]),), ref=router_ref,
     gpu=dict(t=16384, e=128, k=8, BT=16, warps=4), interp=dict(t=20, e=128, k=8, BT=8),
     tol={"w": 1e-5, "ids": 0.0})


# ---- linear recurrence ----------------------------------------------------------------------

def recur_make(rng, S):
    c, t = S["c"], S["t"]
    # decays close to 1 (as gated linear RNNs learn them), so the state remembers far back
    return {"a": Buf(rng.uniform(0.9, 1.0, (c, t)), "f32"), "b": floats(rng, (c, t), "f32"),
            "h": out((c, t), "f32"), "h0": floats(rng, c, "f32"), "ht": out(c, "f32")}


def recur_ref(X, S):
    a, b = X["a"], X["b"]
    hs = np.empty_like(b)
    h = X["h0"].copy()
    for i in range(a.shape[1]):
        h = a[:, i] * h + b[:, i]
        hs[:, i] = h
    return {"h": hs, "ht": h}


case(name="linear_recurrence_scan", klass="scan", module="lang_features.py",
     kernel="linear_recurrence_scan_kernel", make=recur_make,
     args=lambda S, b: ["a", "b", "h", "h0", "ht", I32(S["c"]), I32(S["t"]), I32(S["t"])],
     consts=lambda S: dict(BLOCK_C=S["BC"], BLOCK_T=S["BT"], USE_INITIAL_STATE=True,
                           STORE_FINAL_STATE=True),
     grid=lambda S: (cdiv(S["c"], S["BC"]),), ref=recur_ref,
     gpu=dict(c=4096, t=2048, BC=16, BT=128, warps=4), interp=dict(c=20, t=70, BC=8, BT=16),
     tol=1e-5)


# ---- bucketize ------------------------------------------------------------------------------

def bucket_make(rng, S):
    # distinct sorted boundaries; the inputs reach past both ends (buckets 0 and nb)
    bnd = np.unique((rng.standard_normal(S["nb"]) * 2.0).astype(np.float32))
    return {"x": floats(rng, S["n"], "f32", 2.5), "bnd": Buf(bnd, "f32"), "o": out(S["n"], "i64")}


case(name="bucketize_while_search", klass="search", module="lang_features.py",
     kernel="bucketize_while_search_kernel", make=bucket_make,
     args=lambda S, b: ["x", "bnd", "o", I32(S["n"]), I32(b["bnd"].arr.size)],
     consts=lambda S: dict(RIGHT=False, BLOCK=S["BS"]), grid=lambda S: (cdiv(S["n"], S["BS"]),),
     ref=lambda X, S: {"o": np.searchsorted(X["bnd"], X["x"], side="left").astype(np.float64)},
     gpu=dict(n=1 << 24, nb=1023, BS=1024, warps=4), interp=dict(n=3000, nb=1023, BS=256),
     tol=0.0)


# ---- histogram ------------------------------------------------------------------------------

case(name="histogram_blocks", klass="scatter", module="lang_features.py",
     kernel="histogram_blocks_kernel",
     make=lambda rng, S: {"x": ints(rng, S["n"], 0, S["bins"]), "hist": zeros(S["bins"], "i32")},
     args=lambda S, b: ["x", "hist", I32(S["n"])],
     consts=lambda S: dict(NBINS=S["bins"], BLOCK=S["BS"], TILES_PER_PROGRAM=S["TILES"]),
     grid=lambda S: (cdiv(S["n"], S["BS"] * S["TILES"]),),
     ref=lambda X, S: {"hist": np.bincount(X["x"].astype(int), minlength=S["bins"])
                       .astype(np.float64)},
     gpu=dict(n=1 << 24, bins=256, BS=2048, TILES=8, warps=4),
     interp=dict(n=3000, bins=256, BS=256, TILES=2), tol=0.0)


# ---- tanh-GELU through inline asm ------------------------------------------------------------

def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


for kern, nm in (("gelu_tanh_asm_kernel", "gelu_tanh_inline_asm"),
                 ("gelu_tanh_asm_f16x2_kernel", "gelu_tanh_inline_asm_f16x2")):
    # tanh.approx.f32 is good to about 2^-11 relative; the fp16 output adds 2^-11 more
    case(name=nm, klass="activation", module="lang_features.py", kernel=kern,
         make=lambda rng, S: {"x": floats(rng, S["n"], "f16", 2.0), "y": out(S["n"], "f16")},
         args=lambda S, b: ["x", "y", I32(S["n"])],
         consts=lambda S: dict(BLOCK=S["BS"], USE_ASM=S["ASM"]),
         grid=lambda S: (cdiv(S["n"], S["BS"]),), ref=lambda X, S: {"y": gelu_tanh(X["x"])},
         gpu=dict(n=1 << 26, BS=2048, ASM=True, warps=4),
         interp=dict(n=3000, BS=256, ASM=False), tol=2e-3)


# ---- per-row permutation --------------------------------------------------------------------

def permute_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "bf16"), "perm": Buf(rng.permuted(
        np.tile(np.arange(n), (m, 1)), axis=1), "i32"), "o": out((m, n), "bf16")}


case(name="gather_rows_permute", klass="gather", module="lang_features.py",
     kernel="gather_rows_permute_kernel", make=permute_make,
     args=lambda S, b: ["x", "perm", "o", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(N=S["n"], BLOCK_M=S["BM"]), grid=lambda S: (cdiv(S["m"], S["BM"]),),
     ref=lambda X, S: {"o": np.take_along_axis(X["x"], X["perm"].astype(int), axis=1)},
     gpu=dict(m=65536, n=256, BM=2, warps=4), interp=dict(m=10, n=64, BM=4), tol=0.0)
