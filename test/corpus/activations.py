# Elementwise activations and a fused softmax cross-entropy, with host-built
# autotune configs, a heuristics wrapper applied as a call and a benchmark.
import functools
import os
import numpy as np
import torch
import triton
import triton.language as tl
from triton import jit
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device() if hasattr(triton, "runtime") else "cuda"
LOG2E = tl.constexpr(1.4426950408889634)
GELU_COEF = tl.constexpr(0.044715)


def _configs():
    return [
        triton.Config({"BLOCK": b}, num_warps=w, num_stages=s)
        for b, w in [(256, 2), (1024, 4), (4096, 8)]
        for s in (2, 3)
        if not (b == 4096 and s == 3)
    ]


@functools.lru_cache(maxsize=None)
def num_sms(device_index: int = 0) -> int:
    props = torch.cuda.get_device_properties(device_index)
    return props.multi_processor_count


@jit
def _sigmoid(x):
    return 1.0 / (1.0 + tl.exp2(-x * LOG2E))


@jit
def _tanh(x):
    return 2.0 * _sigmoid(2.0 * x) - 1.0


@triton.autotune(configs=_configs(), key=["n"])
@triton.jit
def silu_mul_kernel(gate_ptr, up_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    out = g * _sigmoid(g) * u
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (512, 1024)], key=["n"])
@triton.jit(do_not_specialize=["n"])
def gelu_tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (x + GELU_COEF * x * x * x)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + _tanh(inner)), mask=mask)


def cross_entropy_fwd(logits_ptr, labels_ptr, loss_ptr, stride, V, ignore_index,
                      BLOCK_V: tl.constexpr, HAS_SMOOTHING: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    label = tl.load(labels_ptr + row)
    if label == ignore_index:
        tl.store(loss_ptr + row, 0.0)
        return
    m = -float("inf")
    d = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(logits_ptr + row * stride + cols, mask=cols < V,
                    other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    target = tl.load(logits_ptr + row * stride + label).to(tl.float32)
    loss = tl.log(d) + m - target
    tl.store(loss_ptr + row, loss)


cross_entropy_fwd = triton.heuristics(
    {"HAS_SMOOTHING": lambda args: False})(triton.jit(cross_entropy_fwd))


class SiluAndMul(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        gate, up = x[..., :d].contiguous(), x[..., d:].contiguous()
        out = torch.empty_like(gate)
        grid = lambda META: (triton.cdiv(gate.numel(), META["BLOCK"]),)
        silu_mul_kernel[grid](gate, up, out, gate.numel())
        return out


def bench(sizes=(2 ** i for i in range(12, 24, 2)), **kwargs):
    results = {}
    for size in sizes:
        x = torch.randn(size * 2, device=DEVICE, dtype=torch.float16)
        ms = triton.testing.do_bench(lambda: SiluAndMul()(x))
        results[size] = (ms, (gbps := 3 * x.numel() * x.element_size() / ms * 1e-6))
    return results


if __name__ == "__main__":
    for k, (ms, gbps) in bench().items():
        print(f"{k:>10} {ms:8.3f} ms {gbps:8.1f} GB/s")
