"""tk's triton.testing: do_bench on libtk's tk_bench (CUDA events and a
cold L2 per run on the GPU, wall-clock times on the interpreter),
assert_close, and perf_report/Benchmark/Mark (tables without pandas, plots
where matplotlib is installed)."""
import math
import numbers
import os
import statistics
import sys

from . import _tk


def _device():
    """PyTorch's current GPU (asking torch first, so that a process using
    one GPU makes no context on another), else GPU 0, else the interpreter."""
    torch = sys.modules.get("torch")
    if os.environ.get("TK_INTERPRET", "0") not in ("", "0"):
        return -1
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.current_device()
    return 0 if _tk.have_gpu() else -1


def get_dram_gbps(device=None):
    """Peak DRAM bandwidth in GB/s from the memory clock and bus width the
    driver reports (two transfers a clock), as Triton's host code
    estimates it; 0 where they are not reported (the interpreter)."""
    p = _tk.device_properties(_device() if device is None else device)
    return p["mem_clock_rate"] * p["mem_bus_width"] * 2 / 1e6 / 8


_RETURN_MODES = ("min", "max", "mean", "median", "all")


def _quantiles(times, qs):
    """The quantiles qs of times, interpolated linearly between neighbouring
    order statistics (numpy's and torch's default, as Triton computes them)."""
    ordered = sorted(times)
    last = len(ordered) - 1
    out = []
    for q in qs:
        if not 0 <= q <= 1:
            raise ValueError("Quantiles must be in the range [0, 1]")
        at = q * last
        below = int(math.floor(at))
        above = int(math.ceil(at))
        frac = at - below
        out.append((1 - frac) * ordered[below] + frac * ordered[above])
    return out


def _summary(times, quantiles, return_mode):
    """What do_bench gives for these times: the quantiles when asked (a number
    for one), else the statistic return_mode names ("all": every time)."""
    if quantiles is not None:
        out = _quantiles(times, quantiles)
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times
    if return_mode == "mean":
        return statistics.mean(times)
    if return_mode == "median":
        return statistics.median(times)
    return min(times) if return_mode == "min" else max(times)


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Milliseconds per call of fn, as triton.testing.do_bench: fn is timed
    over rep ms after warmup ms (CUDA events, a cold L2 before each run; on
    the interpreter, host wall-clock times), and quantiles or return_mode
    ("min", "max", "mean", "median", "all") summarise every run's time.
    grad_to_none: tensors whose .grad is cleared before each call."""
    assert return_mode in _RETURN_MODES, f"return_mode must be one of {_RETURN_MODES}"
    work = fn
    if grad_to_none is not None:
        def work():
            for x in grad_to_none:
                x.grad = None
            fn()
    times = _tk.bench(work, float(warmup), float(rep), _device())
    return _summary(times, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    """triton.testing.do_bench_cudagraph's signature and answer (ms per
    call). Triton captures fn in a CUDA graph to leave the launch's host cost
    out; tk's launch costs a few microseconds, and this times fn as do_bench
    does, over rep ms."""
    return do_bench(fn, warmup=25, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                    return_mode=return_mode)


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Asserts x and y are close, as triton.testing.assert_close: atol 1e-2
    and rtol 0 when None (0 is 0), a callable tolerance called with x's
    dtype, NaNs equal where both have them. Where PyTorch is loaded, inputs
    become tensors first, as Triton makes them; else numpy arrays."""
    import numpy as np
    torch = sys.modules.get("torch")
    if torch is not None:
        x = x if isinstance(x, torch.Tensor) else torch.tensor(x)
        y = y if isinstance(y, torch.Tensor) else torch.tensor(y)
    else:
        x, y = np.asarray(x), np.asarray(y)
    atol = 1e-2 if atol is None else atol
    atol = atol(x.dtype) if callable(atol) else atol
    rtol = 0.0 if rtol is None else rtol
    rtol = rtol(x.dtype) if callable(rtol) else rtol
    x, y = _host(x), _host(y)
    if x.size > 1 or y.size > 1:
        np.testing.assert_allclose(x, y, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)
        return
    if not np.allclose(x, y, atol=atol, rtol=rtol):
        raise AssertionError(f"{err_msg} {x} is not close to {y} (atol={atol}, rtol={rtol})")


def _host(a):
    """A numpy array of a tensor's values: bfloat16 and the float8 types,
    which numpy lacks, as float32."""
    if not hasattr(a, "detach"):
        return a
    if "bfloat16" in str(a.dtype) or "float8" in str(a.dtype):
        a = a.float()
    return a.cpu().detach().numpy()


class Benchmark:
    """One table (and plot) of a perf_report: fn over x_vals for each x_name,
    one column per line_vals value, as triton.testing.Benchmark."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names=None, plot_name="",
                 args=None, xlabel="", ylabel="", x_log=False, y_log=False, styles=None):
        self.x_names, self.x_vals, self.x_log = x_names, x_vals, x_log
        self.line_arg, self.line_vals, self.y_log = line_arg, line_vals, y_log
        self.line_names = line_names if line_names is not None else list(line_vals)
        self.styles, self.xlabel, self.ylabel = styles, xlabel, ylabel
        self.plot_name, self.args = plot_name, args if args is not None else {}


class _Table:
    """A benchmark's results as named columns of rows, printed and saved as
    pandas prints and saves a DataFrame (for where pandas is not installed)."""

    def __init__(self, columns, rows):
        self.columns, self.rows = list(columns), [list(r) for r in rows]

    def column(self, name):
        j = self.columns.index(name)
        return [r[j] for r in self.rows]

    def select(self, names):
        js = [self.columns.index(n) for n in names]
        return _Table(names, [[r[j] for j in js] for r in self.rows])

    def to_string(self):
        cells = [[] for _ in self.rows]
        for j in range(len(self.columns)):
            for row, text in zip(cells, _column_text([r[j] for r in self.rows])):
                row.append(text)
        index = [str(i) for i in range(len(self.rows))]
        iw = max((len(i) for i in index), default=0)
        widths = [max([len(str(c))] + [len(r[j]) for r in cells])
                  for j, c in enumerate(self.columns)]
        lines = [" " * iw + "".join("  " + str(c).rjust(w) for c, w in zip(self.columns, widths))]
        for i, row in zip(index, cells):
            lines.append(i.ljust(iw) + "".join("  " + t.rjust(w) for t, w in zip(row, widths)))
        return "\n".join(lines)

    def to_csv(self, path, float_format="%.6f", index=False):
        import csv
        with open(path, "w", newline="") as f:
            out = csv.writer(f, lineterminator="\n")
            out.writerow(self.columns)
            for r in self.rows:
                out.writerow([float_format % v if isinstance(v, float) else v for v in r])


def _column_text(values):
    """A column's values as pandas prints them: floats with the decimals the
    column needs (one at least, six at most), the rest as str()."""
    floats = [v for v in values if isinstance(v, float) and math.isfinite(v)]
    decimals = 1
    for v in floats:
        text = f"{v:.6f}".rstrip("0")
        decimals = max(decimals, len(text) - text.index(".") - 1)
    return [f"{v:.{decimals}f}" if isinstance(v, float) and math.isfinite(v) else
            "NaN" if _missing(v) else str(v) for v in values]


def _row(values):
    """A row as pandas stores it from a list: numbers all become floats (None
    NaN) when one is a float or None and every value is a number or None."""
    real = all(v is None or isinstance(v, numbers.Real) and not isinstance(v, bool)
               for v in values)
    if real and any(v is None or not isinstance(v, numbers.Integral) for v in values):
        return [float("nan") if v is None else float(v) for v in values]
    return values


class Mark:
    """What perf_report gives: run(show_plots=False, print_data=False,
    save_path='', return_df=False, **kwargs) runs fn over each benchmark, as
    triton.testing.Mark. Tables print and save without pandas; return_df
    needs pandas, and plots need matplotlib (without it none is drawn, and
    a note says so)."""

    def __init__(self, fn, benchmarks):
        self.fn, self.benchmarks = fn, benchmarks

    def _run(self, bench, save_path, show_plots, print_data, diff_col=False, save_precision=6,
             **kwargs):
        x_names = list(bench.x_names)
        means = [f"{x} ({bench.ylabel})" for x in bench.line_names]
        mins = [f"{x}-min ({bench.ylabel})" for x in bench.line_names]
        maxs = [f"{x}-max ({bench.ylabel})" for x in bench.line_names]
        rows = []
        for x in bench.x_vals:
            x = list(x) if isinstance(x, (list, tuple)) else [x] * len(x_names)
            if len(x) != len(x_names):
                raise ValueError(f"Expected {len(x_names)} values, got {x}")
            point = dict(zip(x_names, x))
            mean, lo, hi = [], [], []
            for y in bench.line_vals:
                ret = self.fn(**point, **{bench.line_arg: y}, **bench.args, **kwargs)
                try:
                    m, a, b = ret
                except TypeError:
                    m, a, b = ret, None, None
                mean.append(m), lo.append(a), hi.append(b)
            rows.append(_row(x + mean + lo + hi))
        table = _frame(x_names + means + mins + maxs, rows)
        if bench.plot_name and (show_plots or save_path):
            _plot(bench, table, x_names[0], means, mins, maxs, show_plots, save_path)
        table = table[x_names + means] if hasattr(table, "iloc") else table.select(x_names + means)
        if diff_col and len(table.columns) == 2:
            first, second = list(table.columns)
            if hasattr(table, "iloc"):
                table["Diff"] = table[second] - table[first]
            else:
                table = _Table([first, second, "Diff"],
                               [[a, b, b - a] for a, b in table.rows])
        if print_data:
            print(bench.plot_name + ":")
            print(table.to_string())
        if save_path:
            os.makedirs(save_path, exist_ok=True)
            table.to_csv(os.path.join(save_path, f"{bench.plot_name}.csv"),
                         float_format=f"%.{save_precision}f", index=False)
        return table

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        if return_df:
            try:
                import pandas  # noqa: F401
            except ImportError:
                raise ImportError("tk: perf_report's run(return_df=True) needs pandas, which is "
                                  "not installed (the table prints with print_data=True and "
                                  "saves with save_path= without it)") from None
        single = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if single else self.benchmarks
        tables = []
        try:
            for bench in benchmarks:
                tables.append(self._run(bench, save_path, show_plots, print_data, **kwargs))
        finally:
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                with open(os.path.join(save_path, "results.html"), "w") as html:
                    html.write("<html><body>\n")
                    for bench in benchmarks[:len(tables)]:
                        html.write(f"<image src=\"{bench.plot_name}.png\"/>\n")
                    html.write("</body></html>\n")
        if return_df:
            return tables[0] if single else tables
        return None


def _frame(columns, rows):
    """A pandas DataFrame of the rows where pandas is installed, else a _Table."""
    try:
        import pandas as pd
    except ImportError:
        return _Table(columns, rows)
    df = pd.DataFrame(columns=columns)
    for r in rows:
        df.loc[len(df)] = r
    return df


_warned_plots = []


def _plot(bench, table, first_x, means, mins, maxs, show, save_path):
    """The benchmark's lines (a band from min to max where fn gave them),
    shown or saved as {plot_name}.png; a note once where matplotlib is missing."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        if not _warned_plots:
            _warned_plots.append(True)
            print("tk: matplotlib is not installed: perf_report draws no plots", file=sys.stderr)
        return
    plt.figure()
    ax = plt.subplot()
    xs = _values(table, first_x)
    for i, (mean, lo, hi) in enumerate(zip(means, mins, maxs)):
        col = bench.styles[i][0] if bench.styles else None
        sty = bench.styles[i][1] if bench.styles else None
        ax.plot(xs, _values(table, mean), label=mean, color=col, ls=sty)
        bottom, top = _values(table, lo), _values(table, hi)
        if not all(map(_missing, bottom)) and not all(map(_missing, top)):
            ax.fill_between(xs, [float("nan") if v is None else float(v) for v in bottom],
                            [float("nan") if v is None else float(v) for v in top],
                            alpha=0.15, color=col)
    ax.legend()
    ax.set_xlabel(bench.xlabel or first_x)
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    if show:
        plt.show()
    if save_path:
        os.makedirs(save_path, exist_ok=True)
        plt.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))


def _values(table, name):
    return list(table[name]) if hasattr(table, "iloc") else table.column(name)


def _missing(v):
    return v is None or (isinstance(v, float) and v != v)


def perf_report(benchmarks):
    """@perf_report(Benchmark or [Benchmark, ...]) turns fn into a Mark,
    whose run() runs the benchmarks, as in Triton."""
    return lambda fn: Mark(fn, benchmarks)


def __getattr__(name):
    raise AttributeError(f"tk's triton.testing facade has no '{name}'")
