"""Scans: row-wise cumulative sums (forward and reversed, as a chunked
prefix for long rows), a first-order linear recurrence h[t] = a[t] h[t-1] +
x[t] solved with an associative scan over pairs, and a segmented sum whose
segments start where a flag is set (the combine function branches on a
module-level constexpr)."""
import enum
import itertools
from dataclasses import dataclass, field

import torch
import triton
import triton.language as tl

INCLUSIVE = tl.constexpr(True)


class ScanKind(enum.Enum):
    SUM = "sum"
    RECURRENCE = "recurrence"
    SEGMENTED = "segmented"


@dataclass
class ScanPlan:
    n: int
    block: int = 1024
    chunks: list = field(default_factory=list)

    def __post_init__(self):
        self.chunks = [(s, min(s + self.block, self.n)) for s in range(0, self.n, self.block)]


@triton.jit
def _first_order_op(l_a, l_x, r_a, r_x):
    # composing h -> a1 h + x1 then h -> a2 h + x2
    return r_a * l_a, r_a * l_x + r_x


@triton.jit
def _segmented_op(l_flag, l_val, r_flag, r_val):
    if INCLUSIVE:
        val = tl.where(r_flag != 0, r_val, l_val + r_val)
    else:
        val = l_val + r_val
    return l_flag | r_flag, val


@triton.jit
def cumsum_rows_kernel(x_ptr, y_ptr, n_cols, stride, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    """Long rows in chunks: each chunk adds the carry of the ones before it."""
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((1,), dtype=tl.float32)
    for c in range(0, tl.cdiv(n_cols, BLOCK)):
        if REVERSE:
            start = n_cols - (c + 1) * BLOCK
        else:
            start = c * BLOCK
        cols = start + tl.arange(0, BLOCK)
        mask = (cols < n_cols) & (cols >= 0)
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0, reverse=REVERSE) + carry
        tl.store(y_ptr + row * stride + cols, y, mask=mask)
        carry += tl.sum(x, axis=0)


@triton.jit
def linear_recurrence_kernel(a_ptr, x_ptr, h_ptr, h0_ptr, seq_len, n_channels,
                             BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    """Channels along dim 1, time along dim 0; one block of channels per
    program, the whole sequence at once."""
    pid = tl.program_id(0)
    t = tl.arange(0, BLOCK_T)
    ch = pid * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (t[:, None] < seq_len) & (ch[None, :] < n_channels)
    offs = t[:, None] * n_channels + ch[None, :]
    a = tl.load(a_ptr + offs, mask=mask, other=1.0).to(tl.float32)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if h0_ptr is not None:
        # the initial state enters as the first input: h[0] = a[0] h0 + x[0]
        h0 = tl.load(h0_ptr + ch, mask=ch < n_channels, other=0.0).to(tl.float32)
        x = tl.where(t[:, None] == 0, a * h0[None, :] + x, x)
    _, h = tl.associative_scan((a, x), axis=0, combine_fn=_first_order_op)
    tl.store(h_ptr + offs, h.to(h_ptr.dtype.element_ty), mask=mask)


@triton.jit
def segmented_sum_kernel(flag_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    flags = tl.load(flag_ptr + offs, mask=mask, other=0).to(tl.int32)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    _, y = tl.associative_scan((flags, x), 0, _segmented_op)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def cumprod_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(y_ptr + offs, tl.cumprod(x, 0), mask=offs < n)


def cumsum(x, reverse=False):
    y = torch.empty_like(x, dtype=torch.float32)
    cumsum_rows_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), REVERSE=reverse, BLOCK=1024)
    return y


def linear_recurrence(a, x, h0=None):
    T, C = x.shape
    h = torch.empty_like(x)
    BLOCK_T = triton.next_power_of_2(T)
    BLOCK_C = max(1, 4096 // BLOCK_T)
    linear_recurrence_kernel[(triton.cdiv(C, BLOCK_C),)](a, x, h, h0, T, C, BLOCK_T=BLOCK_T,
                                                          BLOCK_C=BLOCK_C)
    return h


def reference_recurrence(a, x, h0=None):
    h = torch.zeros_like(x[0]) if h0 is None else h0
    out = []
    for a_t, x_t in zip(a, x):
        h = a_t * h + x_t
        out.append(h)
    return torch.stack(out)


if __name__ == "__main__":
    for kind, (T, C) in itertools.product(ScanKind, [(64, 32), (256, 5)]):
        a = torch.rand(T, C, device="cuda")
        x = torch.randn(T, C, device="cuda")
        if kind is ScanKind.RECURRENCE:
            err = (linear_recurrence(a, x) - reference_recurrence(a, x)).abs().max()
            print(kind.value, T, C, f"{err.item():.2e}")
