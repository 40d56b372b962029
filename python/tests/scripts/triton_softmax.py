"""A row softmax written for Triton, with numpy host code; run under tk as
`python -m tk triton_softmax.py --rows N`."""
import argparse

import numpy as np
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(in_ptr + row * in_stride + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


def softmax(x):
    rows, cols = x.shape
    y = np.empty_like(x)
    props = triton.runtime.driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] > 0
    softmax_kernel[(rows,)](y, x, x.strides[0] // 4, y.strides[0] // 4, cols,
                           BLOCK_SIZE=triton.next_power_of_2(cols))
    return y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4)
    rows = ap.parse_args().rows
    x = np.random.default_rng(0).standard_normal((rows, 100)).astype(np.float32)
    y = softmax(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    ms = triton.testing.do_bench(lambda: softmax(x), warmup=1, rep=3)
    assert ms > 0
    print("softmax OK", rows)


if __name__ == "__main__":
    main()
