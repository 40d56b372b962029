# Low-bit quantisation kernels written in the manner of torchao,
# bitsandbytes and gemlite.
#
# Integer side: row-wise int8 quantisation with llrint on a power-of-two
# padded row (row maxima stored as fp16 through the store's implicit
# cast); column-wise int8 quantisation written transposed with
# tl.extra.cuda.libdevice.rint; row-wise dequantisation through a
# module-level constexpr reciprocal; the int8 x int8 matmul with int32
# accumulation and a row/column-state dequantising epilogue split along K
# with atomics; the int8 matmul over block pointers whose group width is a
# rebound constexpr parameter; the inductor-style scaled int8 matmul that
# walks K downwards (range with a negative step) on wrapped, hinted
# offsets; int8 weight-only matmul converting the weight to the
# activation's dtype.
#
# Packed side: bit-packed W{4,2}A16 GEMM over int32 words packed along K
# with group-wise scales and zeros applied in one of the dequantisation
# modes (dtypes, packing and modes all constexprs); a reverse split-K GEMV
# that reads two K chunks per program, reshapes the activation into a
# column and publishes partial sums with atomics; a 1-bit GEMV over uint8
# containers applying scales and zeros by fma on int64 offsets; asymmetric
# int4 group quantisation packed two to a byte (reshape, split); signed
# int4 unpacked from int32 words by arithmetic shifts; 2-bit codes
# broadcast against a vector of shifts; NF4 dequantisation through a
# codebook table in memory and NF4/FP4 quantisation and dequantisation by
# comparison trees, nibbles paired with interleave.
#
# Float8 side: tensor-wise absolute maxima published with tl.atomic_max on
# float (a global and a per-row maximum from column splits); tensor-wise
# casts whose format is a dtype constexpr; row-wise casts with saturation
# by tl.where; block-wise activation (1 x BLOCK) and weight (BLOCK x BLOCK)
# quantisation, the weight dequantisation and the block-scaled fp8 GEMM;
# MX-style fp8 with e8m0 shared exponents taken from the float bits.
import triton
import triton.language as tl
from triton.language.extra import libdevice

# reciprocal of the int8 range, shared by the row-wise dequantisers
INV_127 = tl.constexpr(1.0 / 127.0)


# ---- int8 quantisation and matmul ----------------------------------------------------------------


@triton.autotune(
    configs=[triton.Config({}, num_stages=s, num_warps=w) for s in (1, 2, 4) for w in (1, 2, 4, 8)],
    key=["n_elements"],
)
@triton.jit
def _tao_quantize_rowwise(x_ptr, q_ptr, rowmax_ptr, n_elements, ROW: tl.constexpr, ROW_P2: tl.constexpr):
    # one program per row; the row is padded to a power of two and the
    # padding masked out of the maximum
    pid = tl.program_id(axis=0)
    cols = tl.arange(0, ROW_P2)
    offsets = pid * ROW + cols
    in_row = cols < ROW
    x = tl.load(x_ptr + offsets, mask=in_row)
    peak = tl.max(tl.where(in_row, tl.abs(x), 0), axis=0)
    # llrint gives int64; the store narrows it to the int8 buffer
    q = libdevice.llrint(127.0 * (x / peak))
    tl.store(q_ptr + offsets, q, mask=in_row)
    tl.store(rowmax_ptr + pid, peak)


@triton.jit
def _tao_quantize_colwise_transpose(x_ptr, qt_ptr, colmax_ptr, M, N, BLOCK_M: tl.constexpr):
    # one program per column: the column's absolute maximum, then the codes
    # written as row `col` of the transposed (N, M) output
    col = tl.program_id(0)
    rows = tl.arange(0, BLOCK_M)
    in_col = rows < M
    x = tl.load(x_ptr + rows * N + col, mask=in_col, other=0.0)
    peak = tl.max(tl.abs(x), axis=0)
    q = tl.extra.cuda.libdevice.rint(127.0 * x / peak)
    tl.store(qt_ptr + col * M + rows, q.to(tl.int8), mask=in_col)
    tl.store(colmax_ptr + col, peak)


@triton.jit
def _tao_dequantize_rowwise(q_ptr, rowmax_ptr, out_ptr, n_rows, ROW: tl.constexpr, ROW_P2: tl.constexpr):
    pid = tl.program_id(axis=0)
    cols = tl.arange(0, ROW_P2)
    in_row = (cols < ROW) & (pid < n_rows)
    q = tl.load(q_ptr + pid * ROW + cols, mask=in_row, other=0)
    peak = tl.load(rowmax_ptr + pid).to(tl.float32)
    y = q * (peak * INV_127)
    tl.store(out_ptr + pid * ROW + cols, y, mask=in_row)


def _tao_even_k(args):
    return args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0


@triton.heuristics({"EVEN_K": _tao_even_k})
@triton.jit
def _tao_int8_mm_rowwise_dequant(A, B, C, bias, state_x_ptr, state_w_ptr, M, N, K, divfactor,
                                 stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                                 HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr,
                                 EVEN_K: tl.constexpr):
    # C = (A_int8 @ B_int8) * state_x[m] * state_w[n] * divfactor (+ bias);
    # the K range is split over grid axis 1 and the partial products
    # accumulated into C with atomics (C starts zeroed)
    pid = tl.program_id(0)
    pid_z = tl.program_id(1)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    A = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        if EVEN_K:
            a = tl.load(A)
            b = tl.load(B)
        else:
            k_left = K - k * (BLOCK_K * SPLIT_K)
            a = tl.load(A, mask=rk[None, :] < k_left, other=0)
            b = tl.load(B, mask=rk[:, None] < k_left, other=0)
        acc += tl.dot(a, b)
        A += BLOCK_K * SPLIT_K * stride_ak
        B += BLOCK_K * SPLIT_K * stride_bk
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    w_factor = tl.load(state_w_ptr + rbn)[None, :]
    x_factor = tl.load(state_x_ptr + ram)[:, None]
    out = acc.to(tl.float32) * (w_factor * (x_factor * divfactor))
    if HAS_BIAS:
        # only the first K split adds the bias
        if pid_z == 0:
            out = out + tl.load(bias + rn, mask=rn < N, other=0.0)[None, :]
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    C = C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    if SPLIT_K == 1:
        tl.store(C, out, mask=mask)
    else:
        tl.atomic_add(C, out, mask=mask)


@triton.jit
def _tao_int_mm_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                          stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, ACC_TYPE: tl.constexpr = tl.int32):
    # grouped tile order; the group width is narrowed on the last group by
    # rebinding the constexpr parameter to a run-time value
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    GROUP_M = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % GROUP_M)
    pid_n = (pid % num_pid_in_group) // GROUP_M
    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_block = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_TYPE)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_block, boundary_check=(0, 1))
        b = tl.load(b_block, boundary_check=(0, 1))
        acc += tl.dot(a, b)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))
    c_block = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                                order=(1, 0))
    tl.store(c_block, acc, boundary_check=(0, 1))


@triton.jit
def _tao_int_scaled_mm(a_ptr, b_ptr, c_ptr, s1_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                       stride_cm, stride_cn, stride_s1m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    # C = (A_int8 @ B_int8) * s1[m]; K is walked downwards, the remaining
    # length masking the last step
    pid = tl.program_id(0)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    A = a_ptr + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = b_ptr + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(K, 0, -BLOCK_K):
        if EVEN_K:
            a = tl.load(A)
            b = tl.load(B)
        else:
            a = tl.load(A, mask=rk[None, :] < k, other=0.0)
            b = tl.load(B, mask=rk[:, None] < k, other=0.0)
        acc += tl.dot(a, b)
        A += BLOCK_K * stride_ak
        B += BLOCK_K * stride_bk
    idx_m = rm[:, None]
    idx_n = rn[None, :]
    mask = (idx_m < M) & (idx_n < N)
    flat = idx_n * stride_cn + idx_m * stride_cm
    row_scale = tl.load(s1_ptr + tl.broadcast_to(idx_m * stride_s1m, mask.shape), mask, eviction_policy="evict_last")
    tl.store(c_ptr + tl.broadcast_to(flat, mask.shape), acc * row_scale, mask)


@triton.jit
def _tao_int8_weight_only_mm(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_wk, stride_cm,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # bf16 activations times int8 weights converted to the activation's
    # dtype, scaled per output channel after the K loop
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + kk[None, :],
                    mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + kk[:, None] * stride_wk + offs_n[None, :],
                    mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0)
        acc = tl.dot(a, w.to(a.dtype), acc)
    scale = tl.load(scale_ptr + offs_n, mask=offs_n < N, other=0.0)
    out = (acc * scale[None, :]).to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], out,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


# ---- bit-packed weights ------------------------------------------------------------------------


@triton.jit
def _tao_dequantize(b, scales, zeros, q_shift, meta_dtype, unpack_mask, elements_per_sample: tl.constexpr,
                    W_group_mode: tl.constexpr):
    # unpack the codes of a packed word block, then apply the group
    # metadata: 1 shift only, 2 scale only, 3 (q - z) * s, 4 q * s + z
    if elements_per_sample > 1:
        b = (b >> q_shift) & unpack_mask
    if W_group_mode == 1:
        b = b.to(meta_dtype) - zeros
    if W_group_mode == 2:
        b = b.to(meta_dtype) * scales
    if W_group_mode == 3:
        b = (b.to(meta_dtype) - zeros) * scales
    if W_group_mode == 4:
        b = tl.fma(b.to(meta_dtype), scales, zeros)
    return b


def _tao_prune_configs(configs, nargs, **kwargs):
    # keep the tiles whose K step fits inside one quantisation group
    for config in configs:
        if config.kwargs["BLOCK_SIZE_K"] <= nargs["group_size"]:
            yield config


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8},
                           num_warps=w, num_stages=s)
             for m in (16, 32) for n in (32, 64) for k in (32, 64) for w in (4, 8) for s in (2, 3)],
    key=["M", "N", "K", "group_size", "elements_per_sample"],
    prune_configs_by={"early_config_prune": _tao_prune_configs},
    restore_value=["c_ptr"],
)
@triton.jit
def _tao_gemm_packed_int32(a_ptr, b_ptr, c_ptr, scales_ptr, zeros_ptr, M, N, K,
                           W_nbits: tl.constexpr, group_size: tl.constexpr, unpack_mask: tl.constexpr,
                           elements_per_sample: tl.constexpr,
                           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                           stride_meta_g, stride_meta_n,
                           input_dtype: tl.constexpr, output_dtype: tl.constexpr, acc_dtype: tl.constexpr,
                           meta_dtype: tl.constexpr, W_group_mode: tl.constexpr,
                           BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                           GROUP_SIZE_M: tl.constexpr, a_evict: tl.constexpr = "evict_last",
                           b_evict: tl.constexpr = "evict_first", meta_evict_policy: tl.constexpr = ""):
    # C = A @ dequant(B); B holds elements_per_sample W_nbits-bit codes per
    # int32 word along K, scales/zeros one row per group of K
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    pid_m, pid_n = tl.swizzle2d(pid_m, pid_n, num_pid_m, num_pid_n, GROUP_SIZE_M)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    offs_am = tl.max_contiguous(tl.multiple_of(offs_m, BLOCK_SIZE_M), BLOCK_SIZE_M)
    offs_bn = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_SIZE_N), BLOCK_SIZE_N)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    a_mask = offs_am[:, None] < M
    b_ptrs = b_ptr + ((offs_k[:, None] // elements_per_sample) * stride_bk + offs_bn[None, :] * stride_bn)
    q_shift = ((offs_k % elements_per_sample) * W_nbits).to(tl.int32)[:, None]
    scales_ptrs = scales_ptr + offs_bn[None, :] * stride_meta_n
    zeros_ptrs = zeros_ptr + offs_bn[None, :] * stride_meta_n
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)
    num_pid_k = tl.cdiv(K, BLOCK_SIZE_K)
    for k in range(num_pid_k):
        a = tl.load(a_ptrs, mask=a_mask, other=0.0, eviction_policy=a_evict)
        b = tl.load(b_ptrs, eviction_policy=b_evict)
        k_m = (k * BLOCK_SIZE_K) // group_size
        if W_group_mode >= 2:
            scales = tl.load(scales_ptrs + k_m * stride_meta_g, eviction_policy=meta_evict_policy)
        else:
            scales = None
        if W_group_mode == 1 or W_group_mode >= 3:
            zeros = tl.load(zeros_ptrs + k_m * stride_meta_g, eviction_policy=meta_evict_policy)
        else:
            zeros = None
        b = _tao_dequantize(b, scales, zeros, q_shift, meta_dtype, unpack_mask, elements_per_sample,
                            W_group_mode)
        acc = tl.dot(a, b.to(input_dtype), acc=acc, out_dtype=acc_dtype)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += (BLOCK_SIZE_K // elements_per_sample) * stride_bk
    acc = acc.to(output_dtype)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = tl.max_contiguous(tl.multiple_of(pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N), BLOCK_SIZE_N),
                                BLOCK_SIZE_N)
    c_ptrs = c_ptr + (offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn)
    tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def _tao_gemv_revsplitk(a_ptr, b_ptr, c_ptr, scales_ptr, zeros_ptr, M, N, K,
                        W_nbits: tl.constexpr, group_size: tl.constexpr, unpack_mask: tl.constexpr,
                        elements_per_sample: tl.constexpr, stride_am, stride_ak, stride_bk, stride_bn,
                        stride_cm, stride_cn, stride_meta_g, stride_meta_n,
                        input_dtype: tl.constexpr, acc_dtype: tl.constexpr, meta_dtype: tl.constexpr,
                        W_group_mode: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                        dump_b_val: tl.constexpr = 0, atomic_mode: tl.constexpr = "relaxed"):
    # y[m] += x[m] @ dequant(W) over two consecutive K chunks per program;
    # both chunks share one group of scales/zeros, loaded once
    pid = tl.program_id(axis=0)
    pid_k = tl.program_id(axis=1) * 2
    pid_m, pid_n = pid % M, pid // M
    offs_k = pid_k * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_bn = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_SIZE_N), BLOCK_SIZE_N)
    a_ptrs = a_ptr + pid_m * stride_am + offs_k * stride_ak
    b_ptrs = b_ptr + ((offs_k[:, None] // elements_per_sample) * stride_bk + offs_bn[None, :] * stride_bn)
    q_shift = ((offs_k % elements_per_sample) * W_nbits).to(tl.int32)[:, None]
    k_m = (pid_k * (BLOCK_SIZE_K / group_size)).to(tl.int32)
    if W_group_mode >= 2:
        scales = tl.load(scales_ptr + offs_bn[None, :] * stride_meta_n + k_m * stride_meta_g)
    else:
        scales = None
    zeros = tl.load(zeros_ptr + offs_bn[None, :] * stride_meta_n + k_m * stride_meta_g)
    # chunk 1
    a = tl.load(a_ptrs, eviction_policy="evict_last").reshape((BLOCK_SIZE_K, 1), can_reorder=False)
    b = tl.load(b_ptrs, eviction_policy="evict_first")
    b = _tao_dequantize(b, scales, zeros, q_shift, meta_dtype, unpack_mask, elements_per_sample, W_group_mode)
    if dump_b_val > 0:
        b = b.to(tl.float32) * dump_b_val
    acc = tl.sum(a.to(acc_dtype) * b.to(acc_dtype), axis=0, keep_dims=True)
    a_ptrs += BLOCK_SIZE_K * stride_ak
    b_ptrs += (BLOCK_SIZE_K // elements_per_sample) * stride_bk
    # chunk 2
    a = tl.load(a_ptrs, eviction_policy="evict_last").reshape((BLOCK_SIZE_K, 1), can_reorder=False)
    b = tl.load(b_ptrs, eviction_policy="evict_first")
    b = _tao_dequantize(b, scales, zeros, q_shift, meta_dtype, unpack_mask, elements_per_sample, W_group_mode)
    if dump_b_val > 0:
        b = b.to(tl.float32) * dump_b_val
    acc += tl.sum(a.to(acc_dtype) * b.to(acc_dtype), axis=0, keep_dims=True)
    if dump_b_val > 0:
        acc /= dump_b_val
    offs_cn = tl.max_contiguous(tl.multiple_of(pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N), BLOCK_SIZE_N),
                                BLOCK_SIZE_N)
    c_ptrs = c_ptr + (pid_m * stride_cm + offs_cn[None, :] * stride_cn)
    tl.atomic_add(c_ptrs, acc, sem=atomic_mode)


@triton.jit
def _tao_gemv_w1_uint8(x_ptr, w_ptr, scales_ptr, zeros_ptr, y_ptr, N, K, stride_wk, stride_meta_g,
                       GROUP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # 1-bit weights, eight rows of K per uint8, dequantised as
    # bit * scale + zero; offsets in int64 so huge K * N would not wrap
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    bit = (tl.arange(0, BLOCK_K) % 8).to(tl.uint8)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_mask = offs_k < K
        x = tl.load(x_ptr + offs_k, mask=k_mask, other=0.0).to(tl.float32)
        row = (offs_k // 8).to(tl.int64)
        packed = tl.load(w_ptr + row[:, None] * stride_wk + offs_n[None, :],
                         mask=k_mask[:, None] & n_mask[None, :], other=0)
        q = (packed >> bit[:, None]) & 1
        g = (offs_k // GROUP).to(tl.int64)[:, None] * stride_meta_g + offs_n[None, :]
        s = tl.load(scales_ptr + g, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        z = tl.load(zeros_ptr + g, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        w = tl.fma(q.to(tl.float32), s, z)
        acc += tl.sum(x[:, None] * w, axis=0)
    tl.store(y_ptr + offs_n, acc.to(y_ptr.dtype.element_ty), mask=n_mask)


@triton.jit
def _tao_int4_quant_pack(x_ptr, packed_ptr, scales_ptr, zeros_ptr, n_rows, N: tl.constexpr, GROUP: tl.constexpr,
                         ROWS: tl.constexpr, EPS: tl.constexpr):
    # asymmetric 4-bit group quantisation q = clamp(rint(x / s + z), 0, 15),
    # two codes per byte: even column in the low nibble
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    row_ok = rows < n_rows
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=row_ok[:, None], other=0.0)
    xg = tl.reshape(x, (ROWS, N // GROUP, GROUP))
    lo = tl.min(xg, axis=2)
    hi = tl.max(xg, axis=2)
    scale = tl.maximum((hi - lo) / 15.0, EPS)
    zero = tl.clamp(libdevice.rint(-lo / scale), 0.0, 15.0)
    q = libdevice.rint(xg / scale[:, :, None] + zero[:, :, None])
    q = tl.clamp(q, 0.0, 15.0).to(tl.uint8)
    pairs = tl.reshape(q, (ROWS, N // 2, 2))
    even, odd = tl.split(pairs)
    packed = (odd << 4) | even
    half = tl.arange(0, N // 2)
    tl.store(packed_ptr + rows[:, None] * (N // 2) + half[None, :], packed, mask=row_ok[:, None])
    gi = tl.arange(0, N // GROUP)
    tl.store(scales_ptr + rows[:, None] * (N // GROUP) + gi[None, :], scale, mask=row_ok[:, None])
    tl.store(zeros_ptr + rows[:, None] * (N // GROUP) + gi[None, :], zero, mask=row_ok[:, None])


@triton.jit
def _tao_int4_signed_unpack(w_ptr, scale_ptr, out_ptr, K, N, stride_wk, GROUP: tl.constexpr,
                            BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # signed int4 codes, eight per int32 word along K (code j in bits
    # 4j..4j+3), sign-extended by shifting the nibble to the top of the word
    # and back down arithmetically
    pid_k = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_k[:, None] < K) & (offs_n[None, :] < N)
    word = tl.load(w_ptr + (offs_k // 8).to(tl.int64)[:, None] * stride_wk + offs_n[None, :], mask=mask, other=0)
    up = (28 - 4 * (offs_k % 8))[:, None]
    q = (word << up) >> 28
    s = tl.load(scale_ptr + (offs_k // GROUP)[:, None] * N + offs_n[None, :], mask=mask, other=0.0)
    out = q.to(tl.float32) * s
    tl.store(out_ptr + offs_k.to(tl.int64)[:, None] * N + offs_n[None, :], out.to(tl.float16), mask=mask)


@triton.jit
def _tao_int2_unpack_broadcast(packed_ptr, scale_ptr, out_ptr, n_bytes, ROW_BYTES: tl.constexpr,
                               BLOCK: tl.constexpr):
    # four 2-bit codes per byte (lowest first), read as code - 1 in
    # {-1, 0, 1, 2} and scaled per row of 4 * ROW_BYTES outputs
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n_bytes
    b = tl.load(packed_ptr + offs, mask=ok, other=0)
    shifts = tl.arange(0, 4) * 2
    codes = (b[:, None] >> shifts[None, :].to(tl.uint8)) & 0x3
    vals = codes.to(tl.int32) - 1
    s = tl.load(scale_ptr + offs // ROW_BYTES, mask=ok, other=0.0)
    y = vals.to(tl.float32) * s[:, None]
    out_offs = offs[:, None] * 4 + tl.arange(0, 4)[None, :]
    tl.store(out_ptr + tl.reshape(out_offs, (BLOCK * 4,)), tl.reshape(y, (BLOCK * 4,)),
             mask=tl.reshape(tl.broadcast_to(ok[:, None], (BLOCK, 4)), (BLOCK * 4,)))


# ---- NF4 / FP4 -----------------------------------------------------------------------------------


@triton.jit
def _tao_nf4_dequant_codebook(a_ptr, c_ptr, code_ptr, absmax_ptr, num_paired_elements, num_output_elements,
                              QUANT_BLOCK: tl.constexpr, SPLIT_SIZE: tl.constexpr):
    # each byte holds two NF4 codes (high nibble first); the values come
    # from the 16-entry codebook in memory times the block's absmax
    pid = tl.program_id(axis=0)
    offsets = pid * SPLIT_SIZE + tl.arange(0, SPLIT_SIZE)
    mask = offsets < num_paired_elements
    a = tl.load(a_ptr + offsets, mask, eviction_policy="evict_first")
    first = a >> 4
    second = a & 0xF
    absmax = tl.load(absmax_ptr + offsets // (QUANT_BLOCK // 2), mask=mask, other=1.0, eviction_policy="evict_last")
    v_first = tl.load(code_ptr + first, eviction_policy="evict_last") * absmax
    v_second = tl.load(code_ptr + second, eviction_policy="evict_last") * absmax
    out = tl.interleave(v_first, v_second)
    offs = pid * SPLIT_SIZE * 2 + tl.arange(0, SPLIT_SIZE * 2)
    tl.store(c_ptr + offs, out, offs < num_output_elements)


@triton.jit
def _tao_nf4_quantize_tree(x_ptr, absmax_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr,
                           SPLIT_NUM_BLOCKS: tl.constexpr):
    # NF4 codes by a comparison tree over the block-normalised values
    # (thresholds are the midpoints of the codebook); codes paired into
    # bytes, the first of a pair in the high nibble
    PAIRED: tl.constexpr = SPLIT_NUM_BLOCKS * 2
    first_block = tl.program_id(0) * PAIRED
    offsets = first_block * BLOCK_SIZE + tl.arange(0, PAIRED * BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    xb = tl.reshape(x, (PAIRED, BLOCK_SIZE))
    absmax = tl.max(tl.abs(xb), axis=1)
    tl.store(absmax_ptr + first_block + tl.arange(0, PAIRED), absmax)
    v = tl.clamp(xb / absmax[:, None], -1.0, 1.0)
    code = tl.where(
        v > 0.03979014977812767,
        tl.where(v > 0.3893125355243683,
                 tl.where(v > 0.6427869200706482,
                          tl.where(v > 0.8614784181118011, 0b1111, 0b1110),
                          tl.where(v > 0.5016634166240692, 0b1101, 0b1100)),
                 tl.where(v > 0.2035212516784668,
                          tl.where(v > 0.2920137718319893, 0b1011, 0b1010),
                          tl.where(v > 0.1202552504837513, 0b1001, 0b1000))),
        tl.where(v > -0.33967943489551544,
                 tl.where(v > -0.13791173323988914,
                          tl.where(v > -0.045525018125772476, 0b0111, 0b0110),
                          tl.where(v > -0.23460740596055984, 0b0101, 0b0100)),
                 tl.where(v > -0.6106329262256622,
                          tl.where(v > -0.4599952697753906, 0b0011, 0b0010),
                          tl.where(v > -0.8480964004993439, 0b0001, 0b0000))))
    q = code.to(tl.uint8).reshape((PAIRED, BLOCK_SIZE // 2, 2))
    hi, lo = q.split()
    packed = hi << 4 | (lo & 0xF)
    out_offsets = first_block * BLOCK_SIZE // 2 + tl.arange(0, SPLIT_NUM_BLOCKS * BLOCK_SIZE)
    tl.store(out_ptr + out_offsets, tl.reshape(packed, (BLOCK_SIZE * SPLIT_NUM_BLOCKS,)),
             mask=out_offsets < (n_elements - n_elements // 2))


@triton.jit
def _tao_fp4_tree(val, absmax):
    # bitsandbytes' FP4: sign bit 3, magnitude from bits 2..0
    sign = tl.where((val & 0b1000) == 0b1000, -1.0, 1.0)
    b2 = (val & 0b0100) == 0b0100
    b1 = (val & 0b0010) == 0b0010
    b0 = (val & 0b0001) == 0b0001
    high = tl.where(b1, tl.where(b0, 0.25, 0.16666667), tl.where(b0, 0.5, 0.33333333))
    low = tl.where(b1, tl.where(b0, 1.0, 0.66666667), tl.where(b0, 0.005208333333, 0.0))
    return tl.where(b2, high, low) * sign * absmax


@triton.jit
def _tao_fp4_dequant(a_ptr, c_ptr, absmax_ptr, num_paired_elements, num_output_elements,
                     QUANT_BLOCK: tl.constexpr, SPLIT_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * SPLIT_SIZE + tl.arange(0, SPLIT_SIZE)
    mask = offsets < num_paired_elements
    a = tl.load(a_ptr + offsets, mask, eviction_policy="evict_first")
    absmax = tl.load(absmax_ptr + offsets // (QUANT_BLOCK // 2), mask=mask, other=1.0)
    out = tl.interleave(_tao_fp4_tree(a >> 4, absmax), _tao_fp4_tree(a & 0xF, absmax))
    offs = pid * SPLIT_SIZE * 2 + tl.arange(0, SPLIT_SIZE * 2)
    tl.store(c_ptr + offs, out, offs < num_output_elements)


# ---- float8 ----------------------------------------------------------------------------------------


@triton.jit
def _tao_amax_atomic(x_ptr, amax_ptr, row_amax_ptr, n_cols, stride_row, BLOCK: tl.constexpr,
                     SEM: tl.constexpr):
    # grid (rows, column splits): each program reduces a slice of a row and
    # publishes its absolute maximum to the row's and the tensor's maxima
    # (both start at zero, so a float atomic max on non-negative values is
    # exact)
    row = tl.program_id(0)
    split = tl.program_id(1)
    n_splits = tl.num_programs(1)
    part = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(split * BLOCK, n_cols, n_splits * BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row.to(tl.int64) * stride_row + cols, mask=cols < n_cols, other=0.0)
        part = tl.maximum(part, tl.abs(x.to(tl.float32)))
    m = tl.max(part, axis=0)
    tl.atomic_max(row_amax_ptr + row, m, sem=SEM)
    tl.atomic_max(amax_ptr, m)


@triton.jit
def _tao_fp8_tensorwise_cast(x_ptr, amax_ptr, q_ptr, scale_inv_ptr, n_elements, OUT_DTYPE: tl.constexpr,
                             EPS: tl.constexpr, BLOCK: tl.constexpr):
    # tensor-wise scaling: s = fp8_max / max(amax, eps), codes of
    # clamp(x * s) in the format OUT_DTYPE; 1/s published by program 0
    if OUT_DTYPE == tl.float8e4nv:
        FP8_MAX: tl.constexpr = 448.0
    else:
        FP8_MAX: tl.constexpr = 57344.0
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    amax = tl.load(amax_ptr).to(tl.float32)
    scale = FP8_MAX / tl.maximum(amax, EPS)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.clamp(x * scale, -FP8_MAX, FP8_MAX)
    tl.store(q_ptr + offs, y.to(OUT_DTYPE).to(tl.uint8, bitcast=True), mask=mask)
    if pid == 0:
        tl.store(scale_inv_ptr, 1.0 / scale)


@triton.jit
def _tao_fp8_rowwise_quant(x_ptr, q_ptr, scale_ptr, n_rows, n_cols, stride_xm, stride_qm,
                           USE_E5M2: tl.constexpr, EPS: tl.constexpr, BLOCK_N: tl.constexpr):
    # row-wise scaling in two passes over the row: the absolute maximum,
    # then x * s saturated with tl.where before the cast
    if USE_E5M2:
        fp8_dtype: tl.constexpr = tl.float8e5
        fp8_max: tl.constexpr = 57344.0
    else:
        fp8_dtype: tl.constexpr = tl.float8e4nv
        fp8_max: tl.constexpr = 448.0
    row = tl.program_id(0)
    amax = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for c0 in tl.range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n_cols, other=0.0)
        amax = tl.maximum(amax, tl.abs(x).to(tl.float32))
    scale = fp8_max / tl.maximum(tl.max(amax), EPS)
    for c0 in tl.range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        y = x * scale
        y = tl.where(y > fp8_max, fp8_max, y)
        y = tl.where(y < -fp8_max, -fp8_max, y)
        tl.store(q_ptr + row * stride_qm + cols, y.to(fp8_dtype).to(tl.uint8, bitcast=True), mask=cols < n_cols)
    tl.store(scale_ptr + row, 1.0 / scale)


@triton.jit
def _tao_fp8_blockwise_act_quant(x_ptr, y_ptr, s_ptr, BLOCK_SIZE: tl.constexpr):
    # one scale per BLOCK_SIZE consecutive elements: s = amax / 448; the
    # e4m3 codes stored through the output pointer's own element type
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs).to(tl.float32)
    s = tl.max(tl.abs(x)) / 448.0
    y = (x / s).to(tl.float8e4nv)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty, bitcast=True))
    tl.store(s_ptr + pid, s)


@triton.jit
def _tao_fp8_weight_quant(x_ptr, y_ptr, s_ptr, M, N, BLOCK_SIZE: tl.constexpr):
    # BLOCK_SIZE x BLOCK_SIZE tiles, one scale each (row-major over the
    # tile grid); ragged edge tiles are masked
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    n_tiles = tl.cdiv(N, BLOCK_SIZE)
    offs_m = pid_m * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs_n = pid_n * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs = offs_m[:, None] * N + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.max(tl.abs(x)) / 448.0
    y = (x / s).to(tl.float8e4nv)
    tl.store(y_ptr + offs, y.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(s_ptr + pid_m * n_tiles + pid_n, s)


@triton.jit
def _tao_fp8_weight_dequant(q_ptr, s_ptr, y_ptr, M, N, BLOCK_SIZE: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    n_tiles = tl.cdiv(N, BLOCK_SIZE)
    offs_m = pid_m * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs_n = pid_n * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs = offs_m[:, None] * N + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    q = tl.load(q_ptr + offs, mask=mask, other=0).to(tl.float8e4nv, bitcast=True)
    s = tl.load(s_ptr + pid_m * n_tiles + pid_n)
    tl.store(y_ptr + offs, q.to(tl.float32) * s, mask=mask)


@triton.jit
def _tao_fp8_block_gemm(a_ptr, b_ptr, c_ptr, a_s_ptr, b_s_ptr, M, N, K: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                        BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    # C = A @ B^T with e4m3 A (M, K), B (N, K); A scaled per (row,
    # K block), B per (BLOCK_SIZE_N rows, K block); each K block's partial
    # product is scaled before it is accumulated
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    k_blocks = tl.cdiv(K, BLOCK_SIZE_K)
    offs_m = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_n = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[None, :] * K + offs_k[:, None]
    a_s_ptrs = a_s_ptr + offs_m * k_blocks
    b_s_ptrs = b_s_ptr + (offs_n // BLOCK_SIZE_N) * k_blocks
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(k_blocks):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - i * BLOCK_SIZE_K, other=0).to(tl.float8e4nv, bitcast=True)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - i * BLOCK_SIZE_K, other=0).to(tl.float8e4nv, bitcast=True)
        a_s = tl.load(a_s_ptrs)
        b_s = tl.load(b_s_ptrs)
        acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K
        a_s_ptrs += 1
        b_s_ptrs += 1
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptr + offs_cm[:, None] * N + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _tao_mxfp8_quant(x_ptr, q_ptr, e8m0_ptr, n_rows, n_cols, ROW_TILE: tl.constexpr, INNER: tl.constexpr,
                     COLS: tl.constexpr):
    # MX fp8: one shared power-of-two scale per INNER consecutive elements,
    # floor(log2(amax)) read from the float's exponent field minus e4m3's
    # largest exponent (8); stored biased as an e8m0 byte
    pid = tl.program_id(0)
    rows = pid * ROW_TILE + tl.arange(0, ROW_TILE)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    xb = tl.reshape(x, (ROW_TILE, COLS // INNER, INNER))
    amax = tl.max(tl.abs(xb), axis=2)
    bits = amax.to(tl.int32, bitcast=True)
    unbiased = ((bits >> 23) & 0xFF) - 127
    shared = tl.minimum(tl.maximum(unbiased - 8, -127), 127)
    biased = (shared + 127).to(tl.uint8)
    scale = ((shared + 127).to(tl.int32) << 23).to(tl.float32, bitcast=True)
    y = xb / scale[:, :, None]
    y = tl.where(y > 448.0, 448.0, tl.where(y < -448.0, -448.0, y))
    codes = tl.reshape(y.to(tl.float8e4nv).to(tl.uint8, bitcast=True), (ROW_TILE, COLS))
    tl.store(q_ptr + rows[:, None] * n_cols + cols[None, :], codes, mask=mask)
    gcols = tl.arange(0, COLS // INNER)
    tl.store(e8m0_ptr + rows[:, None] * (n_cols // INNER) + gcols[None, :], biased,
             mask=(rows[:, None] < n_rows) & (gcols[None, :] < n_cols // INNER))


# ---- split-K -----------------------------------------------------------------------------------


@triton.jit
def _tao_splitk_gemm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    # program (tile, k) walks K in steps of BLOCK_K * SPLIT_K and adds its
    # partial tile into the zeroed fp32 output with atomics
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_N), BLOCK_N)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_left = K - k * BLOCK_K * SPLIT_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.atomic_add(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N), sem="relaxed")
