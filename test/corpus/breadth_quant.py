"""Quantised-GEMM and mixture-of-experts kernels in the manner of serving
and quantisation libraries: int4 weights packed two per byte along N and
eight per int32 along K, unpacked with shifts and masks inside the K loop
and dequantised with group-wise scales and zero points; int8 x int8 dots
into int32 with per-row and per-column scales; a dynamic per-token int8
quantiser; fp8 e4m3/e5m2 quantise and dequantise through byte bitcasts and
an fp8 dot; expert alignment (counts with atomics, padded offsets with a
cumsum, a sorted token list); a fused-MoE GEMM reading rows through sorted
token ids; a gather through int64 addresses cast back to typed pointers."""
import triton
import triton.language as tl


@triton.jit
def _swizzle(pid, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # GROUP_M row tiles share each column tile so B stays in L2 across them
    width = GROUP_M * num_pid_n
    group_id = pid // width
    first_m = group_id * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % group_rows
    pid_n = (pid % width) // group_rows
    return pid_m, pid_n


@triton.jit
def w4a16_n_packed_kernel(a_ptr, qw_ptr, scales_ptr, qzeros_ptr, c_ptr, M, N, K,
                          stride_am, stride_qk, stride_sg, stride_zg, stride_cm,
                          GROUP_SIZE: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # qw is [K, N // 2] bytes: column 2j in the low nibble, 2j + 1 in the high
    # one; qzeros packs the group zero points the same way
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.max_contiguous(tl.multiple_of(pid_n * BLOCK_N + tl.arange(0, BLOCK_N), BLOCK_N),
                               BLOCK_N)
    offs_hn = pid_n * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + kk[None, :],
                    mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        packed = tl.load(qw_ptr + kk[:, None] * stride_qk + offs_hn[None, :],
                         mask=kk[:, None] < K, other=0)
        # uint8 shifts are logical, so the high nibble needs no mask
        w = tl.join(packed & 0xF, packed >> 4).reshape(BLOCK_K, BLOCK_N)
        g = kk // GROUP_SIZE
        zp = tl.load(qzeros_ptr + g[:, None] * stride_zg + offs_hn[None, :])
        z = tl.interleave(zp & 0xF, (zp >> 4) & 0xF)
        s = tl.load(scales_ptr + g[:, None] * stride_sg + offs_n[None, :])
        b = (w.to(tl.int32) - z.to(tl.int32)).to(tl.float16) * s
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def w4_k_packed_kernel(a_ptr, qw_ptr, scales_ptr, qzeros_ptr, c_ptr, M, N, K,
                       stride_am, stride_qk, stride_sg, stride_zg, stride_cm,
                       SYMMETRIC: tl.constexpr, GROUP_SIZE: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # qw is [K // 8, N] int32 with row k in bits 4 * (k % 8); zero points are
    # eight per int32 along N; SYMMETRIC weights are signed nibbles instead
    tl.assume(stride_am > 0)
    tl.assume(K % BLOCK_K == 0)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.multiple_of(offs_n, BLOCK_N)
    tl.max_contiguous(offs_n, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    shifts = (offs_k % 8) * 4
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + kk[None, :], mask=offs_m[:, None] < M,
                    other=0.0)
        qw = tl.load(qw_ptr + (kk // 8)[:, None] * stride_qk + offs_n[None, :])
        g = k0 // GROUP_SIZE
        s = tl.load(scales_ptr + g * stride_sg + offs_n)
        if SYMMETRIC:
            # move the nibble to the top, then an arithmetic shift extends its sign
            w = (qw << (28 - shifts)[:, None]) >> 28
        else:
            w = (qw >> shifts[:, None]) & 0xF
            zw = tl.load(qzeros_ptr + g * stride_zg + offs_n // 8)
            w = w - ((zw >> ((offs_n % 8) * 4)) & 0xF)[None, :]
        b = w.to(tl.float32) * s[None, :]
        acc += tl.dot(a.to(tl.float32), b)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc, mask=offs_m[:, None] < M)


@triton.jit
def int8_scaled_mm_kernel(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, bias_ptr, c_ptr, M, N, K,
                          stride_am, stride_bk, stride_cm, HAS_BIAS: tl.constexpr,
                          RAW_INT32: tl.constexpr, GROUP_M: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tl.assume(stride_am > 0)
    tl.assume(stride_bk > 0)
    tl.assume(M > 0)
    pid = tl.program_id(0)
    pid_m, pid_n = _swizzle(pid, tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if RAW_INT32:
        tl.store(c_ptrs, acc, mask=c_mask)
    else:
        sa = tl.load(a_scale_ptr + offs_m, mask=offs_m < M, other=0.0)
        sb = tl.load(b_scale_ptr + offs_n, mask=offs_n < N, other=0.0)
        out = acc.to(tl.float32) * sa[:, None] * sb[None, :]
        if HAS_BIAS:
            out += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
        tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=c_mask)


@triton.jit
def per_token_quant_int8_kernel(x_ptr, q_ptr, scale_ptr, N, stride_x, stride_q,
                                BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x)), 1e-10)
    scale = absmax / 127.0
    y = x / scale
    # float-to-int conversion truncates, so round half away from zero first
    q = tl.where(y >= 0, y + 0.5, y - 0.5).to(tl.int8)
    tl.store(q_ptr + row * stride_q + cols, q, mask=mask)
    tl.store(scale_ptr + row, scale)


@triton.jit
def fp8_quant_kernel(x_ptr, scale_ptr, codes_ptr, deq_ptr, n, E5M2: tl.constexpr,
                     BLOCK: tl.constexpr):
    # fp8 tensors travel as bytes: the codes are stored through a bitcast
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    inv = 1.0 / tl.load(scale_ptr)
    if E5M2:
        y = tl.clamp(x * inv, -57344.0, 57344.0).to(tl.float8e5)
    else:
        y = tl.clamp(x * inv, -448.0, 448.0).to(tl.float8e4nv)
    tl.store(codes_ptr + offs, y.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(deq_ptr + offs, y.to(tl.float32) * tl.load(scale_ptr), mask=mask)


@triton.jit
def fp8_scaled_mm_kernel(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, c_ptr, M, N, K,
                         stride_am, stride_bn, stride_cm, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A is [M, K] and B is [N, K] e4m3 bytes; per-row scales for A, per-column for B
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = (a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]).to(tl.pointer_type(tl.float8e4nv))
    b_ptrs = b_ptr.to(tl.pointer_type(tl.float8e4nv)) + offs_n[None, :] * stride_bn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    sa = tl.load(a_scale_ptr + offs_m, mask=offs_m < M, other=0.0)
    sb = tl.load(b_scale_ptr + offs_n, mask=offs_n < N, other=0.0)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :],
             (acc * sa[:, None] * sb[None, :]).to(tl.bfloat16),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def fp8_codes_dequant_kernel(codes_ptr, scale_ptr, out_ptr, n, E5M2: tl.constexpr,
                             BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    raw = tl.load(codes_ptr + offs, mask=mask, other=0)
    if E5M2:
        v = raw.to(tl.float8e5, bitcast=True)
    else:
        v = raw.to(tl.float8e4nv, bitcast=True)
    tl.store(out_ptr + offs, v.to(tl.float16) * tl.load(scale_ptr).to(tl.float16), mask=mask)


@triton.jit
def moe_count_kernel(topk_ids_ptr, counts_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    ids = tl.load(topk_ids_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + ids, tl.full([BLOCK], 1, tl.int32), mask=mask)


@triton.jit
def moe_align_kernel(topk_ids_ptr, sorted_ids_ptr, expert_ids_ptr, cumsum_ptr,
                     num_post_pad_ptr, numel, NUM_EXPERTS: tl.constexpr,
                     EXPERT_PAD: tl.constexpr, BLOCK_SIZE: tl.constexpr, TOK_BLOCK: tl.constexpr,
                     MAX_PADDED: tl.constexpr, MAX_BLOCKS: tl.constexpr):
    # one program: tokens grouped by expert, each expert's run padded to a
    # multiple of BLOCK_SIZE, padding slots holding numel; the order within
    # an expert is the token order, so the result is deterministic
    # experts past NUM_EXPERTS never match a token: their runs are empty
    experts = tl.arange(0, EXPERT_PAD)
    toks = tl.arange(0, TOK_BLOCK)
    counts = tl.zeros([EXPERT_PAD], dtype=tl.int32)
    for t0 in range(0, numel, TOK_BLOCK):
        ids = tl.load(topk_ids_ptr + t0 + toks, mask=t0 + toks < numel, other=-1)
        counts += tl.sum((ids[:, None] == experts[None, :]).to(tl.int32), axis=0)
    padded = tl.cdiv(counts, BLOCK_SIZE) * BLOCK_SIZE
    ends = tl.cumsum(padded, axis=0)
    starts = ends - padded
    total = tl.sum(padded)
    tl.store(cumsum_ptr, 0)
    tl.store(cumsum_ptr + 1 + experts, ends, mask=experts < NUM_EXPERTS)
    tl.store(num_post_pad_ptr, total)
    slots = tl.arange(0, MAX_PADDED)
    tl.store(sorted_ids_ptr + slots, tl.full([MAX_PADDED], 0, tl.int32) + numel)
    blocks = tl.arange(0, MAX_BLOCKS)
    # the expert of a block is the number of experts whose run ends at or before it
    owner = tl.sum((ends[None, :] <= (blocks * BLOCK_SIZE)[:, None]).to(tl.int32), axis=1)
    tl.store(expert_ids_ptr + blocks, tl.where(blocks * BLOCK_SIZE < total, owner, -1))
    tl.debug_barrier()
    seen = tl.zeros([EXPERT_PAD], dtype=tl.int32)
    for t0 in range(0, numel, TOK_BLOCK):
        tmask = t0 + toks < numel
        ids = tl.load(topk_ids_ptr + t0 + toks, mask=tmask, other=-1)
        hit = (ids[:, None] == experts[None, :]).to(tl.int32)
        rank = tl.cumsum(hit, axis=0) - 1 + seen[None, :] + starts[None, :]
        pos = tl.sum(tl.where(hit != 0, rank, 0), axis=1)
        tl.store(sorted_ids_ptr + pos, t0 + toks, mask=tmask)
        seen += tl.sum(hit, axis=0)


@triton.jit
def fused_moe_kernel(a_ptr, b_ptr, c_ptr, b_scale_ptr, topk_weights_ptr, sorted_token_ids_ptr,
                     expert_ids_ptr, num_tokens_post_padded_ptr, N, K, EM, num_valid_tokens,
                     stride_am, stride_be, stride_bn, stride_cm, stride_bse,
                     MUL_ROUTED_WEIGHT: tl.constexpr, TOP_K: tl.constexpr,
                     USE_INT8_W8A16: tl.constexpr, GROUP_M: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # B is [E, N, K]; each block of sorted slots belongs to one expert; slots
    # holding num_valid_tokens or more are padding
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(EM, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = _swizzle(pid, tiles_m, tiles_n, GROUP_M)
    used = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_M < used:
        slot = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        tok = tl.load(sorted_token_ids_ptr + slot).to(tl.int64)
        live = tok < num_valid_tokens
        expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        cmask = cols < N
        ks = tl.arange(0, BLOCK_K)
        a_rows = a_ptr + (tok // TOP_K)[:, None] * stride_am
        b_cols = b_ptr + expert * stride_be + cols[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            kin = k0 + ks < K
            x = tl.load(a_rows + (k0 + ks)[None, :], mask=live[:, None] & kin[None, :], other=0.0)
            w = tl.load(b_cols + (k0 + ks)[:, None], mask=kin[:, None] & cmask[None, :], other=0)
            acc += tl.dot(x, w.to(x.dtype))
        if USE_INT8_W8A16:
            sc = tl.load(b_scale_ptr + expert * stride_bse + cols, mask=cmask, other=0.0)
            acc = acc * sc.to(tl.float32)[None, :]
        if MUL_ROUTED_WEIGHT:
            gate = tl.load(topk_weights_ptr + tok, mask=live, other=0.0)
            acc = acc * gate.to(tl.float32)[:, None]
        tl.store(c_ptr + tok[:, None] * stride_cm + cols[None, :],
                 acc.to(c_ptr.dtype.element_ty), mask=live[:, None] & cmask[None, :])


@triton.jit
def addr_gather_kernel(x_ptr, idx_ptr, addr_ptr, out_ptr, n_rows, stride_x,
                       D: tl.constexpr, BLOCK_R: tl.constexpr):
    # rows are reached through a table of raw int64 addresses, as when the
    # host hands a kernel a list of tensors' data pointers
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = r < n_rows
    src = tl.load(idx_ptr + r, mask=rmask, other=0).to(tl.int64)
    tl.store(addr_ptr + r, (x_ptr + src * stride_x).to(tl.int64), mask=rmask)
    tl.debug_barrier()
    rows = tl.load(addr_ptr + r, mask=rmask, other=0).to(tl.pointer_type(tl.float16))
    d = tl.arange(0, D)
    v = tl.load(rows[:, None] + d[None, :], mask=rmask[:, None], other=0.0)
    tl.store(out_ptr + r[:, None] * D + d[None, :], v * 2.0, mask=rmask[:, None])
