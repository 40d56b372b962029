import torch
import triton
import triton.language as tl

import mylib.ops.ext as tle
from mylib.ops import ext
from ..utils import scaled, calculate_settings, SCALE
from .. import utils
from .missing_module import not_there


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tle.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = scaled(x) + utils.scaled(x) * SCALE
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def grid_kernel(y_ptr):
    tl.store(y_ptr + ext.program_id(0), ext.num_programs(0).to(tl.float32))


@triton.jit
def uses_host(x_ptr, n):
    block, warps = calculate_settings(n)


@triton.jit
def uses_missing(x_ptr):
    not_there(x_ptr)


@triton.jit
def uses_bad(x_ptr):
    tl.store(x_ptr, utils.bad_helper(tl.load(x_ptr)))


@triton.jit
def uses_unknown(x_ptr):
    tl.store(x_ptr, utils.nothing_here)


def scale(x):
    y = torch.empty_like(x)
    block, warps = calculate_settings(x.numel())
    scale_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block, num_warps=warps)
    return y
