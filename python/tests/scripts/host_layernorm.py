"""A layer norm forward with the host wrapper normalisation libraries
write: the input flattened to 2-D, the block and warps picked from the
row length and element size (next_power_of_2, a 64 KB cap), a heuristic
above the kernel that derives the block from N at each launch, optional
weight and bias as None, mean and rstd outputs, fp16 and fp32 inputs,
and triton.testing.do_bench with quantiles on the interpreter."""
import numpy as np
import triton
import triton.language as tl


@triton.heuristics({"BLOCK_N": lambda args: triton.next_power_of_2(args["N"]),
                    "HAS_W": lambda args: args["W"] is not None,
                    "HAS_B": lambda args: args["B"] is not None})
@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride_x, stride_y, N, eps,
                   BLOCK_N: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    m = cols < N
    x = tl.load(X + row * stride_x + cols, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(m, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    y = xc * rstd
    if HAS_W:
        y = y * tl.load(W + cols, mask=m).to(tl.float32)
    if HAS_B:
        y = y + tl.load(B + cols, mask=m).to(tl.float32)
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=m)


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if x2.strides[-1] != x2.itemsize:
        x2 = np.ascontiguousarray(x2)
    M, N = x2.shape
    y = np.empty_like(x2)
    mean = np.empty(M, np.float32)
    rstd = np.empty(M, np.float32)
    max_fused = 65536 // x2.itemsize
    if triton.next_power_of_2(N) > max_fused:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
    num_warps = min(max(triton.next_power_of_2(N) // 256, 1), 8)
    layer_norm_fwd[(M,)](x2, y, weight, bias, mean, rstd,
                         x2.strides[0] // x2.itemsize, y.strides[0] // y.itemsize, N, eps,
                         num_warps=num_warps)
    return y.reshape(shape), mean, rstd


def reference(x, w, b, eps):
    x = x.astype(np.float64)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y, mu.reshape(-1), (1 / np.sqrt(var + eps)).reshape(-1)


rng = np.random.default_rng(2)
for shape, dtype in (((4, 3, 40), np.float32), ((7, 512), np.float16), ((1, 1), np.float32),
                     ((2, 33), np.float16)):
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    n = shape[-1]
    w = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    tol = 1e-4 if dtype == np.float32 else 2e-2
    for wt, bs in ((w, b), (None, None), (w, None)):
        y, mean, rstd = layer_norm(x, wt, bs)
        ry, rmean, rrstd = reference(x, wt, bs, 1e-5)
        assert y.dtype == dtype and y.shape == shape
        np.testing.assert_allclose(y.astype(np.float64), ry, rtol=tol, atol=tol)
        np.testing.assert_allclose(mean, rmean, rtol=1e-4, atol=1e-4)
        if n > 1:
            np.testing.assert_allclose(rstd, rrstd, rtol=1e-3, atol=1e-3)

# A strided view: every other column, made contiguous by the wrapper.
big = rng.standard_normal((3, 80)).astype(np.float32)
view = big[:, ::2]
y, _, _ = layer_norm(view)
np.testing.assert_allclose(y, reference(view, None, None, 1e-5)[0], rtol=1e-4, atol=1e-4)

x = rng.standard_normal((8, 128)).astype(np.float32)
ms, lo, hi = triton.testing.do_bench(lambda: layer_norm(x), warmup=1, rep=3,
                                     quantiles=[0.5, 0.2, 0.8])
assert 0 < lo <= ms <= hi, (lo, ms, hi)
print("layer norm OK")
