"""Autotune (configs, key, pruning; on the interpreter the first config
that survives pruning runs) and heuristics."""
import numpy as np

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


def test_heuristics_set_a_constexpr():
    for n in (5, 33, 100):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(1, np.float32)
        K.total[(1,)](x, out, n)
        assert out[0] == x.sum()


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
