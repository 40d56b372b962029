"""Cases of the low-bit GEMM kernels in quant_gemm_style.py (GPTQ, AWQ,
HQQ, gemlite-style split-K, decode GEMVs, W4A8, bitsandbytes int8 / 8-bit
blockwise / NF4 / FP4, weight-only fused MoE, W8A16 split-K) with their
float64 numpy references; each reference takes (v, c, s) as corpus_refs.py
describes. Every case name starts with "qg "."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16
from corpus_cases_quant import _f32
from corpus_cases_tkkernels import _u32
from corpus_cases_torchao import _dt, _words

F = "quant_gemm_style.py"

NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
                -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
                0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0])
_FP4_MAG = np.array([0.0, 0.005208333333, 0.66666667, 1.0, 0.33333333, 0.5, 0.16666667, 0.25])
FP4 = np.concatenate([_FP4_MAG, -_FP4_MAG])


def _cdiv(a, b):
    return -(-a // b)


def _round(dt):
    return {"fp16": _f16, "bf16": _bf16, "fp32": _f32}[dt]


def _positive(lo, width):
    return lambda rng, n: lo + width * rng.random(n)


def _fixed(arr):
    arr = np.asarray(arr)
    return lambda rng, n: arr[:n].astype(np.float64) if arr.dtype.kind == "f" else arr[:n].astype(np.int64)


def _unpack_k(words, bits, K):
    """Codes W[K, N] from words[cdiv(K, per), N] packed along K (code k at bit (k % per) * bits)."""
    per = 32 // bits
    w = _u32(words)
    k = np.arange(K)
    return (w[k // per] >> ((k % per) * bits)[:, None]) & ((1 << bits) - 1)


def _unpack_n(words, bits, N):
    """Codes [R, N] from words[R, cdiv(N, per)] packed along N."""
    per = 32 // bits
    w = _u32(words)
    n = np.arange(N)
    return (w[:, n // per] >> ((n % per) * bits)[None, :]) & ((1 << bits) - 1)


_AWQ_REV = np.array([0, 4, 1, 5, 2, 6, 3, 7])


def _unpack_awq(words, N):
    """AWQ words [R, N // 8] -> codes [R, N]: column j of a word is nibble _AWQ_REV[j % 8]."""
    w = _u32(words)
    n = np.arange(N)
    return (w[:, n // 8] >> (_AWQ_REV[n % 8] * 4)[None, :]) & 0xF


def _act_order(G):
    """GPTQ act-order g_idx: every group has G rows, in shuffled order."""
    return lambda rng, n: rng.permutation(n) // G


def _sequential(G):
    return lambda rng, n: np.arange(n) // G


def _int8(rng, n):
    return rng.integers(-127, 128, n)


def _sorted_code(rng, n):
    """A sorted 8-bit code over [-1, 1], denser near zero, with 0 and both ends."""
    t = np.linspace(-1.0, 1.0, n)
    c = np.sign(t) * np.abs(t) ** 2
    c[n // 2] = 0.0
    return np.unique(c.astype(np.float32)).astype(np.float64)[:n]


# ---- references ------------------------------------------------------------------------------


def gptq_matmul(bits):
    def ref(v, c, s):
        M, N, K = s["M"], s["N"], s["K"]
        per = 32 // bits
        q = _unpack_k(v["b_ptr"].reshape(-1, N), bits, K)
        z = _unpack_n(v["zeros_ptr"].reshape(-1, s["stride_zeros"]), bits, N) + 1
        g = v["g_ptr"].astype(np.int64)
        sc = v["scales_ptr"].reshape(-1, N)
        W = _f16((q - z[g]) * sc[g])
        assert v["b_ptr"].size == K // per * N
        return {"c_ptr": _f16(v["a_ptr"].reshape(M, K) @ W).ravel()}
    return ref


def gptq_dequant(v, c, s):
    bits, N, G = c["bits"], c["outfeatures"], c["num_groups"]
    K = s["numels"] // N
    q = _unpack_k(v["qweight_ptr"].reshape(-1, N), bits, K)
    z = _unpack_n(v["qzeros_ptr"].reshape(G, -1), bits, N) + 1
    g = v["g_idx_ptr"].astype(np.int64)
    g = np.where(g < 0, g + G, g)
    sc = v["scales_ptr"].reshape(G, N)
    return {"out_ptr": _f16((q - z[g]) * sc[g]).ravel()}


def awq_gemm(v, c, s):
    M, N, K, G = s["M"], s["N"], s["K"], s["group_size"]
    BK, SK = c["BLOCK_SIZE_K"], c["SPLIT_K"]
    q = _unpack_awq(v["b_ptr"].reshape(K, N // 8), N)
    z = _unpack_awq(v["zeros_ptr"].reshape(K // G, N // 8), N)
    sc = v["scales_ptr"].reshape(K // G, N)
    k = np.arange(K)
    W = _f16((q - z[k // G]) * sc[k // G])
    A = v["a_ptr"].reshape(M, K)
    out = np.zeros((SK, M, N))
    for kb in range(_cdiv(K, BK)):
        lo, hi = kb * BK, min(K, (kb + 1) * BK)
        z_ = kb % SK
        out[z_] = _f16(out[z_] + A[:, lo:hi] @ W[lo:hi])
    return {"c_ptr": out.ravel()}


def awq_dequant(v, c, s):
    nc, K, G = s["num_cols"], s["num_rows"], s["group_size"]
    N = nc * 8
    q = _unpack_awq(v["qweight_ptr"].reshape(K, nc), N)
    k = np.arange(K)
    z = _unpack_awq(v["zeros_ptr"].reshape(-1, nc), N)[k // G]
    sc = v["scales_ptr"].reshape(-1, N)[k // G]
    return {"result_ptr": _f16((q - z) * sc).ravel()}


def hqq_matmul(dt):
    r = _round(dt)

    def ref(v, c, s):
        M, N, K, G = s["M"], s["N"], s["K"], c["QGROUP_SIZE"]
        p = v["b_ptr"].astype(np.int64).reshape(K // 2, N)
        q = np.concatenate([p >> 4, p & 0xF])
        g = np.arange(K) // G
        sc = v["scales_ptr"].reshape(-1, N)[g]
        z = v["zeros_ptr"].reshape(-1, N)[g]
        W = r(r(q - z) * sc)
        return {"c_ptr": r(v["a_ptr"].reshape(M, K) @ W).ravel()}
    return ref


def splitk_int(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    bits, G, mode, cmode = c["W_nbits"], c["group_size"], c["W_group_mode"], c["channel_scale_mode"]
    names = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
    odt = names[repr(c["output_dtype"]).rsplit(".", 1)[-1]]
    mdt = names[repr(c["meta_dtype"]).rsplit(".", 1)[-1]]
    r = _round(mdt)
    q = _unpack_k(v["b_ptr"].reshape(-1, N), bits, K)
    g = np.arange(K) // G
    if c["zero_is_scalar"]:
        z = np.full((K, N), v["zeros_ptr"][0])
    elif mode in (1, 3, 4):
        z = v["zeros_ptr"].reshape(-1, N)[g]
    if mode >= 2:
        sc = v["scales_ptr"].reshape(-1, N)[g]
    if mode == 1:
        W = r(q - z)
    elif mode == 2:
        W = r(q * sc)
    elif mode == 3:
        W = r(r(q - z) * sc)
    else:
        W = r(q * sc + z)
    A = v["a_ptr"].reshape(M, K)
    BK, SK = c["BLOCK_SIZE_K"], c["SPLIT_K"]
    total = np.zeros((M, N))
    for part in range(SK):
        ks = np.concatenate([np.arange(kb * BK, (kb + 1) * BK) for kb in range(part, K // BK, SK)])
        acc = A[:, ks] @ W[ks]
        if cmode == 1:
            acc = r(r(acc) * v["scales_ptr"][:N][None, :])
        elif cmode == 2:
            acc = r(r(acc) * v["scales_a_ptr"][:M][:, None])
        elif cmode == 3:
            acc = r(r(acc) * r(v["scales_a_ptr"][:M][:, None] * v["scales_ptr"][:N][None, :]))
        total += _round(odt)(acc)
    base = v["c_ptr"] if c["SPLIT_K"] > 1 else 0.0
    return {"c_ptr": base + total.ravel()}


def w3_bitplanes(v, c, s):
    M, N, K, G = s["M"], s["N"], s["K"], c["group_size"]
    lo = _unpack_k(v["b_1_ptr"].reshape(-1, N), 1, K)
    hi = _unpack_k(v["b_2_ptr"].reshape(-1, N), 2, K)
    g = np.arange(K) // G
    W = _f16(_f16((hi << 1 | lo) - v["zeros_ptr"].reshape(-1, N)[g]) * v["scales_ptr"].reshape(-1, N)[g])
    acc = v["a_ptr"].reshape(M, K) @ W
    return {"c_ptr": _f16(acc).ravel()}


def w4a16_gemv(v, c, s):
    M, N, K, G = s["M"], s["N"], s["K"], c["group_size"]
    q = _unpack_k(v["qweight_ptr"].reshape(-1, N), 4, K)
    g = np.arange(K) // G
    W = (q - v["zeros_ptr"].reshape(-1, N)[g]) * v["scales_ptr"].reshape(-1, N)[g]
    return {"y_ptr": _f16(v["x_ptr"].reshape(M, K) @ W).ravel()}


def w4a8(dt):
    def ref(v, c, s):
        M, N, K = s["M"], s["N"], s["K"]
        q = _unpack_k(v["b_ptr"].reshape(-1, N), 4, K)
        q = np.where(q >= 8, q - 16, q)
        acc = v["a_ptr"].reshape(M, K) @ q
        return {"c_ptr": _round(dt)(acc * v["a_scale_ptr"][:, None] * v["b_scale_ptr"][None, :]).ravel()}
    return ref


def int8_vectorwise(v, c, s):
    n, thr = s["n_cols"], s["threshold"]
    x = v["x_ptr"].reshape(-1, n).astype(np.float32)
    out_cols = v["outlier_cols_ptr"].copy()
    if thr > 0:
        outl = np.abs(x) >= np.float32(thr)
        out_cols[outl.any(0)] = np.maximum(out_cols[outl.any(0)], 1)
        x = np.where(outl, np.float32(0), x)
    absmax = np.abs(x).max(1)
    scale = (np.float32(127.0) / absmax).astype(np.float32)
    q = np.rint((x * scale[:, None]).astype(np.float32))
    return {"q_ptr": q.ravel(), "row_stats_ptr": absmax.astype(np.float64),
            "outlier_cols_ptr": out_cols}


def int8_mixed(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    acc = v["A"].reshape(M, K) @ v["B"].reshape(K, N)
    val = _f16(v["state_w_ptr"][0] * (v["state_x_ptr"][:, None] * (acc * s["divfactor"])))
    if c["has_bias"]:
        val = _f16(val + v["bias"][None, :])
    return {"C": val.ravel()}


def blockwise_8bit(v, c, s):
    n, BS = s["n_elements"], c["BLOCK_SIZE"]
    nb = s["n_blocks"]
    a = np.zeros(nb * BS, dtype=np.float32)
    a[:n] = v["A_ptr"]
    a = a.reshape(nb, BS)
    absmax = np.abs(a).max(1)
    norm = np.clip((a / absmax[:, None]).astype(np.float32), np.float32(-1), np.float32(1))
    code = v["code_ptr"].astype(np.float32)
    lo = np.zeros(norm.shape, dtype=np.int64)
    hi = np.full(norm.shape, c["CODE_SIZE"] - 1, dtype=np.int64)
    for _ in range(c["SEARCH_STEPS"]):
        piv = (lo + hi) // 2
        higher = norm > code[piv]
        lo = np.where(higher, piv, lo)
        hi = np.where(higher, hi, piv)
    ld = np.abs(norm - code[lo])
    ud = np.abs(norm - code[hi])
    q = np.where(ld <= ud, lo, hi)
    return {"out_ptr": q.ravel()[:n], "absmax_ptr": absmax.astype(np.float64)}


def nf4_gather(dt):
    def ref(v, c, s):
        n_out, QB, NB = s["num_output_elements"], c["QUANT_BLOCK"], c["NESTED_BLOCK"]
        p = v["a_ptr"].astype(np.int64)
        nib = np.stack([p >> 4, p & 0xF], 1).ravel()[:n_out]
        blk = np.arange(n_out) // QB
        absmax = _f32(_f32(v["code2_ptr"][v["absmax_q_ptr"].astype(np.int64)[blk]] * v["absmax2_ptr"][blk // NB])
                      + s["offset"])
        out = v["c_ptr"].copy()
        out[:n_out] = _round(dt)(v["code_ptr"][nib] * absmax)
        return {"c_ptr": out}
    return ref


def gemv_4bit(v, c, s):
    N, K, QB = s["N"], s["K"], c["QUANT_BLOCK"]
    p = v["w_ptr"].astype(np.int64)
    nib = np.stack([p >> 4, p & 0xF], 1).ravel()
    tab = NF4 if c["IS_NF4"] else FP4
    W = (_f32(tab)[nib] * v["absmax_ptr"][np.arange(N * K) // QB]).reshape(N, K)
    x = v["x_ptr"].reshape(-1, K)
    return {"out_ptr": _bf16(x @ W.T).ravel()}


def w8a16_splitk(dt):
    def ref(v, c, s):
        M, N, K = s["M"], s["N"], s["K"]
        acc = (v["a_ptr"].reshape(M, K) @ v["w_ptr"].reshape(K, N)) * v["scale_ptr"][None, :]
        return {"c_ptr": v["c_ptr"] + acc.ravel()}
    return ref


def gptq_transpose(v, c, s):
    M, N, K, bits = s["M"], s["N"], s["K"], s["bits"]
    q = _unpack_k(v["b_ptr"].reshape(-1, N), bits, K)
    z = _unpack_n(v["zeros_ptr"].reshape(-1, s["stride_zeros"]), bits, N) + 1
    g = v["g_ptr"].astype(np.int64)
    W = _f16((q - z[g]) * v["scales_ptr"].reshape(-1, N)[g])
    return {"c_ptr": _f16(v["a_ptr"].reshape(M, N) @ W.T).ravel()}


def _moe_routing(M, topk, E, BM, seed):
    """(topk ids [M * topk], sorted_token_ids, expert_ids, tokens post padded)
    as the alignment step makes them, plus one trailing block of padding."""
    rs = np.random.RandomState(seed)
    ids = np.stack([rs.choice(E, topk, replace=False) for _ in range(M)]).ravel()
    T = M * topk
    sorted_ids, blocks = [], []
    for e in range(E):
        idx = np.flatnonzero(ids == e)
        if idx.size == 0:
            continue
        pad = _cdiv(idx.size, BM) * BM
        sorted_ids += idx.tolist() + [T] * (pad - idx.size)
        blocks += [e] * (pad // BM)
    post = len(sorted_ids)
    sorted_ids += [T] * BM
    blocks += [0]
    return ids, np.array(sorted_ids), np.array(blocks), post


def fused_moe_wna16(topk, int4, dt):
    r = _round(dt)

    def ref(v, c, s):
        N, K, G, BM = c["N"], c["K"], c["group_size"], c["BLOCK_SIZE_M"]
        T = s["num_valid_tokens"]
        a = v["a_ptr"].reshape(T // topk, K)
        E = v["b_scale_ptr"].size // (_cdiv(K, G) * N)
        k = np.arange(K)
        if int4:
            p = v["b_ptr"].astype(np.int64).reshape(E, K // 2, N)
            q = (p[:, k // 2, :] >> ((k % 2) * 4)[None, :, None]) & 0xF
        else:
            q = v["b_ptr"].astype(np.int64).reshape(E, K, N)
        if c["has_zp"]:
            zb = v["b_zp_ptr"].astype(np.int64).reshape(E, _cdiv(K, G), N // 2)
            n = np.arange(N)
            zp = ((zb[:, :, n // 2] >> ((n % 2) * 4)[None, None, :]) & 0xF)[:, k // G, :]
        else:
            zp = 8 if int4 else 128
        sc = v["b_scale_ptr"].reshape(E, -1, N)[:, k // G, :]
        W = r(_f32((q - zp) * sc))
        out = v["c_ptr"].reshape(-1, N).copy()
        sid = v["sorted_token_ids_ptr"].astype(np.int64)
        eid = v["expert_ids_ptr"].astype(np.int64)
        post = int(v["num_tokens_post_padded_ptr"][0])
        for b in range(post // BM):
            for t in sid[b * BM:(b + 1) * BM]:
                if t >= T:
                    continue
                if eid[b] == -1:
                    out[t] = 0.0
                    continue
                acc = a[t // topk] @ W[eid[b]]
                if c["MUL_ROUTED_WEIGHT"]:
                    acc = _f32(acc) * v["topk_weights_ptr"][t]
                out[t] = r(acc)
        return {"c_ptr": out.ravel()}
    return ref


# ---- cases -----------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append
    f16, bf16, f32 = _dt("float16"), _dt("bfloat16"), _dt("float32")

    # GPTQ act-order matmul: bits and maxq at run time, g_idx gathers, M/N/K tails
    M, N, K, G = 5, 40, 96, 32
    for bits, order in ((4, "act-order"), (2, "act-order"), (8, "sequential")):
        per = 32 // bits
        zc = _cdiv(N, per)
        add(Case(f"qg gptq matmul_248 {bits}-bit {order}", F, "gptq_matmul_248_kernel",
                 (_cdiv(M, 16) * _cdiv(N, 32),),
                 [Buf("a_ptr", "fp16", M * K), Buf("b_ptr", "i32", K // per * N, _words), Out("c_ptr", "fp16", M * N),
                  Buf("scales_ptr", "fp16", K // G * N, _positive(0.01, 0.04 * 2 ** (4 - bits) if bits < 8 else 0.002)),
                  Buf("zeros_ptr", "i32", K // G * zc, _words),
                  Buf("g_ptr", "i32", K, _act_order(G) if order == "act-order" else _sequential(G)),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("bits", bits), Scalar("maxq", (1 << bits) - 1),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bk", N), Scalar("stride_bn", 1),
                  Scalar("stride_cm", N), Scalar("stride_cn", 1), Scalar("stride_scales", N),
                  Scalar("stride_zeros", zc)],
                 {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8},
                 ref_tol={"fp16": (2e-2, 1e-2)}, ref=gptq_matmul(bits)))

    # GPTQ flat dequantiser, constexpr bits, act-order groups
    for bits, K, N, G, order in ((4, 56, 48, 16, "act-order"), (8, 60, 48, 20, "sequential")):
        per = 32 // bits
        ng = _cdiv(K, G)
        add(Case(f"qg gptq dequant {bits}-bit {order}", F, "gptq_dequant_kernel_248", (_cdiv(K * N, 512),),
                 [Buf("g_idx_ptr", "i32", K, _act_order(G) if order == "act-order" else _sequential(G)),
                  Buf("scales_ptr", "fp16", ng * N, "rand", scale=0.1),
                  Buf("qweight_ptr", "i32", _cdiv(K, per) * N, _words), Buf("qzeros_ptr", "i32", ng * N // per, _words),
                  Out("out_ptr", "fp16", K * N), Scalar("numels", K * N)],
                 {"maxq": (1 << bits) - 1, "bits": bits, "outfeatures": N, "num_groups": ng, "X_BLOCK": 512},
                 ref=gptq_dequant))

    # AWQ split-K GEMM, fp16 accumulator, K tail past the last group
    for M, N, K, G, BK, SK in ((3, 40, 96, 32, 32, 2), (17, 48, 128, 64, 64, 1)):
        add(Case(f"qg awq gemm split_k={SK} M={M}", F, "awq_gemm_kernel",
                 (_cdiv(M, 16) * _cdiv(N, 32), SK),
                 [Buf("a_ptr", "fp16", M * K), Buf("b_ptr", "i32", K * N // 8, _words),
                  Out("c_ptr", "fp16", SK * M * N), Buf("zeros_ptr", "i32", K // G * N // 8, _words),
                  Buf("scales_ptr", "fp16", K // G * N, _positive(0.01, 0.04)),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("group_size", G)],
                 {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": BK, "SPLIT_K": SK},
                 ref_tol={"fp16": (2e-2, 2e-2)}, ref=awq_gemm))

    K, nc, G = 40, 5, 8
    add(Case("qg awq dequantize", F, "awq_dequantize_kernel", (_cdiv(nc, 4), _cdiv(K, 16)),
             [Buf("qweight_ptr", "i32", K * nc, _words), Buf("scales_ptr", "fp16", K // G * nc * 8, "rand", scale=0.1),
              Buf("zeros_ptr", "i32", K // G * nc, _words), Scalar("group_size", G),
              Out("result_ptr", "fp16", K * nc * 8), Scalar("num_cols", nc), Scalar("num_rows", K)],
             {"BLOCK_SIZE_X": 4, "BLOCK_SIZE_Y": 16}, ref=awq_dequant))

    # HQQ: halves of K in the two nibbles
    M, N, K, G = 6, 40, 80, 16
    for dt in ("fp16", "bf16"):
        add(Case(f"qg hqq int4 matmul {dt}", F, "hqq_int4_matmul_kernel", (_cdiv(M, 16), _cdiv(N, 32)),
                 [Buf("a_ptr", dt, M * K), Buf("b_ptr", "u8", K // 2 * N, ("randint", 0, 256)),
                  Out("c_ptr", dt, M * N), Buf("scales_ptr", dt, K // G * N, _positive(0.02, 0.05)),
                  Buf("zeros_ptr", dt, K // G * N, _positive(5.0, 5.0)), Scalar("M", M), Scalar("N", N),
                  Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bk", N),
                  Scalar("stride_bn", 1), Scalar("stride_cm", N), Scalar("stride_cn", 1),
                  Scalar("stride_scale_k", N), Scalar("stride_scale_n", 1)],
                 {"QGROUP_SIZE": G, "BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}, ref=hqq_matmul(dt)))

    # gemlite-style split-K: atomics into fp32 / fp16, or a plain store without split
    M, N, K = 5, 40, 128
    for (bits, G, mode, cmode, zs, dt, odt, SK, BK, order, contig) in (
            (4, 32, 3, 0, False, "fp16", "fp32", 2, 32, 0, True),
            (8, 128, 1, 3, True, "fp16", "fp16", 4, 32, 1, True),
            (2, 64, 4, 2, False, "bf16", "fp32", 1, 64, 1, False)):
        per = 32 // bits
        ng = K // G
        mdt = _dt("bfloat16" if dt == "bf16" else "float16")
        ini = "zeros" if SK > 1 else "poison"
        add(Case(f"qg gemlite splitK W{bits} mode {mode} channel_scale {cmode} split_k={SK} {odt} out", F,
                 "gemm_splitK_int_kernel", (_cdiv(M, 16) * _cdiv(N, 32), SK),
                 [Buf("a_ptr", dt, M * K), Buf("b_ptr", "i32", K // per * N, _words),
                  Buf("c_ptr", odt, M * N, ini, out=True),
                  Buf("scales_ptr", dt, max(ng, 1) * N, _positive(0.05, 0.05) if cmode else _positive(0.01, 0.04)),
                  Buf("zeros_ptr", dt, ng * N, _positive(0.0, (1 << bits) - 1)),
                  Buf("scales_a_ptr", dt, M, _positive(0.05, 0.05)), Scalar("M", M), Scalar("N", N), Scalar("K", K),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bk", N), Scalar("stride_bn", 1),
                  Scalar("stride_cm", N), Scalar("stride_cn", 1), Scalar("stride_meta_a_m", 1),
                  Scalar("stride_meta_a_g", 1), Scalar("stride_meta_g", N), Scalar("stride_meta_n", 1)],
                 {"W_nbits": bits, "group_size": G, "unpack_mask": (1 << bits) - 1, "elements_per_sample": per,
                  "input_dtype": mdt, "output_dtype": {"fp32": f32, "fp16": f16}[odt], "acc_dtype": f32,
                  "meta_dtype": mdt, "channel_scale_mode": cmode, "W_group_mode": mode, "zero_is_scalar": zs,
                  "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": BK, "GROUP_SIZE_M": 8, "SPLIT_K": SK,
                  "A_load_order": order, "data_contiguous": contig},
                 ref_tol={"fp32": (1e-2, 1e-2) if dt == "bf16" else (1e-3, 1e-3), "fp16": (2e-2, 2e-2)},
                 ref=splitk_int))

    # 3-bit weights as a 1-bit and a 2-bit plane
    M, N, K, G = 5, 40, 128, 64
    add(Case("qg gemlite W3 bit planes", F, "gemm_w3_bitplanes_kernel", (_cdiv(M, 16) * _cdiv(N, 32),),
             [Buf("a_ptr", "fp16", M * K), Buf("b_1_ptr", "i32", K // 32 * N, _words),
              Buf("b_2_ptr", "i32", K // 16 * N, _words), Out("c_ptr", "fp16", M * N),
              Buf("scales_ptr", "fp16", K // G * N, _positive(0.02, 0.05)),
              Buf("zeros_ptr", "fp16", K // G * N, _positive(2.0, 3.0)), Scalar("M", M), Scalar("N", N),
              Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bk_1", N),
              Scalar("stride_bn_1", 1), Scalar("stride_bk_2", N), Scalar("stride_bn_2", 1), Scalar("stride_cm", N),
              Scalar("stride_cn", 1), Scalar("stride_meta", N)],
             {"W_nbits_1": 1, "W_nbits_2": 2, "group_size": G, "unpack_mask_1": 1, "unpack_mask_2": 3,
              "elements_per_sample_1": 32, "elements_per_sample_2": 16, "acc_dtype": f32,
              "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
             ref_tol={"fp16": (2e-2, 1e-2)}, ref=w3_bitplanes))

    # W4A16 decode GEMV, tl.sum over K
    N, K, G = 40, 200, 40
    for M, BM in ((1, 1), (3, 4)):
        add(Case(f"qg w4a16 gemv M={M}", F, "w4a16_gemv_kernel", (_cdiv(N, 32),),
                 [Buf("x_ptr", "fp16", M * K), Buf("qweight_ptr", "i32", K // 8 * N, _words),
                  Buf("scales_ptr", "fp16", _cdiv(K, G) * N, _positive(0.01, 0.04)),
                  Buf("zeros_ptr", "fp16", _cdiv(K, G) * N, _positive(4.0, 7.0)),
                  Out("y_ptr", "fp16", M * N), Scalar("M", M), Scalar("N", N), Scalar("K", K),
                  Scalar("stride_xm", K), Scalar("stride_qk", N), Scalar("stride_ym", N), Scalar("stride_meta_g", N)],
                 {"group_size": G, "BLOCK_M": BM, "BLOCK_N": 32, "BLOCK_K": 64}, ref=w4a16_gemv))

    # W4A8: signed nibbles on int8 tensor cores
    for M, N, K, dt in ((20, 40, 100, "fp16"), (4, 48, 64, "bf16")):
        add(Case(f"qg w4a8 int8 dot {dt} M={M}", F, "w4a8_int_matmul_kernel", (_cdiv(M, 16), _cdiv(N, 32)),
                 [Buf("a_ptr", "i8", M * K, _int8), Buf("b_ptr", "i32", _cdiv(K, 8) * N, _words),
                  Out("c_ptr", dt, M * N), Buf("a_scale_ptr", "fp32", M, _positive(0.005, 0.01)),
                  Buf("b_scale_ptr", "fp16", N, _positive(0.005, 0.01)), Scalar("M", M), Scalar("N", N),
                  Scalar("K", K), Scalar("stride_am", K), Scalar("stride_bk", N), Scalar("stride_cm", N)],
                 {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}, ref=w4a8(dt)))

    # bitsandbytes LLM.int8 vector-wise quantisation
    R, n = 6, 100
    for thr in (0.0, 2.0):
        add(Case(f"qg bnb int8 vectorwise quant threshold={thr}", F, "int8_vectorwise_quant_kernel", (R,),
                 [Buf("x_ptr", "fp16", R * n), Out("q_ptr", "i8", R * n), Out("row_stats_ptr", "fp32", R),
                  Buf("outlier_cols_ptr", "i32", n, "zeros", out=True), Scalar("threshold", thr, "fp32"),
                  Scalar("n_cols", n), Scalar("stride_x", n), Scalar("stride_q", n)],
                 {"BLOCK_SIZE": 128}, ref=int8_vectorwise))

    # bitsandbytes int8 matmul, row-wise activation state, tensor-wise weight state
    M, N = 20, 40
    for K, bias in ((100, False), (96, True)):
        add(Case(f"qg bnb int8 matmul mixed dequant K={K} bias={bias}", F, "int8_matmul_mixed_dequantize_kernel",
                 (_cdiv(M, 16) * _cdiv(N, 32),),
                 [Buf("A", "i8", M * K, _int8), Buf("B", "i8", K * N, _int8), Out("C", "fp16", M * N),
                  Buf("bias", "fp16", N), Buf("state_x_ptr", "fp32", M, _positive(1.0, 3.0)),
                  Buf("state_w_ptr", "fp32", 1, _positive(0.05, 0.1)), Scalar("M", M), Scalar("N", N),
                  Scalar("K", K), Scalar("divfactor", 1.0 / (127.0 * 127.0), "fp32"),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bk", N), Scalar("stride_bn", 1),
                  Scalar("stride_cm", N), Scalar("stride_cn", 1)],
                 {"has_bias": bias, "BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2,
                  "EVEN_K": K % 32 == 0}, ref=int8_mixed))

    # bitsandbytes 8-bit blockwise quantisation, bisection over the code
    for n, BS, SPLIT in ((1000, 64, 2), (900, 128, 4)):
        nb = _cdiv(n, BS)
        add(Case(f"qg bnb quantize 8bit blockwise n={n} block={BS}", F, "quantize_8bit_blockwise_kernel",
                 (_cdiv(nb, SPLIT),),
                 [Buf("A_ptr", "fp32", n), Buf("code_ptr", "fp32", 256, _sorted_code), Out("absmax_ptr", "fp32", nb),
                  Out("out_ptr", "u8", n), Scalar("n_elements", n), Scalar("n_blocks", nb)],
                 {"BLOCK_SIZE": BS, "CODE_SIZE": 256, "SPLIT_NUM_BLOCKS": SPLIT, "SEARCH_STEPS": 8},
                 ref=blockwise_8bit))

    # NF4 through a register codebook (tl.gather), double-quantised absmax
    for n_out, dt in ((1000, "fp16"), (999, "bf16")):
        paired = _cdiv(n_out, 2)
        nb = _cdiv(n_out, 64)
        add(Case(f"qg bnb nf4 dequant gather {dt} n={n_out}", F, "dequant_nf4_gather_kernel", (_cdiv(paired, 128),),
                 [Buf("a_ptr", "u8", paired, ("randint", 0, 256)), Out("c_ptr", dt, n_out + 1),
                  Buf("code_ptr", "fp32", 16, _fixed(NF4)), Buf("absmax_q_ptr", "u8", nb, ("randint", 0, 256)),
                  Buf("code2_ptr", "fp32", 256, _fixed(np.linspace(0.01, 1.0, 256))),
                  Buf("absmax2_ptr", "fp32", _cdiv(nb, 4), _positive(1.0, 2.0)), Scalar("offset", 0.5, "fp32"),
                  Scalar("num_paired_elements", paired), Scalar("num_output_elements", n_out)],
                 {"QUANT_BLOCK": 64, "NESTED_BLOCK": 4, "SPLIT_SIZE": 128}, ref=nf4_gather(dt)))

    # NF4 / FP4 decode GEMV, lookup by a tl.where chain
    M, N, K = 3, 40, 192
    for nf4 in (True, False):
        add(Case(f"qg bnb gemv 4bit {'nf4' if nf4 else 'fp4'} where chain", F, "gemv_4bit_kernel", (_cdiv(N, 16), M),
                 [Buf("x_ptr", "fp16", M * K), Buf("w_ptr", "u8", N * K // 2, ("randint", 0, 256)),
                  Buf("absmax_ptr", "fp32", N * K // 64, _positive(0.05, 0.1)), Out("out_ptr", "bf16", M * N),
                  Scalar("N", N), Scalar("K", K), Scalar("stride_xm", K), Scalar("stride_om", N)],
                 {"QUANT_BLOCK": 64, "IS_NF4": nf4, "BLOCK_N": 16, "BLOCK_K": 128}, ref=gemv_4bit))

    # GPTQ transposed product (backward), tl.trans of the dequantised tile
    M, N, K, G, bits = 5, 40, 88, 32, 4
    per, zc = 8, _cdiv(40, 8)
    add(Case("qg gptq transpose matmul_248 4-bit act-order", F, "gptq_transpose_matmul_248_kernel",
             (_cdiv(M, 16) * _cdiv(K, 32),),
             [Buf("a_ptr", "fp16", M * N), Buf("b_ptr", "i32", K // per * N, _words), Out("c_ptr", "fp16", M * K),
              Buf("scales_ptr", "fp16", _cdiv(K, G) * N, _positive(0.01, 0.04)),
              Buf("zeros_ptr", "i32", _cdiv(K, G) * zc, _words), Buf("g_ptr", "i32", K, _act_order(G)),
              Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("bits", bits), Scalar("maxq", 15),
              Scalar("stride_am", N), Scalar("stride_an", 1), Scalar("stride_bk", N), Scalar("stride_bn", 1),
              Scalar("stride_cm", K), Scalar("stride_ck", 1), Scalar("stride_scales", N), Scalar("stride_zeros", zc)],
             {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
             ref_tol={"fp16": (2e-2, 1e-2)}, ref=gptq_transpose))

    # fused MoE with int4 / int8 weight-only experts over routed tokens
    M, topk, E, N, BM = 5, 2, 3, 40, 16
    for int4, K, G, zp, mulw, dt, local in ((True, 96, 32, True, True, "fp16", (True, True, False)),
                                            (False, 80, 40, False, False, "bf16", (True, True, True))):
        ids, sid, eid, post = _moe_routing(M, topk, E, BM, 11 if int4 else 12)
        eid = np.array([e if e < 0 or local[e] else -1 for e in eid])
        ng = _cdiv(K, G)
        bsize = E * (K // 2 if int4 else K) * N
        add(Case(f"qg fused moe {'w4a16 zp' if int4 else 'w8a16'} {dt} routed_weight={mulw} "
                 f"k_divisible={K % 32 == 0}", F, "fused_moe_wna16_kernel",
                 (_cdiv(sid.size, BM) * _cdiv(N, 32),),
                 [Buf("a_ptr", dt, M * K), Buf("b_ptr", "u8", bsize, ("randint", 0, 256)),
                  Out("c_ptr", dt, M * topk * N), Buf("b_scale_ptr", dt, E * ng * N, _positive(0.005, 0.01)),
                  Buf("b_zp_ptr", "u8", E * ng * N // 2, ("randint", 0, 256)),
                  Buf("topk_weights_ptr", "fp32", M * topk, "rand"),
                  Buf("sorted_token_ids_ptr", "i32", sid.size, _fixed(sid)),
                  Buf("expert_ids_ptr", "i32", eid.size, _fixed(eid)),
                  Buf("num_tokens_post_padded_ptr", "i32", 1, _fixed([post])),
                  Scalar("EM", sid.size), Scalar("num_valid_tokens", M * topk),
                  Scalar("stride_am", K), Scalar("stride_ak", 1),
                  Scalar("stride_be", bsize // E), Scalar("stride_bk", N), Scalar("stride_bn", 1),
                  Scalar("stride_cm", N), Scalar("stride_cn", 1),
                  Scalar("stride_bse", ng * N), Scalar("stride_bsk", N), Scalar("stride_bsn", 1),
                  Scalar("stride_bze", ng * N // 2), Scalar("stride_bzk", N // 2), Scalar("stride_bzn", 1)],
                 {"N": N, "K": K, "block_k_divisible": K % 32 == 0, "group_size": G, "BLOCK_SIZE_M": BM,
                  "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2, "MUL_ROUTED_WEIGHT": mulw,
                  "top_k": topk, "compute_type": bf16 if dt == "bf16" else f16, "has_zp": zp,
                  "use_int4_w4a16": int4, "use_int8_w8a16": not int4},
                 ref=fused_moe_wna16(topk, int4, dt)))

    # W8A16 split-K with atomics, masked and even K
    M, N = 5, 40
    for K, SK, dt in ((100, 2, "fp32"), (128, 4, "fp16")):
        even = K % (32 * SK) == 0
        add(Case(f"qg w8a16 splitK {dt} atomics split_k={SK} even_k={even}", F, "w8a16_splitk_kernel",
                 (_cdiv(M, 16), _cdiv(N, 32), SK),
                 [Buf("a_ptr", "fp16", M * K), Buf("w_ptr", "i8", K * N, _int8),
                  Buf("scale_ptr", "fp16", N, _positive(0.002, 0.004)), Buf("c_ptr", dt, M * N, "zeros", out=True),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_wk", N),
                  Scalar("stride_cm", N)],
                 {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "SPLIT_K": SK, "EVEN_K": even},
                 ref_tol={"fp32": (1e-3, 1e-3)}, ref=w8a16_splitk(dt)))
    return out
