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
    rows = tl.arange(0, 16)[:, None]
    cols = tl.arange(0, 16)[None, :]
    a = _load_16(A, T, r0, c0, BT)
    # x holds (inverse - I); it starts as -strict_lower(a), which rows 0 and 1 already are
    x = -tl.where(rows > cols, a, 0.0)
    n = tl.minimum(16, T - r0)
    for i in range(2, n):
        # -a_i (zero at and right of the diagonal), picked out of x before row i is updated
        neg_ai = tl.sum(tl.where(rows == i, x, 0.0), axis=0)
        # row i: -a_i - a_i @ x, where only rows above i contribute
        new_row = neg_ai + tl.sum(neg_ai[:, None] * x, axis=0)
        x = tl.where(rows == i, new_row[None, :], x)
    return x + tl.where(rows == cols, 1.0, 0.0)


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
    i_t = tl.program_id(0)
    i_bh = tl.program_id(1)
    A = A + i_bh.to(tl.int64) * T * BT
    Ai = Ai + i_bh.to(tl.int64) * T * BT
    r0 = i_t * BT

    # inverses of the four diagonal blocks
    x00 = _diag_inverse_16(A, T, r0, 0, BT)
    x11 = _diag_inverse_16(A, T, r0 + 16, 16, BT)
    x22 = _diag_inverse_16(A, T, r0 + 32, 32, BT)
    x33 = _diag_inverse_16(A, T, r0 + 48, 48, BT)

    # strictly lower blocks of the chunk (rows past T read as zero)
    a10 = _load_16(A, T, r0 + 16, 0, BT)
    a20 = _load_16(A, T, r0 + 32, 0, BT)
    a21 = _load_16(A, T, r0 + 32, 16, BT)
    a30 = _load_16(A, T, r0 + 48, 0, BT)
    a31 = _load_16(A, T, r0 + 48, 16, BT)
    a32 = _load_16(A, T, r0 + 48, 32, BT)

    # block forward substitution, one block row at a time: X_ij = -X_ii (sum_k A_ik X_kj)
    x10 = -tl.dot(x11, tl.dot(a10, x00, input_precision=DOT_PRECISION),
                  input_precision=DOT_PRECISION)

    s21 = tl.dot(a21, x11, input_precision=DOT_PRECISION)
    s20 = tl.dot(a20, x00, input_precision=DOT_PRECISION)
    s20 = tl.dot(a21, x10, s20, input_precision=DOT_PRECISION)
    x21 = -tl.dot(x22, s21, input_precision=DOT_PRECISION)
    x20 = -tl.dot(x22, s20, input_precision=DOT_PRECISION)

    s32 = tl.dot(a32, x22, input_precision=DOT_PRECISION)
    s31 = tl.dot(a31, x11, input_precision=DOT_PRECISION)
    s31 = tl.dot(a32, x21, s31, input_precision=DOT_PRECISION)
    s30 = tl.dot(a30, x00, input_precision=DOT_PRECISION)
    s30 = tl.dot(a31, x10, s30, input_precision=DOT_PRECISION)
    s30 = tl.dot(a32, x20, s30, input_precision=DOT_PRECISION)
    x32 = -tl.dot(x33, s32, input_precision=DOT_PRECISION)
    x31 = -tl.dot(x33, s31, input_precision=DOT_PRECISION)
    x30 = -tl.dot(x33, s30, input_precision=DOT_PRECISION)

    # the full 64-wide row block: inverse on and below the diagonal, zeros above
    zero = tl.zeros([16, 16], dtype=tl.float32)
    _store_16(Ai, x00, T, r0, 0, BT)
    _store_16(Ai, zero, T, r0, 16, BT)
    _store_16(Ai, zero, T, r0, 32, BT)
    _store_16(Ai, zero, T, r0, 48, BT)
    _store_16(Ai, x10, T, r0 + 16, 0, BT)
    _store_16(Ai, x11, T, r0 + 16, 16, BT)
    _store_16(Ai, zero, T, r0 + 16, 32, BT)
    _store_16(Ai, zero, T, r0 + 16, 48, BT)
    _store_16(Ai, x20, T, r0 + 32, 0, BT)
    _store_16(Ai, x21, T, r0 + 32, 16, BT)
    _store_16(Ai, x22, T, r0 + 32, 32, BT)
    _store_16(Ai, zero, T, r0 + 32, 48, BT)
    _store_16(Ai, x30, T, r0 + 48, 0, BT)
    _store_16(Ai, x31, T, r0 + 48, 16, BT)
    _store_16(Ai, x32, T, r0 + 48, 32, BT)
    _store_16(Ai, x33, T, r0 + 48, 48, BT)


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
