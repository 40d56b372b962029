# Low-bit GEMM kernels in the manner of the quantised-inference libraries that
# ship Triton kernels.
#
# GPTQ: the act-order matmul over int32 words packed along K (bits and maxq as
# runtime arguments, scales and packed zeros gathered through g_idx, the
# stored-minus-one zero convention, tl.swizzle2d program order), its
# transposed (backward) product over tl.trans of the dequantised tile, and the
# flat dequantiser with constexpr bits (negative g_idx wrapping). AWQ: the
# split-K GEMM over words packed along N in the interleaved
# [0, 4, 1, 5, 2, 6, 3, 7] order (each column's nibble computed from its lane
# with shifts and masks, an fp16 accumulator) and the 2-D dequantiser that
# reads each word once per column it holds. HQQ: 4-bit codes stored as two
# halves of K in the nibbles of a uint8 row. gemlite: the split-K GEMM with
# W_group_mode / channel_scale_mode / zero_is_scalar switches, dtype
# constexprs and the unpacking in a @triton.jit function of its own,
# accumulating with tl.atomic_add, and the 3-bit GEMM over a 1-bit and a 2-bit
# plane (tl.range with num_stages). A W4A16 decode GEMV (M = 1..4) reducing
# over K with tl.sum, and a W4A8 GEMM on int8 tensor cores (signed nibbles
# sign-extended by shifts, out_dtype=tl.int32).
#
# bitsandbytes: LLM.int8 vector-wise quantisation with an outlier threshold
# (outlier columns flagged with tl.atomic_max), the int8 matmul with a
# row-wise activation state and a tensor-wise weight state fused into the
# epilogue, 8-bit blockwise quantisation with absmax and a binary search of
# the dynamic code, NF4 dequantisation through a codebook held in registers
# (tl.gather) with double-quantised absmax, and an NF4 / FP4 decode GEMV whose
# lookup is a tl.where chain (NF4: one select per level) or a tree of tl.where
# selects on the code's bits (FP4). A fused MoE
# expert GEMM over routed tokens with int4 / int8 weight-only experts (masks
# that are None when K divides evenly, weight columns past N wrapped,
# non-local experts writing zeros). A W8A16 split-K GEMM whose even-K path
# drops the masks.
import triton
import triton.language as tl
from triton.language.extra import libdevice


def _gptq_configs():
    return [triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8},
                          num_stages=s, num_warps=w)
            for (m, n, k, s, w) in ((64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (64, 128, 32, 4, 4),
                                    (128, 32, 32, 4, 4), (64, 64, 32, 4, 4), (64, 128, 32, 2, 8))]


# ---- GPTQ ------------------------------------------------------------------------------------


@triton.autotune(configs=_gptq_configs(), key=["M", "N", "K"])
@triton.jit
def gptq_matmul_248_kernel(a_ptr, b_ptr, c_ptr, scales_ptr, zeros_ptr, g_ptr, M, N, K, bits, maxq,
                           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                           stride_scales, stride_zeros,
                           BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                           GROUP_SIZE_M: tl.constexpr):
    """C[M, N] (fp16) = A[M, K] @ W[K, N], with W dequantised on the fly.

    b_ptr holds 32 // bits codes of one column per int32 word, stacked along K
    (code k sits at bit (k % (32 // bits)) * bits of word row k // (32 // bits)).
    Row k of W belongs to quantisation group g_ptr[k] (act-order: the groups
    need not be contiguous). zeros_ptr packs each group's zero points along N
    in the same way, stored one below their value.
    """
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    lin = tl.program_id(0)
    tm, tn = tl.swizzle2d(lin // tiles_n, lin % tiles_n, tiles_m, tiles_n, GROUP_SIZE_M)

    m_idx = tm * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    n_idx = tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    m_in = m_idx < M
    n_in = n_idx < N

    codes_per_word = 32 // bits
    # where each column's zero point lives inside a packed zeros row
    zp_word = n_idx // codes_per_word
    zp_bit = (n_idx % codes_per_word) * bits

    total = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_idx = step * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
        k_in = k_idx < K

        act = tl.load(a_ptr + m_idx[:, None] * stride_am + k_idx[None, :] * stride_ak,
                      mask=m_in[:, None] & k_in[None, :], other=0.0)
        group = tl.load(g_ptr + k_idx, mask=k_in, other=0)

        packed = tl.load(b_ptr + (k_idx // codes_per_word)[:, None] * stride_bk + n_idx[None, :] * stride_bn,
                         mask=k_in[:, None] & n_in[None, :], other=0)
        code = (packed >> ((k_idx % codes_per_word) * bits)[:, None]) & maxq

        scale = tl.load(scales_ptr + group[:, None] * stride_scales + n_idx[None, :],
                        mask=n_in[None, :], other=0.0)
        zp_packed = tl.load(zeros_ptr + group[:, None] * stride_zeros + zp_word[None, :],
                            mask=n_in[None, :], other=0)
        zero = ((zp_packed >> zp_bit[None, :]) & maxq) + 1

        weight = (code - zero).to(tl.float16) * scale
        total = tl.dot(act, weight, total)

    tl.store(c_ptr + m_idx[:, None] * stride_cm + n_idx[None, :] * stride_cn, total.to(tl.float16),
             mask=m_in[:, None] & n_in[None, :])


@triton.autotune(configs=_gptq_configs(), key=["M", "N", "K"])
@triton.jit
def gptq_transpose_matmul_248_kernel(a_ptr, b_ptr, c_ptr, scales_ptr, zeros_ptr, g_ptr, M, N, K, bits, maxq,
                                     stride_am, stride_an, stride_bk, stride_bn, stride_cm, stride_ck,
                                     stride_scales, stride_zeros,
                                     BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                                     BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    """C[M, K] (fp16) = A[M, N] @ W[K, N]^T: the input gradient of the GPTQ
    layer. Each program owns a (BLOCK_SIZE_M, BLOCK_SIZE_K) tile of C, fixes its
    rows of W (and so their groups and bit offsets) once, and walks N.
    """
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_k = tl.cdiv(K, BLOCK_SIZE_K)
    lin = tl.program_id(0)
    # bands of GROUP_SIZE_M row tiles; inside a band the row tile varies fastest
    band_len = GROUP_SIZE_M * tiles_k
    band_first = (lin // band_len) * GROUP_SIZE_M
    band_rows = tl.minimum(tiles_m - band_first, GROUP_SIZE_M)
    in_band = lin % band_len
    tm = band_first + in_band % band_rows
    tk = in_band // band_rows

    m_idx = tm * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    k_idx = tk * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
    m_in = m_idx < M
    k_in = k_idx < K

    codes_per_word = 32 // bits
    word_row = (k_idx // codes_per_word)[:, None]
    code_bit = ((k_idx % codes_per_word) * bits)[:, None]
    group = tl.load(g_ptr + k_idx, mask=k_in, other=0)[:, None]

    total = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_K), dtype=tl.float32)
    n_base = tl.arange(0, BLOCK_SIZE_N)
    for n0 in range(0, N, BLOCK_SIZE_N):
        n_idx = n0 + n_base
        n_in = n_idx < N
        grad = tl.load(a_ptr + m_idx[:, None] * stride_am + n_idx[None, :] * stride_an,
                       mask=m_in[:, None] & n_in[None, :], other=0.0)

        packed = tl.load(b_ptr + word_row * stride_bk + n_idx[None, :] * stride_bn,
                         mask=k_in[:, None] & n_in[None, :], other=0)
        scale = tl.load(scales_ptr + group * stride_scales + n_idx[None, :], mask=n_in[None, :], other=0.0)
        zp_packed = tl.load(zeros_ptr + group * stride_zeros + (n_idx // codes_per_word)[None, :],
                            mask=n_in[None, :], other=0)
        zero = ((zp_packed >> ((n_idx % codes_per_word) * bits)[None, :]) & maxq) + 1
        weight = (((packed >> code_bit) & maxq) - zero).to(tl.float16) * scale  # [BLOCK_SIZE_K, BLOCK_SIZE_N]

        total = tl.dot(grad, tl.trans(weight), total)

    tl.store(c_ptr + m_idx[:, None] * stride_cm + k_idx[None, :] * stride_ck, total.to(tl.float16),
             mask=m_in[:, None] & k_in[None, :])


@triton.autotune(configs=[triton.Config({"X_BLOCK": x}) for x in (128, 256, 512, 1024)], key=["numels"])
@triton.jit
def gptq_dequant_kernel_248(g_idx_ptr, scales_ptr, qweight_ptr, qzeros_ptr, out_ptr, numels,
                            maxq: tl.constexpr, bits: tl.constexpr, outfeatures: tl.constexpr,
                            num_groups: tl.constexpr, X_BLOCK: tl.constexpr):
    """Unpack a GPTQ weight into a dense fp16 [K, outfeatures] matrix, one
    flat run of X_BLOCK elements per program. A negative g_idx counts groups
    from the end."""
    per_word: tl.constexpr = 32 // bits
    flat = tl.program_id(0) * X_BLOCK + tl.arange(0, X_BLOCK)
    inside = flat < numels
    k = flat // outfeatures
    n = flat % outfeatures

    grp = tl.load(g_idx_ptr + k, mask=inside, other=0)
    grp = tl.where(grp < 0, grp + num_groups, grp)

    qword = tl.load(qweight_ptr + (k // per_word) * outfeatures + n, mask=inside, other=0)
    zword = tl.load(qzeros_ptr + grp * (outfeatures // per_word) + n // per_word, mask=inside, other=0)
    scale = tl.load(scales_ptr + grp * outfeatures + n, mask=inside, other=0.0)

    q = (qword >> (bits * (k % per_word))) & maxq
    z = 1 + ((zword >> (bits * (n % per_word))) & maxq)
    tl.store(out_ptr + flat, scale * (q - z).to(tl.float16), mask=inside)


# ---- AWQ -------------------------------------------------------------------------------------


@triton.jit
def _awq_nibble_shift(cols):
    # AWQ stores the eight columns of a word in the nibble order
    # [0, 4, 1, 5, 2, 6, 3, 7]; column lane j sits in nibble (j >> 1) | ((j & 1) << 2)
    lane = cols % 8
    return ((lane >> 1) | ((lane & 1) << 2)) * 4


@triton.jit
def awq_gemm_kernel(a_ptr, b_ptr, c_ptr, zeros_ptr, scales_ptr, M, N, K, group_size,
                    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                    SPLIT_K: tl.constexpr):
    """Partial products of A[M, K] (fp16) and an AWQ 4-bit weight [K, N]:
    split z of SPLIT_K takes the K blocks z, z + SPLIT_K, ... and writes its
    fp16 sum to c_ptr[z, M, N] (the caller adds the splits up)."""
    split = tl.program_id(1)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    tm = tl.program_id(0) // tiles_n
    tn = tl.program_id(0) % tiles_n

    rows = tm * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    row_ok = rows < M
    col_ok = cols < N
    words_per_row = N // 8
    word_col = (cols // 8)[None, :]
    nib = _awq_nibble_shift(cols)[None, :]

    partial = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float16)
    for kb in range(split, tl.cdiv(K, BLOCK_SIZE_K), SPLIT_K):
        ks = kb * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
        k_ok = ks < K
        tile_ok = k_ok[:, None] & col_ok[None, :]
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)

        grp = (ks // group_size)[:, None]
        qw = tl.load(b_ptr + ks[:, None] * words_per_row + word_col, mask=tile_ok, other=0)
        zw = tl.load(zeros_ptr + grp * words_per_row + word_col, mask=tile_ok, other=0)
        s = tl.load(scales_ptr + grp * N + cols[None, :], mask=tile_ok, other=0.0)
        w = (((qw >> nib) & 0xF) - ((zw >> nib) & 0xF)).to(tl.float16) * s

        partial = tl.dot(x, w, partial, out_dtype=tl.float16)

    dst = c_ptr + split * M * N + rows[:, None] * N + cols[None, :]
    tl.store(dst, partial, mask=row_ok[:, None] & col_ok[None, :])


@triton.jit
def awq_dequantize_kernel(qweight_ptr, scales_ptr, zeros_ptr, group_size, result_ptr, num_cols, num_rows,
                          BLOCK_SIZE_X: tl.constexpr, BLOCK_SIZE_Y: tl.constexpr):
    """Dense fp16 [num_rows, 8 * num_cols] from AWQ words [num_rows, num_cols]:
    a program covers BLOCK_SIZE_Y rows and BLOCK_SIZE_X words (8 columns each)."""
    out_cols = num_cols * 8
    r = tl.program_id(1) * BLOCK_SIZE_Y + tl.arange(0, BLOCK_SIZE_Y)
    c = tl.program_id(0) * (BLOCK_SIZE_X * 8) + tl.arange(0, BLOCK_SIZE_X * 8)
    wc = c // 8
    ok = (r < num_rows)[:, None] & (wc < num_cols)[None, :]
    nib = _awq_nibble_shift(c)[None, :]
    g = (r // group_size)[:, None]

    q = (tl.load(qweight_ptr + r[:, None] * num_cols + wc[None, :], mask=ok, other=0) >> nib) & 0xF
    z = (tl.load(zeros_ptr + g * num_cols + wc[None, :], mask=ok, other=0) >> nib) & 0xF
    s = tl.load(scales_ptr + g * out_cols + c[None, :], mask=ok, other=0.0)
    tl.store(result_ptr + r[:, None] * out_cols + c[None, :], (q - z).to(tl.float16) * s, mask=ok)


# ---- HQQ -------------------------------------------------------------------------------------


@triton.jit
def hqq_int4_matmul_kernel(a_ptr, b_ptr, c_ptr, scales_ptr, zeros_ptr, M, N, K,
                           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                           stride_scale_k, stride_scale_n,
                           QGROUP_SIZE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, acc_dtype: tl.constexpr = tl.float32):
    """C = A @ W with W[K, N] as uint8 [K // 2, N]: packed row r holds
    W[r] in its high nibble and W[r + K // 2] in its low nibble. Each packed
    block feeds two dots, one per half of K; zeros and scales are per
    (group of K, column), w = (q - z) * s."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    half_k = K // 2
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_n = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_N), BLOCK_N)
    offs_r = tl.arange(0, BLOCK_K)
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=acc_dtype)
    for r0 in range(0, half_k, BLOCK_K):
        rows = r0 + offs_r
        r_mask = rows < half_k
        packed = tl.load(b_ptr + rows[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                         mask=r_mask[:, None] & n_mask, other=0, eviction_policy="evict_first")
        hi = (packed >> 4) & 0xF
        lo = packed & 0xF
        # first half of K
        g_hi = (rows // QGROUP_SIZE)[:, None] * stride_scale_k + offs_n[None, :] * stride_scale_n
        s_hi = tl.load(scales_ptr + g_hi, mask=r_mask[:, None] & n_mask, other=0.0)
        z_hi = tl.load(zeros_ptr + g_hi, mask=r_mask[:, None] & n_mask, other=0.0)
        w_hi = ((hi.to(s_hi.dtype) - z_hi) * s_hi).to(a_ptr.dtype.element_ty)
        a_hi = tl.load(a_ptr + offs_m[:, None] * stride_am + rows[None, :] * stride_ak,
                       mask=m_mask & r_mask[None, :], other=0.0, eviction_policy="evict_last")
        acc = tl.dot(a_hi, w_hi, acc=acc, out_dtype=acc_dtype)
        # second half of K
        rows_lo = rows + half_k
        g_lo = (rows_lo // QGROUP_SIZE)[:, None] * stride_scale_k + offs_n[None, :] * stride_scale_n
        s_lo = tl.load(scales_ptr + g_lo, mask=r_mask[:, None] & n_mask, other=0.0)
        z_lo = tl.load(zeros_ptr + g_lo, mask=r_mask[:, None] & n_mask, other=0.0)
        w_lo = ((lo.to(s_lo.dtype) - z_lo) * s_lo).to(a_ptr.dtype.element_ty)
        a_lo = tl.load(a_ptr + offs_m[:, None] * stride_am + rows_lo[None, :] * stride_ak,
                       mask=m_mask & r_mask[None, :], other=0.0, eviction_policy="evict_last")
        acc = tl.dot(a_lo, w_lo, acc=acc, out_dtype=acc_dtype)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, c, mask=m_mask & n_mask)


# ---- gemlite ---------------------------------------------------------------------------------


def _splitk_prune(configs, nargs, **kwargs):
    # a config is usable only when K is a whole number of BLOCK_SIZE_K * SPLIT_K steps
    K = nargs["K"]
    return [cfg for cfg in configs if K % (cfg.kwargs["BLOCK_SIZE_K"] * cfg.kwargs["SPLIT_K"]) == 0]


@triton.jit
def _dequant_packed(words, shift, scale, zero, unpack_mask: tl.constexpr, W_group_mode: tl.constexpr,
                    meta_dtype: tl.constexpr):
    """The codes (words >> shift) & unpack_mask as weights of meta_dtype.
    W_group_mode 1: q - zero; 2: q * scale; 3: (q - zero) * scale, each step
    rounded to meta_dtype; 4: the affine q * scale + zero, rounded once."""
    q = (words >> shift) & unpack_mask
    if W_group_mode == 1:
        w = q.to(meta_dtype) - zero
    elif W_group_mode == 2:
        w = q.to(meta_dtype) * scale
    elif W_group_mode == 3:
        w = (q.to(meta_dtype) - zero) * scale
    else:
        w = tl.fma(q.to(tl.float32), scale.to(tl.float32), zero.to(tl.float32)).to(meta_dtype)
    return w


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "SPLIT_K": s,
                            "GROUP_SIZE_M": 8, "A_load_order": a}, num_warps=4, num_stages=2)
             for m in (16, 32) for n in (32, 64) for k in (32, 64) for s in (1, 2, 4) for a in (0, 1)],
    key=["M", "N", "K", "group_size", "elements_per_sample"],
    prune_configs_by={"early_config_prune": _splitk_prune},
    reset_to_zero=["c_ptr"],
)
@triton.jit
def gemm_splitK_int_kernel(a_ptr, b_ptr, c_ptr, scales_ptr, zeros_ptr, scales_a_ptr, M, N, K,
                           W_nbits: tl.constexpr, group_size: tl.constexpr, unpack_mask: tl.constexpr,
                           elements_per_sample: tl.constexpr,
                           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                           stride_meta_a_m, stride_meta_a_g, stride_meta_g, stride_meta_n,
                           input_dtype: tl.constexpr, output_dtype: tl.constexpr, acc_dtype: tl.constexpr,
                           meta_dtype: tl.constexpr,
                           channel_scale_mode: tl.constexpr, W_group_mode: tl.constexpr,
                           zero_is_scalar: tl.constexpr,
                           BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                           GROUP_SIZE_M: tl.constexpr, SPLIT_K: tl.constexpr, A_load_order: tl.constexpr,
                           meta_evict_policy: tl.constexpr = "", atomic_mode: tl.constexpr = "relaxed",
                           data_contiguous: tl.constexpr = True):
    """C[M, N] (+)= A[M, K] @ W[K, N] with W packed elements_per_sample codes
    per int32 word along K. Program (tile, s) of a SPLIT_K > 1 launch adds the
    K blocks s, s + SPLIT_K, ... into C with atomics (C starts zeroed);
    SPLIT_K == 1 stores. channel_scale_mode scales the accumulator by a
    per-column weight scale (1), a per-row activation scale (2) or both (3).
    """
    lin = tl.program_id(0)
    split = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    band_len = GROUP_SIZE_M * tiles_n
    band = lin // band_len
    band_m = band * GROUP_SIZE_M
    band_h = tl.minimum(tiles_m - band_m, GROUP_SIZE_M)
    pos = lin - band * band_len
    tm = band_m + pos % band_h
    tn = pos // band_h

    rm = tm * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    if data_contiguous:
        rn = tl.max_contiguous(tl.multiple_of(rn, BLOCK_SIZE_N), BLOCK_SIZE_N)
    m_ok = rm < M
    n_ok = rn < N
    rk = tl.arange(0, BLOCK_SIZE_K)

    if zero_is_scalar:
        zero_all = tl.load(zeros_ptr, eviction_policy=meta_evict_policy)

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)
    n_steps = K // (BLOCK_SIZE_K * SPLIT_K)
    for it in range(n_steps):
        kk = (it * SPLIT_K + split) * BLOCK_SIZE_K + rk
        if A_load_order == 0:
            x = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak, mask=m_ok[:, None], other=0.0)

        packed = tl.load(b_ptr + (kk // elements_per_sample)[:, None] * stride_bk + rn[None, :] * stride_bn,
                         mask=n_ok[None, :], other=0)
        meta_off = (kk // group_size)[:, None] * stride_meta_g + rn[None, :] * stride_meta_n
        if W_group_mode >= 2:
            scale = tl.load(scales_ptr + meta_off, mask=n_ok[None, :], other=0.0, eviction_policy=meta_evict_policy)
        else:
            scale = None
        if W_group_mode == 2:
            zero = None
        elif zero_is_scalar:
            zero = zero_all
        else:
            zero = tl.load(zeros_ptr + meta_off, mask=n_ok[None, :], other=0.0, eviction_policy=meta_evict_policy)
        w = _dequant_packed(packed, ((kk % elements_per_sample) * W_nbits)[:, None], scale, zero, unpack_mask,
                            W_group_mode, meta_dtype)

        if A_load_order == 1:
            x = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak, mask=m_ok[:, None], other=0.0)
        acc = tl.dot(x.to(input_dtype), w.to(input_dtype), acc, out_dtype=acc_dtype)

    if channel_scale_mode == 1:
        col_scale = tl.load(scales_ptr + rn * stride_meta_n, mask=n_ok, other=0.0, eviction_policy=meta_evict_policy)
        res = acc.to(meta_dtype) * col_scale[None, :]
    elif channel_scale_mode == 2:
        row_scale = tl.load(scales_a_ptr + rm * stride_meta_a_m, mask=m_ok, other=0.0,
                            eviction_policy=meta_evict_policy)
        res = acc.to(meta_dtype) * row_scale[:, None]
    elif channel_scale_mode == 3:
        col_scale = tl.load(scales_ptr + rn * stride_meta_n, mask=n_ok, other=0.0, eviction_policy=meta_evict_policy)
        row_scale = tl.load(scales_a_ptr + rm * stride_meta_a_m, mask=m_ok, other=0.0,
                            eviction_policy=meta_evict_policy)
        res = acc.to(meta_dtype) * (row_scale[:, None] * col_scale[None, :])
    else:
        res = acc
    res = res.to(output_dtype)

    dst = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    ok = m_ok[:, None] & n_ok[None, :]
    if SPLIT_K > 1:
        tl.atomic_add(dst, res, mask=ok, sem=atomic_mode)
    else:
        tl.store(dst, res, mask=ok)


@triton.jit
def _bitplane(words, k, nbits: tl.constexpr, per_word: tl.constexpr, mask: tl.constexpr):
    # the nbits-wide codes of rows k from a plane packed per_word codes to a word along K
    return (words >> ((k % per_word) * nbits)[:, None]) & mask


@triton.jit
def gemm_w3_bitplanes_kernel(a_ptr, b_1_ptr, b_2_ptr, c_ptr, scales_ptr, zeros_ptr, M, N, K,
                             W_nbits_1: tl.constexpr, W_nbits_2: tl.constexpr, group_size: tl.constexpr,
                             unpack_mask_1: tl.constexpr, unpack_mask_2: tl.constexpr,
                             elements_per_sample_1: tl.constexpr, elements_per_sample_2: tl.constexpr,
                             stride_am, stride_ak, stride_bk_1, stride_bn_1, stride_bk_2, stride_bn_2,
                             stride_cm, stride_cn, stride_meta, acc_dtype: tl.constexpr,
                             BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                             GROUP_SIZE_M: tl.constexpr):
    """C = A @ W for 3-bit codes kept as two planes: bit 0 in b_1 (W_nbits_1
    wide) and bits 1-2 in b_2 (W_nbits_2 wide); W = (code - zero) * scale in
    fp16 with per-group zeros and scales [K // group_size, N]."""
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    lin = tl.program_id(0)
    tm, tn = tl.swizzle2d(lin // tiles_n, lin % tiles_n, tiles_m, tiles_n, GROUP_SIZE_M)

    rm = tm * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    m_ok = rm < M
    n_ok = rn < N

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)
    for k0 in tl.range(0, K, BLOCK_SIZE_K, num_stages=2):
        rk = k0 + tl.arange(0, BLOCK_SIZE_K)
        k_ok = rk < K
        kn_ok = k_ok[:, None] & n_ok[None, :]
        x = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                    mask=m_ok[:, None] & k_ok[None, :], other=0.0)

        low = tl.load(b_1_ptr + (rk // elements_per_sample_1)[:, None] * stride_bk_1 + rn[None, :] * stride_bn_1,
                      mask=kn_ok, other=0)
        high = tl.load(b_2_ptr + (rk // elements_per_sample_2)[:, None] * stride_bk_2 + rn[None, :] * stride_bn_2,
                       mask=kn_ok, other=0)
        code = (_bitplane(high, rk, W_nbits_2, elements_per_sample_2, unpack_mask_2) << W_nbits_1) | \
            _bitplane(low, rk, W_nbits_1, elements_per_sample_1, unpack_mask_1)

        meta = (rk // group_size)[:, None] * stride_meta + rn[None, :]
        zero = tl.load(zeros_ptr + meta, mask=kn_ok, other=0.0)
        scale = tl.load(scales_ptr + meta, mask=kn_ok, other=0.0)
        acc = tl.dot(x, (code.to(tl.float16) - zero) * scale, acc, out_dtype=acc_dtype)

    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.float16),
             mask=m_ok[:, None] & n_ok[None, :])


# ---- decode GEMV -----------------------------------------------------------------------------


@triton.jit
def w4a16_gemv_kernel(x_ptr, qweight_ptr, scales_ptr, zeros_ptr, y_ptr, M, N, K,
                      stride_xm, stride_qk, stride_ym, stride_meta_g,
                      group_size: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    """y[M, N] = x[M, K] @ W for a handful of rows (BLOCK_M >= M); W[K, N]
    is eight nibbles per int32 along K. Each program owns BLOCK_N columns,
    walks K and reduces x * w over K with tl.sum."""
    pid_n = tl.program_id(0)
    PACKED_K: tl.constexpr = BLOCK_K // 8
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_p = tl.arange(0, PACKED_K)
    shifts = tl.arange(0, 8) * 4
    m_mask = offs_m < M
    n_mask = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rows = k0 // 8 + offs_p
        packed = tl.load(qweight_ptr + rows[:, None] * stride_qk + offs_n[None, :],
                         mask=(rows[:, None] < K // 8) & n_mask[None, :], other=0, eviction_policy="evict_first")
        q = (packed[:, None, :] >> shifts[None, :, None]) & 0xF
        q = tl.reshape(q, (BLOCK_K, BLOCK_N))
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_mask = offs_k < K
        meta = (offs_k // group_size)[:, None] * stride_meta_g + offs_n[None, :]
        s = tl.load(scales_ptr + meta, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        z = tl.load(zeros_ptr + meta, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        w = (q.to(tl.float32) - z.to(tl.float32)) * s.to(tl.float32)
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :],
                    mask=m_mask[:, None] & k_mask[None, :], other=0.0, eviction_policy="evict_last")
        acc += tl.sum(x.to(tl.float32)[:, :, None] * w[None, :, :], axis=1)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


# ---- W4A8 on int8 tensor cores ---------------------------------------------------------------


@triton.jit
def w4a8_int_matmul_kernel(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, M, N, K,
                           stride_am, stride_bk, stride_cm,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = (A_int8 @ W_int4) * a_scale[m] * b_scale[n]; W[K, N] is signed
    4-bit, eight codes per int32 along K, sign-extended by shifting the
    nibble to the top of the word and back (arithmetic shift)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    up = (28 - (offs_k % 8) * 4)[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + offs_k
        k_mask = kk < K
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + kk[None, :],
                    mask=(offs_m[:, None] < M) & k_mask[None, :], other=0)
        packed = tl.load(b_ptr + (kk // 8)[:, None] * stride_bk + offs_n[None, :],
                         mask=k_mask[:, None] & (offs_n[None, :] < N), other=0)
        b = ((packed << up) >> 28).to(tl.int8)
        acc += tl.dot(a, b, out_dtype=tl.int32)
    a_scale = tl.load(a_scale_ptr + offs_m, mask=offs_m < M, other=0.0)
    b_scale = tl.load(b_scale_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    c = acc.to(tl.float32) * a_scale[:, None] * b_scale[None, :]
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], c.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


# ---- bitsandbytes: int8 ----------------------------------------------------------------------


@triton.jit
def int8_vectorwise_quant_kernel(x_ptr, q_ptr, row_stats_ptr, outlier_cols_ptr, threshold, n_cols,
                                 stride_x, stride_q, BLOCK_SIZE: tl.constexpr):
    """Row-wise absmax int8 quantisation, one row per program:
    q = rint(x * 127 / absmax(row)), row_stats = absmax. With threshold > 0,
    entries with |x| >= threshold are outliers: their columns are flagged in
    outlier_cols_ptr and they are left out of the row (quantised as 0)."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    inside = offs < n_cols
    vals = tl.load(x_ptr + row * stride_x + offs, mask=inside, other=0.0).to(tl.float32)
    if threshold > 0.0:
        is_outlier = inside & (tl.abs(vals) >= threshold)
        tl.atomic_max(outlier_cols_ptr + offs, tl.full([BLOCK_SIZE], 1, tl.int32), mask=is_outlier)
        vals = tl.where(is_outlier, 0.0, vals)
    row_absmax = tl.max(tl.abs(vals), axis=0)
    quant = libdevice.rint(vals * (127.0 / row_absmax))
    tl.store(q_ptr + row * stride_q + offs, quant.to(tl.int8), mask=inside)
    tl.store(row_stats_ptr + row, row_absmax)


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def int8_matmul_mixed_dequantize_kernel(A, B, C, bias, state_x_ptr, state_w_ptr, M, N, K, divfactor,
                                        has_bias: tl.constexpr, stride_am, stride_ak, stride_bk, stride_bn,
                                        stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                        BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    """C (fp16) = state_w * state_x[m] * divfactor * (A_int8 @ B_int8) (+ bias),
    the product accumulated exactly in int32; state_x is the row-wise absmax
    of the activations, state_w the tensor-wise absmax of the weight."""
    lin = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    span = GROUP_M * tiles_n
    first_tm = (lin // span) * GROUP_M
    height = tl.minimum(tiles_m - first_tm, GROUP_M)
    tm = first_tm + (lin % span) % height
    tn = (lin % span) // height

    offs_m = tm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tn * BLOCK_N + tl.arange(0, BLOCK_N)
    m_in = offs_m < M
    n_in = offs_n < N
    a_rows = A + offs_m[:, None] * stride_am
    b_cols = B + offs_n[None, :] * stride_bn

    prod = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for kb in range(tl.cdiv(K, BLOCK_K)):
        offs_k = kb * BLOCK_K + tl.arange(0, BLOCK_K)
        if EVEN_K:
            a_tile = tl.load(a_rows + offs_k[None, :] * stride_ak, mask=m_in[:, None], other=0)
            b_tile = tl.load(b_cols + offs_k[:, None] * stride_bk, mask=n_in[None, :], other=0)
        else:
            k_in = offs_k < K
            a_tile = tl.load(a_rows + offs_k[None, :] * stride_ak, mask=m_in[:, None] & k_in[None, :], other=0)
            b_tile = tl.load(b_cols + offs_k[:, None] * stride_bk, mask=k_in[:, None] & n_in[None, :], other=0)
        prod += tl.dot(a_tile, b_tile, out_dtype=tl.int32)

    w_state = tl.load(state_w_ptr)
    x_state = tl.load(state_x_ptr + offs_m, mask=m_in, other=0.0)
    out = (w_state * (x_state[:, None] * (prod.to(tl.float32) * divfactor))).to(tl.float16)
    if has_bias:
        out += tl.load(bias + offs_n, mask=n_in, other=0.0)[None, :]
    tl.store(C + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, out,
             mask=m_in[:, None] & n_in[None, :])


# ---- bitsandbytes: blockwise -----------------------------------------------------------------


@triton.jit
def quantize_8bit_blockwise_kernel(A_ptr, code_ptr, absmax_ptr, out_ptr, n_elements, n_blocks,
                                   BLOCK_SIZE: tl.constexpr, CODE_SIZE: tl.constexpr,
                                   SPLIT_NUM_BLOCKS: tl.constexpr, SEARCH_STEPS: tl.constexpr):
    """Blockwise 8-bit quantisation against a sorted code: each BLOCK_SIZE block
    is divided by its absmax and every value becomes the index of the nearer
    of the two code entries that a SEARCH_STEPS-step bisection brackets it
    with. A program handles SPLIT_NUM_BLOCKS blocks, one per tile row."""
    blocks = tl.program_id(0) * SPLIT_NUM_BLOCKS + tl.arange(0, SPLIT_NUM_BLOCKS)
    elems = blocks[:, None] * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)[None, :]
    inside = elems < n_elements

    vals = tl.load(A_ptr + elems, mask=inside, other=0.0)
    amax = tl.max(tl.abs(vals), axis=1)
    tl.store(absmax_ptr + blocks, amax, mask=blocks < n_blocks)

    denom = tl.where(amax > 0.0, amax, 1.0)
    unit = tl.minimum(tl.maximum(vals / denom[:, None], -1.0), 1.0)

    lo = tl.zeros((SPLIT_NUM_BLOCKS, BLOCK_SIZE), dtype=tl.int32)
    hi = tl.full((SPLIT_NUM_BLOCKS, BLOCK_SIZE), CODE_SIZE - 1, dtype=tl.int32)
    for _ in range(SEARCH_STEPS):
        mid = (lo + hi) >> 1
        go_up = unit > tl.load(code_ptr + mid)
        lo = tl.where(go_up, mid, lo)
        hi = tl.where(go_up, hi, mid)

    below = unit - tl.load(code_ptr + lo)
    above = tl.load(code_ptr + hi) - unit
    idx = tl.where(tl.abs(below) <= tl.abs(above), lo, hi)
    tl.store(out_ptr + elems, idx.to(tl.uint8), mask=inside)


@triton.jit
def dequant_nf4_gather_kernel(a_ptr, c_ptr, code_ptr, absmax_q_ptr, code2_ptr, absmax2_ptr, offset,
                              num_paired_elements, num_output_elements, QUANT_BLOCK: tl.constexpr,
                              NESTED_BLOCK: tl.constexpr, SPLIT_SIZE: tl.constexpr):
    """NF4 dequantisation: byte i of a_ptr holds output 2i in its high nibble
    and 2i + 1 in its low one; the 16-entry codebook is held in registers and
    read with tl.gather. The absmax of each QUANT_BLOCK block is itself 8-bit
    quantised: code2[absmax_q] * absmax2[block // NESTED_BLOCK] + offset."""
    outs = tl.program_id(0) * (2 * SPLIT_SIZE) + tl.arange(0, 2 * SPLIT_SIZE)
    live = outs < num_output_elements
    byte = tl.load(a_ptr + outs // 2, mask=live & (outs // 2 < num_paired_elements), other=0).to(tl.int32)
    nibble = (byte >> (4 * (1 - outs % 2))) & 0xF

    book = tl.load(code_ptr + tl.arange(0, 16))
    value = tl.gather(book, nibble, axis=0)

    blk = outs // QUANT_BLOCK
    qa = tl.load(absmax_q_ptr + blk, mask=live, other=0).to(tl.int32)
    outer = tl.load(absmax2_ptr + blk // NESTED_BLOCK, mask=live, other=0.0)
    absmax = tl.load(code2_ptr + qa, mask=live, other=0.0) * outer + offset
    tl.store(c_ptr + outs, (value * absmax).to(c_ptr.dtype.element_ty), mask=live)


@triton.jit
def _nf4_lookup(q):
    # the NF4 levels are sorted, so each step of the chain raises the value
    # once the code reaches that level's index
    v = tl.full(q.shape, -1.0, tl.float32)
    v = tl.where(q >= 1, -0.6961928009986877, v)
    v = tl.where(q >= 2, -0.5250730514526367, v)
    v = tl.where(q >= 3, -0.39491748809814453, v)
    v = tl.where(q >= 4, -0.28444138169288635, v)
    v = tl.where(q >= 5, -0.18477343022823334, v)
    v = tl.where(q >= 6, -0.09105003625154495, v)
    v = tl.where(q >= 7, 0.0, v)
    v = tl.where(q >= 8, 0.07958029955625534, v)
    v = tl.where(q >= 9, 0.16093020141124725, v)
    v = tl.where(q >= 10, 0.24611230194568634, v)
    v = tl.where(q >= 11, 0.33791524171829224, v)
    v = tl.where(q >= 12, 0.44070982933044434, v)
    v = tl.where(q >= 13, 0.5626170039176941, v)
    v = tl.where(q >= 14, 0.7229568362236023, v)
    v = tl.where(q >= 15, 1.0, v)
    return v


@triton.jit
def _fp4_lookup(q):
    # bit 3 is the sign; bits 0-2 pick the magnitude through a tree of selects
    b0 = (q & 1) != 0
    b1 = (q & 2) != 0
    m01 = tl.where(b0, 0.005208333333, 0.0)
    m23 = tl.where(b0, 1.0, 0.66666667)
    m45 = tl.where(b0, 0.5, 0.33333333)
    m67 = tl.where(b0, 0.25, 0.16666667)
    mag = tl.where((q & 4) != 0, tl.where(b1, m67, m45), tl.where(b1, m23, m01))
    return tl.where((q & 8) != 0, -mag, mag)


@triton.jit
def gemv_4bit_kernel(x_ptr, w_ptr, absmax_ptr, out_ptr, N, K, stride_xm, stride_om,
                     QUANT_BLOCK: tl.constexpr, IS_NF4: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    """out[m, :] (bf16) = W[N, K] @ x[m, :] for a 4-bit W stored row-major two
    codes a byte (the even element in the high nibble), each QUANT_BLOCK run
    of elements with its own absmax. Program (i, m) computes BLOCK_N outputs
    of row m."""
    m = tl.program_id(1)
    n_offs = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_in = n_offs < N

    dots = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_offs = k0 + tl.arange(0, BLOCK_K)
        k_in = k_offs < K
        xs = tl.load(x_ptr + m * stride_xm + k_offs, mask=k_in, other=0.0).to(tl.float32)

        elem = n_offs[:, None] * K + k_offs[None, :]
        ok = n_in[:, None] & k_in[None, :]
        byte = tl.load(w_ptr + elem // 2, mask=ok, other=0).to(tl.int32)
        code = tl.where(elem % 2 == 0, byte >> 4, byte & 0xF)
        if IS_NF4:
            level = _nf4_lookup(code)
        else:
            level = _fp4_lookup(code)
        w = level * tl.load(absmax_ptr + elem // QUANT_BLOCK, mask=ok, other=0.0)
        dots += tl.sum(w * xs[None, :], axis=1)

    tl.store(out_ptr + m * stride_om + n_offs, dots.to(tl.bfloat16), mask=n_in)


# ---- fused MoE with GPTQ / AWQ weights -------------------------------------------------------


@triton.jit
def fused_moe_wna16_kernel(a_ptr, b_ptr, c_ptr, b_scale_ptr, b_zp_ptr, topk_weights_ptr, sorted_token_ids_ptr,
                           expert_ids_ptr, num_tokens_post_padded_ptr,
                           N: tl.constexpr, K: tl.constexpr, EM, num_valid_tokens,
                           stride_am, stride_ak, stride_be, stride_bk, stride_bn, stride_cm, stride_cn,
                           stride_bse, stride_bsk, stride_bsn, stride_bze, stride_bzk, stride_bzn,
                           block_k_divisible: tl.constexpr, group_size: tl.constexpr,
                           BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                           GROUP_SIZE_M: tl.constexpr, MUL_ROUTED_WEIGHT: tl.constexpr, top_k: tl.constexpr,
                           compute_type: tl.constexpr, has_zp: tl.constexpr, use_int4_w4a16: tl.constexpr,
                           use_int8_w8a16: tl.constexpr):
    """One expert GEMM over a block of routed tokens, weights int4 or int8.

    sorted_token_ids_ptr lists the (token, slot) pairs grouped by expert, each
    expert's run padded to BLOCK_SIZE_M with ids >= num_valid_tokens;
    expert_ids_ptr names the expert of every BLOCK_SIZE_M block (-1: an
    expert not held here, whose rows get zeros). Row t of C is
    A[t // top_k] @ dequant(B[expert]), times topk_weights[t] if
    MUL_ROUTED_WEIGHT. B is [E, K / 2, N] bytes with two K rows a byte (low
    nibble first) for int4, [E, K, N] for int8; codes are offset by a 4-bit
    zero point packed two a byte along N (has_zp) or by 8 / 128.
    """
    tl.static_assert(use_int4_w4a16 != use_int8_w8a16, "the weights are either int4 or int8")
    lin = tl.program_id(0)
    tiles_m = tl.cdiv(EM, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    span = GROUP_SIZE_M * tiles_n
    top = (lin // span) * GROUP_SIZE_M
    rows_here = tl.minimum(tiles_m - top, GROUP_SIZE_M)
    tm = top + (lin % span) % rows_here
    tn = (lin % span) // rows_here

    if tm * BLOCK_SIZE_M >= tl.load(num_tokens_post_padded_ptr):
        return

    slots = tm * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    tokens = tl.load(sorted_token_ids_ptr + slots, mask=slots < EM, other=num_valid_tokens)
    live = tokens < num_valid_tokens
    cols = tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dst = c_ptr + tokens[:, None] * stride_cm + cols[None, :] * stride_cn
    dst_ok = live[:, None] & (cols < N)[None, :]

    expert = tl.load(expert_ids_ptr + tm).to(tl.int64)
    if expert == -1:
        tl.store(dst, tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=compute_type), mask=dst_ok)
        return

    # columns past N wrap around (their results are never stored), so B needs no column mask
    wcols = cols % N
    x_rows = a_ptr + (tokens // top_k)[:, None] * stride_am
    w_cols = b_ptr + expert * stride_be + wcols[None, :] * stride_bn
    s_cols = b_scale_ptr + expert * stride_bse + wcols[None, :] * stride_bsn
    if has_zp:
        z_cols = b_zp_ptr + expert * stride_bze + (wcols // 2)[None, :] * stride_bzn
        z_bit = ((wcols % 2) * 4)[None, :]

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for kb in range(tl.cdiv(K, BLOCK_SIZE_K)):
        ks = kb * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
        if block_k_divisible:
            x_mask = live[:, None]
            w_mask = None
            w_other = None
        else:
            x_mask = live[:, None] & (ks < K)[None, :]
            w_mask = (ks < K)[:, None]
            w_other = 0
        x = tl.load(x_rows + ks[None, :] * stride_ak, mask=x_mask, other=0.0)

        if use_int4_w4a16:
            raw = tl.load(w_cols + (ks // 2)[:, None] * stride_bk, mask=w_mask, other=w_other)
            q = (raw.to(tl.int32) >> ((ks % 2) * 4)[:, None]) & 0xF
        else:
            q = tl.load(w_cols + ks[:, None] * stride_bk, mask=w_mask, other=w_other).to(tl.int32)

        grp = (ks // group_size)[:, None]
        scale = tl.load(s_cols + grp * stride_bsk, mask=w_mask, other=w_other)
        if has_zp:
            zraw = tl.load(z_cols + grp * stride_bzk, mask=w_mask, other=w_other)
            q = q - ((zraw.to(tl.int32) >> z_bit) & 0xF)
        elif use_int4_w4a16:
            q = q - 8
        else:
            q = q - 128
        w = (q.to(tl.float32) * scale.to(tl.float32)).to(compute_type)
        acc = tl.dot(x, w, acc)

    if MUL_ROUTED_WEIGHT:
        acc *= tl.load(topk_weights_ptr + tokens, mask=live, other=0.0)[:, None]
    tl.store(dst, acc.to(compute_type), mask=dst_ok)


# ---- W8A16 split-K ---------------------------------------------------------------------------


@triton.heuristics({"EVEN_K": lambda args: args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0})
@triton.jit
def w8a16_splitk_kernel(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_wk, stride_cm,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr):
    """C += (A @ W_int8) * scale[n] over the K split of program axis 2; the
    weight is converted to the activation's type before the dot and the
    per-channel scale is applied to each partial sum before the atomic add."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=m_mask, other=0.0)
            w = tl.load(w_ptrs, mask=n_mask, other=0)
        else:
            k_remaining = K - k * (BLOCK_K * SPLIT_K)
            a = tl.load(a_ptrs, mask=m_mask & (offs_k[None, :] < k_remaining), other=0.0)
            w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_remaining) & n_mask, other=0)
        acc = tl.dot(a, w.to(a.dtype), acc)
        a_ptrs += BLOCK_K * SPLIT_K
        w_ptrs += BLOCK_K * SPLIT_K * stride_wk
    scale = tl.load(scale_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc * scale[None, :]
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.atomic_add(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_mask & n_mask)
