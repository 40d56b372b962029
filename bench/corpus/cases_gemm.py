"""Corpus cases: dense, grouped, split-K, stream-K, persistent and
quantised GEMMs, and fused MoE."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, out

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
