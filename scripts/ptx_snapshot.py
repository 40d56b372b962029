#!/usr/bin/env python3
"""Writes the PTX that a tkc gives for every tkc command of the RUN lines of
test/codegen/*.tk (made --emit=ptx to stdout), for the examples, and for the
bench kernels at sm_80 and sm_90a, one file per command, into OUTDIR. Run it
with the tkc before and after a change that must not change code generation
and compare the folders with `diff -r`.

    python3 scripts/ptx_snapshot.py build/tkc /tmp/ptx-before
"""
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def run_line_commands(path):
    """The tkc argument lists of a lit file's RUN lines."""
    for line in open(path):
        m = re.match(r"#\s*RUN:(.*)", line)
        if not m or "tkc" not in m.group(1):
            continue
        text = m.group(1).replace("%tkc_bin", "tkc")
        for key, folder in (("%conformance", "test/conformance"), ("%examples", "examples")):
            text = text.replace(key, os.path.join(ROOT, folder))
        text = text.replace("%s", path).replace("%t", "/tmp/ptx_snapshot_t")
        for part in re.findall(r"\btkc\s+(.*?)(?=\||&&|%\}|$)", text):
            args = shlex.split(part)
            keep, skip = [], False
            for a in args:
                if skip:
                    skip = False
                elif a == "-o":
                    skip = True
                elif not a.startswith("--emit=") and a not in (">", "2>&1"):
                    keep.append(a)
            yield keep + ["--emit=ptx", "-o", "-"]


def jobs():
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "codegen", "*.tk"))):
        for i, args in enumerate(run_line_commands(path)):
            yield f"codegen_{os.path.basename(path)}_{i}", args
    sys.path.insert(0, os.path.join(ROOT, "test", "ir"))
    import roundtrip
    for args in roundtrip.example_commands():
        for arch in ("sm_80", "sm_90a"):
            yield f"example_{os.path.basename(args[0])}_{arch}", \
                roundtrip.with_arch(args, arch) + ["--emit=ptx", "-o", "-"]
    import compile_time
    for label, src, kern, sig, consts, warps, stages in compile_time.jobs():
        for arch in ("sm_80", "sm_90a"):
            args = [src, "-k", kern, "-s", sig, "--arch", arch, "--num-warps", str(warps),
                    "--num-stages", str(stages), "--emit=ptx", "-o", "-"]
            args += ["--tma"] if arch == "sm_90a" else []
            for k, v in consts.items():
                args += ["-D", f"{k}={v}"]
            yield f"bench_{label.replace(' ', '_')}_{arch}", args


def main():
    tkc, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    n = 0
    for name, args in jobs():
        r = subprocess.run([tkc] + args, capture_output=True)
        with open(os.path.join(out, name), "wb") as f:
            f.write(r.stdout + b"\n--- rc %d\n" % r.returncode + r.stderr)
        n += 1
    print(f"{n} PTX outputs in {out}")


if __name__ == "__main__":
    main()
