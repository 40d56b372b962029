"""Rotary embeddings, a row argmax and a cumulative sum: kernels with tuple
reductions and scans, a host launcher class and a quick self-check."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

if torch.cuda.is_available():
    DEVICE = torch.device("cuda")
else:
    DEVICE = torch.device("cpu")
    warnings.warn("no GPU: the kernels below will not run")

ROPE_BLOCK_D: tl.constexpr = 64


@dataclass
class RopeConfig:
    head_dim: int
    base: float = 10000.0
    interleaved: bool = False

    @property
    def inv_freq(self):
        return 1.0 / (self.base ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))


@triton.jit
def _rotate(x1, x2, cos, sin, CONJ: tl.constexpr):
    if CONJ:
        sin = -sin
    return x1 * cos - x2 * sin, x1 * sin + x2 * cos


@triton.heuristics({"HALF": lambda args: args["head_dim"] // 2})
@triton.jit
def rope_kernel(q_ptr, cos_ptr, sin_ptr, seq_len, head_dim, stride_tok,
                HALF: tl.constexpr, CONJ: tl.constexpr):
    tok = tl.program_id(0)
    pos = tok % seq_len
    d = tl.arange(0, HALF)
    cos = tl.load(cos_ptr + pos * HALF + d)
    sin = tl.load(sin_ptr + pos * HALF + d)
    base = q_ptr + tok * stride_tok
    x1 = tl.load(base + d).to(tl.float32)
    x2 = tl.load(base + HALF + d).to(tl.float32)
    y1, y2 = _rotate(x1, x2, cos, sin, CONJ)
    tl.store(base + d, y1.to(q_ptr.dtype.element_ty))
    tl.store(base + HALF + d, y2.to(q_ptr.dtype.element_ty))


@triton.jit
def _argmax_combine(v1, i1, v2, i2, PREFER_FIRST: tl.constexpr = True):
    if PREFER_FIRST:
        take = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    else:
        take = v1 > v2
    return tl.where(take, v1, v2), tl.where(take, i1, i2)


@triton.jit
def row_argmax_kernel(x_ptr, out_ptr, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=-float("inf"))
    _, idx = tl.reduce((x, cols), 0, _argmax_combine)
    tl.store(out_ptr + row, idx)


@triton.jit
def _add_pair(a1, b1, a2, b2):
    return a1 + a2, b1 + b2


@triton.jit
def cumsum_and_count_kernel(x_ptr, sum_ptr, cnt_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    nz = (x != 0.0).to(tl.int32)
    s, c = tl.associative_scan((x, nz), 0, _add_pair)
    tl.store(sum_ptr + offs, s, mask=mask)
    tl.store(cnt_ptr + offs, c, mask=mask)


class Rope:
    def __init__(self, cfg: RopeConfig, max_len: int = 4096):
        t = torch.arange(max_len, dtype=torch.float32)
        freqs = torch.outer(t, cfg.inv_freq)
        self.cos, self.sin = freqs.cos().to(DEVICE), freqs.sin().to(DEVICE)
        self.cfg = cfg

    def __call__(self, q: torch.Tensor, conj: bool = False) -> torch.Tensor:
        *lead, seq, dim = q.shape
        q2 = q.reshape(-1, dim)
        rope_kernel[(q2.shape[0],)](q2, self.cos, self.sin, seq, dim, q2.stride(0), CONJ=conj)
        return q


if __name__ == "__main__":
    rope = Rope(RopeConfig(head_dim=128))
    q = torch.randn(2, 16, 128, device=DEVICE)
    assert torch.allclose(rope(rope(q.clone()), conj=True), q, atol=1e-4), "rope round trip"
    x = torch.randn(8, 1000, device=DEVICE)
    out = torch.empty(8, dtype=torch.int32, device=DEVICE)
    row_argmax_kernel[(8,)](x, out, 1000, x.stride(0), BLOCK_N=1024)
    print("argmax ok" if (out == x.argmax(-1)).all() else "argmax differs")
