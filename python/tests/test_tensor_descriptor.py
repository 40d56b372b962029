"""Tensor descriptors built on the host (tk.tools.tensor_descriptor, and
Triton's spelling through the compat facade) as kernel arguments, on the
interpreter: tiles read through a strided view and written with the edge
tile clipped; bad descriptors refused with the launch's message."""
import numpy as np
import pytest

import tk
import tk.language as tl
from tk.tools.tensor_descriptor import TensorDescriptor


@tk.jit
def desc_scale(a_desc, out_desc, n, BM: tl.constexpr):
    x = a_desc.load([tl.program_id(0) * BM, 0])
    out_desc.store([tl.program_id(0) * BM, 0], x.to(tl.float32) * n)


def test_from_tensor_on_a_strided_view():
    a = np.arange(40 * 48, dtype=np.float16).reshape(40, 48) % 97
    view = a[:, :32]
    out = np.full((40, 32), np.nan, np.float32)
    a_d = TensorDescriptor.from_tensor(view, [16, 32])
    assert a_d.shape == [40, 32] and a_d.strides == [48, 1] and a_d.block_shape == [16, 32]
    desc_scale[(3,)](a_d, TensorDescriptor.from_tensor(out, [16, 32]), 3, BM=16)
    np.testing.assert_array_equal(out, view.astype(np.float32) * 3)


def test_triton_spelling_is_the_same_class():
    import tk.compat  # noqa: F401  (puts the facade in sys.modules)
    from triton.tools.tensor_descriptor import TensorDescriptor as T
    assert T is TensorDescriptor


@pytest.mark.parametrize("edit, text", [
    (lambda d: setattr(d, "strides", [48, 2]), "the last stride of a descriptor must be 1, not 2"),
    (lambda d: setattr(d, "block_shape", [12, 32]), "block dim 0 of the descriptor is 12"),
    (lambda d: (setattr(d, "shape", [1] * 6), setattr(d, "strides", [1] * 6),
                setattr(d, "block_shape", [1] * 6)), "rank must be 1 to 5, not 6"),
    (lambda d: setattr(d, "shape", [40]), "shape, strides and block_shape of one length"),
])
def test_bad_descriptors(edit, text):
    a = np.zeros((40, 48), np.float16)
    out = np.zeros((40, 32), np.float32)
    d = TensorDescriptor.from_tensor(a, [16, 32])
    edit(d)
    # a launch refused for its arguments is a TypeError, as in Triton
    with pytest.raises((TypeError, ValueError), match=text):
        desc_scale[(3,)](d, TensorDescriptor.from_tensor(out, [16, 32]), 3, BM=16)


def _set_blocks(nargs):
    nargs["a_desc"].block_shape = [nargs["BM"], 32]
    nargs["out_desc"].block_shape = [nargs["BM"], 32]


# desc_scale tuned as Triton's autotune wraps a kernel it is handed
desc_scale_tuned = tk.autotune(configs=[tk.Config({"BM": 8}, pre_hook=_set_blocks),
                                        tk.Config({"BM": 16}, pre_hook=_set_blocks)],
                               key=["n"])(desc_scale)


def test_pre_hook_sets_the_block_shape():
    # tutorial 06's host code: descriptors made with a placeholder block,
    # which each config's pre_hook sets from its own constexprs before the
    # run; the launch specialises on the block the hook left (it took the
    # placeholder's [1, 1] before, and each program wrote one element)
    a = np.arange(40 * 32, dtype=np.float16).reshape(40, 32) % 97
    out = np.full((40, 32), np.nan, np.float32)
    a_d, o_d = TensorDescriptor(a, [40, 32], [32, 1], [1, 1]), \
        TensorDescriptor(out, [40, 32], [32, 1], [1, 1])
    desc_scale_tuned[lambda meta: (tk.cdiv(40, meta["BM"]),)](a_d, o_d, 3)
    np.testing.assert_array_equal(out, a.astype(np.float32) * 3)
    assert a_d.block_shape[1] == 32


def test_padding_zero_and_nan():
    # Triton 3.6's fifth field: "zero" reads zeros past the edges, as tk's
    # host descriptors do; "nan" is refused by the launch, naming the way
    # to NaN padding tk has (a descriptor made in the kernel)
    a = np.arange(40 * 32, dtype=np.float16).reshape(40, 32) % 97
    out = np.full((40, 32), np.nan, np.float32)
    a_d = TensorDescriptor.from_tensor(a, [16, 32], padding="zero")
    desc_scale[(3,)](a_d, TensorDescriptor(out, [40, 32], [32, 1], [16, 32], "zero"), 2, BM=16)
    np.testing.assert_array_equal(out, a.astype(np.float32) * 2)
    with pytest.raises(ValueError, match="asks padding='nan'.*padding_option"):
        desc_scale[(3,)](TensorDescriptor.from_tensor(a, [16, 32], padding="nan"),
                         TensorDescriptor.from_tensor(out, [16, 32]), 2, BM=16)
    with pytest.raises(ValueError, match="must be 'zero' or 'nan'"):
        TensorDescriptor.from_tensor(a, [16, 32], padding="inf")
