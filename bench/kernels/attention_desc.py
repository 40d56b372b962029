import triton
import triton.language as tl


# Fused attention forward in the style of Triton's tutorial 06: tensor
# descriptors built on the device over [Z*H*S, D] views of Q, K, V and O,
# the KV loop as tl.range(..., warp_specialize=WS), and, when CAUSAL, the
# blocks left of the diagonal without a mask followed by the diagonal block
# with one. fp8 inputs come with per-tensor scales (DESCALE: the product of
# the Q and K scales; V_SCALE: V's) and V transposed ([Z*H*D, S]), since an
# fp8 tensor-core operand must be K-major. S is a multiple of BM and BN.
@triton.jit
def _attn_steps(acc, l_i, m_i, q, k_desc, v_desc, kv0, v_col0, lo, hi, rows, cols0, qk_scale,
                BN: tl.constexpr, DIAG: tl.constexpr, V_T: tl.constexpr, WS: tl.constexpr):
    for start in tl.range(lo, hi, BN, warp_specialize=WS):
        k = k_desc.load([kv0 + start, 0])
        s = tl.dot(q, k.T)
        if DIAG:
            keep = rows[:, None] >= start + cols0[None, :]
            s = s * qk_scale + tl.where(keep, 0.0, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            s = s - m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            s = s * qk_scale - m_new[:, None]
        p = tl.math.exp2(s)
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if V_T:
            v = v_desc.load([v_col0, start]).T
        else:
            v = v_desc.load([kv0 + start, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attn_fwd_desc(Q, K, V, O, sm_scale, DESCALE, V_SCALE, Z, H, S, D: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr,
                  V_T: tl.constexpr, WS: tl.constexpr):
    start_m = tl.program_id(0)
    zh = tl.program_id(1)
    n_rows = Z * H * S
    q_desc = tl.make_tensor_descriptor(Q, shape=[n_rows, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(K, shape=[n_rows, D], strides=[D, 1], block_shape=[BN, D])
    o_desc = tl.make_tensor_descriptor(O, shape=[n_rows, D], strides=[D, 1], block_shape=[BM, D])
    if V_T:
        v_desc = tl.make_tensor_descriptor(V, shape=[Z * H * D, S], strides=[S, 1],
                                           block_shape=[D, BN])
    else:
        v_desc = tl.make_tensor_descriptor(V, shape=[n_rows, D], strides=[D, 1],
                                           block_shape=[BN, D])
    kv0 = zh * S
    q_row = kv0 + start_m * BM
    rows = start_m * BM + tl.arange(0, BM)
    cols0 = tl.arange(0, BN)
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    qk_scale = sm_scale * DESCALE * 1.44269504
    q = q_desc.load([q_row, 0])
    hi = start_m * BM if CAUSAL else S
    acc, l_i, m_i = _attn_steps(acc, l_i, m_i, q, k_desc, v_desc, kv0, zh * D, 0, hi, rows,
                                cols0, qk_scale, BN, False, V_T, WS)
    if CAUSAL:
        acc, l_i, m_i = _attn_steps(acc, l_i, m_i, q, k_desc, v_desc, kv0, zh * D, hi,
                                    hi + BM, rows, cols0, qk_scale, BN, True, V_T, WS)
    acc = acc * (V_SCALE / l_i[:, None])
    o_desc.store([q_row, 0], acc.to(O.dtype.element_ty))
