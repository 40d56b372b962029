"""registry.py: how bench/corpus.py describes one corpus launch (a Case) and
the host-side number formats it needs. numpy only, so that the same cases
run on tk's interpreter without torch or triton.

A Case names a corpus module and one of its kernels, and gives, as
functions of a size dict S (one for the GPU, one small for the
interpreter): the buffers (make), the runtime arguments in the kernel's
order (args), the constexprs, the grid, and a float64 reference of the
outputs. Buffers carry their storage array and their element type; bf16
is stored as uint16 and fp8 as uint8 (numpy has neither), and f64()
decodes any of them exactly.
"""
import numpy as np

# ---- number formats ---------------------------------------------------------------------


def bf16_encode(x):
    """float -> bf16 bits, rounding to nearest even (as the GPU's cvt.rn)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def bf16_decode(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def _e4m3_table():
    b = np.arange(256)
    s = np.where(b >> 7, -1.0, 1.0)
    e, m = (b >> 3) & 15, b & 7
    v = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0)) * s
    v[(b & 0x7F) == 0x7F] = np.nan
    return v


E4M3 = _e4m3_table()
_E4M3_POS = E4M3[:127]  # bytes 0..126: the finite non-negative values, increasing


def fp8_encode(x):
    """float -> e4m3fn bits, nearest value (ties away from zero), saturating at 448."""
    x = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.abs(x), 448.0)
    hi = np.clip(np.searchsorted(_E4M3_POS, a), 0, 126)
    lo = np.maximum(hi - 1, 0)
    pick = np.where(np.abs(_E4M3_POS[lo] - a) < np.abs(_E4M3_POS[hi] - a), lo, hi)
    return (pick | np.where(x < 0, 0x80, 0)).astype(np.uint8)


def fp8_decode(b):
    return E4M3[b]


# element type -> numpy storage type
STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "f8e4": np.uint8,
           "f64": np.float64, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


class Buf:
    """A buffer: its storage array and element type. out: the kernel only
    writes it (poisoned before a checked run); inout: read and written, put
    back to its first contents before every run."""

    def __init__(self, arr, dt, out=False, inout=False, ptr_table=None):
        self.arr = np.ascontiguousarray(arr, dtype=STORAGE[dt])
        self.dt, self.out, self.inout = dt, out, inout
        self.ptr_table = ptr_table  # names of buffers whose addresses it holds (int64)

    def f64(self, arr=None):
        a = self.arr if arr is None else arr
        if self.dt == "bf16":
            return bf16_decode(a).astype(np.float64)
        if self.dt == "f8e4":
            return fp8_decode(a)
        return a.astype(np.float64)


def floats(rng, shape, dt, scale=1.0, shift=0.0):
    """A random normal buffer rounded to dt."""
    x = rng.standard_normal(shape) * scale + shift
    return Buf(to_dt(x, dt), dt)


def to_dt(x, dt):
    if dt == "bf16":
        return bf16_encode(x)
    if dt == "f8e4":
        return fp8_encode(x)
    return np.asarray(x).astype(STORAGE[dt])


def out(shape, dt):
    return Buf(np.zeros(shape, dtype=STORAGE[dt]), dt, out=True)


def zeros(shape, dt):
    """An in-place buffer that starts at zero (atomics accumulate into it)."""
    return Buf(np.zeros(shape, dtype=STORAGE[dt]), dt, inout=True)


def ints(rng, shape, lo, hi, dt="i32"):
    return Buf(rng.integers(lo, hi, shape), dt)


def ptr_table(names):
    return Buf(np.zeros(len(names), dtype=np.int64), "i64", ptr_table=list(names))


def group_operands(rng, groups, dt, b_nk=False):
    """A, B and C of each (m, n, k) group (B [k, n], or [n, k] with b_nk),
    the tables pa, pb, pc of their addresses and `sizes` (m, n, k per group)."""
    d = {}
    for i, (m, n, k) in enumerate(groups):
        d[f"a{i}"] = floats(rng, (m, k), dt)
        d[f"b{i}"] = floats(rng, (n, k) if b_nk else (k, n), dt)
        d[f"c{i}"] = out((m, n), dt)
    for t in "abc":
        d[f"p{t}"] = ptr_table([f"{t}{i}" for i in range(len(groups))])
    d["sizes"] = Buf(np.array([v for grp in groups for v in grp]), "i32")
    return d


class I32:
    def __init__(self, v):
        self.v = int(v)


class I64:
    def __init__(self, v):
        self.v = int(v)


class F32:
    def __init__(self, v):
        self.v = float(v)


class Dtype:
    """A dtype constexpr ("tl.bfloat16"): tk gets the text, Triton the object."""

    def __init__(self, text):
        self.text = text

    def triton(self):
        import triton.language as tl
        return getattr(tl, self.text.split(".")[-1])


class Case:
    """One corpus launch. make(rng, S) -> {name: Buf}; args(S, bufs) -> the
    runtime arguments in order (buffer names, I32, I64, F32); consts(S) ->
    constexprs; grid(S) -> tuple; ref(X, S) -> {out name: float64 array}
    where X maps every buffer name to its float64 inputs. tol: the largest
    relative error ||out - ref|| / ||ref|| (a float, or per output).
    xfail: why tk is expected to fail it (kept so the failure stays seen).
    config: "fixed" (both compilers get the same constexprs and warps) is
    the only mode today; autotuned kernels are launched with one of their
    own configs.
    prelude: another kernel of the same module launched (untimed) by the
    same side just before the checked one, as dict(kernel=, args=, consts=,
    grid=); derive(X, got, S) -> refs: the reference computed after the run
    from the inputs and the outputs read back (for kernels whose right
    answer depends on their own random stream, checked through what the
    prelude wrote)."""

    def __init__(self, name, module, kernel, make, args, grid, ref=None, consts=None, gpu=None,
                 interp=None, warps=4, stages=3, tol=5e-3, xfail=None, xfail_gpu=None,
                 shape=None, klass="", prelude=None, derive=None):
        self.name, self.module, self.kernel = name, module, kernel
        self.make, self.args, self.grid, self.ref = make, args, grid, ref
        self.consts = consts or (lambda S: {})
        self.sizes = {"gpu": gpu or {}, "interp": interp or gpu or {}}
        self.warps, self.stages, self.tol = warps, stages, tol
        self.xfail, self.xfail_gpu = xfail, xfail_gpu
        # size dicts: lower-case keys are problem sizes, upper-case ones block sizes
        self.shape = shape or (lambda S: "x".join(str(v) for k, v in S.items()
                                                   if k.islower() and k not in ("warps", "stages")))
        self.klass = klass
        self.prelude, self.derive = prelude, derive
        if (ref is None) == (derive is None):
            raise ValueError(f"{name}: give ref or derive, one of them")

    def size(self, mode):
        return dict(self.sizes[mode])

    def warps_for(self, S):
        return S.get("warps", self.warps)

    def stages_for(self, S):
        return S.get("stages", self.stages)

    def tol_for(self, name):
        return self.tol[name] if isinstance(self.tol, dict) else self.tol


CASES = []


def case(**kw):
    c = Case(**kw)
    if any(x.name == c.name for x in CASES):
        raise ValueError(f"two corpus cases named {c.name}")
    CASES.append(c)
    return c


def cdiv(a, b):
    return (a + b - 1) // b
