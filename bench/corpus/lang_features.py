"""Kernels built on the less common language features, each at a size a
model runs it: MoE routing that takes the top-k experts of a softmax with
tl.topk over (probability, expert) keys packed into int64, a first-order
linear recurrence (HGRN / linear-RNN style) scanned with
tl.associative_scan over (a, b) pairs and carried from block to block,
torch.bucketize as a per-element binary search in a data-dependent while
loop, a bincount with tl.histogram per tile and one atomic per bin per
program, tanh-GELU whose tanh is PTX's tanh.approx through
tl.inline_asm_elementwise (one value at a time, and two at a time packed to
f16x2 by the asm), and a per-row column permutation done inside the tile
with tl.gather."""
import triton
import triton.language as tl


# ---- MoE routing: softmax, then top-k on packed keys ---------------------------------------

@triton.jit
def moe_router_topk_sort_kernel(logits_ptr, topk_weights_ptr, topk_ids_ptr, num_tokens,
                                stride_t, NUM_EXPERTS: tl.constexpr, TOPK: tl.constexpr,
                                BLOCK_T: tl.constexpr, RENORMALIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs_t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_e = tl.arange(0, NUM_EXPERTS)
    t_mask = offs_t < num_tokens
    logits = tl.load(logits_ptr + offs_t[:, None].to(tl.int64) * stride_t + offs_e[None, :],
                     mask=t_mask[:, None], other=0.0).to(tl.float32)
    logits = logits - tl.max(logits, axis=1)[:, None]
    probs = tl.exp(logits)
    probs = probs / tl.sum(probs, axis=1)[:, None]
    # tl.topk returns values only, so the expert rides along in the key: probabilities are
    # non-negative, so their fp32 bits order as the values do; in the high word they rank
    # the key, and the low word holds NUM_EXPERTS-1-e so that equal probabilities pick the
    # lower expert first. Unpacking gives the weight back bit-exactly.
    bits = probs.to(tl.int32, bitcast=True).to(tl.int64)
    keys = (bits << 32) | (NUM_EXPERTS - 1 - offs_e)[None, :].to(tl.int64)
    top = tl.topk(keys, TOPK, dim=1)
    weights = (top >> 32).to(tl.int32).to(tl.float32, bitcast=True)
    ids = NUM_EXPERTS - 1 - (top & 0xFFFF).to(tl.int32)
    if RENORMALIZE:
        weights = weights / tl.sum(weights, axis=1)[:, None]
    offs_k = tl.arange(0, TOPK)
    out = offs_t[:, None].to(tl.int64) * TOPK + offs_k[None, :]
    tl.store(topk_weights_ptr + out, weights, mask=t_mask[:, None])
    tl.store(topk_ids_ptr + out, ids, mask=t_mask[:, None])


# ---- first-order linear recurrence: an associative scan over (a, b) ------------------------

@triton.jit
def _first_order_combine(a_l, b_l, a_r, b_r):
    # applying h -> a_l * h + b_l, then h -> a_r * h + b_r
    return a_l * a_r, a_r * b_l + b_r


@triton.jit
def linear_recurrence_scan_kernel(a_ptr, b_ptr, h_ptr, h0_ptr, ht_ptr, C, T, stride_c,
                                  BLOCK_C: tl.constexpr, BLOCK_T: tl.constexpr,
                                  USE_INITIAL_STATE: tl.constexpr,
                                  STORE_FINAL_STATE: tl.constexpr):
    # h[c, t] = a[c, t] * h[c, t-1] + b[c, t], a program per block of channels walking
    # the sequence a block at a time
    i_c = tl.program_id(0)
    offs_c = i_c * BLOCK_C + tl.arange(0, BLOCK_C)
    c_mask = offs_c < C
    row = offs_c.to(tl.int64)[:, None] * stride_c
    if USE_INITIAL_STATE:
        h = tl.load(h0_ptr + offs_c, mask=c_mask, other=0.0).to(tl.float32)
    else:
        h = tl.zeros([BLOCK_C], dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        offs_t = t0 + tl.arange(0, BLOCK_T)
        mask = c_mask[:, None] & (offs_t[None, :] < T)
        # steps past T are the identity (a=1, b=0), so the block's last column is the
        # state after its last real step
        a = tl.load(a_ptr + row + offs_t[None, :], mask=mask, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + row + offs_t[None, :], mask=mask, other=0.0).to(tl.float32)
        # the carried state enters through the block's first step: b0 + a0 * h
        b = tl.where(offs_t[None, :] == t0, b + a * h[:, None], b)
        _, hs = tl.associative_scan((a, b), axis=1, combine_fn=_first_order_combine)
        tl.store(h_ptr + row + offs_t[None, :], hs, mask=mask)
        h = tl.sum(tl.where(offs_t[None, :] == t0 + BLOCK_T - 1, hs, 0.0), axis=1)
    if STORE_FINAL_STATE:
        tl.store(ht_ptr + offs_c, h, mask=c_mask)


# ---- torch.bucketize: a binary search per element -----------------------------------------

@triton.jit
def bucketize_while_search_kernel(x_ptr, boundaries_ptr, out_ptr, n, n_boundaries,
                                  RIGHT: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    # [lo, hi) is each element's remaining range; lanes past n start empty
    lo = tl.zeros([BLOCK], dtype=tl.int32)
    hi = tl.where(mask, n_boundaries, 0)
    # the block loops until its slowest element has finished (a while condition is one
    # scalar), finished elements just keep their bounds
    remaining = tl.max(hi - lo, axis=0)
    while remaining > 0:
        active = lo < hi
        mid = (lo + hi) >> 1
        b = tl.load(boundaries_ptr + mid, mask=active, other=0.0)
        if RIGHT:
            go_right = b <= x
        else:
            go_right = b < x
        lo = tl.where(active & go_right, mid + 1, lo)
        hi = tl.where(active & ~go_right, mid, hi)
        remaining = tl.max(hi - lo, axis=0)
    tl.store(out_ptr + offs, lo.to(tl.int64), mask=mask)


# ---- bincount through tl.histogram ----------------------------------------------------------

@triton.jit
def histogram_blocks_kernel(x_ptr, hist_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr,
                            TILES_PER_PROGRAM: tl.constexpr):
    # each program counts TILES_PER_PROGRAM consecutive tiles in registers, then adds its
    # NBINS counts to the global histogram: one atomic per bin per program, not per element
    pid = tl.program_id(0)
    counts = tl.zeros([NBINS], dtype=tl.int32)
    for i in range(TILES_PER_PROGRAM):
        offs = (pid * TILES_PER_PROGRAM + i).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x_ptr + offs, mask=mask, other=0)
        counts += tl.histogram(v, NBINS, mask=mask)
    tl.atomic_add(hist_ptr + tl.arange(0, NBINS), counts, sem="relaxed")


# ---- tanh-GELU with tanh.approx through inline PTX -----------------------------------------

@triton.jit
def _tanh_approx_f32(x):
    return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32,
                                     is_pure=True, pack=1)


@triton.jit
def _tanh_exact_f32(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def gelu_tanh_asm_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, USE_ASM: tl.constexpr):
    # USE_ASM=False is the portable path (and the one an interpreter can run: it runs
    # no PTX)
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    if USE_ASM:
        t = _tanh_approx_f32(inner)
    else:
        t = _tanh_exact_f32(inner)
    y = 0.5 * x * (1.0 + t)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def gelu_tanh_asm_f16x2_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, USE_ASM: tl.constexpr):
    # the epilogue in one asm block per pair of elements: two tanh.approx, two fma for
    # 0.5x * (1 + t), and one cvt that rounds both into the f16x2 register the store
    # takes. Operands: $0 the packed result, $1 $2 the pair's inner, $3 $4 its 0.5x.
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    half_x = 0.5 * x
    if USE_ASM:
        y = tl.inline_asm_elementwise(
            "{\n"
            ".reg .f32 t0, t1;\n"
            "tanh.approx.f32 t0, $1;\n"
            "tanh.approx.f32 t1, $2;\n"
            "fma.rn.f32 t0, t0, $3, $3;\n"
            "fma.rn.f32 t1, t1, $4, $4;\n"
            "cvt.rn.f16x2.f32 $0, t1, t0;\n"
            "}",
            "=r,f,f,f,f", [inner, half_x], dtype=tl.float16, is_pure=True, pack=2)
    else:
        y = (half_x * _tanh_exact_f32(inner) + half_x).to(tl.float16)
    tl.store(y_ptr + offs, y, mask=mask)


# ---- a per-row permutation of a tile's columns --------------------------------------------

@triton.jit
def gather_rows_permute_kernel(x_ptr, perm_ptr, out_ptr, M, stride_x, stride_p, stride_o,
                               N: tl.constexpr, BLOCK_M: tl.constexpr):
    # out[m, j] = x[m, perm[m, j]]: the row is read once, coalesced, and permuted inside
    # the tile, instead of a gathered load per element
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, N)
    m_mask = offs_m[:, None] < M
    rows = offs_m.to(tl.int64)[:, None]
    x = tl.load(x_ptr + rows * stride_x + offs_n[None, :], mask=m_mask, other=0.0)
    perm = tl.load(perm_ptr + rows * stride_p + offs_n[None, :], mask=m_mask, other=0)
    y = tl.gather(x, perm, axis=1)
    tl.store(out_ptr + rows * stride_o + offs_n[None, :], y, mask=m_mask)
