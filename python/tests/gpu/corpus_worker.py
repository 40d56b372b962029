"""corpus_worker.py: runs one test/corpus case with PyTorch tensors on a
GPU, under whichever `triton` is imported: real Triton when run with
python3, tk's facade when run with `python -m tk`; the Triton scripts of
test/corpus are imported unchanged. Writes the outputs as raw files and
prints `side=tk|triton` (the implementation that ran, checked against
the `triton` module in use) and `first_ms=T` (the first launch, compile
included, to the end of the kernel). run_corpus.py drives it;
two_devices.py imports run_case.

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
    mod = importlib.import_module(".".join(Path(case.file).with_suffix("").parts))
    k = getattr(mod, case.kernel)
    from triton.runtime.jit import JITFunction
    while not isinstance(k, JITFunction) and hasattr(k, "fn"):
        k = k.fn
    if side_of(k) == "tk":
        k = k._plain()  # tk's kernel under every decorator, as the loop gives Triton's
    return k


def side_of(k):
    """Which implementation the kernel object belongs to: "tk" (tk's
    JITFunction, what `python -m tk` gives), "triton" (Triton's own), or
    "unknown"."""
    mod = type(k).__module__ or ""
    if mod == "tk" or mod.startswith("tk."):
        return "tk"
    if mod == "triton" or mod.startswith("triton."):
        return "triton"
    return "unknown"


def runtime_names(k):
    """The names of the kernel's runtime (non-constexpr) parameters, from
    `params` as Triton's JITFunction has it (tk's has the same)."""
    return [p.name for p in k.params if not p.is_constexpr]


def bind_args(k, args):
    """{parameter name: value} for the case's runtime arguments, in order."""
    names = runtime_names(k)
    if len(names) != len(args):
        raise SystemExit(f"{getattr(k, '__name__', k)} has {len(names)} runtime parameters "
                         f"({', '.join(names)}), the case gives {len(args)}")
    return dict(zip(names, args))


def check_side(k):
    """The side this process runs: tk under `python -m tk` (its triton is
    tk's facade), real Triton otherwise; a mix is an error, so a run can
    never compare one implementation with itself."""
    import triton
    facade = getattr(triton, "_tk_facade", False)
    side = side_of(k)
    if side != ("tk" if facade else "triton"):
        raise SystemExit(f"kernel {k!r} is {side}'s but triton is "
                         f"{'tk' if facade else 'Triton'} ({getattr(triton, '__file__', None)})")
    return side


def arg_values(case, buffer):
    """The case's runtime arguments in order: None, scalars, a Python tuple
    of its items for a tuple argument, and buffer(a) for each buffer."""
    def value(a):
        kind = a.__class__.__name__
        if kind == "Null":
            return None
        if kind == "Scalar":
            return a.value
        if kind == "Tuple":
            return tuple(value(i) for i in a.items)
        return buffer(a)

    return [value(a) for a in case.args]


def run_case(case, inputs, device):
    """Launches the case on cuda:device; gives ({output: bytes}, first_ms)."""
    import torch
    k = kernel_of(case)
    check_side(k)
    tensors = {}

    def buffer(a):
        raw = bytearray(inputs[a.name])
        t = torch.frombuffer(raw, dtype=getattr(torch, DTYPES[a.dtype][1])).to(f"cuda:{device}")
        tensors[a.name] = t
        if a.__class__.__name__ == "Desc":  # a descriptor built on the host over the buffer
            from triton.tools.tensor_descriptor import TensorDescriptor
            return TensorDescriptor.from_tensor(t.view(a.shape), list(a.block))
        return t

    args = arg_values(case, buffer)
    import triton  # scratch for descriptors made on the device, as run_gpu.py gives it
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                 device=f"cuda:{device}"))
    opts = {"num_warps": case.num_warps}
    if case.num_stages:
        opts["num_stages"] = case.num_stages
    if case.launch_pdl:
        opts["launch_pdl"] = True
    with torch.cuda.device(device):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        k[case.grid](**bind_args(k, args), **case.consts, **opts)
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
    print(f"side={check_side(kernel_of(case))}")
    outdir.mkdir(parents=True, exist_ok=True)
    for n, data in out.items():
        (outdir / f"{n}.bin").write_bytes(data)
    print(f"first_ms={first:.3f}")


if __name__ == "__main__":
    main()
