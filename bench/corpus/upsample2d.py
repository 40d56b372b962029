"""2-D upsampling of NCHW activations in the manner of FlagGems' upsample
ops: the input is viewed as N*C planes of IH x IW and the output as N*C
planes of OH x OW, flattened to (N*C, OH*OW). Each program owns a block of
BLOCK_SIZE output pixels (the grid's first axis) and a slice of PLANES
planes (the second axis); it maps its pixels to source coordinates once and
reuses that mapping for every plane of its slice.

- nearest: ih = min(floor(oh * rscale_h), IH - 1), and the same along W,
  with the reciprocal scales passed as fp32 runtime floats (1 / scale_factor
  or IH / OH), so a non-integer scale costs a float multiply and a floor per
  coordinate; a pure gather.
- bilinear with align_corners=False: the source coordinate is
  (o + 0.5) * rscale - 0.5 clamped at 0, its floor and the next row/column
  (clamped to the edge) are the four taps, the fractional parts their lerp
  weights; arithmetic in fp32, the result stored in the input's dtype."""
import torch
import triton
import triton.language as tl


@triton.jit
def upsample_nearest2d_kernel(out_ptr, in_ptr, NC, IH, IW, OH, OW, rscale_h, rscale_w,
                              BLOCK_SIZE: tl.constexpr, PLANES: tl.constexpr):
    pid = tl.program_id(0)
    plane0 = tl.program_id(1) * PLANES
    idx = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = idx < OH * OW
    oh = idx // OW
    ow = idx % OW
    ih = tl.minimum(tl.floor(oh.to(tl.float32) * rscale_h).to(tl.int32), IH - 1)
    iw = tl.minimum(tl.floor(ow.to(tl.float32) * rscale_w).to(tl.int32), IW - 1)
    src = ih * IW + iw
    in_plane = IH * IW
    out_plane = OH * OW
    for p in range(PLANES):
        nc = plane0 + p
        if nc < NC:
            nc64 = nc.to(tl.int64)
            x = tl.load(in_ptr + nc64 * in_plane + src, mask=mask)
            tl.store(out_ptr + nc64 * out_plane + idx, x, mask=mask)


@triton.jit
def upsample_bilinear2d_kernel(out_ptr, in_ptr, NC, IH, IW, OH, OW, rscale_h, rscale_w,
                               BLOCK_SIZE: tl.constexpr, PLANES: tl.constexpr):
    pid = tl.program_id(0)
    plane0 = tl.program_id(1) * PLANES
    idx = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = idx < OH * OW
    oh = idx // OW
    ow = idx % OW
    # align_corners=False: pixel centres line up, sources left of 0 clamp to 0
    src_h = tl.maximum((oh.to(tl.float32) + 0.5) * rscale_h - 0.5, 0.0)
    src_w = tl.maximum((ow.to(tl.float32) + 0.5) * rscale_w - 0.5, 0.0)
    h0 = src_h.to(tl.int32)
    w0 = src_w.to(tl.int32)
    h1 = tl.minimum(h0 + 1, IH - 1)
    w1 = tl.minimum(w0 + 1, IW - 1)
    lh1 = src_h - h0.to(tl.float32)
    lw1 = src_w - w0.to(tl.float32)
    lh0 = 1.0 - lh1
    lw0 = 1.0 - lw1
    off00 = h0 * IW + w0
    off01 = h0 * IW + w1
    off10 = h1 * IW + w0
    off11 = h1 * IW + w1
    in_plane = IH * IW
    out_plane = OH * OW
    for p in range(PLANES):
        nc = plane0 + p
        if nc < NC:
            base = in_ptr + nc.to(tl.int64) * in_plane
            x00 = tl.load(base + off00, mask=mask, other=0.0).to(tl.float32)
            x01 = tl.load(base + off01, mask=mask, other=0.0).to(tl.float32)
            x10 = tl.load(base + off10, mask=mask, other=0.0).to(tl.float32)
            x11 = tl.load(base + off11, mask=mask, other=0.0).to(tl.float32)
            y = lh0 * (lw0 * x00 + lw1 * x01) + lh1 * (lw0 * x10 + lw1 * x11)
            tl.store(out_ptr + nc.to(tl.int64) * out_plane + idx,
                     y.to(out_ptr.dtype.element_ty), mask=mask)


def upsample2d(x, output_size, mode="nearest", BLOCK_SIZE=1024, PLANES=8, num_warps=4):
    """x [N, C, IH, IW] -> [N, C, OH, OW], 'nearest' or 'bilinear'
    (align_corners=False), the scales taken from the sizes."""
    n, c, ih, iw = x.shape
    oh, ow = output_size
    x = x.contiguous()
    out = torch.empty((n, c, oh, ow), dtype=x.dtype, device=x.device)
    kernel = upsample_nearest2d_kernel if mode == "nearest" else upsample_bilinear2d_kernel
    grid = (triton.cdiv(oh * ow, BLOCK_SIZE), triton.cdiv(n * c, PLANES))
    kernel[grid](out, x, n * c, ih, iw, oh, ow, ih / oh, iw / ow, BLOCK_SIZE=BLOCK_SIZE,
                 PLANES=PLANES, num_warps=num_warps)
    return out
