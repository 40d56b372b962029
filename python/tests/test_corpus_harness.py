"""The GPU corpus harness (gpu/corpus_worker.py) binds a case's runtime
arguments by the kernel's parameter names, on either side: real Triton's
JITFunction (stood in for here by an object with Triton's attributes:
arg_names, params with is_constexpr, and constexprs as the constexprs'
indices) and tk's own. Only the binding is checked here; the launches
themselves need a GPU (gpu/run_corpus.py)."""
import os
import sys
import types

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu"))
pytest.importorskip("numpy")
import corpus_worker as W  # noqa: E402

import kernels as K  # noqa: E402


def triton_like(names, const):
    """What Triton 3.x's JITFunction exposes for its parameters."""
    params = [types.SimpleNamespace(name=n, num=i, is_constexpr=n in const,
                                    do_not_specialize=False) for i, n in enumerate(names)]
    return types.SimpleNamespace(arg_names=list(names), params=params,
                                 constexprs=[p.num for p in params if p.is_constexpr])


def test_triton_binding_names_every_runtime_parameter():
    k = triton_like(["X", "Y", "W", "B", "stride", "N", "eps", "HAS_BIAS", "BLOCK_N"],
                    {"HAS_BIAS", "BLOCK_N"})
    bound = W.bind_args(k, [1, 2, 3, None, 10, 20, 1e-5])
    assert bound == {"X": 1, "Y": 2, "W": 3, "B": None, "stride": 10, "N": 20, "eps": 1e-5}


def test_triton_binding_with_a_constexpr_in_the_middle():
    k = triton_like(["a", "BLOCK", "b"], {"BLOCK"})
    assert W.bind_args(k, ["x", "y"]) == {"a": "x", "b": "y"}


def test_binding_refuses_a_count_mismatch():
    k = triton_like(["a", "b", "BLOCK"], {"BLOCK"})
    with pytest.raises(SystemExit, match="2 runtime parameters"):
        W.bind_args(k, [1, 2, 3])


def test_tk_kernel_has_tritons_parameter_attributes():
    k = K.add  # (x_ptr, y_ptr, out_ptr, n, BLOCK: constexpr)
    assert [p.name for p in k.params] == k.arg_names
    assert [p.is_constexpr for p in k.params] == [False, False, False, False, True]
    assert k.constexprs == [4]
    assert W.bind_args(k, ["x", "y", "o", 5]) == {"x_ptr": "x", "y_ptr": "y", "out_ptr": "o",
                                                  "n": 5}


def test_side_names_the_implementation():
    assert W.side_of(K.add) == "tk"
    assert W.side_of(triton_like(["a"], set())) == "unknown"


def test_kernel_of_takes_the_decorators_off_tks_kernel():
    import tk.compat  # noqa: F401  (as `python -m tk` runs the harness)
    case = types.SimpleNamespace(file="kernels.py", kernel="double_even")
    k = W.kernel_of(case)
    assert W.side_of(k) == "tk" and k.configs is None
    assert not k._heuristics and not k._config_heuristics
    assert K.double_even.configs is not None and K.double_even._config_heuristics  # untouched
