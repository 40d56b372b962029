"""tk's triton.testing: do_bench on libtk's tk_bench (CUDA events and a
cold L2 per run on the GPU, wall-clock times on the interpreter),
assert_close, and a small perf_report/Benchmark."""
import math
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
    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names=None, plot_name="",
                 args=None, xlabel="", ylabel="", x_log=False, y_log=False, styles=None, **kw):
        self.x_names, self.x_vals, self.line_arg, self.line_vals = x_names, x_vals, line_arg, \
            line_vals
        self.line_names, self.plot_name, self.args = line_names or line_vals, plot_name, args or {}


def perf_report(benchmarks):
    """Runs fn over each benchmark's grid and prints a table (no plots)."""
    def wrap(fn):
        def run(show_plots=False, print_data=True, **kw):
            for b in benchmarks if isinstance(benchmarks, list) else [benchmarks]:
                print(b.plot_name)
                for x in b.x_vals:
                    xs = x if isinstance(x, (list, tuple)) else [x] * len(b.x_names)
                    point = dict(zip(b.x_names, xs))
                    row = [fn(**point, **{b.line_arg: lv}, **b.args) for lv in b.line_vals]
                    print(" ".join(str(v) for v in xs), *row)
        fn.run = run
        return fn
    return wrap


def __getattr__(name):
    raise AttributeError(f"tk's triton.testing facade has no '{name}'")
