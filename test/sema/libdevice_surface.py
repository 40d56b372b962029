#!/usr/bin/env python3
"""libdevice_surface.py TKC LIST: every typed signature of LIST (NAME
DTYPES -> RESULT, Triton 3.6's libdevice) compiles in tk: a kernel loads
blocks of those dtypes, calls libdevice.NAME on them and asserts at compile
time that the result has the listed dtype. Prints one line per failure and
a count."""
import os
import subprocess
import sys
import tempfile

SIG = {"int32": "i32", "int64": "i64", "uint32": "u32", "uint64": "u64",
       "float32": "fp32", "float64": "fp64"}


def kernel(name, args, ret):
    ps = ", ".join(f"p{i}" for i in range(len(args)))
    loads = "".join(f"    a{i} = tl.load(p{i} + tl.arange(0, 16))\n" for i in range(len(args)))
    call = ", ".join(f"a{i}" for i in range(len(args)))
    return ("import triton\nimport triton.language as tl\n"
            "from triton.language.extra.cuda import libdevice\n\n@triton.jit\n"
            f"def k({ps}):\n{loads}    y = libdevice.{name}({call})\n"
            f"    tl.static_assert(y.dtype == tl.{ret})\n")


def main():
    tkc, listing = sys.argv[1:3]
    bad, n = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.py")
        for line in open(listing):
            if not line.strip() or line.startswith("#"):
                continue
            name, args, _, ret = line.split()
            args = args.split(",")
            n += 1
            with open(path, "w") as f:
                f.write(kernel(name, args, ret))
            sig = ",".join("*" + SIG[a] for a in args)
            r = subprocess.run([tkc, "--emit=ir", "-k", "k", "-s", sig, path],
                               capture_output=True, text=True)
            if r.returncode:
                bad.append(f"{line.strip()}: " + (r.stderr.strip().splitlines() or ["?"])[0])
    for b in bad:
        print("libdevice_surface: " + b)
    print(f"libdevice_surface: {n} signatures, {len(bad)} refused")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
