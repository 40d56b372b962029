#!/usr/bin/env python3
"""corpus_ptx.py: the PTX tk gives for every bench/corpus case at its GPU
config, one file per case, written by tkc without a GPU; with ptxas on the
PATH (or --ptxas), each file's registers and spills. Run it with the tkc
before and after a compiler change and compare the folders (`diff -r`) to
see which corpus kernels the change reaches before timing them.

    python3 bench/corpus_ptx.py --tkc build/tkc --out /tmp/corpus-ptx [-k REGEX] [--arch sm_90a]
    python3 bench/corpus_ptx.py ... --triton      # also Triton's, where Triton is installed

The signature is the one the runtime would specialise for the case's
GPU-size arguments: pointers 16-byte aligned (:16), integers divisible by
16 as :16 and equal to 1 as :1. Buffer element types come from the case's
small (interpreter) inputs, which have the same types. Each file ends
with ptxas' line, `registers N spill-stores N`, or `tkc failed` and its
message.

With --triton, Triton (3.6, imported here; no GPU needed) compiles the same
source for the same target and config, as its launcher would specialise
it (pointers and multiples of 16 marked divisible by 16, integers equal to
1 as constants): NAME.triton.ptx, .ttgir and .cubin beside tk's, and a
second line per case with Triton's shared memory and ptxas' registers for
its PTX. Side by side they show where two compiles of one kernel differ,
down to the SASS (`nvdisasm -c NAME.triton.cubin`) before any timing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
sys.path.insert(0, HERE)
sys.path.insert(0, CORPUS)
from corpus import load_cases  # noqa: E402
from registry import I32, I64, F32, Dtype  # noqa: E402

PTR = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f8e4": "fp8e4nv", "f64": "fp64",
       "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u8": "u8", "u16": "u16",
       "u32": "u32", "u64": "u64"}


def spec(v):
    return ":1" if v == 1 else ":16" if v % 16 == 0 else ""


def signature(case, S, bufs):
    parts = []
    for a in case.args(S, bufs):
        if isinstance(a, str):
            parts.append(f"*{PTR[bufs[a].dt]}:16")
        elif isinstance(a, I32):
            parts.append("i32" + spec(a.v))
        elif isinstance(a, I64):
            parts.append("i64" + spec(a.v))
        elif isinstance(a, F32):
            parts.append("fp32")
        else:
            raise TypeError(f"{case.name}: argument {a!r}")
    return ",".join(parts)


def defines(case, S):
    out = []
    for k, v in case.consts(S).items():
        text = v.text if isinstance(v, Dtype) else repr(v) if isinstance(v, str) else str(v)
        out += ["-D", f"{k}={text}"]
    return out


def triton_compile(case, S, bufs, arch, out):
    """Triton's compile of the case (see the module's docstring): its
    shared memory in bytes; the files go to out.*."""
    import importlib
    import types
    if "torch" not in sys.modules:  # the modules' host code names torch dtypes
        try:
            import torch  # noqa: F401
        except ImportError:
            stub = types.ModuleType("torch")
            stub.float16 = stub.bfloat16 = stub.float32 = None
            sys.modules["torch"] = stub
    os.environ.setdefault("TRITON_BACKENDS_IN_TREE", "1")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction
    fn = getattr(importlib.import_module(case.module[:-3]), case.kernel)
    while not isinstance(fn, JITFunction):
        fn = fn.fn
    args, consts_in = iter(case.args(S, bufs)), case.consts(S)
    sig, consts, div = {}, {}, []
    for i, p in enumerate(fn.params):
        if p.is_constexpr:
            v = consts_in[p.name]
            consts[p.name] = getattr(triton.language, v.text.split(".")[-1]) \
                if isinstance(v, Dtype) else v
            sig[p.name] = "constexpr"
            continue
        a = next(args)
        if isinstance(a, str):
            sig[p.name] = "*" + PTR[bufs[a].dt]
            div.append(i)
        elif isinstance(a, (I32, I64)) and a.v == 1:
            sig[p.name], consts[p.name] = "constexpr", 1
        elif isinstance(a, (I32, I64)):
            sig[p.name] = "i32" if isinstance(a, I32) else "i64"
            if a.v % 16 == 0:
                div.append(i)
        else:
            sig[p.name] = "fp32"
    src = ASTSource(fn, sig, constexprs=consts,
                    attrs={(i,): [["tt.divisibility", 16]] for i in div})
    cc = int(re.sub(r"\D", "", arch))
    k = triton.compile(src, target=GPUTarget("cuda", cc, 32),
                       options={"num_warps": case.warps_for(S), "num_stages": case.stages_for(S)})
    for ext in ("ptx", "ttgir", "llir"):
        with open(f"{out}.{ext}", "w") as f:
            f.write(k.asm[ext])
    with open(f"{out}.cubin", "wb") as f:
        f.write(k.asm["cubin"])
    return k.metadata.shared


def ptxas_line(ptxas, ptx, arch):
    if not ptxas:
        return ""
    r = subprocess.run([ptxas, "-v", f"-arch={arch}", ptx, "-o", os.devnull],
                       capture_output=True, text=True)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    if r.returncode or not regs:
        return "ptxas failed: " + r.stderr.strip().splitlines()[-1] if r.stderr else "ptxas failed"
    return f"registers {regs.group(1)} spill-stores {spill.group(1) if spill else 0}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tkc", default="build/tkc")
    ap.add_argument("--out", required=True)
    ap.add_argument("-k", dest="filter", help="regex over case names")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--triton", action="store_true", help="Triton's compile of each case too")
    ap.add_argument("--show", action="store_true", help="print each case's tkc command")
    ap.add_argument("--tma", action="store_true",
                    help="tk's tiles through TMA where it can, as its runtime compiles for sm_90a")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or
                    ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas")
                     else None))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for c in load_cases():
        if args.filter and not re.search(args.filter, c.name):
            continue
        S = c.size("gpu")
        bufs = c.make(np.random.default_rng(0), c.size("interp"))
        path = os.path.join(args.out, c.name + ".ptx")
        cmd = [args.tkc, os.path.join(CORPUS, c.module), "-k", c.kernel, "--arch", args.arch,
               "--num-warps", str(c.warps_for(S)), "--num-stages", str(c.stages_for(S)),
               "-g0", "-s", signature(c, S, bufs)] + defines(c, S) + ["-o", path] + \
            (["--tma"] if args.tma else [])
        if args.show:
            print(" ".join(f"'{a}'" if any(ch in a for ch in " (),*") else a for a in cmd))
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            failed += 1
            with open(path, "w") as f:
                f.write("tkc failed\n" + r.stderr)
            line = "tkc failed"
        else:
            line = ptxas_line(args.ptxas, path, args.arch)
            with open(path, "a") as f:
                f.write(f"// {line}\n")
        print(f"{c.name:32s} {line}", flush=True)
        if args.triton:
            try:
                tp = os.path.join(args.out, c.name + ".triton")
                shared = triton_compile(c, S, bufs, args.arch, tp)
                print(f"{'':32s} triton: shared {shared} {ptxas_line(args.ptxas, tp + '.ptx', args.arch)}",
                      flush=True)
            except Exception as e:  # a case Triton cannot compile here is reported, not fatal
                print(f"{'':32s} triton failed: {type(e).__name__}: {str(e).splitlines()[0][:160]}",
                      flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
