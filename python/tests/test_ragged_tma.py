"""Triton's ragged descriptors (triton.tools.ragged_tma) through the compat
facade, on the interpreter: a batch of rows read and written with
load_ragged/store_ragged/atomic_add_ragged, the rows past the batch
reading zero and not written; libtk compiles the module's device functions from the text it
carries."""
import numpy as np
import pytest

import tk.compat  # noqa: F401  (puts the facade in sys.modules)
import triton
import triton.language as tl
from triton.tools.ragged_tma import (atomic_add_ragged, create_ragged_descriptor, load_ragged,
                                     store_ragged)


@triton.jit
def bump_batch(src, dst, start, size, BM: tl.constexpr):
    row = tl.program_id(0) * BM
    x = load_ragged(src, start, size, [row, 0])
    store_ragged(dst, start, size, [row, 0], x + 1.0)


@triton.jit
def count_rows(src, out, start, size, BM: tl.constexpr):
    x = load_ragged(src, start, size, [tl.program_id(0) * BM, 0])
    tl.store(out + tl.program_id(0), tl.sum(tl.sum(x, 1), 0))


@pytest.mark.parametrize("start, size", [(17, 35), (0, 48), (90, 10), (40, 0)])
def test_batch_read_and_written(start, size):
    rng = np.random.default_rng(start + size)
    src = rng.standard_normal((100, 32)).astype(np.float32)
    dst = np.full((100, 32), -7.0, np.float32)
    blocks = 3
    bump_batch[(blocks,)](create_ragged_descriptor(src, [16, 32]),
                          create_ragged_descriptor(dst, [16, 32]), start, size, BM=16)
    want = np.full((100, 32), -7.0, np.float32)
    want[start:start + size] = src[start:start + size] + 1.0
    np.testing.assert_array_equal(dst, want)


def test_rows_past_the_batch_read_zero():
    src = np.ones((64, 16), np.float32)
    out = np.full(2, np.nan, np.float32)
    count_rows[(2,)](create_ragged_descriptor(src, [16, 16]), out, 5, 20, BM=16)
    np.testing.assert_array_equal(out, [256.0, 64.0])


def test_descriptor_shape():
    src = np.zeros((100, 32), np.float16)
    d = create_ragged_descriptor(src, [16, 32])
    assert d.shape == [0x7FFF0000, 0x7FFF0000, 2**30, 32]
    assert d.strides == [2**34 - 32, 32, 32, 1] and d.block_shape == [1, 1, 16, 32]


@pytest.mark.parametrize("shape, kwargs, text", [
    ((8, 16), dict(ragged_dim=1), "ragged dim must be one of the tensor's dims but the last"),
    ((8, 16), dict(write_only=True), "write-only ragged descriptor moves its base"),
    ((2, 2, 8, 16), dict(), r"read-write ragged descriptor takes at most 3 dims"),
])
def test_bad_ragged_descriptors(shape, kwargs, text):
    with pytest.raises(ValueError, match=text):
        create_ragged_descriptor(np.zeros(shape, np.float32), [1] * (len(shape) - 2) + [8, 16],
                                 **kwargs)


@triton.jit
def bump_heads(src, dst, start, size, BM: tl.constexpr):
    # a read-write ragged descriptor over [heads, rows, cols], ragged dim 1:
    # a rank-5 descriptor
    row = tl.program_id(0) * BM
    for h in range(2):
        x = load_ragged(src, start, size, [h, row, 0], ragged_dim=1)
        store_ragged(dst, start, size, [h, row, 0], x * 2.0, ragged_dim=1)


def test_three_dims_ragged_in_the_middle():
    src = np.random.default_rng(3).standard_normal((2, 40, 16)).astype(np.float32)
    dst = np.zeros((2, 40, 16), np.float32)
    bump_heads[(2,)](create_ragged_descriptor(src, [1, 16, 16], ragged_dim=1),
                     create_ragged_descriptor(dst, [1, 16, 16], ragged_dim=1), 9, 20, BM=16)
    want = np.zeros_like(dst)
    want[:, 9:29] = src[:, 9:29] * 2.0
    np.testing.assert_array_equal(dst, want)


@triton.jit
def add_batch_twice(src, dst, start, size, BM: tl.constexpr):
    row = tl.program_id(0) * BM
    x = load_ragged(src, start, size, [row, 0])
    atomic_add_ragged(dst, start, size, [row, 0], x)
    atomic_add_ragged(dst, start, size, [row, 0], x * 0.5)


@pytest.mark.parametrize("start, size", [(17, 35), (90, 10)])
def test_batch_added_atomically(start, size):
    rng = np.random.default_rng(start)
    src = rng.standard_normal((100, 32)).astype(np.float32)
    dst = rng.standard_normal((100, 32)).astype(np.float32)
    want = dst.copy()
    want[start:start + size] += src[start:start + size] + src[start:start + size] * 0.5
    add_batch_twice[(3,)](create_ragged_descriptor(src, [16, 32]),
                          create_ragged_descriptor(dst, [16, 32]), start, size, BM=16)
    np.testing.assert_allclose(dst, want, rtol=1e-6, atol=1e-6)
