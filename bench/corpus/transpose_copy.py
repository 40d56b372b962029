"""Layout copies: a tiled 2-D transpose (each program reads a BLOCK_M x
BLOCK_N tile along rows and writes it along the columns of the output),
and the [batch, heads, seq, dim] -> [batch, seq, heads, dim] permute that
attention wrappers do between head-major and token-major layouts, with all
strides passed at run time and the inner one given as an int (1)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _transpose_2d_kernel(in_ptr, out_ptr, M, N, stride_im, stride_on,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(in_ptr + rm[:, None] * stride_im + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[:, None] * stride_on + rm[None, :], tl.trans(tile), mask=mask.T)


@triton.jit
def _permute_bhsd_to_bshd(src_ptr, dst_ptr, n_heads, seq_len, head_dim,
                          s_b, s_h, s_s, s_d, d_b, d_s, d_h, d_d,
                          BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_s = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // n_heads
    h = pid_bh % n_heads
    offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (offs_s[:, None] < seq_len) & (offs_d[None, :] < head_dim)
    src = src_ptr + b.to(tl.int64) * s_b + h * s_h + offs_s[:, None] * s_s + offs_d[None, :] * s_d
    dst = dst_ptr + b.to(tl.int64) * d_b + h * d_h + offs_s[:, None] * d_s + offs_d[None, :] * d_d
    tl.store(dst, tl.load(src, mask=mask), mask=mask)
