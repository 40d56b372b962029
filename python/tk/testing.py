"""tk's triton.testing: do_bench on libtk's tk_bench (CUDA events and a
cold L2 per run on the GPU, wall-clock times on the interpreter),
assert_close, and a small perf_report/Benchmark."""
import os
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


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Milliseconds per call of fn, as triton.testing.do_bench."""
    median, mean, lo, hi, p20, p80, _ = _tk.bench(fn, float(warmup), float(rep), _device())
    if quantiles is not None:
        table = {0.5: median, 0.2: p20, 0.8: p80, 0.0: lo, 1.0: hi}
        out = [table.get(round(q, 6), median) for q in quantiles]
        return out[0] if len(out) == 1 else out
    return {"min": lo, "max": hi, "mean": mean, "median": median, "all": [median]}[return_mode]


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    import numpy as np

    def host(a):
        return a.detach().float().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)
    np.testing.assert_allclose(host(x), host(y), atol=atol or 1e-2, rtol=rtol or 0,
                               err_msg=err_msg)


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
