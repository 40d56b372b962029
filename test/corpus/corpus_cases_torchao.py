"""Cases of the low-bit quantisation kernels in torchao_style.py (int8,
bit-packed int4/int2/int1, NF4/FP4, float8 and MX) and their float64 numpy
references; each reference takes (v, c, s) as corpus_refs.py describes."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16
from corpus_cases_quant import _finite_codes, _f32, fp8_encode, fp8_table
from corpus_cases_tkkernels import _i32, _u32
from corpus_cases_vllm import _cdiv, _e4m3_moderate

F = "torchao_style.py"

try:
    import triton.language as _tl
except ImportError:
    _tl = None


class _DtypeName:
    """A dtype constexpr where Triton is not importable: its repr is the
    name tkc -D reads (Triton's own dtypes print the same way)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"triton.language.{self.name}"


def _dt(name):
    return getattr(_tl, name) if _tl is not None else _DtypeName(name)


def _words(rng, n):
    """Random 32-bit words as the int32 values an i32 buffer holds."""
    return _i32(rng.integers(0, 2**32, n))


def _wide(rng, n):
    """Normal values over several binades."""
    return rng.standard_normal(n) * 2.0 ** rng.integers(-3, 4, n)


# NF4 codebook (bitsandbytes' normal-float 4-bit levels)
NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
                -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
                0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0])
NF4_SPLITS = [-0.8480964004993439, -0.6106329262256622, -0.4599952697753906, -0.33967943489551544,
              -0.23460740596055984, -0.13791173323988914, -0.045525018125772476, 0.03979014977812767,
              0.1202552504837513, 0.2035212516784668, 0.2920137718319893, 0.3893125355243683,
              0.5016634166240692, 0.6427869200706482, 0.8614784181118011]
# bitsandbytes' FP4 magnitudes by the three low bits
FP4 = np.array([0.0, 0.005208333333, 0.66666667, 1.0, 0.33333333, 0.5, 0.16666667, 0.25])


# ---- int8 ----------------------------------------------------------------------------------------


def quantize_rowwise(v, c, s):
    x = _f32(v["x_ptr"]).reshape(-1, c["ROW"])
    peak = np.abs(x).max(1)
    q = np.rint(np.float32(127.0) * (x / peak[:, None]))
    return {"q_ptr": q.ravel(), "rowmax_ptr": peak.astype(np.float64)}


def quantize_colwise(v, c, s):
    M, N = s["M"], s["N"]
    x = _f32(v["x_ptr"]).reshape(M, N)
    peak = np.abs(x).max(0)
    q = np.rint((np.float32(127.0) * x) / peak[None, :])
    return {"qt_ptr": q.T.ravel(), "colmax_ptr": peak.astype(np.float64)}


def dequantize_rowwise(v, c, s):
    R = c["ROW"]
    q = v["q_ptr"].reshape(-1, R)
    f = _f32(v["rowmax_ptr"]) * np.float32(1.0 / 127.0)
    return {"out_ptr": (q * f.astype(np.float64)[:, None]).ravel()}


def int8_mm_dequant(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    acc = v["A"].reshape(M, K) @ v["B"].reshape(K, N)
    out = acc * (v["state_w_ptr"][None, :] * (v["state_x_ptr"][:, None] * s["divfactor"]))
    if c["HAS_BIAS"]:
        out = out + v["bias"][None, :]
    return {"C": out.ravel()}


def int_mm(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    return {"c_ptr": (v["a_ptr"].reshape(M, K) @ v["b_ptr"].reshape(K, N)).ravel()}


def int_scaled_mm(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    acc = v["a_ptr"].reshape(M, K) @ v["b_ptr"].reshape(K, N)
    return {"c_ptr": (acc * v["s1_ptr"][:, None]).ravel()}


def weight_only_mm(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    acc = v["a_ptr"].reshape(M, K) @ v["w_ptr"].reshape(K, N)
    return {"c_ptr": (acc * v["scale_ptr"][None, :]).ravel()}


# ---- packed weights ------------------------------------------------------------------------------


def _unpack_k(words, K, bits):
    """(K, N) codes of words packed along K, code j of a word in bits j*bits.."""
    per = 32 // bits
    w = _u32(words).reshape(K // per, -1)
    k = np.arange(K)
    return (w[k // per] >> (bits * (k % per))[:, None]) & ((1 << bits) - 1)


def _dequant(q, sc, z, mode, f16):
    """Group metadata applied as the kernels' modes do (rounded to fp16
    after each step where the metadata dtype is fp16)."""
    r = _f16 if f16 else (lambda x: x)
    if mode == 1:
        return r(q - z)
    if mode == 2:
        return r(q * sc)
    if mode == 3:
        return r(r(q - z) * sc)
    return r(q * sc + z)


def gemm_packed(v, c, s):
    M, N, K, G = s["M"], s["N"], s["K"], c["group_size"]
    q = _unpack_k(v["b_ptr"], K, c["W_nbits"])
    sc = np.repeat(v["scales_ptr"].reshape(K // G, N), G, axis=0)
    z = np.repeat(v["zeros_ptr"].reshape(K // G, N), G, axis=0)
    w = _dequant(q, sc, z, c["W_group_mode"], True)
    return {"c_ptr": (v["a_ptr"].reshape(M, K) @ w).ravel()}


def gemv_revsplitk(v, c, s):
    M, N, K, G = s["M"], s["N"], s["K"], c["group_size"]
    q = _unpack_k(v["b_ptr"], K, c["W_nbits"])
    sc = np.repeat(v["scales_ptr"].reshape(K // G, N), G, axis=0)
    z = np.repeat(v["zeros_ptr"].reshape(K // G, N), G, axis=0)
    w = _dequant(q, sc, z, c["W_group_mode"], False)
    return {"c_ptr": v["c_ptr"] + (v["a_ptr"].reshape(M, K) @ w).ravel()}


def gemv_w1(v, c, s):
    N, K, G = s["N"], s["K"], c["GROUP"]
    k = np.arange(K)
    packed = v["w_ptr"].astype(np.int64).reshape(-1, N)
    q = (packed[k // 8] >> (k % 8)[:, None]) & 1
    sc = v["scales_ptr"].reshape(-1, N)[k // G]
    z = v["zeros_ptr"].reshape(-1, N)[k // G]
    return {"y_ptr": v["x_ptr"] @ (q * sc + z)}


def int4_quant_pack(v, c, s):
    N, G, R = c["N"], c["GROUP"], s["n_rows"]
    x = _f32(v["x_ptr"]).reshape(R, N // G, G)
    lo, hi = x.min(2), x.max(2)
    scale = np.maximum((hi - lo) / np.float32(15.0), np.float32(c["EPS"]))
    zero = np.clip(np.rint(-lo / scale), 0, 15).astype(np.float32)
    q = np.clip(np.rint(x / scale[:, :, None] + zero[:, :, None]), 0, 15).astype(np.int64).reshape(R, N)
    packed = q[:, 0::2] | (q[:, 1::2] << 4)
    return {"packed_ptr": packed.ravel(), "scales_ptr": scale.astype(np.float64).ravel(),
            "zeros_ptr": zero.astype(np.float64).ravel()}


def int4_signed_unpack(v, c, s):
    K, N, G = s["K"], s["N"], c["GROUP"]
    q = _unpack_k(v["w_ptr"], K, 4)
    q = np.where(q >= 8, q - 16, q)
    return {"out_ptr": (q * v["scale_ptr"].reshape(-1, N)[np.arange(K) // G]).ravel()}


def int2_unpack(v, c, s):
    n = s["n_bytes"]
    b = v["packed_ptr"].astype(np.int64)
    codes = (b[:, None] >> (2 * np.arange(4))[None, :]) & 3
    sc = v["scale_ptr"][np.arange(n) // c["ROW_BYTES"]]
    return {"out_ptr": ((codes - 1) * sc[:, None]).ravel()}


# ---- NF4 / FP4 -----------------------------------------------------------------------------------


def _pairs_hi_first(a, lut, absmax):
    first, second = lut(a >> 4) * absmax, lut(a & 0xF) * absmax
    return np.stack([first, second], axis=1).ravel()


def nf4_dequant(v, c, s):
    a = v["a_ptr"].astype(np.int64)
    absmax = v["absmax_ptr"][np.arange(a.size) // (c["QUANT_BLOCK"] // 2)]
    return {"c_ptr": _pairs_hi_first(a, lambda i: v["code_ptr"][i], absmax)[:s["num_output_elements"]]}


def nf4_quantize(v, c, s):
    n, B = s["n_elements"], c["BLOCK_SIZE"]
    nb = v["absmax_ptr"].size
    x = np.zeros(nb * B, dtype=np.float32)
    x[:n] = _f32(v["x_ptr"])
    xb = x.reshape(nb, B)
    absmax = np.abs(xb).max(1)
    with np.errstate(invalid="ignore"):
        u = np.clip(xb / absmax[:, None], -1.0, 1.0)
    code = np.searchsorted(np.array(NF4_SPLITS, dtype=np.float32), u, side="left").ravel()
    packed = (code[0::2] << 4) | code[1::2]
    return {"absmax_ptr": absmax.astype(np.float64), "out_ptr": packed[:n - n // 2]}


def fp4_dequant(v, c, s):
    a = v["a_ptr"].astype(np.int64)
    absmax = v["absmax_ptr"][np.arange(a.size) // (c["QUANT_BLOCK"] // 2)]

    def lut(i):
        return FP4[i & 7] * np.where(i & 8, -1.0, 1.0)
    return {"c_ptr": _pairs_hi_first(a, lut, absmax)[:s["num_output_elements"]]}


# ---- float8 ----------------------------------------------------------------------------------------


def amax_atomic(v, c, s):
    n = s["n_cols"]
    x = np.abs(v["x_ptr"].reshape(-1, s["stride_row"])[:, :n])
    return {"amax_ptr": np.maximum(v["amax_ptr"], x.max()), "row_amax_ptr": np.maximum(v["row_amax_ptr"], x.max(1))}


def _fp8_max(e5m2):
    return np.float32(57344.0 if e5m2 else 448.0)


def fp8_tensorwise(v, c, s):
    e5 = "float8e5" in repr(c["OUT_DTYPE"])
    hi = _fp8_max(e5)
    scale = hi / np.maximum(_f32(v["amax_ptr"][0]), np.float32(c["EPS"]))
    y = np.clip(_f32(v["x_ptr"]) * scale, -hi, hi).astype(np.float64)
    return {"q_ptr": fp8_encode(y, e5), "scale_inv_ptr": np.array([np.float32(1.0) / scale], dtype=np.float64)}


def fp8_rowwise(v, c, s):
    R, n, e5 = s["n_rows"], s["n_cols"], c["USE_E5M2"]
    x = _f32(v["x_ptr"]).reshape(R, s["stride_xm"])[:, :n]
    hi = _fp8_max(e5)
    scale = hi / np.maximum(np.abs(x).max(1), np.float32(c["EPS"]))
    y = np.clip(x * scale[:, None], -hi, hi).astype(np.float64)
    return {"q_ptr": fp8_encode(y, e5).ravel(), "scale_ptr": (np.float32(1.0) / scale).astype(np.float64)}


def fp8_act_quant(v, c, s):
    B = c["BLOCK_SIZE"]
    x = _f32(v["x_ptr"]).reshape(-1, B)
    sc = np.abs(x).max(1) / np.float32(448.0)
    y = np.clip(x / sc[:, None], -448.0, 448.0).astype(np.float64)
    return {"y_ptr": fp8_encode(y, False).ravel(), "s_ptr": sc.astype(np.float64)}


def _tiles(M, N, B):
    for i in range(_cdiv(M, B)):
        for j in range(_cdiv(N, B)):
            yield i * _cdiv(N, B) + j, slice(i * B, (i + 1) * B), slice(j * B, (j + 1) * B)


def fp8_weight_quant(v, c, s):
    M, N, B = s["M"], s["N"], c["BLOCK_SIZE"]
    x = _f32(v["x_ptr"]).reshape(M, N)
    y = np.zeros((M, N), dtype=np.int64)
    sc = np.zeros(_cdiv(M, B) * _cdiv(N, B))
    for t, rs, cs in _tiles(M, N, B):
        st = np.abs(x[rs, cs]).max() / np.float32(448.0)
        sc[t] = st
        y[rs, cs] = fp8_encode(np.clip(x[rs, cs] / st, -448.0, 448.0).astype(np.float64), False)
    return {"y_ptr": y.ravel(), "s_ptr": sc}


def fp8_weight_dequant(v, c, s):
    M, N, B = s["M"], s["N"], c["BLOCK_SIZE"]
    q = fp8_table(False)[v["q_ptr"].astype(np.int64)].reshape(M, N)
    for t, rs, cs in _tiles(M, N, B):
        q[rs, cs] *= v["s_ptr"][t]
    return {"y_ptr": q.ravel()}


def fp8_block_gemm(v, c, s):
    M, N, K, BK, BN = s["M"], s["N"], c["K"], c["BLOCK_SIZE_K"], c["BLOCK_SIZE_N"]
    t = fp8_table(False)
    a = t[v["a_ptr"].astype(np.int64)].reshape(M, K)
    b = t[v["b_ptr"].astype(np.int64)].reshape(N, K)
    kb = _cdiv(K, BK)
    a_s = v["a_s_ptr"].reshape(M, kb)
    b_s = v["b_s_ptr"].reshape(-1, kb)[np.arange(N) // BN]
    out = np.zeros((M, N))
    for i in range(kb):
        ks = slice(i * BK, (i + 1) * BK)
        out += (a[:, ks] @ b[:, ks].T) * a_s[:, i][:, None] * b_s[:, i][None, :]
    return {"c_ptr": out.ravel()}


def mxfp8_quant(v, c, s):
    R, n, IN = s["n_rows"], s["n_cols"], c["INNER"]
    x = _f32(v["x_ptr"]).reshape(R, n // IN, IN)
    amax = np.abs(x).max(2)
    _, e = np.frexp(amax)
    shared = np.clip(e - 1 - 8, -127, 127)
    y = np.clip(x / np.ldexp(1.0, shared)[:, :, None], -448.0, 448.0)
    return {"q_ptr": fp8_encode(y.astype(np.float64), False).ravel(), "e8m0_ptr": (shared + 127).ravel()}


def splitk_gemm(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    return {"c_ptr": v["c_ptr"] + (v["a_ptr"].reshape(M, K) @ v["b_ptr"].reshape(K, N)).ravel()}


# ---- cases ----------------------------------------------------------------------------------


def _int8_cases():
    out = []
    add = out.append
    R, ROW = 5, 100
    add(Case("tao quantize rowwise int8 (llrint, padded row)", F, "_tao_quantize_rowwise", (R,),
             [Buf("x_ptr", "fp32", R * ROW), Out("q_ptr", "i8", R * ROW), Out("rowmax_ptr", "fp16", R),
              Scalar("n_elements", R * ROW)], {"ROW": ROW, "ROW_P2": 128}, ref=quantize_rowwise))
    M, N = 37, 20
    add(Case("tao quantize columnwise int8 transposed (cuda libdevice rint)", F,
             "_tao_quantize_colwise_transpose", (N,),
             [Buf("x_ptr", "fp32", M * N), Out("qt_ptr", "i8", M * N), Out("colmax_ptr", "fp32", N),
              Scalar("M", M), Scalar("N", N)], {"BLOCK_M": 64}, ref=quantize_colwise))
    add(Case("tao dequantize rowwise int8 to fp16", F, "_tao_dequantize_rowwise", (R,),
             [Buf("q_ptr", "i8", R * ROW, ("randint", -127, 128)), Buf("rowmax_ptr", "fp16", R, "rand", scale=4.0),
              Out("out_ptr", "fp16", R * ROW), Scalar("n_rows", R)], {"ROW": ROW, "ROW_P2": 128},
             ref=dequantize_rowwise))
    M, N = 40, 48
    for K, split, bias in ((64, 1, True), (80, 2, False), (72, 3, True)):
        even = K % (32 * split) == 0
        add(Case(f"tao int8 matmul rowwise dequant K={K} split {split}{' bias' if bias else ''}", F,
                 "_tao_int8_mm_rowwise_dequant", (_cdiv(M, 16) * _cdiv(N, 32), split),
                 [Buf("A", "i8", M * K, ("randint", -127, 128)), Buf("B", "i8", K * N, ("randint", -127, 128)),
                  Buf("C", "fp32", M * N, "zeros", out=True), Buf("bias", "fp32", N),
                  Buf("state_x_ptr", "fp32", M, "rand", scale=5.0), Buf("state_w_ptr", "fp32", N, "rand", scale=2.0),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("divfactor", 1.0 / (127.0 * 127.0), "fp32"),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bk", N), Scalar("stride_bn", 1),
                  Scalar("stride_cm", N), Scalar("stride_cn", 1)],
                 {"HAS_BIAS": bias, "BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "SPLIT_K": split,
                  "EVEN_K": even}, ref=int8_mm_dequant))
    M, N, K = 40, 40, 48
    add(Case("tao int8 matmul block pointers int32 (rebound GROUP_M)", F, "_tao_int_mm_block_ptr",
             (_cdiv(M, 16) * _cdiv(N, 16),),
             [Buf("a_ptr", "i8", M * K, ("randint", -127, 128)), Buf("b_ptr", "i8", K * N, ("randint", -127, 128)),
              Out("c_ptr", "i32", M * N), Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_am", K),
              Scalar("stride_ak", 1), Scalar("stride_bk", N), Scalar("stride_bn", 1), Scalar("stride_cm", N),
              Scalar("stride_cn", 1)], {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32, "GROUP_M": 4},
             ref=int_mm))
    M, N = 33, 40
    for K, even in ((72, False), (64, True)):
        add(Case(f"tao int8 scaled matmul K downwards K={K}", F, "_tao_int_scaled_mm",
                 (_cdiv(M, 16) * _cdiv(N, 32),),
                 [Buf("a_ptr", "i8", M * K, ("randint", -127, 128)), Buf("b_ptr", "i8", K * N, ("randint", -127, 128)),
                  Out("c_ptr", "fp32", M * N), Buf("s1_ptr", "fp32", M, "rand", scale=0.01), Scalar("M", M),
                  Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1),
                  Scalar("stride_bk", N), Scalar("stride_bn", 1), Scalar("stride_cm", N), Scalar("stride_cn", 1),
                  Scalar("stride_s1m", 1)],
                 {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "EVEN_K": even}, ref=int_scaled_mm))
    M, N, K = 20, 40, 48
    add(Case("tao int8 weight-only matmul bf16", F, "_tao_int8_weight_only_mm", (_cdiv(M, 16), _cdiv(N, 32)),
             [Buf("a_ptr", "bf16", M * K), Buf("w_ptr", "i8", K * N, ("randint", -127, 128)),
              Buf("scale_ptr", "fp32", N, "rand", scale=0.02), Out("c_ptr", "bf16", M * N), Scalar("M", M),
              Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_wk", N), Scalar("stride_cm", N)],
             {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}, ref=weight_only_mm))
    return out


def _packed_cases():
    out = []
    add = out.append
    M, N, K, G = 20, 64, 128, 32
    f16, f32 = _dt("float16"), _dt("float32")
    for bits, mode, acc, odt in ((4, 3, f32, "fp16"), (2, 4, f32, "fp16"), (8, 2, f32, "fp16"),
                                 (4, 1, f16, "bf16")):
        per = 32 // bits
        add(Case(f"tao gemm W{bits}A16 int32 packed mode {mode}{' fp16 acc, bf16 out' if acc is f16 else ''}", F,
                 "_tao_gemm_packed_int32",
                 (_cdiv(M, 16) * _cdiv(N, 32),),
                 [Buf("a_ptr", "fp16", M * K, scale=0.25 if mode == 1 else 1.0), Buf("b_ptr", "i32", K // per * N, _words),
                  Out("c_ptr", odt, M * N),
                  Buf("scales_ptr", "fp16", K // G * N, "rand", scale=0.1 * 2 ** (4 - bits) if bits < 8 else 0.004),
                  Buf("zeros_ptr", "fp16", K // G * N, "rand", scale=(1 << bits) - 1), Scalar("M", M),
                  Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1),
                  Scalar("stride_bk", N), Scalar("stride_bn", 1), Scalar("stride_cm", N), Scalar("stride_cn", 1),
                  Scalar("stride_meta_g", N), Scalar("stride_meta_n", 1)],
                 {"W_nbits": bits, "group_size": G, "unpack_mask": (1 << bits) - 1, "elements_per_sample": per,
                  "input_dtype": f16, "output_dtype": _dt("bfloat16" if odt == "bf16" else "float16"),
                  "acc_dtype": acc, "meta_dtype": f16,
                  "W_group_mode": mode, "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32,
                  "GROUP_SIZE_M": 2}, tol={"fp16": (2e-2, 1e-2), "bf16": (5e-2, 3e-2)}, ref=gemm_packed))
    M, N, K, G = 2, 64, 128, 64
    for bits, mode, dump, sem in ((4, 3, 0, "relaxed"), (8, 1, 0.001, "release")):
        per = 32 // bits
        add(Case(f"tao gemv revsplitK W{bits} mode {mode}{' scaled' if dump else ''}", F, "_tao_gemv_revsplitk",
                 (M * N // 32, K // 64),
                 [Buf("a_ptr", "fp16", M * K), Buf("b_ptr", "i32", K // per * N, _words),
                  Buf("c_ptr", "fp32", M * N, "zeros", out=True),
                  Buf("scales_ptr", "fp32", K // G * N, "rand", scale=0.05),
                  Buf("zeros_ptr", "fp32", K // G * N, "rand", scale=(1 << bits) - 1), Scalar("M", M),
                  Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1),
                  Scalar("stride_bk", N), Scalar("stride_bn", 1), Scalar("stride_cm", N), Scalar("stride_cn", 1),
                  Scalar("stride_meta_g", N), Scalar("stride_meta_n", 1)],
                 {"W_nbits": bits, "group_size": G, "unpack_mask": (1 << bits) - 1, "elements_per_sample": per,
                  "input_dtype": f16, "acc_dtype": f32, "meta_dtype": f32, "W_group_mode": mode,
                  "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "dump_b_val": dump, "atomic_mode": sem},
                 tol={"fp32": (1e-3, 1e-4)}, ref=gemv_revsplitk))
    N, K, G = 40, 100, 32
    add(Case("tao gemv W1 uint8 fma metadata int64 offsets", F, "_tao_gemv_w1_uint8", (_cdiv(N, 16),),
             [Buf("x_ptr", "fp16", K), Buf("w_ptr", "u8", _cdiv(K, 8) * N, ("randint", 0, 256)),
              Buf("scales_ptr", "fp32", _cdiv(K, G) * N, "rand", scale=0.1),
              Buf("zeros_ptr", "fp32", _cdiv(K, G) * N, scale=0.05), Out("y_ptr", "fp16", N), Scalar("N", N),
              Scalar("K", K), Scalar("stride_wk", N), Scalar("stride_meta_g", N)],
             {"GROUP": G, "BLOCK_N": 16, "BLOCK_K": 32}, ref=gemv_w1))
    R, N, G = 10, 64, 32
    add(Case("tao int4 asymmetric group quant packed in uint8", F, "_tao_int4_quant_pack", (_cdiv(R, 4),),
             [Buf("x_ptr", "fp32", R * N), Out("packed_ptr", "u8", R * N // 2), Out("scales_ptr", "fp32", R * N // G),
              Out("zeros_ptr", "fp32", R * N // G), Scalar("n_rows", R)],
             {"N": N, "GROUP": G, "ROWS": 4, "EPS": 1e-6}, ref=int4_quant_pack))
    K, N, G = 72, 40, 24
    add(Case("tao signed int4 from int32 words (arithmetic shifts)", F, "_tao_int4_signed_unpack",
             (_cdiv(K, 32), _cdiv(N, 32)),
             [Buf("w_ptr", "i32", K // 8 * N, _words), Buf("scale_ptr", "fp32", K // G * N, "rand"),
              Out("out_ptr", "fp16", K * N), Scalar("K", K), Scalar("N", N), Scalar("stride_wk", N)],
             {"GROUP": G, "BLOCK_K": 32, "BLOCK_N": 32}, ref=int4_signed_unpack))
    n = 150
    add(Case("tao int2 codes unpacked against a shift vector", F, "_tao_int2_unpack_broadcast", (_cdiv(n, 64),),
             [Buf("packed_ptr", "u8", n, ("randint", 0, 256)), Buf("scale_ptr", "fp32", _cdiv(n, 16), "rand"),
              Out("out_ptr", "fp32", 4 * n), Scalar("n_bytes", n)], {"ROW_BYTES": 16, "BLOCK": 64},
             ref=int2_unpack))
    return out


def _nf4_cases():
    out = []
    add = out.append
    n, QB = 200, 64
    add(Case("tao nf4 dequant through a codebook table, bf16 out", F, "_tao_nf4_dequant_codebook", (_cdiv(n, 64),),
             [Buf("a_ptr", "u8", n, ("randint", 0, 256)), Out("c_ptr", "bf16", 2 * n),
              Buf("code_ptr", "fp32", 16, lambda rng, k: NF4), Buf("absmax_ptr", "fp32", _cdiv(n, QB // 2), "rand"),
              Scalar("num_paired_elements", n), Scalar("num_output_elements", 2 * n)],
             {"QUANT_BLOCK": QB, "SPLIT_SIZE": 64}, ref=nf4_dequant))
    n = 700
    add(Case("tao nf4 quantize by comparison tree, ragged tail", F, "_tao_nf4_quantize_tree", (3,),
             [Buf("x_ptr", "fp32", n), Out("absmax_ptr", "fp32", 12), Out("out_ptr", "u8", n - n // 2),
              Scalar("n_elements", n)], {"BLOCK_SIZE": 64, "SPLIT_NUM_BLOCKS": 2}, ref=nf4_quantize))
    n = 200
    add(Case("tao fp4 dequant by bit tree", F, "_tao_fp4_dequant", (_cdiv(n, 64),),
             [Buf("a_ptr", "u8", n, ("randint", 0, 256)), Out("c_ptr", "fp32", 2 * n - 3),
              Buf("absmax_ptr", "fp32", _cdiv(n, 32), "rand"), Scalar("num_paired_elements", n),
              Scalar("num_output_elements", 2 * n - 3)], {"QUANT_BLOCK": 64, "SPLIT_SIZE": 64}, ref=fp4_dequant))
    return out


def _fp8_cases():
    out = []
    add = out.append
    R, n, W = 6, 300, 304
    for dt, sem in (("fp16", "relaxed"), ("bf16", "acq_rel")):
        add(Case(f"tao amax with float atomic max {dt} {sem}", F, "_tao_amax_atomic", (R, 2),
                 [Buf("x_ptr", dt, R * W, scale=3.0), Buf("amax_ptr", "fp32", 1, "zeros", out=True),
                  Buf("row_amax_ptr", "fp32", R, "zeros", out=True), Scalar("n_cols", n), Scalar("stride_row", W)],
                 {"BLOCK": 64, "SEM": sem}, ref=amax_atomic))
    n = 1000
    for fmt in ("float8e4nv", "float8e5"):
        add(Case(f"tao fp8 tensorwise cast {fmt}", F, "_tao_fp8_tensorwise_cast", (_cdiv(n, 256),),
                 [Buf("x_ptr", "fp32", n, scale=2.0), Buf("amax_ptr", "fp32", 1, ("fill", 3.0)),
                  Out("q_ptr", "u8", n), Out("scale_inv_ptr", "fp32", 1), Scalar("n_elements", n)],
                 {"OUT_DTYPE": _dt(fmt), "EPS": 1e-12, "BLOCK": 256}, ref=fp8_tensorwise))
    R, n, W = 7, 200, 208
    for e5 in (False, True):
        add(Case(f"tao fp8 rowwise quant bf16 {'e5m2' if e5 else 'e4m3'}", F, "_tao_fp8_rowwise_quant", (R,),
                 [Buf("x_ptr", "bf16", R * W, _wide), Out("q_ptr", "u8", R * n), Out("scale_ptr", "fp32", R),
                  Scalar("n_rows", R), Scalar("n_cols", n), Scalar("stride_xm", W), Scalar("stride_qm", n)],
                 {"USE_E5M2": e5, "EPS": 1e-12, "BLOCK_N": 64}, ref=fp8_rowwise))
    n = 512
    add(Case("tao fp8 blockwise activation quant (pointer element type)", F, "_tao_fp8_blockwise_act_quant",
             (n // 128,),
             [Buf("x_ptr", "fp32", n, _wide), Out("y_ptr", "u8", n), Out("s_ptr", "fp32", n // 128)],
             {"BLOCK_SIZE": 128}, ref=fp8_act_quant))
    M, N, B = 40, 50, 16
    nt = _cdiv(M, B) * _cdiv(N, B)
    add(Case("tao fp8 blockwise weight quant, ragged tiles", F, "_tao_fp8_weight_quant", (_cdiv(M, B), _cdiv(N, B)),
             [Buf("x_ptr", "fp32", M * N, _wide), Out("y_ptr", "u8", M * N), Out("s_ptr", "fp32", nt),
              Scalar("M", M), Scalar("N", N)], {"BLOCK_SIZE": B}, ref=fp8_weight_quant))
    add(Case("tao fp8 blockwise weight dequant", F, "_tao_fp8_weight_dequant", (_cdiv(M, B), _cdiv(N, B)),
             [Buf("q_ptr", "u8", M * N, _finite_codes(False)), Buf("s_ptr", "fp32", nt, "rand"),
              Out("y_ptr", "fp32", M * N), Scalar("M", M), Scalar("N", N)], {"BLOCK_SIZE": B},
             ref=fp8_weight_dequant))
    M, N, K = 40, 64, 96
    add(Case("tao fp8 block-scaled gemm", F, "_tao_fp8_block_gemm", (_cdiv(M, 16), _cdiv(N, 32)),
             [Buf("a_ptr", "u8", M * K, _e4m3_moderate), Buf("b_ptr", "u8", N * K, _e4m3_moderate),
              Out("c_ptr", "fp32", M * N), Buf("a_s_ptr", "fp32", M * 3, "rand"),
              Buf("b_s_ptr", "fp32", 2 * 3, "rand"), Scalar("M", M), Scalar("N", N)],
             {"K": K, "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32}, ref=fp8_block_gemm))
    R, n = 10, 64
    add(Case("tao mxfp8 quant with e8m0 exponents", F, "_tao_mxfp8_quant", (_cdiv(R, 4),),
             [Buf("x_ptr", "fp32", R * n, _wide), Out("q_ptr", "u8", R * n), Out("e8m0_ptr", "u8", R * n // 32),
              Scalar("n_rows", R), Scalar("n_cols", n)], {"ROW_TILE": 4, "INNER": 32, "COLS": 64},
             ref=mxfp8_quant))
    M, N, K = 20, 48, 100
    add(Case("tao split-K fp16 gemm with atomic add", F, "_tao_splitk_gemm", (_cdiv(M, 16) * _cdiv(N, 32), 2),
             [Buf("a_ptr", "fp16", M * K), Buf("b_ptr", "fp16", K * N), Buf("c_ptr", "fp32", M * N, "zeros", out=True),
              Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_bk", N),
              Scalar("stride_cm", N)], {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "SPLIT_K": 2},
             tol={"fp32": (1e-3, 1e-3)}, ref=splitk_gemm))
    return out


def cases():
    return _int8_cases() + _packed_cases() + _nf4_cases() + _fp8_cases()
