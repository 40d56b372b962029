#!/usr/bin/env python3
"""run_gpu.py: runs each corpus kernel under Triton and under tk on the same
inputs and compares what they write.

    python3 test/corpus/run_gpu.py --out results.txt       # GPU: Triton 3.6 vs tk (tkc -run --gpu)
    python3 test/corpus/run_gpu.py --interpret             # no GPU: tk's interpreter vs numpy float64
    python3 test/corpus/run_gpu.py -k softmax -v           # cases whose name or file contains "softmax"
    python3 test/corpus/run_gpu.py --triton-interpret      # no GPU: tk's interpreter vs Triton's (TRITON_INTERPRET=1)

For each case (corpus_cases.py) fresh random inputs are drawn from a numpy
generator seeded by the case's name and --seed (printed, so a run can be
repeated) and written to raw files; outputs the kernel only writes start
poisoned (NaN, or 0xA5 bytes). Triton runs the SAME corpus file, imported
as a Python module with the corpus folder on sys.path (so `kernlib.ops.swiglu`
and its relative imports work), in a child process per case, so a failure
or a broken CUDA context in one case leaves the others alone; autotune and
heuristics wrappers are taken off so both sides use the case's constexprs.
tk runs `tkc -run [--gpu] FILE -k KERNEL ... name=file:PATH:TYPE` (a host-built
tensor descriptor: name=desc:SHAPE:BLOCK:file:PATH:TYPE; a tuple argument:
name=(item,...), which Triton gets as a Python tuple) on copies
of the same files. Outputs are compared with tolerances by dtype (integers
bit-exact unless a case says otherwise). With --interpret (or without
Triton, torch or a GPU) tk runs on its CPU interpreter and is compared with
the case's float64 numpy reference (corpus_refs.py). --triton-interpret
runs the Triton side on Triton's own CPU interpreter (TRITON_INTERPRET=1,
tensors on the CPU) against tk's interpreter: the whole harness, Triton's
side included, without a GPU.

One line per case, `PASS|FAIL FILE KERNEL MAXRELERR [case]`, where
MAXRELERR is the largest |got - want| / max(|want|, atol/rtol) over its
outputs; a failure's reason follows on indented lines. A case marked
gpu_only (inline PTX) gets `SKIP FILE KERNEL [case]: GPU only (why)` on the
interpreters instead. A case marked beyond_triton (Triton 3.6 fails to
compile it) is checked against the float64 reference on the GPU too. Then a
table by file
(kernels, cases, passes) and `N passed, N failed`. --out FILE gets the same
lines as they are printed. Exit status: 0 all passed, 1 a failure, 77 numpy
is missing (the test is skipped)."""
import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent.parent
SKIP = 77

try:
    import numpy as np
except ImportError:
    np = None

# struct of each element type: numpy type (bf16 is stored as uint16 bits), torch name
DTYPES = {
    "fp32": ("float32", "float32"), "fp16": ("float16", "float16"), "bf16": ("uint16", "bfloat16"),
    "fp64": ("float64", "float64"), "i8": ("int8", "int8"), "i16": ("int16", "int16"),
    "i32": ("int32", "int32"), "i64": ("int64", "int64"), "u8": ("uint8", "uint8"),
}
FLOATS = {"fp32", "fp16", "bf16", "fp64"}


# ---- bytes -------------------------------------------------------------------------------


def encode(values, dtype):
    """float64 or integer values to the raw bytes of dtype (bf16 rounded to nearest even)."""
    if dtype == "bf16":
        f = np.asarray(values, dtype=np.float64).astype(np.float32)
        u = f.view(np.uint32).astype(np.uint64)
        bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
        bits = np.where(np.isnan(f), 0x7FC0, bits)
        return bits.astype(np.uint16).tobytes()
    return np.asarray(values).astype(DTYPES[dtype][0]).tobytes()


def decode(data, dtype):
    """Raw bytes to float64 (floats) or int64 (integers)."""
    a = np.frombuffer(data, dtype=DTYPES[dtype][0])
    if dtype == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64 if dtype in FLOATS else np.int64)


def poison(dtype, n):
    if dtype in FLOATS:
        return encode(np.full(n, np.nan), dtype)
    return b"\xa5" * (n * np.dtype(DTYPES[dtype][0]).itemsize)


def make_inputs(case, seed):
    rng = np.random.default_rng([zlib.crc32(case.name.encode()), seed])
    return {a.name: poison(a.dtype, a.n) if a.init == "poison" else encode(a.values(rng), a.dtype)
            for a in case.buffers()}


def write_inputs(inputs, folder):
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in inputs.items():
        (folder / f"{name}.bin").write_bytes(data)


# ---- the two sides -------------------------------------------------------------------------


def const_text(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    return repr(v)


def tk_arg_text(a, indir):
    """One tkc -run argument, NAME=SPEC; a tuple's items inside (...), None
    for a Null item."""
    kind = a.__class__.__name__
    if kind == "Null":
        return "None"
    if kind == "Tuple":
        items = ",".join(tk_arg_text(i, indir) for i in a.items)
        return f"{a.name}=({items}{',' if len(a.items) == 1 else ''})"
    if kind == "Scalar":
        return f"{a.name}={a.dtype}:{a.value!r}"
    if kind == "Desc":
        dims = ["x".join(str(d) for d in a.shape), "x".join(str(d) for d in a.block)]
        return f"{a.name}=desc:{dims[0]}:{dims[1]}:file:{indir / (a.name + '.bin')}:{a.dtype}"
    return f"{a.name}=file:{indir / (a.name + '.bin')}:{a.dtype}"


def run_tk(case, indir, outdir, tkc, gpu, timeout):
    """Runs tkc -run on the input files; returns {output name: bytes}."""
    outdir.mkdir(parents=True, exist_ok=True)
    cmd = [str(tkc), "-run", str(CORPUS / case.file), "-k", case.kernel,
           "--grid", ",".join(str(g) for g in case.grid), "--num-warps", str(case.num_warps),
           "-o", str(outdir), "-I", str(CORPUS)]
    if case.num_stages:
        cmd += ["--num-stages", str(case.num_stages)]
    if gpu:
        cmd.append("--gpu")
    if case.launch_pdl and tkc_has_option(tkc, "--launch-pdl"):
        cmd.append("--launch-pdl")
    for k, v in case.consts.items():
        cmd += ["-D", f"{k}={const_text(v)}"]
    for a in case.args:
        if a.__class__.__name__ == "Null":
            cmd += ["-D", f"{a.name}=None"]
        else:
            cmd.append(tk_arg_text(a, indir))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"tk: no result after {timeout} s")
    if p.returncode != 0:
        raise RuntimeError("tk: " + tail(p.stderr or p.stdout) + "\n command: " + " ".join(cmd))
    return {a.name: (outdir / f"{a.name}.bin").read_bytes() for a in case.outputs()}


_TKC_HELP = {}


def tkc_has_option(tkc, option):
    """Whether `tkc --help` lists the option (a case asking for a launch
    option this tkc lacks runs without it)."""
    if tkc not in _TKC_HELP:
        p = subprocess.run([str(tkc), "--help"], capture_output=True, text=True)
        _TKC_HELP[tkc] = p.stdout + p.stderr
    return option in _TKC_HELP[tkc]


def triton_env(mode):
    env = dict(os.environ)
    if mode == "triton-cpu":
        env["TRITON_INTERPRET"] = "1"
    return env


def run_triton(case, indir, outdir, timeout, mode):
    """Runs the case under Triton in a child process (see triton_worker)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--triton-worker", case.name,
           "--indir", str(indir), "--outdir", str(outdir)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=triton_env(mode))
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"triton: no result after {timeout} s")
    if p.returncode != 0:
        raise RuntimeError("triton: " + tail(p.stderr or p.stdout))
    return {a.name: (outdir / f"{a.name}.bin").read_bytes() for a in case.outputs()}


def import_corpus_module(rel):
    """The corpus file as Python imports it with the corpus folder on
    sys.path: softmax.py as `softmax`, kernlib/ops/swiglu.py as
    `kernlib.ops.swiglu` (so its relative imports work)."""
    if str(CORPUS) not in sys.path:
        sys.path.insert(0, str(CORPUS))
    return importlib.import_module(".".join(Path(rel).with_suffix("").parts))


def jit_function(kernel):
    """The @triton.jit function under autotune, heuristics and a library's
    own wrappers (each keeps the next layer in .fn); under TRITON_INTERPRET
    it is an InterpretedFunction."""
    from triton.runtime.jit import JITFunction
    from triton.runtime.interpreter import InterpretedFunction

    while not isinstance(kernel, (JITFunction, InterpretedFunction)) and hasattr(kernel, "fn"):
        kernel = kernel.fn
    return kernel


def runtime_params(kernel):
    """The names of the kernel's parameters that are not constexprs."""
    if hasattr(kernel, "params"):
        return [p.name for p in kernel.params if not p.is_constexpr]
    import inspect

    def constexpr(annotation):
        return "constexpr" in (annotation if isinstance(annotation, str) else repr(annotation))

    sig = inspect.signature(kernel.fn)
    return [n for n, p in sig.parameters.items()
            if p.annotation is inspect.Parameter.empty or not constexpr(p.annotation)]


def triton_worker(case, indir, outdir):
    """The child: launches the Triton kernel on the input files and writes
    its output buffers to outdir."""
    import torch

    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    kernel = jit_function(getattr(import_corpus_module(case.file), case.kernel))
    tensors = {}

    def value(a):
        kind = a.__class__.__name__
        if kind == "Null":
            return None
        if kind == "Scalar":
            return a.value
        if kind == "Tuple":  # a tuple argument, as Triton users pass one
            return tuple(value(i) for i in a.items)
        raw = bytearray((indir / f"{a.name}.bin").read_bytes())
        t = torch.frombuffer(raw, dtype=getattr(torch, DTYPES[a.dtype][1])).to(device)
        tensors[a.name] = t
        if kind == "Desc":  # a descriptor built on the host over the buffer
            from triton.tools.tensor_descriptor import TensorDescriptor
            return TensorDescriptor.from_tensor(t.view(a.shape), list(a.block))
        return t

    args = [value(a) for a in case.args]
    runtime = runtime_params(kernel)
    if len(runtime) != len(args):
        raise SystemExit(f"{case.kernel} has {len(runtime)} runtime parameters ({', '.join(runtime)}), "
                         f"the case gives {len(args)}")
    if device == "cuda":  # scratch for descriptors made on the device (tl.make_tensor_descriptor)
        import triton
        if hasattr(triton, "set_allocator"):
            triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                         device="cuda"))
    opts = {"num_warps": case.num_warps}
    if case.num_stages:
        opts["num_stages"] = case.num_stages
    if case.launch_pdl:
        opts["launch_pdl"] = True
    kernel[case.grid](**dict(zip(runtime, args)), **case.consts, **opts)
    if device == "cuda":
        torch.cuda.synchronize()
    outdir.mkdir(parents=True, exist_ok=True)
    for a in case.outputs():
        data = tensors[a.name].cpu().contiguous().view(torch.uint8).numpy().tobytes()
        (outdir / f"{a.name}.bin").write_bytes(data)


def reference(case, inputs):
    """The float64 reference's outputs, from the inputs as the kernel sees them."""
    v = {a.name: decode(inputs[a.name], a.dtype) for a in case.buffers()}
    import corpus_cases

    s = {a.name: a.value for a in corpus_cases.leaves(case.args) if a.__class__.__name__ == "Scalar"}
    return case.ref(v, case.consts, s)


# ---- comparing -----------------------------------------------------------------------------


def compare(got, want, tol):
    """(mismatches, max relative error) of float64 arrays; NaN equals NaN
    (an element neither side wrote keeps its poison), and an infinity only
    the same infinity (the tolerance of an infinite value is infinite)."""
    atol, rtol = tol
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return max(got.size, want.size), float("inf")
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(same, 0.0, np.abs(got - want))
        err = np.where(np.isnan(err), np.inf, err)
        bad = ~same & ~(np.isfinite(want) & (err <= atol + rtol * np.abs(want)))
        floor = atol / rtol if rtol > 0 else 1.0
        rel = err / np.maximum(np.abs(np.nan_to_num(want)), floor)
    return int(bad.sum()), float(rel.max()) if rel.size else 0.0


def check(case, got, want, against_ref):
    """Compares every output; returns (ok, max rel err, details)."""
    worst, details = 0.0, []
    for a in case.outputs():
        if a.name not in want:
            continue
        w = want[a.name] if against_ref else decode(want[a.name], a.dtype)
        bad, rel = compare(decode(got[a.name], a.dtype), w, case.tolerance(a.dtype, against_ref))
        worst = max(worst, rel)
        if bad:
            details.append(f"{a.name} ({a.dtype}): {bad} of {a.n} elements differ, max rel err {rel:.3g}")
    return not details, worst, details


def tail(text, lines=12):
    return "\n".join(text.strip().splitlines()[-lines:])


# ---- the run -------------------------------------------------------------------------------


class Report:
    """Prints lines and copies them to --out as they come."""

    def __init__(self, path):
        self.f = open(path, "w") if path else None
        self.rows = []

    def line(self, text=""):
        print(text, flush=True)
        if self.f:
            self.f.write(text + "\n")
            self.f.flush()

    def case(self, case, ok, worst, details, verbose):
        err = f"{worst:.2e}" if worst is not None else "-"
        self.line(f"{'PASS' if ok else 'FAIL'} {case.file} {case.kernel} {err} [{case.name}]")
        for d in details if (verbose or not ok) else []:
            self.line("    " + d.replace("\n", "\n    "))
        self.rows.append((case.file, case.kernel, ok))

    def summary(self):
        files = {}
        for f, k, ok in self.rows:
            e = files.setdefault(f, [set(), 0, 0])
            e[0].add(k)
            e[1] += 1
            e[2] += ok
        head = f"{'file':32} {'kernels':>7} {'cases':>6} {'pass':>5}"
        self.line()
        self.line(head)
        self.line("-" * len(head))
        for f, (ks, n, p) in sorted(files.items()):
            self.line(f"{f:32} {len(ks):7d} {n:6d} {p:5d}")
        n, p = len(self.rows), sum(ok for _, _, ok in self.rows)
        self.line(f"{'total':32} {len({(f, k) for f, k, _ in self.rows}):7d} {n:6d} {p:5d}")
        self.line(f"{p} passed, {n - p} failed")
        return n - p


def triton_available(mode):
    """(ok, description) from a child that imports torch and triton."""
    device = "'CPU interpreter'" if mode == "triton-cpu" else \
        "(torch.cuda.get_device_name() if torch.cuda.is_available() else exit('no CUDA device'))"
    probe = (f"import torch, triton; d = {device}; "
             "print(f'{d}, triton {triton.__version__}, torch {torch.__version__}')")
    try:
        p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                           env=triton_env(mode))
    except subprocess.TimeoutExpired:
        return False, "importing torch and triton took over 300 s"
    return p.returncode == 0, (p.stdout.strip() if p.returncode == 0 else tail(p.stderr, 1))


def judge(case, args, mode):
    """(ok, max rel err, details) of one case; mode is "gpu" (tk --gpu vs
    Triton), "triton-cpu" (both interpreters) or "numpy" (tk's interpreter
    vs the reference)."""
    inputs = make_inputs(case, args.seed)
    with tempfile.TemporaryDirectory(prefix="tkcorpus") as tmp:
        tmp = Path(tmp)
        write_inputs(inputs, tmp / "in")
        try:
            got = run_tk(case, tmp / "in", tmp / "tk", args.tkc, mode == "gpu", args.timeout)
            if mode == "numpy" or (mode == "gpu" and case.beyond_triton):
                return check(case, got, reference(case, inputs), against_ref=True)
            want = run_triton(case, tmp / "in", tmp / "triton", args.timeout, mode)
            return check(case, got, want, against_ref=False)
        except Exception as e:  # either side failing is this case's result; the run goes on
            return False, None, [str(e)]


def run_case(case, args, mode, rep):
    rep.case(case, *judge(case, args, mode), args.verbose)


def run_all(cases, args, mode, rep):
    """The cases, -j at a time; each line is written as its case ends."""
    if args.jobs <= 1:
        for case in cases:
            run_case(case, args, mode, rep)
        return
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(judge, c, args, mode): c for c in cases}
        for f in as_completed(futures):
            rep.case(futures[f], *f.result(), args.verbose)


def self_check(cases, args):
    """The comparison must report a wrong output, and an element the kernel
    does not write must keep its poison: a reference off by 0.1%, and one
    that zeroes the rows a kv-cache copy leaves alone, must both fail; an
    infinity matches only itself."""
    import copy

    def run(case):
        rep = Report(None)
        run_case(case, args, "numpy", rep)
        return rep.rows[-1][2]

    by_name = {c.name: c for c in cases}
    gelu, kv = by_name["gelu tanh"], by_name["kv cache copy"]
    off = copy.copy(gelu)
    off.ref = lambda v, c, s: {k: x * 1.001 for k, x in gelu.ref(v, c, s).items()}
    zeroed = copy.copy(kv)
    zeroed.ref = lambda v, c, s: kv.ref({**v, "out": np.zeros_like(v["out"])}, c, s)
    inf = np.array([np.inf, -np.inf, np.inf])
    results = [run(gelu), not run(off), run(kv), not run(zeroed),
               compare(inf, inf, (1e-4, 1e-4))[0] == 0,
               compare(np.array([1.0, np.inf, np.nan]), inf, (1e-4, 1e-4))[0] == 3]
    print("self-check:", "ok" if all(results) else f"FAILED {results}")
    return 0 if all(results) else 1


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tkc", default=os.environ.get("TKC", REPO / "build" / "tkc"),
                    help="the tkc to run (default: build/tkc)")
    ap.add_argument("--interpret", action="store_true",
                    help="tk on its CPU interpreter against numpy references (no GPU, no Triton)")
    ap.add_argument("--triton-interpret", action="store_true",
                    help="tk's interpreter against Triton's (TRITON_INTERPRET=1): no GPU")
    ap.add_argument("-k", dest="only", default="", help="only cases whose name or file contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="details of passing cases too")
    ap.add_argument("--seed", type=int, default=None, help="input seed (default: a fresh one, printed)")
    ap.add_argument("--out", help="write the results to this file as they come")
    ap.add_argument("--timeout", type=int, default=600, help="seconds for one side of one case")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="cases run at once (default 1)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--self-check", action="store_true",
                    help="check that a wrong or unwritten output is reported (interpreter)")
    ap.add_argument("--triton-worker", help=argparse.SUPPRESS)
    ap.add_argument("--indir", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--outdir", type=Path, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if np is None:
        print("numpy is not installed: the corpus harness is skipped")
        return SKIP
    sys.path.insert(0, str(CORPUS))
    import corpus_cases

    cases = corpus_cases.cases()
    if args.triton_worker:
        triton_worker(next(c for c in cases if c.name == args.triton_worker), args.indir, args.outdir)
        return 0
    if args.self_check:
        args.seed = 1 if args.seed is None else args.seed
        return self_check(cases, args)
    if args.list:
        for c in cases:
            print(f"{c.file:32} {c.kernel:36} {c.name}")
        return 0
    mode = "numpy"
    if not args.interpret:
        wanted = "triton-cpu" if args.triton_interpret else "gpu"
        ok, what = triton_available(wanted)
        mode = wanted if ok else "numpy"
        print(f"triton: {what}" if ok else f"triton side unavailable ({what}); tk runs on the interpreter")
    args.seed = args.seed if args.seed is not None else int(time.time()) % 100000
    rep = Report(args.out)
    title = {"gpu": "tk --gpu vs triton", "triton-cpu": "tk interpreter vs triton interpreter",
             "numpy": "tk interpreter vs numpy float64 reference"}[mode]
    rep.line(f"mode: {title}, seed {args.seed}, tkc {args.tkc}")
    chosen = [c for c in cases if not args.only or args.only in c.name or args.only in c.file]
    if mode != "gpu":
        for c in (c for c in chosen if c.gpu_only):
            rep.line(f"SKIP {c.file} {c.kernel} [{c.name}]: GPU only ({c.gpu_only})")
        chosen = [c for c in chosen if not c.gpu_only]
    run_all(chosen, args, mode, rep)
    return 1 if rep.summary() else 0


if __name__ == "__main__":
    sys.exit(main())
