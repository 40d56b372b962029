#!/usr/bin/env python3
"""roundtrip.py: print -> read -> print of the IR is the identity, and the
PTX of read IR is the PTX of the source, for every kernel the tests know:
the corpus launches (test/corpus/corpus_cases.py), the examples, every tkc command of a
RUN line under test/ (the conformance kernels, the examples and the corpus
files among them) and the bench kernels. Each is compiled at the target its
command names and also at sm_80 and at sm_90a with --tma (where the IR holds
wgmma, TMA and warp-specialized forms).

    python3 test/ir/roundtrip.py build/tkc [-v] [--every N]

--every N checks every Nth compilation only (the sanitized build's share).

Prints one line per failure and a count; exit status 0 when every kernel
round-trips, 1 otherwise."""
import concurrent.futures
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUBST = {"%conformance": os.path.join(ROOT, "test", "conformance"),
         "%examples": os.path.join(ROOT, "examples")}
# options that do not change the kernel's IR
DROP_WITH_VALUE = {"-o", "--out-name", "--cubin-arch"}

# The examples as their C programs launch them: (file, kernel, signature, constexprs, warps)
EXAMPLES = [
    ("vector_add.tk", "vector_add", "*fp32,*fp32,*fp32,i32", {"BLOCK": 1024}, 4),
    ("softmax.tk", "softmax", "*fp32,*fp32,i32,i32,i32", {"BLOCK": 1024}, 4),
    ("softmax_persistent.tk", "softmax_persistent", "*fp32,*fp32,i32,i32,i32,i32",
     {"BLOCK": 1024, "STAGES": 2}, 4),
    ("grey.tk", "grey", "*u8,*u8,i32,i32", {"TH": 32, "TW": 32}, 4),
    ("layernorm.tk", "layernorm", "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32,i32,i32,fp32",
     {"BLOCK": 1024}, 4),
    ("matmul_autotune.tk", "matmul", "*fp16,*fp16,*fp16," + ",".join(["i32"] * 9),
     {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, 8),
]


def example_commands():
    for file, kern, sig, consts, warps in EXAMPLES:
        args = [os.path.join(ROOT, "examples", file), "-k", kern, "-s", sig,
                "--num-warps", str(warps)]
        for k, v in consts.items():
            args += ["-D", f"{k}={v}"]
        yield args


def lit_commands():
    """tkc argument lists from the RUN lines of every lit file under test/."""
    files = glob.glob(os.path.join(ROOT, "test", "**", "*.tk"), recursive=True)
    files += glob.glob(os.path.join(ROOT, "test", "**", "*.test"), recursive=True)
    for path in sorted(files):
        folder = os.path.dirname(path)
        for line in open(path, errors="replace"):
            m = re.match(r"#\s*RUN:(.*)", line)
            if not m or "tkc" not in m.group(1) or "-run" in m.group(1):
                continue
            text = m.group(1)
            for key, value in SUBST.items():
                text = text.replace(key, value)
            text = text.replace("%s", path).replace("%S", folder)
            for part in re.findall(r"(?:^|[\s;(])tkc\s+(.*?)(?=\||&&|%\}|;|>|$)", text):
                try:
                    args = shlex.split(part)
                except ValueError:
                    continue
                if "%" not in " ".join(args):
                    yield clean(args)


def clean(args):
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in DROP_WITH_VALUE:
            skip = True
        elif not a.startswith("--emit=") and a != "--tma" and a != "-":
            keep.append(a)
    return keep


def sig_entry(a):
    """A corpus argument's signature entry; a tuple's items in parentheses."""
    kind = a.__class__.__name__
    if kind == "Tuple":
        return "(" + ",".join(sig_entry(i) for i in a.items) + ("," if len(a.items) == 1 else "") + ")"
    if kind == "Null":  # a None item of a tuple
        return "None"
    return a.dtype if kind == "Scalar" else "*" + a.dtype


def corpus_commands():
    sys.path.insert(0, os.path.join(ROOT, "test", "corpus"))
    try:
        import corpus_cases
        from run_gpu import const_text
    except ImportError:
        return
    for c in corpus_cases.cases():
        sig, args = [], [os.path.join(ROOT, "test", "corpus", c.file), "-k", c.kernel,
                         "-I", os.path.join(ROOT, "test", "corpus"),
                         "--num-warps", str(c.num_warps)]
        if c.num_stages:
            args += ["--num-stages", str(c.num_stages)]
        for k, v in c.consts.items():
            args += ["-D", f"{k}={const_text(v)}"]
        for a in c.args:
            kind = a.__class__.__name__
            if kind == "Null":
                args += ["-D", f"{a.name}=None"]
            else:
                sig.append(sig_entry(a))
        yield args + ["-s", ",".join(sig)]


def bench_commands():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import compile_time
    for _, src, kern, sig, consts, warps, stages in compile_time.jobs():
        args = [src, "-k", kern, "-s", sig, "--num-warps", str(warps), "--num-stages", str(stages)]
        for k, v in consts.items():
            args += ["-D", f"{k}={v}"]
        yield args


def with_arch(args, arch):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--arch":
            skip = True
        elif not a.startswith("--arch="):
            out.append(a)
    return out + ["--arch", arch] + (["--tma"] if arch == "sm_90a" else [])


def arch_of(args):
    for i, a in enumerate(args):
        if a == "--arch" and i + 1 < len(args):
            return args[i + 1]
    return "sm_80"


def tkc(binary, args):
    return subprocess.run([binary] + args, capture_output=True)


def plan_free(ptx):
    """The PTX without its shared-memory comment, which names rings by the
    line of their load (IR text keeps no source lines)."""
    return re.sub(rb"(?m)^// tk: .*\n", b"", ptx)


def check(binary, args):
    """None when the kernel round-trips (or does not compile at all), else why."""
    with tempfile.TemporaryDirectory() as tmp:
        return check_in(binary, args, tmp)


def check_in(binary, args, tmp):
    first = tkc(binary, args + ["--emit=ir", "-o", "-"])
    if first.returncode != 0 or b"kernel @" not in first.stdout:
        return None
    path = os.path.join(tmp, "k.tkir")
    with open(path, "wb") as f:
        f.write(first.stdout)
    second = tkc(binary, [path, "--emit=ir", "-o", "-"])
    if second.returncode != 0:
        return "cannot read its IR back:\n" + second.stderr.decode(errors="replace")
    if second.stdout != first.stdout:
        return "the IR read back prints differently"
    if b"\nkernel @" in first.stdout.split(b"kernel @", 1)[-1]:
        return None  # several kernels: PTX takes one
    # the code, without line tables: IR text keeps no source positions
    src_ptx = tkc(binary, args + ["--emit=ptx", "-g0", "-o", "-"])
    opt = [a for a in args if re.fullmatch(r"-O[0-3]|--(no-)?fp-fusion", a)]
    ir_ptx = tkc(binary, [path, "--emit=ptx", "-g0", "-o", "-"] + opt)
    if src_ptx.returncode == 0 and plan_free(ir_ptx.stdout) != plan_free(src_ptx.stdout):
        return "the PTX of the IR differs from the PTX of the source:\n" + \
            ir_ptx.stderr.decode(errors="replace")
    return None


def main():
    binary = sys.argv[1]
    verbose = "-v" in sys.argv[2:]
    every = int(sys.argv[sys.argv.index("--every") + 1]) if "--every" in sys.argv[2:] else 1
    jobs, seen = [], set()
    for args in list(lit_commands()) + list(example_commands()) + list(corpus_commands()) + list(bench_commands()):
        for arch in sorted({arch_of(args), "sm_80", "sm_90a"}):
            a = with_arch(args, arch)
            if tuple(a) not in seen:
                seen.add(tuple(a))
                jobs.append(a)
    jobs = jobs[::every]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for a, why in zip(jobs, pool.map(lambda a: check(binary, a), jobs)):
            if why:
                failed += 1
                print("FAIL tkc " + " ".join(shlex.quote(x) for x in a) + "\n  " + why)
            elif verbose:
                print("ok   tkc " + " ".join(shlex.quote(x) for x in a))
    print(f"{len(jobs) - failed} of {len(jobs)} kernel compilations round-trip")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
