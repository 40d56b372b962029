import functools

import torch
import triton
import triton.language as tl

SCALE = 2.0


def next_pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


@functools.lru_cache(maxsize=None)
def calculate_settings(n):
    block = next_pow2(n)
    return block, 4 if block < 2048 else 8


@triton.jit
def scaled(x):
    return x * SCALE


@triton.jit
def bad_helper(x):
    return x + undefined_thing
