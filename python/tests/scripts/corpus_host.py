"""Runs test/corpus cases through the Python route on the interpreter, as a
user's script would: numpy arrays for the buffers, the kernel files
imported unchanged under `python -m tk`, each launch checked against the
case's float64 reference. Cases whose buffers numpy cannot hold as they are
(bf16) or that take host-built descriptors are left to the GPU harness.

    TK_INTERPRET=1 python -m tk corpus_host.py PATTERN [SEED]
"""
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "test" / "corpus"))
sys.path.insert(0, str(REPO / "python" / "tests" / "gpu"))

import corpus_cases  # noqa: E402
import corpus_worker as W  # noqa: E402
from run_gpu import DTYPES, check, make_inputs, reference  # noqa: E402


def runnable(case):
    kinds = {a.__class__.__name__ for a in corpus_cases.leaves(case.args)}
    return not case.gpu_only and "Desc" not in kinds and \
        all(a.dtype != "bf16" for a in case.buffers())


def launch(case, inputs):
    """The case's outputs as bytes, after one launch with numpy buffers."""
    k = W.kernel_of(case)
    W.check_side(k)
    arrays = {}

    def buffer(a):
        arrays[a.name] = np.frombuffer(bytearray(inputs[a.name]), dtype=DTYPES[a.dtype][0])
        return arrays[a.name]

    args = W.arg_values(case, buffer)
    opts = {"num_warps": case.num_warps}
    if case.num_stages:
        opts["num_stages"] = case.num_stages
    k[case.grid](**W.bind_args(k, args), **case.consts, **opts)
    return {a.name: arrays[a.name].tobytes() for a in case.outputs()}


def main():
    pattern = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    passed = failed = 0
    for case in corpus_cases.cases():
        if pattern not in case.file or not runnable(case):
            continue
        inputs = make_inputs(case, seed)
        try:
            ok, rel, details = check(case, launch(case, inputs), reference(case, inputs), True)
        except Exception as e:  # a launch that raises is a failure of this case alone
            ok, rel, details = False, float("inf"), [f"{type(e).__name__}: {e}"]
        print(f"{'PASS' if ok else 'FAIL'} {case.file} {case.kernel} {rel:.2e} [{case.name}]")
        for d in details:
            print(f"    {d}")
        passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
