"""Runs test/corpus cases through the Python route on the interpreter, as a
user's script would: numpy arrays for the buffers, the kernel files
imported unchanged under `python -m tk`, each launch checked against the
case's float64 reference. Cases whose buffers numpy cannot hold as they are
(bf16) or that take host-built descriptors are left to the GPU harness.
With --torch the buffers are CPU PyTorch tensors, every case that needs no
GPU runs (bf16 and descriptors too), and each tensor is a slice of a larger
one whose elements around it must come back unchanged.

    TK_INTERPRET=1 python -m tk corpus_host.py PATTERN [SEED] [--torch]
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


def runnable(case, torch):
    kinds = {a.__class__.__name__ for a in corpus_cases.leaves(case.args)}
    return not case.gpu_only and (torch is not None or "Desc" not in kinds and
                                  all(a.dtype != "bf16" for a in case.buffers()))


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


PAD = 13  # elements of the larger tensor on each side of a buffer


def launch_torch(case, inputs, torch):
    """As launch, with each buffer a slice of a CPU tensor PAD elements
    longer on each side; an AssertionError if the launch changed those."""
    k = W.kernel_of(case)
    W.check_side(k)
    bases, tensors = {}, {}

    def buffer(a):
        t = torch.frombuffer(bytearray(inputs[a.name]), dtype=getattr(torch, DTYPES[a.dtype][1]))
        base = torch.zeros(t.numel() + 2 * PAD, dtype=t.dtype)
        base.view(torch.uint8).fill_(0x5a)
        base[PAD:PAD + t.numel()] = t
        bases[a.name], tensors[a.name] = base, base[PAD:PAD + t.numel()]
        if a.__class__.__name__ == "Desc":
            from triton.tools.tensor_descriptor import TensorDescriptor
            return TensorDescriptor.from_tensor(tensors[a.name].view(a.shape), list(a.block))
        return tensors[a.name]

    args = W.arg_values(case, buffer)
    opts = {"num_warps": case.num_warps}
    if case.num_stages:
        opts["num_stages"] = case.num_stages
    k[case.grid](**W.bind_args(k, args), **case.consts, **opts)
    for name, base in bases.items():
        raw = base.view(torch.uint8)
        edge = PAD * base.element_size()
        assert bool((raw[:edge] == 0x5a).all()) and bool((raw[raw.numel() - edge:] == 0x5a).all()), \
            f"the launch wrote outside '{name}'"
    return {a.name: tensors[a.name].contiguous().view(torch.uint8).numpy().tobytes()
            for a in case.outputs()}


def main():
    argv = [a for a in sys.argv[1:] if a != "--torch"]
    torch = __import__("torch") if "--torch" in sys.argv else None
    pattern = argv[0]
    seed = int(argv[1]) if len(argv) > 1 else 1
    passed = failed = 0
    for case in corpus_cases.cases():
        if pattern not in case.file or not runnable(case, torch):
            continue
        inputs = make_inputs(case, seed)
        try:
            out = launch(case, inputs) if torch is None else launch_torch(case, inputs, torch)
            ok, rel, details = check(case, out, reference(case, inputs), True)
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
