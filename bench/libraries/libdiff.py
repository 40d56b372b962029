"""libdiff.py: the run loop shared by the cases_*.py files of this folder,
which call the public operators of real kernel libraries (forward and
backward) on seeded inputs and save every output and input gradient, so
that a run under Triton and a run under tk (`python3 -m tk`) can be
compared (compare.py). The library itself is not part of the project: put
a checkout of it on PYTHONPATH.

    PYTHONPATH=LIB python3 cases_X.py OUT_TRITON [-k REGEX] [--time]
    PYTHONPATH=PACK:LIB python3 -m tk cases_X.py OUT_TK [-k REGEX] [--time]
    python3 compare.py OUT_TRITON OUT_TK

A case that raises is saved as NAME.err with its traceback; --time adds the
median CUDA-event time of forward plus backward (after warm-up), and the
device time of each of the library's own kernels in a step (torch.profiler),
which compare.py sets side by side: a whole operator's time is mostly the
host's and torch's, the same under both.
--one-config keeps each autotuned kernel to the first config its pruning
leaves, on either side, for a comparison of results where tuning every
config of a library at its first call takes too long (not for timing)."""
import os
import re
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gemm import median_ms  # noqa: E402

bf, f32 = torch.bfloat16, torch.float32
DEV = os.environ.get("LIBDIFF_DEVICE", "cuda")  # "cpu": tk's interpreter (TK_INTERPRET=1)
# The shapes a cases file picks: "cpu" (small, for the interpreter), "mid"
# (larger, for the interpreter on a GPU run's inputs) or "full".
SHAPES = os.environ.get("LIBDIFF_SHAPES", "cpu" if DEV == "cpu" else "full")


class Cases(list):
    """A file's cases, in order; decorating a function adds it."""

    def __call__(self, fn):
        self.append(fn)
        return fn


def rand(*shape, dt=torch.bfloat16, g=True, scale=1.0):
    """A seeded normal tensor on DEV, made in fp32 and cast; a leaf that
    needs its gradient unless g is False."""
    t = (torch.randn(*shape, device=DEV, dtype=torch.float32) * scale).to(dt)
    return t.requires_grad_(g)


class same_inputs:
    """While a case makes its inputs: the random tensors it asks of the GPU
    are drawn on the CPU and moved, so that a GPU run and an interpreter
    run (same SHAPES) take the same inputs."""
    NAMES = ("randn", "rand", "randint", "randperm")

    def __enter__(self):
        self.saved = {n: getattr(torch, n) for n in self.NAMES}
        for n, f in self.saved.items():
            setattr(torch, n, self.wrap(f))

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(torch, n, f)

    @staticmethod
    def wrap(f):
        def on_cpu(*a, device=None, **kw):
            return f(*a, **kw).to(device) if device is not None else f(*a, **kw)
        return on_cpu


_UPSTREAM = {}


def upstream(out):
    """A fixed random cotangent for one output (the same on both sides and
    on every device), drawn once per shape: drawn on the CPU at every timed
    step it was most of what --time measured."""
    key = (tuple(out.shape), str(out.device))
    if key not in _UPSTREAM:
        gen = torch.Generator().manual_seed(7)
        _UPSTREAM[key] = torch.randn(out.shape, dtype=torch.float32, generator=gen).to(out.device)
    return _UPSTREAM[key]


def forward(fn):
    """The case's outputs, and a scalar whose backward gives every input's
    gradient (0 where no output needs one)."""
    outs = fn()
    if not isinstance(outs, (tuple, list)):
        outs = [outs]
    outs = [o for o in outs if isinstance(o, torch.Tensor)]
    loss = 0
    for o in outs:
        if o.requires_grad and o.is_floating_point():
            loss = loss + (o.float() * upstream(o)).sum()
    return outs, loss


def run_case(case, out, timed):
    torch.manual_seed(0)
    t0 = time.perf_counter()
    with same_inputs():
        ins, fn = case()
    outs, loss = forward(fn)
    grads = []
    if not isinstance(loss, int):
        loss.backward()
        grads = [i.grad for i in ins if i.grad is not None]
    if DEV == "cuda":
        torch.cuda.synchronize()
    res = {"outs": [o.detach().float().cpu() for o in outs],
           "grads": [g.float().cpu() for g in grads]}
    first = (time.perf_counter() - t0) * 1e3
    if timed and DEV == "cuda":
        def step():
            for i in ins:
                i.grad = None
            _, again = forward(fn)
            if not isinstance(again, int):
                again.backward()
        res["ms"] = median_ms(torch, step, 20, warmup=3)
        res["kernels"] = kernel_times(step)
    torch.save(res, os.path.join(out, case.__name__ + ".pt"))
    extra = ""
    if "ms" in res:
        extra = " fwd+bwd %.3f ms, its kernels %.1f us" % (res["ms"], sum(res["kernels"].values()))
    print("OK %s first %.0f ms%s" % (case.__name__, first, extra), flush=True)


# Kernels that are not the library's own: torch's element-wise and
# reduction kernels, cuBLAS's and CUTLASS's GEMMs, copies and fills.
FOREIGN = re.compile(r"^(void |nvjet|Memset|Memcpy|cutlass|cublas|sm\d+_|ampere_|gemv|gemm|std::)")


def kernel_times(step, reps=10):
    """The device time of each of the library's kernels in one step, in
    microseconds (torch.profiler over reps steps): whole operators are
    mostly host time and torch's own kernels, the same on both sides."""
    from torch.profiler import profile as prof, ProfilerActivity as A
    step()
    torch.cuda.synchronize()
    with prof(activities=[A.CUDA]) as p:
        for _ in range(reps):
            step()
        torch.cuda.synchronize()
    times = {}
    for e in p.key_averages():
        if e.device_type.name == "CUDA" and not FOREIGN.match(e.key):
            times[e.key] = times.get(e.key, 0.0) + e.device_time_total / reps
    return times


def seq_lens(n, lo, hi):
    """n sequence lengths drawn from [lo, hi] (a serving batch)."""
    return torch.randint(lo, hi + 1, (n,)).tolist()


def offsets(lens):
    """[0, l0, l0+l1, ...] as int32 on DEV: each sequence's start, and the end."""
    out = torch.zeros(len(lens) + 1, dtype=torch.int32, device=DEV)
    out[1:] = torch.cumsum(torch.tensor(lens, device=DEV), 0)
    return out


# MoE routing as vLLM's and SGLang's fused_experts prepare it (their
# moe_align_block_size is a CUDA op), for cases_vllm.py and cases_sglang.py.
def routing(t, e, k):
    """Softmax top-k routing: float32 weights and int32 expert ids, (t, k)."""
    w, ids = torch.topk(torch.softmax(torch.randn(t, e, device=DEV), -1), k)
    return w.contiguous(), ids.to(torch.int32)

def moe_align(topk_ids, e, bm):
    """moe_align_block_size: the flat (token, slot) indices grouped by expert
    (in order within one), each expert's run padded to a multiple of bm with
    the index numel() (no row); the expert of each bm-row block; the padded
    length. Sized as vLLM and SGLang allocate them: numel() + e * (bm - 1) indices;
    blocks past the padded length are never read."""
    flat = topk_ids.flatten().long(); n = flat.numel(); d = flat.device
    count = torch.bincount(flat, minlength=e)
    padded = (count + bm - 1) // bm * bm
    order = torch.sort(flat, stable=True).indices
    ex = flat[order]
    pos = (torch.cumsum(padded, 0) - padded)[ex] + torch.arange(n, device=d) - (torch.cumsum(count, 0) - count)[ex]
    cap = n + e * (bm - 1)
    sorted_ids = torch.full((cap,), n, dtype=torch.int32, device=d)
    sorted_ids[pos] = order.to(torch.int32)
    blocks = torch.repeat_interleave(torch.arange(e, device=d), padded // bm)
    expert_ids = torch.zeros(-(-cap // bm), dtype=torch.int32, device=d)
    expert_ids[:blocks.numel()] = blocks.to(torch.int32)
    return sorted_ids, expert_ids, padded.sum().reshape(1).to(torch.int32)


def one_config():
    """Wraps triton.autotune (Triton's or tk's facade, whichever `import
    triton` gives) so that each kernel's early pruning ends by keeping the
    first config left. Runs before the library is imported."""
    import triton
    tune = triton.autotune

    def first_only(configs, key, prune_configs_by=None, **kw):
        by = dict(prune_configs_by or {})
        user = by.get("early_config_prune")

        def prune(cfgs, named_args, **more):
            return list(user(cfgs, named_args, **more) if user else cfgs)[:1]
        by["early_config_prune"] = prune
        return tune(configs, key, prune_configs_by=by, **kw)
    triton.autotune = first_only


def main(cases):
    out = sys.argv[1]
    if "--one-config" in sys.argv:
        one_config()
    pat = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    os.makedirs(out, exist_ok=True)
    for case in cases:
        if pat and not re.search(pat, case.__name__):
            continue
        try:
            run_case(case, out, "--time" in sys.argv)
        except Exception as e:  # the next case still runs; a fault ends them all
            msg = "".join(traceback.format_exception_only(type(e), e)).strip()
            print("FAIL %s: %s" % (case.__name__, msg[-1500:]), flush=True)
            with open(os.path.join(out, case.__name__ + ".err"), "w") as f:
                traceback.print_exc(file=f)
