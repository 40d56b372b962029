"""Bias add fused with the activation that follows a linear layer, over a
2-D grid of (row block, column block). Reaches the package's helpers through
its module names: `kernlib.ext.program_id`, `kernlib.utils.gelu_tanh`, and
`utils.silu` after `from kernlib import utils`."""
import torch
import triton
import triton.language as tl

import kernlib.ext
import kernlib.utils
from kernlib import utils

ACTIVATIONS = ("gelu_tanh", "silu", "relu")


@triton.jit
def _bias_act_kernel(y_ptr, x_ptr, b_ptr, n_rows, n_cols, stride, ACT: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = kernlib.ext.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = kernlib.ext.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    x += tl.load(b_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)[None, :]
    if ACT == "gelu_tanh":
        y = kernlib.utils.gelu_tanh(x)
    elif ACT == "silu":
        y = utils.silu(x)
    else:
        y = tl.maximum(x, 0.0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def bias_act(x: torch.Tensor, bias: torch.Tensor, activation: str = "gelu_tanh") -> torch.Tensor:
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}")
    x2 = x.reshape(-1, x.shape[-1])
    y = torch.empty_like(x2)
    grid = (triton.cdiv(x2.shape[0], 16), triton.cdiv(x2.shape[1], 128))
    _bias_act_kernel[grid](y, x2, bias, x2.shape[0], x2.shape[1], x2.stride(0), ACT=activation,
                           BLOCK_M=16, BLOCK_N=128)
    return y.view_as(x)
