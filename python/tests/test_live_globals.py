"""Names a kernel uses that host code binds (a host function's result, a
helper picked under such a condition) resolve from the live module at the
first launch, as Triton reads fn.__globals__ when it compiles."""
import numpy as np

import live_kernels as K


def test_helper_and_flags_from_the_live_module():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float16)
    K.apply_helper[(1,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, (x * 2 * 4 + 1).astype(np.float16))


def test_the_compiled_ir_names_the_chosen_helper():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float16)
    ck = K.apply_helper.warmup(x, out, BLOCK=16, grid=(1,))
    assert "fp16" in ck.asm["ir"]


def test_names_imported_from_a_file_whose_host_code_chose_them():
    import live_import_kernels as L
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    L.imported_choice[(1,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, x * 3 + 1)


def test_a_float_subclass_is_spelt_as_a_float():
    """numpy 2 prints np.float64(4.0) as `np.float64(4.0)`, which no kernel
    file can read: a float's value is written as a plain float."""
    from tk import live

    class Odd(float):
        def __repr__(self):
            return "Odd(4.0)"
    assert live._spell(Odd(4.0), {}, "f.py") == "4.0"
