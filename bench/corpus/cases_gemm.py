"""Corpus cases: dense, grouped, split-K, stream-K, persistent and
quantised GEMMs, and fused MoE."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, out, ptr_table, zeros

# GPU sizes: the shapes; interpreter sizes: ragged edges, tiny tiles
GEMM_GPU = dict(m=4096, n=4096, k=4096, BM=128, BN=128, BK=64, G=8, warps=8, stages=3)
GEMM_INT = dict(m=40, n=36, k=70, BM=16, BN=16, BK=16, G=2, warps=4, stages=2)


def make_ab(dt="f16", c_dt=None):
    def make(rng, S):
        return {"a": floats(rng, (S["m"], S["k"]), dt), "b": floats(rng, (S["k"], S["n"]), dt),
                "c": out((S["m"], S["n"]), c_dt or dt)}
    return make


def strides_abc(S, bufs):
    m, n, k = S["m"], S["n"], S["k"]
    return [I32(m), I32(n), I32(k), I32(k), I32(1), I32(n), I32(1), I32(n), I32(1)]


def ref_ab(X, S):
    return {"c": X["a"] @ X["b"]}


case(name="matmul_plain", klass="gemm", module="matmul_plain.py", kernel="matmul_kernel",
     make=make_ab(), args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])), ref=ref_ab,
     gpu=dict(GEMM_GPU, k=4000), interp=GEMM_INT)

case(name="matmul_plain_bf16", klass="gemm", module="matmul_plain.py", kernel="matmul_kernel",
     make=make_ab("bf16"), args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])), ref=ref_ab,
     gpu=dict(GEMM_GPU, m=8192, n=2048, k=4096, BN=256), interp=GEMM_INT)


def leaky(x):
    return np.where(x >= 0, x, 0.01 * x)


case(name="matmul_grouped_leaky", klass="gemm", module="matmul_grouped_autotune.py",
     kernel="matmul_kernel", make=make_ab(), args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"],
                           GROUP_SIZE_M=S["G"], ACTIVATION="leaky_relu"),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"c": leaky(X["a"] @ X["b"])},
     gpu=dict(GEMM_GPU, BN=256), interp=GEMM_INT)


def ref_f32(X, S):
    return {"c": X["a"] @ X["b"]}


case(name="matmul_splitk_atomic", klass="gemm", module="matmul_splitk.py",
     kernel="_splitk_kernel",
     make=lambda rng, S: {"a": floats(rng, (S["m"], S["k"]), "f16"),
                          "b": floats(rng, (S["k"], S["n"]), "f16"),
                          "c": zeros((S["m"], S["n"]), "f32")},
     args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], SPLIT_K=S["SK"],
                           EVEN_K=S["k"] % (S["BK"] * S["SK"]) == 0),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"]), S["SK"]), ref=ref_f32,
     gpu=dict(m=1024, n=1024, k=16384, BM=64, BN=64, BK=64, SK=8, warps=4, stages=4),
     interp=dict(m=40, n=36, k=128, BM=16, BN=16, BK=16, SK=4, warps=4, stages=2), tol=1e-4)

case(name="matmul_splitk_ragged", klass="gemm", module="matmul_splitk.py",
     kernel="_splitk_kernel",
     make=lambda rng, S: {"a": floats(rng, (S["m"], S["k"]), "f16"),
                          "b": floats(rng, (S["k"], S["n"]), "f16"),
                          "c": zeros((S["m"], S["n"]), "f32")},
     args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], SPLIT_K=S["SK"],
                           EVEN_K=S["k"] % (S["BK"] * S["SK"]) == 0),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"]), S["SK"]), ref=ref_f32,
     gpu=dict(m=512, n=2048, k=12000, BM=64, BN=128, BK=32, SK=4, warps=4, stages=4),
     interp=dict(m=40, n=36, k=100, BM=16, BN=16, BK=16, SK=2, warps=4, stages=2), tol=1e-4)


def streamk_args(S, b):
    tiles = cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"])
    total = tiles * cdiv(S["k"], S["BK"])
    return ["a", "b", "c", "locks", "counts"] + strides_abc(S, b) + [I32(cdiv(total, S["P"]))]


def streamk_make(rng, S):
    tiles = cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"])
    return {"a": floats(rng, (S["m"], S["k"]), "f16"), "b": floats(rng, (S["k"], S["n"]), "f16"),
            "c": out((S["m"], S["n"]), "f32"), "locks": zeros(tiles, "i32"),
            "counts": zeros(tiles, "i32")}


case(name="matmul_streamk_locks", klass="gemm", module="matmul_streamk.py", kernel="streamk_gemm",
     make=streamk_make, args=streamk_args,
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=8),
     grid=lambda S: (S["P"],), ref=lambda X, S: {"c": X["a"] @ X["b"]},
     gpu=dict(m=3072, n=3072, k=4096, BM=128, BN=128, BK=64, P=132, warps=8, stages=3),
     interp=dict(m=40, n=36, k=70, BM=16, BN=16, BK=16, P=7, warps=4, stages=2), tol=1e-4)

case(name="matmul_persistent", klass="gemm", module="matmul_persistent.py",
     kernel="matmul_kernel_persistent", make=make_ab("bf16"),
     args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"],
                           GROUP_SIZE_M=S["G"], NUM_SMS=S["P"]),
     grid=lambda S: (min(S["P"], cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"])),), ref=ref_ab,
     gpu=dict(GEMM_GPU, m=8192, n=8192, k=1024, BN=256, P=132),
     interp=dict(GEMM_INT, P=3))

GROUPS_GPU = [(1024, 1024, 1024), (2048, 512, 2048), (512, 2048, 1024), (4096, 256, 512)]
GROUPS_INT = [(32, 32, 32), (64, 32, 48), (16, 64, 16)]


def grouped_make(rng, S):
    d = {}
    for i, (m, n, k) in enumerate(S["groups"]):
        d[f"a{i}"] = floats(rng, (m, k), "f16")
        d[f"b{i}"] = floats(rng, (k, n), "f16")
        d[f"c{i}"] = out((m, n), "f16")
    g = range(len(S["groups"]))
    d["pa"] = ptr_table([f"a{i}" for i in g])
    d["pb"] = ptr_table([f"b{i}" for i in g])
    d["pc"] = ptr_table([f"c{i}" for i in g])
    d["sizes"] = Buf(np.array([v for t in S["groups"] for v in t]), "i32")
    d["lds"] = Buf(np.array([v for m, n, k in S["groups"] for v in (k, n, n)]), "i32")
    return d


case(name="grouped_gemm_ptr_table", klass="gemm", module="grouped_gemm_ptr_table.py",
     kernel="grouped_matmul_kernel", make=grouped_make,
     args=lambda S, b: ["pa", "pb", "pc", "sizes", "lds", I32(len(S["groups"]))],
     consts=lambda S: dict(NUM_SM=S["P"], BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"],
                           BLOCK_SIZE_K=S["BK"]),
     grid=lambda S: (S["P"],),
     ref=lambda X, S: {f"c{i}": X[f"a{i}"] @ X[f"b{i}"] for i in range(len(S["groups"]))},
     shape=lambda S: f"{len(S['groups'])} problems",
     gpu=dict(groups=GROUPS_GPU, P=132, BM=128, BN=128, BK=64, warps=4, stages=3),
     interp=dict(groups=GROUPS_INT, P=5, BM=16, BN=16, BK=16, warps=4, stages=2))
