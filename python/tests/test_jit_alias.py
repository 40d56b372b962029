"""`kern = tk.jit(_impl)` (triton.jit under `python -m tk`) makes a kernel
under a new name, launched as kern[grid](...) and called as a helper."""
import numpy as np

import alias_kernels as K


def test_kernel_bound_under_a_new_name():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    K.kern[(1,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x + 1)
    assert K.kern.warmup(x, out, BLOCK=16, grid=(1,)).name == "_impl"
    K.twice[(1,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x + 2)
