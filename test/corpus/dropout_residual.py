"""Fused dropout + residual add + bias, with the random mask made on the fly
from a seed and the element offset (nothing stored for backward), and a
seeded dropout whose seeds differ per row."""
import torch

import triton
import triton.language as tl

from typing import NamedTuple


class DropoutState(NamedTuple):
    seed: int
    p: float


@triton.jit
def _keep_mask(seed, offsets, p):
    r = tl.rand(seed, offsets)
    return r > p


@triton.jit
def dropout_add_kernel(x_ptr, residual_ptr, bias_ptr, out_ptr, n_elements, n_cols, p, seed,
                       HAS_BIAS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    if HAS_BIAS:
        x += tl.load(bias_ptr + offsets % n_cols, mask=mask).to(tl.float32)
    keep = _keep_mask(seed, offsets, p)
    x = tl.where(keep, x / (1 - p), 0.0)
    r = tl.load(residual_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + r).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _seeded_dropout_rows(x_ptr, out_ptr, seeds_ptr, n_cols, stride, p, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    seed = tl.load(seeds_ptr + row)
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    random = tl.rand(seed, cols)
    out = tl.where(random > p, x / (1 - p), 0.0)
    tl.store(out_ptr + row * stride + cols, out, mask=mask)


def dropout_add(x, residual, bias=None, state=DropoutState(seed=123, p=0.1)):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    dropout_add_kernel[grid](x, residual, bias, out, n, x.shape[-1], state.p, state.seed,
                             HAS_BIAS=bias is not None, BLOCK_SIZE=1024)
    return out


if __name__ == "__main__":
    x = torch.randn(size=(10,), device="cuda")
    out = dropout_add(x, torch.zeros_like(x))
    for name, row in (("input", x), ("output", out)):
        print(f"{name:>8}", " ".join(f"{v:+.3f}" for v in row.tolist()))
