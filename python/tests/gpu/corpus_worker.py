"""corpus_worker.py: runs one test/corpus case with PyTorch tensors on a
GPU, under whichever `triton` is imported: real Triton when run with
python3, tk's facade when run with `python -m tk`; the Triton scripts of
test/corpus are imported unchanged. Writes the outputs as raw files and
prints `first_ms=T` (the first launch, compile included, to the end of the
kernel). run_corpus.py drives it; two_devices.py imports run_case.

    python3 -m tk corpus_worker.py CASE INDIR OUTDIR [--device N]
"""
import importlib
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "test" / "corpus"
sys.path.insert(0, str(CORPUS))

import corpus_cases  # noqa: E402
from run_gpu import DTYPES  # noqa: E402


def find_case(name):
    for c in corpus_cases.cases():
        if c.name == name:
            return c
    raise SystemExit(f"no corpus case {name}")


def kernel_of(case):
    """The case's kernel with autotune and heuristics taken off (the case
    names every constexpr), as run_gpu.py does for Triton."""
    import triton
    mod = importlib.import_module(".".join(Path(case.file).with_suffix("").parts))
    k = getattr(mod, case.kernel)
    from triton.runtime.jit import JITFunction
    if "tk" in getattr(triton, "__version__", ""):
        while not isinstance(k, JITFunction) and hasattr(k, "fn"):
            k = k.fn
        k._set_heuristics([])
        return k
    while not isinstance(k, JITFunction) and hasattr(k, "fn"):
        k = k.fn
    return k


def runtime_names(k):
    if hasattr(k, "constexprs"):  # tk
        return [n for n, c in zip(k.arg_names, k.constexprs) if not c]
    return [p.name for p in k.params if not p.is_constexpr]


def run_case(case, inputs, device):
    """Launches the case on cuda:device; gives ({output: bytes}, first_ms)."""
    import torch
    k = kernel_of(case)
    tensors, args = {}, []
    for a in case.args:
        kind = a.__class__.__name__
        if kind == "Null":
            args.append(None)
        elif kind == "Scalar":
            args.append(a.value)
        else:
            raw = bytearray(inputs[a.name])
            t = torch.frombuffer(raw, dtype=getattr(torch, DTYPES[a.dtype][1])).to(f"cuda:{device}")
            tensors[a.name] = t
            args.append(t)
    opts = {"num_warps": case.num_warps}
    if case.num_stages:
        opts["num_stages"] = case.num_stages
    with torch.cuda.device(device):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        k[case.grid](**dict(zip(runtime_names(k), args)), **case.consts, **opts)
        torch.cuda.synchronize()
        first = (time.perf_counter() - t0) * 1e3
    out = {a.name: tensors[a.name].cpu().contiguous().view(torch.uint8).numpy().tobytes()
           for a in case.outputs()}
    return out, first


def main():
    name, indir, outdir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    device = int(sys.argv[sys.argv.index("--device") + 1]) if "--device" in sys.argv else 0
    case = find_case(name)
    inputs = {a.name: (indir / f"{a.name}.bin").read_bytes() for a in case.buffers()}
    out, first = run_case(case, inputs, device)
    outdir.mkdir(parents=True, exist_ok=True)
    for n, data in out.items():
        (outdir / f"{n}.bin").write_bytes(data)
    print(f"first_ms={first:.3f}")


if __name__ == "__main__":
    main()
