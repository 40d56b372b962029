"""A fused bias-add-scale wrapper as libraries write it: optional buffers
passed as None with HAS_* constexprs chosen on the host by `x is not
None`, launches whose keywords come in another order than the def's, a
length that is and is not a multiple of 16 (and 1) under
do_not_specialize, and the warmup / run spellings of a launch."""
import numpy as np
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["n"])
def bias_scale_kernel(x_ptr, bias_ptr, res_ptr, out_ptr, n, scale,
                      HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    if HAS_BIAS:
        y += tl.load(bias_ptr + offs, mask=m, other=0.0).to(tl.float32)
    y = y * scale
    if HAS_RES:
        y += tl.load(res_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=m)


@triton.jit
def count_kernel(out_ptr, n, BLOCK: tl.constexpr):
    # Specialised on n: n == 1 and n % 16 == 0 are compile-time facts here.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs + n, mask=offs < n)


def bias_scale(x, scale, bias=None, residual=None, block=None):
    out = np.empty_like(x)
    n = x.size
    BLOCK = block or min(triton.next_power_of_2(n), 128)
    grid = lambda META: (triton.cdiv(n, META["BLOCK"]),)
    # Keywords in another order than the parameters; the pointers by name.
    bias_scale_kernel[grid](x, scale=scale, n=n, out_ptr=out, res_ptr=residual,
                            bias_ptr=bias, BLOCK=BLOCK, HAS_RES=residual is not None,
                            HAS_BIAS=bias is not None, num_warps=2)
    return out


rng = np.random.default_rng(11)
for n in (1, 16, 17, 64, 200):
    for dtype in (np.float32, np.float16):
        x = rng.standard_normal(n).astype(dtype)
        b = rng.standard_normal(n).astype(dtype)
        r = rng.standard_normal(n).astype(dtype)
        tol = 1e-6 if dtype == np.float32 else 2e-2
        f = lambda v: v.astype(np.float32)
        for bias, res in ((None, None), (b, None), (None, r), (b, r)):
            got = bias_scale(x, 0.5, bias=bias, residual=res)
            want = f(x)
            if bias is not None:
                want = want + f(bias)
            want = want * 0.5
            if res is not None:
                want = want + f(res)
            assert got.dtype == dtype
            np.testing.assert_allclose(f(got), want, rtol=tol, atol=tol)

# warmup compiles without launching: out stays as it was.
x = np.arange(40, dtype=np.float32)
out = np.full(40, -1.0, np.float32)
ck = bias_scale_kernel.warmup(x, None, None, out, 40, 2.0, HAS_BIAS=False, HAS_RES=False,
                              BLOCK=64, grid=(1,))
assert np.all(out == -1.0), "warmup launched"
sig = ck.signature
# n is not specialised (do_not_specialize), so 40 (or 32) gives the same key.
ck32 = bias_scale_kernel.warmup(x, None, None, out, 32, 2.0, HAS_BIAS=False, HAS_RES=False,
                                BLOCK=64, grid=(1,))
assert ck32.signature == sig, (sig, ck32.signature)
# run(..., grid=, warmup=False) launches, as JITFunction.run does.
bias_scale_kernel.run(x, None, None, out, 40, 2.0, grid=(1,), warmup=False,
                      HAS_BIAS=False, HAS_RES=False, BLOCK=64)
np.testing.assert_array_equal(out, 2 * x)
ck_run = bias_scale_kernel.run(x, None, None, out, 40, 2.0, grid=(1,), warmup=True,
                               HAS_BIAS=False, HAS_RES=False, BLOCK=64)
assert ck_run.signature == sig

# The specialised kernel: 1, multiples of 16 and others each get their key.
sigs = {}
for n in (1, 16, 32, 17, 3):
    o = np.full(n, -5, np.int32)
    k = count_kernel[(triton.cdiv(n, 16),)](o, n, BLOCK=16)
    np.testing.assert_array_equal(o, np.arange(n, dtype=np.int32) + n)
    sigs[n] = k.signature
assert sigs[16] == sigs[32] and sigs[17] == sigs[3], sigs
assert len({sigs[1], sigs[16], sigs[17]}) == 3, sigs
# Sizes and scalars straight from numpy (np.prod gives np.int64, a dtype's
# scalar a np.float32), and a grid given as a list.
x = np.linspace(-1, 1, 48).astype(np.float32)
out = np.zeros_like(x)
n = np.prod(x.shape)
bias_scale_kernel[[triton.cdiv(n, 32)]](x, None, None, out, n, np.float32(4.0),
                                        HAS_BIAS=False, HAS_RES=False, BLOCK=np.int64(32))
np.testing.assert_allclose(out, 4 * x)
print("optional args OK")
