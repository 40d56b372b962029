"""tk from Python: @tk.jit kernels of the source file they are written in,
compiled by libtk and launched as kernel[grid](*args, **constexprs) on the GPU
(PyTorch tensors, __cuda_array_interface__, DLPack) or on tk's CPU interpreter
(numpy arrays, CPU tensors; TK_INTERPRET=1 or no GPU). Argument parsing,
specialisation and the launch are in C (tk._tk); this layer is the
decorators' sugar. `python -m tk script.py` runs a Triton script unchanged."""
from . import _tk
from ._tk import CompileError, TkError
from .decorators import JITFunction, CompiledKernel, jit, autotune, heuristics, Config, cdiv, \
    next_power_of_2, constexpr_function
from . import language, testing

__version__ = _tk.version()
__all__ = ["jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2",
           "constexpr_function", "language",
           "testing", "CompileError", "TkError", "JITFunction", "CompiledKernel"]
