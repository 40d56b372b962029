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
    q_ptr = q_ptr + tok * q_tok_stride
    k_ptr = k_ptr + tok * k_tok_stride

    half = hd // 2
    d = tl.arange(0, PAD_HD // 2)
    t_end = mrope_section_t
    h_end = t_end + mrope_section_h
    t_mask = d < t_end
    h_mask = (t_end <= d) & (d < h_end)
    w_mask = (h_end <= d) & (d < half)

    t_cos = cos_ptr + tok * hd
    h_cos = t_cos + cos_plane_stride
    w_cos = h_cos + cos_plane_stride
    t_sin = sin_ptr + tok * hd
    h_sin = t_sin + cos_plane_stride
    w_sin = h_sin + cos_plane_stride
    cos_row = (tl.load(t_cos + d, mask=t_mask, other=0.0) +
               tl.load(h_cos + d, mask=h_mask, other=0.0) +
               tl.load(w_cos + d, mask=w_mask, other=0.0)).to(tl.float32)
    sin_row = (tl.load(t_sin + d, mask=t_mask, other=0.0) +
               tl.load(h_sin + d, mask=h_mask, other=0.0) +
               tl.load(w_sin + d, mask=w_mask, other=0.0)).to(tl.float32)
    if BACKWARD_PASS:
        sin_row = -sin_row

    q_offs = tl.arange(0, PAD_N_QH)[:, None] * hd + d[None, :]
    q_mask = (tl.arange(0, PAD_N_QH)[:, None] < n_qh) & (d[None, :] < half)
    q1 = tl.load(q_ptr + q_offs, mask=q_mask, other=0.0).to(tl.float32)
    q2 = tl.load(q_ptr + q_offs + half, mask=q_mask, other=0.0).to(tl.float32)
    tl.store(q_ptr + q_offs, (q1 * cos_row - q2 * sin_row).to(q_ptr.dtype.element_ty),
             mask=q_mask)
    tl.store(q_ptr + q_offs + half, (q2 * cos_row + q1 * sin_row).to(q_ptr.dtype.element_ty),
             mask=q_mask)

    k_offs = tl.arange(0, PAD_N_KH)[:, None] * hd + d[None, :]
    k_mask = (tl.arange(0, PAD_N_KH)[:, None] < n_kh) & (d[None, :] < half)
    k1 = tl.load(k_ptr + k_offs, mask=k_mask, other=0.0).to(tl.float32)
    k2 = tl.load(k_ptr + k_offs + half, mask=k_mask, other=0.0).to(tl.float32)
    tl.store(k_ptr + k_offs, (k1 * cos_row - k2 * sin_row).to(k_ptr.dtype.element_ty),
             mask=k_mask)
    tl.store(k_ptr + k_offs + half, (k2 * cos_row + k1 * sin_row).to(k_ptr.dtype.element_ty),
             mask=k_mask)


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
