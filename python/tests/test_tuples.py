"""Tuple arguments (Triton's tuple kernel parameters) on the interpreter:
tuples of arrays, of scalars, nested, with None and constexpr items and a
namedtuple;
each leaf is bound and specialised like an argument of its own, and the
signature warmup reports spells the tuple in parentheses."""
from collections import namedtuple

import numpy as np
import pytest

import tk
import kernels as K


def test_foreach_over_tuples_of_arrays():
    rng = np.random.default_rng(3)
    n = 100
    xs = tuple(rng.standard_normal(n).astype(np.float32) for _ in range(3))
    ys = tuple(rng.standard_normal(n).astype(np.float32) for _ in range(3))
    want = [y + 0.5 * x for x, y in zip(xs, ys)]
    K.foreach_axpy[(tk.cdiv(n, 32),)](xs, ys, (n, 0.5), BLOCK=32)
    for got, w in zip(ys, want):
        np.testing.assert_allclose(got, w, rtol=1e-6)


def test_nested_tuple_with_none_and_bias():
    x = np.arange(10, dtype=np.float32)
    b = np.full(10, 100, np.float32)
    out = np.full(10, np.nan, np.float32)
    K.nested_args[(1,)](((x, 10), (None, 2.0)), out, BLOCK=16)
    np.testing.assert_array_equal(out, x * 2)
    K.nested_args[(1,)](((x, 7), (b, 3)), out, BLOCK=16)
    np.testing.assert_array_equal(out[:7], (x[:7] + 100) * 3)


def test_constexpr_item():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    K.nested_args[(1,)](((x, 8), (None, tk.language.constexpr(4))), out, BLOCK=8)
    np.testing.assert_array_equal(out, x * 4)
    info = K.nested_args.warmup(((x, 8), (None, tk.language.constexpr(4))), out, BLOCK=8, grid=(1,))
    assert info.signature == "((*fp32:16,i32),(None,4)),*fp32:16"


def test_namedtuple_is_a_tuple():
    Pair = namedtuple("Pair", "n alpha")
    x = np.ones(20, np.float32)
    y = np.zeros(20, np.float32)
    K.foreach_axpy[(1,)]((x,), (y,), Pair(20, 4.0), BLOCK=32)
    np.testing.assert_array_equal(y, np.full(20, 4, np.float32))


def test_signature_spells_tuples():
    x = np.zeros(32, np.float32)
    info = K.foreach_axpy.warmup((x, x), (x, x), (32, 1.0), BLOCK=32, grid=(1,))
    assert info.signature == "(*fp32:16,*fp32:16),(*fp32:16,*fp32:16),(i32:16,fp32)"
    info = K.nested_args.warmup(((x, 1), (None, 1.5)), x, BLOCK=32, grid=(1,))
    assert info.signature == "((*fp32:16,i32:1),(None,fp32)),*fp32:16"


def test_tuple_of_wrong_arity_names_the_use():
    x = np.zeros(16, np.float32)
    with pytest.raises(tk.CompileError, match="cannot unpack 3 values into 2 names"):
        K.nested_args[(1,)](((x, 16, 3), (None, 1.0)), x, BLOCK=16)


def test_tuple_item_of_unknown_type():
    x = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match=r"argument 'xs\[1\]' is a str"):
        K.foreach_axpy[(1,)]((x, "y"), (x, x), (16, 1.0), BLOCK=16)


def test_tuples_nested_too_deep():
    x = np.zeros(16, np.float32)
    deep = 1
    for _ in range(9):
        deep = (deep,)
    with pytest.raises(ValueError, match="nests tuples more than 8 deep"):
        K.foreach_axpy[(1,)]((x,), (x,), (16, deep), BLOCK=16)
