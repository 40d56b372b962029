"""import tk.compat: `import triton`, `triton.language`, `triton.testing` and
`triton.runtime` resolve to tk's facade from here on, whether or not Triton
is installed. A name the facade lacks is an AttributeError naming tk."""
import importlib.machinery
import importlib.metadata
import os
import sys
import types

from . import _tk, decorators as _jit, language, testing
from .decorators import JITFunction


def _current_device():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.current_device()
    return 0


def _current_stream(device=None):
    torch = sys.modules.get("torch")
    if torch is None or not _tk.have_gpu():
        return 0
    return torch.cuda.current_stream(device).cuda_stream


def _active_torch_device():
    import torch
    if _tk.have_gpu() and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _module(name, doc, **names):
    m = types.ModuleType(name, doc)
    m.__dict__.update(names)
    m.__spec__ = importlib.machinery.ModuleSpec(name, None)  # importlib.util.find_spec works
    # the file that makes it, as a module's __file__ is: host code reads
    # os.path.dirname(triton.__file__) to find files beside Triton, and
    # gets a path (where those files are not) instead of an AttributeError
    m.__file__ = __file__

    def missing(attr):
        raise AttributeError(f"tk's {name} facade has no '{attr}'")
    m.__getattr__ = missing
    return m


def _current_target():
    """The GPU's target, as Triton's active driver gives it (under the
    interpreter too); with no GPU there is no active driver, and Triton
    raises: host code that asks then takes its CPU path."""
    if _tk.have_gpu():
        p = _tk.device_properties(_current_device())
        cc = (p["cc_major"], p["cc_minor"])
    else:  # interpreting: a GPU is still the target if there is one
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_available():
            raise RuntimeError("tk: no GPU here, so no active driver has a target "
                               "(launches run on the interpreter)")
        cc = torch.cuda.get_device_capability()
    return types.SimpleNamespace(backend="cuda", arch=10 * cc[0] + cc[1], warp_size=32)


utils = _module("triton.runtime.driver.active.utils", "device queries",
                get_device_properties=lambda device=0: _tk.device_properties(device))
active = _module("triton.runtime.driver.active", "the active driver", utils=utils,
                 get_current_device=_current_device, get_current_stream=_current_stream,
                 get_current_target=_current_target,
                 get_device_interface=lambda: sys.modules["torch"].cuda,
                 get_active_torch_device=_active_torch_device)
driver = _module("triton.runtime.driver", "drivers", active=active)
runtime = _module("triton.runtime", "runtime", driver=driver, JITFunction=_jit.JITKind,
                  KernelInterface=_jit.KernelInterface,
                  Autotuner=_jit.Autotuner, Heuristics=_jit.Heuristics, Config=_jit.Config,
                  OutOfResources=_tk.TkError)
runtime.jit = _module("triton.runtime.jit", "jit", JITFunction=_jit.JITKind, jit=_jit.jit,
                      KernelInterface=_jit.KernelInterface,
                      constexpr_function=_jit.constexpr_function,
                      ConstexprFunction=_jit.ConstexprFunction)

runtime.autotuner = _module("triton.runtime.autotuner", "autotuning", Autotuner=_jit.Autotuner,
                            Heuristics=_jit.Heuristics, Config=_jit.Config,
                            autotune=_jit.autotune, heuristics=_jit.heuristics,
                            OutOfResources=_tk.TkError)
runtime.errors = _module("triton.runtime.errors", "launch errors", OutOfResources=_tk.TkError)
compiler_errors = _module("triton.compiler.errors", "compile errors",
                          CompilationError=_tk.CompileError)
compiler = _module("triton.compiler", "the compiler's errors", errors=compiler_errors,
                   CompilationError=_tk.CompileError, CompiledKernel=_jit.CompiledKernel)


def _set_allocator(allocator):
    """Triton's hook for the global scratch that tensor descriptors made on
    the device need; tk's device descriptors are masked block accesses that
    take no scratch, so the allocator is accepted and never called."""
    if not callable(allocator):
        raise TypeError("tk: set_allocator needs a callable (size, alignment, stream)")


def _env_on(*names):
    return any(os.environ.get(n, "0") not in ("", "0") for n in names)


class _Knobs:
    """One of triton.knobs' groups: the settings host code reads, from the
    environment tk reads as Triton does; a value set here is kept for the
    host code that reads it back and changes nothing in tk."""

    def __init__(self, group, **values):
        object.__setattr__(self, "_group", group)
        self.__dict__.update(values)

    def __getattr__(self, attr):
        raise AttributeError(f"tk's triton.knobs.{self._group} facade has no '{attr}'")


knobs = _module(
    "triton.knobs", "the settings Triton's host code reads",
    runtime=_Knobs("runtime", interpret=_env_on("TRITON_INTERPRET", "TK_INTERPRET"),
                   debug=_env_on("TRITON_DEBUG", "TK_DEBUG"),
                   override_arch=os.environ.get("TRITON_OVERRIDE_ARCH")),
    autotuning=_Knobs("autotuning", print=_env_on("TRITON_PRINT_AUTOTUNING"),
                      cache=_env_on("TRITON_CACHE_AUTOTUNING")),
    cache=_Knobs("cache", dir=os.environ.get("TK_CACHE_DIR")
                 or os.path.join(os.path.expanduser("~"), ".cache", "tk")),
    compilation=_Knobs("compilation", disable_line_info=_env_on("TK_DISABLE_LINE_INFO",
                                                                  "TRITON_DISABLE_LINE_INFO"),
                       always_compile=False),
    language=_Knobs("language", default_fp_fusion=os.environ.get(
        "TK_DEFAULT_FP_FUSION", os.environ.get("TRITON_DEFAULT_FP_FUSION", "1")) != "0"))

triton = _module("triton", "tk's facade for triton", knobs=knobs, _tk_facade=True, set_allocator=_set_allocator, jit=_jit.jit, autotune=_jit.autotune,
                 heuristics=_jit.heuristics, Config=_jit.Config, cdiv=_jit.cdiv,
                 constexpr_function=_jit.constexpr_function,
                 next_power_of_2=_jit.next_power_of_2, language=language, testing=testing,
                 runtime=runtime, CompilationError=_tk.CompileError,
                 OutOfResources=_tk.TkError, JITFunction=_jit.JITKind,
                 KernelInterface=_jit.KernelInterface, __version__="3.6.0",
                 __path__=[])

from .tools import tensor_descriptor as _tensor_descriptor  # noqa: E402

tools = _module("triton.tools", "host-side helpers", tensor_descriptor=_tensor_descriptor)
triton.tools = tools
triton.compiler = compiler

MODULES = {"triton": triton, "triton.tools": tools, "triton.knobs": knobs,
           "triton.tools.tensor_descriptor": _tensor_descriptor, "triton.language": language, "triton.testing": testing,
           "triton.runtime": runtime, "triton.runtime.driver": driver,
           "triton.runtime.jit": runtime.jit, "triton.runtime.autotuner": runtime.autotuner,
           "triton.runtime.errors": runtime.errors, "triton.compiler": compiler,
           "triton.compiler.errors": compiler_errors, "triton.language.math": language.math,
           "triton.language.core": language, "triton.language.standard": language,
           "triton.language.extra": language.extra,
           "triton.language.extra.libdevice": language.libdevice,
           "triton.language.extra.cuda": language.extra.cuda,
           "triton.language.extra.cuda.libdevice": language.libdevice}


class _TritonDistribution(importlib.metadata.Distribution):
    """The installed-package record of the Triton language version tk
    implements, for host code that asks importlib.metadata (version
    helpers such as compare_version("triton", operator.ge, "3.0.0")). It
    stands before an installed Triton's record: `import triton` gives the
    facade, and host code that picks a path by version picks the facade's."""

    def read_text(self, filename):
        if filename == "METADATA":
            return "Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n"
        return None

    def locate_file(self, path):
        return path


class _TritonFinder:
    """Finds _TritonDistribution for importlib.metadata, first of the
    finders; imports it leaves to the others."""

    @staticmethod
    def find_spec(*args, **kwargs):
        return None

    @staticmethod
    def find_distributions(context=None):
        name = getattr(context, "name", None)
        if name is None or name.lower() == "triton":
            yield _TritonDistribution()


# PyTorch's compiler stack, loaded whenever its dynamo is (by
# torch.compiler.disable, which libraries put on host functions), probes
# for Triton and then imports Triton's compiler internals, which the
# facade does not stand in for: these modules of it see no Triton.
_PROBE, _COMPAT = "torch.utils._triton", "torch._inductor.runtime.triton_compat"


def _without_triton(run, *args):
    """run(*args) with `import triton` raising ImportError."""
    saved = sys.modules.get("triton")
    sys.modules["triton"] = None
    try:
        return run(*args)
    finally:
        sys.modules["triton"] = saved


def _no_triton_for_torch(module):
    """PyTorch's has_triton_package() caches its first answer: asked here,
    it says no Triton."""
    probe = getattr(module, "has_triton_package", None)
    if probe is not None:
        _without_triton(probe)


class _TorchFinder:
    """Loads PyTorch's Triton probe and its Triton compatibility module
    as if no Triton were installed."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in (_PROBE, _COMPAT):
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _TorchFinder) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is None or spec.loader is None:
                continue
            run = spec.loader.exec_module
            if name == _PROBE:
                def exec_module(module, run=run):
                    run(module)
                    _no_triton_for_torch(module)
            else:
                def exec_module(module, run=run):
                    _without_triton(run, module)
            spec.loader.exec_module = exec_module
            return spec
        return None


def install():
    """Puts the facade in sys.modules under Triton's names, and its triton
    distribution first in importlib.metadata."""
    if _PROBE in sys.modules:
        _no_triton_for_torch(sys.modules[_PROBE])
    if not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
    for name in ("triton.language", "triton.testing"):
        MODULES[name].__spec__ = importlib.machinery.ModuleSpec(name, None)
    sys.modules.update(MODULES)
    if not any(isinstance(f, _TritonFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TritonFinder())


install()

# Triton's ragged descriptors: a module of kernels' device functions, made
# with the facade in place (its `import triton` is the facade's)
from .tools import ragged_tma as _ragged_tma  # noqa: E402

tools.ragged_tma = _ragged_tma
MODULES["triton.tools.ragged_tma"] = sys.modules["triton.tools.ragged_tma"] = _ragged_tma
