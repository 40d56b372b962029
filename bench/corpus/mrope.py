"""Multimodal rotary embedding (M-RoPE) of Qwen2-VL-style models, in the
manner of Liger-Kernel's fused rotary ops: every token carries three
position ids (temporal, height, width), so the cos/sin tables come as
[3, tokens, head_dim], one plane per position kind. The rotary half of the
head dim is cut into three sections (mrope_section = [t, h, w], summing to
head_dim / 2): frequency d takes its cos and sin from the temporal plane
if d < t, from the height plane if t <= d < t + h, and from the width plane
otherwise. The three section loads are masked so that each lane reads
exactly one plane and their sum is the merged row.

One program per token rotates all of its query heads and key heads in place
(NeoX rotate-half layout: x1 = x[:half], x2 = x[half:], out =
[x1 cos - x2 sin, x2 cos + x1 sin]); the head counts and the head dim are
padded to powers of two and masked. BACKWARD_PASS rotates by -theta (the
gradient of the rotation). q and k keep their dtype, arithmetic in fp32."""
import triton
import triton.language as tl


@triton.jit
def qwen2vl_mrope_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, q_tok_stride, k_tok_stride,
                         cos_plane_stride, n_qh, n_kh, hd, mrope_section_t, mrope_section_h,
                         PAD_N_QH: tl.constexpr, PAD_N_KH: tl.constexpr, PAD_HD: tl.constexpr,
                         BACKWARD_PASS: tl.constexpr):
    tok = tl.program_id(0).to(tl.int64)
    half = hd // 2
    sec_th = mrope_section_t + mrope_section_h

    # merged cos/sin for the rotary half: each frequency reads exactly one plane
    freq = tl.arange(0, PAD_HD // 2)
    in_half = freq < half
    use_t = freq < mrope_section_t
    use_h = (freq >= mrope_section_t) & (freq < sec_th)
    use_w = (freq >= sec_th) & in_half
    tok_cos = cos_ptr + tok * hd + freq
    tok_sin = sin_ptr + tok * hd + freq
    cos = (tl.load(tok_cos, mask=use_t, other=0.0).to(tl.float32)
           + tl.load(tok_cos + cos_plane_stride, mask=use_h, other=0.0).to(tl.float32)
           + tl.load(tok_cos + 2 * cos_plane_stride, mask=use_w, other=0.0).to(tl.float32))
    sin = (tl.load(tok_sin, mask=use_t, other=0.0).to(tl.float32)
           + tl.load(tok_sin + cos_plane_stride, mask=use_h, other=0.0).to(tl.float32)
           + tl.load(tok_sin + 2 * cos_plane_stride, mask=use_w, other=0.0).to(tl.float32))
    if BACKWARD_PASS:
        sin = -sin
    cos = cos[None, :]
    sin = sin[None, :]

    # query heads: [PAD_N_QH, PAD_HD // 2] tiles of the two halves
    qh = tl.arange(0, PAD_N_QH)
    q_lo = q_ptr + tok * q_tok_stride + qh[:, None] * hd + freq[None, :]
    q_mask = (qh[:, None] < n_qh) & in_half[None, :]
    q1 = tl.load(q_lo, mask=q_mask, other=0.0).to(tl.float32)
    q2 = tl.load(q_lo + half, mask=q_mask, other=0.0).to(tl.float32)
    tl.store(q_lo, (q1 * cos - q2 * sin).to(q_ptr.dtype.element_ty), mask=q_mask)
    tl.store(q_lo + half, (q2 * cos + q1 * sin).to(q_ptr.dtype.element_ty), mask=q_mask)

    # key heads, same rotation
    kh = tl.arange(0, PAD_N_KH)
    k_lo = k_ptr + tok * k_tok_stride + kh[:, None] * hd + freq[None, :]
    k_mask = (kh[:, None] < n_kh) & in_half[None, :]
    k1 = tl.load(k_lo, mask=k_mask, other=0.0).to(tl.float32)
    k2 = tl.load(k_lo + half, mask=k_mask, other=0.0).to(tl.float32)
    tl.store(k_lo, (k1 * cos - k2 * sin).to(k_ptr.dtype.element_ty), mask=k_mask)
    tl.store(k_lo + half, (k2 * cos + k1 * sin).to(k_ptr.dtype.element_ty), mask=k_mask)


def qwen2vl_mrope(q, k, cos, sin, mrope_section, backward=False):
    """q [tokens, n_qh, hd], k [tokens, n_kh, hd] rotated in place; cos, sin
    [3, tokens, hd]; mrope_section (t, h, w) with t + h + w == hd // 2."""
    tokens, n_qh, hd = q.shape
    n_kh = k.shape[1]
    cos, sin = cos.contiguous(), sin.contiguous()
    qwen2vl_mrope_kernel[(tokens,)](q, k, cos, sin, q.stride(0), k.stride(0), cos.stride(0),
                                    n_qh, n_kh, hd, mrope_section[0], mrope_section[1],
                                    PAD_N_QH=triton.next_power_of_2(n_qh),
                                    PAD_N_KH=triton.next_power_of_2(n_kh),
                                    PAD_HD=triton.next_power_of_2(hd), BACKWARD_PASS=backward)
    return q, k
