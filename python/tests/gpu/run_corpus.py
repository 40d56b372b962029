#!/usr/bin/env python3
"""run_corpus.py: every test/corpus case through `python -m tk` (tk's Python
package, torch tensors on the GPU) against real Triton, each side in a
child process with a fresh compile cache; compares the outputs as
test/corpus/run_gpu.py does and reports each side's first-call time.

    PYTHONPATH=PACK python3 python/tests/gpu/run_corpus.py [-k REGEX] [--device N] [--out FILE]
        [--split I/N]

Exit status: 0 all matched (and tk's first call was at most 10% of
Triton's for every kernel, unless --no-time-check), 1 otherwise, 77 when
torch, Triton or a GPU is missing."""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "test" / "corpus"))


def side(want, cmd, case, indir, outdir, env, timeout, device):
    """Runs corpus_worker.py for one side; its `side=` line must name the
    implementation wanted (tk through `python -m tk`, else Triton)."""
    p = subprocess.run(cmd + [str(HERE / "corpus_worker.py"), case.name, str(indir), str(outdir),
                              "--device", str(device)],
                       capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip()[-2000:])
    ran = re.search(r"^side=(\w+)$", p.stdout, re.M)
    if not ran or ran.group(1) != want:
        raise RuntimeError(f"the {want} side ran {ran.group(1) if ran else 'an unknown side'}")
    m = re.search(r"first_ms=([0-9.]+)", p.stdout)
    out = {a.name: (outdir / f"{a.name}.bin").read_bytes() for a in case.outputs()}
    if env.get("TK_VERBOSE") and want == "tk":  # where the first call's time went
        sys.stderr.write("".join(f"    [{case.name}] {ln}\n" for ln in p.stderr.splitlines()))
    return out, float(m.group(1)) if m else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="", help="a regex over the case's name and file")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--no-time-check", action="store_true")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once")
    ap.add_argument("--split", default="0/1",
                    help="I/N: run every N-th case from the I-th (to spread a run over GPUs)")
    a = ap.parse_args()
    try:
        import torch
        import triton  # noqa: F401
        if torch.cuda.device_count() <= a.device:
            raise ImportError(f"no cuda:{a.device}")
    except ImportError as e:
        print(f"skipped: {e}")
        return 77
    import corpus_cases
    from run_gpu import make_inputs, check, reference
    log = open(a.out, "w") if a.out else None

    def say(line):
        print(line, flush=True)
        if log:
            log.write(line + "\n")
            log.flush()
    part, parts = (int(x) for x in a.split.split("/"))
    cases = [c for i, c in enumerate(corpus_cases.cases())
             if i % parts == part and (not a.k or re.search(a.k, c.name) or re.search(a.k, c.file))]

    def run_one(case):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            inputs = make_inputs(case, 0)
            (tmp / "in").mkdir()
            for n, data in inputs.items():
                (tmp / "in" / f"{n}.bin").write_bytes(data)
            # fresh caches on both sides, the driver's JIT cache included
            env = dict(os.environ, TK_CACHE_DIR=str(tmp / "tkcache"),
                       TRITON_CACHE_DIR=str(tmp / "tritoncache"), CUDA_CACHE_DISABLE="1")
            env.pop("TK_INTERPRET", None)
            try:
                got, k_ms = side("tk", [sys.executable, "-m", "tk"], case, tmp / "in",
                                 tmp / "tk", env, a.timeout, a.device)
                if case.beyond_triton:  # Triton cannot compile it: the reference judges
                    t_ms = 0
                    ok, worst, details = check(case, got, reference(case, inputs), True)
                else:
                    want, t_ms = side("triton", [sys.executable], case, tmp / "in",
                                      tmp / "triton", env, a.timeout, a.device)
                    ok, worst, details = check(case, got, want, False)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                ok, worst, details, t_ms, k_ms = False, float("nan"), [str(e)], 0, 0
        return ok, worst, details, t_ms, k_ms

    fails, slow, first = 0, 0, {}
    # cases run side by side in child processes; their lines come in order
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        for case, (ok, worst, details, t_ms, k_ms) in zip(cases, pool.map(run_one, cases)):
            key = (case.file, case.kernel)
            if key not in first and t_ms > 0:
                first[key] = (k_ms, t_ms)
            fails += not ok
            say(f"{'PASS' if ok else 'FAIL'} {case.file} {case.kernel} {worst:.2e} [{case.name}] "
                f"first call tk {k_ms:.1f} ms, triton {t_ms:.1f} ms")
            for d in details if not ok else []:
                say("    " + d.replace("\n", "\n    "))
    for (f, k), (k_ms, t_ms) in sorted(first.items()):
        ratio = k_ms / t_ms if t_ms else float("inf")
        slow += ratio > 0.10
        say(f"first call {f} {k}: tk {k_ms:.1f} ms / triton {t_ms:.1f} ms = {ratio:.1%}")
    say(f"{len(cases) - fails} passed, {fails} failed; "
        f"{slow} kernels with a first call over 10% of Triton's")
    return 1 if fails or (slow and not a.no_time_check) else 0


if __name__ == "__main__":
    sys.exit(main())
