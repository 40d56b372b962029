"""Kernels for the tests, written with tk's own imports; tk compiles this
file, so the host code here stays plain."""
import tk
import tk.language as tl


@tk.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@tk.jit
def axpb(x_ptr, out_ptr, n, a, b_ptr, BLOCK: tl.constexpr = 64, SQUARE: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if SQUARE:
        x = x * x
    y = x * a
    if b_ptr is not None:
        y = y + tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, y, mask=mask)


@tk.jit
def row_sum(x_ptr, out_ptr, rows, cols, stride_r, stride_c, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * stride_r + c * stride_c, mask=c < cols, other=0.0)
    tl.store(out_ptr + r, tl.sum(x, axis=0))


@tk.jit
def fill2d(out_ptr, value, stride, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(out_ptr + r[:, None] * stride + c[None, :], tl.full((BM, BN), value, tl.int32))


@tk.autotune(configs=[tk.Config({"BLOCK": 32}, num_warps=1), tk.Config({"BLOCK": 64}, num_warps=2)],
             key=["n"])
@tk.jit
def scale_tuned(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@tk.heuristics({"BLOCK": lambda args: tk.next_power_of_2(args["n"])})
@tk.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))


@tk.jit
def cast_to(x_ptr, out_ptr, n, DT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(DT), mask=mask)


PRUNE_CALLS = []


def keep_block_64(configs, named_args, **kwargs):
    PRUNE_CALLS.append(named_args["n"])
    return [c for c in configs if c.kwargs["BLOCK"] == 64]


@tk.autotune(configs=[tk.Config({"BLOCK": 32}), tk.Config({"BLOCK": 64})], key=["n"],
             prune_configs_by={"early_config_prune": keep_block_64})
@tk.jit
def scale_pruned(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


PRUNE_KWARGS = []


def keep_by_kwargs(configs, named_args, **kwargs):
    # Triton's call: the launch's keyword arguments, with grid and warmup
    PRUNE_KWARGS.append(sorted(kwargs))
    return [c for c in configs if c.kwargs["BLOCK"] == kwargs["x_ptr"].size // 2]


def keep_first(configs, named_args):  # older Triton's two-argument form
    PRUNE_KWARGS.append(named_args["n"])
    return configs[:1]


@tk.autotune(configs=[tk.Config({"BLOCK": 32}), tk.Config({"BLOCK": 64})], key=["n"],
             prune_configs_by={"early_config_prune": keep_by_kwargs})
@tk.jit
def scale_pruned_kw(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


@tk.autotune(configs=[tk.Config({"BLOCK": 32}), tk.Config({"BLOCK": 64})], key=["n"],
             prune_configs_by={"early_config_prune": keep_first})
@tk.jit
def scale_pruned_two(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 4.0, mask=mask)


@tk.jit(do_not_specialize=["n"])
def add_any_n(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + n, mask=mask)


@tk.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@tk.autotune(configs=[tk.Config({"BLOCK": 32})], key=["n"])
@tk.jit
def even_outside(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@tk.jit
def foreach_axpy(xs, ys, sizes, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    n, alpha = sizes
    for i in tl.static_range(len(xs)):
        mask = offs < n
        y = tl.load(ys[i] + offs, mask=mask)
        tl.store(ys[i] + offs, y + alpha * tl.load(xs[i] + offs, mask=mask), mask=mask)


@tk.jit
def nested_args(args, out, BLOCK: tl.constexpr):
    data, extra = args
    x_ptr, n = data
    bias_ptr, scale = extra
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs, mask=offs < n)
    tl.store(out + offs, x * scale, mask=offs < n)


@tk.jit
def strided_scale(out_ptr, x_ptr, stride: tl.int64, scale: tl.float32, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride) * scale)


@tk.jit
def int_widths(out_ptr, a: tl.int8, b: tl.int16, c: tl.int32, d: "tl.int64", e: tl.uint8,
               f: tl.uint16, g: tl.uint32, h: tl.uint64, t: tl.int1):
    tl.store(out_ptr + 0, a)
    tl.store(out_ptr + 1, b)
    tl.store(out_ptr + 2, c)
    tl.store(out_ptr + 3, d)
    tl.store(out_ptr + 4, e)
    tl.store(out_ptr + 5, f)
    tl.store(out_ptr + 6, g)
    tl.store(out_ptr + 7, h)
    tl.store(out_ptr + 8, t)


@tk.jit
def float_widths(out_ptr, a: tl.float16, b: tl.bfloat16, c: tl.float32, d: tl.float64, e: float):
    tl.store(out_ptr + 0, a)
    tl.store(out_ptr + 1, b)
    tl.store(out_ptr + 2, c)
    tl.store(out_ptr + 3, d)
    tl.store(out_ptr + 4, e)


@tk.autotune(configs=[tk.Config({"BLOCK": 16}), tk.Config({"BLOCK": 32})], key=["n"],
             reset_to_zero=["c_ptr"])
@tk.jit
def count_tuned(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(c_ptr + offs, 1.0, mask=offs < n)


def _seen(nargs):
    """A config's pre_hook that only looks: the first element it sees."""
    _seen.first.append(float(nargs["c_ptr"][0]))


_seen.first = []


@tk.autotune(configs=[tk.Config({"BLOCK": 16}, pre_hook=_seen), tk.Config({"BLOCK": 32})],
             key=["n"], reset_to_zero=["c_ptr"])
@tk.jit
def count_hooked(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(c_ptr + offs, 1.0, mask=offs < n)


@tk.autotune(configs=[tk.Config({"BLOCK": 16})], key=["n"], reset_to_zero=["c_ptr"])
@tk.jit
def count_one_config(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(c_ptr + offs, 1.0, mask=offs < n)


def heur_block(args):
    n = args["n"]
    return tk.next_power_of_2(n)


@tk.heuristics({"BLOCK": heur_block})
@tk.jit
def total_by_fn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))


EVEN_SEEN = []


def _even(args):
    EVEN_SEEN.append((args["BLOCK"], args["n"], args["num_warps"]))
    return args["n"] % args["BLOCK"] == 0


@tk.autotune(configs=[tk.Config({"BLOCK": 64}, num_warps=2), tk.Config({"BLOCK": 128})],
             key=["n"])
@tk.heuristics({"EVEN": _even})
@tk.jit
def double_even(out_ptr, x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@tk.heuristics({"SCALE": lambda args: 3})
@tk.autotune(configs=[tk.Config({"BLOCK": 32}), tk.Config({"BLOCK": 64})], key=["n"])
@tk.heuristics({"TWICE": lambda args: 2 * args["BLOCK"] // 32,
                "FACTOR": lambda args: args["SCALE"] * args["TWICE"]})
@tk.heuristics({"TWICE": lambda args: 0})
@tk.jit
def scaled_tuned(out_ptr, x_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr,
                 FACTOR: tl.constexpr, TWICE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)


@tk.autotune(configs=[tk.Config({"BLOCK": 16}), tk.Config({"BLOCK": 32})], key=["n"])
@tk.jit
def fill_block(out_ptr, n, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, BLOCK, mask=offs < n)


@tk.jit
def tk_spelled(out_ptr, v: "i64:16"):
    tl.store(out_ptr, v)


def zero_names(names):
    """A Config pre_hook in mamba's style: zeroes the named buffers."""
    def hook(nargs):
        HOOK_CALLS.append(sorted(k for k in nargs if not k.startswith("num_")))
        for name in names:
            nargs[name][...] = 0
    return hook


HOOK_CALLS = []


@tk.autotune(configs=[tk.Config({"BLOCK": 16}, pre_hook=zero_names(["acc_ptr"])),
                      tk.Config({"BLOCK": 32}, pre_hook=zero_names(["acc_ptr"]))], key=["n"])
@tk.jit
def accumulate_hooked(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(acc_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


TUNE_HOOKS = []


@tk.autotune(configs=[tk.Config({"BLOCK": 16})], key=["n"],
             pre_hook=lambda nargs, reset_only=False: TUNE_HOOKS.append("pre"),
             post_hook=lambda nargs, exception: TUNE_HOOKS.append("post"))
@tk.jit
def accumulate_tune_hooks(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(acc_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@tk.jit
def fill_halves(a_ptr, b_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(a_ptr + row * stride + cols, tl.full([BLOCK], 1.0, tl.float32), mask=cols < n)
    tl.store(b_ptr + row * stride + cols, tl.full([BLOCK], 2.0, tl.float32), mask=cols < n)


# scale_plain, scale_restored and scale_wrapped are one kernel three times:
# libtk keeps one tuner per function, and each test tunes its own.
@tk.jit
def scale_plain(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@tk.jit
def scale_restored(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@tk.jit
def accumulate_plain(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(acc_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@tk.jit
def scale_wrapped(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@tk.jit
def gather_at(inp_ptr, idx_ptr, out_ptr, n, dim_stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx_ptr + offs, mask=m, other=0)
    tl.store(out_ptr + offs, tl.load(inp_ptr + i * dim_stride, mask=m), mask=m)


@tk.autotune(configs=[tk.Config({"BLOCK": 128}), tk.Config({"BLOCK": 32})], key=["D"])
@tk.jit
def copy_fits(x_ptr, out_ptr, D: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= D)
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@tk.autotune(configs=[tk.Config({"BLOCK": 128}), tk.Config({"BLOCK": 64})], key=["D"])
@tk.jit
def copy_never_fits(x_ptr, out_ptr, D: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= D, "BLOCK must not exceed D")
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@tk.autotune(configs=[tk.Config({}, num_warps=4), tk.Config({}, num_warps=8)], key=["n"],
             restore_value=["acc"])
@tk.heuristics({"BLOCK": lambda a: tk.next_power_of_2(a["n"])})
@tk.jit
def accumulate_tuned(x, acc, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(x + o, mask=o < n, other=0.0)
    tl.store(acc, tl.load(acc) + tl.sum(v))
