"""Kernels for test_torch_host.py, imported once torch is known to be
there; torch and tk share one import statement, as scripts write it."""
import torch, tk, tk.language as tl  # noqa: E401,F401


@tk.jit
def scale2d(x, y, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    pn = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    m = (pm < M) & (pn < N)
    v = tl.load(x + pm * sxm + pn * sxn, mask=m)
    tl.store(y + pm * sym + pn * syn, v * 2, mask=m)


@tk.jit
def axpy(x, y, out, a, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = p < n
    xv = tl.load(x + p, mask=m).to(tl.float32)
    yv = tl.load(y + p, mask=m).to(tl.float32)
    tl.store(out + p, (a * xv + yv).to(out.dtype.element_ty), mask=m)


@tk.jit
def gather(src, idx, out, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = p < n
    tl.store(out + p, tl.load(src + tl.load(idx + p, mask=m), mask=m), mask=m)


@tk.jit
def select_sign(c, x, out, pos, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = p < n
    xv = tl.load(x + p, mask=m)
    tl.store(out + p, tl.where(tl.load(c + p, mask=m, other=0), xv, -xv), mask=m)
    tl.store(pos + p, xv > 0, mask=m)


@tk.jit
def triple(s, out):
    tl.store(out, tl.load(s) * 3)


@tk.autotune(configs=[tk.Config({"BLOCK": 64}), tk.Config({"BLOCK": 128})], key=["n"],
             reset_to_zero=["acc"])
@tk.jit
def sum_into(x, acc, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = p < n
    tl.atomic_add(acc + p * 0, tl.load(x + p, mask=m), mask=m)


@tk.jit
def cast_by_dtype(x, y, DT: tl.constexpr):
    # DT is given as a torch dtype, and compared with torch's in the kernel
    offs = tl.arange(0, 16)
    v = tl.load(x + offs)
    if DT == torch.float16:
        v = v.to(tl.float16) + 1
    elif DT == torch.bfloat16:
        v = v.to(tl.bfloat16) + 2
    tl.store(y + offs, v.to(DT))
