"""A Triton script whose kernel a host wrapper class holds, as kernel
libraries write launch caches: the wrapper subclasses
triton.KernelInterface and defines run(); wrapper[grid](...) calls it with
grid= and warmup=False, and it passes them on to the autotuned kernel."""
import numpy as np
import triton
import triton.language as tl


class LaunchCache(triton.KernelInterface):
    def __init__(self, fn):
        self.fn, self.arg_names, self.seen = fn, fn.arg_names, {}

    def run(self, *args, **kwargs):
        key = tuple(a for a in args if isinstance(a, (int, float)))
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.fn.run(*args, **kwargs)


def cached():
    return LaunchCache


@cached()
@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 64)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


x = np.random.default_rng(1).random(1000).astype(np.float32)
y = np.zeros_like(x)
scale_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, y, 1000, 3.0)
assert np.allclose(y, x * 3), "wrong result"
assert scale_kernel.seen == {(1000, 3.0): 1}
assert isinstance(scale_kernel.fn, triton.runtime.KernelInterface)
assert issubclass(triton.runtime.jit.KernelInterface, object)
print("wrapper OK")
