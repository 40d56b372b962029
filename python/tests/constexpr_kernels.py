"""Kernels whose constexprs hold tuples and @jit functions (Triton
specialises on both); tk compiles this file."""
import tk
import tk.language as tl


@tk.jit
def _relu(x):
    return tl.maximum(x, 0.0)


@tk.jit
def _square(x):
    return x * x


@tk.jit
def poly(x_ptr, out_ptr, BLOCK: tl.constexpr, COEFS: tl.constexpr = (0.5, 0.25)):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(len(COEFS)):
        acc = acc * x + COEFS[i]
    tl.store(out_ptr + offs, acc)


@tk.jit
def nested(out_ptr, T: tl.constexpr):
    ab, rest = T
    a, b = ab
    name, dt, none = rest
    tl.static_assert(name == "w")
    tl.static_assert(none is None)
    tl.store(out_ptr + tl.arange(0, 2), tl.full([2], a * 10 + b, dt))


@tk.jit
def apply(x_ptr, out_ptr, BLOCK: tl.constexpr, ACT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, ACT(tl.load(x_ptr + offs)))


@tk.heuristics({"COEFS": lambda args: (1.0,) * args["n"]})
@tk.jit
def poly_heur(x_ptr, out_ptr, n, BLOCK: tl.constexpr, COEFS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c in COEFS:
        acc = acc * x + c
    tl.store(out_ptr + offs, acc)


@tk.autotune(configs=[tk.Config({"ACT": _square, "SHIFT": (1.0, 2.0)})], key=[])
@tk.jit
def tuned(x_ptr, out_ptr, BLOCK: tl.constexpr, ACT: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, ACT(tl.load(x_ptr + offs)) + SHIFT[1])


@tk.constexpr_function
def pick_block(n):
    return max(16, tk.next_power_of_2(n))


@tk.jit
def double_first(x_ptr, out_ptr, N: tl.constexpr):
    B: tl.constexpr = pick_block(N)
    offs = tl.arange(0, B)
    m = offs < N
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)
