"""Cases of the quantised-GEMM and mixture-of-experts kernels
(breadth_quant.py) and their float64 numpy references."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar

F = "breadth_quant.py"


def _ints(xs):
    return lambda rng, n: np.array(list(xs)[:n], dtype=np.int64)


def _f32(x):
    return np.asarray(x, dtype=np.float32)


# ---- fp8 -------------------------------------------------------------------------------------


def fp8_table(e5m2):
    """The value of every byte code (NaN where the code is not a number)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    mbits, bias = (2, 15) if e5m2 else (3, 7)
    exp = (codes & 0x7F) >> mbits
    man = codes & ((1 << mbits) - 1)
    val = np.where(exp == 0, man / (1 << mbits) * 2.0 ** (1 - bias),
                   (1 + man / (1 << mbits)) * 2.0 ** (exp - bias))
    val = sign * val
    if e5m2:
        val[(exp == 31)] = np.nan
    else:
        val[(codes & 0x7F) == 0x7F] = np.nan
    return val


def fp8_encode(x, e5m2):
    """Round-to-nearest-even codes of finite values within range."""
    tab = fp8_table(e5m2)
    pos = np.arange(128)
    pos = pos[np.isfinite(tab[pos])]
    mags = tab[pos]
    a = np.abs(x)
    i = np.clip(np.searchsorted(mags, a), 1, len(mags) - 1)
    lo, hi = mags[i - 1], mags[i]
    pick_hi = (a - lo > hi - a) | ((a - lo == hi - a) & (pos[i] % 2 == 0))
    code = np.where(pick_hi, pos[i], pos[i - 1])
    code = np.where(a >= mags[-1], pos[-1], code)
    return np.where((x < 0) | ((x == 0) & np.signbit(x)), code | 0x80, code)


def _finite_codes(e5m2):
    ok = np.flatnonzero(np.isfinite(fp8_table(e5m2)))
    return lambda rng, n: rng.choice(ok, n)


# ---- references ------------------------------------------------------------------------------


def w4_n_packed(v, c, s):
    M, N, K, G = s["M"], s["N"], s["K"], c["GROUP_SIZE"]
    p = v["qw"].astype(np.int64).reshape(K, N // 2)
    w = np.stack([p & 0xF, p >> 4], axis=-1).reshape(K, N)
    zp = v["qzeros"].astype(np.int64).reshape(K // G, N // 2)
    z = np.stack([zp & 0xF, zp >> 4], axis=-1).reshape(K // G, N)
    sc = v["scales"].reshape(K // G, N)
    b = (w - np.repeat(z, G, axis=0)) * np.repeat(sc, G, axis=0)
    b = b.astype(np.float16).astype(np.float64)
    return {"c": (v["a"].reshape(M, K) @ b).ravel()}


def w4_k_packed(v, c, s):
    M, N, K, G = s["M"], s["N"], s["K"], c["GROUP_SIZE"]
    qw = v["qw"].astype(np.int64).reshape(K // 8, N) & 0xFFFFFFFF
    k = np.arange(K)
    w = (qw[k // 8] >> (4 * (k % 8))[:, None]) & 0xF
    if c["SYMMETRIC"]:
        w = np.where(w >= 8, w - 16, w)
    else:
        zw = v["qzeros"].astype(np.int64).reshape(K // G, N // 8) & 0xFFFFFFFF
        n = np.arange(N)
        z = (zw[:, n // 8] >> (4 * (n % 8))[None, :]) & 0xF
        w = w - np.repeat(z, G, axis=0)
    b = w * np.repeat(v["scales"].reshape(K // G, N), G, axis=0)
    return {"c": (v["a"].reshape(M, K) @ b).ravel()}


def int8_mm(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    acc = v["a"].astype(np.int64).reshape(M, K) @ v["b"].astype(np.int64).reshape(K, N)
    if c["RAW_INT32"]:
        return {"c": acc.ravel()}
    out = acc * v["a_scale"][:, None] * v["b_scale"][None, :]
    if c["HAS_BIAS"]:
        out = out + v["bias"][None, :]
    return {"c": out.ravel()}


def per_token_quant(v, c, s):
    N = s["N"]
    x = _f32(v["x"].reshape(-1, N))
    scale = np.maximum(np.abs(x).max(axis=1), np.float32(1e-10)) / np.float32(127.0)
    y = x / scale[:, None]
    q = np.trunc(np.where(y >= 0, y + np.float32(0.5), y - np.float32(0.5)))
    return {"q": q.ravel(), "scale": scale.astype(np.float64)}


def fp8_quant(v, c, s):
    e5 = c["E5M2"]
    lim = 57344.0 if e5 else 448.0
    sc = _f32(v["scale"][0])
    y = np.clip(_f32(v["x"]) * (np.float32(1.0) / sc), -lim, lim).astype(np.float64)
    codes = fp8_encode(y, e5)
    return {"codes": codes, "deq": fp8_table(e5)[codes] * float(sc)}


def fp8_mm(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    t = fp8_table(False)
    a = t[v["a"].astype(np.int64)].reshape(M, K)
    b = t[v["b"].astype(np.int64)].reshape(N, K)
    return {"c": (a @ b.T * v["a_scale"][:, None] * v["b_scale"][None, :]).ravel()}


def fp8_dequant(v, c, s):
    t = fp8_table(c["E5M2"])
    return {"out": t[v["codes"].astype(np.int64)] * v["scale"][0]}


def moe_count(v, c, s):
    counts = v["counts"].copy()
    np.add.at(counts, v["topk_ids"].astype(np.int64), 1)
    return {"counts": counts}


def moe_align_ref(ids, E, BS, max_padded, max_blocks):
    counts = np.bincount(ids, minlength=E)
    padded = -(-counts // BS) * BS
    ends = np.cumsum(padded)
    starts = ends - padded
    sorted_ids = np.full(max_padded, len(ids))
    for e in range(E):
        toks = np.flatnonzero(ids == e)
        sorted_ids[starts[e]:starts[e] + len(toks)] = toks
    expert_ids = np.full(max_blocks, -1)
    nb = ends[-1] // BS
    expert_ids[:nb] = np.repeat(np.arange(E), padded // BS)
    return sorted_ids, expert_ids, np.concatenate([[0], ends]), ends[-1]


def moe_align(v, c, s):
    srt, eid, cs, tot = moe_align_ref(v["topk_ids"].astype(np.int64), c["NUM_EXPERTS"],
                                      c["BLOCK_SIZE"], c["MAX_PADDED"], c["MAX_BLOCKS"])
    return {"sorted_ids": srt, "expert_ids": eid, "cumsum": cs, "num_post_pad": np.array([tot])}


def fused_moe(v, c, s):
    N, K, top_k = s["N"], s["K"], c["TOP_K"]
    nv = s["num_valid_tokens"]
    a = v["a"].reshape(-1, K)
    b = v["b"].reshape(-1, N, K)
    srt = v["sorted_token_ids"].astype(np.int64)
    eid = v["expert_ids"].astype(np.int64)
    bm = c["BLOCK_M"]
    out = np.full((nv, N), np.nan)
    for slot, tok in enumerate(srt[:int(v["num_tokens_post_padded"][0])]):
        if tok >= nv:
            continue
        e = eid[slot // bm]
        row = a[tok // top_k] @ b[e].T
        if c["USE_INT8_W8A16"]:
            row = row * v["b_scale"].reshape(-1, N)[e]
        if c["MUL_ROUTED_WEIGHT"]:
            row = row * v["topk_weights"][tok]
        out[tok] = row
    return {"c": out.ravel()}


def addr_gather(v, c, s):
    D = c["D"]
    x = v["x"].reshape(-1, s["stride_x"])[:, :D]
    return {"out": (x[v["idx"].astype(np.int64)] * 2.0).ravel()}


# ---- cases -----------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append

    # int4 packed two per byte along N, groups of 32 rows of K
    M, N, K, G = 40, 64, 128, 32
    add(Case("w4a16 N-packed nibbles, group zero points", F, "w4a16_n_packed_kernel",
             (-(-M // 16), N // 32),
             [Buf("a", "fp16", M * K, scale=0.5), Buf("qw", "u8", K * N // 2, ("randint", 0, 256)),
              Buf("scales", "fp16", K // G * N, lambda rng, n: 0.01 + 0.02 * rng.random(n)),
              Buf("qzeros", "u8", K // G * N // 2, ("randint", 0, 256)), Out("c", "fp16", M * N),
              Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_am", K),
              Scalar("stride_qk", N // 2), Scalar("stride_sg", N), Scalar("stride_zg", N // 2),
              Scalar("stride_cm", N)],
             {"GROUP_SIZE": G, "BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32},
             tol={"fp16": (3e-2, 2e-2)}, ref=w4_n_packed))

    # int4 packed eight per int32 along K (the sign bit of each word is used)
    M, N, K, G = 24, 64, 128, 64
    for sym in (False, True):
        add(Case(f"w4 K-packed int32 symmetric={sym}", F, "w4_k_packed_kernel",
                 (-(-M // 16), N // 32),
                 [Buf("a", "fp32", M * K, scale=0.5),
                  Buf("qw", "i32", K // 8 * N, ("randint", -2**31, 2**31)),
                  Buf("scales", "fp32", K // G * N, lambda rng, n: 0.01 + 0.02 * rng.random(n)),
                  Null("qzeros_ptr") if sym else
                  Buf("qzeros", "i32", K // G * N // 8, ("randint", -2**31, 2**31)),
                  Out("c", "fp32", M * N), Scalar("M", M), Scalar("N", N), Scalar("K", K),
                  Scalar("stride_am", K), Scalar("stride_qk", N), Scalar("stride_sg", N),
                  Scalar("stride_zg", N // 8), Scalar("stride_cm", N)],
                 {"SYMMETRIC": sym, "GROUP_SIZE": G, "BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32},
                 tol={"fp32": (1e-3, 1e-3)}, ref=w4_k_packed))

    # int8 x int8 -> int32, ragged in every dimension, swizzled tiles
    M, N, K = 70, 48, 100
    grid = (-(-M // 16) * -(-N // 16),)
    common = [Buf("a", "i8", M * K, ("randint", -128, 128)), Buf("b", "i8", K * N, ("randint", -128, 128)),
              Buf("a_scale", "fp32", M, lambda rng, n: 1e-3 + 1e-3 * rng.random(n)),
              Buf("b_scale", "fp32", N, lambda rng, n: 1e-3 + 1e-3 * rng.random(n))]
    dims = [Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_am", K),
            Scalar("stride_bk", N), Scalar("stride_cm", N)]
    blocks = {"GROUP_M": 3, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32}
    add(Case("int8 dot out_dtype=int32 raw", F, "int8_scaled_mm_kernel", grid,
             common + [Null("bias_ptr"), Out("c", "i32", M * N)] + dims,
             {"HAS_BIAS": False, "RAW_INT32": True, **blocks}, ref=int8_mm))
    for dt, bias in (("fp16", True), ("bf16", False)):
        add(Case(f"int8 dot per-row/col scales bias={bias} {dt}", F, "int8_scaled_mm_kernel", grid,
                 common + [Buf("bias", "fp32", N) if bias else Null("bias_ptr"),
                           Out("c", dt, M * N)] + dims,
                 {"HAS_BIAS": bias, "RAW_INT32": False, **blocks}, ref=int8_mm))

    R, N = 9, 200
    add(Case("per-token int8 quant, rounded half away", F, "per_token_quant_int8_kernel", (R,),
             [Buf("x", "fp16", R * N, scale=3.0), Out("q", "i8", R * N), Out("scale", "fp32", R),
              Scalar("N", N), Scalar("stride_x", N), Scalar("stride_q", N)],
             {"BLOCK_N": 256}, tol={"fp32": (1e-6, 1e-6)}, ref=per_token_quant))

    n = 1000
    for e5 in (False, True):
        add(Case(f"fp8 quant/dequant e5m2={e5}", F, "fp8_quant_kernel", (-(-n // 256),),
                 [Buf("x", "fp32", n, scale=4.0), Buf("scale", "fp32", 1, ("fill", 0.0375)),
                  Out("codes", "u8", n), Out("deq", "fp32", n), Scalar("n", n)],
                 {"E5M2": e5, "BLOCK": 256}, ref=fp8_quant))
        add(Case(f"fp8 byte codes dequant e5m2={e5}", F, "fp8_codes_dequant_kernel", (-(-n // 256),),
                 [Buf("codes", "u8", n, _finite_codes(e5)), Buf("scale", "fp32", 1, ("fill", 0.5)),
                  Out("out", "fp16", n), Scalar("n", n)],
                 {"E5M2": e5, "BLOCK": 256}, ref=fp8_dequant))

    M, N, K = 33, 40, 64
    add(Case("fp8 e4m3 dot per-row/col scales", F, "fp8_scaled_mm_kernel", (-(-M // 16), -(-N // 16)),
             [Buf("a", "u8", M * K, _finite_codes(False)), Buf("b", "u8", N * K, _finite_codes(False)),
              Buf("a_scale", "fp32", M, lambda rng, n: 1e-3 + 1e-3 * rng.random(n)),
              Buf("b_scale", "fp32", N, lambda rng, n: 1e-3 + 1e-3 * rng.random(n)),
              Out("c", "bf16", M * N), Scalar("M", M), Scalar("N", N), Scalar("K", K),
              Scalar("stride_am", K), Scalar("stride_bn", K), Scalar("stride_cm", N)],
             {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32}, ref=fp8_mm))

    # routing: 13 tokens, top-2 of 6 experts (expert 4 gets none)
    E, T, TOPK, BS = 6, 13, 2, 4
    ids = np.random.default_rng(5).choice([0, 1, 2, 3, 5], T * TOPK)
    add(Case("moe expert counts with atomics", F, "moe_count_kernel", (-(-T * TOPK // 8),),
             [Buf("topk_ids", "i32", T * TOPK, _ints(ids)), Buf("counts", "i32", E, "zeros", out=True),
              Scalar("numel", T * TOPK)], {"BLOCK": 8}, ref=moe_count))
    MAXP, MAXB = 64, 16
    add(Case("moe align block size", F, "moe_align_kernel", (1,),
             [Buf("topk_ids", "i32", T * TOPK, _ints(ids)), Out("sorted_ids", "i32", MAXP),
              Out("expert_ids", "i32", MAXB), Out("cumsum", "i32", E + 1),
              Out("num_post_pad", "i32", 1), Scalar("numel", T * TOPK)],
             {"NUM_EXPERTS": E, "EXPERT_PAD": 8, "BLOCK_SIZE": BS, "TOK_BLOCK": 8,
              "MAX_PADDED": MAXP, "MAX_BLOCKS": MAXB}, ref=moe_align))

    # the fused-MoE GEMM over that routing, blocks of 16 slots
    N, K, BS, MAXP, MAXB = 48, 40, 16, 128, 8
    srt, eid, _, tot = moe_align_ref(ids, E, BS, MAXP, MAXB)
    EM = MAXP
    for int8, routed in ((False, True), (True, False)):
        add(Case(f"fused moe sorted tokens int8_w8a16={int8} routed_weight={routed}", F,
                 "fused_moe_kernel", (-(-EM // BS) * -(-N // 16),),
                 [Buf("a", "fp16", T * K), Buf("b", "i8" if int8 else "fp16", E * N * K,
                                               ("randint", -128, 128) if int8 else "randn", scale=0.3),
                  Out("c", "fp16", T * TOPK * N),
                  Buf("b_scale", "fp32", E * N, lambda rng, n: 2e-3 + 2e-3 * rng.random(n))
                  if int8 else Null("b_scale_ptr"),
                  Buf("topk_weights", "fp32", T * TOPK, "rand"),
                  Buf("sorted_token_ids", "i32", MAXP, _ints(srt)),
                  Buf("expert_ids", "i32", MAXB, _ints(eid)),
                  Buf("num_tokens_post_padded", "i32", 1, _ints([tot])),
                  Scalar("N", N), Scalar("K", K), Scalar("EM", EM), Scalar("num_valid_tokens", T * TOPK),
                  Scalar("stride_am", K), Scalar("stride_be", N * K), Scalar("stride_bn", K),
                  Scalar("stride_cm", N), Scalar("stride_bse", N)],
                 {"MUL_ROUTED_WEIGHT": routed, "TOP_K": TOPK, "USE_INT8_W8A16": int8, "GROUP_M": 2,
                  "BLOCK_M": BS, "BLOCK_N": 16, "BLOCK_K": 16},
                 tol={"fp16": (2e-2, 2e-2)}, ref=fused_moe))

    R, D, SRC = 21, 32, 17
    add(Case("gather through int64 addresses", F, "addr_gather_kernel", (-(-R // 8),),
             [Buf("x", "fp16", SRC * (D + 8)), Buf("idx", "i32", R, ("randint", 0, SRC)),
              Buf("addr", "i64", R, "zeros"), Out("out", "fp16", R * D), Scalar("n_rows", R),
              Scalar("stride_x", D + 8)],
             {"D": D, "BLOCK_R": 8}, ref=addr_gather))
    return out
