"""A launch cache in the style kernel libraries wrap their kernels in: the
first launch goes through run() and records the compiled kernel and the
constexprs each layer chose (walking .fn down to the JITFunction, asking
isinstance of Autotuner and Heuristics); later launches call the compiled
kernel with the runtime arguments alone, the grid computed from those
constexprs."""
import numpy as np
import triton
import triton.language as tl


class LaunchCache(triton.KernelInterface):
    def __init__(self, fn):
        self.fn, self.arg_names, self.cache = fn, fn.arg_names, {}
        jit = fn
        while not isinstance(jit, triton.runtime.JITFunction):
            jit = jit.fn
        self.runtime_idx = [p.num for p in jit.params if not p.is_constexpr]

    def run(self, *args, grid, warmup=False, **kwargs):
        key = tuple(a for a in args if isinstance(a, (int, float)))
        if key not in self.cache:
            kernel = self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)
            consts, fn = dict(kwargs), self.fn
            while not isinstance(fn, triton.runtime.JITFunction):
                if isinstance(fn, triton.runtime.Autotuner):
                    cfg = fn.best_config
                    consts.update(cfg.kwargs, num_warps=cfg.num_warps)
                elif isinstance(fn, triton.runtime.Heuristics):
                    named = {**dict(zip(fn.arg_names, args)), **consts}
                    for name, h in fn.values.items():
                        consts[name] = h(named)
                else:
                    raise RuntimeError("not a kernel layer")
                fn = fn.fn
            self.cache[key] = (kernel, consts)
            return kernel
        kernel, consts = self.cache[key]
        g = grid(consts) if callable(grid) else grid
        kernel[tuple(g) + (1,) * (3 - len(g))](*[args[i] for i in self.runtime_idx])
        return kernel


@LaunchCache
@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4),
                          triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
@triton.jit
def axpy(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * a + tl.load(y_ptr + offs))
    else:
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * a + tl.load(y_ptr + offs, mask=m),
                 mask=m)


@LaunchCache
@triton.jit
def plain_scale(x_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * a, mask=m)


assert isinstance(axpy.fn, triton.runtime.Autotuner)
assert isinstance(axpy.fn.fn, triton.runtime.Heuristics)
assert isinstance(axpy.fn.fn.fn, triton.runtime.JITFunction)
assert not isinstance(axpy.fn, triton.runtime.JITFunction)
assert isinstance(plain_scale.fn, triton.runtime.JITFunction)
assert not isinstance(plain_scale.fn, triton.runtime.Autotuner)

rng = np.random.default_rng(3)
x = rng.random(100).astype(np.float32)
y = np.zeros(100, np.float32)
grid = lambda meta: (triton.cdiv(100, meta["BLOCK"]),)
for _ in range(3):  # the first launch through run(), the others from the cache
    axpy[grid](x, y, 100, 2.0)
assert np.allclose(y, 6 * x), "axpy wrong"
z = x.copy()
for _ in range(2):
    plain_scale[(4,)](z, 100, 3.0, BLOCK=32)
assert np.allclose(z, 9 * x), "scale wrong"
assert axpy.fn.fn.fn.src.startswith("def axpy(") and "@triton" not in axpy.fn.fn.fn.src
print("launch cache OK")
