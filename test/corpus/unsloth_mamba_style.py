# Training and inference kernels written in the manner of unsloth,
# mamba_ssm and lightllm.
#
# unsloth side: rotary embeddings applied in place, one program per token
# row looping over a group of heads (the kernel wrapped by calling
# triton.jit and triton.heuristics as functions), and a Q/K variant with
# its own batch/head/sequence strides, an optional position table and a
# runtime branch on the head index; cross-entropy forward with Gemma-style
# logit softcapping and Cohere-style logit scaling, over the whole vocabulary
# or over vocabulary chunks, and the backward that overwrites the logits with
# their gradient; SwiGLU forward and in-place backward with an int64
# indexing switch in a helper returning (offsets, mask), GeGLU forward
# (exact, erf) and in-place backward (tanh approximation); RMS norm
# (with Gemma's 1 + w) and LayerNorm forward and backward, the backward
# writing dX over dY.
#
# mamba side: the single-step selective state update with optional dt bias,
# D skip and z gate (heuristics on `is not None`), softplus on dt; the
# gated RMS/LayerNorm over groups of columns, norm before or after the
# gate; the SSD chunk kernels: cumulative sum of dt*A per chunk (autotuned
# head block, clamped dt), chunk states through tl.dot, state passing
# across chunks, C.B^T of each chunk with a causal early return, and the
# chunk scan that combines the previous state and the intra-chunk terms.
#
# lightllm side: decode attention in two stages through a request-to-token
# table (scores, then softmax and the weighted sum of V), prefill attention
# over packed sequences described by b_start_loc/b_seq_len, rotary
# embedding over (token, head, dim) blocks with cos/sin caches, copying new
# K/V rows into a cache at destination indices (plain and int8 with a
# per-head scale), silu_and_mul over a 2-D grid and a looped RMS norm.
import triton
import triton.language as tl
from triton.language.extra import libdevice

# ---- shared helpers ------------------------------------------------------------------------------


@triton.jit
def _uns_tanh(x):
    # tanh through the sigmoid, stable for large |x|
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def _as_int64(x):
    return tl.cast(x, tl.int64)


@triton.jit
def _mb_softplus(dt):
    # log(1 + e^dt), left alone past the point where it equals dt in fp32
    return tl.where(dt <= 20.0, tl.log(1.0 + tl.exp(dt)), dt)


# ---- unsloth: rotary embeddings ------------------------------------------------------------------


def _uns_rope_heads_inplace(
    Q,
    q_batch_stride,
    q_seq_stride,
    cos,
    sin,
    cs_row_stride: tl.constexpr,
    position_ids,
    seqlen,
    n_heads: tl.constexpr,
    head_dim: tl.constexpr,
    HEAD_GROUP: tl.constexpr,
    BACKWARD_PASS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    token = tl.program_id(0)
    group = tl.program_id(1)
    half = head_dim // 2
    offs = tl.arange(0, BLOCK_SIZE)
    in_half = offs < half

    b = token // seqlen
    t = token - b * seqlen
    pos = tl.load(position_ids + token)
    c = tl.load(cos + pos * cs_row_stride + offs, mask=in_half, other=0)
    s = tl.load(sin + pos * cs_row_stride + offs, mask=in_half, other=0)
    if BACKWARD_PASS:
        # the transpose of a rotation is the rotation by -theta
        s = -s

    base = Q + b * q_batch_stride + t * q_seq_stride
    first_head = group * HEAD_GROUP
    last_head = min(first_head + HEAD_GROUP, n_heads)
    for h in range(first_head, last_head):
        lo_ptr = base + h * head_dim + offs
        x_lo = tl.load(lo_ptr, mask=in_half, other=0).to(c.dtype)
        x_hi = tl.load(lo_ptr + half, mask=in_half, other=0).to(c.dtype)
        tl.store(lo_ptr, x_lo * c - x_hi * s, mask=in_half)
        tl.store(lo_ptr + half, x_hi * c + x_lo * s, mask=in_half)


_uns_rope_heads_inplace = triton.jit(_uns_rope_heads_inplace)
_uns_rope_heads_inplace = triton.heuristics(
    {"BACKWARD_PASS": lambda args: bool(args["BACKWARD_PASS"])}
)(_uns_rope_heads_inplace)


@triton.heuristics(
    {
        "BACKWARD_PASS": lambda args: bool(args["BACKWARD_PASS"]),
        "HAS_ROPE_INDICES": lambda args: bool(args["HAS_ROPE_INDICES"]),
    }
)
@triton.jit
def _uns_rope_qk_strided(
    Q, q_stride_b, q_stride_h, q_stride_s,
    K, k_stride_b, k_stride_h, k_stride_s,
    cos, sin, cs_stride,
    rope_indices,
    seqlen,
    head_dim: tl.constexpr,
    n_heads_K: tl.constexpr,
    BACKWARD_PASS: tl.constexpr,
    HAS_ROPE_INDICES: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # the whole head at once: each lane reads its rotation partner
    row = tl.program_id(0)
    head = tl.program_id(1)
    offs = tl.arange(0, BLOCK_SIZE)
    half: tl.constexpr = head_dim // 2
    valid = offs < head_dim
    partner = tl.where(offs < half, offs + half, offs - half)
    sign = tl.where(offs < half, -1.0, 1.0)

    if HAS_ROPE_INDICES:
        pos = tl.load(rope_indices + row, eviction_policy="evict_first").to(tl.int32)
    else:
        pos = row % seqlen
    freq = tl.where(offs < half, offs, offs - half)
    c = tl.load(cos + pos * cs_stride + freq, mask=valid, other=0.0).to(tl.float32)
    s = tl.load(sin + pos * cs_stride + freq, mask=valid, other=0.0).to(tl.float32)
    if BACKWARD_PASS:
        sign = -sign

    b = row // seqlen
    t = row % seqlen
    q_row = Q + b * q_stride_b + head * q_stride_h + t * q_stride_s
    q = tl.load(q_row + offs, mask=valid, other=0.0).to(tl.float32)
    q_p = tl.load(q_row + partner, mask=valid, other=0.0).to(tl.float32)
    tl.store(q_row + offs, q * c + sign * q_p * s, mask=valid)

    if head < n_heads_K:
        k_row = K + b * k_stride_b + head * k_stride_h + t * k_stride_s
        k = tl.load(k_row + offs, mask=valid, other=0.0).to(tl.float32)
        k_p = tl.load(k_row + partner, mask=valid, other=0.0).to(tl.float32)
        tl.store(k_row + offs, k * c + sign * k_p * s, mask=valid)


# ---- unsloth: cross-entropy ----------------------------------------------------------------------


@triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)
@triton.jit
def _uns_xent_fwd(
    logits_ptr,
    logits_row_stride,
    loss_ptr,
    lse_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    row = tl.program_id(0)
    logits_ptr += row * _as_int64(logits_row_stride)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < VOCAB_SIZE

    label = tl.load(labels_ptr + row).to(tl.int32)
    z = tl.load(logits_ptr + cols, mask=mask, other=-float("inf")).to(tl.float32)
    if DO_LOGIT_SCALING:
        z = LOGIT_SCALE * z
    if DO_SOFTCAPPING:
        z = SOFTCAP * _uns_tanh(z / SOFTCAP)
        # the cap maps the -inf padding to -SOFTCAP: mask it out again
        z = tl.where(mask, z, -float("inf"))

    zmax = tl.max(z, 0)
    lse = zmax + tl.log(tl.sum(tl.exp(z - zmax), 0))

    if label != -100:
        picked = tl.load(logits_ptr + label).to(tl.float32)
        if DO_LOGIT_SCALING:
            picked = LOGIT_SCALE * picked
        if DO_SOFTCAPPING:
            picked = SOFTCAP * _uns_tanh(picked / SOFTCAP)
        loss = lse - picked
    else:
        loss = 0.0
    tl.store(lse_ptr + row, lse)
    tl.store(loss_ptr + row, loss)


def _uns_xent_chunked_fwd(
    logits_ptr,
    logits_row_stride: tl.constexpr,
    loss_ptr,
    lse_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    N_CHUNKS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    # one logsumexp per (row, chunk); chunk 0 also writes -z[label], the
    # host adds the logsumexp of the chunks' logsumexps
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    logits_ptr += row * tl.cast(logits_row_stride, tl.int64)
    lse_ptr += row * N_CHUNKS + chunk

    cols = chunk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < VOCAB_SIZE
    label = tl.load(labels_ptr + row).to(tl.int32)
    z = tl.load(logits_ptr + cols, mask=mask, other=-float("inf")).to(tl.float32)
    if DO_LOGIT_SCALING:
        z = LOGIT_SCALE * z
    if DO_SOFTCAPPING:
        z = tl.where(mask, SOFTCAP * _uns_tanh(z / SOFTCAP), -float("inf"))
    zmax = tl.max(z, 0)
    tl.store(lse_ptr, zmax + tl.log(tl.sum(tl.exp(z - zmax), 0)))

    if chunk == 0:
        if label != -100:
            picked = tl.load(logits_ptr + label).to(tl.float32)
            if DO_LOGIT_SCALING:
                picked = LOGIT_SCALE * picked
            if DO_SOFTCAPPING:
                picked = SOFTCAP * _uns_tanh(picked / SOFTCAP)
            loss = -1.0 * picked
        else:
            loss = 0.0
        tl.store(loss_ptr + row, loss)


_uns_xent_chunked_fwd = triton.jit(_uns_xent_chunked_fwd)
_uns_xent_chunked_fwd = triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)(_uns_xent_chunked_fwd)


@triton.heuristics(
    {
        "DO_SOFTCAPPING": lambda args: bool(args["DO_SOFTCAPPING"]),
        "DO_LOGIT_SCALING": lambda args: bool(args["DO_LOGIT_SCALING"]),
    }
)
@triton.jit
def _uns_xent_bwd_inplace(
    logits_ptr,
    logits_row_stride: tl.constexpr,
    dloss_ptr,
    dloss_row_stride: tl.constexpr,
    lse_ptr,
    labels_ptr,
    VOCAB_SIZE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    DO_SOFTCAPPING: tl.constexpr,
    SOFTCAP: tl.constexpr,
    DO_LOGIT_SCALING: tl.constexpr,
    LOGIT_SCALE: tl.constexpr,
):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    logits_ptr += row * _as_int64(logits_row_stride)
    # a mean loss hands every row the same gradient: stride 0
    dloss_ptr += row * dloss_row_stride
    cols = blk * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < VOCAB_SIZE
    label = tl.load(labels_ptr + row).to(tl.int32)
    if label != -100:
        g = tl.load(dloss_ptr)
    else:
        g = 0.0

    z = tl.load(logits_ptr + cols, mask=mask, other=-float("inf")).to(tl.float32)
    if DO_LOGIT_SCALING:
        z = z * LOGIT_SCALE
    th = z
    if DO_SOFTCAPPING:
        th = _uns_tanh(z / SOFTCAP)
        z = SOFTCAP * th
    lse = tl.load(lse_ptr + row)
    p = tl.exp(z - lse)
    p = tl.where(cols == label, p - 1.0, p)
    if DO_LOGIT_SCALING:
        p = p * LOGIT_SCALE
    if DO_SOFTCAPPING:
        p = p * (1.0 - th * th)
    tl.store(logits_ptr + cols, g * p, mask=mask)


# ---- unsloth: gated MLP activations --------------------------------------------------------------


@triton.jit
def _uns_block_offsets(n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    # past 2**31 elements the offsets need 64 bits
    if LONG_INDEXING:
        offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
        limit = tl.cast(n_elements, tl.int64)
    else:
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        limit = n_elements
    return offs, offs < limit


@triton.jit
def _uns_swiglu_fwd(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    offs, live = _uns_block_offsets(n_elements, BLOCK_SIZE, LONG_INDEXING)
    gate = tl.load(e + offs, mask=live, other=0).to(tl.float32)
    up = tl.load(g + offs, mask=live, other=0)
    # silu in fp32, rounded to the activation dtype before the product (as HF)
    silu = (gate * tl.sigmoid(gate)).to(up.dtype)
    tl.store(h + offs, silu * up, mask=live)


@triton.jit
def _uns_swiglu_bwd_inplace(DW, e, g, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    # overwrites the three inputs: DW <- silu(e) * g, e <- DW * silu(e),
    # g <- DW * g * silu'(e)
    offs, live = _uns_block_offsets(n_elements, BLOCK_SIZE, LONG_INDEXING)
    grad = tl.load(DW + offs, mask=live, other=0)
    gate = tl.load(e + offs, mask=live, other=0).to(tl.float32)
    up = tl.load(g + offs, mask=live, other=0)
    sg = tl.sigmoid(gate)
    silu = (gate * sg).to(grad.dtype)
    d_gate = (grad * up).to(tl.float32) * sg * (1.0 + gate * (1.0 - sg))
    tl.store(DW + offs, silu * up, mask=live)
    tl.store(e + offs, grad * silu, mask=live)
    tl.store(g + offs, d_gate.to(grad.dtype), mask=live)


@triton.jit
def _uns_geglu_exact_fwd(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    gate = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    up = tl.load(g + offsets, mask=mask, other=0)
    act = 0.5 * gate * (tl.math.erf(tl.math.rsqrt(2.0) * gate) + 1.0)
    tl.store(h + offsets, act.to(up.dtype) * up, mask=mask)


@triton.jit
def _uns_geglu_approx_bwd_inplace(DW, e, g, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    dw = tl.load(DW + offsets, mask=mask, other=0)
    gate = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    up = tl.load(g + offsets, mask=mask, other=0)
    s = 0.7978845608028654  # sqrt(2 / pi)
    inner = s * gate * (1.0 + 0.044715 * gate * gate)
    t = libdevice.tanh(inner)
    half_t1 = 0.5 * (t + 1.0)
    act = half_t1 * gate
    d_act = half_t1 + 0.5 * gate * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * gate * gate)
    act = act.to(dw.dtype)
    d_up = dw * up
    tl.store(DW + offsets, act * up, mask=mask)
    tl.store(e + offsets, dw * act, mask=mask)
    tl.store(g + offsets, (d_up.to(tl.float32) * d_act).to(dw.dtype), mask=mask)


# ---- unsloth: RMS norm and LayerNorm -------------------------------------------------------------


@triton.jit
def _uns_rms_fwd(
    Y, Y_row_stride,
    X, X_row_stride,
    W, W_row_stride,
    r, r_row_stride,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    GEMMA: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    Y += row_idx * Y_row_stride
    X += row_idx * X_row_stride
    r += row_idx * r_row_stride

    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0)
    inv_rms = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(r, inv_rms)
    normed = x * inv_rms
    if GEMMA:
        # Gemma keeps the whole computation in float32 and scales by 1 + w
        y = normed * (w.to(tl.float32) + 1.0)
    else:
        y = normed.to(w.dtype) * w
    tl.store(Y + cols, y, mask=mask)


@triton.heuristics({"GEMMA": lambda args: bool(args["GEMMA"])})
@triton.jit
def _uns_rms_bwd_inplace(
    dY, dY_row_stride,
    X, X_row_stride,
    W, W_row_stride,
    r, r_row_stride,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    GEMMA: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    dY += row_idx * dY_row_stride
    X += row_idx * X_row_stride
    r += row_idx * r_row_stride

    dy = tl.load(dY + cols, mask=mask, other=0).to(tl.float32)
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0).to(tl.float32)
    inv_rms = tl.load(r).to(tl.float32)
    normed = x * inv_rms
    if GEMMA:
        dy_w = dy * (w + 1.0)
    else:
        dy_w = dy * w
    dot = tl.sum(dy_w * normed, axis=0)
    dx = inv_rms / n_cols * (n_cols * dy_w - normed * dot)
    tl.store(dY + cols, dx, mask=mask)


@triton.jit
def _uns_layernorm_fwd(
    Y, Y_row_stride,
    X, X_row_stride,
    W, b,
    r, mu,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    Y += row_idx * Y_row_stride
    X += row_idx * X_row_stride

    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0).to(tl.float32)
    bias = tl.load(b + cols, mask=mask, other=0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / n_cols
    inv_var = tl.math.rsqrt(var + eps)
    tl.store(r + row_idx, inv_var)
    tl.store(mu + row_idx, mean)
    tl.store(Y + cols, centred * inv_var * w + bias, mask=mask)


@triton.jit
def _uns_layernorm_bwd_inplace(
    dY, dY_row_stride,
    X, X_row_stride,
    W, b,
    r, mu,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    dY += row_idx * dY_row_stride
    X += row_idx * X_row_stride

    dy = tl.load(dY + cols, mask=mask, other=0).to(tl.float32)
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0).to(tl.float32)
    inv_var = tl.load(r + row_idx).to(tl.float32)
    mean = tl.load(mu + row_idx).to(tl.float32)
    normed = (x - mean) * inv_var
    dy_w = dy * w
    dx = dy_w - tl.sum(dy_w, axis=0) / n_cols - normed * tl.sum(dy_w * normed, axis=0) / n_cols
    dx = dx * inv_var
    tl.store(dY + cols, dx, mask=mask)


# ---- mamba: selective state update ---------------------------------------------------------------


@triton.heuristics({"HAS_DT_BIAS": lambda args: args["dt_bias_ptr"] is not None})
@triton.heuristics({"HAS_D": lambda args: args["D_ptr"] is not None})
@triton.heuristics({"HAS_Z": lambda args: args["z_ptr"] is not None})
@triton.heuristics({"BLOCK_SIZE_DSTATE": lambda args: triton.next_power_of_2(args["dstate"])})
@triton.jit
def _mb_state_update(
    # pointers
    state_ptr, x_ptr, dt_ptr, dt_bias_ptr, A_ptr, B_ptr, C_ptr, D_ptr, z_ptr, out_ptr,
    # sizes
    batch, nheads, dim, dstate, nheads_ngroups_ratio,
    # strides
    stride_state_batch, stride_state_head, stride_state_dim, stride_state_dstate,
    stride_x_batch, stride_x_head, stride_x_dim,
    stride_dt_batch, stride_dt_head, stride_dt_dim,
    stride_dt_bias_head, stride_dt_bias_dim,
    stride_A_head, stride_A_dim, stride_A_dstate,
    stride_B_batch, stride_B_group, stride_B_dstate,
    stride_C_batch, stride_C_group, stride_C_dstate,
    stride_D_head, stride_D_dim,
    stride_z_batch, stride_z_head, stride_z_dim,
    stride_out_batch, stride_out_head, stride_out_dim,
    # meta
    DT_SOFTPLUS: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    HAS_DT_BIAS: tl.constexpr,
    HAS_D: tl.constexpr,
    HAS_Z: tl.constexpr,
    BLOCK_SIZE_DSTATE: tl.constexpr,
):
    # grid (dim blocks, batch, heads); heads share B and C within a group
    i = tl.program_id(axis=0) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    b = tl.program_id(axis=1)
    h = tl.program_id(axis=2)
    g = h // nheads_ngroups_ratio
    n = tl.arange(0, BLOCK_SIZE_DSTATE)
    row_ok = i < dim
    n_ok = n < dstate
    tile_ok = row_ok[:, None] & n_ok[None, :]

    h_state = state_ptr + b * stride_state_batch + h * stride_state_head \
        + i[:, None] * stride_state_dim + n[None, :] * stride_state_dstate
    prev = tl.load(h_state, mask=tile_ok, other=0.0)
    xv = tl.load(x_ptr + b * stride_x_batch + h * stride_x_head + i * stride_x_dim,
                 mask=row_ok, other=0.0).to(tl.float32)
    delta = tl.load(dt_ptr + b * stride_dt_batch + h * stride_dt_head + i * stride_dt_dim,
                    mask=row_ok, other=0.0).to(tl.float32)
    if HAS_DT_BIAS:
        delta += tl.load(dt_bias_ptr + h * stride_dt_bias_head + i * stride_dt_bias_dim,
                         mask=row_ok, other=0.0).to(tl.float32)
    if DT_SOFTPLUS:
        delta = _mb_softplus(delta)
    a_tile = tl.load(A_ptr + h * stride_A_head + i[:, None] * stride_A_dim + n[None, :] * stride_A_dstate,
                     mask=tile_ok, other=0.0).to(tl.float32)
    b_vec = tl.load(B_ptr + b * stride_B_batch + g * stride_B_group + n * stride_B_dstate,
                    mask=n_ok, other=0.0).to(tl.float32)
    c_vec = tl.load(C_ptr + b * stride_C_batch + g * stride_C_group + n * stride_C_dstate,
                    mask=n_ok, other=0.0).to(tl.float32)

    # zero-order hold: h' = exp(dt A) h + dt B x
    new = prev * tl.exp(a_tile * delta[:, None]) + (delta * xv)[:, None] * b_vec[None, :]
    tl.store(h_state, new, mask=tile_ok)
    y = tl.sum(new * c_vec[None, :], axis=1)
    if HAS_D:
        y += xv * tl.load(D_ptr + h * stride_D_head + i * stride_D_dim, mask=row_ok, other=0.0).to(tl.float32)
    if HAS_Z:
        gate = tl.load(z_ptr + b * stride_z_batch + h * stride_z_head + i * stride_z_dim,
                       mask=row_ok, other=0.0).to(tl.float32)
        y *= gate * tl.sigmoid(gate)
    tl.store(out_ptr + b * stride_out_batch + h * stride_out_head + i * stride_out_dim, y, mask=row_ok)


# ---- mamba: gated norm over column groups --------------------------------------------------------


@triton.heuristics({"HAS_BIAS": lambda args: args["bias_ptr"] is not None})
@triton.heuristics({"HAS_Z": lambda args: args["gate_ptr"] is not None})
@triton.jit
def _mb_gated_norm_fwd(
    inp_ptr, res_ptr, weight_ptr, bias_ptr, gate_ptr, mean_ptr, rstd_ptr,
    inp_row_stride, res_row_stride, gate_row_stride,
    n_rows, group_width, eps,
    BLOCK_N: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_Z: tl.constexpr,
    NORM_BEFORE_GATE: tl.constexpr,
    IS_RMS_NORM: tl.constexpr,
):
    # grid (rows, groups): each program normalises group_width columns of
    # one row; the statistics are laid out [group, row]
    r = tl.program_id(0)
    g = tl.program_id(1)
    k = tl.arange(0, BLOCK_N)
    live = k < group_width
    col0 = g * group_width
    stat = g * n_rows + r

    v = tl.load(inp_ptr + r * inp_row_stride + col0 + k, mask=live, other=0.).to(tl.float32)
    if HAS_Z:
        zg = tl.load(gate_ptr + r * gate_row_stride + col0 + k, mask=live, other=0.).to(tl.float32)
        silu_z = zg * tl.sigmoid(zg)
        if not NORM_BEFORE_GATE:
            v *= silu_z
    if not IS_RMS_NORM:
        mu = tl.sum(v, axis=0) / group_width
        tl.store(mean_ptr + stat, mu)
        dev = tl.where(live, v - mu, 0.)
    else:
        dev = tl.where(live, v, 0.)
    inv_std = 1 / tl.sqrt(tl.sum(dev * dev, axis=0) / group_width + eps)
    tl.store(rstd_ptr + stat, inv_std)

    gamma = tl.load(weight_ptr + col0 + k, mask=live).to(tl.float32)
    if HAS_BIAS:
        beta = tl.load(bias_ptr + col0 + k, mask=live).to(tl.float32)
    normed = (v - mu) * inv_std if not IS_RMS_NORM else v * inv_std
    out = normed * gamma + beta if HAS_BIAS else normed * gamma
    if HAS_Z and NORM_BEFORE_GATE:
        out *= silu_z
    tl.store(res_ptr + r * res_row_stride + col0 + k, out, mask=live)


# ---- mamba: SSD chunk kernels --------------------------------------------------------------------


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE_H": bh}) for bh in (1, 2, 4, 8, 16, 32, 64)],
    key=["chunk_size", "nheads"],
)
@triton.jit
def _mb_chunk_cumsum_fwd(
    dt_ptr, A_ptr, dt_bias_ptr, dt_out_ptr, dA_cumsum_ptr,
    batch, seqlen, nheads, chunk_size,
    dt_min, dt_max,
    stride_dt_batch, stride_dt_seqlen, stride_dt_head,
    stride_A_head,
    stride_dt_bias_head,
    stride_dt_out_batch, stride_dt_out_chunk, stride_dt_out_head, stride_dt_out_csize,
    stride_dA_cs_batch, stride_dA_cs_chunk, stride_dA_cs_head, stride_dA_cs_csize,
    DT_SOFTPLUS: tl.constexpr,
    HAS_DT_BIAS: tl.constexpr,
    BLOCK_SIZE_H: tl.constexpr,
    BLOCK_SIZE_CHUNK: tl.constexpr,
):
    # grid (batch, chunk, head block): heads down the rows, the chunk's
    # positions along the columns
    b = tl.program_id(axis=0)
    c = tl.program_id(axis=1)
    heads = tl.program_id(axis=2) * BLOCK_SIZE_H + tl.arange(0, BLOCK_SIZE_H)
    t = tl.arange(0, BLOCK_SIZE_CHUNK)
    t0 = c * chunk_size
    n_here = min(chunk_size, seqlen - t0)
    head_ok = heads < nheads
    valid = head_ok[:, None] & (t[None, :] < n_here)
    inside = head_ok[:, None] & (t[None, :] < chunk_size)

    src = dt_ptr + b * stride_dt_batch + (t0 + t[None, :]) * stride_dt_seqlen + heads[:, None] * stride_dt_head
    step = tl.load(src, mask=valid, other=0.0).to(tl.float32)
    if HAS_DT_BIAS:
        step += tl.load(dt_bias_ptr + heads * stride_dt_bias_head, mask=head_ok, other=0.0).to(tl.float32)[:, None]
    if DT_SOFTPLUS:
        step = _mb_softplus(step)
    step = tl.where(valid, tl.clamp(step, dt_min, dt_max), 0.0)

    out_off = heads[:, None] * stride_dt_out_head + t[None, :] * stride_dt_out_csize
    tl.store(dt_out_ptr + b * stride_dt_out_batch + c * stride_dt_out_chunk + out_off, step, mask=inside)
    a_h = tl.load(A_ptr + heads * stride_A_head, mask=head_ok, other=0.0).to(tl.float32)
    running = tl.cumsum(step * a_h[:, None], axis=1)
    cs_off = heads[:, None] * stride_dA_cs_head + t[None, :] * stride_dA_cs_csize
    tl.store(dA_cumsum_ptr + b * stride_dA_cs_batch + c * stride_dA_cs_chunk + cs_off, running, mask=inside)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32}, num_stages=3, num_warps=4),
        triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32}, num_stages=4, num_warps=2),
        triton.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16}, num_stages=2, num_warps=1),
    ],
    key=["hdim", "dstate", "chunk_size"],
)
@triton.jit
def _mb_chunk_state_fwd(
    x_ptr, b_ptr, states_ptr, dt_ptr, dA_cumsum_ptr, seq_idx_ptr,
    hdim, dstate, chunk_size,
    batch, seqlen, nheads_ngroups_ratio,
    stride_x_batch, stride_x_seqlen, stride_x_head, stride_x_hdim,
    stride_b_batch, stride_b_seqlen, stride_b_head, stride_b_dstate,
    stride_states_batch, stride_states_chunk, stride_states_head, stride_states_hdim, stride_states_dstate,
    stride_dt_batch, stride_dt_chunk, stride_dt_head, stride_dt_csize,
    stride_dA_cs_batch, stride_dA_cs_chunk, stride_dA_cs_head, stride_dA_cs_csize,
    stride_seq_idx_batch, stride_seq_idx_seqlen,
    HAS_SEQ_IDX: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    # states[b, c, h] (hdim x dstate) = sum over the chunk's positions t of
    #   x[t, :]^T (B[t, :] * exp(dA_cs[last] - dA_cs[t]) * dt[t])
    bc = tl.program_id(axis=1)
    c = bc // batch
    b = bc % batch
    h = tl.program_id(axis=2)
    tiles_n = tl.cdiv(dstate, BLOCK_SIZE_N)
    tile_m = tl.program_id(axis=0) // tiles_n
    tile_n = tl.program_id(axis=0) % tiles_n
    t0 = c * chunk_size
    n_here = min(chunk_size, seqlen - t0)

    p = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)   # head channel
    q = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)   # state channel
    r = tl.arange(0, BLOCK_SIZE_K)                          # position in the chunk
    x_base = x_ptr + b * stride_x_batch + h * stride_x_head + t0 * stride_x_seqlen
    b_base = b_ptr + b * stride_b_batch + (h // nheads_ngroups_ratio) * stride_b_head + t0 * stride_b_seqlen
    dt_base = dt_ptr + b * stride_dt_batch + c * stride_dt_chunk + h * stride_dt_head
    cs_base = dA_cumsum_ptr + b * stride_dA_cs_batch + c * stride_dA_cs_chunk + h * stride_dA_cs_head
    decay_end = tl.load(cs_base + (chunk_size - 1) * stride_dA_cs_csize).to(tl.float32)
    if HAS_SEQ_IDX:
        seq_base = seq_idx_ptr + b * stride_seq_idx_batch + t0 * stride_seq_idx_seqlen
        last_seq = tl.load(seq_base + (n_here - 1) * stride_seq_idx_seqlen)

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, n_here, BLOCK_SIZE_K):
        t = k0 + r
        t_ok = t < n_here
        xs = tl.load(x_base + p[:, None] * stride_x_hdim + t[None, :] * stride_x_seqlen,
                     mask=(p[:, None] < hdim) & t_ok[None, :], other=0.0)
        bs = tl.load(b_base + t[:, None] * stride_b_seqlen + q[None, :] * stride_b_dstate,
                     mask=t_ok[:, None] & (q[None, :] < dstate), other=0.0).to(tl.float32)
        cs_t = tl.load(cs_base + t * stride_dA_cs_csize, mask=t_ok, other=0.0).to(tl.float32)
        dt_t = tl.load(dt_base + t * stride_dt_csize, mask=t_ok, other=0.0).to(tl.float32)
        w = tl.exp(tl.minimum(decay_end - cs_t, 0.0)) * dt_t
        if HAS_SEQ_IDX:
            seq_t = tl.load(seq_base + t * stride_seq_idx_seqlen, mask=t_ok, other=-1)
            w = tl.where(seq_t == last_seq, w, 0.0)
        bs = (bs * w[:, None]).to(x_ptr.dtype.element_ty)
        acc += tl.dot(xs, bs)

    dst = (states_ptr + b * stride_states_batch + c * stride_states_chunk + h * stride_states_head
           + p[:, None] * stride_states_hdim + q[None, :] * stride_states_dstate)
    tl.store(dst, acc.to(states_ptr.dtype.element_ty), mask=(p[:, None] < hdim) & (q[None, :] < dstate))


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": b}) for b in (64, 128, 256, 512, 1024, 2048)],
    key=["dim"],
)
@triton.heuristics({"HAS_INITSTATES": lambda args: args["initstates_ptr"] is not None})
@triton.jit
def _mb_state_passing_fwd(
    states_ptr, out_ptr, final_states_ptr, dA_cs_ptr, initstates_ptr,
    dim, nchunks,
    stride_states_batch, stride_states_chunk, stride_states_head, stride_states_dim,
    stride_out_batch, stride_out_chunk, stride_out_head, stride_out_dim,
    stride_final_states_batch, stride_final_states_head, stride_final_states_dim,
    stride_dA_cs_batch, stride_dA_cs_chunk, stride_dA_cs_head,
    stride_initstates_batch, stride_initstates_head, stride_initstates_dim,
    HAS_INITSTATES: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    # out[c] is the state entering chunk c; leaving it, the state decays by
    # exp(dA_cs at the chunk's last position) and gains the chunk's own state
    i = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    b = tl.program_id(axis=1)
    h = tl.program_id(axis=2)
    i_ok = i < dim
    src = states_ptr + b * stride_states_batch + h * stride_states_head + i * stride_states_dim
    dst = out_ptr + b * stride_out_batch + h * stride_out_head + i * stride_out_dim
    decay = dA_cs_ptr + b * stride_dA_cs_batch + h * stride_dA_cs_head
    if HAS_INITSTATES:
        carry = tl.load(initstates_ptr + b * stride_initstates_batch + h * stride_initstates_head
                        + i * stride_initstates_dim, mask=i_ok, other=0.0).to(tl.float32)
    else:
        carry = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    tl.store(dst, carry, mask=i_ok)
    for c in range(nchunks):
        local = tl.load(src + c * stride_states_chunk, mask=i_ok, other=0.0).to(tl.float32)
        carry = tl.exp(tl.load(decay + c * stride_dA_cs_chunk).to(tl.float32)) * carry + local
        if c < nchunks - 1:
            tl.store(dst + (c + 1) * stride_out_chunk, carry, mask=i_ok)
        else:
            tl.store(final_states_ptr + b * stride_final_states_batch + h * stride_final_states_head
                     + i * stride_final_states_dim, carry, mask=i_ok)


@triton.jit
def _mb_bmm_chunk_fwd(
    a_ptr, b_ptr, out_ptr,
    seqlen, chunk_size, K, ngroups,
    stride_a_batch, stride_a_seqlen, stride_a_head, stride_ak,
    stride_b_batch, stride_b_seqlen, stride_b_head, stride_bk,
    stride_out_batch, stride_out_chunk, stride_out_head, stride_outm, stride_outn,
    IS_CAUSAL: tl.constexpr,
    dot_dtype: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    # out[b, c, g] (chunk x chunk) = a_chunk @ b_chunk^T, the C.B^T of the
    # chunk scan; with IS_CAUSAL the tiles above the diagonal are skipped
    b = tl.program_id(axis=1)
    cg = tl.program_id(axis=2)
    c = cg // ngroups
    g = cg % ngroups
    tiles_n = tl.cdiv(chunk_size, BLOCK_SIZE_N)
    tile_m = tl.program_id(axis=0) // tiles_n
    tile_n = tl.program_id(axis=0) % tiles_n
    if IS_CAUSAL:
        if tile_n * BLOCK_SIZE_N >= (tile_m + 1) * BLOCK_SIZE_M:
            return
    t0 = c * chunk_size
    n_here = min(chunk_size, seqlen - t0)
    rows = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    kk = tl.arange(0, BLOCK_SIZE_K)
    a_base = a_ptr + b * stride_a_batch + g * stride_a_head + (t0 + rows[:, None]) * stride_a_seqlen
    b_base = b_ptr + b * stride_b_batch + g * stride_b_head + (t0 + cols[None, :]) * stride_b_seqlen

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        k = k0 + kk
        lhs = tl.load(a_base + k[None, :] * stride_ak, mask=(rows[:, None] < n_here) & (k[None, :] < K), other=0.0)
        rhs = tl.load(b_base + k[:, None] * stride_bk, mask=(k[:, None] < K) & (cols[None, :] < n_here), other=0.0)
        acc += tl.dot(lhs.to(dot_dtype), rhs.to(dot_dtype))

    dst = (out_ptr + b * stride_out_batch + c * stride_out_chunk + g * stride_out_head
           + rows[:, None] * stride_outm + cols[None, :] * stride_outn)
    tl.store(dst, acc.to(out_ptr.dtype.element_ty), mask=(rows[:, None] < chunk_size) & (cols[None, :] < chunk_size))


@triton.heuristics({"HAS_D": lambda args: args["D_ptr"] is not None})
@triton.heuristics({"HAS_Z": lambda args: args["z_ptr"] is not None})
@triton.heuristics({"BLOCK_SIZE_DSTATE": lambda args: max(triton.next_power_of_2(args["dstate"]), 16)})
@triton.jit
def _mb_chunk_scan_fwd(
    cb_ptr, x_ptr, z_ptr, out_ptr, dt_ptr, dA_cumsum_ptr, C_ptr, prev_states_ptr, D_ptr,
    chunk_size, hdim, dstate,
    batch, seqlen, nheads_ngroups_ratio,
    stride_cb_batch, stride_cb_chunk, stride_cb_head, stride_cb_csize_m, stride_cb_csize_k,
    stride_x_batch, stride_x_seqlen, stride_x_head, stride_x_hdim,
    stride_z_batch, stride_z_seqlen, stride_z_head, stride_z_hdim,
    stride_out_batch, stride_out_seqlen, stride_out_head, stride_out_hdim,
    stride_dt_batch, stride_dt_chunk, stride_dt_head, stride_dt_csize,
    stride_dA_cs_batch, stride_dA_cs_chunk, stride_dA_cs_head, stride_dA_cs_csize,
    stride_C_batch, stride_C_seqlen, stride_C_head, stride_C_dstate,
    stride_states_batch, stride_states_chunk, stride_states_head, stride_states_hdim, stride_states_dstate,
    stride_D_head,
    IS_CAUSAL: tl.constexpr,
    HAS_D: tl.constexpr,
    D_HAS_HDIM: tl.constexpr,
    HAS_Z: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    BLOCK_SIZE_DSTATE: tl.constexpr,
):
    # y[t] = exp(dA_cs[t]) C[t] . h_prev
    #      + sum_{u <= t} CB[t, u] exp(dA_cs[t] - dA_cs[u]) dt[u] x[u]   (+ D x[t]) (* silu(z[t]))
    bc = tl.program_id(axis=1)
    c = bc // batch
    b = bc % batch
    h = tl.program_id(axis=2)
    g = h // nheads_ngroups_ratio
    tiles_n = tl.cdiv(hdim, BLOCK_SIZE_N)
    tile_m = tl.program_id(axis=0) // tiles_n
    tile_n = tl.program_id(axis=0) % tiles_n
    t0 = c * chunk_size
    n_here = min(chunk_size, seqlen - t0)

    t = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)   # output positions
    p = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)   # head channels
    cs_base = dA_cumsum_ptr + b * stride_dA_cs_batch + c * stride_dA_cs_chunk + h * stride_dA_cs_head
    dt_base = dt_ptr + b * stride_dt_batch + c * stride_dt_chunk + h * stride_dt_head
    x_base = x_ptr + b * stride_x_batch + h * stride_x_head + t0 * stride_x_seqlen
    cb_base = cb_ptr + b * stride_cb_batch + c * stride_cb_chunk + g * stride_cb_head
    cs_t = tl.load(cs_base + t * stride_dA_cs_csize, mask=t < chunk_size, other=0.0).to(tl.float32)

    # the state carried in from the previous chunks
    n = tl.arange(0, BLOCK_SIZE_DSTATE)
    c_rows = tl.load(C_ptr + b * stride_C_batch + g * stride_C_head + (t0 + t[:, None]) * stride_C_seqlen
                     + n[None, :] * stride_C_dstate, mask=(t[:, None] < n_here) & (n[None, :] < dstate), other=0.0)
    h_prev = tl.load(prev_states_ptr + b * stride_states_batch + c * stride_states_chunk + h * stride_states_head
                     + n[:, None] * stride_states_dstate + p[None, :] * stride_states_hdim,
                     mask=(n[:, None] < dstate) & (p[None, :] < hdim), other=0.0)
    acc = tl.dot(c_rows, h_prev.to(C_ptr.dtype.element_ty)) * tl.exp(cs_t)[:, None]

    # the chunk's own inputs, up to the diagonal when causal
    uu = tl.arange(0, BLOCK_SIZE_K)
    u_end = n_here if not IS_CAUSAL else min((tile_m + 1) * BLOCK_SIZE_M, n_here)
    for u0 in range(0, u_end, BLOCK_SIZE_K):
        u = u0 + uu
        u_in_chunk = u < chunk_size
        w = tl.load(cb_base + t[:, None] * stride_cb_csize_m + u[None, :] * stride_cb_csize_k,
                    mask=(t[:, None] < chunk_size) & u_in_chunk[None, :], other=0.0).to(tl.float32)
        cs_u = tl.load(cs_base + u * stride_dA_cs_csize, mask=u_in_chunk, other=0.0).to(tl.float32)
        dt_u = tl.load(dt_base + u * stride_dt_csize, mask=u_in_chunk, other=0.0).to(tl.float32)
        w *= tl.exp(tl.minimum(cs_t[:, None] - cs_u[None, :], 0.0)) * dt_u[None, :]
        if IS_CAUSAL:
            w = tl.where(t[:, None] >= u[None, :], w, 0.0)
        xu = tl.load(x_base + u[:, None] * stride_x_seqlen + p[None, :] * stride_x_hdim,
                     mask=(u[:, None] < n_here) & (p[None, :] < hdim), other=0.0)
        acc += tl.dot(w.to(x_ptr.dtype.element_ty), xu)

    ok = (t[:, None] < n_here) & (p[None, :] < hdim)
    if HAS_D:
        if D_HAS_HDIM:
            skip = tl.load(D_ptr + h * stride_D_head + p, mask=p < hdim, other=0.0).to(tl.float32)[None, :]
        else:
            skip = tl.load(D_ptr + h * stride_D_head).to(tl.float32)
        xt = tl.load(x_base + t[:, None] * stride_x_seqlen + p[None, :] * stride_x_hdim, mask=ok, other=0.0)
        acc += xt.to(tl.float32) * skip
    if HAS_Z:
        zt = tl.load(z_ptr + b * stride_z_batch + h * stride_z_head + (t0 + t[:, None]) * stride_z_seqlen
                     + p[None, :] * stride_z_hdim, mask=ok, other=0.0).to(tl.float32)
        acc *= zt * tl.sigmoid(zt)
    dst = (out_ptr + b * stride_out_batch + h * stride_out_head + (t0 + t[:, None]) * stride_out_seqlen
           + p[None, :] * stride_out_hdim)
    tl.store(dst, acc, mask=ok)


# ---- lightllm: decode attention through the request-to-token table -------------------------------


@triton.jit
def _ll_token_att_scores(
    Q, K, sm_scale,
    Req_to_tokens, B_req_idx, B_Start_Loc, B_Seqlen,
    Att_Out,
    stride_req_to_tokens_b, stride_req_to_tokens_s,
    stride_qbs, stride_qh, stride_qd,
    stride_kbs, stride_kh, stride_kd,
    att_stride_h, att_stride_bs,
    kv_group_num,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # scores of one request's cached keys against its query, BLOCK_N
    # tokens per program; tokens are found through the request's row of
    # the request-to-token table
    seq = tl.program_id(0)
    head = tl.program_id(1)
    blk = tl.program_id(2)
    kv_head = head // kv_group_num
    n_tok = tl.load(B_Seqlen + seq)
    out_row = tl.load(B_Start_Loc + seq)
    req_row = tl.load(B_req_idx + seq)
    d = tl.arange(0, BLOCK_DMODEL)
    j = blk * BLOCK_N + tl.arange(0, BLOCK_N)

    # a loop of zero or one trip instead of a branch on the block's start
    trips = tl.where(blk * BLOCK_N < n_tok, 1, 0)
    for extra in range(0, trips, 1):
        qv = tl.load(Q + seq * stride_qbs + head * stride_qh + d * stride_qd + extra).to(tl.float32)
        j_ok = j < n_tok
        slot = tl.load(Req_to_tokens + req_row * stride_req_to_tokens_b + j * stride_req_to_tokens_s,
                       mask=j_ok, other=0)
        kv = tl.load(K + slot[:, None] * stride_kbs + kv_head * stride_kh + d[None, :] * stride_kd,
                     mask=j_ok[:, None], other=0.0).to(tl.float32)
        score = tl.sum(kv * qv[None, :], 1) * sm_scale
        tl.store(Att_Out + head * att_stride_h + (out_row + j) * att_stride_bs, score, mask=j_ok)
    return


@triton.jit
def _ll_token_softmax_reducev(
    Logics, V, Out,
    Req_to_tokens, B_req_idx, B_Start_Loc, B_Seqlen,
    stride_logic_h, stride_logic_bs,
    stride_vbs, stride_vh, stride_vd,
    stride_obs, stride_oh, stride_od,
    stride_req_to_token_b, stride_req_to_token_s,
    other_kv_index,
    kv_group_num,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_kv_head = cur_head // kv_group_num
    seq_len = tl.load(B_Seqlen + cur_batch)
    start = tl.load(B_Start_Loc + cur_batch)
    req = tl.load(B_req_idx + cur_batch)

    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    v_ptrs = V + cur_kv_head * stride_vh + offs_d[None, :] * stride_vd

    e_max = float("-inf")
    e_sum = 0.0
    acc = tl.zeros([BLOCK_DMODEL], dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        live = start_n + offs_n < seq_len
        # masked lanes read a known-good cache slot instead of token 0
        token = tl.load(Req_to_tokens + req * stride_req_to_token_b + (start_n + offs_n) * stride_req_to_token_s,
                        mask=live, other=other_kv_index)
        qk = tl.load(Logics + cur_head * stride_logic_h + (start + start_n + offs_n) * stride_logic_bs,
                     mask=live, other=float("-inf"))
        v = tl.load(v_ptrs + token[:, None] * stride_vbs)
        n_e_max = tl.maximum(tl.max(qk, 0), e_max)
        old_scale = tl.exp(e_max - n_e_max)
        p = tl.exp(qk - n_e_max)
        e_sum = e_sum * old_scale + tl.sum(p, 0)
        acc = acc * old_scale + tl.sum(p[:, None] * v.to(tl.float32), 0)
        e_max = n_e_max

    acc = acc / e_sum
    tl.store(Out + cur_batch * stride_obs + cur_head * stride_oh + offs_d * stride_od, acc)


# ---- lightllm: prefill attention over packed sequences -------------------------------------------


@triton.jit
def _ll_context_attention_fwd(
    Q, K, V, sm_scale, Out,
    B_Start_Loc, B_Seqlen,
    stride_qbs, stride_qh, stride_qd,
    stride_kbs, stride_kh, stride_kd,
    stride_vbs, stride_vh, stride_vd,
    stride_obs, stride_oh, stride_od,
    kv_group_num,
    H,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # grid (query blocks, sequences * heads); sequences are packed back to
    # back, sequence i at rows B_Start_Loc[i] .. + B_Seqlen[i]
    qblk = tl.program_id(0)
    seq = tl.program_id(1) // H
    head = tl.program_id(1) % H
    kv_head = head // kv_group_num
    row0 = tl.load(B_Start_Loc + seq)
    n_tok = tl.load(B_Seqlen + seq)
    q_lo = qblk * BLOCK_M

    rq = q_lo + tl.arange(0, BLOCK_M)
    rk = tl.arange(0, BLOCK_N)
    d = tl.arange(0, BLOCK_DMODEL)
    q = tl.load(Q + (row0 + rq[:, None]) * stride_qbs + head * stride_qh + d[None, :] * stride_qd,
                mask=rq[:, None] < n_tok, other=0.0)
    kT_ptrs = K + row0 * stride_kbs + rk[None, :] * stride_kbs + kv_head * stride_kh + d[:, None] * stride_kd
    v_ptrs = V + row0 * stride_vbs + rk[:, None] * stride_vbs + kv_head * stride_vh + d[None, :] * stride_vd

    row_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    row_sum = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    scale2 = sm_scale * 1.44269504  # base-2 softmax

    live = tl.where(q_lo < n_tok, 1, 0)
    k_hi = tl.minimum(q_lo + BLOCK_M, n_tok)
    # key blocks wholly left of the query block need no causal mask
    full_end = live * ((q_lo // BLOCK_N) * BLOCK_N)
    for k_lo in range(0, full_end, BLOCK_N):
        k_lo = tl.multiple_of(k_lo, BLOCK_N)
        s = tl.dot(q, tl.load(kT_ptrs + k_lo * stride_kbs))
        new_max = tl.maximum(row_max, tl.max(s, 1) * scale2)
        e = tl.math.exp2(s * scale2 - new_max[:, None])
        corr = tl.math.exp2(row_max - new_max)
        row_sum = row_sum * corr + tl.sum(e, 1)
        vb = tl.load(v_ptrs + k_lo * stride_vbs)
        acc = tl.dot(e.to(vb.dtype), vb, acc * corr[:, None])
        row_max = new_max

    for k_lo in range(full_end, live * k_hi, BLOCK_N):
        k_lo = tl.multiple_of(k_lo, BLOCK_N)
        kt = tl.load(kT_ptrs + k_lo * stride_kbs, mask=(k_lo + rk[None, :]) < k_hi, other=0.0)
        s = tl.dot(q, kt) * scale2 + tl.where(rq[:, None] >= (k_lo + rk[None, :]), 0, -1.0e6)
        new_max = tl.maximum(row_max, tl.max(s, 1))
        e = tl.math.exp2(s - new_max[:, None])
        corr = tl.math.exp2(row_max - new_max)
        row_sum = row_sum * corr + tl.sum(e, 1)
        vb = tl.load(v_ptrs + k_lo * stride_vbs, mask=(k_lo + rk[:, None]) < k_hi, other=0.0)
        acc = tl.dot(e.to(vb.dtype), vb, acc * corr[:, None])
        row_max = new_max

    tl.store(Out + (row0 + rq[:, None]) * stride_obs + head * stride_oh + d[None, :] * stride_od,
             acc / row_sum[:, None], mask=rq[:, None] < n_tok)


# ---- lightllm: rotary embedding, KV cache copies, activations, norm ------------------------------


@triton.jit
def _ll_rotary_kernel(
    Q, K, Cos, Sin,
    stride_qbs, stride_qh, stride_qd,
    stride_kbs, stride_kh, stride_kd,
    stride_cosbs, stride_cosd,
    stride_sinbs, stride_sind,
    max_total_len,
    HEAD_Q,
    HEAD_K,
    BLOCK_HEAD: tl.constexpr,
    BLOCK_SEQ: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
):
    # a (token, head, half-dim) block per program; Q and K rotate by the
    # same cos/sin rows, K has fewer heads
    tok = (tl.program_id(1) * BLOCK_SEQ + tl.arange(0, BLOCK_SEQ))[:, None, None]
    head = (tl.program_id(0) * BLOCK_HEAD + tl.arange(0, BLOCK_HEAD))[None, :, None]
    first = tl.arange(0, BLOCK_DMODEL // 2)[None, None, :]
    second = tl.arange(BLOCK_DMODEL // 2, BLOCK_DMODEL)[None, None, :]
    tok_ok = tok < max_total_len

    c = tl.load(Cos + tok * stride_cosbs + first * stride_cosd, mask=tok_ok, other=0.0)
    s = tl.load(Sin + tok * stride_sinbs + first * stride_sind, mask=tok_ok, other=0.0)

    ok = tok_ok & (head < HEAD_Q)
    base = Q + tok * stride_qbs + head * stride_qh
    a = tl.load(base + first * stride_qd, mask=ok, other=0.0)
    b = tl.load(base + second * stride_qd, mask=ok, other=0.0)
    tl.store(base + first * stride_qd, a * c - b * s, mask=ok)
    tl.store(base + second * stride_qd, a * s + b * c, mask=ok)

    ok = tok_ok & (head < HEAD_K)
    base = K + tok * stride_kbs + head * stride_kh
    a = tl.load(base + first * stride_kd, mask=ok, other=0.0)
    b = tl.load(base + second * stride_kd, mask=ok, other=0.0)
    tl.store(base + first * stride_kd, a * c - b * s, mask=ok)
    tl.store(base + second * stride_kd, a * s + b * c, mask=ok)
    return


@triton.jit
def _ll_destindex_copy_kv(
    K, Dest_loc, Out,
    stride_k_bs, stride_k_h, stride_k_d,
    stride_o_bs, stride_o_h, stride_o_d,
    head_num,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_HEAD: tl.constexpr,
):
    cur_index = tl.program_id(0)
    offs_h = tl.arange(0, BLOCK_HEAD)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    dest_index = tl.load(Dest_loc + cur_index).to(tl.int64)
    k = tl.load(K + cur_index * stride_k_bs + stride_k_h * offs_h[:, None] + stride_k_d * offs_d[None, :],
                mask=offs_h[:, None] < head_num, other=0.0)
    o_ptrs = Out + dest_index * stride_o_bs + stride_o_h * offs_h[:, None] + stride_o_d * offs_d[None, :]
    tl.store(o_ptrs, k, mask=offs_h[:, None] < head_num)
    return


@triton.jit
def _ll_destindex_copy_quantize_kv(
    K, Dest_loc, Out, Out_scale,
    stride_k_bs, stride_k_h, stride_k_d,
    stride_o_bs, stride_o_h, stride_o_d,
    stride_os_bs, stride_os_h,
    head_num,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_HEAD: tl.constexpr,
):
    # int8 copy with one scale per (token, head): absmax / 127
    cur_index = tl.program_id(0)
    offs_h = tl.arange(0, BLOCK_HEAD)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    dest_index = tl.load(Dest_loc + cur_index).to(tl.int64)
    src = tl.load(K + cur_index * stride_k_bs + offs_h[:, None] * stride_k_h + stride_k_d * offs_d[None, :],
                  mask=offs_h[:, None] < head_num, other=0.0).to(tl.float32)
    scale = tl.max(tl.abs(src), axis=1) / 127.0
    scaled = src / scale[:, None]
    q = tl.where(scaled >= 0, scaled + 0.5, scaled - 0.5).to(tl.int8)
    tl.store(Out + dest_index * stride_o_bs + stride_o_h * offs_h[:, None] + stride_o_d * offs_d[None, :], q,
             mask=offs_h[:, None] < head_num)
    tl.store(Out_scale + dest_index * stride_os_bs + stride_os_h * offs_h, scale.to(Out_scale.dtype.element_ty),
             mask=offs_h < head_num)
    return


@triton.jit
def _ll_silu_and_mul(
    input_ptr, output_ptr,
    stride_input_m, stride_input_n,
    stride_output_m, stride_output_n,
    size_m, size_n,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # input rows are [gate | up], each size_n wide; rows in int64 offsets
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_in = rows.to(tl.int64)[:, None] * stride_input_m
    row_out = rows.to(tl.int64)[:, None] * stride_output_m
    ok = (rows < size_m)[:, None] * (cols < size_n)[None, :]
    gate = tl.load(input_ptr + row_in + cols[None, :] * stride_input_n, mask=ok, other=0.0).to(tl.float32)
    up = tl.load(input_ptr + row_in + (size_n + cols[None, :]) * stride_input_n, mask=ok, other=0.0)
    act = (gate / (1 + tl.exp(-gate))).to(input_ptr.dtype.element_ty)
    tl.store(output_ptr + row_out + cols[None, :] * stride_output_n, act * up, mask=ok)


@triton.jit
def _ll_rms_norm_looped(
    X, Y, W,
    stride_x_row, stride_y_row,
    N, eps,
    BLOCK_SIZE: tl.constexpr,
):
    # two passes over the row in BLOCK_SIZE slices: sum of squares, then scale
    row = tl.program_id(0)
    Y += row * stride_y_row
    X += row * stride_x_row
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in tl.range(0, N, BLOCK_SIZE, num_stages=2):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in tl.range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        y = x * rstd * w
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)
