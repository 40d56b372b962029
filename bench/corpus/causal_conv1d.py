"""Depthwise causal 1-D convolution, the short convolution state-space and
linear-attention layers run before their scan: every channel d of x
[batch, dim, seqlen] is filtered by its own WIDTH taps weight[d, :], output
position t reading positions t - WIDTH + 1 .. t (positions before 0 read as
zero), then an optional bias and SiLU. Each program computes one
[BLOCK_D, BLOCK_L] tile, loading the tile's inputs once per tap at a
shifted offset (the WIDTH - 1 positions before the tile come from the
masked shifted loads); fp32 arithmetic, output in the input's dtype."""
import torch
import triton
import triton.language as tl


@triton.jit
def causal_conv1d_fwd_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, batch, dim, seqlen, stride_xb,
                             stride_xd, stride_xl, stride_wd, stride_ww, stride_ob, stride_od,
                             stride_ol, WIDTH: tl.constexpr, HAS_BIAS: tl.constexpr,
                             SILU: tl.constexpr, BLOCK_D: tl.constexpr,
                             BLOCK_L: tl.constexpr):
    pid_l = tl.program_id(0)
    pid_d = tl.program_id(1)
    pid_b = tl.program_id(2)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    d_mask = offs_d < dim
    x_base = x_ptr + pid_b * stride_xb + offs_d[:, None] * stride_xd

    acc = tl.zeros((BLOCK_D, BLOCK_L), dtype=tl.float32)
    for k in tl.static_range(WIDTH):
        # tap k multiplies the input WIDTH - 1 - k positions back
        src = offs_l - (WIDTH - 1 - k)
        ld_mask = d_mask[:, None] & ((src >= 0) & (src < seqlen))[None, :]
        xk = tl.load(x_base + src[None, :] * stride_xl, mask=ld_mask, other=0.0)
        wk = tl.load(w_ptr + offs_d * stride_wd + k * stride_ww, mask=d_mask, other=0.0)
        acc += xk.to(tl.float32) * wk.to(tl.float32)[:, None]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_d, mask=d_mask, other=0.0)
        acc += bias.to(tl.float32)[:, None]
    if SILU:
        acc = acc * tl.sigmoid(acc)

    out_ptrs = out_ptr + pid_b * stride_ob + offs_d[:, None] * stride_od \
        + offs_l[None, :] * stride_ol
    tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty),
             mask=d_mask[:, None] & (offs_l < seqlen)[None, :])


def causal_conv1d_fn(x, weight, bias=None, activation=None, BLOCK_D=32, BLOCK_L=128):
    """x [batch, dim, seqlen], weight [dim, width], bias [dim] or None,
    activation None or "silu"/"swish" -> [batch, dim, seqlen] in x's dtype."""
    if activation not in (None, "silu", "swish"):
        raise NotImplementedError("activation must be None, silu or swish")
    batch, dim, seqlen = x.shape
    width = weight.shape[1]
    out = torch.empty_like(x)
    grid = (triton.cdiv(seqlen, BLOCK_L), triton.cdiv(dim, BLOCK_D), batch)
    causal_conv1d_fwd_kernel[grid](x, weight, bias if bias is not None else weight, out, batch,
                                   dim, seqlen, *x.stride(), *weight.stride(), *out.stride(),
                                   WIDTH=width, HAS_BIAS=bias is not None,
                                   SILU=activation is not None, BLOCK_D=BLOCK_D,
                                   BLOCK_L=BLOCK_L, num_warps=4)
    return out
