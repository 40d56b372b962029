"""Language extension: program ids widened to int64 so offsets of very large
tensors never overflow, used as `tle.program_id(0)`."""
import triton
import triton.language as tl


@triton.jit
def program_id(axis: tl.constexpr):
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def num_programs(axis: tl.constexpr):
    return tl.num_programs(axis).to(tl.int64)


def cdiv(a, b):
    return (a + b - 1) // b
