"""Helpers shared by the ops: host-side launch settings and decorators, and
the jit helpers the kernels call."""
import functools
import importlib.util

import torch
import triton
import triton.language as tl

MAX_FUSED_SIZE: int = 65536
LOG2E = tl.constexpr(1.4426950408889634)


def is_hip() -> bool:
    return torch.version.hip is not None


def calculate_settings(n):
    block = triton.next_power_of_2(n)
    if block > MAX_FUSED_SIZE:
        raise RuntimeError(f"feature dimension {n} is larger than {MAX_FUSED_SIZE}")
    num_warps = 4
    if block >= 32768:
        num_warps = 32 if not is_hip() else 16
    elif block >= 8192:
        num_warps = 16
    elif block >= 2048:
        num_warps = 8
    return block, num_warps


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        def maybe_to_contiguous(x):
            return x.contiguous() if isinstance(x, torch.Tensor) else x

        args = [maybe_to_contiguous(arg) for arg in args]
        kwargs = {k: maybe_to_contiguous(v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)

    return wrapper


def has_package(name):
    return importlib.util.find_spec(name) is not None


@triton.jit
def sigmoid(x):
    return 1.0 / (1.0 + tl.exp2(-x * LOG2E))


@triton.jit
def silu(x):
    return x * sigmoid(x)


@triton.jit
def gelu_tanh(x):
    k: tl.constexpr = 0.7978845608028654
    inner = k * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + (2.0 * sigmoid(2.0 * inner) - 1.0))


@triton.jit
def row_stats(x, n_cols):
    mean = tl.sum(x, axis=0) / n_cols
    return mean, tl.sum(x * x, axis=0) / n_cols
