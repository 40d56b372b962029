"""Compile time of a file with many small kernels: shows that finding the
entry kernels, binding the module's names and splitting off host code grow
linearly with the number of kernels. Not a test: it prints times.

The generated file has N @jit functions in pairs: `helper_i` (called by
`kernel_i`, so not an entry point) and `kernel_i`, plus a line of host code
per pair. Three runs of tkc per N, each a fresh process:
  entries  no -k, --emit=ptx: finds the N/2 entry kernels and stops with
           "several kernels; choose one with -k" (exit 1, expected)
  one      -k kernel_<last>, --emit=ptx: one kernel out of N to PTX
  all-ir   no -k, --emit=ir: every entry kernel specialised to IR; each
           specialisation binds the file's names afresh (time linear in the
           file), so this grows as kernels x file and is run only up to
           --all-ir-max kernels
Usage:
    python3 bench/many_kernels.py [--tkc build/tkc] [--all-ir-max 4000] [N ...]
    (default sizes 1000 4000 20000 100000)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def source(n):
    """N small @jit functions (n/2 helper/kernel pairs) with host code between."""
    out = ["import triton", "import triton.language as tl", ""]
    for i in range(n // 2):
        out += ["@triton.jit",
                f"def helper_{i}(x):",
                f"    return x + {i}",
                "",
                "@triton.jit",
                f"def kernel_{i}(p: '*fp32', n: 'i32', BLOCK: tl.constexpr):",
                "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                f"    tl.store(p + offs, helper_{i}(tl.load(p + offs, mask=offs < n)), mask=offs < n)",
                "",
                f"GRID_{i} = (1024 // 128,)",
                ""]
    return "\n".join(out) + "\n"


def run(tkc, args, expect_rc):
    t0 = time.perf_counter()
    r = subprocess.run([tkc] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=600)
    dt = time.perf_counter() - t0
    if r.returncode != expect_rc:
        sys.exit(f"tkc {' '.join(args)}: exit {r.returncode}, expected {expect_rc}\n"
                 f"{r.stderr.decode(errors='replace')[:2000]}")
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tkc", default="build/tkc")
    ap.add_argument("--all-ir-max", type=int, default=4000)
    ap.add_argument("sizes", nargs="*", type=int, default=[1000, 4000, 20000, 100000])
    a = ap.parse_args()
    print(f"{'kernels':>8} {'bytes':>10} {'entries':>9} {'one (-k)':>9} {'all-ir':>9}")
    with tempfile.TemporaryDirectory() as d:
        for n in a.sizes:
            path = os.path.join(d, f"many_{n}.tk")
            with open(path, "w") as f:
                f.write(source(n))
            common = [path, "-D", "BLOCK=128"]
            last = f"kernel_{n // 2 - 1}"
            entries = run(a.tkc, common + ["--emit=ptx", "-o", os.path.join(d, "o.ptx")],
                          1 if n > 2 else 0)
            one = run(a.tkc, common + ["-k", last, "--emit=ptx", "-o", os.path.join(d, "o.ptx")], 0)
            allir = "-"
            if n <= a.all_ir_max:
                t = run(a.tkc, common + ["--emit=ir", "-o", os.path.join(d, "o.ir")], 0)
                allir = f"{t:.2f}s"
            print(f"{n:>8} {os.path.getsize(path):>10} {entries:>8.2f}s {one:>8.2f}s "
                  f"{allir:>9}", flush=True)


if __name__ == "__main__":
    main()
