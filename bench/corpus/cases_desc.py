"""Corpus cases: kernels that build tensor descriptors in the kernel
(tl.make_tensor_descriptor): a grouped GEMM, a persistent GEMM, an
attention forward and an expert GEMM over a 3-D weight descriptor. Triton needs a global-memory allocator for them
(bench/corpus.py sets one)."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, group_operands, out

# GPU sizes: tutorial 09's fp16 shape and config; interpreter sizes: ragged
# M, N and K (the descriptors bound every access), tiny tiles
DESC_GEMM_GPU = dict(m=4096, n=4096, k=4096, BM=128, BN=256, BK=64, G=8, warps=8, stages=3)
DESC_GEMM_INT = dict(m=72, n=56, k=88, BM=32, BN=16, BK=16, G=2, warps=4, stages=2)


def gemm_make(rng, S):
    # B is kept [N, K], as tutorial 09 keeps it; the kernels compute A @ B^T
    return {"a": floats(rng, (S["m"], S["k"]), "f16"), "b": floats(rng, (S["n"], S["k"]), "f16"),
            "c": out((S["m"], S["n"]), "f16")}


def gemm_args(S, bufs):
    return ["a", "b", "c", I32(S["m"]), I32(S["n"]), I32(S["k"])]


def gemm_consts(S):
    return dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=S["G"])


def gemm_ref(X, S):
    return {"c": X["a"] @ X["b"].T}


def gemm_tiles(S):
    return cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"])


case(name="matmul_desc_device", klass="gemm", module="tensor_desc_kernels.py",
     kernel="matmul_desc_device", make=gemm_make, args=gemm_args, consts=gemm_consts,
     grid=lambda S: (gemm_tiles(S),), ref=gemm_ref, gpu=DESC_GEMM_GPU, interp=DESC_GEMM_INT)

# NUM_SMS fixed at an H100's 132, so that both compilers get the same grid
case(name="matmul_desc_persistent", klass="gemm", module="tensor_desc_kernels.py",
     kernel="matmul_desc_persistent", make=gemm_make, args=gemm_args,
     consts=lambda S: dict(gemm_consts(S), NUM_SMS=S["P"]),
     grid=lambda S: (min(S["P"], gemm_tiles(S)),), ref=gemm_ref,
     gpu=dict(DESC_GEMM_GPU, P=132), interp=dict(DESC_GEMM_INT, P=3))


# batches of B [N, K]: C[z] = A[z] @ B[z]^T
case(name="bmm_desc_persistent", klass="gemm", module="tensor_desc_kernels.py",
     kernel="bmm_desc_persistent",
     make=lambda rng, S: {"a": floats(rng, (S["z"], S["m"], S["k"]), "f16"),
                          "b": floats(rng, (S["z"], S["n"], S["k"]), "f16"),
                          "c": out((S["z"], S["m"], S["n"]), "f16")},
     args=lambda S, b: ["a", "b", "c", I32(S["z"]), I32(S["m"]), I32(S["n"]), I32(S["k"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], NUM_SMS=S["P"]),
     grid=lambda S: (S["P"],),
     ref=lambda X, S: {"c": np.einsum("zmk,znk->zmn", X["a"], X["b"])},
     shape=lambda S: f"{S['z']}x{S['m']}x{S['n']}x{S['k']}",
     gpu=dict(z=16, m=1024, n=1024, k=1024, P=132, BM=128, BN=128, BK=64, warps=8, stages=3),
     interp=dict(z=3, m=40, n=24, k=56, P=5, BM=16, BN=16, BK=16, warps=4, stages=2))

# ragged groups: M and K off the tile sizes (the descriptors bound the
# tails), one group of a few rows; K and N multiples of 8 (16-byte strides)
DESC_GROUPS_GPU = [(2048, 2048, 1024), (1000, 2048, 1000), (3000, 1536, 1024), (8, 2048, 1024),
                   (1536, 1024, 2048)]
DESC_GROUPS_INT = [(24, 32, 40), (8, 16, 24), (40, 24, 16)]


case(name="grouped_gemm_desc", klass="gemm", module="tensor_desc_kernels.py",
     kernel="grouped_gemm_desc",
     make=lambda rng, S: group_operands(rng, S["groups"], "bf16", b_nk=True),
     args=lambda S, b: ["pa", "pb", "pc", "sizes", I32(len(S["groups"]))],
     consts=lambda S: dict(NUM_PROGRAMS=S["P"], BLOCK_M=S["BM"], BLOCK_N=S["BN"],
                           BLOCK_K=S["BK"]),
     grid=lambda S: (S["P"],),
     ref=lambda X, S: {f"c{i}": X[f"a{i}"] @ X[f"b{i}"].T for i in range(len(S["groups"]))},
     shape=lambda S: f"{len(S['groups'])} groups",
     gpu=dict(groups=DESC_GROUPS_GPU, P=132, BM=128, BN=128, BK=64, warps=8, stages=3),
     interp=dict(groups=DESC_GROUPS_INT, P=5, BM=16, BN=16, BK=16, warps=4, stages=2))


def attn_make(rng, S):
    shape = (S["z"], S["h"], S["n_ctx"], S["d"])
    return {"q": floats(rng, shape, "f16"), "k": floats(rng, shape, "f16"),
            "v": floats(rng, shape, "f16"), "o": out(shape, "f16"),
            "lse": out((S["z"], S["h"], S["n_ctx"]), "f32")}


def attn_ref(X, S):
    scale = S["d"] ** -0.5
    s = np.einsum("zhmd,zhnd->zhmn", X["q"], X["k"]) * scale
    mx = s.max(axis=-1, keepdims=True)
    e = np.exp(s - mx)
    tot = e.sum(axis=-1, keepdims=True)
    lse = (mx + np.log(tot))[..., 0] / np.log(2.0)  # log2 of sum(exp2(s * log2(e)))
    return {"o": np.einsum("zhmn,zhnd->zhmd", e / tot, X["v"]), "lse": lse}


case(name="attn_fwd_desc", klass="attention", module="tensor_desc_kernels.py",
     kernel="attn_fwd_desc", make=attn_make,
     args=lambda S, b: ["q", "k", "v", "o", "lse", F32(S["d"] ** -0.5), I32(S["z"]),
                        I32(S["h"]), I32(S["n_ctx"])],
     consts=lambda S: dict(HEAD_DIM=S["d"], BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n_ctx"], S["BM"]), S["z"] * S["h"]), ref=attn_ref,
     shape=lambda S: f"z{S['z']} h{S['h']} n{S['n_ctx']} d{S['d']}",
     gpu=dict(z=4, h=8, n_ctx=4096, d=128, BM=128, BN=128, warps=8, stages=3),
     interp=dict(z=2, h=3, n_ctx=64, d=32, BM=16, BN=32, warps=4, stages=2), tol=5e-3)


# tokens per expert: ragged, one expert with none (K and N multiples of 8)
MOE_GPU = dict(counts=[1536, 640, 0, 2048, 1000, 8, 1200, 1792], n=2048, k=1024, BM=128, BN=128,
               BK=64, warps=8, stages=3)
MOE_INT = dict(counts=[24, 0, 40, 8], n=48, k=40, BM=16, BN=16, BK=16, warps=4, stages=2)


def moe_make(rng, S):
    e, t = len(S["counts"]), sum(S["counts"])
    offsets = np.concatenate([[0], np.cumsum(S["counts"])])
    return {"x": floats(rng, (t, S["k"]), "bf16"), "w": floats(rng, (e, S["n"], S["k"]), "bf16"),
            "out": out((t, S["n"]), "bf16"), "offsets": Buf(offsets, "i32")}


def moe_ref(X, S):
    o = np.zeros((sum(S["counts"]), S["n"]))
    at = 0
    for e, c in enumerate(S["counts"]):
        o[at:at + c] = X["x"][at:at + c] @ X["w"][e].T
        at += c
    return {"out": o}


case(name="moe_expert_desc3d", klass="gemm", module="moe_desc3d.py", kernel="expert_gemm_desc3d",
     make=moe_make,
     args=lambda S, b: ["x", "w", "out", "offsets", I32(S["n"]), I32(S["k"]),
                        I32(len(S["counts"]))],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(max(S["counts"]), S["BM"]), cdiv(S["n"], S["BN"]), len(S["counts"])),
     ref=moe_ref, shape=lambda S: f"{len(S['counts'])} experts",
     gpu=MOE_GPU, interp=MOE_INT)
