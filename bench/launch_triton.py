"""Triton's side of bench/launch_overhead: the host cost of launching the same
vector_add kernel (examples/vector_add.tk is valid Triton) from Python, and
first-call (compile) times of the softmax and matmul examples with an empty
Triton cache. Needs a GPU, torch and triton.

    python3 bench/launch_triton.py [examples-folder]
"""
import importlib.machinery
import importlib.util
import os
import statistics
import sys
import tempfile
import time

# An empty cache so the first calls below really compile.
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tk-bench-triton-")

import torch  # noqa: E402
import triton  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "examples")


def load(name):
    """Imports examples/<name>.tk as a Python module (Triton reads its source)."""
    path = os.path.join(EXAMPLES, name + ".tk")
    loader = importlib.machinery.SourceFileLoader(name + "_tk", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def first_call_ms(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def main():
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}, triton {triton.__version__}, torch {torch.__version__}")

    vadd = load("vector_add").vector_add
    n = 1024
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    grid = (1,)
    ms = first_call_ms(lambda: vadd[grid](x, y, out, n, BLOCK=1024, num_warps=4))
    print(f"vector_add             first call (compile) {ms:8.2f} ms")

    sm = load("softmax").softmax
    a = torch.randn(4096, 1024, device="cuda")
    o = torch.empty_like(a)
    ms = first_call_ms(lambda: sm[(4096,)](o, a, 1024, 1024, 1000, BLOCK=1024, num_warps=4))
    print(f"softmax                first call (compile) {ms:8.2f} ms")

    mm = load("matmul").matmul
    m = 4096
    A = torch.randn(m, m, device="cuda", dtype=torch.float16)
    B = torch.randn(m, m, device="cuda", dtype=torch.float16)
    C = torch.empty(m, m, device="cuda", dtype=torch.float16)
    g = (triton.cdiv(m, 128) * triton.cdiv(m, 128),)
    ms = first_call_ms(lambda: mm[g](A, B, C, m, m, m, m, 1, m, 1, m, 1, BM=128, BN=128, BK=64,
                                     GROUP=8, num_warps=8, num_stages=3))
    print(f"matmul fp16 4096^3     first call (compile) {ms:8.2f} ms")

    per_batch, batches = 100, 300
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            vadd[grid](x, y, out, n, BLOCK=1024, num_warps=4)
        times.append((time.perf_counter() - t0) / per_batch * 1e6)
        torch.cuda.synchronize()
    print(f"launch host cost (vector_add, grid 1, median of {batches} batches of {per_batch}):")
    print(f"  triton launch            {statistics.median(times):7.2f} us")


if __name__ == "__main__":
    main()
