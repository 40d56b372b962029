"""Corpus cases: dense, grouped, split-K, stream-K, persistent and
quantised GEMMs, and fused MoE."""
import numpy as np

from registry import I32, Buf, Dtype, case, cdiv, floats, group_operands, ints, out, zeros

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

case(name="matmul_persistent_flat", klass="gemm", module="matmul_persistent_flat.py",
     kernel="gemm_persistent_flat", make=make_ab("f16"),
     args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=S["G"],
                           NUM_SMS=S["P"]),
     grid=lambda S: (min(S["P"], cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"])),), ref=ref_ab,
     gpu=dict(GEMM_GPU, m=8192, n=8192, k=4096, BN=256, P=132),
     interp=dict(GEMM_INT, k=75, P=3))

GROUPS_GPU = [(1024, 1024, 1024), (2048, 512, 2048), (512, 2048, 1024), (4096, 256, 512)]
GROUPS_INT = [(32, 32, 32), (64, 32, 48), (16, 64, 16)]


def grouped_make(rng, S):
    d = group_operands(rng, S["groups"], "f16")
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

case(name="matmul_int64_assume", klass="gemm", module="matmul_int64_assume.py",
     kernel="gemm_i64_kernel", make=make_ab(), args=lambda S, b: ["a", "b", "c"] + strides_abc(S, b),
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=S["G"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),), ref=ref_ab,
     gpu=dict(GEMM_GPU, m=4000, n=4000, stages=4), interp=dict(GEMM_INT, k=64))


def bmm_make(rng, S):
    z, m, n, k = S["z"], S["m"], S["n"], S["k"]
    return {"a": floats(rng, (z, m, k), "f16"), "b": floats(rng, (z, k, n), "f16"),
            "o": out((z, m, n), "f16")}


case(name="bmm_3d_grid", klass="gemm", module="bmm_strided.py", kernel="bmm_kernel", make=bmm_make,
     args=lambda S, b: ["a", "b", "o", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["m"] * S["k"]), I32(S["k"]), I32(1), I32(S["k"] * S["n"]),
                        I32(S["n"]), I32(1), I32(S["m"] * S["n"]), I32(S["n"]), I32(1)],
     consts=lambda S: dict(TILE_M=S["BM"], TILE_N=S["BN"], TILE_K=S["BK"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"]), S["z"]),
     ref=lambda X, S: {"o": X["a"] @ X["b"]},
     gpu=dict(z=64, m=500, n=512, k=1000, BM=128, BN=64, BK=32, warps=4, stages=4),
     interp=dict(z=3, m=20, n=36, k=40, BM=16, BN=16, BK=16, warps=4, stages=2))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def addmm_make(rng, S):
    m, n, k = S["m"], S["n"], S["k"]
    return {"x": floats(rng, (m, k), "bf16"), "w": floats(rng, (n, k), "bf16", 0.05),
            "bias": floats(rng, n, "bf16"), "res": floats(rng, (m, n), "bf16"),
            "o": out((m, n), "bf16")}


case(name="linear_gelu_residual", klass="epilogue", module="addmm_gelu_residual.py",
     kernel="linear_gelu_residual_kernel", make=addmm_make,
     args=lambda S, b: ["x", "w", "bias", "res", "o", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["k"]), I32(S["k"]), I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=S["G"],
                           HAS_BIAS=True),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"o": X["res"] + gelu_tanh(X["x"] @ X["w"].T + X["bias"])},
     gpu=dict(m=8192, n=4096, k=1024, BM=128, BN=128, BK=64, G=8, warps=8, stages=3),
     interp=GEMM_INT)

# ---- quantised ---------------------------------------------------------------------------


def int8_make(rng, S, out_dt="f16"):
    m, n, k = S["m"], S["n"], S["k"]
    return {"a": ints(rng, (m, k), -127, 128, "i8"), "b": ints(rng, (n, k), -127, 128, "i8"),
            "c": out((m, n), out_dt),
            "as": Buf(rng.random(m) / (127 * np.sqrt(k)) + 1e-4, "f32"),
            "bs": Buf(rng.random(n) / 127 + 1e-4, "f32")}


case(name="w8a8_int8_rowscale", klass="quant-gemm", module="w8a8_int8_matmul.py",
     kernel="_w8a8_int8_kernel", make=int8_make,
     args=lambda S, b: ["a", "b", "c", "as", "bs", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["k"]), I32(S["k"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"],
                           GROUP_SIZE_M=S["G"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"c": (X["a"] @ X["b"].T) * X["as"][:, None] * X["bs"][None, :]},
     gpu=dict(m=4096, n=4096, k=4096, BM=128, BN=128, BK=128, G=8, warps=8, stages=3),
     interp=dict(GEMM_INT, BK=32), tol=2e-3)


def fp8_block_make(rng, S):
    m, n, k, gn, gk = S["m"], S["n"], S["k"], S["gn"], S["gk"]
    return {"a": floats(rng, (m, k), "f8e4"), "b": floats(rng, (n, k), "f8e4"),
            "c": out((m, n), "bf16"),
            "as": Buf(rng.random((m, cdiv(k, gk))) * 0.02 + 0.01, "f32"),
            "bs": Buf(rng.random((cdiv(n, gn), cdiv(k, gk))) * 0.02 + 0.01, "f32")}


def fp8_block_ref(X, S):
    gn, gk = S["gn"], S["gk"]
    a = X["a"] * np.repeat(X["as"], gk, axis=1)[:, :S["k"]]
    b = X["b"] * np.repeat(np.repeat(X["bs"], gn, axis=0), gk, axis=1)[:S["n"], :S["k"]]
    return {"c": a @ b.T}


FP8_BLOCK = case(name="w8a8_block_fp8", klass="quant-gemm", module="w8a8_block_fp8_matmul.py",
     kernel="_w8a8_block_fp8_matmul", make=fp8_block_make,
     args=lambda S, b: ["a", "b", "c", "as", "bs", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["gn"]), I32(S["gk"]), I32(S["k"]), I32(1), I32(1), I32(S["k"]),
                        I32(S["n"]), I32(1), I32(cdiv(S["k"], S["gk"])), I32(1), I32(1),
                        I32(cdiv(S["k"], S["gk"]))],
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["gn"], BLOCK_SIZE_K=S["gk"],
                           GROUP_SIZE_M=S["G"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["gn"]),), ref=fp8_block_ref,
     gpu=dict(m=4096, n=4096, k=7168, gn=128, gk=128, BM=64, G=32, warps=4, stages=3),
     interp=dict(m=40, n=64, k=96, gn=16, gk=32, BM=16, G=2, warps=4, stages=2), tol=1e-2)

# the same kernel at the tile most callers launch it with past 128 rows (128x128x128 on
# the default 4 warps and 3 stages), where both compilers spill
case(name="w8a8_block_fp8_m128", klass="quant-gemm", module="w8a8_block_fp8_matmul.py",
     kernel="_w8a8_block_fp8_matmul", make=fp8_block_make,
     args=FP8_BLOCK.args, consts=FP8_BLOCK.consts, grid=FP8_BLOCK.grid, ref=fp8_block_ref,
     gpu=dict(m=4096, n=4096, k=7168, gn=128, gk=128, BM=128, G=8, warps=4, stages=3),
     interp=dict(m=40, n=64, k=96, gn=16, gk=32, BM=16, G=2, warps=4, stages=2), tol=1e-2)


def fp8_row_make(rng, S):
    m, n, k = S["m"], S["n"], S["k"]
    return {"a": floats(rng, (m, k), "f8e4"), "b": floats(rng, (n, k), "f8e4"),
            "c": out((m, n), "bf16"), "as": Buf(rng.random(m) * 0.02 + 0.01, "f32"),
            "bs": Buf(rng.random(n) * 0.02 + 0.01, "f32"), "bias": floats(rng, n, "f32")}


case(name="fp8_rowwise_bias", klass="quant-gemm", module="fp8_rowwise_matmul.py",
     kernel="_kernel_matmul_fp8_row", make=fp8_row_make,
     args=lambda S, b: ["a", "b", "c", I32(S["m"]), I32(S["n"]), I32(S["k"]), "as", "bs", "bias",
                        I32(S["k"]), I32(1), I32(S["k"]), I32(1), I32(S["n"]), I32(1)],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], GROUP_M=S["G"],
                           EVEN_K=S["k"] % S["BK"] == 0, USE_BIAS=True),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"c": (X["a"] @ X["b"].T) * X["as"][:, None] * X["bs"][None, :]
                       + X["bias"]},
     gpu=dict(m=4096, n=4096, k=4096, BM=128, BN=128, BK=128, G=8, warps=8, stages=3),
     interp=dict(GEMM_INT, k=64, BK=32), tol=1e-2)


def w4_make(rng, S):
    m, n, k, g = S["m"], S["n"], S["k"], S["g"]
    q = rng.integers(0, 16, (k, n))
    return {"a": floats(rng, (m, k), "f16"), "qb": Buf(q[0::2] | (q[1::2] << 4), "u8"),
            "q": Buf(q, "i32"), "s": Buf(rng.random((k // g, n)) * 0.02 + 0.005, "f16"),
            "z": Buf(rng.integers(6, 10, (k // g, n)), "f16"), "c": out((m, n), "f16")}


def w4_ref(X, S):
    g = S["g"]
    b = (X["q"] - np.repeat(X["z"], g, axis=0)) * np.repeat(X["s"], g, axis=0)
    return {"c": X["a"] @ b}


case(name="w4a16_int4_dequant", klass="quant-gemm", module="w4a16_matmul.py",
     kernel="w4a16_gemm_kernel", make=w4_make,
     args=lambda S, b: ["a", "qb", "s", "z", "c", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["k"]), I32(S["n"]), I32(S["n"]), I32(S["g"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])), ref=w4_ref,
     gpu=dict(m=256, n=8192, k=8192, g=128, BM=64, BN=128, BK=64, warps=4, stages=3),
     interp=dict(m=24, n=40, k=64, g=32, BM=16, BN=16, BK=16, warps=4, stages=2), tol=1e-2)

ORDER8 = (0, 4, 1, 5, 2, 6, 3, 7)  # column t of 8 is nibble ORDER8[t] of its int32


def pack8(q):
    """int4 values (rows, 8 n) to int32 (rows, n), AWQ's nibble order."""
    q = q.reshape(q.shape[0], -1, 8).astype(np.uint32)
    w = sum(q[:, :, t] << np.uint32(4 * ORDER8[t]) for t in range(8))
    return w.astype(np.uint32).view(np.int32)


def awq_make(rng, S):
    m, n, k, g = S["m"], S["n"], S["k"], S["g"]
    q, z = rng.integers(0, 16, (k, n)), rng.integers(0, 16, (k // g, n))
    return {"a": floats(rng, (m, k), "f16"), "qw": Buf(pack8(q), "i32"),
            "s": Buf(rng.random((k // g, n)) * 0.02 + 0.005, "f16"),
            "qz": Buf(pack8(z), "i32"), "q": Buf(q, "i32"), "z": Buf(z, "i32"),
            "c": out((m, n), "f16")}


case(name="w4a16_awq_lop3", klass="quant-gemm", module="w4a16_lop3_matmul.py",
     kernel="w4a16_lop3_kernel", make=awq_make,
     args=lambda S, b: ["a", "qw", "s", "qz", "c", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["k"]), I32(S["n"] // 8), I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], GROUP=S["g"], USE_ASM=S["ASM"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])), ref=w4_ref,
     gpu=dict(m=1024, n=8192, k=8192, g=128, BM=128, BN=128, ASM=True, warps=4, stages=3),
     interp=dict(m=24, n=64, k=64, g=32, BM=16, BN=32, ASM=False, warps=4, stages=2),
     tol=1e-2)

# ---- fused MoE ---------------------------------------------------------------------------


def moe_route(rng, T, E, topk, BM):
    """Random top-k routing and its expert-sorted, block-padded token order."""
    ids = np.argsort(rng.random((T, E)), axis=1)[:, :topk]
    w = rng.random((T, topk)) + 0.1
    w /= w.sum(axis=1, keepdims=True)
    flat, sorted_ids, expert_ids = ids.ravel(), [], []
    for e in range(E):
        toks = np.nonzero(flat == e)[0]
        blocks = cdiv(len(toks), BM)
        pad = np.full(blocks * BM, T * topk)
        pad[:len(toks)] = toks
        sorted_ids.extend(pad)
        expert_ids.extend([e] * blocks)
    post = len(sorted_ids)
    sorted_ids.extend([T * topk] * (2 * BM))  # room the launch covers but never reads
    expert_ids.extend([0, 0])
    return ids, w, np.array(sorted_ids), np.array(expert_ids), post


def moe_make(fp8, int8=False):
    def make(rng, S):
        T, E, topk, n, k, BM = S["t"], S["e"], S["topk"], S["n"], S["k"], S["BM"]
        ids, w, sid, eid, post = moe_route(rng, T, E, topk, BM)
        d = {"w": Buf(w, "f32"), "sid": Buf(sid, "i32"), "eid": Buf(eid, "i32"),
             "post": Buf([post], "i32"), "ids": Buf(ids, "i32"),
             "c": out((T * topk, n), "bf16" if fp8 else "f16")}
        if fp8:
            gk, gn = S["gk"], S["gn"]
            if int8:
                d["a"] = ints(rng, (T, k), -127, 128, "i8")
                d["b"] = ints(rng, (E, n, k), -127, 128, "i8")
            else:
                d["a"] = floats(rng, (T, k), "f8e4")
                d["b"] = floats(rng, (E, n, k), "f8e4")
            d["as"] = Buf(rng.random((T, k // gk)) * 0.02 + 0.01, "f32")
            d["bs"] = Buf(rng.random((E, n // gn, k // gk)) * 0.02 + 0.01, "f32")
        else:
            d["a"] = floats(rng, (T, k), "f16")
            d["b"] = floats(rng, (E, n, k), "f16", 0.05)
        return d
    return make


def routed_rows(X, S, a, b):
    """Each routed row (token, slot) of a [T, K] times its expert's b [E, N, K]^T."""
    ids = X["ids"].astype(int)
    T, topk = ids.shape
    c = np.empty((T * topk, S["n"]))
    for e in range(S["e"]):
        rows = np.nonzero(ids.ravel() == e)[0]
        c[rows] = a[rows // topk] @ b[e].T
    return c


def moe_ref(fp8):
    def ref(X, S):
        a, b = X["a"], X["b"]
        if fp8:
            a = a * np.repeat(X["as"], S["gk"], axis=1)
            b = b * np.repeat(np.repeat(X["bs"], S["gn"], axis=1), S["gk"], axis=2)
        return {"c": routed_rows(X, S, a, b) * X["w"].reshape(-1, 1)}
    return ref


def moe_em(S):
    """An upper bound of the padded sorted length, as the host wrapper allocates."""
    return S["t"] * S["topk"] + S["e"] * (S["BM"] - 1) + 2 * S["BM"]


def moe_args(S, b):
    em = len(b["sid"].arr)
    return ["a", "b", "c", "w", "sid", "eid", "post", I32(S["n"]), I32(S["k"]), I32(em),
            I32(S["t"] * S["topk"]), I32(S["k"]), I32(1), I32(S["n"] * S["k"]), I32(1),
            I32(S["k"]), I32(S["n"]), I32(1)]


case(name="fused_moe", klass="moe", module="fused_moe.py", kernel="fused_moe_kernel",
     make=moe_make(False), args=moe_args,
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"],
                           GROUP_SIZE_M=S["G"], MUL_ROUTED_WEIGHT=True, top_k=S["topk"],
                           compute_type=Dtype("tl.float16")),
     grid=lambda S: (cdiv(moe_em(S), S["BM"]) * cdiv(S["n"], S["BN"]),), ref=moe_ref(False),
     gpu=dict(t=2048, e=8, topk=2, n=2816, k=4096, BM=64, BN=128, BK=64, G=8, warps=4, stages=3),
     interp=dict(t=24, e=4, topk=2, n=40, k=48, BM=16, BN=16, BK=16, G=2, warps=4, stages=2))


def moe_fp8_args(S, b):
    em = len(b["sid"].arr)
    k, n, gk, gn = S["k"], S["n"], S["gk"], S["gn"]
    return ["a", "b", "c", "as", "bs", "w", "sid", "eid", "post", I32(n), I32(k), I32(em),
            I32(S["t"] * S["topk"]), I32(k), I32(n * k), I32(k), I32(n), I32(k // gk),
            I32((n // gn) * (k // gk)), I32(k // gk)]


case(name="fused_moe_fp8_block", klass="moe", module="fused_moe_fp8_block.py",
     kernel="fused_moe_fp8_kernel", make=moe_make(True), args=moe_fp8_args,
     consts=lambda S: dict(group_n=S["gn"], group_k=S["gk"], BLOCK_SIZE_M=S["BM"],
                           BLOCK_SIZE_N=S["gn"], BLOCK_SIZE_K=S["gk"], GROUP_SIZE_M=S["G"],
                           top_k=S["topk"]),
     grid=lambda S: (cdiv(moe_em(S), S["BM"]) * cdiv(S["n"], S["gn"]),), ref=moe_ref(True),
     gpu=dict(t=2048, e=8, topk=2, n=2048, k=7168, gn=128, gk=128, BM=64, G=8, warps=4,
              stages=3),
     interp=dict(t=24, e=4, topk=2, n=32, k=64, gn=16, gk=32, BM=16, G=2, warps=4, stages=2))


def moe_w8a8_args(S, b):
    em = len(b["sid"].arr)
    k, n, gk, gn = S["k"], S["n"], S["gk"], S["gn"]
    return ["a", "b", "c", "as", "bs", "w", "sid", "eid", "post", I32(n), I32(k), I32(em),
            I32(S["t"] * S["topk"]), I32(k), I32(1), I32(n * k), I32(1), I32(k), I32(n),
            I32(1), I32(k // gk), I32(1), I32((n // gn) * (k // gk)), I32(1), I32(k // gk)]


# int8 w8a8, the N tile one scale block wide: the weight scale is a scalar per step
case(name="moe_w8a8_block_int8", klass="moe", module="fused_moe_w8a8_block.py",
     kernel="moe_w8a8_block_kernel", make=moe_make(True, int8=True), args=moe_w8a8_args,
     consts=lambda S: dict(group_n=S["gn"], group_k=S["gk"], BLOCK_SIZE_M=S["BM"],
                           BLOCK_SIZE_N=S["gn"], BLOCK_SIZE_K=S["gk"], GROUP_SIZE_M=S["G"],
                           top_k=S["topk"], EVEN_K=S["k"] % S["gk"] == 0),
     grid=lambda S: (cdiv(moe_em(S), S["BM"]) * cdiv(S["n"], S["gn"]),), ref=moe_ref(True),
     gpu=dict(t=2048, e=8, topk=2, n=2048, k=7168, gn=128, gk=128, BM=64, G=32, warps=4,
              stages=3),
     interp=dict(t=24, e=4, topk=2, n=32, k=64, gn=16, gk=32, BM=16, G=2, warps=4, stages=2))


def wna16_make(int4):
    def make(rng, S):
        T, E, topk, n, k, BM, g = S["t"], S["e"], S["topk"], S["n"], S["k"], S["BM"], S["g"]
        ids, w, sid, eid, post = moe_route(rng, T, E, topk, BM)
        return {"a": floats(rng, (T, k), "bf16"),
                "q": ints(rng, (E, n, k // 2 if int4 else k), 0, 256, "u8"),
                "s": floats(rng, (E, n, k // g), "bf16", 0.2 / np.sqrt(k) / (8 if int4 else 128)),
                "w": Buf(w, "f32"), "sid": Buf(sid, "i32"), "eid": Buf(eid, "i32"),
                "post": Buf([post], "i32"), "ids": Buf(ids, "i32"),
                "c": out((T * topk, n), "bf16")}
    return make


def wna16_ref(int4):
    def ref(X, S):
        q = X["q"].astype(np.int64)
        if int4:  # byte j holds k = 2j in its low nibble, 2j + 1 in its high one
            q = np.stack([q & 15, q >> 4], axis=-1).reshape(q.shape[0], q.shape[1], -1) - 8
        else:
            q = q - 128
        return {"c": routed_rows(X, S, X["a"], q * np.repeat(X["s"], S["g"], axis=2))}
    return ref


def wna16_args(int4):
    def args(S, b):
        k, n, g = S["k"], S["n"], S["g"]
        kq = k // 2 if int4 else k
        return ["a", "q", "c", "s", "w", "sid", "eid", "post", I32(len(b["sid"].arr)),
                I32(S["t"] * S["topk"]), I32(k), I32(1), I32(n * kq), I32(1), I32(kq), I32(n),
                I32(1), I32(n * (k // g)), I32(1), I32(k // g)]
    return args


def wna16_case(name, int4, gpu, interp):
    case(name=name, klass="moe", module="fused_moe_wna16.py", kernel="moe_wna16_kernel",
         make=wna16_make(int4), args=wna16_args(int4),
         consts=lambda S: dict(N=S["n"], K=S["k"], group_size=S["g"], BLOCK_SIZE_M=S["BM"],
                               BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"], GROUP_SIZE_M=1,
                               MUL_ROUTED_WEIGHT=False, top_k=S["topk"],
                               compute_type=Dtype("tl.bfloat16"), INT4=int4,
                               EVEN_K=S["k"] % S["BK"] == 0),
         grid=lambda S: (cdiv(moe_em(S), S["BM"]) * cdiv(S["n"], S["BN"]),),
         ref=wna16_ref(int4), gpu=gpu, interp=interp, tol=2e-2)


# the gate-up GEMM of a 64-expert top-6 MoE (hidden 2048, intermediate 1408),
# at the block config a serving engine picks for its Triton w4a16 path
wna16_case("moe_wna16_int4_g128", True,
           gpu=dict(t=2048, e=64, topk=6, n=2816, k=2048, g=128, BM=64, BN=64, BK=32, warps=4,
                    stages=3),
           interp=dict(t=24, e=4, topk=2, n=48, k=96, g=32, BM=16, BN=16, BK=32, warps=4,
                       stages=2))
wna16_case("moe_wna16_int8_g128", False,
           gpu=dict(t=2048, e=64, topk=6, n=2816, k=2048, g=128, BM=64, BN=64, BK=32, warps=4,
                    stages=3),
           interp=dict(t=24, e=4, topk=2, n=48, k=96, g=16, BM=16, BN=16, BK=32, warps=4,
                       stages=2))


def w8a16_make(rng, S):
    T, E, topk, n, k, BM = S["t"], S["e"], S["topk"], S["n"], S["k"], S["BM"]
    ids, w, sid, eid, post = moe_route(rng, T, E, topk, BM)
    return {"a": floats(rng, (T, k), "bf16"), "q": ints(rng, (E, n, k), -128, 128, "i8"),
            "s": Buf(rng.random((E, n)) * (2 / np.sqrt(k) / 128) + 1e-4, "f32"),
            "w": Buf(w, "f32"), "sid": Buf(sid, "i32"), "eid": Buf(eid, "i32"),
            "post": Buf([post], "i32"), "ids": Buf(ids, "i32"), "c": out((T * topk, n), "bf16")}


def w8a16_ref(X, S):
    return {"c": routed_rows(X, S, X["a"], X["q"] * X["s"][:, :, None])}


# the gate-up GEMM of a 64-expert top-6 MoE, at an int8_w8a16 tuned config
case(name="moe_w8a16_int8", klass="moe", module="fused_moe_w8a16.py",
     kernel="moe_w8a16_kernel", make=w8a16_make,
     args=lambda S, b: ["a", "q", "c", "s", "w", "sid", "eid", "post", I32(S["n"]), I32(S["k"]),
                        I32(len(b["sid"].arr)), I32(S["t"] * S["topk"]), I32(S["k"]), I32(1),
                        I32(S["n"] * S["k"]), I32(1), I32(S["k"]), I32(S["n"]), I32(1),
                        I32(S["n"]), I32(1)],
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"],
                           GROUP_SIZE_M=S["G"], MUL_ROUTED_WEIGHT=False, top_k=S["topk"],
                           compute_type=Dtype("tl.bfloat16")),
     grid=lambda S: (cdiv(moe_em(S), S["BM"]) * cdiv(S["n"], S["BN"]),), ref=w8a16_ref,
     gpu=dict(t=2048, e=64, topk=6, n=2816, k=2048, BM=128, BN=128, BK=64, G=64, warps=4,
              stages=3),
     interp=dict(t=24, e=4, topk=2, n=48, k=80, BM=16, BN=16, BK=32, G=2, warps=4, stages=2),
     tol=1e-2)


# b is an [N, K] weight passed transposed: stride_bk 1, stride_bn K
case(name="scaled_mm_carried_k", klass="quant-gemm", module="scaled_mm_carried_k.py",
     kernel="_scaled_mm_carried_k", make=lambda rng, S: int8_make(rng, S, "bf16"),
     args=lambda S, b: ["a", "b", "as", "bs", "c", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["k"]), I32(1), I32(1), I32(S["k"]), I32(S["n"]), I32(1)],
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]),),
     ref=lambda X, S: {"c": (X["a"] @ X["b"].T) * X["as"][:, None] * X["bs"][None, :]},
     gpu=dict(m=4096, n=4096, k=4096, BM=64, BN=128, BK=128, warps=4, stages=3),
     interp=dict(m=40, n=36, k=70, BM=16, BN=16, BK=32, warps=4, stages=2), tol=1e-2)
