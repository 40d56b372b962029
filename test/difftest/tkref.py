"""tkref.py: the independent reference of difftest.

A small interpreter, in pure Python (stdlib only), for the subset of the
Triton language that gen.py writes.  It reads the kernel file itself (with
the `ast` module), so a hand-reduced kernel can be checked the same way as a
generated one.  It follows Triton 3.6's typing rules (semantic.py:
computation_type_impl, integer_promote_impl, cast, the reductions of
standard.py), not tk's, so that it is a second opinion.

Values.  A block is a `T`: a dtype, a shape (a tuple of ints, () for a
scalar) and a flat row-major list of Python numbers.  Integers are kept
wrapped to their dtype (unsigned ones non-negative); floats are Python floats
holding a value exactly representable in their dtype.  Float blocks also
carry, per element, `e`: a bound on how far another correct implementation
may be from this value (rounding-order freedom: FMA contraction, reduction
and scan order, approximate division, sqrt and transcendental functions).
`e` is 0 while a value is computed only by correctly rounded operations from
exact inputs.

Undefined values.  An element is None when a correct implementation may give
anything there: a masked load without `other`, a float comparison or cast
whose outcome is within the error bound of flipping, a float overflow, a NaN,
an out-of-range float->int cast, a shift by the width or more, an integer
division by zero.  None propagates.  It is harmless in lanes that are never
stored; `Invalid` is raised when one reaches memory (store, atomic), a branch
condition, a loop bound or an address, which is how gen.py rejects a
candidate program.
"""
import ast
import math
import random
import struct

INF = float("inf")


class Invalid(Exception):
    """The program is not a usable test (or not valid Triton)."""


# ---------------------------------------------------------------- dtypes

# name: (kind, bits, signed); kind 'b' bool, 'i' integer, 'f' float
DTYPES = {
    "i1": ("b", 1, False),
    "i8": ("i", 8, True), "i16": ("i", 16, True), "i32": ("i", 32, True), "i64": ("i", 64, True),
    "u8": ("i", 8, False), "u16": ("i", 16, False), "u32": ("i", 32, False), "u64": ("i", 64, False),
    "fp16": ("f", 16, True), "bf16": ("f", 16, True), "fp32": ("f", 32, True), "fp64": ("f", 64, True),
}
TL_NAME = {
    "i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
}
FROM_TL = {v: k for k, v in TL_NAME.items()}
FROM_TL.update({"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64"})
INT_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOAT_TYPES = ["fp16", "bf16", "fp32", "fp64"]
# unit roundoff, smallest normal, largest finite, mantissa bits (Triton's fp_mantissa_width)
U = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24, "fp64": 2.0 ** -53}
TINY = {"fp16": 2.0 ** -14, "bf16": 2.0 ** -126, "fp32": 2.0 ** -126, "fp64": 2.0 ** -1022}
MAXF = {"fp16": 65504.0, "bf16": (2 - 2.0 ** -7) * 2.0 ** 127, "fp32": (2 - 2.0 ** -23) * 2.0 ** 127,
        "fp64": 1.7976931348623157e308}
MANT = {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}
STRUCT = {"i1": "B", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B", "u16": "H", "u32": "I",
          "u64": "Q", "fp16": "e", "bf16": "H", "fp32": "f", "fp64": "d"}
SIZE = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4, "u64": 8,
        "fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8}


def is_float(dt):
    return DTYPES[dt][0] == "f"


def is_int(dt):  # Triton's is_int(): bools included
    return DTYPES[dt][0] in "bi"


def is_bool(dt):
    return dt == "i1"


def is_signed(dt):
    return DTYPES[dt][0] == "i" and DTYPES[dt][2]


def bits(dt):
    return DTYPES[dt][1]


def kind(dt):
    return {"b": 0, "i": 1, "f": 2}[DTYPES[dt][0]]


def int_range(dt):
    b = bits(dt)
    if is_signed(dt):
        return -(1 << (b - 1)), (1 << (b - 1)) - 1
    return 0, (1 << b) - 1


def wrap(v, dt):
    b = bits(dt)
    v &= (1 << b) - 1
    if is_signed(dt) and v >> (b - 1):
        v -= 1 << b
    return v


class DType:
    """A dtype as a value in kernel code (tl.float16)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "tl." + TL_NAME[self.name]


# ---------------------------------------------------------------- rounding

_S16 = struct.Struct("<e")
_S32 = struct.Struct("<f")


def _r16(x):
    try:
        return _S16.unpack(_S16.pack(x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def _r32(x):
    try:
        return _S32.unpack(_S32.pack(x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def _rbf16(x):
    if x != x or x == 0 or x in (INF, -INF):
        return x
    m, e = math.frexp(x)
    scale = max(e - 1, -126) - 7
    q = round(math.ldexp(x, -scale))
    r = math.ldexp(q, scale) if q else math.copysign(0.0, x)
    if abs(r) >= 2.0 ** 128:
        return math.copysign(INF, x)
    return r


ROUND = {"fp16": _r16, "bf16": _rbf16, "fp32": _r32, "fp64": float}


def round_int(v, dt):
    """An exact integer to float dtype dt, rounding to nearest even once."""
    p = MANT[dt] + 1
    a = abs(v)
    n = a.bit_length()
    if n > p:
        sh = n - p
        q, rem = a >> sh, a & ((1 << sh) - 1)
        half = 1 << (sh - 1)
        if rem > half or (rem == half and q & 1):
            q += 1
        a = q << sh
    try:
        r = float(a)
    except OverflowError:
        r = INF
    r = ROUND[dt](r)
    return -r if v < 0 else r


# ---------------------------------------------------------------- bytes

def encode(vals, dt):
    if dt == "bf16":
        out = []
        for x in vals:
            b = _S32.unpack(_S32.pack(x))[0]
            out.append(struct.unpack("<I", struct.pack("<f", b))[0] >> 16)
        vals = out
    elif dt == "i1":
        vals = [1 if x else 0 for x in vals]
    return struct.pack("<%d%s" % (len(vals), STRUCT[dt]), *vals)


def decode(data, dt):
    n = len(data) // SIZE[dt]
    vals = list(struct.unpack("<%d%s" % (n, STRUCT[dt]), data[: n * SIZE[dt]]))
    if dt == "bf16":
        vals = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in vals]
    return vals


def float_bits(x, dt):
    if dt == "bf16":
        return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
    fmt = {"fp16": ("<e", "<H"), "fp32": ("<f", "<I"), "fp64": ("<d", "<Q")}[dt]
    return struct.unpack(fmt[1], struct.pack(fmt[0], x))[0]


def bits_float(b, dt):
    if dt == "bf16":
        return struct.unpack("<f", struct.pack("<I", b << 16))[0]
    fmt = {"fp16": ("<e", "<H"), "fp32": ("<f", "<I"), "fp64": ("<d", "<Q")}[dt]
    return struct.unpack(fmt[0], struct.pack(fmt[1], b))[0]


# ---------------------------------------------------------------- buffers

def make_buffer(spec):
    """The initial contents of a buffer argument from its header entry."""
    dt, n, init = spec["dtype"], spec["size"], spec["init"]
    r = random.Random(init.get("seed", 0))
    k = init["kind"]
    if k == "fill":
        v = init["value"]
        return [ROUND[dt](float(v)) if is_float(dt) else wrap(int(v), dt)] * n
    if k == "arange":
        return [ROUND[dt](float(i)) if is_float(dt) else wrap(i, dt) for i in range(n)]
    if k == "uniform":  # floats
        lo, hi = init["lo"], init["hi"]
        return [ROUND[dt](r.uniform(lo, hi)) for _ in range(n)]
    if k == "normal":
        return [ROUND[dt](r.gauss(0.0, init.get("sigma", 1.0))) for _ in range(n)]
    if k == "dyadic":  # small multiples of 1/8: exact in every float type
        lim = init.get("lim", 64)
        return [ROUND[dt](r.randint(-lim, lim) / 8.0) for _ in range(n)]
    if k == "randint":
        lo, hi = init["lo"], init["hi"]
        return [wrap(r.randint(lo, hi), dt) if is_int(dt) else ROUND[dt](float(r.randint(lo, hi)))
                for _ in range(n)]
    if k == "bits":  # any bit pattern of an integer type
        b = bits(dt)
        return [wrap(r.getrandbits(b), dt) for _ in range(n)]
    raise Invalid("unknown init kind " + k)


# ---------------------------------------------------------------- typing (Triton's rules)

def literal_type(x):
    if isinstance(x, bool):
        return "i1"
    if isinstance(x, int):
        if -2 ** 31 <= x < 2 ** 31:
            return "i32"
        if 2 ** 31 <= x < 2 ** 32:
            return "u32"
        if -2 ** 63 <= x < 2 ** 63:
            return "i64"
        if 2 ** 63 <= x < 2 ** 64:
            return "u64"
        raise Invalid("integer literal out of range")
    if isinstance(x, float):
        a = abs(x)
        if a == INF or a == 0.0 or x != x or 2.0 ** -126 <= a <= MAXF["fp32"]:
            return "fp32"
        return "fp64"
    raise Invalid("not a number: %r" % (x,))


def integer_promote(a, b):
    ra, rb = bits(a), bits(b)
    sa, sb = is_signed(a), is_signed(b)
    if sa == sb:
        return a if ra > rb else b
    if not sa:
        return a if ra >= rb else b
    return b if rb >= ra else a


def computation_type(a, a_lit, b, b_lit, div_or_mod):
    if a_lit != b_lit:
        s, t = (a, b) if a_lit else (b, a)
        if kind(s) <= kind(t):
            if div_or_mod and t in ("fp16", "bf16"):
                return "fp32"
            return t
    if a == "fp64" or b == "fp64":
        return "fp64"
    if a == "fp32" or b == "fp32":
        return "fp32"
    if a == "fp16" or b == "fp16":
        return "fp32" if div_or_mod else "fp16"
    if a == "bf16" and b == "bf16":
        return "fp32" if div_or_mod else "bf16"
    if a == "bf16" or b == "bf16":
        return "fp32"
    if div_or_mod and is_signed(a) != is_signed(b):
        raise Invalid("/, // or %% with different signedness (%s, %s)" % (a, b))
    return integer_promote(a, b)


def is_lit(x):
    return isinstance(x, (bool, int, float))


def dtype_of(x):
    return literal_type(x) if is_lit(x) else x.dt


# ---------------------------------------------------------------- blocks

class T:
    __slots__ = ("dt", "shape", "v", "e")

    def __init__(self, dt, shape, v, e=None):
        self.dt, self.shape, self.v, self.e = dt, tuple(shape), v, e
        if e is None and is_float(dt):
            self.e = [0.0] * len(v)

    def __repr__(self):
        return "T(%s, %s, %s)" % (self.dt, self.shape, self.v[:8])


class Ptr:
    """A pointer or a block of pointers into one buffer: element offsets."""
    __slots__ = ("buf", "shape", "v")

    def __init__(self, buf, shape, v):
        self.buf, self.shape, self.v = buf, tuple(shape), v


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def bshape(a, b):
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + a
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise Invalid("shapes %s and %s do not broadcast" % (a, b))
    return tuple(out)


_MAPS = {}


def _index_map(src, dst):
    key = (src, dst)
    m = _MAPS.get(key)
    if m is None:
        s = (1,) * (len(dst) - len(src)) + tuple(src)
        strides, acc = [], 1
        for d in reversed(s):
            strides.append(acc if d != 1 else 0)
            acc *= d
        strides.reverse()
        m = [0]
        for d, st in zip(dst, strides):
            m = [i + j * st for i in m for j in range(d)]
        _MAPS[key] = m
    return m


def expand(t, shape):
    """Values and errors of t broadcast to shape."""
    if t.shape == shape:
        return t.v, t.e
    if len(t.v) == 1:
        n = numel(shape)
        return t.v * n, (t.e * n if t.e is not None else None)
    bshape(t.shape, shape)
    m = _index_map(t.shape, shape)
    v = t.v
    return [v[i] for i in m], ([t.e[i] for i in m] if t.e is not None else None)


def to_block(x, dt):
    """A literal as a scalar block of dtype dt (Triton's scalar_constant)."""
    if isinstance(x, T):
        return cast(x, dt)
    if is_float(dt):
        if isinstance(x, bool):
            x = int(x)
        v = round_int(x, dt) if isinstance(x, int) else ROUND[dt](x)
        return T(dt, (), [v], [0.0])
    if is_bool(dt):
        return T(dt, (), [1 if x else 0])
    if isinstance(x, float):
        raise Invalid("float literal %r used as %s" % (x, dt))
    return T(dt, (), [wrap(int(x), dt)])


# ---------------------------------------------------------------- float helpers

def _fin(dt, r, e, parts_finite=True):
    """Checks a float result: NaN, overflow and near-overflow become None;
    subnormal fp32/bf16 results may be flushed to zero (FTZ) on the GPU."""
    if r != r:
        return None, 0.0
    if r in (INF, -INF):
        return (r, 0.0) if (not parts_finite and e == 0.0) else (None, 0.0)
    if e and abs(r) + e >= MAXF[dt]:
        return None, 0.0
    if abs(r) < TINY[dt] and (e or (r and dt in ("fp32", "bf16"))):
        e += TINY[dt]
    return r, e


def _inf(*xs):
    for x in xs:
        if x in (INF, -INF):
            return True
    return False


def _fadd(dt, a, ea, b, eb, sub):
    x = a - b if sub else a + b
    r = ROUND[dt](x)
    if _inf(a, b):
        if ea or eb or r != r:
            return None, 0.0
        return r, 0.0
    e = ea + eb
    if e:
        # correctly rounded from exact inputs is deterministic; otherwise the
        # inputs' freedom plus this rounding
        e += 2 * U[dt] * abs(r)
    return _fin(dt, r, e)


def _fmul(dt, a, ea, b, eb):
    x = a * b
    r = ROUND[dt](x)
    if _inf(a, b):
        if a == 0 or b == 0 or ea or eb:
            return None, 0.0
        return r, 0.0
    e = abs(a) * eb + abs(b) * ea + ea * eb
    # an inexact product may be fused into a following add (FMA contraction)
    if e or dt == "fp64" or r != x:
        e += 2 * U[dt] * abs(r)
    if e and abs(r) < TINY[dt]:
        e += TINY[dt]
    return _fin(dt, r, e)


def _fdiv(dt, a, ea, b, eb, approx):
    if b == 0 or abs(b) <= 2 * eb or _inf(a, b):
        return None, 0.0
    x = a / b
    r = ROUND[dt](x)
    e = (ea + abs(x) * eb) / (abs(b) - eb) if (ea or eb) else 0.0
    if approx or e:
        e += 4 * U[dt] * abs(r) + (TINY[dt] if abs(r) < 1e-30 else 0.0)
    return _fin(dt, r, e)


def _fcmp(op, a, ea, b, eb):
    if a is None or b is None:
        return None
    if ea or eb:
        if abs(a - b) <= 2 * (ea + eb) + 1e-300:
            return None
    return 1 if _CMP[op](a, b) else 0


_CMP = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


# ---------------------------------------------------------------- casts

def cast(t, dt, bitcast=False):
    if is_lit(t):
        return to_block(t, dt)
    src = t.dt
    if src == dt:
        return t
    n = len(t.v)
    v, e = t.v, t.e
    if bitcast:
        if (bits(src) != bits(dt)) or is_bool(src) or is_bool(dt):
            raise Invalid("bitcast between %s and %s" % (src, dt))
        out, oe = [], []
        for i in range(n):
            x = v[i]
            if x is None or (e is not None and e[i]):
                out.append(None)
                oe.append(0.0)
                continue
            b = float_bits(x, src) if is_float(src) else wrap(x, "u%d" % bits(src))
            if is_float(dt):
                y = bits_float(b, dt)
                out.append(None if y != y else y)
                # a subnormal fp32/bf16 may be flushed to zero by the GPU's arithmetic
                oe.append(TINY[dt] if y == y and 0 < abs(y) < TINY[dt] and dt in ("fp32", "bf16") else 0.0)
            else:
                out.append(wrap(b, dt))
        return T(dt, t.shape, out, oe if is_float(dt) else None)
    if is_float(src) and is_float(dt):
        narrow = bits(dt) < bits(src) or (src, dt) in (("fp16", "bf16"), ("bf16", "fp16"))
        rnd = ROUND[dt]
        out, oe = [], []
        for i in range(n):
            x = v[i]
            if x is None:
                out.append(None)
                oe.append(0.0)
                continue
            r = rnd(x)
            ee = e[i]
            if narrow and r != x and (ee or (src == "fp64" and dt in ("fp16", "bf16"))):
                ee += U[dt] * abs(r)
            if r in (INF, -INF) and x not in (INF, -INF):
                out.append(None)
                oe.append(0.0)
                continue
            r, ee = _fin(dt, r, ee, x not in (INF, -INF))
            out.append(r)
            oe.append(ee)
        return T(dt, t.shape, out, oe)
    if is_int(src) and is_float(dt):
        out, oe = [], []
        for x in v:
            if x is None:
                out.append(None)
                oe.append(0.0)
                continue
            r = round_int(x, dt)
            ee = 0.0
            if dt in ("fp16", "bf16") and abs(x) > 2 ** 24 and r != x:
                ee = U[dt] * abs(r)
            if r in (INF, -INF):
                out.append(None)
                oe.append(0.0)
                continue
            out.append(r)
            oe.append(ee)
        return T(dt, t.shape, out, oe)
    if is_float(src) and is_int(dt):
        out = []
        lo, hi = int_range(dt) if not is_bool(dt) else (0, 1)
        for i in range(n):
            x = v[i]
            ee = e[i]
            if x is None or x != x or x in (INF, -INF):
                out.append(None)
                continue
            if is_bool(dt):
                if ee and abs(x) <= 2 * ee:
                    out.append(None)
                else:
                    out.append(1 if x != 0 else 0)
                continue
            q = int(x)  # truncation toward zero
            if ee and int(x - 2 * ee) != int(x + 2 * ee):
                out.append(None)
                continue
            if not (lo <= q <= hi) or (not is_signed(dt) and x < 0):
                out.append(None)
                continue
            out.append(q)
        return T(dt, t.shape, out)
    # int -> int
    if is_bool(dt):
        return T(dt, t.shape, [None if x is None else (1 if x != 0 else 0) for x in v])
    return T(dt, t.shape, [None if x is None else wrap(x, dt) for x in v])


# ---------------------------------------------------------------- binary ops

def _ifloordiv(a, b, dt):
    if b == 0:
        return None
    if is_signed(dt) and a == int_range(dt)[0] and b == -1:
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _imod(a, b, dt):
    q = _ifloordiv(a, b, dt)
    return None if q is None else a - b * q


def binary(op, a, b):
    """a op b for blocks or literals, with Triton's typing."""
    if is_lit(a) and is_lit(b):
        return _py_binary(op, a, b)
    if isinstance(a, Ptr) or isinstance(b, Ptr):
        return _ptr_binary(op, a, b)
    ta, tb = dtype_of(a), dtype_of(b)
    la, lb = is_lit(a), is_lit(b)
    div_or_mod = op in ("/", "//", "%")
    arith = op not in ("&", "|", "^", "<<", ">>")
    rt = computation_type(ta, la, tb, lb, div_or_mod)
    if is_int(rt):
        lo, hi = int_range(rt) if not is_bool(rt) else (0, 1)
        for lit, isl in ((a, la), (b, lb)):
            if isl and not isinstance(lit, float):
                if lit < 0 and not is_signed(rt) and not is_bool(rt):
                    raise Invalid("negative literal with unsigned type")
                if not (lo <= lit <= hi):
                    raise Invalid("literal %r out of range for %s" % (lit, rt))
    A = to_block(a, rt)
    B = to_block(b, rt)
    if op == "/":
        if is_int(rt):
            A, B = cast(A, "fp32"), cast(B, "fp32")
            rt = "fp32"
    elif op == "//":
        if not is_int(rt):
            raise Invalid("// on floats")
    elif not arith:
        if not is_int(rt):
            raise Invalid("bitwise op on floats")
    shape = bshape(A.shape, B.shape)
    va, ea = expand(A, shape)
    vb, eb = expand(B, shape)
    n = len(va)
    if op in ("<", "<=", ">", ">=", "==", "!="):
        f = _CMP[op]
        if is_float(rt):
            return T("i1", shape, [_fcmp(op, va[i], ea[i], vb[i], eb[i]) for i in range(n)])
        return T("i1", shape, [None if va[i] is None or vb[i] is None else (1 if f(va[i], vb[i]) else 0)
                               for i in range(n)])
    out = [None] * n
    if is_float(rt):
        oe = [0.0] * n
        approx = rt != "fp64"
        for i in range(n):
            x, y = va[i], vb[i]
            if x is None or y is None:
                continue
            if op == "+":
                r = _fadd(rt, x, ea[i], y, eb[i], False)
            elif op == "-":
                r = _fadd(rt, x, ea[i], y, eb[i], True)
            elif op == "*":
                r = _fmul(rt, x, ea[i], y, eb[i])
            elif op == "/":
                r = _fdiv(rt, x, ea[i], y, eb[i], approx)
            elif op == "%":
                raise Invalid("float % is not generated")
            else:
                raise Invalid("bad float op " + op)
            out[i], oe[i] = r
        return T(rt, shape, out, oe)
    bw = bits(rt)
    for i in range(n):
        x, y = va[i], vb[i]
        if x is None or y is None:
            continue
        if op == "+":
            r = x + y
        elif op == "-":
            r = x - y
        elif op == "*":
            r = x * y
        elif op == "//":
            r = _ifloordiv(x, y, rt)
        elif op == "%":
            r = _imod(x, y, rt)
        elif op == "&":
            r = x & y
        elif op == "|":
            r = x | y
        elif op == "^":
            r = x ^ y
        elif op == "<<":
            r = x << y if 0 <= y < bw else None
        elif op == ">>":
            r = x >> y if 0 <= y < bw else None
        else:
            raise Invalid("bad int op " + op)
        out[i] = None if r is None else wrap(r, rt)
    return T(rt, shape, out)


def _py_binary(op, a, b):
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "//":
            return a // b
        if op == "%":
            return a % b
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        if op == "<<":
            return a << b
        if op == ">>":
            return a >> b
        return _CMP[op](a, b)
    except (ZeroDivisionError, TypeError) as ex:
        raise Invalid("constant expression: %s" % ex)


def _ptr_binary(op, a, b):
    if isinstance(b, Ptr):
        if op != "+" or isinstance(a, Ptr):
            raise Invalid("pointer arithmetic")
        a, b = b, a
    if op not in ("+", "-"):
        raise Invalid("pointer arithmetic " + op)
    if is_lit(b):
        if not isinstance(b, int):
            raise Invalid("pointer + float")
        b = T("i32", (), [b])
    if not is_int(b.dt):
        raise Invalid("pointer + float")
    shape = bshape(a.shape, b.shape)
    pa = T("i64", a.shape, a.v)
    va, _ = expand(pa, shape)
    vb, _ = expand(b, shape)
    sgn = 1 if op == "+" else -1
    return Ptr(a.buf, shape, [None if x is None or y is None else x + sgn * y for x, y in zip(va, vb)])


def unary(op, a):
    if is_lit(a):
        if op == "-":
            return -a
        if op == "~":
            return ~a
        if op == "not":
            return not a
        raise Invalid("unary " + op)
    if op == "-":
        if is_float(a.dt):
            return T(a.dt, a.shape, [None if x is None else -x for x in a.v], list(a.e))
        return binary("-", T(a.dt, (), [0]), a)
    if op == "~":
        if not is_int(a.dt):
            raise Invalid("~ on floats")
        return T(a.dt, a.shape, [None if x is None else wrap(~x, a.dt) for x in a.v])
    if op == "not":
        if not is_bool(a.dt):
            a = cast(a, "i1")
        return T("i1", a.shape, [None if x is None else 1 - x for x in a.v])
    raise Invalid("unary " + op)


def where(c, a, b):
    if is_lit(c):
        c = to_block(c, "i1")
    if not is_bool(c.dt):
        c = cast(c, "i1")
    ta, tb = dtype_of(a), dtype_of(b)
    rt = computation_type(ta, is_lit(a), tb, is_lit(b), False)
    A, B = to_block(a, rt), to_block(b, rt)
    shape = bshape(bshape(c.shape, A.shape), B.shape)
    vc, _ = expand(c, shape)
    va, ea = expand(A, shape)
    vb, eb = expand(B, shape)
    out = [None] * len(vc)
    fl = is_float(rt)
    oe = [0.0] * len(vc) if fl else None
    for i, k in enumerate(vc):
        if k is None:
            continue
        if k:
            out[i] = va[i]
            if fl:
                oe[i] = ea[i]
        else:
            out[i] = vb[i]
            if fl:
                oe[i] = eb[i]
    return T(rt, shape, out, oe)


def _tensor_bf16_up(x):
    """core.py's to_tensor then _promote_bfloat16_to_float32 (maximum, minimum, clamp)."""
    if is_lit(x):
        x = to_block(x, literal_type(x))
    return cast(x, "fp32") if x.dt == "bf16" else x


def minmax(which, a, b):
    a, b = _tensor_bf16_up(a), _tensor_bf16_up(b)
    ta, tb = dtype_of(a), dtype_of(b)
    rt = computation_type(ta, False, tb, False, False)
    A, B = to_block(a, rt), to_block(b, rt)
    shape = bshape(A.shape, B.shape)
    va, ea = expand(A, shape)
    vb, eb = expand(B, shape)
    n = len(va)
    out = [None] * n
    fl = is_float(rt)
    oe = [0.0] * n if fl else None
    f = max if which == "max" else min
    for i in range(n):
        x, y = va[i], vb[i]
        if x is None or y is None:
            continue
        out[i] = f(x, y)
        if fl:
            oe[i] = max(ea[i], eb[i])
    return T(rt, shape, out, oe)


# ---------------------------------------------------------------- math

def _mono(f, x, e):
    """Propagated error of a monotonic or Lipschitz function by its endpoints."""
    if not e:
        return 0.0
    try:
        y = f(x)
        return max(abs(f(x + e) - y), abs(y - f(x - e)))
    except (ValueError, OverflowError):
        return INF


def _sigmoid(x):
    if x < -700:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


_MATH = {
    # name: (function, domain check, extra relative error, extra absolute error)
    "exp": (math.exp, lambda x: x < 700, 4e-7, 0.0),
    "exp2": (lambda x: 2.0 ** x, lambda x: x < 1000, 4e-7, 0.0),
    "log": (math.log, lambda x: x > 0, 1e-7, 2e-7),
    "log2": (math.log2, lambda x: x > 0, 1e-7, 2e-7),
    "sqrt": (math.sqrt, lambda x: x >= 0, 2.5e-7, 0.0),
    "sin": (math.sin, lambda x: abs(x) < 100, 0.0, 1e-6),
    "cos": (math.cos, lambda x: abs(x) < 100, 0.0, 1e-6),
    "sigmoid": (_sigmoid, lambda x: True, 1e-6, 1e-7),
    "erf": (math.erf, lambda x: True, 1e-6, 1e-7),
}


def math1(name, t):
    if is_lit(t):
        t = to_block(t, literal_type(t))
    dt = t.dt
    if name == "abs":
        if is_float(dt):
            return T(dt, t.shape, [None if x is None else abs(x) for x in t.v], list(t.e))
        if is_signed(dt):
            lo = int_range(dt)[0]
            return T(dt, t.shape, [None if x is None or x == lo else abs(x) for x in t.v])
        return t
    if dt not in ("fp32", "fp64"):
        raise Invalid("tl.%s needs fp32 or fp64, got %s" % (name, dt))
    out, oe = [], []
    if name in ("floor", "ceil"):
        f = math.floor if name == "floor" else math.ceil
        for x, e in zip(t.v, t.e):
            if x is None or x in (INF, -INF):
                out.append(x)
                oe.append(0.0)
                continue
            if e and f(x - 2 * e) != f(x + 2 * e):
                out.append(None)
            else:
                out.append(float(f(x)))
            oe.append(0.0)
        return T(dt, t.shape, out, oe)
    f, ok, rel, ab = _MATH[name]
    if dt == "fp64":
        rel, ab = rel * 1e-8, ab * 1e-8
    u = U[dt]
    for x, e in zip(t.v, t.e):
        if x is None or x in (INF, -INF) or not ok(x) or not ok(x - e) or not ok(x + e):
            out.append(None)
            oe.append(0.0)
            continue
        try:
            y = f(x)
        except (ValueError, OverflowError):
            out.append(None)
            oe.append(0.0)
            continue
        r = ROUND[dt](y)
        ee = _mono(f, x, 2 * e if e else 0.0)
        # approximate exp scales its argument: error grows with |x|
        ee += (rel + 4 * u * (abs(x) if name in ("exp", "exp2") else 1.0)) * abs(r) + ab + u * abs(r)
        if name in ("sin", "cos"):
            ee += 4 * u * abs(x)
        r, ee = _fin(dt, r, ee)
        out.append(r)
        oe.append(ee)
    return T(dt, t.shape, out, oe)


def fma(a, b, c):
    p = binary("*", a, b)
    return binary("+", p, c)


def clamp(x, lo, hi):
    x, lo, hi = _tensor_bf16_up(x), _tensor_bf16_up(lo), _tensor_bf16_up(hi)
    lo_hi = computation_type(lo.dt, False, hi.dt, False, False)
    rt = computation_type(x.dt, False, lo_hi, False, False)
    if not is_float(rt):
        raise Invalid("clamp of ints")
    return minmax("min", minmax("max", cast(x, rt), cast(lo, rt)), cast(hi, rt))


# ---------------------------------------------------------------- reductions and scans

def _groups(shape, axis):
    """Flat indices of each reduced group, in the result's row-major order."""
    if axis is None or len(shape) == 1:
        return [list(range(numel(shape)))]
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    outer = [0]
    for d, n in enumerate(shape):
        if d != axis:
            outer = [b + k * strides[d] for b in outer for k in range(n)]
    return [[b + k * strides[axis] for k in range(shape[axis])] for b in outer]


def _depth(n, total):
    """Longest chain of roundings in a parallel reduction of n elements."""
    return min(n - 1, int(math.ceil(math.log2(max(n, 2)))) + (total + 31) // 32 + 1) if n > 1 else 0


def reduce(kind_, t, axis=None, keep_dims=False):
    if is_lit(t) or t.shape == ():
        raise Invalid("reduction of a scalar")
    if axis is not None:
        if axis < 0:
            axis += len(t.shape)
        if not 0 <= axis < len(t.shape):
            raise Invalid("bad axis")
    dt = t.dt
    small = bits(dt) < 32
    if kind_ == "xor_sum" and not is_int(dt):
        raise Invalid("xor_sum of floats")
    if kind_ == "sum" and is_int(dt) and small:
        t = cast(t, "i32" if is_signed(dt) else "u32")
    elif kind_ in ("max", "min") and small:
        t = cast(t, "fp32" if is_float(dt) else "i32")
    elif kind_ in ("argmax", "argmin") and dt == "bf16":
        t = cast(t, "fp32")
    dt = t.dt
    groups = _groups(t.shape, axis)
    if axis is None:
        rshape = ()
    else:
        rshape = tuple(s for i, s in enumerate(t.shape) if i != axis)
    v, e = t.v, t.e
    fl = is_float(dt)
    out, oe = [], []
    for g in groups:
        xs = [v[i] for i in g]
        if any(x is None for x in xs):
            out.append(None)
            oe.append(0.0)
            continue
        if kind_ == "xor_sum":
            acc = 0
            for x in xs:
                acc ^= x
            out.append(wrap(acc, dt))
        elif kind_ == "sum":
            if fl:
                if any(x in (INF, -INF) for x in xs):
                    s = sum(xs)
                    out.append(None if s != s or any(e[i] for i in g) else s)
                    oe.append(0.0)
                    continue
                absum = sum(abs(x) for x in xs)
                if absum >= MAXF[dt]:  # a partial sum may overflow, depending on the order
                    out.append(None)
                    oe.append(0.0)
                    continue
                s = math.fsum(xs)
                r = ROUND[dt](s)
                ee = sum(e[i] for i in g) + _depth(len(g), len(v)) * U[dt] * absum
                if ee:
                    ee += U[dt] * abs(r)
                r, ee = _fin(dt, r, ee)
                out.append(r)
                oe.append(ee)
            else:
                out.append(wrap(sum(xs), dt))
        elif kind_ in ("max", "min"):
            out.append(max(xs) if kind_ == "max" else min(xs))
            if fl:
                oe.append(max(e[i] for i in g))
        else:
            best = max(xs) if kind_ == "argmax" else min(xs)
            k = xs.index(best)
            ok = True
            if fl:
                ek = e[g[k]]
                for j, x in enumerate(xs):
                    if j != k and (ek or e[g[j]]) and abs(x - best) <= 2 * (ek + e[g[j]]) + 1e-300:
                        ok = False
                        break
            out.append(k if ok else None)
    if kind_ in ("argmax", "argmin"):
        res = T("i32", rshape, out)
    else:
        res = T(dt, rshape, out, oe if fl else None)
    if keep_dims:
        if axis is None:
            res = T(res.dt, (1,) * len(t.shape), res.v, res.e)
        else:
            sh = list(t.shape)
            sh[axis] = 1
            res = T(res.dt, tuple(sh), res.v, res.e)
    return res


def scan(kind_, t, axis=0, reverse=False):
    if is_lit(t) or t.shape == ():
        raise Invalid("scan of a scalar")
    if axis < 0:
        axis += len(t.shape)
    dt = t.dt
    if dt == "bf16":
        t = cast(t, "fp32")
    elif kind_ == "cumsum" and is_int(dt) and bits(dt) < 32:
        t = cast(t, "i32" if is_signed(dt) else "u32")
    dt = t.dt
    fl = is_float(dt)
    v, e = t.v, t.e
    out = [None] * len(v)
    oe = [0.0] * len(v) if fl else None
    u = U[dt] if fl else 0.0
    for g in _groups(t.shape, axis):
        if reverse:
            g = g[::-1]
        acc, ae, absum = (0 if kind_ == "cumsum" else 1), 0.0, 0.0
        if fl:
            acc = 0.0 if kind_ == "cumsum" else 1.0
        bad = False
        for j, i in enumerate(g):
            x = v[i]
            if bad or x is None:
                bad = True
                continue
            if not fl:
                acc = wrap(acc + x if kind_ == "cumsum" else acc * x, dt)
                out[i] = acc
                continue
            if kind_ == "cumsum":
                acc += x
                absum += abs(x)
                if absum >= MAXF[dt]:
                    bad = True
                    continue
                ae += e[i]
                r = ROUND[dt](acc)
                ee = ae + _depth(j + 1, len(v)) * u * absum
            else:
                ae = abs(acc) * e[i] + abs(x) * ae + ae * e[i]
                acc *= x
                r = ROUND[dt](acc)
                ae += 2 * u * abs(acc)
                ee = ae
            if ee:
                ee += u * abs(r)
            r, ee = _fin(dt, r, ee)
            if r is None:
                bad = True
                continue
            out[i], oe[i] = r, ee
    return T(dt, t.shape, out, oe)


_M32 = 0xFFFFFFFF


def _philox(seed, c0, c1):
    """Triton's philox_impl: 10 rounds on (c0, c1, 0, 0) with key seed (as uint64)."""
    k0, k1 = seed & _M32, (seed >> 32) & _M32
    c = [c0 & _M32, c1 & _M32, 0, 0]
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & _M32, p1 & _M32, ((p0 >> 32) ^ c[3] ^ k1) & _M32, p0 & _M32]
        k0, k1 = (k0 + 0x9E3779B9) & _M32, (k1 + 0xBB67AE85) & _M32
    return c


def _uniform(bits32):
    s = bits32 - (1 << 32) if bits32 >> 31 else bits32
    if s < 0:
        s = -s - 1
    return _r32(round_int(s, "fp32") * _r32(4.6566127342e-10))


def philox_random(kind_, seed, offset):
    """tl.randint / tl.rand / tl.randn (Philox, Triton's streams)."""
    if is_lit(seed):
        seed = to_block(seed, literal_type(seed))
    if seed.shape != () or not is_int(seed.dt) or seed.v[0] is None:
        raise Invalid("random seed must be an integer scalar")
    sd = wrap(seed.v[0], "u64") if is_signed(seed.dt) else seed.v[0]
    if is_lit(offset) or not is_int(offset.dt) or bits(offset.dt) not in (32, 64):
        raise Invalid("random offsets must be a 32- or 64-bit integer block")
    wide = bits(offset.dt) > 32
    out, oe = [], []
    for x in offset.v:
        if x is None:
            out.append(None)
            oe.append(0.0)
            continue
        hi = (wrap(x, "u64") >> 32) & _M32 if wide else 0
        c = _philox(sd, wrap(x, "u32"), hi)
        if kind_ == "randint":
            out.append(c[0])
        elif kind_ == "rand":
            out.append(_uniform(c[0]))
            oe.append(4 * U["fp32"] * out[-1])
        else:
            u1 = max(1e-7, _uniform(c[0]))
            u2 = _uniform(c[1])
            r = _r32(math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2))
            out.append(r)
            oe.append(2e-5 * max(1.0, abs(r)))
    if kind_ == "randint":
        return T("u32", offset.shape, out)
    return T("fp32", offset.shape, out, oe)


def dot(a, b, acc=None, precision=None, out_dtype=None):
    """tl.dot of (M, K) and (K, N) blocks; the accumulation order is free."""
    if is_lit(a) or is_lit(b) or len(a.shape) != 2 or len(b.shape) != 2:
        raise Invalid("tl.dot of non-2-D blocks")
    if a.dt != b.dt:
        raise Invalid("tl.dot of %s and %s" % (a.dt, b.dt))
    M, K = a.shape
    K2, N = b.shape
    if K != K2 or M < 16 or N < 16 or K < 16:
        raise Invalid("tl.dot shapes %s %s" % (a.shape, b.shape))
    dt = a.dt
    if dt == "i8":
        out = "i32"
    elif dt == "fp64":
        out = "fp64"
    elif dt == "fp16" and out_dtype == "fp16":
        out = "fp16"
    elif dt in ("fp16", "bf16", "fp32"):
        out = "fp32"
    else:
        raise Invalid("tl.dot of %s" % dt)
    if acc is not None and (acc.dt != out or acc.shape != (M, N) or out_dtype not in (None, out)
                            or (out_dtype is None and out != "fp32")):
        raise Invalid("tl.dot acc must be %s (and out_dtype given unless fp32)" % out)
    tf32 = dt == "fp32" and precision in (None, "tf32")
    av, bv = a.v, b.v
    ae, be = a.e, b.e
    out_v, out_e = [None] * (M * N), [0.0] * (M * N)
    u = U[out] if out in U else 0.0
    for i in range(M):
        for j in range(N):
            o = i * N + j
            c = acc.v[o] if acc is not None else 0
            if c is None:
                continue
            terms = []
            err = 0.0
            ok = True
            for k in range(K):
                x, y = av[i * K + k], bv[k * N + j]
                if x is None or y is None:
                    ok = False
                    break
                terms.append(x * y)
                if ae is not None:
                    err += abs(x) * be[k * N + j] + abs(y) * ae[i * K + k]
            if not ok:
                continue
            if out == "i32":
                out_v[o] = wrap(sum(terms) + c, "i32")
                continue
            absum = sum(abs(p) for p in terms) + abs(c)
            s = math.fsum(terms + [c])
            r = ROUND[out](s)
            e = err + (acc.e[o] if acc is not None else 0.0) + (K + 1) * u * absum
            if tf32:
                e += 2.0 ** -9 * absum
            r, e = _fin(out, r, e + u * abs(r))
            if absum >= MAXF[out]:
                r = None
            out_v[o], out_e[o] = r, e
    return T(out, (M, N), out_v, out_e if is_float(out) else None)


# ---------------------------------------------------------------- the interpreter

class Buffer:
    def __init__(self, name, dt, vals):
        self.name, self.dt, self.v = name, dt, vals
        self.writer = {}   # index -> program that stored it
        self.reads = {}    # index -> program that loaded it
        self.atomic = False
        self.err = {}      # index -> error bound of the stored value


class _Return(Exception):
    def __init__(self, value=None):
        Exception.__init__(self)
        self.value = value


TL_FUNCS = {
    "program_id", "num_programs", "arange", "zeros", "full", "load", "store", "where", "maximum",
    "minimum", "abs", "exp", "exp2", "log", "log2", "sqrt", "sin", "cos", "sigmoid", "erf", "floor",
    "ceil", "fma", "clamp", "sum", "max", "min", "argmax", "argmin", "cumsum", "cumprod",
    "expand_dims", "broadcast_to", "trans", "atomic_add", "atomic_max", "atomic_min", "atomic_and",
    "atomic_or", "atomic_xor", "static_range", "range", "cdiv", "dot", "randint", "rand", "randn",
    "multiple_of", "max_contiguous", "max_constancy", "reshape", "view", "join", "xor_sum",
    "div_rn", "sqrt_rn", "reduce", "associative_scan",
}


class Fn:
    def __init__(self, name):
        self.name = name


class Method:
    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class Interp:
    def __init__(self, source, kernel, grid, args, constexprs, buffers):
        """args: list of (name, value) in parameter order, value a buffer name
        (for pointers) or a T scalar; buffers: name -> Buffer."""
        tree = ast.parse(source)
        self.fn = None
        self.jit = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.jit[node.name] = node
                if node.name == kernel:
                    self.fn = node
        if self.fn is None:
            raise Invalid("no kernel " + kernel)
        self.grid = list(grid) + [1] * (3 - len(grid))
        self.args = args
        self.constexprs = constexprs
        self.buffers = buffers
        self.steps = 0

    def run(self):
        for z in range(self.grid[2]):
            for y in range(self.grid[1]):
                for x in range(self.grid[0]):
                    self.pid = (x, y, z)
                    self.pkey = x + self.grid[0] * (y + self.grid[1] * z)
                    env = {}
                    params = [a.arg for a in self.fn.args.args]
                    it = iter(self.args)
                    for p in params:
                        if p in self.constexprs:
                            env[p] = self.constexprs[p]
                            continue
                        name, val = next(it)
                        if name != p:
                            raise Invalid("argument %s where %s expected" % (name, p))
                        if isinstance(val, str):
                            env[p] = Ptr(val, (), [0])
                        else:
                            env[p] = val
                    try:
                        self.block(self.fn.body, env)
                    except _Return:
                        pass

    # statements
    def block(self, stmts, env):
        for s in stmts:
            self.stmt(s, env)

    def stmt(self, s, env):
        self.steps += 1
        if isinstance(s, ast.Assign):
            val = self.expr(s.value, env)
            for tgt in s.targets:
                self.assign(tgt, val, env)
        elif isinstance(s, ast.AnnAssign):
            self.assign(s.target, self.expr(s.value, env), env)
        elif isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name):
                raise Invalid("augmented assignment to a non-name")
            env[s.target.id] = binary(_BINOP[type(s.op)], env[s.target.id], self.expr(s.value, env))
        elif isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant):
                return
            self.expr(s.value, env)
        elif isinstance(s, ast.If):
            c = self.expr(s.test, env)
            if self.truth(c):
                self.block(s.body, env)
            else:
                self.block(s.orelse, env)
        elif isinstance(s, ast.For):
            self.loop(s, env)
        elif isinstance(s, ast.While):
            if s.orelse:
                raise Invalid("while ... else")
            while self.truth(self.expr(s.test, env)):
                self.block(s.body, env)
                if self.steps > 2000000:
                    raise Invalid("too many steps")
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.Return):
            raise _Return(None if s.value is None else self.expr(s.value, env))
        else:
            raise Invalid("statement %s is not supported by the reference" % type(s).__name__)

    def truth(self, c):
        if is_lit(c):
            return bool(c)
        if c.shape != () or c.v[0] is None:
            raise Invalid("undefined or non-scalar condition")
        if is_float(c.dt) and c.e[0] and abs(c.v[0]) <= 2 * c.e[0]:
            raise Invalid("unstable condition")
        return c.v[0] != 0

    def assign(self, tgt, val, env):
        if isinstance(tgt, ast.Name):
            env[tgt.id] = val
        elif isinstance(tgt, ast.Tuple):
            if not isinstance(val, tuple) or len(val) != len(tgt.elts):
                raise Invalid("tuple unpacking")
            for t, v in zip(tgt.elts, val):
                self.assign(t, v, env)
        else:
            raise Invalid("assignment target")

    def scalar_int(self, x):
        if is_lit(x):
            if not isinstance(x, int):
                raise Invalid("non-integer loop bound")
            return x
        if x.shape != () or not is_int(x.dt) or x.v[0] is None:
            raise Invalid("bad loop bound")
        return x.v[0]

    def loop(self, s, env):
        it = s.iter
        if not (isinstance(it, ast.Call) and self.callee_name(it.func) in ("range", "tl.range",
                                                                          "tl.static_range")):
            raise Invalid("for over something other than range")
        static = self.callee_name(it.func) == "tl.static_range"
        raw = [self.expr(a, env) for a in it.args]
        vals = [self.scalar_int(a) for a in raw]
        if len(vals) == 1:
            lo, hi, st = 0, vals[0], 1
        elif len(vals) == 2:
            lo, hi, st = vals[0], vals[1], 1
        else:
            lo, hi, st = vals
        if st == 0:
            raise Invalid("range step 0")
        ity = "i32"
        for a in raw:
            if not is_lit(a) and a.dt == "i64":
                ity = "i64"
        if not isinstance(s.target, ast.Name):
            raise Invalid("loop target")
        for i in range(lo, hi, st):
            env[s.target.id] = i if static else T(ity, (), [i])
            self.block(s.body, env)
            if self.steps > 2000000:
                raise Invalid("too many steps")

    # expressions
    def callee_name(self, f):
        if isinstance(f, ast.Name):
            return f.id
        if isinstance(f, ast.Attribute):
            inner = self.callee_name(f.value)
            return inner + "." + f.attr if inner else None
        return None

    def expr(self, n, env):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in env:
                return env[n.id]
            if n.id in ("True", "False"):
                return n.id == "True"
            raise Invalid("unknown name " + n.id)
        if isinstance(n, ast.BinOp):
            return binary(_BINOP[type(n.op)], self.expr(n.left, env), self.expr(n.right, env))
        if isinstance(n, ast.UnaryOp):
            op = {ast.USub: "-", ast.Invert: "~", ast.Not: "not", ast.UAdd: "+"}[type(n.op)]
            v = self.expr(n.operand, env)
            return v if op == "+" else unary(op, v)
        if isinstance(n, ast.Compare):
            if len(n.ops) != 1:
                raise Invalid("chained comparison")
            op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
                  ast.NotEq: "!="}[type(n.ops[0])]
            return binary(op, self.expr(n.left, env), self.expr(n.comparators[0], env))
        if isinstance(n, ast.Tuple):
            return tuple(self.expr(e, env) for e in n.elts)
        if isinstance(n, ast.Attribute):
            return self.attribute(n, env)
        if isinstance(n, ast.Subscript):
            return self.subscript(n, env)
        if isinstance(n, ast.Call):
            return self.call(n, env)
        raise Invalid("expression %s is not supported by the reference" % type(n).__name__)

    def attribute(self, n, env):
        name = self.callee_name(n)
        if name and name.startswith("tl."):
            attr = name[3:]
            if attr in FROM_TL:
                return DType(FROM_TL[attr])
            if attr in TL_FUNCS:
                return Fn(attr)
            raise Invalid("unknown tl." + attr)
        obj = self.expr(n.value, env)
        if n.attr == "to":
            return Method(obj, "to")
        if n.attr == "T":
            return self.trans(obj)
        if n.attr == "dtype" and isinstance(obj, T):
            return DType(obj.dt)
        raise Invalid("attribute ." + n.attr)

    def subscript(self, n, env):
        obj = self.expr(n.value, env)
        idx = n.slice
        elts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        if not isinstance(obj, T):
            raise Invalid("subscript of a non-block")
        shape = []
        k = 0
        for e in elts:
            if isinstance(e, ast.Constant) and e.value is None:
                shape.append(1)
            elif isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None:
                shape.append(obj.shape[k])
                k += 1
            else:
                raise Invalid("only [:, None]-style subscripts")
        if k != len(obj.shape):
            raise Invalid("subscript rank")
        return T(obj.dt, tuple(shape), obj.v, obj.e)

    def trans(self, x):
        if len(x.shape) != 2:
            raise Invalid("trans of rank != 2")
        R, C = x.shape
        idx = [r * C + c for c in range(C) for r in range(R)]
        return T(x.dt, (C, R), [x.v[i] for i in idx], [x.e[i] for i in idx] if x.e is not None else None)

    def shape_arg(self, x):
        if isinstance(x, int):
            return (x,)
        if isinstance(x, tuple) and all(isinstance(i, int) for i in x):
            return x
        raise Invalid("shape must be constexpr ints")

    def call(self, n, env):
        if isinstance(n.func, ast.Name) and n.func.id == "float":
            if len(n.args) != 1 or not isinstance(n.args[0], ast.Constant):
                raise Invalid("float() of a non-constant")
            return float(n.args[0].value)
        if isinstance(n.func, ast.Name) and n.func.id in self.jit and n.func.id not in env:
            return self.call_jit(self.jit[n.func.id], n, env)
        name = self.callee_name(n.func)
        if name in ("tl.reduce", "tl.associative_scan"):
            return self.combine_call(name[3:], n, env)
        f = self.expr(n.func, env)
        args = [self.expr(a, env) for a in n.args]
        kw = {k.arg: self.expr(k.value, env) for k in n.keywords}
        if isinstance(f, Method):
            if is_lit(f.obj):
                raise Invalid("a constexpr has no .to()")
            dt = args[0] if args else kw.get("dtype")
            if not isinstance(dt, DType):
                raise Invalid(".to() needs a dtype")
            return cast(f.obj, dt.name, bool(kw.get("bitcast", False)))
        if not isinstance(f, Fn):
            raise Invalid("call of something unsupported")
        name = f.name

        def arg(i, key, default=None):
            if i < len(args):
                return args[i]
            return kw.get(key, default)

        if name == "program_id":
            return T("i32", (), [self.pid[arg(0, "axis")]])
        if name == "num_programs":
            return T("i32", (), [self.grid[arg(0, "axis")]])
        if name == "arange":
            lo, hi = arg(0, "start"), arg(1, "end")
            if not isinstance(lo, int) or not isinstance(hi, int) or hi <= lo or (hi - lo) & (hi - lo - 1):
                raise Invalid("arange bounds")
            return T("i32", (hi - lo,), list(range(lo, hi)))
        if name in ("zeros", "full"):
            shape = self.shape_arg(arg(0, "shape"))
            if name == "zeros":
                val, dt = 0, arg(1, "dtype")
            else:
                val, dt = arg(1, "value"), arg(2, "dtype")
            if not isinstance(dt, DType):
                raise Invalid("dtype")
            s = to_block(val, dt.name)
            return T(dt.name, shape, s.v * numel(shape), s.e * numel(shape) if s.e is not None else None)
        if name == "load":
            return self.load(arg(0, "pointer"), kw.get("mask", arg(1, "mask")), kw.get("other", arg(2, "other")))
        if name == "store":
            return self.store(arg(0, "pointer"), arg(1, "value"), kw.get("mask", arg(2, "mask")))
        if name.startswith("atomic_"):
            return self.atomic(name[7:], arg(0, "pointer"), arg(1, "val"), kw.get("mask", arg(2, "mask")))
        if name == "where":
            return where(arg(0, "condition"), arg(1, "x"), arg(2, "y"))
        if name in ("maximum", "minimum"):
            return minmax(name[:3], arg(0, "x"), arg(1, "y"))
        if name in ("abs", "exp", "exp2", "log", "log2", "sqrt", "sin", "cos", "sigmoid", "erf",
                    "floor", "ceil"):
            return math1(name, arg(0, "x"))
        if name == "div_rn":
            x, y = arg(0, "x"), arg(1, "y")
            if is_lit(x) or is_lit(y) or x.dt != "fp32" or y.dt != "fp32":
                raise Invalid("div_rn is generated on fp32 blocks only")
            shape = bshape(x.shape, y.shape)
            vx, ex = expand(x, shape)
            vy, ey = expand(y, shape)
            out, oe = [None] * len(vx), [0.0] * len(vx)
            for i in range(len(vx)):
                if vx[i] is not None and vy[i] is not None:
                    out[i], oe[i] = _fdiv("fp32", vx[i], ex[i], vy[i], ey[i], False)
            return T("fp32", shape, out, oe)
        if name == "sqrt_rn":
            x = arg(0, "x")
            if is_lit(x) or x.dt != "fp32":
                raise Invalid("sqrt_rn is generated on fp32 blocks only")
            out, oe = [], []
            for v, e in zip(x.v, x.e):
                if v is None or v < 0 or v - 2 * e < 0:
                    out.append(None)
                    oe.append(0.0)
                    continue
                r = _r32(math.sqrt(v))
                ee = _mono(math.sqrt, v, 2 * e) + (2 * U["fp32"] * r if e else 0.0)
                r, ee = _fin("fp32", r, ee)
                out.append(r)
                oe.append(ee)
            return T("fp32", x.shape, out, oe)
        if name == "fma":
            return fma(arg(0, "x"), arg(1, "y"), arg(2, "z"))
        if name == "clamp":
            return clamp(arg(0, "x"), arg(1, "min"), arg(2, "max"))
        if name in ("sum", "max", "min", "argmax", "argmin", "xor_sum"):
            return reduce(name, arg(0, "input"), arg(1, "axis"), bool(kw.get("keep_dims", False)))
        if name in ("cumsum", "cumprod"):
            return scan(name, arg(0, "input"), arg(1, "axis", 0), bool(arg(2, "reverse", False)))
        if name == "expand_dims":
            x, ax = arg(0, "input"), arg(1, "axis")
            sh = list(x.shape)
            if ax < 0:
                ax += len(sh) + 1
            sh.insert(ax, 1)
            return T(x.dt, tuple(sh), x.v, x.e)
        if name == "broadcast_to":
            x = arg(0, "input")
            shape = self.shape_arg(arg(1, "shape"))
            if is_lit(x):
                x = to_block(x, literal_type(x))
            if bshape(x.shape, shape) != shape:
                raise Invalid("broadcast_to")
            v, e = expand(x, shape)
            return T(x.dt, shape, v, e)
        if name == "trans":
            return self.trans(arg(0, "input"))
        if name in ("reshape", "view"):
            x = arg(0, "input")
            shape = self.shape_arg(arg(1, "shape"))
            if is_lit(x) or numel(shape) != numel(x.shape):
                raise Invalid("reshape to %s" % (shape,))
            return T(x.dt, shape, x.v, x.e)
        if name == "join":
            a, b = arg(0, "a"), arg(1, "b")
            if is_lit(a) or is_lit(b) or a.dt != b.dt or a.shape != b.shape:
                raise Invalid("join of different blocks")
            v, e = [], ([] if a.e is not None else None)
            for i in range(len(a.v)):
                v += [a.v[i], b.v[i]]
                if e is not None:
                    e += [a.e[i], b.e[i]]
            return T(a.dt, a.shape + (2,), v, e)
        if name in ("randint", "rand", "randn"):
            return philox_random(name, arg(0, "seed"), arg(1, "offset"))
        if name in ("multiple_of", "max_contiguous", "max_constancy"):
            return arg(0, "input")
        if name == "dot":
            od = kw.get("out_dtype")
            return dot(arg(0, "input"), arg(1, "other"), kw.get("acc"), kw.get("input_precision"),
                       od.name if isinstance(od, DType) else None)
        if name == "cdiv":
            a, b = arg(0, "x"), arg(1, "div")
            return binary("//", binary("-", binary("+", a, b), 1), b)
        raise Invalid("tl.%s is not supported by the reference" % name)

    def combine_call(self, name, n, env):
        """tl.reduce / tl.associative_scan with a @jit combine function, folded
        left to right (gen.py uses exact or order-free combines only)."""
        if len(n.args) < 3 or not isinstance(n.args[2], ast.Name) or n.args[2].id not in self.jit:
            raise Invalid("combine_fn must be a @jit function of the file")
        fn = self.jit[n.args[2].id]
        x = self.expr(n.args[0], env)
        axis = self.expr(n.args[1], env)
        kw = {k.arg: self.expr(k.value, env) for k in n.keywords}
        if is_lit(x) or x.shape == ():
            raise Invalid("combine of a scalar")
        if axis is not None and axis < 0:
            axis += len(x.shape)

        def comb(a, ea, b, eb):
            A = T(x.dt, (), [a], [ea] if x.e is not None else None)
            B = T(x.dt, (), [b], [eb] if x.e is not None else None)
            self.depth = getattr(self, "depth", 0) + 1
            inner = {p.arg: v for p, v in zip(fn.args.args, (A, B))}
            try:
                self.block(fn.body, inner)
                raise Invalid("combine_fn returns nothing")
            except _Return as r:
                res = r.value
            self.depth -= 1
            if is_lit(res) or res.dt != x.dt or res.shape != ():
                raise Invalid("combine_fn changes the dtype")
            return res.v[0], (res.e[0] if res.e is not None else 0.0)

        groups = _groups(x.shape, axis)
        e = x.e or [0.0] * len(x.v)
        if name == "reduce":
            out, oe = [], []
            for g in groups:
                acc, ae = x.v[g[0]], e[g[0]]
                for i in g[1:]:
                    if acc is None or x.v[i] is None:
                        acc = None
                        break
                    acc, ae = comb(acc, ae, x.v[i], e[i])
                out.append(acc)
                oe.append(ae if acc is not None else 0.0)
            rshape = () if axis is None else tuple(s for i, s in enumerate(x.shape) if i != axis)
            if kw.get("keep_dims"):
                rshape = (1,) * len(x.shape) if axis is None else \
                    tuple(1 if i == axis else s for i, s in enumerate(x.shape))
            return T(x.dt, rshape, out, oe if x.e is not None else None)
        out, oe = [None] * len(x.v), [0.0] * len(x.v)
        for g in groups:
            if kw.get("reverse"):
                g = g[::-1]
            acc, ae = None, 0.0
            for j, i in enumerate(g):
                if x.v[i] is None:
                    break
                if j == 0:
                    acc, ae = x.v[i], e[i]
                else:
                    acc, ae = comb(acc, ae, x.v[i], e[i])
                if acc is None:
                    break
                out[i], oe[i] = acc, ae
        return T(x.dt, x.shape, out, oe if x.e is not None else None)

    def call_jit(self, fn, n, env):
        """A call of another @jit function: its body with the arguments bound."""
        self.depth = getattr(self, "depth", 0) + 1
        if self.depth > 20:
            raise Invalid("recursion")
        params = [a.arg for a in fn.args.args]
        defaults = fn.args.defaults
        inner = {}
        for i, p in enumerate(params):
            if i < len(n.args):
                inner[p] = self.expr(n.args[i], env)
            elif i >= len(params) - len(defaults):
                inner[p] = self.expr(defaults[i - (len(params) - len(defaults))], env)
        for k in n.keywords:
            inner[k.arg] = self.expr(k.value, env)
        for name in ("tl", "triton"):
            inner.pop(name, None)
        try:
            self.block(fn.body, inner)
            value = None
        except _Return as r:
            value = r.value
        self.depth -= 1
        return value

    # memory
    def _mask(self, mask, shape):
        if mask is None:
            return [1] * numel(shape)
        if is_lit(mask):
            return [1 if mask else 0] * numel(shape)
        if not is_bool(mask.dt):
            raise Invalid("mask must be boolean")
        v, _ = expand(mask, shape)
        return v

    def _addr(self, p, i, m):
        if m is None:
            raise Invalid("undefined mask")
        if not m:
            return None
        a = p.v[i]
        buf = self.buffers[p.buf]
        if a is None or not 0 <= a < len(buf.v):
            raise Invalid("out-of-bounds or undefined address %s in %s" % (a, p.buf))
        return a

    def load(self, p, mask, other):
        if not isinstance(p, Ptr):
            raise Invalid("load of a non-pointer")
        buf = self.buffers[p.buf]
        if buf.atomic:
            raise Invalid("load from an atomic buffer")
        shape = p.shape
        m = self._mask(mask, shape) if mask is not None else None
        if mask is not None and not is_lit(mask):
            shape = bshape(shape, mask.shape)
            p = Ptr(p.buf, shape, expand(T("i64", p.shape, p.v), shape)[0])
            m = self._mask(mask, shape)
        n = numel(shape)
        dt = buf.dt
        ov = None
        if other is not None:
            o = to_block(other, dt) if is_lit(other) else cast(other, dt)
            ov, _ = expand(o, shape)
        out = [None] * n
        for i in range(n):
            a = self._addr(p, i, 1 if m is None else m[i])
            if a is None:
                out[i] = ov[i] if ov is not None else None
                continue
            w = buf.writer.get(a)
            if w is not None:
                raise Invalid("load of %s[%d], which a store wrote" % (buf.name, a))
            buf.reads[a] = self.pkey
            out[i] = buf.v[a]
        return T(dt, shape, out)

    def store(self, p, val, mask):
        if not isinstance(p, Ptr):
            raise Invalid("store to a non-pointer")
        buf = self.buffers[p.buf]
        if buf.atomic:
            raise Invalid("store to an atomic buffer")
        shape = p.shape
        val = to_block(val, buf.dt) if is_lit(val) else cast(val, buf.dt)
        if bshape(shape, val.shape) != shape:
            raise Invalid("store value shape %s does not fit pointer %s" % (val.shape, shape))
        if mask is not None and not is_lit(mask) and bshape(shape, mask.shape) != shape:
            raise Invalid("mask shape")
        vv, ve = expand(val, shape)
        m = self._mask(mask, shape)
        pending = {}
        perr = {}
        for i in range(numel(shape)):
            a = self._addr(p, i, m[i])
            if a is None:
                continue
            x = vv[i]
            if x is None:
                raise Invalid("store of an undefined value to %s[%d]" % (buf.name, a))
            if a in pending and pending[a] != x:
                raise Invalid("two lanes store different values to %s[%d]" % (buf.name, a))
            pending[a] = x
            if ve is not None:
                perr[a] = max(perr.get(a, 0.0), ve[i])
        for a, x in pending.items():
            w = buf.writer.get(a)
            if w is not None and w != self.pkey and buf.v[a] != x:
                raise Invalid("programs race on %s[%d]" % (buf.name, a))
            if a in buf.reads:
                raise Invalid("store to %s[%d], which was loaded" % (buf.name, a))
            buf.writer[a] = self.pkey
            buf.v[a] = x
            if a in perr:
                buf.err[a] = perr[a]
        return None

    def atomic(self, op, p, val, mask):
        if not isinstance(p, Ptr):
            raise Invalid("atomic on a non-pointer")
        buf = self.buffers[p.buf]
        if buf.dt not in ("i32", "i64", "u32", "u64"):
            raise Invalid("atomics are generated on 32/64-bit ints only")
        if buf.writer or buf.reads:
            raise Invalid("atomic buffer also loaded or stored")
        buf.atomic = True
        shape = p.shape
        val = to_block(val, buf.dt) if is_lit(val) else cast(val, buf.dt)
        if bshape(shape, val.shape) != shape:
            raise Invalid("atomic value shape")
        vv, _ = expand(val, shape)
        m = self._mask(mask, shape)
        for i in range(numel(shape)):
            a = self._addr(p, i, m[i])
            if a is None:
                continue
            x = vv[i]
            if x is None:
                raise Invalid("atomic with an undefined value on %s[%d]" % (buf.name, a))
            old = buf.v[a]
            if op == "add":
                r = old + x
            elif op == "max":
                r = max(old, x)
            elif op == "min":
                r = min(old, x)
            elif op == "and":
                r = old & x
            elif op == "or":
                r = old | x
            elif op == "xor":
                r = old ^ x
            else:
                raise Invalid("atomic_" + op)
            buf.v[a] = wrap(r, buf.dt)
        # the old values depend on the order: a use of them makes the test invalid
        return T(buf.dt, shape, [None] * numel(shape))


_BINOP = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}


# ---------------------------------------------------------------- driver

def scalar_value(spec):
    dt = spec["dtype"]
    v = spec["value"]
    return T(dt, (), [ROUND[dt](float(v)) if is_float(dt) else wrap(int(v), dt)])


def initial_buffers(meta):
    """name -> list of initial values, for every buffer argument."""
    return {a["name"]: make_buffer(a) for a in meta["args"] if a["kind"] == "buffer"}


def run(source, meta, init=None):
    """Runs the kernel of a file with the launch described by its header.
    Returns {buffer name: (values, errors)} for every buffer; errors is a
    list of per-element bounds (0 where exact) for float buffers, else None."""
    init = init or initial_buffers(meta)
    buffers, args = {}, []
    for a in meta["args"]:
        if a["kind"] == "buffer":
            buffers[a["name"]] = Buffer(a["name"], a["dtype"], list(init[a["name"]]))
            args.append((a["name"], a["name"]))
        else:
            args.append((a["name"], scalar_value(a)))
    it = Interp(source, meta["kernel"], meta["grid"], args, meta.get("constexprs", {}), buffers)
    it.run()
    out = {}
    for name, b in buffers.items():
        errs = None
        if is_float(b.dt):
            errs = [0.0] * len(b.v)
            for k, e in b.err.items():
                errs[k] = e
        out[name] = (b.v, errs)
    return out
