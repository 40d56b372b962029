# The gated delta rule evaluated one token at a time, as the decoding path
# of a linear-attention layer does: each program holds a [K, BV] slice of
# one value head's state in registers, decays it by exp(g), corrects it by
# the beta-weighted delta between the value and the state's prediction for
# the key, and reads the output with the scaled query.
#
# Idioms: grouped heads (several value heads share one query/key head);
# packed variable-length sequences whose bounds come from cu_seqlens, or
# fixed-length ones at multiples of T (left unspecialised); an optional
# initial state and an optional final state written through 2-D block
# pointers with boundary checks; masked per-token vector loads and stores
# on pointers stepped along the token axis; an in-kernel L2 normalisation of
# q and k chosen at compile time; fp16 inputs widened to fp32 and the output
# narrowed to the output tensor's element type.
import triton
import triton.language as tl


@triton.jit
def _tkk_l2_normalise(x):
    """x / sqrt(sum(x^2) + 1e-6) over a 1-D vector."""
    return x / tl.sqrt(tl.sum(x * x, axis=0) + 1e-6)


@triton.jit(do_not_specialize=["T"])
def _tkk_fused_recurrent_gdr_fwd(q, k, v, g, beta, o, h0, ht, cu_seqlens, scale, T,
                                 H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
                                 BK: tl.constexpr, BV: tl.constexpr,
                                 USE_INITIAL_STATE: tl.constexpr, STORE_FINAL_STATE: tl.constexpr,
                                 USE_QK_L2NORM_IN_KERNEL: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_v = tl.program_id(0)
    i_nh = tl.program_id(1)
    i_n = i_nh // HV
    i_hv = i_nh % HV
    # the query/key head this value head reads
    i_h = i_hv // (HV // H)

    # token range of sequence i_n
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int64)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    else:
        bos = i_n.to(tl.int64) * T
        eos = bos + T
    seq_len = eos - bos

    o_k = tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    m_k = o_k < K
    m_v = o_v < V

    # per-token pointers, positioned at the first token of the sequence
    p_q = q + (bos * H + i_h) * K + o_k
    p_k = k + (bos * H + i_h) * K + o_k
    p_v = v + (bos * HV + i_hv) * V + o_v
    p_o = o + (bos * HV + i_hv) * V + o_v
    p_g = g + bos * HV + i_hv
    p_beta = beta + bos * HV + i_hv

    # state slice S[K, BV] of (sequence, value head)
    state_off = i_nh.to(tl.int64) * K * V
    if USE_INITIAL_STATE:
        p_h0 = tl.make_block_ptr(h0 + state_off, (K, V), (V, 1), (0, i_v * BV), (BK, BV), (1, 0))
        S = tl.load(p_h0, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    else:
        S = tl.zeros([BK, BV], dtype=tl.float32)

    for _ in range(0, seq_len):
        b_q = tl.load(p_q, mask=m_k, other=0).to(tl.float32)
        b_k = tl.load(p_k, mask=m_k, other=0).to(tl.float32)
        b_v = tl.load(p_v, mask=m_v, other=0).to(tl.float32)
        b_g = tl.load(p_g).to(tl.float32)
        b_beta = tl.load(p_beta).to(tl.float32)
        if USE_QK_L2NORM_IN_KERNEL:
            b_q = _tkk_l2_normalise(b_q)
            b_k = _tkk_l2_normalise(b_k)
        b_q = b_q * scale

        # decay, then the delta-rule correction toward v along k
        S = S * tl.exp(b_g)
        pred = tl.sum(b_k[:, None] * S, axis=0)
        delta = (b_v - pred) * b_beta
        S = S + b_k[:, None] * delta[None, :]

        b_o = tl.sum(b_q[:, None] * S, axis=0)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=m_v)

        p_q += H * K
        p_k += H * K
        p_v += HV * V
        p_o += HV * V
        p_g += HV
        p_beta += HV

    if STORE_FINAL_STATE:
        p_ht = tl.make_block_ptr(ht + state_off, (K, V), (V, 1), (0, i_v * BV), (BK, BV), (1, 0))
        tl.store(p_ht, S.to(p_ht.dtype.element_ty), boundary_check=(0, 1))
