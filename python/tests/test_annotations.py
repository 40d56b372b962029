"""Scalar parameters annotated with a type (stride: tl.int64, scale:
tl.float32) take that type whatever Python number the launch passes, as
Triton's launcher converts it; a value the type cannot hold is an error."""
import numpy as np
import pytest

import kernels as K


def test_int_given_to_int64_and_float32_parameters():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(8, np.float32)
    K.strided_scale[(1,)](out, x, 2, 3, N=8)
    np.testing.assert_array_equal(out, 3 * x[::2])
    sig = K.strided_scale.warmup(out, x, 2, 3, N=8, grid=(1,)).signature
    assert sig.split(",")[2:] == ["i64", "fp32"], sig


@pytest.mark.parametrize("v", [0, 1, 3, 16, -1])
def test_every_int_width(v):
    out = np.zeros(9, np.int64)
    vals = [v, v, v, v] + [abs(v)] * 4 + [v & 1]
    K.int_widths[(1,)](out, *vals)
    assert out.tolist() == vals
    sig = K.int_widths.warmup(out, *vals, grid=(1,)).signature
    assert [s.split(":")[0] for s in sig.split(",")[1:]] == \
        ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "i1"], sig


def test_numpy_scalars_and_bools_convert_too():
    out = np.zeros(9, np.int64)
    K.int_widths[(1,)](out, np.int64(-5), True, np.uint8(7), np.int32(9), 250, 65535,
                       2**32 - 1, 2**64 - 1, np.bool_(True))
    assert out.tolist() == [-5, 1, 7, 9, 250, 65535, 2**32 - 1, -1, 1]


def test_floats_and_ints_given_to_float_parameters():
    out = np.zeros(5, np.float64)
    K.float_widths[(1,)](out, 1, 2, 3, 0.1, 5)
    assert out.tolist() == [1.0, 2.0, 3.0, 0.1, 5.0]
    K.float_widths[(1,)](out, 0.5, np.float32(1.5), True, 2**40, 0.25)
    assert out.tolist() == [0.5, 1.5, 1.0, 2.0**40, 0.25]
    sig = K.float_widths.warmup(out, 1, 2, 3, 4, 5, grid=(1,)).signature
    assert sig.split(",")[1:] == ["fp16", "bf16", "fp32", "fp64", "fp32"], sig


@pytest.mark.parametrize("index, value", [(0, 128), (0, -129), (1, 2**15), (2, 2**31),
                                          (3, 2**63), (4, 256), (4, -1), (5, 2**16),
                                          (6, 2**32), (7, -1), (8, 2)])
def test_out_of_range_is_an_error_naming_the_parameter(index, value):
    out = np.zeros(9, np.int64)
    vals = [0] * 9
    vals[index] = value
    with pytest.raises(OverflowError) as e:
        K.int_widths[(1,)](out, *vals)
    name = "abcdefght"[index]
    assert f"'{name}'" in str(e.value) and "def int_widths(" in str(e.value)


def test_float_given_to_an_int_parameter_is_an_error():
    out = np.zeros(9, np.int64)
    with pytest.raises(TypeError, match="'c' is declared int32 but the launch passes a float"):
        K.int_widths[(1,)](out, 0, 0, 1.5, 0, 0, 0, 0, 0, 0)


def test_tk_spelling_with_divisibility():
    """tk's own spelling ("i64:16") declares the type too."""
    out = np.zeros(1, np.int64)
    K.tk_spelled[(1,)](out, 32)
    assert out[0] == 32
