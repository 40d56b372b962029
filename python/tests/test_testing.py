"""tk.testing (triton.testing under `python -m tk`): do_bench's statistics
from every timed run, assert_close's tolerances, and perf_report's Mark, as
Triton 3.6 has them."""
import sys
import time

import numpy as np
import pytest

import tk


def _uneven():
    """A callable whose every fourth call is slow, so that the times spread."""
    calls = [0]

    def f():
        calls[0] += 1
        time.sleep(0.004 if calls[0] % 4 == 0 else 0.0005)
    return f


def test_do_bench_quantiles_come_from_every_time():
    p50, p5, p95 = tk.testing.do_bench(_uneven(), warmup=5, rep=100, quantiles=[0.5, 0.05, 0.95])
    assert p5 <= p50 <= p95 and p95 > 2 * p5
    one = tk.testing.do_bench(_uneven(), warmup=5, rep=60, quantiles=[0.95])
    assert isinstance(one, float)  # one quantile: a number, as in Triton
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        tk.testing.do_bench(lambda: None, warmup=1, rep=1, quantiles=[1.5])


def test_do_bench_return_modes():
    times = tk.testing.do_bench(_uneven(), warmup=5, rep=100, return_mode="all")
    assert isinstance(times, list) and len(times) > 4
    assert all(isinstance(t, float) and t > 0 for t in times)
    assert max(times) > 2 * min(times)  # the slow calls are there
    f = _uneven()
    lo = tk.testing.do_bench(f, warmup=5, rep=60, return_mode="min")
    hi = tk.testing.do_bench(f, warmup=5, rep=60, return_mode="max")
    assert 0 < lo < hi
    for mode in ("mean", "median"):
        assert tk.testing.do_bench(f, warmup=1, rep=10, return_mode=mode) > 0
    with pytest.raises(AssertionError):
        tk.testing.do_bench(f, warmup=1, rep=1, return_mode="p99")


def test_do_bench_passes_on_the_callables_exception():
    def boom():
        raise ZeroDivisionError("from the work")
    with pytest.raises(ZeroDivisionError, match="from the work"):
        tk.testing.do_bench(boom, warmup=1, rep=1)


def test_assert_close_zero_tolerances_demand_equality():
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([1.0, 2.005], np.float32)
    tk.testing.assert_close(x, y)  # the default atol is 1e-2
    with pytest.raises(AssertionError):
        tk.testing.assert_close(x, y, atol=0, rtol=0)
    tk.testing.assert_close(x, x.copy(), atol=0, rtol=0)
    with pytest.raises(AssertionError):
        tk.testing.assert_close(np.float32(1.0), np.float32(1.001), atol=0.0, rtol=0.0)


def test_assert_close_callable_tolerances_get_the_dtype():
    x = np.array([1.0, 2.0], np.float16)
    y = np.array([1.0, 2.004], np.float16)
    seen = []

    def atol(dt):
        seen.append(dt)
        return 1e-3
    with pytest.raises(AssertionError):
        tk.testing.assert_close(x, y, atol=atol, rtol=lambda dt: 0.0)
    # As Triton's, the inputs are tensors first where PyTorch is loaded.
    torch = sys.modules.get("torch")
    half = np.float16 if torch is None else torch.float16
    assert seen == [half]
    tk.testing.assert_close(x, y, atol=lambda dt: 1e-2 if dt == half else 0, rtol=0)


def test_assert_close_nan_and_one_element():
    nan = np.array([1.0, np.nan], np.float32)
    tk.testing.assert_close(nan, nan.copy())  # NaNs in the same places are equal
    with pytest.raises(AssertionError, match="ctx 1.0 is not close to 2.0"):
        tk.testing.assert_close(1.0, 2.0, err_msg="ctx")


def _report(**kw):
    bench = tk.testing.Benchmark(x_names=["n"], x_vals=[1, 2], line_arg="p", line_vals=["a", "b"],
                                 line_names=["A", "B"], plot_name="tiny", args={"scale": 2},
                                 ylabel="ms", **kw)
    calls = []

    @tk.testing.perf_report(bench)
    def run(n, p, scale, extra=0):
        calls.append((n, p, scale, extra))
        return (float(n * scale + extra), 0.0, 9.0) if p == "a" else n / 4
    return run, calls


def test_perf_report_prints_only_when_asked(capsys):
    mark, calls = _report()
    assert isinstance(mark, tk.testing.Mark) and mark.benchmarks.plot_name == "tiny"
    assert mark.run() is None
    assert calls == [(1, "a", 2, 0), (1, "b", 2, 0), (2, "a", 2, 0), (2, "b", 2, 0)]
    assert capsys.readouterr().out == ""  # print_data is False by default, as in Triton
    mark.run(print_data=True, extra=1)  # other keywords go to the function
    assert calls[-1] == (2, "b", 2, 1)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "tiny:"
    assert out[1].split() == ["n", "A", "(ms)", "B", "(ms)"]
    assert out[2].split() == ["0", "1.0", "3.0", "0.25"]  # the mean of (mean, min, max)
    assert out[3].split() == ["1", "2.0", "5.0", "0.50"]


def test_perf_report_return_df_and_save_path(tmp_path, capsys):
    mark, _ = _report()
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"return_df=True\) needs pandas"):
            mark.run(return_df=True)
    else:
        df = mark.run(return_df=True)
        assert list(df.columns) == ["n", "A (ms)", "B (ms)"] and len(df) == 2
    mark.run(save_path=str(tmp_path / "out"))
    csv = (tmp_path / "out" / "tiny.csv").read_text().splitlines()
    assert csv == ["n,A (ms),B (ms)", "1.000000,2.000000,0.250000", "2.000000,4.000000,0.500000"]
    assert 'src="tiny.png"' in (tmp_path / "out" / "results.html").read_text()
    with pytest.raises(ValueError, match="Expected 2 values"):
        tk.testing.perf_report(tk.testing.Benchmark(["a", "b"], [(1, 2, 3)], "p", [0], ["P"], "",
                                                    {}))(lambda a, b, p: 0).run()
