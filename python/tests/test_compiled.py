"""The compiled kernel a launch and warmup() give, as Triton's
CompiledKernel: launched again with kernel[grid](*args); kernel.run() with
warmup=; an autotuned kernel's best_config, its per-config warmup and its
.fn, the kernel under the decorator."""
import numpy as np
import pytest

import tk
import kernels as K


def test_warmup_result_launches():
    """Triton's tutorial 02: warmup, _init_handles, then kernel[grid] with
    every argument, constexprs included (their compiled values stand)."""
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    k = K.add.warmup(x, y, out, 100, BLOCK=64, grid=(1,))
    k._init_handles()
    assert not out.any()
    k[(2, 1, 1)](x, y, out, 100, 64)
    np.testing.assert_array_equal(out, x + 1)
    out[:] = 0
    k[(2,)](x, y, out, 100, 999, stream=None)  # the constexpr is the compiled one
    np.testing.assert_array_equal(out, x + 1)
    with pytest.raises(TypeError, match="takes 5 arguments"):
        k[(2,)](x, y, out)


@tk.jit
def rows_twice(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tk.language.constexpr,
               num_stages: tk.language.constexpr):
    tl = tk.language
    for r in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=num_stages):
        c = tl.arange(0, BLOCK)
        v = tl.load(in_ptr + r * n_cols + c, mask=c < n_cols)
        tl.store(out_ptr + r * n_cols + c, v * 2.0, mask=c < n_cols)


def test_constexpr_named_like_an_option():
    """Tutorial 02's softmax takes a num_stages constexpr: warmup's keyword
    sets the parameter and the option, as in Triton, and the compiled
    kernel launched with every parameter by position keeps both (it raised
    'multiple values for keyword argument' from inside tk before)."""
    x = np.arange(40, dtype=np.float32).reshape(4, 10)
    y = np.zeros_like(x)
    k = rows_twice.warmup(y, x, 4, 10, BLOCK=16, num_stages=2, num_warps=4, grid=(1,))
    assert k.num_stages == 2 and ("num_stages", "2") in k.defines
    k._init_handles()
    k[(2, 1, 1)](y, x, 4, 10, 16, 2)
    np.testing.assert_array_equal(y, 2 * x)
    y[:] = 0
    rows_twice[(3,)](y, x, 4, 10, 16, 2, num_stages=2)  # by position, then the option
    np.testing.assert_array_equal(y, 2 * x)


def test_launch_gives_the_compiled_kernel():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    h = K.add[(1,)](x, x, out, 64, BLOCK=64)
    assert isinstance(h, tk.CompiledKernel)
    assert h.n_regs >= 0 and h.num_warps == 4 and ("BLOCK", "64") in h.defines
    assert h.signature == "*fp32:16,*fp32:16,*fp32:16,i32:16"
    assert K.add[(1,)](x, x, out, 64, BLOCK=64) is h  # one object per specialisation
    assert K.add.warmup(x, x, out, 64, BLOCK=64, grid=(1,)) is h
    other = K.add[(1,)](x, x, out, 60, BLOCK=64)
    assert other is not h and other.signature.endswith(",i32")
    assert K.add[(1,)](x, x, out, 64, BLOCK=64, num_warps=2).num_warps == 2
    assert K.add[(0,)](x, x, out, 64, BLOCK=64) is None  # an empty grid launches nothing


def test_run_takes_warmup():
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    k = K.add.run(x, x, out, 100, BLOCK=32, grid=(4,), warmup=True)
    assert isinstance(k, tk.CompiledKernel) and not out.any()
    h = K.add.run(x, x, out, 100, BLOCK=32, grid=(4,), warmup=False)
    np.testing.assert_array_equal(out, 2 * x)
    assert h is k
    with pytest.raises(TypeError, match="grid"):
        K.add.run(x, x, out, 100, BLOCK=32)


def test_autotuned_launch_sets_best_config():
    n = 100
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    h = K.scale_tuned[lambda m: (tk.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    assert K.scale_tuned.best_config is K.scale_tuned.configs[0]  # the interpreter's choice
    assert isinstance(h, tk.CompiledKernel) and ("BLOCK", "32") in h.defines
    assert h.num_warps == 1  # the config's


def test_autotuned_fn_is_the_kernel_under_it():
    n = 100
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    inner = K.scale_tuned.fn
    assert isinstance(inner, tk.JITFunction) and inner.configs is None
    assert inner.fn is K.scale_tuned.fn.fn and callable(inner.fn) and \
        not isinstance(inner.fn, tk.JITFunction)  # the Python function
    h = inner[(4,)](x, out, n, BLOCK=32)
    np.testing.assert_array_equal(out, 2 * x)
    assert ("BLOCK", "32") in h.defines
    assert not isinstance(K.add.fn, tk.JITFunction)  # a plain kernel's .fn is its function
    # a heuristics-wrapped kernel's .fn runs without the heuristics
    with pytest.raises(TypeError, match="BLOCK"):
        K.total.fn[(1,)](x, out, 5)
    K.total.fn[(1,)](x, out, 5, BLOCK=8)
    assert out[0] == x[:5].sum()


def test_autotuned_warmup_compiles_every_config():
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    ks = K.scale_tuned.warmup(x, out, 100, grid=(1,))
    assert isinstance(ks, list) and len(ks) == 2
    assert [k.defines for k in ks] == [[("BLOCK", "32")], [("BLOCK", "64")]]
    assert [k.num_warps for k in ks] == [1, 2]
    assert not out.any()
    calls = list(K.PRUNE_CALLS)
    pruned = K.scale_pruned.warmup(x, out, 130, grid=(1,))  # prune_configs_by keeps one
    assert [k.defines for k in pruned] == [[("BLOCK", "64")]]
    assert K.PRUNE_CALLS[len(calls):] == [130]
    K.PRUNE_CALLS[:] = calls


def test_heuristics_above_autotune_fn_and_warmup():
    """@heuristics over @autotune: .fn is the tuned kernel without the outer
    heuristics (launchable after the outer one has tuned), and warmup runs
    the outer heuristics, then compiles every config."""
    n = 100
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    grid = lambda m: (tk.cdiv(n, m["BLOCK"]),)  # noqa: E731
    h = K.scaled_tuned[grid](out, x, n)
    assert ("SCALE", "3") in h.defines and ("FACTOR", "6") in h.defines
    inner = K.scaled_tuned.fn
    assert inner.configs is not None and not inner._heuristics
    out[:] = 0
    h = inner[grid](out, x, n, SCALE=1)  # the same configs on the same function
    np.testing.assert_array_equal(out, 2 * x)
    assert ("FACTOR", "2") in h.defines and inner.best_config.kwargs == {"BLOCK": 32}
    ks = K.scaled_tuned.warmup(out, x, n, grid=(1,))
    assert [dict(k.defines)["FACTOR"] for k in ks] == ["6", "12"]


def test_heuristics_see_the_configs_launch_options():
    """Under @autotune, a heuristic reads the config's num_warps (Triton's
    autotuner passes all_kwargs): at warmup too."""
    K.EVEN_SEEN.clear()
    x = np.ones(128, np.float32)
    ks = K.double_even.warmup(x, x, 128, grid=(1,))
    assert K.EVEN_SEEN == [(64, 128, 2), (128, 128, 4)]
    assert [k.defines for k in ks] == [[("BLOCK", "64"), ("EVEN", "True")],
                                       [("BLOCK", "128"), ("EVEN", "True")]]
    K.EVEN_SEEN.clear()


def test_compiled_kernel_of_a_tuned_kernel_relaunched():
    """The compiled kernel a tuned launch gives, launched again with the
    runtime arguments alone (FlagGems' launch cache): that binary runs,
    untuned. Before, the configs' hooks ran for a kernel that has none and
    the launch failed ("a callback got a config tk does not know")."""
    x = np.arange(10, dtype=np.float32)
    acc = np.zeros(1, np.float32)
    ck = K.accumulate_tuned[(1,)](x, acc, 10)
    assert acc[0] == 45 and ck.defines == [("BLOCK", "16")]
    ck[(1, 1, 1)](x, acc, 10)
    assert acc[0] == 90
