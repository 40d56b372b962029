# Code chosen per device by host checks, as serving libraries write it: a
# platform helper module (is_hip / is_cuda / a cached capability check)
# picks the activation helper and a module constant; tk decides each check
# from the arch it compiles for, so the GPU run takes the branch Triton
# takes on that device, and the interpreter the sm_80 one.
import functools

import torch
import triton
import triton.language as tl


def is_hip():
    return triton.runtime.driver.active.get_current_target().backend == "hip"


@functools.lru_cache(maxsize=None)
def is_sm90_or_later():
    return not is_hip() and torch.cuda.get_device_capability()[0] >= 9


_TARGET_ARCH = triton.runtime.driver.active.get_current_target().arch

if is_sm90_or_later():
    @triton.jit
    def _silu(x):
        return x * tl.sigmoid(x)
else:
    @triton.jit
    def _silu(x):
        return x / (1.0 + tl.exp(-x))

if _TARGET_ARCH >= 80 and torch.version.hip is None:
    ACC_DTYPE = tl.constexpr(tl.float32)
else:
    ACC_DTYPE = tl.constexpr(tl.float16)


@triton.jit
def silu_and_mul_kernel(out_ptr, in_ptr, n_rows, d, stride_in, stride_out, BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    col = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = col < d
    gate = tl.load(in_ptr + row * stride_in + col, mask=mask, other=0.0).to(ACC_DTYPE)
    up = tl.load(in_ptr + row * stride_in + d + col, mask=mask, other=0.0).to(ACC_DTYPE)
    y = _silu(gate) * up
    tl.store(out_ptr + row * stride_out + col, y.to(out_ptr.dtype.element_ty), mask=mask)
