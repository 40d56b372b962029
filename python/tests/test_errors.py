"""Errors are Python exceptions carrying tk's message and the source line."""
import numpy as np
import pytest

import tk
import kernels as K
import bad_kernels


def arrays(n=16):
    return np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)


def test_wrong_argument_count():
    x, y, out = arrays()
    with pytest.raises(TypeError) as e:
        K.add[(1,)](x, y, out, BLOCK=16)
    assert "missing argument n" in str(e.value)
    assert "kernels.py:" in str(e.value) and "def add(" in str(e.value)
    with pytest.raises(TypeError) as e:
        K.add[(1,)](x, y, out, 16, 16, 7)
    assert "takes 5 arguments but 6" in str(e.value) and "def add(" in str(e.value)


def test_unexpected_keyword():
    x, y, out = arrays()
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOCKK'"):
        K.add[(1,)](x, y, out, 16, BLOCKK=16)


def test_unsupported_dtype():
    x, y, out = arrays()
    with pytest.raises(TypeError) as e:
        K.add[(1,)](x.astype(np.complex64), y, out, 16, BLOCK=16)
    assert "x_ptr" in str(e.value) and "c8" in str(e.value) and "def add(" in str(e.value)


def test_not_a_tensor():
    x, y, out = arrays()
    with pytest.raises(TypeError, match="argument 'y_ptr' is a list"):
        K.add[(1,)](x, [1, 2], out, 16, BLOCK=16)


def test_none_where_a_pointer_is_needed():
    x, y, out = arrays()
    with pytest.raises(tk.CompileError) as e:
        K.add[(1,)](x, None, out, 16, BLOCK=16)
    msg = str(e.value)
    assert "kernels.py:" in msg and "y_ptr" in msg and "tl.load(y_ptr + offs" in msg


def test_source_error():
    x = np.zeros(16, np.float32)
    with pytest.raises(tk.CompileError) as e:
        bad_kernels.broken[(1,)](x, 16, BLOCK=16)
    msg = str(e.value)
    assert "bad_kernels.py:9:" in msg and "undefined_name" in msg and "^" in msg


def test_bad_grid_and_constexpr():
    x, y, out = arrays()
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        K.add[()](x, y, out, 16, BLOCK=16)
    # past the third dimension Triton reads nothing: 1 is taken, any other
    # would launch fewer programs than asked
    x[:], y[:], out[:] = 1.0, 2.0, 7.0
    K.add[(1, 1, 1, 1)](x, y, out, 16, BLOCK=16)
    np.testing.assert_array_equal(out, np.full(16, 3.0, np.float32))
    with pytest.raises(ValueError, match="grid dimension 3 is 2"):
        K.add[(1, 1, 1, 2)](x, y, out, 16, BLOCK=16)
    with pytest.raises(TypeError, match="constexpr 'BLOCK'"):
        K.add[(1,)](x, y, out, 16, BLOCK=[16])
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        K.add[(1,)](x, y, out, 1 << 70, BLOCK=16)


def test_calling_a_kernel_directly():
    with pytest.raises(RuntimeError, match=r"launch it as add\[grid\]"):
        K.add(1, 2)


def test_kernel_still_usable_after_errors():
    x, y, out = arrays()
    x[:] = 1
    K.add[(1,)](x, y, out, 16, BLOCK=16)
    assert (out == 1).all()


def test_heuristic_above_autotune_reading_a_config_value():
    """A heuristic above @autotune runs before tuning, as in Triton: it
    cannot read a config's values."""
    x = np.zeros(10, np.float32)
    with pytest.raises(KeyError, match="reads 'BLOCK'.*above @autotune runs before tuning"):
        K.even_outside[(1,)](x, 10)
    K.even_outside[(1,)](x, 10, BLOCK=16)  # named at the launch: runs, untuned
    assert (x == 1).all()


def test_heuristic_named_by_a_non_str():
    k = tk.heuristics({1: lambda args: 8})(tk.jit(K.total.fn.fn))  # a kernel of its own
    x = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="heuristic of kernel 'total' is named 1; a heuristic "
                       "names a constexpr parameter"):
        k[(1,)](x, x, 4)


def test_kernel_defined_inside_a_function_says_so():
    """tk compiles module-level @jit functions; one made inside a host
    function gets an error naming where it is, not 'no kernel'."""
    import tk
    import tk.language as tl

    def make():
        @tk.jit
        def inner(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
        return inner

    with pytest.raises(tk.TkError, match=r"'inner' is defined inside .*make\(\)"):
        make()[(1,)](np.zeros(8, np.float32), BLOCK=8)



@tk.jit
def below_six(x_ptr, BLOCK: tk.language.constexpr):
    tl = tk.language
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x < 6, "x must stay below 6")
    tl.store(x_ptr + tl.arange(0, BLOCK), x + 1)


@tk.jit(debug=True)
def below_six_checked(x_ptr, BLOCK: tk.language.constexpr):
    tl = tk.language
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x < 6, "x must stay below 6")
    tl.store(x_ptr + tl.arange(0, BLOCK), x + 1)


def test_device_assert_checks_only_with_debug(monkeypatch):
    """As in Triton, tl.device_assert (and `assert`) checks with debug=True
    on the kernel or the launch, or TRITON_DEBUG=1; otherwise it compiles to
    nothing and the launch runs on (before, it always checked)."""
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    monkeypatch.delenv("TK_DEBUG", raising=False)
    x = np.arange(8, dtype=np.int32)
    below_six[(1,)](x, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(8) + 1)
    for launch in (lambda: below_six_checked[(1,)](x, BLOCK=8),
                   lambda: below_six[(1,)](x, BLOCK=8, debug=True)):
        with pytest.raises(tk.TkError, match="x must stay below 6"):
            launch()


def test_compiled_kernel_keeps_its_debug(monkeypatch):
    """warmup(debug=True) compiles the asserts in, and its compiled
    kernel, launched again, is that compile: the assert still checks."""
    monkeypatch.delenv("TRITON_DEBUG", raising=False)
    monkeypatch.delenv("TK_DEBUG", raising=False)
    x = np.arange(8, dtype=np.int32)
    k = below_six.warmup(x, BLOCK=8, grid=(1,), debug=True)
    k._init_handles()
    with pytest.raises(tk.TkError, match="x must stay below 6"):
        k[(1,)](x, 8)
