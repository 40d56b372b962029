"""Chunk-local inverse of a unit lower-triangular matrix, the step of
delta-rule style linear attention (flash-linear-attention's chunked
kernels) that turns the strictly lower A = tril(beta * K K^T, -1) of every
chunk of BT = 64 rows into (I + A)^-1. A is [B*H, T, BT], row t holding the
chunk-local columns of its chunk; only the strictly lower part of each
chunk is read (the diagonal and above may hold anything).

One program per (chunk, batch*head). The 64x64 chunk is cut into 4x4
blocks of 16: each diagonal block is inverted by forward substitution, a
loop over its rows where row i of the inverse is -a_i - a_i @ (rows above),
done as a broadcast product summed over the rows and written back into the
tile with tl.where; the blocks below the diagonal then follow from block
forward substitution, X_ij = -X_ii (sum_k L_ik X_kj), as 16x16 tl.dot
products whose precision is a constexpr (ieee fp32 by default, tf32 where
speed matters more). The whole 64-wide row block is written, zeros above
the diagonal, in the output dtype; a last chunk shorter than 64 rows is
handled by the block pointers' boundary checks and the loop bounds."""
import torch
import triton
import triton.language as tl


@triton.jit
def _diag_inverse_16(A, T, r0, c0, BT: tl.constexpr):
    # (I + strict_lower(block))^-1 of the 16x16 block at rows r0.., chunk columns c0..
    o_i = tl.arange(0, 16)
    p_blk = tl.make_block_ptr(A, (T, BT), (BT, 1), (r0, c0), (16, 16), (1, 0))
    b_x = tl.load(p_blk, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    b_x = -tl.where(o_i[:, None] > o_i[None, :], b_x, 0.0)
    # rows 0 and 1 are already final; row i uses the finished rows above it
    for i in range(2, min(16, T - r0)):
        b_row = -tl.load(A + (r0 + i) * BT + c0 + o_i, mask=o_i < i, other=0.0).to(tl.float32)
        b_row = b_row + tl.sum(b_row[:, None] * b_x, 0)
        b_x = tl.where((o_i == i)[:, None], b_row[None, :], b_x)
    return b_x + tl.where(o_i[:, None] == o_i[None, :], 1.0, 0.0)


@triton.jit
def _load_16(A, T, r0, c0, BT: tl.constexpr):
    p_blk = tl.make_block_ptr(A, (T, BT), (BT, 1), (r0, c0), (16, 16), (1, 0))
    return tl.load(p_blk, boundary_check=(0, 1), padding_option="zero").to(tl.float32)


@triton.jit
def _store_16(Ai, x, T, r0, c0, BT: tl.constexpr):
    p_blk = tl.make_block_ptr(Ai, (T, BT), (BT, 1), (r0, c0), (16, 16), (1, 0))
    tl.store(p_blk, x.to(Ai.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def solve_tril_64_kernel(A, Ai, T, BT: tl.constexpr, DOT_PRECISION: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    A += i_bh * T * BT
    Ai += i_bh * T * BT
    t0 = i_t * BT

    x11 = _diag_inverse_16(A, T, t0, 0, BT)
    x22 = _diag_inverse_16(A, T, t0 + 16, 16, BT)
    x33 = _diag_inverse_16(A, T, t0 + 32, 32, BT)
    x44 = _diag_inverse_16(A, T, t0 + 48, 48, BT)

    a21 = _load_16(A, T, t0 + 16, 0, BT)
    a31 = _load_16(A, T, t0 + 32, 0, BT)
    a32 = _load_16(A, T, t0 + 32, 16, BT)
    a41 = _load_16(A, T, t0 + 48, 0, BT)
    a42 = _load_16(A, T, t0 + 48, 16, BT)
    a43 = _load_16(A, T, t0 + 48, 32, BT)

    # first sub-diagonal, then second, then the corner
    x21 = -tl.dot(tl.dot(x22, a21, input_precision=DOT_PRECISION), x11,
                  input_precision=DOT_PRECISION)
    x32 = -tl.dot(tl.dot(x33, a32, input_precision=DOT_PRECISION), x22,
                  input_precision=DOT_PRECISION)
    x43 = -tl.dot(tl.dot(x44, a43, input_precision=DOT_PRECISION), x33,
                  input_precision=DOT_PRECISION)
    s31 = tl.dot(a31, x11, input_precision=DOT_PRECISION)
    s31 = tl.dot(a32, x21, s31, input_precision=DOT_PRECISION)
    x31 = -tl.dot(x33, s31, input_precision=DOT_PRECISION)
    s42 = tl.dot(a42, x22, input_precision=DOT_PRECISION)
    s42 = tl.dot(a43, x32, s42, input_precision=DOT_PRECISION)
    x42 = -tl.dot(x44, s42, input_precision=DOT_PRECISION)
    s41 = tl.dot(a41, x11, input_precision=DOT_PRECISION)
    s41 = tl.dot(a42, x21, s41, input_precision=DOT_PRECISION)
    s41 = tl.dot(a43, x31, s41, input_precision=DOT_PRECISION)
    x41 = -tl.dot(x44, s41, input_precision=DOT_PRECISION)

    zero = tl.zeros([16, 16], dtype=tl.float32)
    _store_16(Ai, x11, T, t0, 0, BT)
    _store_16(Ai, zero, T, t0, 16, BT)
    _store_16(Ai, zero, T, t0, 32, BT)
    _store_16(Ai, zero, T, t0, 48, BT)
    _store_16(Ai, x21, T, t0 + 16, 0, BT)
    _store_16(Ai, x22, T, t0 + 16, 16, BT)
    _store_16(Ai, zero, T, t0 + 16, 32, BT)
    _store_16(Ai, zero, T, t0 + 16, 48, BT)
    _store_16(Ai, x31, T, t0 + 32, 0, BT)
    _store_16(Ai, x32, T, t0 + 32, 16, BT)
    _store_16(Ai, x33, T, t0 + 32, 32, BT)
    _store_16(Ai, zero, T, t0 + 32, 48, BT)
    _store_16(Ai, x41, T, t0 + 48, 0, BT)
    _store_16(Ai, x42, T, t0 + 48, 16, BT)
    _store_16(Ai, x43, T, t0 + 48, 32, BT)
    _store_16(Ai, x44, T, t0 + 48, 48, BT)


def solve_tril(A, output_dtype=None, precision="ieee", num_warps=4):
    """A [B*H, T, 64], strictly lower triangular within each chunk of 64 rows ->
    (I + A)^-1 chunk by chunk, [B*H, T, 64] in output_dtype (A's by default)."""
    BH, T, BT = A.shape
    assert BT == 64, "chunk size 64 only"
    assert precision in ("ieee", "tf32", "tf32x3")
    Ai = torch.empty(A.shape, device=A.device, dtype=output_dtype or A.dtype)
    grid = (triton.cdiv(T, BT), BH)
    solve_tril_64_kernel[grid](A, Ai, T, BT=BT, DOT_PRECISION=precision, num_warps=num_warps)
    return Ai
