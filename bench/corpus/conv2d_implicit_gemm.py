"""2-D convolution forward as an implicit GEMM, the way Triton convolution
kernels are usually written: activations NHWC, filters [K_out, R, S, C]
(channels last in both, so a block of input channels is one contiguous
load), the GEMM's M the N*P*Q output pixels, its N the output channels and
its reduction the R*S*C filter taps. No im2col buffer: each step of the
reduction loop picks one filter tap (r, s) and one block of channels,
works out which input pixel every output row reads, and masks the rows
whose pixel falls in the zero padding. fp16 in, fp32 accumulation, fp16
out, optional bias in the epilogue."""
import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_nhwc_fwd_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, BATCH, IN_H, IN_W, IN_C, OUT_C,
                           OUT_H, OUT_W, KERNEL_H, KERNEL_W, stride_h, stride_w, pad_h, pad_w,
                           dil_h, dil_w, stride_xn, stride_xh, stride_xw, stride_xc, stride_wk,
                           stride_wr, stride_ws, stride_wc, stride_yn, stride_yh, stride_yw,
                           stride_yc, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    # output pixels of this tile: row m of the GEMM is pixel (n, p, q)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_c = tl.arange(0, BLOCK_K)
    npix = OUT_H * OUT_W
    m_valid = offs_m < BATCH * npix
    n_valid = offs_n < OUT_C
    img = offs_m // npix
    pix = offs_m % npix
    out_y = pix // OUT_W
    out_x = pix % OUT_W
    # top-left corner each output pixel's window starts from (may be in the padding)
    in_y0 = out_y * stride_h - pad_h
    in_x0 = out_x * stride_w - pad_w
    x_rows = x_ptr + img * stride_xn
    w_cols = w_ptr + offs_n * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    c_steps = tl.cdiv(IN_C, BLOCK_K)
    for step in range(0, KERNEL_H * KERNEL_W * c_steps):
        tap = step // c_steps
        c0 = (step % c_steps) * BLOCK_K
        r = tap // KERNEL_W
        s = tap % KERNEL_W
        in_y = in_y0 + r * dil_h
        in_x = in_x0 + s * dil_w
        inside = m_valid & (in_y >= 0) & (in_y < IN_H) & (in_x >= 0) & (in_x < IN_W)
        chan = c0 + offs_c
        c_valid = chan < IN_C
        a_ptrs = (x_rows[:, None] + in_y[:, None] * stride_xh + in_x[:, None] * stride_xw
                  + chan[None, :] * stride_xc)
        a = tl.load(a_ptrs, mask=inside[:, None] & c_valid[None, :], other=0.0)
        b_ptrs = w_cols[None, :] + r * stride_wr + s * stride_ws + chan[:, None] * stride_wc
        b = tl.load(b_ptrs, mask=c_valid[:, None] & n_valid[None, :], other=0.0)
        acc = tl.dot(a, b, acc)

    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=n_valid, other=0.0)
        acc += bias.to(tl.float32)[None, :]
    y_ptrs = (y_ptr + img[:, None] * stride_yn + out_y[:, None] * stride_yh
              + out_x[:, None] * stride_yw + offs_n[None, :] * stride_yc)
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_valid[:, None] & n_valid[None, :])


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d_nhwc(x, weight, bias=None, stride=1, padding=0, dilation=1, BLOCK_M=128,
                BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3):
    """x [N, H, W, C] and weight [K, R, S, C] (both channels last) -> y [N, P, Q, K]."""
    assert x.dtype == weight.dtype and x.shape[3] == weight.shape[3]
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    N, H, W, C = x.shape
    K, R, S, _ = weight.shape
    P = (H + 2 * ph - dh * (R - 1) - 1) // sh + 1
    Q = (W + 2 * pw - dw * (S - 1) - 1) // sw + 1
    y = torch.empty((N, P, Q, K), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(N * P * Q, BLOCK_M), triton.cdiv(K, BLOCK_N))
    conv2d_nhwc_fwd_kernel[grid](x, weight, bias if bias is not None else y, y, N, H, W, C, K, P,
                                 Q, R, S, sh, sw, ph, pw, dh, dw, *x.stride(), *weight.stride(),
                                 *y.stride(), HAS_BIAS=bias is not None, BLOCK_M=BLOCK_M,
                                 BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=num_warps,
                                 num_stages=num_stages)
    return y
