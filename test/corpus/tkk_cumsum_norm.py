# Chunk-local prefix sums and row L2 normalisation, the small building
# blocks of the chunked delta-rule linear-attention kernels.
#
# The scalar gate cumsum sums a per-(token, head) gate inclusively within
# each BT-token chunk, forwards or backwards, optionally scaled, over a
# token-major [B, T, H] or head-first [B, H, T] layout; one program walks a
# strided 1-D block pointer down its chunk and scans it with tl.cumsum.
# The vector gate cumsum does the same for S channels per head on a
# [tokens, H, S] layout, as a 2-D block pointer tile multiplied on the left
# by a 0/1 triangular matrix built from tl.arange comparisons (tl.dot at
# ieee precision). Both take packed variable-length sequences through
# cu_seqlens (sequence bounds) and chunk_indices ((sequence, chunk) pairs,
# one per program), the chunking then restarting at each sequence start.
# The row L2 norm loads BT rows of a padded BD-wide tile with masked
# tl.load, reduces the sum of squares in fp32, and stores the normalised
# rows and the per-row reciprocal norm; a constexpr flag adds compile-time
# checks on the block shape.
import triton
import triton.language as tl


@triton.jit
def _tkk_chunk_span(cu_seqlens, chunk_indices, i_c, i_b, T, IS_VARLEN: tl.constexpr):
    # (chunk within its sequence, first token, sequence length) of program
    # i_c; dense runs hold one sequence of T tokens per batch row i_b
    if IS_VARLEN:
        seq = tl.load(chunk_indices + 2 * i_c).to(tl.int32)
        chunk = tl.load(chunk_indices + 2 * i_c + 1).to(tl.int32)
        start = tl.load(cu_seqlens + seq).to(tl.int32)
        stop = tl.load(cu_seqlens + seq + 1).to(tl.int32)
        return chunk, start, stop - start
    else:
        return i_c, i_b * T, T


@triton.heuristics({"HAS_SCALE": lambda args: args["scale"] is not None})
@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_local_cumsum_scalar(s, o, scale, cu_seqlens, chunk_indices, T,
                                   B: tl.constexpr, H: tl.constexpr, BT: tl.constexpr,
                                   REVERSE: tl.constexpr, HAS_SCALE: tl.constexpr,
                                   IS_VARLEN: tl.constexpr, HEAD_FIRST: tl.constexpr):
    i_c = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    chunk, start, seq_len = _tkk_chunk_span(cu_seqlens, chunk_indices, i_c, i_b, T, IS_VARLEN)

    # the gate of one (sequence, head) as a 1-D strided series
    if HEAD_FIRST:
        first = start * H + i_h * seq_len
        step = 1
    else:
        first = start * H + i_h
        step = H
    src = tl.make_block_ptr(s + first, (seq_len,), (step,), (chunk * BT,), (BT,), (0,))
    dst = tl.make_block_ptr(o + first, (seq_len,), (step,), (chunk * BT,), (BT,), (0,))

    # tokens past the sequence end read as zero and so add nothing
    g = tl.load(src, boundary_check=(0,)).to(tl.float32)
    acc = tl.cumsum(g, axis=0, reverse=REVERSE)
    if HAS_SCALE:
        acc = acc * scale
    tl.store(dst, acc.to(o.dtype.element_ty), boundary_check=(0,))


@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_local_cumsum_vector(s, o, cu_seqlens, chunk_indices, T,
                                   H: tl.constexpr, S: tl.constexpr, BT: tl.constexpr,
                                   BS: tl.constexpr, REVERSE: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_s = tl.program_id(0)
    i_c = tl.program_id(1)
    i_bh = tl.program_id(2)
    i_b = i_bh // H
    i_h = i_bh % H
    chunk, start, seq_len = _tkk_chunk_span(cu_seqlens, chunk_indices, i_c, i_b, T, IS_VARLEN)

    # row r of the result gathers rows c with c <= r (forward) or c >= r
    # (reverse): a 0/1 triangular matrix applied on the left
    r = tl.arange(0, BT)[:, None]
    c = tl.arange(0, BT)[None, :]
    if REVERSE:
        tri = tl.where(r <= c, 1.0, 0.0)
    else:
        tri = tl.where(r >= c, 1.0, 0.0)

    base = (start * H + i_h) * S
    src = tl.make_block_ptr(s + base, (seq_len, S), (H * S, 1), (chunk * BT, i_s * BS), (BT, BS), (1, 0))
    dst = tl.make_block_ptr(o + base, (seq_len, S), (H * S, 1), (chunk * BT, i_s * BS), (BT, BS), (1, 0))
    g = tl.load(src, boundary_check=(0, 1)).to(tl.float32)
    acc = tl.dot(tri, g, input_precision="ieee")
    tl.store(dst, acc.to(o.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T"])
def _tkk_l2norm_fwd(x, y, rstd, eps, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr,
                    CHECK: tl.constexpr):
    if CHECK:
        tl.static_assert(BD >= D, "the padded row block must cover the row")
        tl.static_assert(BD < 2 * D, "the padded row block is wider than needed")
    row = tl.program_id(0) * BT + tl.arange(0, BT)
    col = tl.arange(0, BD)
    live = (row[:, None] < T) & (col[None, :] < D)
    offs = row[:, None] * D + col[None, :]

    v = tl.load(x + offs, mask=live, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(v * v, axis=1) + eps)
    tl.store(y + offs, (v * inv[:, None]).to(y.dtype.element_ty), mask=live)
    tl.store(rstd + row, inv, mask=row < T)
