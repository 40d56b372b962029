"""Autotune (configs, key, pruning; on the interpreter the first config
that survives pruning and compiles runs) and heuristics."""
import numpy as np
import pytest

import tk
import kernels as K


def test_autotune_grid_sees_the_chosen_config():
    n = 200
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    blocks = []

    def grid(meta):
        blocks.append(meta["BLOCK"])
        return (tk.cdiv(n, meta["BLOCK"]),)
    K.scale_tuned[grid](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    assert blocks and blocks[-1] == 32
    assert [c.kwargs["BLOCK"] for c in K.scale_tuned.configs] == [32, 64]


def test_autotune_prune_keeps_the_second_config():
    n = 130
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    blocks = []
    K.scale_pruned[lambda m: blocks.append(m["BLOCK"]) or (tk.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    assert K.PRUNE_CALLS == [n] and blocks[-1] == 64


def test_prune_gets_the_launch_keywords():
    """As Triton: prune(configs, named_args, **kwargs) gets the arguments a
    launch passes by keyword, with grid and warmup (unsloth's grouped GEMM
    reads a pointer from them); one without **kwargs gets two arguments."""
    n = 128
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    blocks = []
    K.scale_pruned_kw[lambda m: blocks.append(m["BLOCK"]) or (tk.cdiv(n, m["BLOCK"]),)](
        x_ptr=x, out_ptr=out, n=n)
    np.testing.assert_array_equal(out, 3 * x)
    assert K.PRUNE_KWARGS[-1] == ["grid", "n", "out_ptr", "warmup", "x_ptr"] and blocks[-1] == 64
    K.scale_pruned_two[lambda m: (tk.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, 4 * x)
    assert K.PRUNE_KWARGS[-1] == n


def test_heuristics_set_a_constexpr():
    for n in (5, 33, 100):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(1, np.float32)
        K.total[(1,)](x, out, n)
        assert out[0] == x.sum()


def test_heuristics_naming_a_function():
    """FlagGems names module-level functions: {"BLOCK": heur_block}; the
    function runs as the lambda would."""
    for n in (5, 33, 100):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(1, np.float32)
        K.total_by_fn[(1,)](x, out, n)
        assert out[0] == x.sum()
        assert K.total_by_fn.warmup(x, out, n, grid=(1,)).defines == \
            [("BLOCK", str(tk.next_power_of_2(n)))]


def test_cdiv_and_next_power_of_2():
    assert tk.cdiv(10, 4) == 3 and tk.cdiv(8, 4) == 2
    assert [tk.next_power_of_2(v) for v in (0, 1, 2, 3, 17, 64)] == [1, 1, 2, 4, 32, 64]


def test_do_bench_times_a_launch():
    x = np.ones(64, np.float32)
    out = np.zeros(64, np.float32)
    ms = tk.testing.do_bench(lambda: K.add[(1,)](x, x, out, 64, BLOCK=64), warmup=1, rep=5)
    assert ms > 0
    med, p20, p80 = tk.testing.do_bench(lambda: None, warmup=1, rep=2, quantiles=[0.5, 0.2, 0.8])
    assert p20 <= med <= p80


def test_reset_to_zero_before_the_first_launch_of_each_key():
    """Triton's autotuner zeroes reset_to_zero buffers once after choosing a
    config for a new key; the launch then counts from zero."""
    c = np.full(64, 5.0, np.float32)
    grid = lambda m: (tk.cdiv(64, m["BLOCK"]),)  # noqa: E731
    K.count_tuned[grid](c, 64)
    assert c.tolist() == [1.0] * 64
    K.count_tuned[grid](c, 64)  # a known key: nothing is reset
    assert c.tolist() == [2.0] * 64
    K.count_tuned[grid](c, 32)  # a new key: the whole buffer is zeroed first
    assert c.tolist() == [1.0] * 32 + [0.0] * 32


def test_reset_to_zero_with_a_config_pre_hook():
    """A config's pre_hook runs after the buffers are zeroed and sees them
    zeroed; the launch counts from zero (on the interpreter the hook's
    restaging of host arrays put the old values back: 6.0, not 1.0)."""
    c = np.full(64, 5.0, np.float32)
    K._seen.first.clear()
    K.count_hooked[lambda m: (tk.cdiv(64, m["BLOCK"]),)](c, 64)
    assert c.tolist() == [1.0] * 64
    assert K._seen.first and K._seen.first[-1] == 0.0


def test_one_config_is_not_tuned_and_resets_nothing():
    c = np.full(64, 5.0, np.float32)
    K.count_one_config[lambda m: (tk.cdiv(64, m["BLOCK"]),)](c, 64)
    assert c.tolist() == [6.0] * 64


def test_heuristics_under_autotune_see_the_config():
    """@autotune above @heuristics: the heuristics run for each config with
    its values (num_warps too), and the grid sees their results, as in
    Triton."""
    for n in (200, 192):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros_like(x)
        metas = []

        def grid(m):
            metas.append(dict(m))
            return (tk.cdiv(n, m["BLOCK"]),)
        K.EVEN_SEEN.clear()
        K.double_even[grid](out, x, n)
        np.testing.assert_array_equal(out, 2 * x)
        assert (64, n, 2) in K.EVEN_SEEN  # the interpreter runs the first config
        assert metas[-1]["BLOCK"] == 64 and metas[-1]["EVEN"] == (n % 64 == 0)
    out = np.zeros(256, np.float32)
    K.double_even[(4,)](out, np.ones(256, np.float32), 256)  # a grid that is no callable
    assert (out == 2).all()


def test_heuristics_above_and_below_autotune_run_in_triton_order():
    """Outermost first, each dict in order: SCALE before tuning, then per
    config TWICE and FACTOR, which reads both; the lowest dict sets TWICE
    again last, after FACTOR read it."""
    n = 50
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    K.scaled_tuned[lambda m: (tk.cdiv(n, m["BLOCK"]),)](out, x, n)
    np.testing.assert_array_equal(out, 6 * x)  # BLOCK 32: TWICE 2, SCALE 3


def test_a_config_stands_in_for_the_default():
    """Triton's autotuner passes each config's values over the parameters'
    defaults; a launch that names the constexpr runs untuned with it."""
    out = np.zeros(64, np.float32)
    blocks = []
    K.fill_block[lambda m: blocks.append(m["BLOCK"]) or (tk.cdiv(64, m["BLOCK"]),)](out, 64)
    assert blocks[-1] == 16 and (out == 16).all()
    K.fill_block[(8,)](out, 64, BLOCK=8)
    assert (out == 8).all()


def test_config_pre_hook_runs_before_the_launch():
    """A config's pre_hook (mamba zeroes the buffers its kernels accumulate
    into this way) runs before each launch with the launch's named values
    and the config's, and what it writes reaches the kernel; before, it was
    dropped, and the sums landed on whatever the buffer held."""
    n = 40
    x = np.arange(n, dtype=np.float32)
    acc = np.full(n, 1e30, np.float32)
    K.HOOK_CALLS.clear()
    K.accumulate_hooked[lambda m: (tk.cdiv(n, m["BLOCK"]),)](x, acc, n)
    np.testing.assert_array_equal(acc, x)
    assert K.HOOK_CALLS and K.HOOK_CALLS[-1] == ["BLOCK", "acc_ptr", "n", "x_ptr"]
    acc[:] = 7.0
    K.accumulate_hooked[lambda m: (tk.cdiv(n, m["BLOCK"]),)](x, acc, n)  # chosen: hooked again
    np.testing.assert_array_equal(acc, x)


def test_autotune_hooks_are_accepted():
    """@autotune's own pre_hook and post_hook surround timed runs only: a
    kernel of one config is not timed, so neither runs, as in Triton."""
    n = 8
    x = np.ones(n, np.float32)
    acc = np.zeros(n, np.float32)
    K.TUNE_HOOKS.clear()
    K.accumulate_tune_hooks[(1,)](x, acc, n)
    np.testing.assert_array_equal(acc, x)
    assert K.TUNE_HOOKS == []


def test_autotune_wraps_without_changing_the_kernel():
    """@autotune gives a new kernel, as Triton's Autotuner wraps the
    JITFunction, and leaves the one it was given plain: PyTorch's
    wrap_triton tunes a plain kernel it is handed that way, then walks from
    the tuned one down to it. Before, the given kernel itself became tuned.
    The tuned kernel has Triton's pruning attributes."""
    n = 64
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    tuned = tk.autotune(configs=[tk.Config({"BLOCK": 16}), tk.Config({"BLOCK": 32})],
                        key=["n"])(K.scale_wrapped)
    assert tuned is not K.scale_wrapped and K.scale_wrapped.configs is None
    assert tuned.perf_model is None and tuned.early_config_prune is None
    tuned[lambda m: (tk.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    out[:] = 0
    K.scale_wrapped[(4,)](x, out, n, BLOCK=16)  # still plain: the constexpr is the launch's
    np.testing.assert_array_equal(out, 2 * x)


def test_a_config_that_does_not_compile_is_dropped():
    """As Triton's tuner: a config failing a static_assert on its sizes is
    not chosen (the interpreter, which does not time, runs the first that
    compiles); where none compiles, the first one's error says why."""
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    K.copy_fits[(1,)](x, out, D=32)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(tk.CompileError, match="(?s)every autotune config failed; the first: .*BLOCK must not exceed D"):
        K.copy_never_fits[(1,)](x, out, D=32)


def test_config_as_triton_has_it():
    """Config keeps the dict it is given, prints every option as Triton's
    does, and equal configs are one (a set of configs drops repeats)."""
    kw = {"BLOCK": 16}
    a, b = tk.Config(kw, num_warps=2), tk.Config({"BLOCK": 16}, num_warps=2)
    assert a.kwargs is kw and a == b and len({a, b, tk.Config({"BLOCK": 32})}) == 2
    assert str(a) == "BLOCK: 16, num_warps: 2, num_ctas: 1, num_stages: 3, maxnreg: None"
    with pytest.raises(NotImplementedError, match="ir_override"):
        tk.Config({}, ir_override="k.ttgir")


_estimates = []


def _perf_model(**kw):
    _estimates.append(kw["BLOCK"])
    return kw["BLOCK"]  # smaller blocks estimated faster


@tk.autotune(configs=[tk.Config({"BLOCK": 32}), tk.Config({"BLOCK": 16}), tk.Config({"BLOCK": 64})],
             key=["n"], prune_configs_by={"perf_model": _perf_model, "top_k": 1})
@tk.jit
def fill_pruned(x_ptr, n, BLOCK: tk.language.constexpr):
    offs = tk.language.arange(0, BLOCK)
    tk.language.store(x_ptr + offs, 1.0, mask=offs < n)


def test_perf_model_and_top_k_prune():
    """prune_configs_by's perf_model and top_k, as Triton's autotuner runs
    them: each config estimated once, the top_k fastest kept (they were
    ignored, and the interpreter took the first config)."""
    x = np.zeros(64, np.float32)
    fill_pruned[(1,)](x, 16)
    assert sorted(_estimates) == [16, 32, 64] and fill_pruned.best_config.kwargs == {"BLOCK": 16}
    assert fill_pruned.perf_model is _perf_model and fill_pruned.configs_top_k == 1
