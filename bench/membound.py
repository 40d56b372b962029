#!/usr/bin/env python3
"""Memory-bound kernels side by side on one GPU, in one process: tk (the .tk
source compiled by libtk, launched through its C API with ctypes), Triton (the
same file imported as a Python module: it is valid Triton) and PyTorch's own op.
Every row gets fresh random inputs, a NaN-poisoned output checked against a
float64 reference, and event timings (median, L2 cleared before each run, as
triton.testing.do_bench does). Needs torch and triton on a machine with a GPU:

    python3 bench/membound.py --libtk BUILD/libtk.so [--only REGEX] [--rep-ms 100]

Writes membound.csv and membound.md to $OUT when it is set. Exit status 0 only
when every tk and Triton result matched its reference.

    python3 bench/membound.py --libtk BUILD/libtk.so --selftest

runs the same ctypes layer and the same kernel files on tk's reference
interpreter (no GPU, no torch: numpy only) at small sizes, so the bindings are
known right before a GPU run.
"""
import argparse
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import math
import os
import re
import statistics
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field

from tkbind import (TK_ERR_COMPILE, TK_ERR_LAUNCH, Tk, TkError, TkLaunch, layout_check,
                    tk_const, tk_f32, tk_i32, tk_ptr)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ---- the rows ---------------------------------------------------------------------------

@dataclass
class Buf:
    name: str
    shape: tuple
    dtype: str          # "f32", "f16", "u8"
    init: tuple = None  # ("randn", scale, shift), ("rand",), ("bytes",); None: an output


@dataclass
class I32:
    v: int


@dataclass
class F32:
    v: float


@dataclass
class Row:
    kernel: str          # the name in the table
    size: str
    path: str            # the .tk file
    kname: str           # the kernel in it
    bufs: list
    args: list           # buffer names, I32, F32, in the kernel's order
    consts: dict
    num_warps: int
    grid: tuple
    outs: list           # buffer names checked against the reference
    ref: object          # (ops, {name: float64 input}) -> {name: float64 expected}
    tol: float
    metric: str = "rel"  # "rel": ||out - ref|| / ||ref||; "maxabs": max |out - ref|
    torch_op: object = None  # ({name: tensor}) -> None, timed for reference
    nbytes: int = field(default=0)

    def __post_init__(self):
        size = {"f32": 4, "f16": 2, "u8": 1}
        self.nbytes = sum(math.prod(b.shape) * size[b.dtype] for b in self.bufs)


def pow2_label(n):
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def next_pow2(n):
    return 1 << (n - 1).bit_length()


def ref_vector_add(ops, a):
    return {"out": a["x"] + a["y"]}


def ref_softmax(ops, a):
    e = ops.exp(a["x"] - ops.rowmax(a["x"]))
    return {"out": e / ops.rowsum(e)}


def ref_layernorm(eps):
    def ref(ops, a):
        x = a["x"]
        n = x.shape[1]
        mean = ops.rowsum(x) / n
        d = x - mean
        rstd = 1.0 / ops.sqrt(ops.rowsum(d * d) / n + eps)
        return {"y": d * rstd * a["w"] + a["b"], "mean": mean.reshape(-1),
                "rstd": rstd.reshape(-1)}
    return ref


def ref_row_sum(ops, a):
    return {"out": ops.rowsum(a["x"]).reshape(-1)}


def ref_gelu(ops, a):
    x = a["x"]
    return {"y": 0.5 * x * (1.0 + ops.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))}


def ref_copy_strided(step, n):
    return lambda ops, a: {"dst": a["src"][::step][:n]}


def ref_grey(ops, a):
    img = a["img"]
    return {"out": ops.floor(0.2989 * img[0] + 0.5870 * img[1] + 0.1140 * img[2])}


def vector_add_row(conf, n):
    return Row("vector_add fp32", pow2_label(n), os.path.join(conf, "vector_add.tk"), "vector_add",
               [Buf("x", (n,), "f32", ("randn", 1.0, 0.0)),
                Buf("y", (n,), "f32", ("randn", 1.0, 0.0)),
                Buf("out", (n,), "f32")],
               ["x", "y", "out", I32(n)], {"BLOCK": 1024}, 4, ((n + 1023) // 1024,), ["out"],
               ref_vector_add, 1e-6,
               torch_op=lambda t: t["torch"].add(t["x"], t["y"], out=t["out"]))


def softmax_warps(block):
    """The num_warps of Triton's fused-softmax tutorial."""
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


def softmax_row(path, kname, rows, cols, dtype, tol):
    block = next_pow2(cols)
    label = "fp32" if dtype == "f32" else "fp16"
    return Row(f"softmax {label}", f"{rows}x{cols}", path, kname,
               [Buf("x", (rows, cols), dtype, ("randn", 1.0, 0.0)),
                Buf("out", (rows, cols), dtype)],
               ["out", "x", I32(cols), I32(cols), I32(cols)], {"BLOCK": block},
               softmax_warps(block), (rows,), ["out"], ref_softmax, tol,
               torch_op=lambda t: t["torch"].softmax(t["x"], dim=1))


def layernorm_row(conf, rows, cols):
    # Triton's layer-norm tutorial: BLOCK = next power of two (at most 64 KB of
    # the row), num_warps = BLOCK / 256 clamped to [1, 8].
    block = min(65536 // 4, next_pow2(cols))
    warps = min(max(block // 256, 1), 8)
    eps = 1e-5

    def torch_op(t):
        t["torch"].nn.functional.layer_norm(t["x"], (cols,), t["w"], t["b"], eps)
    return Row("layernorm fp32", f"{rows}x{cols}", os.path.join(conf, "layernorm.tk"),
               "layernorm_rows",
               [Buf("x", (rows, cols), "f32", ("randn", 0.5, -2.3)),
                Buf("w", (cols,), "f32", ("rand",)), Buf("b", (cols,), "f32", ("rand",)),
                Buf("y", (rows, cols), "f32"), Buf("mean", (rows,), "f32"),
                Buf("rstd", (rows,), "f32")],
               ["x", "y", "w", "b", "mean", "rstd", I32(cols), I32(cols), F32(eps)],
               {"BLOCK": block}, warps, (rows,), ["y", "mean", "rstd"], ref_layernorm(eps), 1e-5,
               torch_op=torch_op)


def row_sum_row(kname, rows, cols, block=1024):
    label = "staged" if kname.endswith("staged") else "plain"
    return Row(f"row_sum {label}", f"{rows}x{cols}", os.path.join(HERE, "kernels", "row_sum.tk"),
               kname, [Buf("x", (rows, cols), "f32", ("randn", 1.0, 0.0)),
                       Buf("out", (rows,), "f32")],
               ["x", "out", I32(cols), I32(cols)], {"BLOCK": block}, 4, (rows,), ["out"],
               ref_row_sum, 1e-5, torch_op=lambda t: t["torch"].sum(t["x"], dim=1, out=t["out"]))


def gelu_row(conf, n):
    return Row("gelu fp32", pow2_label(n), os.path.join(conf, "gelu.tk"), "gelu",
               [Buf("x", (n,), "f32", ("randn", 4.0, 0.0)), Buf("y", (n,), "f32")],
               ["x", "y", I32(n)], {"BLOCK": 1024}, 4, ((n + 1023) // 1024,), ["y"], ref_gelu, 1e-6,
               torch_op=lambda t: t["torch"].nn.functional.gelu(t["x"], approximate="tanh"))


def copy_strided_row(conf, n, step):
    # Bytes: the whole source (with step 2 every 32-byte sector of it is
    # fetched) and the destination.
    def torch_op(t):
        t["dst"].copy_(t["src"][::step])
    return Row(f"copy_strided fp32 step {step}", pow2_label(n),
               os.path.join(conf, "copy_strided.tk"), "copy_strided",
               [Buf("src", (n * step,), "f32", ("randn", 1.0, 0.0)), Buf("dst", (n,), "f32")],
               ["src", "dst", I32(n), I32(step)], {"BS": 1024}, 4, ((n + 1023) // 1024,), ["dst"],
               ref_copy_strided(step, n), 0.0, torch_op=torch_op)


def grey_row(conf, h, w, th=32, tw=128):
    def torch_op(t):
        img = t["img"]
        (0.2989 * img[0] + 0.5870 * img[1] + 0.1140 * img[2]).to(t["torch"].uint8)
    return Row("rgb_to_grey u8", f"3x{h}x{w}", os.path.join(conf, "grey.tk"), "rgb_to_grey",
               [Buf("img", (3, h, w), "u8", ("bytes",)), Buf("out", (h, w), "u8")],
               ["img", "out", I32(h), I32(w)], {"TH": th, "TW": tw}, 4,
               ((h + th - 1) // th, (w + tw - 1) // tw), ["out"], ref_grey, 1.0, "maxabs",
               torch_op=torch_op)


def gpu_rows(conf):
    rows = [vector_add_row(conf, 1 << e) for e in (20, 22, 24, 26, 27, 28)]
    sm = os.path.join(conf, "softmax_rows.tk")
    for r, c in ((4096, 256), (4096, 1024), (4096, 4096), (2048, 16384), (4096, 1000)):
        rows.append(softmax_row(sm, "softmax_rows", r, c, "f32", 1e-5))
    up = os.path.join(HERE, "kernels", "softmax_upcast.tk")
    for r, c in ((4096, 1024), (4096, 4096)):
        rows.append(softmax_row(up, "softmax_upcast", r, c, "f16", 2e-3))
    rows += [layernorm_row(conf, 4096, c) for c in (1024, 4096, 8192)]
    for r, c in ((132, 131072), (528, 32768), (4096, 4096)):
        rows += [row_sum_row(k, r, c) for k in ("row_sum_staged", "row_sum_plain")]
    rows.append(gelu_row(conf, 1 << 26))
    rows.append(copy_strided_row(conf, 1 << 26, 2))
    rows.append(grey_row(conf, 4096, 4096))
    return rows


def selftest_rows(conf):
    """Every kernel of the GPU table at sizes the interpreter runs in seconds,
    with ragged edges where the kernel allows them."""
    sm = os.path.join(conf, "softmax_rows.tk")
    up = os.path.join(HERE, "kernels", "softmax_upcast.tk")
    return [vector_add_row(conf, 5000), vector_add_row(conf, 4096),
            softmax_row(sm, "softmax_rows", 7, 1000, "f32", 1e-5),
            softmax_row(sm, "softmax_rows", 5, 256, "f32", 1e-5),
            softmax_row(up, "softmax_upcast", 6, 300, "f16", 2e-3),
            layernorm_row(conf, 5, 700), row_sum_row("row_sum_staged", 3, 3000, 256),
            row_sum_row("row_sum_plain", 3, 3000, 256), gelu_row(conf, 3000), copy_strided_row(conf, 2500, 2),
            grey_row(conf, 37, 150, 16, 64)]


# ---- backends: torch on the GPU, numpy with tk's interpreter ---------------------------

class NumpyOps:
    def __init__(self, np):
        self.np = np
        self.exp, self.tanh, self.sqrt, self.floor = np.exp, np.tanh, np.sqrt, np.floor

    def rowmax(self, x):
        return x.max(axis=1, keepdims=True)

    def rowsum(self, x):
        return x.sum(axis=1, keepdims=True)


class TorchOps:
    def __init__(self, torch):
        self.exp, self.tanh, self.sqrt, self.floor = torch.exp, torch.tanh, torch.sqrt, torch.floor

    def rowmax(self, x):
        return x.amax(dim=1, keepdim=True)

    def rowsum(self, x):
        return x.sum(dim=1, keepdim=True)


class TorchBackend:
    """Buffers are torch tensors on the GPU; tk gets their device addresses."""

    def __init__(self, torch, seed):
        self.torch = torch
        self.ops = TorchOps(torch)
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(seed)
        self.dtypes = {"f32": torch.float32, "f16": torch.float16, "u8": torch.uint8}

    def make(self, b):
        t, dev = self.torch, "cuda"
        if b.init is None:
            return t.empty(b.shape, dtype=self.dtypes[b.dtype], device=dev)
        if b.init[0] == "bytes":
            return t.randint(0, 256, b.shape, dtype=t.uint8, device=dev, generator=self.gen)
        if b.init[0] == "rand":
            x = t.rand(b.shape, device=dev, generator=self.gen)
        else:
            x = t.randn(b.shape, device=dev, generator=self.gen) * b.init[1] + b.init[2]
        return x.to(self.dtypes[b.dtype])

    def addr(self, x):
        return x.data_ptr()

    def poison(self, x):
        x.fill_(float("nan") if x.is_floating_point() else 255)

    def fetch(self, x):
        pass

    def f64(self, x):
        return x.double()

    def norm(self, x):
        return self.torch.linalg.vector_norm(x).item()

    def maxabs(self, x):
        return x.abs().max().item()

    def sync(self):
        self.torch.cuda.synchronize()


class HostBuf:
    def __init__(self, arr, dptr):
        self.arr, self.dptr = arr, dptr


class InterpBackend:
    """Buffers are numpy arrays mirrored in tk_alloc'ed interpreter memory (the
    interpreter checks every access against those buffers)."""

    def __init__(self, np, tk, seed):
        self.np, self.tk = np, tk
        self.ops = NumpyOps(np)
        self.rng = np.random.default_rng(seed)
        self.dtypes = {"f32": np.float32, "f16": np.float16, "u8": np.uint8}
        self.live = []

    def make(self, b):
        np = self.np
        if b.init is None:
            arr = np.empty(b.shape, dtype=self.dtypes[b.dtype])
        elif b.init[0] == "bytes":
            arr = self.rng.integers(0, 256, b.shape, dtype=np.uint8)
        elif b.init[0] == "rand":
            arr = self.rng.random(b.shape).astype(self.dtypes[b.dtype])
        else:
            arr = self.rng.standard_normal(b.shape) * b.init[1] + b.init[2]
            arr = arr.astype(self.dtypes[b.dtype])
        buf = HostBuf(arr, self.tk.alloc(arr.nbytes))
        self.tk.copy_to(buf.dptr, arr.ctypes.data, arr.nbytes)
        self.live.append(buf)
        return buf

    def addr(self, x):
        return x.dptr

    def poison(self, x):
        x.arr.fill(self.np.nan if x.arr.dtype.kind == "f" else 255)
        self.tk.copy_to(x.dptr, x.arr.ctypes.data, x.arr.nbytes)

    def fetch(self, x):
        self.tk.copy_from(x.arr.ctypes.data, x.dptr, x.arr.nbytes)

    def f64(self, x):
        return x.arr.astype(self.np.float64)

    def norm(self, x):
        return float(self.np.linalg.norm(x.ravel()))

    def maxabs(self, x):
        return float(self.np.abs(x).max())

    def sync(self):
        self.tk.check(self.tk.lib.tk_synchronize(self.tk.ctx), "tk_synchronize")

    def release(self):
        for b in self.live:
            self.tk.free(b.dptr)
        self.live = []


# ---- one row: check and time each implementation --------------------------------------

def tk_args(row, B, bufs):
    out = []
    for a in row.args:
        if isinstance(a, str):
            out.append(tk_ptr(B.addr(bufs[a]), next(b.dtype for b in row.bufs if b.name == a)))
        elif isinstance(a, I32):
            out.append(tk_i32(a.v))
        else:
            out.append(tk_f32(a.v))
    out += [tk_const(k, v) for k, v in row.consts.items()]
    return out


def check(row, B, bufs, refs):
    """The worst error over the checked outputs, and whether every one is in
    tolerance (a NaN left in an output gives a NaN error, which never is)."""
    worst, ok = 0.0, True
    for name in row.outs:
        got, want = B.f64(bufs[name]), refs[name]
        if row.metric == "rel":
            err = B.norm(got - want) / B.norm(want)
        else:
            err = B.maxabs(got - want)
        ok = ok and err <= row.tol
        worst = err if math.isnan(err) or err > worst else worst
        del got
    return worst, ok


def run_checked(row, B, bufs, refs, launch):
    """Poisons the outputs, launches once, checks. Returns (err, ok)."""
    for name in row.outs:
        B.poison(bufs[name])
    B.sync()
    launch()
    B.sync()
    for name in row.outs:
        B.fetch(bufs[name])
    return check(row, B, bufs, refs)


class Timer:
    """Event-timed runs, each after writing a 256 MB buffer so that no run
    finds its data in L2 (triton.testing.do_bench's method). The write keeps
    the GPU busy while the host enqueues the next launch, so host launch cost
    stays out of the times."""

    def __init__(self, torch, rep_ms, warmup_ms):
        self.torch = torch
        self.flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
        self.rep_ms, self.warmup_ms = rep_ms, warmup_ms

    def _timed(self, fn, n):
        E = self.torch.cuda.Event
        starts = [E(enable_timing=True) for _ in range(n)]
        ends = [E(enable_timing=True) for _ in range(n)]
        for i in range(n):
            self.flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        self.torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]

    def samples(self, fn):
        """Milliseconds of about rep_ms worth of runs (20 to 1000) after warm-up."""
        fn()
        self.torch.cuda.synchronize()
        est = statistics.median(self._timed(fn, 5))
        for _ in range(max(1, min(200, int(self.warmup_ms / max(est, 1e-3))))):
            fn()
        return self._timed(fn, max(20, min(1000, int(self.rep_ms / max(est, 1e-3)))))


class HostTimer:
    """The selftest's timer: interpreter launches are synchronous, so the host
    clock times them (only to exercise the table; the numbers mean nothing)."""

    def samples(self, fn):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return times


@dataclass
class Result:
    row: Row
    gbs: dict = field(default_factory=dict)     # impl -> GB/s
    us: dict = field(default_factory=dict)      # impl -> median microseconds
    err: dict = field(default_factory=dict)     # impl -> worst error
    ok: dict = field(default_factory=dict)      # impl -> bool
    notes: list = field(default_factory=list)   # failure details
    tk_compile_ms: float = float("nan")
    tk_hit_us: float = float("nan")
    regs: dict = field(default_factory=dict)    # impl -> (registers, spill bytes) per thread
    spread: dict = field(default_factory=dict)  # impl -> the two passes' medians apart / time
    tried: tuple = ("tk", "triton")             # the implementations that must be correct

    def status(self):
        bad = [f"{impl} {'FAIL' if impl in self.err else 'ERROR'}"
               for impl in self.tried if not self.ok.get(impl, False)]
        return "ok" if not bad else ", ".join(bad)


def load_triton_module(path):
    """Imports a .tk file as a Python module (Triton reads its source)."""
    tag = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:8]
    name = f"tkbench_{os.path.splitext(os.path.basename(path))[0]}_{tag}"
    if name in sys.modules:
        return sys.modules[name]
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    sys.modules[name] = mod
    return mod


def short(e):
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:160]


def bench_row(row, tk, torch, triton, B, timer, stream):
    res = Result(row, tried=("tk", "triton") if triton is not None else ("tk",))
    bufs = {b.name: B.make(b) for b in row.bufs}
    inputs = {b.name: B.f64(bufs[b.name]) for b in row.bufs if b.init is not None}
    refs = row.ref(B.ops, inputs)
    del inputs
    launches = {}

    # tk: the first prepare compiles, the second must be a cache hit.
    try:
        kernel = tk.kernel(row.path, row.kname)
        launch = TkLaunch(tk, kernel, row.grid, tk_args(row, B, bufs), row.num_warps, stream)
        t0 = time.perf_counter()
        info = launch.prepare()
        res.tk_compile_ms = (time.perf_counter() - t0) * 1e3
        res.regs["tk"] = (info.registers, info.spill_bytes)
        t0 = time.perf_counter()
        launch.prepare()
        res.tk_hit_us = (time.perf_counter() - t0) * 1e6
        res.err["tk"], res.ok["tk"] = run_checked(row, B, bufs, refs, launch)
        if not res.ok["tk"]:
            res.notes.append(f"tk: error {res.err['tk']:.3g} over tolerance {row.tol:g}")
        launches["tk"] = launch
    except TkError as e:
        res.notes.append(f"tk: {e.name}: {e.message.strip()}")
    except Exception as e:  # a row's failure must not stop the others
        res.notes.append(f"tk: {type(e).__name__}: {short(e)}")

    if triton is not None:
        try:
            jit = getattr(load_triton_module(row.path), row.kname)
            targs = [bufs[a] if isinstance(a, str) else a.v for a in row.args]
            grid = row.grid

            def tlaunch():
                return jit[grid](*targs, **row.consts, num_warps=row.num_warps)
            res.err["triton"], res.ok["triton"] = run_checked(row, B, bufs, refs, tlaunch)
            compiled = tlaunch()
            res.regs["triton"] = (getattr(compiled, "n_regs", None),
                                  getattr(compiled, "n_spills", None))
            if not res.ok["triton"]:
                res.notes.append(f"triton: error {res.err['triton']:.3g} over tolerance "
                                 f"{row.tol:g}")
            launches["triton"] = tlaunch
        except Exception as e:
            res.notes.append(f"triton: {type(e).__name__}: {short(e)}")

    if row.torch_op is not None and torch is not None:
        tbufs = dict(bufs, torch=torch)
        launches["torch"] = lambda: row.torch_op(tbufs)

    # Two passes in turn (tk, Triton, torch, then again), so that neither side
    # always runs first; the time is the median of both passes' runs, and the
    # passes' medians apart says how much of a difference is noise.
    samples = {}
    for pass_no in range(2):
        for impl, fn in launches.items():
            if pass_no == 1 and impl not in samples:
                continue  # failed in the first pass
            try:
                samples.setdefault(impl, []).append(timer.samples(fn))
            except Exception as e:
                res.notes.append(f"{impl} (timing): {type(e).__name__}: {short(e)}")
                samples.pop(impl, None)
    for impl, passes in samples.items():
        t = statistics.median([x for p in passes for x in p])
        meds = [statistics.median(p) for p in passes]
        res.us[impl] = t * 1e3
        res.gbs[impl] = row.nbytes / (t * 1e-3) / 1e9
        res.spread[impl] = (max(meds) - min(meds)) / t
    return res


# ---- output -------------------------------------------------------------------------------

COLUMNS = ["kernel", "size", "MB", "tk GB/s", "Triton GB/s", "torch GB/s", "tk/Triton", "noise %",
           "check"]


def fmt(x, spec):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def table_cells(r):
    tk, tr = r.gbs.get("tk"), r.gbs.get("triton")
    ratio = tk / tr if tk and tr else None
    # noise: how far apart the two timing passes' medians were, the worse of tk and Triton
    spread = [r.spread[i] * 100 for i in ("tk", "triton") if i in r.spread]
    return [r.row.kernel, r.row.size, fmt(r.row.nbytes / 1e6, ".1f"), fmt(tk, ".0f"),
            fmt(tr, ".0f"), fmt(r.gbs.get("torch"), ".0f"), fmt(ratio, ".3f"),
            fmt(max(spread) if spread else None, ".1f"), r.status()]


def print_table(results, file=sys.stdout):
    rows = [COLUMNS] + [table_cells(r) for r in results]
    widths = [max(len(c[i]) for c in rows) for i in range(len(COLUMNS))]
    for n, cells in enumerate(rows):
        line = "  ".join(c.ljust(w) if i < 2 or i == len(COLUMNS) - 1 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
        print(line.rstrip(), file=file)
        if n == 0:
            print("  ".join("-" * w for w in widths), file=file)


def row_line(r):
    """One row as it finishes, with what the table leaves out."""
    c = table_cells(r)
    regs = {i: "/".join(fmt(v, "") for v in r.regs.get(i, (None, None))) for i in ("tk", "triton")}
    return (f"{c[0]} {c[1]}: tk {c[3]} GB/s, triton {c[4]}, torch {c[5]}, ratio {c[6]} "
            f"(noise {c[7]} %), {c[8]}; tk first prepare {fmt(r.tk_compile_ms, '.1f')} ms, "
            f"cache hit {fmt(r.tk_hit_us, '.1f')} us; registers/spills tk {regs['tk']}, "
            f"triton {regs['triton']}")


def ratio_summary(results):
    ratios = [(r.gbs["tk"] / r.gbs["triton"], f"{r.row.kernel} {r.row.size}") for r in results
              if r.gbs.get("tk") and r.gbs.get("triton")]
    if not ratios:
        return "tk/Triton: no row has both"
    geo = math.exp(sum(math.log(q) for q, _ in ratios) / len(ratios))
    low = min(ratios)
    return (f"tk/Triton over {len(ratios)} rows: geometric mean {geo:.3f}, lowest {low[0]:.3f} "
            f"({low[1]}), {sum(q >= 0.95 for q, _ in ratios)} rows at 0.95 or above")


def write_outputs(out_dir, header, results):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "membound.md"), "w") as f:
        for line in header:
            f.write(f"{line}\n\n")
        f.write("| " + " | ".join(COLUMNS) + " |\n")
        f.write("|" + "---|" * len(COLUMNS) + "\n")
        for r in results:
            f.write("| " + " | ".join(table_cells(r)) + " |\n")
        f.write(f"\n{ratio_summary(results)}\n")
    with open(os.path.join(out_dir, "membound.csv"), "w") as f:
        f.write("kernel,size,bytes,tk_us,triton_us,torch_us,tk_gbs,triton_gbs,torch_gbs,"
                "tk_over_triton,tk_err,triton_err,tolerance,tk_first_prepare_ms,tk_hit_us,"
                "tk_regs,tk_spill_bytes,triton_regs,triton_spills,tk_pass_spread,"
                "triton_pass_spread,torch_pass_spread,status\n")
        for r in results:
            g = r.gbs
            ratio = g["tk"] / g["triton"] if "tk" in g and "triton" in g else float("nan")
            vals = [r.row.kernel, r.row.size, r.row.nbytes]
            vals += [fmt(r.us.get(i), ".2f") for i in ("tk", "triton", "torch")]
            vals += [fmt(g.get(i), ".1f") for i in ("tk", "triton", "torch")]
            vals += [fmt(ratio, ".4f"), fmt(r.err.get("tk"), ".3g"),
                     fmt(r.err.get("triton"), ".3g"),
                     row_tol(r.row), fmt(r.tk_compile_ms, ".1f"), fmt(r.tk_hit_us, ".1f"),
                     *[fmt(v, "") for v in r.regs.get("tk", (None, None))],
                     *[fmt(v, "") for v in r.regs.get("triton", (None, None))],
                     *[fmt(r.spread.get(i), ".3f") for i in ("tk", "triton", "torch")],
                     r.status()]
            f.write(",".join(str(v) for v in vals) + "\n")


def row_tol(row):
    return f"{row.metric} {row.tol:g}"


def find_conformance(arg):
    for d in (arg, os.environ.get("TK_CONFORMANCE_DIR"),
              os.path.join(ROOT, "test", "conformance")):
        if d and os.path.isfile(os.path.join(d, "vector_add.tk")):
            return os.path.abspath(d)
    return None


def find_libtk(arg):
    for p in (arg, os.environ.get("TK_LIBTK")):
        if p:
            return p
    for d in sorted(os.listdir(ROOT)):
        p = os.path.join(ROOT, d, "libtk.so")
        if d.startswith("build") and os.path.isfile(p):
            return p
    return None


# ---- selftest: the ctypes layer and every kernel file on the interpreter ------------------

def selftest(libtk, conf):
    import numpy as np
    tk = Tk(libtk, interpret=True)
    props = tk.device()
    print(f"tk {tk.version()} on {props.name.decode()} ({libtk})")
    failures = 0

    def report(name, ok, detail):
        nonlocal failures
        failures += 0 if ok else 1
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")

    # The ctypes structs against tk.h, where a C compiler is at hand.
    diffs = layout_check(os.path.join(ROOT, "include"))
    if diffs is None:
        print("SKIP struct layouts: no C compiler")
    else:
        report("struct layouts match tk.h", not diffs, "; ".join(diffs) or "sizes and offsets agree")

    # The error paths of the bindings: a compile error, a launch mismatch.
    bad = b"import triton\n@triton.jit\ndef k(p, BLOCK: tl.constexpr):\n    x = undefined_name\n"
    buf = tk.alloc(64)
    try:
        m, k = ctypes.c_void_p(), ctypes.c_void_p()
        tk.check(tk.lib.tk_module_load_string(tk.ctx, b"bad.tk", bad, ctypes.byref(m)), "load")
        tk.check(tk.lib.tk_module_kernel(m, b"k", ctypes.byref(k)), "kernel")
        TkLaunch(tk, k, (1,), [tk_ptr(buf, "f32"), tk_const("BLOCK", 4)], 4)()
        report("compile error reported", False, "a kernel with an undefined name ran")
    except TkError as e:
        report("compile error reported",
               e.status == TK_ERR_COMPILE and "undefined_name" in e.message,
               f"{e.name}: {next((x for x in e.message.splitlines() if 'error:' in x), e.message)}")
    vadd = tk.kernel(os.path.join(conf, "vector_add.tk"), "vector_add")
    try:
        TkLaunch(tk, vadd, (1,), [tk_ptr(buf, "f32"), tk_i32(4), tk_const("BLOCK", 4)], 4)()
        report("launch mismatch reported", False, "a launch with 1 of 3 pointers went through")
    except TkError as e:
        report("launch mismatch reported", e.status == TK_ERR_LAUNCH, f"{e.name}: {e.message}")
    tk.free(buf)

    # Every kernel through the GPU run's own row code, on interpreter buffers.
    B = InterpBackend(np, tk, seed=1)
    results = []
    for row in selftest_rows(conf):
        r = bench_row(row, tk, None, None, B, HostTimer(), None)
        B.release()
        results.append(r)
        # the times are reported, not checked: under a loaded CI machine a
        # cache hit on the interpreter took longer than its compile (60 us)
        detail = (f"{row_tol(row)}: error {fmt(r.err.get('tk'), '.3g')}; compile "
                  f"{fmt(r.tk_compile_ms, '.2f')} ms, cache hit {fmt(r.tk_hit_us, '.1f')} us")
        report(f"{row.kernel} {row.size} ({row.consts}, num_warps {row.num_warps})",
               r.status() == "ok", "; ".join([detail] + r.notes))
        print(f"    {row_line(r)}")
    print()
    print_table(results)
    if os.environ.get("OUT"):
        write_outputs(os.environ["OUT"], ["selftest on tk's interpreter"], results)
    print(f"{'selftest passed' if failures == 0 else f'selftest: {failures} failed'}")
    return 0 if failures == 0 else 1


def device_copy_gbs(torch, timer):
    """The memory system's speed for a plain copy, to read the table against."""
    src = torch.randn(1 << 28, device="cuda")
    dst = torch.empty_like(src)
    ms = statistics.median(timer.samples(lambda: dst.copy_(src)))
    return 2 * src.numel() * 4 / (ms * 1e-3) / 1e9


# ---- main -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libtk", help="path of libtk.so (default: $TK_LIBTK, else build*/libtk.so)")
    ap.add_argument("--conformance", help="the conformance kernels (default: "
                    "$TK_CONFORMANCE_DIR, else test/conformance)")
    ap.add_argument("--only", help="run only rows whose 'kernel size' matches this regex")
    ap.add_argument("--rep-ms", type=float, default=100.0, help="timed milliseconds per case")
    ap.add_argument("--warmup-ms", type=float, default=25.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-triton", action="store_true", help="tk and torch only")
    ap.add_argument("--selftest", action="store_true",
                    help="no GPU: check the bindings and kernels on tk's interpreter")
    opt = ap.parse_args()

    libtk = find_libtk(opt.libtk)
    conf = find_conformance(opt.conformance)
    if not libtk or not conf:
        print(f"membound: {'libtk.so' if not libtk else 'the conformance folder'} not found "
              "(see --help)", file=sys.stderr)
        return 2
    if not os.environ.get("TK_CACHE_DIR"):
        os.environ["TK_CACHE_DIR"] = tempfile.mkdtemp(prefix="tk-membound-cache-")
    if opt.selftest:
        return selftest(libtk, conf)

    try:
        import torch
        triton = None if opt.no_triton else __import__("triton")
    except ImportError as e:
        print(f"membound: {e}: the GPU run needs torch and triton (--selftest needs neither)",
              file=sys.stderr)
        return 2
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # the primary context exists before tk retains it
    try:
        tk = Tk(libtk)
        props = tk.device()
    except (OSError, TkError) as e:
        print(f"membound: tk cannot run on this GPU: {e}", file=sys.stderr)
        return 2
    header = [f"device: {torch.cuda.get_device_name()} (tk sees {props.name.decode()}, "
              f"sm_{props.cc_major}{props.cc_minor}, {props.sm_count} SMs)",
              f"tk {tk.version()} ({libtk}), triton {triton.__version__ if triton else '-'}, "
              f"torch {torch.__version__}",
              "timing: median of CUDA-event-timed runs after warm-up, a 256 MB write before "
              f"each run to clear L2, two passes of about {opt.rep_ms:g} ms each per case "
              "(tk, Triton, torch, then again); GB/s = (each input read once + each output "
              "written once) / time"]
    timer = Timer(torch, opt.rep_ms, opt.warmup_ms)
    header.append(f"device copy (torch, 2^28 fp32): {device_copy_gbs(torch, timer):.0f} GB/s")
    for line in header:
        print(line)
    print()

    stream = torch.cuda.current_stream().cuda_stream
    B = TorchBackend(torch, opt.seed)
    results = []
    for row in gpu_rows(conf):
        if opt.only and not re.search(opt.only, f"{row.kernel} {row.size}"):
            continue
        try:
            r = bench_row(row, tk, torch, triton, B, timer, stream)
        except Exception as e:
            r = Result(row)
            r.notes.append(f"row: {type(e).__name__}: {short(e)}")
            traceback.print_exc()
        results.append(r)
        print(row_line(r))
        for note in r.notes:
            print(f"    {note}")
        torch.cuda.empty_cache()

    print()
    print_table(results)
    if os.environ.get("OUT"):
        write_outputs(os.environ["OUT"], header, results)
    print(f"\n{ratio_summary(results)}")
    for r in results:
        for note in r.notes:
            print(f"  {r.row.kernel} {r.row.size}: {note.splitlines()[0][:200]}")
    bad = [r for r in results if r.status() != "ok"]
    print(f"\n{len(results) - len(bad)} rows correct, {len(bad)} with failures")
    return 0 if results and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
