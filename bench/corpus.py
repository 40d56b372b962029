#!/usr/bin/env python3
"""corpus.py: the kernels of bench/corpus/ (written in the idioms of real
kernel libraries) under tk and Triton in one process, on the same fresh
inputs. Each output is poisoned (NaN) before a checked run and compared with
a float64 numpy reference by relative error; both sides are then timed with
CUDA events, taking turns run by run (median after warm-up, L2 cleared
before each run). Prints a
table (kernel, shape, tk ms, Triton ms, ratio = Triton time / tk time, so
above 1 means tk is faster, check), the geomean and the ten worst kernels.

    python3 bench/corpus.py --libtk .carry/build/libtk.so --out $OUT/corpus.md
    python3 bench/corpus.py --libtk build/libtk.so --interpret      # no GPU
    python3 bench/corpus.py --libtk build/libtk.so --profile fused_moe

--interpret runs tk alone on its interpreter (numpy buffers, small sizes)
and checks every case against its reference: no torch, no triton, no
timing. The cases (sizes, grids, arguments, references) are in
bench/corpus/cases_*.py; the registry's format in bench/corpus/registry.py.
Exit status 0 when every result is right (or fails as its case expects).
"""
import argparse
import copy
import glob
import importlib
import math
import os
import re
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
sys.path.insert(0, HERE)
sys.path.insert(0, CORPUS)
try:
    import numpy as np
except ImportError:  # the ctest skips (77) where numpy is missing
    print("corpus.py needs numpy", file=sys.stderr)
    sys.exit(77)

import tkbind  # noqa: E402
from registry import CASES, F32, I32, I64, Dtype  # noqa: E402


def load_cases():
    for path in sorted(glob.glob(os.path.join(CORPUS, "cases_*.py"))):
        importlib.import_module(os.path.splitext(os.path.basename(path))[0])
    return CASES


# ---- buffers on each side --------------------------------------------------------------

class InterpSide:
    """tk on its interpreter: buffers are tk_alloc'ed copies of the numpy arrays."""

    def __init__(self, tk):
        self.tk, self.live = tk, []

    def upload(self, buf):
        d = self.tk.alloc(max(buf.arr.nbytes, 1))
        self.tk.copy_to(d, buf.arr.ctypes.data, buf.arr.nbytes)
        self.live.append(d)
        return d

    def addr(self, d):
        return d

    def write(self, d, arr):
        self.tk.copy_to(d, arr.ctypes.data, arr.nbytes)

    def read(self, d, buf):
        arr = np.empty_like(buf.arr)
        self.tk.copy_from(arr.ctypes.data, d, arr.nbytes)
        return arr

    def sync(self):
        self.tk.check(self.tk.lib.tk_synchronize(self.tk.ctx), "tk_synchronize")

    def release(self):
        for d in self.live:
            self.tk.free(d)
        self.live = []


class TorchSide:
    """Both compilers on the GPU: buffers are torch tensors (bf16 and fp8
    viewed from their uint16/uint8 storage)."""

    def __init__(self, torch):
        self.torch = torch
        self.views = {"bf16": torch.bfloat16, "f8e4": torch.float8_e4m3fn}

    def upload(self, buf):
        t = self.torch.from_numpy(buf.arr.copy()).cuda()
        return t.view(self.views[buf.dt]) if buf.dt in self.views else t

    def addr(self, t):
        return t.data_ptr()

    def write(self, t, arr):
        src = self.torch.from_numpy(arr).cuda()
        t.view(src.dtype).copy_(src)

    def read(self, t, buf):
        src_dtype = self.torch.from_numpy(buf.arr[:0]).dtype
        return t.view(src_dtype).cpu().numpy()

    def sync(self):
        self.torch.cuda.synchronize()

    def release(self):
        pass


def poison(buf):
    a = np.empty_like(buf.arr)
    if buf.dt in ("f32", "f16", "f64"):
        a.fill(np.nan)
    elif buf.dt == "bf16":
        a.fill(0x7FC0)
    elif buf.dt == "f8e4":
        a.fill(0x7F)
    else:
        a.fill(np.iinfo(a.dtype).max // 3)  # an unlikely value for an integer output
    return a


# ---- launches -----------------------------------------------------------------------------

def tk_args(case, S, bufs, dev, side):
    out = []
    for a in case.args(S, bufs):
        if isinstance(a, str):
            out.append(tkbind.tk_ptr(side.addr(dev[a]), bufs[a].dt))
        elif isinstance(a, I32):
            out.append(tkbind.tk_i32(a.v))
        elif isinstance(a, I64):
            out.append(tkbind.tk_i64(a.v))
        elif isinstance(a, F32):
            out.append(tkbind.tk_f32(a.v))
        else:
            raise TypeError(f"{case.name}: argument {a!r}")
    for k, v in case.consts(S).items():
        if isinstance(v, Dtype):
            out.append(tkbind.tk_const_text(k, v.text))
        elif isinstance(v, str):
            out.append(tkbind.tk_const_text(k, repr(v)))
        else:
            out.append(tkbind.tk_const(k, int(v) if isinstance(v, bool) else v))
    return out


def tk_launch(tk, case, S, bufs, dev, side, stream=None):
    kern = tk.kernel(os.path.join(CORPUS, case.module), case.kernel)
    run = tkbind.TkLaunch(tk, kern, case.grid(S), tk_args(case, S, bufs, dev, side),
                          case.warps_for(S), stream)
    run.opts.num_stages = case.stages_for(S)
    return run


def plain_jit(fn):
    """The JITFunction under @triton.autotune / @triton.heuristics: the corpus
    launches every kernel with one fixed config on both sides."""
    while not hasattr(fn, "run") or type(fn).__name__ in ("Autotuner", "Heuristics"):
        fn = fn.fn
    return fn


def triton_launch(mods, case, S, bufs, dev):
    from gemm import load_module
    if case.module not in mods:
        mods[case.module] = load_module(os.path.join(CORPUS, case.module),
                                        "corpus_" + os.path.splitext(case.module)[0])
    fn = plain_jit(getattr(mods[case.module], case.kernel))
    args = [dev[a] if isinstance(a, str) else a.v for a in case.args(S, bufs)]
    kw = {k: (v.triton() if isinstance(v, Dtype) else v) for k, v in case.consts(S).items()}
    kw = dict(kw, num_warps=case.warps_for(S), num_stages=case.stages_for(S))
    grid = case.grid(S)
    return lambda: fn[grid](*args, **kw)


# ---- checking and timing -------------------------------------------------------------------

def restore(bufs, dev, side):
    for name, b in bufs.items():
        if b.inout:
            side.write(dev[name], b.arr)


def prelude_case(case):
    """The case's prelude launch as a Case of its own (same module, buffers, sizes)."""
    pre = copy.copy(case)
    pre.kernel, pre.args, pre.grid = (case.prelude[k] for k in ("kernel", "args", "grid"))
    pre.consts = case.prelude.get("consts", case.consts)
    return pre


def checked_run(case, bufs, dev, side, launch, refs, prelude=None, X=None, S=None):
    """Poisons the outputs, restores in-place buffers, launches once (after
    the prelude, if any) and returns (worst relative error, ok, detail)."""
    for name, b in bufs.items():
        if b.out:
            side.write(dev[name], poison(b))
    restore(bufs, dev, side)
    side.sync()
    if prelude:
        prelude()
    launch()
    side.sync()
    if case.derive:
        got = {n: b.f64(side.read(dev[n], b)) for n, b in bufs.items() if b.out or b.inout}
        refs = case.derive(X, got, S)
    worst, ok, detail = 0.0, True, []
    for name, want in refs.items():
        got = bufs[name].f64(side.read(dev[name], bufs[name])).reshape(want.shape)
        den = np.linalg.norm(want.ravel())
        err = np.linalg.norm((got - want).ravel()) / (den if den > 0 else 1.0)
        if not np.isfinite(got).all():
            err = math.inf
        if not err <= case.tol_for(name):
            ok = False
            detail.append(f"{name} rel.err {err:.2e} > {case.tol_for(name):g}")
        worst = max(worst, err)
    return worst, ok, "; ".join(detail)


def gpu_ms(torch, fns, pre, flush, reps):
    """Median milliseconds of reps runs of each side's launch after warm-up,
    the sides taking turns run by run (so that a drift of the clocks or of
    the memory's state over the seconds a case takes falls on both); before
    each run, pre() (in-place buffers put back) and a 256 MB write that
    clears L2, both outside the timed events."""
    for _ in range(3):
        for fn in fns.values():
            pre()
            fn()
    torch.cuda.synchronize()
    E = torch.cuda.Event
    pairs = {who: [(E(enable_timing=True), E(enable_timing=True)) for _ in range(reps)]
             for who in fns}
    for i in range(reps):
        for who, fn in fns.items():
            s, e = pairs[who][i]
            pre()
            flush.zero_()
            s.record()
            fn()
            e.record()
    torch.cuda.synchronize()
    return {who: statistics.median(s.elapsed_time(e) for s, e in p) for who, p in pairs.items()}


class Row:
    def __init__(self, case, shape):
        self.case, self.shape = case, shape
        self.ms = {}      # side -> median ms
        self.err = {}     # side -> worst relative error
        self.status = {}  # side -> "ok", "FAIL", "ERROR", "xfail"
        self.notes = []

    def ratio(self):
        # --once checks without timing: both sides ok, but no times
        if self.status.get("tk") == "ok" and self.status.get("triton") == "ok" and \
                "tk" in self.ms and "triton" in self.ms:
            return self.ms["triton"] / self.ms["tk"]
        return None

    def check(self):
        bad = [f"{s} {v}" for s, v in self.status.items() if v != "ok"]
        return "ok" if not bad else ", ".join(bad)

    def passed(self):
        return all(v in ("ok", "xfail") for v in self.status.values())


def side_status(case, ok, interp):
    reason = case.xfail or (None if interp else case.xfail_gpu)
    if reason:
        return "xfail" if not ok else "XPASS"
    return "ok" if ok else "FAIL"


def run_case(case, mode, tk, side, rng_seed, torch=None, mods=None, sides=("tk", "triton"),
             reps=50, flush=None, once=False):
    interp = mode == "interp"
    S = case.size(mode)
    row = Row(case, case.shape(S))
    rng = np.random.default_rng(rng_seed)
    bufs = case.make(rng, S)
    X = {k: b.f64() for k, b in bufs.items()}
    refs = case.ref(X, S) if case.ref else None
    dev = {k: side.upload(b) for k, b in bufs.items() if not b.ptr_table}
    for k, b in bufs.items():  # tables of the other buffers' device addresses
        if b.ptr_table:
            b.arr = np.array([side.addr(dev[n]) for n in b.ptr_table], dtype=np.int64)
            dev[k] = side.upload(b)
    pre = lambda: restore(bufs, dev, side)  # noqa: E731
    order = list(sides) if (rng_seed % 2 == 0 or interp) else list(reversed(sides))
    timed = {}  # side -> its checked launch, timed below with the others
    for who in order:
        try:
            pre_fn = None
            if who == "tk":
                stream = None if interp else torch.cuda.current_stream().cuda_stream
                fn = tk_launch(tk, case, S, bufs, dev, side, stream)
                if case.prelude:
                    pre_fn = tk_launch(tk, prelude_case(case), S, bufs, dev, side, stream)
            else:
                fn = triton_launch(mods, case, S, bufs, dev)
                if case.prelude:
                    pre_fn = triton_launch(mods, prelude_case(case), S, bufs, dev)
            err, ok, detail = checked_run(case, bufs, dev, side, fn, refs, pre_fn, X, S)
            row.err[who] = err
            row.status[who] = side_status(case, ok, interp) if who == "tk" else \
                ("ok" if ok else "FAIL")
            if detail:
                row.notes.append(f"{who}: {detail}")
            if row.status[who] == "xfail":
                row.notes.append(f"tk: expected to fail: {case.xfail or case.xfail_gpu}")
            if ok and not interp and not once:
                timed[who] = fn
        except Exception as e:  # a compile error, a launch error: the row says so
            msg = str(e).strip().splitlines()
            row.status[who] = side_status(case, False, interp) if who == "tk" else "ERROR"
            if row.status[who] != "xfail":
                row.status[who] = "ERROR"
            row.notes.append(f"{who}: {' | '.join(msg[:6]) if msg else type(e).__name__}")
            if os.environ.get("TK_CORPUS_TRACE"):
                traceback.print_exc()
    try:
        if timed:
            row.ms.update(gpu_ms(torch, timed, pre, flush, reps))
    except Exception as e:  # a launch that passed its check and then failed
        row.notes.append(f"timing: {str(e).strip().splitlines()[:1]}")
        row.ms.clear()
    side.release()
    return row


# ---- the table -----------------------------------------------------------------------------

def fmt_ms(row, who):
    return f"{row.ms[who]:.4f}" if who in row.ms else "-"


def table(rows, interp):
    lines = []
    if interp:
        lines.append("| kernel | class | shape | tk rel.err | check |")
        lines.append("|---|---|---|---|---|")
        for r in rows:
            e = f"{r.err['tk']:.2e}" if "tk" in r.err else "-"
            lines.append(f"| {r.case.name} | {r.case.klass} | {r.shape} | {e} | {r.check()} |")
        return lines
    lines.append("| kernel | class | shape | config | tk ms | Triton ms | ratio | check |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r.ratio()
        lines.append(f"| {r.case.name} | {r.case.klass} | {r.shape} | fixed | {fmt_ms(r, 'tk')} | "
                     f"{fmt_ms(r, 'triton')} | {'-' if ratio is None else f'{ratio:.3f}'} | "
                     f"{r.check()} |")
    return lines


def summary(rows):
    ratios = [(r.ratio(), r) for r in rows if r.ratio()]
    lines = []
    if ratios:
        gm = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
        lines.append(f"geomean ratio (Triton ms / tk ms; >1: tk faster) over {len(ratios)} "
                     f"kernels: {gm:.3f}")
        lines.append("ten worst:")
        for x, r in sorted(ratios, key=lambda p: p[0])[:10]:
            lines.append(f"  {x:.3f}  {r.case.name} {r.shape}")
    missing = [r.case.name for r in rows if not r.ratio()]
    if missing:
        lines.append(f"no ratio (a side failed or did not run): {', '.join(missing)}")
    return lines


def print_profile(case, args):
    base = f"python3 bench/corpus.py --libtk {args.libtk} -k '^{case.name}$' --once"
    print(f"# {case.name}: {case.module}:{case.kernel}; one launch of each side, no timing")
    for who in ("tk", "triton"):
        print(f"ncu --set full --import-source yes -k regex:'^{case.kernel}' -c 1 "
              f"-o corpus_{case.name}_{who} {base} --side {who}")
    print(f"# side by side: ncu --import corpus_{case.name}_tk.ncu-rep --page details; "
          f"the same for _triton; the source page maps stalls to lines")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libtk", default=os.environ.get("TK_LIBTK", "build/libtk.so"))
    ap.add_argument("-k", dest="filter", help="regex over case names")
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--interpret", action="store_true", help="tk's interpreter only, no GPU")
    ap.add_argument("--profile", metavar="NAME", help="print the ncu commands for a case")
    ap.add_argument("--once", action="store_true", help="one checked launch per side, no timing")
    ap.add_argument("--side", choices=("tk", "triton", "both"), default="both")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("--split", metavar="N/M",
                    help="only every M-th case from the N-th (0-based), to cut a run into calls")
    args = ap.parse_args()
    cases = load_cases()
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c.name)]
    if args.split:
        m = re.fullmatch(r"(\d+)/(\d+)", args.split)
        if not m or int(m.group(2)) == 0 or int(m.group(1)) >= int(m.group(2)):
            print(f"--split wants N/M with 0 <= N < M, not {args.split!r}", file=sys.stderr)
            return 2
        cases = cases[int(m.group(1))::int(m.group(2))]
    if args.list:
        for c in cases:
            print(f"{c.name:32s} {c.klass:12s} {c.module}:{c.kernel}"
                  f"{'  xfail: ' + c.xfail if c.xfail else ''}")
        return 0
    if args.profile:
        found = [c for c in load_cases() if c.name == args.profile]
        if not found:
            print(f"no case named {args.profile}", file=sys.stderr)
            return 1
        print_profile(found[0], args)
        return 0
    if not cases:
        print("no case matches", file=sys.stderr)
        return 1
    # a case's seed is its place in the whole corpus, so -k and --split see the same inputs
    seed_of = {c.name: args.seed + i for i, c in enumerate(CASES)}
    sides = ("tk", "triton") if args.side == "both" else (args.side,)
    rows = []
    t0 = time.time()
    if args.interpret:
        tk = tkbind.Tk(args.libtk, interpret=True)
        side = InterpSide(tk)
        for i, c in enumerate(cases):
            t = time.time()
            r = run_case(c, "interp", tk, side, seed_of[c.name], sides=("tk",))
            rows.append(r)
            print(f"{c.name:32s} {r.check():40s} {time.time() - t:6.1f}s"
                  + "".join(f"\n    {n}" for n in r.notes), flush=True)
    else:
        import torch
        tk = tkbind.Tk(args.libtk)
        side = TorchSide(torch)
        flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
        if "triton" in sides:
            # Triton allocates the tensor maps of descriptors built in the kernel
            # (tl.make_tensor_descriptor) from this at launch; kernels that need no
            # global scratch never call it
            import triton
            triton.set_allocator(lambda size, align, stream:
                                 torch.empty(size, dtype=torch.int8, device="cuda"))
        mods = {}
        print(f"device {torch.cuda.get_device_name()}, tk {tk.version()}", flush=True)
        for i, c in enumerate(cases):
            r = run_case(c, "gpu", tk, side, seed_of[c.name], torch, mods, sides, args.reps,
                         flush, args.once)
            rows.append(r)
            ratio = r.ratio()
            print(f"{c.name:32s} {r.shape:24s} tk {fmt_ms(r, 'tk'):>9s} triton "
                  f"{fmt_ms(r, 'triton'):>9s} ratio {'-' if ratio is None else f'{ratio:.3f}':>6s}"
                  f"  {r.check()}" + "".join(f"\n    {n}" for n in r.notes), flush=True)
    lines = table(rows, args.interpret)
    tail = [] if args.interpret else summary(rows)
    npass = sum(r.passed() for r in rows)
    nx = sum("xfail" in r.status.values() for r in rows)
    tail.append(f"{npass}/{len(rows)} cases as expected ({nx} expected tk failures), "
                f"{time.time() - t0:.0f}s")
    print("\n" + "\n".join(lines + [""] + tail))
    if args.out:
        with open(args.out, "w") as f:
            f.write("# bench/corpus.py\n\n")
            f.write("ratio = Triton ms / tk ms (above 1: tk faster); config fixed: both compilers "
                    "get the same constexprs, num_warps and num_stages.\n\n")
            f.write("\n".join(lines) + "\n\n" + "\n".join(tail) + "\n")
            notes = [f"- {r.case.name}: {n}" for r in rows for n in r.notes]
            if notes:
                f.write("\n## Notes\n\n" + "\n".join(notes) + "\n")
    return 0 if npass == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
