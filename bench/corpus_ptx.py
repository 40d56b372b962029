#!/usr/bin/env python3
"""corpus_ptx.py: the PTX tk gives for every bench/corpus case at its GPU
config, one file per case, written by tkc without a GPU; with ptxas on the
PATH (or --ptxas), each file's registers and spills. Run it with the tkc
before and after a compiler change and compare the folders (`diff -r`) to
see which corpus kernels the change reaches before timing them.

    python3 bench/corpus_ptx.py --tkc build/tkc --out /tmp/corpus-ptx [-k REGEX] [--arch sm_90a]

The signature is the one the runtime would specialise for the case's
GPU-size arguments: pointers 16-byte aligned (:16), integers divisible by
16 as :16 and equal to 1 as :1. Buffer element types come from the case's
small (interpreter) inputs, which have the same types. Each file ends
with ptxas' line, `registers N spill-stores N`, or `tkc failed` and its
message.
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
               "-g0", "-s", signature(c, S, bufs)] + defines(c, S) + ["-o", path]
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
