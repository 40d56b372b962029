"""`python -m tk script.py` runs a Triton script unchanged; `import
tk.compat` resolves triton to tk's facade; missing names say so."""
import os
import subprocess
import sys

import pytest
import tk
from scripts_run import run_script

HERE = os.path.dirname(os.path.abspath(__file__))


def test_python_m_tk_runs_a_triton_script(tmp_path):
    p = run_script("triton_softmax.py", "--rows", "7")
    assert p.returncode == 0, p.stderr
    assert "softmax OK 7" in p.stdout


def test_python_m_tk_usage():
    p = subprocess.run([sys.executable, "-m", "tk"], capture_output=True, text=True)
    assert p.returncode == 2 and "usage" in p.stderr


def test_compat_in_process_and_missing_names():
    import tk.compat  # noqa: F401
    import triton
    import triton.language as tl
    assert triton.cdiv(7, 2) == 4 and tl.float16._tk_text == "tl.float16"
    props = triton.runtime.driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] >= 1
    # the names tutorials read to estimate peak bandwidth (0 on the interpreter)
    assert all(props[k] >= 0 for k in ("sm_clock_rate", "mem_clock_rate", "mem_bus_width"))
    assert triton.testing.get_dram_gbps() >= 0
    with pytest.raises(AttributeError, match="tk's triton facade has no 'no_such_thing'"):
        triton.no_such_thing
    with pytest.raises(AttributeError, match="tk's triton.language facade has no 'nope'"):
        tl.nope


def test_facade_modules_have_a_file():
    """Host code reads os.path.dirname(triton.__file__); every module of
    the facade names the file that makes it, as a module does."""
    import tk.compat  # noqa: F401
    import triton
    import triton.language as tl
    import triton.runtime
    for m in (triton, tl, triton.runtime, triton.testing):
        assert os.path.isfile(m.__file__), m.__name__
    assert os.path.isdir(os.path.dirname(triton.__file__))


def test_facade_dtype_predicates_and_fp8e4b15():
    """Host code picks kernels by dtype with Triton's predicates; fp8e4b15
    is a dtype, and its conversions of tl.extra.cuda run only in kernels."""
    import tk.compat  # noqa: F401
    import triton.language as tl
    f8 = tl.float8e4b15
    assert f8.is_fp8e4b15() and f8.is_fp8() and f8.is_floating() and not f8.is_int()
    assert not tl.float8e4nv.is_fp8e4b15() and not tl.float16.is_fp8()
    assert tl.uint8.is_uint8() and tl.int32.is_int() and not tl.int32.is_floating()
    assert f8.primitive_bitwidth == 8 and repr(f8) == "tl.float8e4b15"
    for name in ("convert_custom_float8_sm80", "convert_custom_float8_sm70"):
        with pytest.raises(RuntimeError, match="runs only inside a @jit kernel"):
            getattr(tl.extra.cuda, name)(None, f8)


def test_facade_has_triton_3_6_language_surface():
    """Every public name of Triton 3.6's language resolves in the facade, so
    a module that names one at import time (an annotation such as tl.const,
    a dtype, tl.pointer_type(...), a helper bound by host code) loads."""
    import tk.compat  # noqa: F401
    import triton
    import triton.language as tl
    surface = os.path.join(HERE, "..", "..", "test", "sema", "triton_3_6_surface.txt")
    missing = []
    for line in open(surface):
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        obj = triton
        try:
            for part in ("language." + name[3:]).split("."):
                obj = getattr(obj, part)
        except AttributeError:
            missing.append(name)
    assert not missing, missing
    assert tl.pointer_type(tl.float32)._tk_text == "tl.pointer_type(tl.float32)"
    assert triton.set_allocator(lambda size, align, stream: None) is None


def test_triton_language_core_and_standard_modules():
    """Kernel libraries import from triton.language.core and .standard
    (`core.reshape`, `_log2`, `get_int_dtype`): both resolve to tl."""
    p = run_script("triton_modules.py")
    assert p.returncode == 0, p.stderr
    assert "modules OK" in p.stdout


def test_importlib_metadata_knows_triton():
    """Host code asks importlib.metadata for Triton's version (Liger's
    compare_version); the facade answers with the language version tk
    implements, as the compiler decides conditions, whether or not Triton is
    installed: before, an installed Triton 3.9's version was given while
    `import triton` gave the facade."""
    import importlib.metadata
    import tk.compat  # noqa: F401
    assert importlib.metadata.version("triton").startswith("3.6")
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("no-such-distribution-tk")


def test_host_wrapper_of_kernel_interface():
    """A library's launch wrapper subclasses triton.KernelInterface and
    defines run(); wrapper[grid](...) reaches it with grid= and warmup=."""
    p = run_script("kernel_wrapper.py")
    assert p.returncode == 0, p.stderr
    assert "wrapper OK" in p.stdout


def test_launch_cache_walking_fn_with_isinstance():
    """A launch cache walks .fn down to triton.runtime.JITFunction, asking
    isinstance of Autotuner and Heuristics on the way (each answers for the
    kernels whose outermost decorator it is), records best_config and the
    heuristics' values, and relaunches the compiled kernel with the runtime
    arguments alone."""
    p = run_script("launch_cache.py")
    assert p.returncode == 0, p.stderr
    assert "launch cache OK" in p.stdout


def test_triton_runtime_submodules():
    """triton.runtime.autotuner, triton.runtime.errors, triton.compiler.errors
    and testing.do_bench_cudagraph, as host code imports them."""
    p = run_script("triton_runtime_modules.py")
    assert p.returncode == 0, p.stderr
    assert "imports2 OK" in p.stdout


def test_current_target_is_the_gpus_or_none():
    """driver.active.get_current_target() is the GPU's (its compute
    capability as arch), as Triton's driver gives it; with no GPU there is
    no active driver and it raises, as Triton does, so host code such as
    flash-linear-attention's device checks takes its CPU path. Before, it
    was sm_90 whatever the machine, and host code went on to CUDA calls."""
    import tk.compat  # noqa: F401
    import triton
    from tk import _tk
    target = triton.runtime.driver.active.get_current_target
    if _tk.have_gpu():
        props = _tk.device_properties(0)
        assert target().arch == 10 * props["cc_major"] + props["cc_minor"]
    elif "torch" not in sys.modules:
        with pytest.raises(RuntimeError, match="no GPU"):
            target()


def test_autotuner_built_by_a_subclass():
    """flash-linear-attention's decorator builds its kernels with
    `CachedAutotuner(fn, fn.arg_names, configs, key, reset_to_zero,
    restore_value, ...)`, a subclass of triton.runtime.Autotuner: that is
    the kernel @autotune makes (tk's tuner chooses; reset_to_zero and
    restore_value as Triton's default hooks), where it was a TypeError."""
    import numpy as np
    import tk.compat  # noqa: F401
    import triton
    import kernels as K

    class Cached(triton.runtime.Autotuner):
        def run(self, *args, **kwargs):
            raise AssertionError("not called")
    configs = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]
    k = Cached(K.scale_plain, K.scale_plain.arg_names, configs, ["n"], None, None,
               pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None, rep=None,
               use_cuda_graph=False, do_bench=None, cache_results=False)
    assert isinstance(k, triton.runtime.Autotuner)
    n = 100
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    k[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    acc_k = Cached(K.accumulate_plain, K.accumulate_plain.arg_names, configs, ["n"],
                   ["acc_ptr"], None)
    acc = np.full(n, 1e30, np.float32)
    acc_k[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, acc, n)
    np.testing.assert_array_equal(acc, x)  # zeroed once the config was chosen
    acc_k[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, acc, n)
    np.testing.assert_array_equal(acc, 2 * x)  # and not again: the key's choice stands
    k2 = Cached(K.scale_restored, K.scale_restored.arg_names, configs, ["n"], None, ["out_ptr"])
    out[:] = 0
    k2[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)


def test_torch_compiler_stack_sees_no_triton():
    """With the facade standing in for Triton, PyTorch's compiler stack
    (loaded by torch.compiler.disable, which flash-linear-attention puts on
    host functions) must not take it for Triton and import Triton's
    compiler internals: before, importing torch._dynamo failed."""
    torch = pytest.importorskip("torch")
    code = ("import tk.compat, torch, torch._dynamo, torch.utils._triton as t\n"
            "assert not t.has_triton_package()\n"
            "import triton\nassert triton.cdiv(5, 2) == 3\nprint('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, TK_INTERPRET="1"))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
    assert torch is not None


def test_an_installed_triton_stays_out():
    """Where a Triton is installed beside tk (and torch, whose compiler
    stack probes for it), the facade answers for every module and for
    importlib.metadata: no module of the installed Triton is imported,
    and its version (3.9 where this was found) is not the one given."""
    code = ("import os, sys, importlib.metadata as md, tk, tk.compat, triton, triton.language\n"
            "import triton.testing, triton.runtime.jit\n"
            "here = os.path.dirname(tk.__file__)\n"
            "try:\n"
            "    import torch, torch._dynamo\n"
            "except ImportError:\n"
            "    pass\n"
            "real = [n for n, m in list(sys.modules.items()) if n.split('.')[0] == 'triton'\n"
            "        and not (getattr(m, '__file__', None) or here).startswith(here)]\n"
            "assert not real, real\n"
            "assert md.version('triton') == '3.6.0', md.version('triton')\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, TK_INTERPRET="1"))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_knobs_version_and_host_constexpr_arithmetic():
    """triton.knobs' groups as host code reads them, a version that parses
    as three numbers, and constexpr arithmetic on the host (a grid of
    `BLOCK * 2`), each as in Triton 3.6."""
    import tk.compat  # noqa: F401
    import triton
    import triton.language as tl
    from triton import knobs
    assert knobs is triton.knobs and isinstance(knobs.runtime.interpret, bool)
    assert isinstance(knobs.cache.dir, str) and knobs.autotuning.print in (True, False)
    knobs.autotuning.print = True  # host code sets them; the value reads back
    assert knobs.autotuning.print is True
    with pytest.raises(AttributeError, match="triton.knobs.runtime facade has no 'nope'"):
        knobs.runtime.nope
    assert tuple(map(int, triton.__version__.split("."))) == (3, 6, 0)
    c = tl.constexpr(64)
    assert (c + 1).value == 65 and (2 * c).value == 128 and (c // 3).value == 21
    assert (100 - c).value == 36 and (-c).value == -64 and (c > 3).value is True


def test_dtype_on_the_host():
    """tl.dtype by name, equal to the named dtype, and the predicates and
    limits host code dispatches on, as Triton's."""
    import tk.language as tl
    assert tl.dtype("fp16") == tl.float16 and {tl.float16: 1}[tl.dtype("fp16")] == 1
    assert tl.int8.get_int_max_value() == 127 and tl.uint16.get_int_max_value() == 65535
    assert tl.int8.get_int_min_value() == -128 and tl.bfloat16.fp_mantissa_width == 7
    assert tl.int32.is_int_signed() and tl.uint8.is_int_unsigned() and tl.int1.is_bool()
    assert tl.pointer_type(tl.float16).is_ptr() and tl.float32.scalar is tl.float32
    with pytest.raises(TypeError, match="no dtype named 'fp17'"):
        tl.dtype("fp17")


@tk.jit
def _annotated(x_ptr: tk.language.pointer_type(tk.language.float16), n: tk.language.int32, m,
               B: tk.language.constexpr = 4):
    pass


def test_kernel_params_as_triton_describes_them():
    """JITFunction.params' annotation text, has_default and is_const, which
    launch wrappers read, as Triton's KernelParam gives them."""
    got = [(p.name, p.annotation, p.has_default, p.is_const) for p in _annotated.params]
    assert got == [("x_ptr", "*fp16", False, False), ("n", "i32", False, False),
                   ("m", "", False, False), ("B", "constexpr", True, False)]
