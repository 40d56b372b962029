"""Gated activations for transformer MLPs: GELU (exact or tanh), and
SwiGLU / GeGLU over a projection whose last dimension holds the gate and
the value side by side. Autotune configs are built by host code; triton is
imported under a short name, as some code bases do."""
import functools
import os

import torch
import torch.nn as nn
import triton as tt
import triton.language as tl

SQRT1_2 = tl.constexpr(0.7071067811865476)
SQRT2_PI = tl.constexpr(0.7978845608028654)


def _powers_of_two(lo, hi):
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out


@functools.lru_cache(maxsize=None)
def _glu_configs():
    """Column blocks and warps to try; TK_FAST_TUNE (a test switch) keeps one."""
    if os.environ.get("TK_FAST_TUNE"):
        return [tt.Config({"BLOCK_N": 1024}, num_warps=4)]
    configs = []
    for block in _powers_of_two(256, 2048):
        for warps in (2, 4, 8):
            if block // (32 * warps) >= 1:
                configs.append(tt.Config({"BLOCK_N": block}, num_warps=warps))
    return configs


@tt.jit
def _gelu(x, APPROX: tl.constexpr):
    if APPROX == "tanh":
        inner = SQRT2_PI * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    else:
        return 0.5 * x * (1.0 + tl.erf(x * SQRT1_2))


@tt.jit
def _activate(x, ACT: tl.constexpr):
    if ACT == "silu":
        return x * tl.sigmoid(x)
    elif ACT == "gelu_tanh":
        return _gelu(x, "tanh")
    else:
        return _gelu(x, "none")


@tt.autotune(configs=_glu_configs(), key=["n_cols"])
@tt.jit
def _gelu_kernel(y_ptr, x_ptr, n_elements, n_cols, APPROX: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, _gelu(x, APPROX).to(y_ptr.dtype.element_ty), mask=mask)


@tt.autotune(configs=_glu_configs(), key=["n_cols"])
@tt.jit
def _glu_fwd_kernel(y_ptr, xz_ptr, n_cols, stride_xz, stride_y, ACT: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    """y[r, j] = act(xz[r, j]) * xz[r, n_cols + j]; grid (rows, column blocks)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    gate = tl.load(xz_ptr + row * stride_xz + cols, mask=mask, other=0.0).to(tl.float32)
    value = tl.load(xz_ptr + row * stride_xz + n_cols + cols, mask=mask, other=0.0)
    y = _activate(gate, ACT).to(value.dtype) * value
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


@tt.jit
def _glu_bwd_kernel(dxz_ptr, dy_ptr, xz_ptr, n_cols, stride, ACT: tl.constexpr,
                    BLOCK_N: tl.constexpr):
    """SiLU gate only: d gate = dy * v * (s + a * s * (1 - s)), d value = dy * a * s."""
    tl.static_assert(ACT == "silu", "the backward kernel is written for silu")
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    a = tl.load(xz_ptr + row * 2 * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    v = tl.load(xz_ptr + row * 2 * n_cols + n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    da = dy * v * (s + a * s * (1.0 - s))
    dv = dy * a * s
    tl.store(dxz_ptr + row * 2 * n_cols + cols, da.to(dxz_ptr.dtype.element_ty), mask=mask)
    tl.store(dxz_ptr + row * 2 * n_cols + n_cols + cols, dv.to(dxz_ptr.dtype.element_ty),
             mask=mask)


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (tt.cdiv(n, meta["BLOCK_N"]),)
    _gelu_kernel[grid](y, x, n, x.shape[-1], APPROX=approximate)
    return y


def glu(xz: torch.Tensor, activation: str = "silu") -> torch.Tensor:
    n_cols = xz.shape[-1] // 2
    xz2 = xz.reshape(-1, 2 * n_cols)
    y = torch.empty(xz2.shape[0], n_cols, dtype=xz.dtype, device=xz.device)
    grid = lambda meta: (xz2.shape[0], tt.cdiv(n_cols, meta["BLOCK_N"]))
    _glu_fwd_kernel[grid](y, xz2, n_cols, xz2.stride(0), y.stride(0), ACT=activation)
    return y.view(*xz.shape[:-1], n_cols)


class GatedMLPActivation(nn.Module):
    """The activation between the up and down projections of a gated MLP."""

    def __init__(self, activation: str = "silu"):
        super().__init__()
        if activation not in ("silu", "gelu", "gelu_tanh"):
            raise ValueError(f"unknown activation {activation!r}")
        self.activation = activation

    def forward(self, xz: torch.Tensor) -> torch.Tensor:
        return glu(xz, self.activation)

    def extra_repr(self) -> str:
        return f"activation={self.activation}"
