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


def test_a_helper_defined_twice_under_a_host_condition():
    """`if USE_DOUBLE: def pick ... else: def pick ...` where only host code
    decides USE_DOUBLE: the condition is read from the live module, in
    place, so the branch Python took is the one compiled."""
    import live_branch_kernels as B
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    B.pick_bump[(1,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x * 2 + 1)


def test_helpers_a_package_file_defines_under_host_conditions():
    """The helpers come from another file of the package, whose conditions
    name flags a third file computes: libtk reads that file's live text."""
    from live_pkg import kernels
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    kernels.scaled_shift[(1,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x * 2 + 10)


def test_a_math_library_host_code_picks():
    """`try: shim = libdevice except ...: shim = tl.math` in a package file:
    the live value, one of the language's namespaces, is taken by name."""
    from live_pkg import pow_kernels
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    pow_kernels.cube[(1,)](x, out, BLOCK=8)
    np.testing.assert_allclose(out, x ** 3, rtol=1e-6)


def _decided(text, glb):
    from tk import live
    return live.decide_conditions(text, glb)


def test_a_decided_condition_keeps_every_position():
    text = ('F = f()\nN = "grün"\nif F and N == "grün": pass\n'
            'elif (F or\n      not F): pass\nif F \\\n   and N: pass\n')
    new = _decided(text, {"F": False, "N": "grün"})
    assert new == ('F = f()\nN = "grün"\nif 0                 : pass\n'
                   'elif (1  \\\n           ): pass\nif 0 \\\n        : pass\n')
    assert [len(line.encode()) for line in new.split("\n")] == \
        [len(line.encode()) for line in text.split("\n")]


def test_conditions_python_may_not_have_seen_stay():
    """A name bound again after the condition, or in a host function
    (global); a value that is not a plain constant; a call; a name the file
    does not bind: each such condition stays as written."""
    text = ("A = f()\nB = f()\nC = f()\nD = f()\nT = f()\n"
            "if A: pass\nif B: pass\nif C: pass\nif D(): pass\nif E: pass\n"
            "if (T, 1) == (1, 1): pass\nA = 2\n"
            "def g():\n    global B\n    B = 0\n")
    glb = {"A": 1, "B": True, "C": object(), "D": True, "E": True, "T": 1}
    assert _decided(text, glb) == text.replace("if (T, 1) == (1, 1)", "if 1               ")
    once = "X = f()\nif X: pass\nif X > 2 and X is not None: pass\n"
    assert _decided(once, {"X": 3}) == "X = f()\nif 1: pass\nif 1                      : pass\n"


def test_source_overlay_refuses_an_empty_path():
    import pytest
    from tk import _tk
    with pytest.raises(ValueError, match="path is empty"):
        _tk.source_overlay("", "x = 1\n")


def _generated(tmp_path, name, imports, expr):
    """A module a code generator writes outside every package and loads
    from its file (as FlagGems' pointwise generator does): a kernel storing
    expr of the loaded x, after the import lines given."""
    import importlib.util
    path = tmp_path / (name + ".py")
    path.write_text(
        "import tk\nimport tk.language as tl\n" + imports + "\n\n\n"
        "@tk.jit\ndef gen(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs)\n"
        "    tl.store(out_ptr + offs, " + expr + ")\n")
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_gen(m):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    m.gen[(1,)](x, out, BLOCK=16)
    return x, out


def test_a_generated_module_imports_a_package_found_on_sys_path(tmp_path):
    """The package is on sys.path, nowhere near the generated file: libtk
    is told the folder Python found it in."""
    x, out = _run_gen(_generated(tmp_path, "gen_imports_pkg", "from live_pkg import op as ext",
                                 "ext.scale(x)"))
    np.testing.assert_array_equal(out, x * 2)


def test_a_helper_host_code_binds_into_a_generated_module(tmp_path):
    """The generated kernel calls a @jit helper by a name its file never
    binds: the generator put the helper into the module's namespace after
    loading it, and Triton resolves the name there at compile time."""
    from live_pkg import op
    m = _generated(tmp_path, "gen_injected", "", "times(x)")
    m.__dict__["times"] = op.scale
    x, out = _run_gen(m)
    np.testing.assert_array_equal(out, x * 2)


def test_a_generated_module_imports_a_package_file_with_odd_objects(tmp_path):
    """Objects of the imported file that answer every attribute (as
    torch.classes does) are not asked whether they are @jit functions."""
    x, out = _run_gen(_generated(tmp_path, "gen_odd", "from live_pkg.odd import triple",
                                 "triple(x)"))
    np.testing.assert_array_equal(out, x * 3)


def test_a_generated_module_imports_a_host_choice_of_a_package(tmp_path):
    """The imported name is a choice host code made in a package file (a
    math library): the generated module's live value of it is taken."""
    x, out = _run_gen(_generated(tmp_path, "gen_mathlib", "from live_pkg.mathlib import shim",
                                 "shim.pow(x, 2.0)"))
    np.testing.assert_allclose(out, x * x, rtol=1e-6)
