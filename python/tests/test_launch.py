"""Launches on the interpreter with numpy arrays: grids as tuples and
callables, constexprs by position, keyword and default, scalars with
Triton's specialisation, None, strided views, read-only inputs."""
import importlib.util

import numpy as np
import pytest

import tk
import kernels as K


def vectors(n, dtype=np.float32):
    rng = np.random.default_rng(n)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype), \
        np.full(n, np.nan, dtype)


@pytest.mark.parametrize("n", [1, 16, 100, 1000])
def test_add_tuple_grid(n):
    x, y, out = vectors(n)
    K.add[(tk.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)


def test_add_callable_grid_and_positional_constexpr():
    n = 300
    x, y, out = vectors(n)
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (tk.cdiv(meta["n"], meta["BLOCK"]),)
    K.add[grid](x, y, out, n, 64)
    np.testing.assert_array_equal(out, x + y)
    assert seen[0]["BLOCK"] == 64 and seen[0]["n"] == n


def test_grid_as_int_and_keywords_by_name():
    n = 64
    x, y, out = vectors(n)
    K.add[1](x_ptr=x, y_ptr=y, out_ptr=out, n=n, BLOCK=64, num_warps=2)
    np.testing.assert_array_equal(out, x + y)


def test_defaults_bool_constexpr_float_scalar_and_none():
    n = 100
    x, b, out = vectors(n)
    K.axpb[(2,)](x, out, n, 3.0, b)
    np.testing.assert_allclose(out, 3 * x + b, rtol=1e-6)
    K.axpb[(2,)](x, out, n, 0.5, None, SQUARE=True)
    np.testing.assert_allclose(out, 0.5 * x * x, rtol=1e-6)


def test_strided_view_and_readonly_input():
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    v = a[:, ::2]
    a.setflags(write=False)
    s = np.zeros(6, np.float32)
    K.row_sum[(6,)](v, s, 6, 5, v.strides[0] // 4, v.strides[1] // 4, BLOCK=8)
    np.testing.assert_array_equal(s, v.sum(axis=1))


def test_2d_grid_int32_and_scalar_written_back():
    out = np.zeros((32, 32), np.int32)
    K.fill2d[(2, 2)](out, 7, 32, BM=16, BN=16)
    assert (out == 7).all()


def test_dtype_constexpr_and_fp16_output():
    n = 50
    x = np.linspace(-2, 2, n, dtype=np.float32)
    h = np.zeros(n, np.float16)
    K.cast_to[(1,)](x, h, n, tk.language.float16, BLOCK=64)
    np.testing.assert_array_equal(h, x.astype(np.float16))


def test_empty_grid_launches_nothing():
    x, y, out = vectors(8)
    out[:] = 5
    K.add[(0,)](x, y, out, 8, BLOCK=8)
    assert (out == 5).all()


def test_many_launches_hit_the_cache():
    x, y, out = vectors(32)
    for i in range(50):
        K.add[(1,)](x, y, out, 32, BLOCK=32)
    np.testing.assert_array_equal(out, x + y)


class Dlpacked:
    """A host buffer offered only through __dlpack__ (numpy's own capsule)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.skipif(not hasattr(np.ndarray, "__dlpack__"), reason="numpy without DLPack")
def test_dlpack_host_buffer():
    x, y, out = vectors(40)
    K.add[(1,)](Dlpacked(x), y, out, 40, BLOCK=64)
    np.testing.assert_array_equal(out, x + y)


class TorchLike:
    """What tk reads of a CPU torch.Tensor (data_ptr, dtype, get_device,
    shape, stride), over a numpy array: the torch path without torch."""

    class dtype_:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    def __init__(self, a):
        self.a = a
        self.dtype = TorchLike.dtype_({"float32": "float32", "int32": "int32"}[a.dtype.name])
        self.shape = a.shape

    def data_ptr(self):
        return self.a.__array_interface__["data"][0]

    def get_device(self):
        return -1

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)


def test_cpu_tensor_protocol():
    x, y, out = vectors(70)
    K.add[(1,)](TorchLike(x), TorchLike(y), TorchLike(out), 70, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    m = np.arange(40, dtype=np.float32).reshape(4, 10)
    s = np.zeros(4, np.float32)
    t = TorchLike(m[:, 1::3])
    K.row_sum[(4,)](t, TorchLike(s), 4, 3, 10, 3, BLOCK=4)
    np.testing.assert_array_equal(s, m[:, 1::3].sum(axis=1))


class DeviceView(TorchLike):
    """A tensor view with a torch-style .device and no get_device() (a
    library's strided buffer): Triton asks only data_ptr and dtype."""

    class device_:
        type, index = "cpu", None

    device = device_()
    get_device = None

    def __getattribute__(self, name):
        if name == "get_device":
            raise AttributeError(name)
        return object.__getattribute__(self, name)


def test_view_with_device_and_no_get_device():
    x, y, out = vectors(33)
    K.add[(1,)](DeviceView(x), DeviceView(y), DeviceView(out), 33, BLOCK=64)
    np.testing.assert_array_equal(out, x + y)


class StorageView(TorchLike):
    """A torch view whose stride along the gathered dim is 0 (FlagGems
    restrides a gather's input so): the kernel reads the whole storage,
    which untyped_storage() describes."""

    class storage_:
        def __init__(self, base):
            self.base = base

        def data_ptr(self):
            return self.base.__array_interface__["data"][0]

        def nbytes(self):
            return self.base.nbytes

    def __init__(self, view, base):
        super().__init__(view)
        self.base = base

    def untyped_storage(self):
        return StorageView.storage_(self.base)


def test_a_view_reads_its_whole_storage():
    base = np.arange(100, dtype=np.float32)
    view = np.lib.stride_tricks.as_strided(base, shape=(40,), strides=(0,))
    idx = np.random.default_rng(3).integers(0, 100, 40).astype(np.int32)
    out = np.zeros(40, np.float32)
    K.gather_at[(1,)](StorageView(view, base), idx, out, 40, 1, BLOCK=64)
    np.testing.assert_array_equal(out, base[idx])


def test_jit_function_attributes_launch_caches_read():
    """Triton's JITFunction.signature, params[i].default, cache_key and
    __globals__, which launch caches and kernel generators read."""
    import inspect
    f = K.axpb
    assert list(f.signature.parameters) == ["x_ptr", "out_ptr", "n", "a", "b_ptr", "BLOCK", "SQUARE"]
    assert [p.default for p in f.params][-3:] == [inspect.Parameter.empty, 64, False]
    assert f.__globals__ is K.__dict__
    keys = {K.add.cache_key, K.axpb.cache_key}
    assert len(keys) == 2 and all(len(k) == 64 for k in keys)
    assert K.add.cache_key == K.add.cache_key
    # module, starting_line_number and noinline as Triton's JITFunction has
    # them; an autotuned kernel's base_fn, num_warmups and num_reps
    assert f.module == "kernels" and f.noinline is False
    lines = inspect.getsourcelines(f.base_fn)
    assert f.starting_line_number == lines[1] and lines[0][0].lstrip().startswith("@")
    assert tk.jit(noinline=True)(f.base_fn).noinline is True
    t = K.scale_tuned
    assert inspect.isfunction(t.base_fn) and t.base_fn is t.fn.fn
    assert t.num_warmups is None and t.num_reps is None


def test_do_not_specialize_ignores_names_that_are_not_parameters():
    """As Triton: a stub that keeps a signature's do_not_specialize, with
    names it does not take, is no error."""
    k = tk.jit(do_not_specialize=["n", "seqlen_q", 9])(K.add_any_n.fn)
    assert [p.do_not_specialize for p in k.params] == [False, False, True, False]
    x, o = np.zeros(32, np.float32), np.zeros(32, np.float32)
    k[(1,)](x, o, 17, BLOCK=32)
    assert (o[:17] == 17).all()


def test_do_not_specialize_compiles_one_variant(tmp_path):
    """n = 16, 17 and 1 are three variants of `add` (divisible by 16, plain,
    equal to 1) but one of add_any_n, whose n is not specialised; every
    variant compiled leaves one .ir file in TK_DUMP_DIR."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, kernels as K\n"
            "for n in (16, 17, 1):\n"
            "    x = np.zeros(32, np.float32); o = np.zeros(32, np.float32)\n"
            "    K.add_any_n[(1,)](x, o, n, BLOCK=32)\n"
            "    assert (o[:n] == n).all() and (o[n:] == 0).all()\n"
            "    K.add[(1,)](x, x, o, n, BLOCK=32)\n")
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(tk.__file__)))
    env = dict(os.environ, TK_DUMP_DIR=str(tmp_path), TK_CACHE_DISABLE="1", TK_INTERPRET="1",
               PYTHONPATH=os.pathsep.join([pkg, os.environ.get("PYTHONPATH", "")]))
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, "-c", code], cwd=here, env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    irs = [f for f in os.listdir(tmp_path) if f.endswith(".ir")]
    assert len([f for f in irs if f.startswith("add_any_n-")]) == 1
    assert len([f for f in irs if f.startswith("add-")]) == 3
    x = np.zeros(32, np.float32)
    assert K.add_any_n.warmup(x, x, 16, BLOCK=32).signature == "*fp32:16,*fp32:16,i32"


def test_do_not_specialize_rejects_a_constexpr():
    with pytest.raises(ValueError, match="not a runtime parameter"):
        tk.jit(do_not_specialize=["BLOCK"])(K.add.fn)


def test_two_threads_launch_at_once():
    """Launches release the GIL; two threads share the kernel and context."""
    import threading
    errors = []

    def work(seed):
        try:
            for i in range(20):
                x, y, out = vectors(100 + seed * 50 + i)
                n = len(x)
                K.add[(tk.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
                np.testing.assert_array_equal(out, x + y)
        except Exception as e:  # reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_numpy_scalars_are_scalars():
    x, y, out = vectors(40)
    K.add[(1,)](x, y, out, np.int32(40), BLOCK=np.int64(64))
    np.testing.assert_array_equal(out, x + y)
    K.axpb[(1,)](x, out, np.int64(40), np.float32(2.0), None)
    np.testing.assert_allclose(out, 2 * x, rtol=1e-6)


class SometimesArray:
    """A type whose instances are arrays through __array_interface__ when
    they have one (an instance attribute) and through __dlpack__ always: a
    launch must not hold a type to the form an earlier instance had."""

    def __init__(self, a, iface):
        self.a = a
        if iface:
            self.__array_interface__ = a.__array_interface__

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()


def test_buffer_form_follows_the_instance():
    for iface in (True, False, True):
        x, y, out = vectors(30)
        K.add[(1,)](SometimesArray(x, iface), y, out, 30, BLOCK=32)
        np.testing.assert_array_equal(out, x + y)
    with pytest.raises(TypeError, match="argument 'x_ptr' is a object"):
        K.add[(1,)](object(), y, out, 30, BLOCK=32)


def test_launch_options_by_keyword_any_order():
    x, y, out = vectors(50)
    K.add[(1,)](x, y, out, num_stages=2, n=50, num_warps=2, BLOCK=64, stream=None)
    np.testing.assert_array_equal(out, x + y)
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_wraps'"):
        K.add[(1,)](x, y, out, 50, BLOCK=64, num_wraps=2)
    # enable_fp_fusion reaches the launch (its own cache entry, the same sum)
    for fusion in (False, True, None):
        out[:] = -1
        K.add[(1,)](x, y, out, 50, BLOCK=64, enable_fp_fusion=fusion)
        np.testing.assert_array_equal(out, x + y)
    # launch_pdl is a launch option (an ordinary launch on the interpreter),
    # not a parameter: before, it was refused as an unexpected argument
    for pdl in (True, False):
        out[:] = -1
        K.add[(1,)](x, y, out, 50, BLOCK=64, launch_pdl=pdl)
        np.testing.assert_array_equal(out, x + y)


def _many_params_module(tmp_path, n):
    params = ", ".join(f"a{i}" for i in range(n))
    total = " + ".join(f"a{i}" for i in range(n))
    src = ("import tk\nimport tk.language as tl\n\n\n@tk.jit\n"
           f"def add_all(out_ptr, {params}):\n    tl.store(out_ptr, {total})\n")
    path = tmp_path / f"many_{n}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"many_{n}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_kernel_of_more_than_64_parameters(tmp_path):
    """Real kernels take more than 64 parameters (mamba's chunked-scan
    backward takes 74); Triton has no such limit. Before, tk refused any
    kernel of more than 64."""
    mod = _many_params_module(tmp_path, 80)
    out = np.zeros(1, np.int32)
    mod.add_all[(1,)](out, *range(80))
    assert out[0] == sum(range(80))


def test_a_kernel_of_more_than_128_parameters(tmp_path):
    """mamba's Mamba-3 forward kernel takes 129 parameters; before, tk
    refused any kernel of more than 128."""
    mod = _many_params_module(tmp_path, 200)
    out = np.zeros(1, np.int32)
    mod.add_all[(1,)](out, *range(200))
    assert out[0] == sum(range(200))


def test_views_of_one_array_are_one_memory():
    """Two arguments that are views of one array (the halves of each row,
    as mamba's SwiGLU backward writes dx and dy into one tensor) are one
    memory to the interpreter too: before, each was staged and copied back
    on its own, and the second copy put stale values over the first's."""
    xy = np.zeros((4, 16), np.float32)
    K.fill_halves[(4,)](xy[:, :8], xy[:, 8:], 16, 8, BLOCK=8)
    np.testing.assert_array_equal(xy[:, :8], 1.0)
    np.testing.assert_array_equal(xy[:, 8:], 2.0)


def test_import_line_with_host_and_tk_modules():
    """`import os, tk, tk.language as tl`: tk's modules on a line with a
    host module are read as triton's. Before, the line stayed a host import
    and the file had no kernels."""
    import mixed_import_kernels as M
    x = np.arange(10, dtype=np.float32)
    M.double[(1,)](x, 10, BLOCK=16)
    np.testing.assert_array_equal(x, 2 * np.arange(10, dtype=np.float32))


def test_zero_dim_array_is_a_buffer_and_numpy_scalar_a_value():
    """A 0-d array is a buffer of one element (as a 0-d tensor is a
    pointer in Triton); a numpy scalar is its value. Before, a 0-d array
    was read as a float and the launch failed to specialise."""
    src, out = np.array(5.0, np.float32), np.zeros((), np.float32)
    K.add[(1,)](src, src, out, np.int32(1), BLOCK=16)
    assert out == 10.0
