# Inverses of the unit lower-triangular matrices of the chunked delta rule,
# written in the manner of flash-linear-attention.
#
# Each token row of A holds that token's row of its chunk's strictly lower
# triangular matrix; the kernels write the rows of inverse(I + A) beside it.
# _tkk_solve_tril_16 inverts one 16x16 diagonal block per program (its
# column offset within a wider chunk row follows from the block's position
# in the chunk) by forward substitution held in registers, one row per
# step; _tkk_solve_tril_32 inverts the two 16x16 diagonal blocks of a 32x32
# chunk the same way and joins them through the off-diagonal block with two
# tl.dot products at a compile-time input precision.
#
# Idioms: block pointers with boundary_check and zero padding (a partial
# block at a sequence's end reads zeros below its valid rows, so its inverse
# is the inverse of the valid part bordered by the identity, and only the
# valid rows are written back); packed variable-length sequences through
# cu_seqlens and (sequence, chunk) pairs of chunk_indices; row extraction
# and row update through tl.where over a broadcast row index; a
# @triton.jit helper shared by both kernels; T left unspecialised.
import triton
import triton.language as tl


@triton.jit
def _tkk_unit_tril_inv16(blk):
    # inverse of I + strict_lower(blk) for a 16x16 fp32 block.
    # X = I + B with B strictly lower; row i of B satisfies
    #   B[i, :] = -L[i, :] + sum_{j < i} (-L[i, j]) * B[j, :]
    # so B starts as -L and is finished one row at a time, top to bottom.
    idx = tl.arange(0, 16)
    below = idx[:, None] > idx[None, :]
    b = tl.where(below, -blk, 0.0)
    for i in tl.static_range(1, 16):
        sel = idx[:, None] == i
        # row i of -L: nonzero only in columns j < i, whose rows are final
        row = tl.sum(tl.where(sel, b, 0.0), axis=0)
        row = row + tl.sum(row[:, None] * b, axis=0)
        b = tl.where(sel, row[None, :], b)
    return b + tl.where(idx[:, None] == idx[None, :], 1.0, 0.0)


@triton.jit
def _tkk_block_span(i_t, i_b, cu_seqlens, chunk_indices, T, IS_VARLEN: tl.constexpr):
    """(block index within the sequence, the sequence's first token, its
    length) of program block i_t: from the (sequence, block) pair of
    chunk_indices for packed sequences, else sequence i_b of length T."""
    if IS_VARLEN:
        i_n = tl.load(chunk_indices + i_t * 2).to(tl.int32)
        i_t = tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos = tl.load(cu_seqlens + i_n).to(tl.int32)
        T = tl.load(cu_seqlens + i_n + 1).to(tl.int32) - bos
    else:
        bos = i_b * T
    return i_t, bos, T


@triton.jit(do_not_specialize=["T"])
def _tkk_solve_tril_16(A, Ai, cu_seqlens, chunk_indices, T, H: tl.constexpr, BT: tl.constexpr,
                       IS_VARLEN: tl.constexpr):
    # one program per 16-token block of one head: Ai[block] = inverse of the
    # 16x16 diagonal block that sits at this block's column offset in its
    # BT-wide chunk rows
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _tkk_block_span(i_t, i_b, cu_seqlens, chunk_indices, T, IS_VARLEN)

    r0 = i_t * 16
    col = r0 % BT
    p_a = tl.make_block_ptr(A + (bos * H + i_h) * BT, (T, BT), (H * BT, 1), (r0, col), (16, 16), (1, 0))
    p_ai = tl.make_block_ptr(Ai + (bos * H + i_h) * 16, (T, 16), (H * 16, 1), (r0, 0), (16, 16), (1, 0))
    blk = tl.load(p_a, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    inv = _tkk_unit_tril_inv16(blk)
    tl.store(p_ai, inv.to(p_ai.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T"])
def _tkk_solve_tril_32(A, Ai, cu_seqlens, chunk_indices, T, H: tl.constexpr,
                       DOT_PRECISION: tl.constexpr, IS_VARLEN: tl.constexpr):
    # one program per 32-token chunk of one head:
    #   inverse([[A11, 0], [A21, A22]]) = [[X11, 0], [-X22 A21 X11, X22]]
    # with X11, X22 the inverses of the unit lower-triangular diagonal blocks
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _tkk_block_span(i_t, i_b, cu_seqlens, chunk_indices, T, IS_VARLEN)

    r0 = i_t * 32
    a_base = A + (bos * H + i_h) * 32
    ai_base = Ai + (bos * H + i_h) * 32
    p_a11 = tl.make_block_ptr(a_base, (T, 32), (H * 32, 1), (r0, 0), (16, 16), (1, 0))
    p_a21 = tl.make_block_ptr(a_base, (T, 32), (H * 32, 1), (r0 + 16, 0), (16, 16), (1, 0))
    p_a22 = tl.make_block_ptr(a_base, (T, 32), (H * 32, 1), (r0 + 16, 16), (16, 16), (1, 0))
    a11 = tl.load(p_a11, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    a21 = tl.load(p_a21, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    a22 = tl.load(p_a22, boundary_check=(0, 1), padding_option="zero").to(tl.float32)

    x11 = _tkk_unit_tril_inv16(a11)
    x22 = _tkk_unit_tril_inv16(a22)
    t21 = tl.dot(a21, x11, input_precision=DOT_PRECISION)
    x21 = -tl.dot(x22, t21, input_precision=DOT_PRECISION)

    p_x11 = tl.make_block_ptr(ai_base, (T, 32), (H * 32, 1), (r0, 0), (16, 16), (1, 0))
    p_x12 = tl.make_block_ptr(ai_base, (T, 32), (H * 32, 1), (r0, 16), (16, 16), (1, 0))
    p_x21 = tl.make_block_ptr(ai_base, (T, 32), (H * 32, 1), (r0 + 16, 0), (16, 16), (1, 0))
    p_x22 = tl.make_block_ptr(ai_base, (T, 32), (H * 32, 1), (r0 + 16, 16), (16, 16), (1, 0))
    ty = Ai.dtype.element_ty
    tl.store(p_x11, x11.to(ty), boundary_check=(0, 1))
    tl.store(p_x12, tl.zeros([16, 16], dtype=ty), boundary_check=(0, 1))
    tl.store(p_x21, x21.to(ty), boundary_check=(0, 1))
    tl.store(p_x22, x22.to(ty), boundary_check=(0, 1))
