"""Scaled row sums and a clamp for a library whose tuning lives in host code:
the heuristics come from a factory function, from a table another function
fills in at import, and the autotune configs from a function that looks at
the device. Triton evaluates all of it in Python; tk takes the constexprs
from the launch."""
import functools

import torch
import triton
import triton.language as tl


def _block_heuristics(max_block):
    def block(args):
        return min(max_block, triton.next_power_of_2(args["n_cols"]))

    return {
        "BLOCK_N": block,
        "EVEN_N": lambda args: args["n_cols"] % block(args) == 0,
    }


def _make_clamp_table():
    table = {}
    table["HAS_MIN"] = lambda args: args["lo"] is not None
    table["HAS_MAX"] = lambda args: args["hi"] is not None
    return table


_CLAMP_HEURISTICS = _make_clamp_table()


@functools.lru_cache(maxsize=None)
def _scale_configs():
    big = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9
    warps = [4, 8] if big else [4]
    return [triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 512) for w in warps]


@triton.heuristics(_block_heuristics(4096))
@triton.jit
def _scaled_row_sum(x_ptr, out_ptr, scale, n_cols, stride,
                    BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        if EVEN_N:
            x = tl.load(x_ptr + row * stride + cols)
        else:
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        acc += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) * scale)


@triton.heuristics(values=_CLAMP_HEURISTICS)
@triton.jit
def _clamp(x_ptr, y_ptr, lo, hi, n, BLOCK: tl.constexpr,
           HAS_MIN: tl.constexpr, HAS_MAX: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if HAS_MIN:
        x = tl.maximum(x, lo)
    if HAS_MAX:
        x = tl.minimum(x, hi)
    tl.store(y_ptr + offs, x, mask=mask)


@triton.autotune(configs=_scale_configs(), key=["n"])
@triton.jit
def _axpby(x_ptr, y_ptr, out_ptr, a, b, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + b * y, mask=mask)
