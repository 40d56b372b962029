"""Corpus cases: microscaled GEMMs through tl.dot_scaled, decode-time GEMVs
and an AWQ int4 GEMM unpacked with tl.interleave. The MX GEMM with both
operands in e4m3 and an e8m0 exponent per 32 elements of K
(mx_block_scaled_matmul.py); bf16 activations times an mxfp4 weight at a
decode and a prefill shape, the latter with gpt-oss' K of 2880
(mxfp4_linear.py); y = W @ x in bf16 with fp32 sums, one program per row
block or split over K with fp32 atomics (gemv_decode.py); and vLLM's AWQ
GEMM with fp16 accumulation, alone and split over K into partial planes
(awq_gemm_interleave.py). The interpreter sizes keep rows, columns and K
ragged against the tiles wherever the kernel masks them."""
import numpy as np

from registry import I32, Buf, case, cdiv, floats, out, zeros

MX = 32  # elements of K per e8m0 exponent


def e8m0(rng, shape, lo=123, hi=131):
    """Random e8m0 exponents (2^(s - 127)), 2^-4 .. 2^3 by default."""
    return Buf(rng.integers(lo, hi, shape), "u8")


def e8m0_value(s):
    return np.exp2(s - 127.0)


E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1_value(code):
    code = code.astype(np.int64)
    return np.where(code & 8, -1.0, 1.0) * E2M1[code & 7]


def unpack_k(packed):
    """[rows, K // 2] bytes of e2m1 codes (low nibble first) -> [rows, K] values."""
    p = packed.astype(np.int64)
    v = np.empty((p.shape[0], p.shape[1] * 2))
    v[:, 0::2], v[:, 1::2] = e2m1_value(p & 15), e2m1_value(p >> 4)
    return v


def scaled_rows(v, s):
    """v [rows, K] times 2^(s - 127) per row and per 32 elements of K."""
    return v * np.repeat(e8m0_value(s), MX, axis=1)[:, :v.shape[1]]


def matmul_nt(a, b, rows=1024):
    """a @ b.T in float64, a block of rows at a time."""
    return np.concatenate([a[i:i + rows] @ b.T for i in range(0, a.shape[0], rows)])


# ---- e4m3 x e4m3 block-scaled GEMM ----------------------------------------------------------

def mx_make(rng, S):
    m, n, k = S["m"], S["n"], S["k"]
    return {"a": floats(rng, (m, k), "f8e4"), "b": floats(rng, (n, k), "f8e4"),
            "as": e8m0(rng, (m, k // MX)), "bs": e8m0(rng, (n, k // MX)),
            "c": out((m, n), "bf16")}


case(name="mx_block_scaled_e4m3", klass="quant-gemm", module="mx_block_scaled_matmul.py",
     kernel="block_scaled_matmul_kernel", make=mx_make,
     args=lambda S, b: ["a", "b", "as", "bs", "c", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                        I32(S["k"]), I32(S["k"]), I32(S["k"] // MX), I32(S["k"] // MX),
                        I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"], VEC_SIZE=MX),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])),
     ref=lambda X, S: {"c": matmul_nt(scaled_rows(X["a"], X["as"]),
                                      scaled_rows(X["b"], X["bs"]))},
     gpu=dict(m=4096, n=4096, k=4096, BM=128, BN=128, BK=128, warps=8, stages=3),
     interp=dict(m=40, n=36, k=128, BM=16, BN=16, BK=64, warps=4, stages=2), tol=1e-2)


# ---- bf16 x mxfp4 weight -------------------------------------------------------------------

def mxfp4_make(rng, S):
    m, n, k = S["m"], S["n"], S["k"]
    codes = rng.integers(0, 16, (n, k), dtype=np.uint8)
    return {"x": floats(rng, (m, k), "bf16"),
            "w": Buf(codes[:, 0::2] | (codes[:, 1::2] << 4), "u8"),
            "ws": e8m0(rng, (n, k // MX), 120, 126), "y": out((m, n), "bf16")}


def mxfp4_ref(X, S, rows=4096):
    """x @ W^T, W decoded a block of its rows at a time."""
    w, ws = X["w"], X["ws"]
    return {"y": np.concatenate([
        matmul_nt(X["x"], scaled_rows(unpack_k(w[i:i + rows]), ws[i:i + rows]))
        for i in range(0, w.shape[0], rows)], axis=1)}


def mxfp4_case(name, gpu, interp):
    case(name=name, klass="quant-gemm", module="mxfp4_linear.py", kernel="mxfp4_matmul_kernel",
         make=mxfp4_make,
         args=lambda S, b: ["x", "w", "ws", "y", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                            I32(S["k"]), I32(S["k"] // 2), I32(S["k"] // MX), I32(S["n"])],
         consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
         grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])),
         ref=mxfp4_ref,
         gpu=gpu, interp=interp, tol=1e-2)


# decode: a few tokens against a 28672 x 8192 weight; prefill: gpt-oss' 2880 -> 5760 projection
mxfp4_case("mxfp4_bf16_decode",
           gpu=dict(m=16, n=28672, k=8192, BM=16, BN=64, BK=256, warps=4, stages=3),
           interp=dict(m=3, n=40, k=160, BM=16, BN=32, BK=128, warps=4, stages=2))
mxfp4_case("mxfp4_bf16_prefill",
           gpu=dict(m=4096, n=5760, k=2880, BM=128, BN=128, BK=128, warps=8, stages=3),
           interp=dict(m=20, n=40, k=96, BM=16, BN=32, BK=64, warps=4, stages=2))


# ---- GEMV ------------------------------------------------------------------------------------

def gemv_make(split):
    def make(rng, S):
        n, k = S["n"], S["k"]
        return {"w": floats(rng, (n, k), "bf16", 1.0 / np.sqrt(k)), "x": floats(rng, k, "bf16"),
                "y": zeros(n, "f32") if split else out(n, "bf16")}
    return make


def gemv_ref(X, S):
    return {"y": matmul_nt(X["w"], X["x"][None, :], 4096)[:, 0]}


case(name="gemv_bf16_rows", klass="gemv", module="gemv_decode.py", kernel="gemv_kernel",
     make=gemv_make(False),
     args=lambda S, b: ["w", "x", "y", I32(S["n"]), I32(S["k"]), I32(S["k"])],
     consts=lambda S: dict(BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]),), ref=gemv_ref,
     gpu=dict(n=28672, k=4096, BN=32, BK=256, warps=4, stages=3),
     interp=dict(n=50, k=300, BN=16, BK=64, warps=4, stages=2), tol=1e-2)

case(name="gemv_splitk_atomic", klass="gemv", module="gemv_decode.py",
     kernel="gemv_splitk_kernel", make=gemv_make(True),
     args=lambda S, b: ["w", "x", "y", I32(S["n"]), I32(S["k"]), I32(S["k"])],
     consts=lambda S: dict(BLOCK_N=S["BN"], BLOCK_K=S["BK"], SPLIT_K=S["SK"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]), S["SK"]), ref=gemv_ref,
     gpu=dict(n=8192, k=14336, BN=32, BK=256, SK=4, warps=4, stages=3),
     interp=dict(n=50, k=300, BN=16, BK=32, SK=3, warps=4, stages=2), tol=1e-4)


# ---- AWQ GEMM, tl.interleave unpacking --------------------------------------------------------

AWQ_NIBBLE = np.array([0, 4, 1, 5, 2, 6, 3, 7])  # column j of 8 -> its nibble in the int32


def awq_pack(q):
    """int4 values [rows, N] -> int32 [rows, N // 8] in AWQ's order."""
    q = q.reshape(q.shape[0], -1, 8).astype(np.uint32)
    w = np.zeros(q.shape[:2], dtype=np.uint32)
    for j in range(8):
        w |= q[:, :, j] << np.uint32(4 * AWQ_NIBBLE[j])
    return w.view(np.int32)


def awq_unpack(w):
    w = w.astype(np.int64) & 0xFFFFFFFF
    q = np.stack([((w >> (4 * AWQ_NIBBLE[j])) & 15).astype(np.int8) for j in range(8)], axis=2)
    return q.reshape(w.shape[0], -1)


def awq_make(rng, S):
    m, n, k, g = S["m"], S["n"], S["k"], S["g"]
    return {"a": floats(rng, (m, k), "f16"),
            "qw": Buf(awq_pack(rng.integers(0, 16, (k, n), dtype=np.uint8)), "i32"),
            "qz": Buf(awq_pack(rng.integers(0, 16, (k // g, n), dtype=np.uint8)), "i32"),
            "s": Buf(rng.random((k // g, n)) * 0.01 + 0.002, "f16"),
            "c": out((S["SK"], m, n), "f16")}


def awq_ref(X, S):
    k, g, bk, sk = S["k"], S["g"], S["BK"], S["SK"]
    z = np.repeat(awq_unpack(X["qz"]), g, axis=0)
    w = (awq_unpack(X["qw"]) - z) * np.repeat(X["s"], g, axis=0)
    kblk = np.arange(k) // bk
    c = np.stack([X["a"][:, kblk % sk == p] @ w[kblk % sk == p] for p in range(sk)])
    return {"c": c}


def awq_case(name, gpu, interp):
    case(name=name, klass="quant-gemm", module="awq_gemm_interleave.py", kernel="awq_gemm_kernel",
         make=awq_make,
         args=lambda S, b: ["a", "qw", "c", "qz", "s", I32(S["m"]), I32(S["n"]), I32(S["k"]),
                            I32(S["g"])],
         consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"],
                               SPLIT_K=S["SK"]),
         grid=lambda S: (cdiv(S["m"], S["BM"]) * cdiv(S["n"], S["BN"]), S["SK"]), ref=awq_ref,
         gpu=gpu, interp=interp, tol=2e-2)


awq_case("awq_interleave_fp16acc",
         gpu=dict(m=2048, n=4096, k=4096, g=128, BM=64, BN=128, BK=64, SK=1, warps=4, stages=3),
         interp=dict(m=20, n=40, k=64, g=32, BM=16, BN=32, BK=32, SK=1, warps=4, stages=2))
awq_case("awq_interleave_splitk",
         gpu=dict(m=16, n=28672, k=4096, g=128, BM=16, BN=64, BK=128, SK=4, warps=4, stages=3),
         interp=dict(m=5, n=48, k=96, g=32, BM=16, BN=32, BK=32, SK=2, warps=4, stages=2))
