"""Constexprs that hold tuples (nested, of numbers, strings, dtypes and
None) and @jit functions, as Triton takes them: each value is its own
specialisation (cache key), passed by keyword, by default, by heuristic
and by autotune config."""
import numpy as np
import pytest
from scripts_run import run_script

import tk
import constexpr_kernels as K


def test_tuple_by_default_and_by_keyword_alternate():
    x = np.full(16, 2.0, np.float32)
    out = np.zeros(16, np.float32)
    for _ in range(2):
        K.poly[(1,)](x, out, BLOCK=16)
        assert out[0] == 0.5 * 2 + 0.25
        K.poly[(1,)](x, out, BLOCK=16, COEFS=(1.0, 2.0, 3.0))
        assert out[0] == (1 * 2 + 2) * 2 + 3
        K.poly[(1,)](x, out, BLOCK=16, COEFS=(3,))
        assert out[0] == 3


def test_nested_tuple_with_str_dtype_and_none():
    out = np.zeros(2, np.int16)
    K.nested[(1,)](out, T=((4, 2), ("w", tk.language.int16, None)))
    np.testing.assert_array_equal(out, [42, 42])
    info = K.nested.warmup(out, T=((4, 2), ("w", tk.language.int16, None)), grid=(1,))
    assert ("T", "((4, 2), ('w', tl.int16, None))") in info.defines


def test_jit_function_constexprs_alternate():
    x = np.linspace(-2, 2, 16).astype(np.float32)
    out = np.zeros(16, np.float32)
    for _ in range(2):
        K.apply[(1,)](x, out, BLOCK=16, ACT=K._relu)
        np.testing.assert_array_equal(out, np.maximum(x, 0))
        K.apply[(1,)](x, out, BLOCK=16, ACT=K._square)
        np.testing.assert_array_equal(out, x * x)
    assert ("ACT", "_relu") in K.apply.warmup(x, out, BLOCK=16, ACT=K._relu, grid=(1,)).defines


def test_jit_function_of_another_file():
    p = run_script("constexpr_fn.py")
    assert p.returncode == 0, p.stderr
    assert "constexpr functions OK" in p.stdout


def test_tuple_from_heuristic_and_config():
    x = np.full(16, 2.0, np.float32)
    out = np.zeros(16, np.float32)
    K.poly_heur[(1,)](x, out, 3, BLOCK=16)
    assert out[0] == (2 + 1) * 2 + 1
    K.poly_heur[(1,)](x, out, 2, BLOCK=16)
    assert out[0] == 2 + 1
    K.tuned[(1,)](x, out, BLOCK=16)
    assert out[0] == 4 + 2


def test_unsupported_constexpr_value():
    x = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match="constexpr 'COEFS' must be an int, float, bool, str, "
                       "None, a tl or torch dtype, a @jit function or a tuple of those, not <class 'list'>"):
        K.poly[(1,)](x, x, BLOCK=16, COEFS=[1.0])


def test_constexpr_function():
    assert K.pick_block(20) == 32  # host code calls the function itself
    for n in (20, 3, 40):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        K.double_first[(1,)](x, out, N=n)
        np.testing.assert_array_equal(out, 2 * x)
