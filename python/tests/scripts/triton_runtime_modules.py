"""Host code importing from triton.runtime.autotuner, triton.runtime.errors and
triton.compiler.errors and triton.compiler.CompiledKernel, and timing with do_bench_cudagraph, under python -m tk."""
from triton.runtime.autotuner import Autotuner, OutOfResources
from triton.compiler.errors import CompilationError
from triton.runtime.errors import OutOfResources as O2
import triton.testing
import triton, triton.language as tl
@triton.autotune(configs=[triton.Config({"B": 16})], key=[])
@triton.jit
def k(x, B: tl.constexpr):
    tl.store(x + tl.arange(0, B), tl.arange(0, B).to(tl.float32))
assert isinstance(k, Autotuner) and O2 is OutOfResources and issubclass(CompilationError, Exception)
import numpy as np
x = np.zeros(16, np.float32)
ms = triton.testing.do_bench_cudagraph(lambda: k[(1,)](x), rep=1)
assert ms >= 0 and x[5] == 5
# a launch gives the compiled kernel, whose type host code names in
# annotations and whose resources it logs (unsloth's grouped GEMM)
from triton.compiler import CompiledKernel
ck = k[(1,)](x)
assert isinstance(ck, CompiledKernel) and ck.name == "k" and ck.n_regs >= 0 and ck.n_spills >= 0
assert ck.metadata.num_warps >= 1
print("imports2 OK")
