#!/usr/bin/env python3
"""gen.py: writes a random, valid kernel file for tk and Triton from a seed.

usage: gen.py SEED [-o FILE] [--all-constructs]

The file is plain Triton: `import triton`, `import triton.language as tl` and
one `@triton.jit` kernel, preceded by a one-line header

    # difftest: {"kernel": ..., "grid": [...], "constexprs": {...}, "args": [...], ...}

that says how to launch it: every argument in order (buffers with dtype, size,
initial contents and role; scalars with dtype and value), the grid, the
constexprs, num_warps, the tkc signature, and for each output buffer its
tolerance class.

Validity.  A candidate program is run on the reference (tkref.py) with its
real inputs; it is kept only if no undefined value (a NaN, an overflow, an
out-of-range cast, a float comparison or cast too close to its threshold, a
masked lane without `other`) reaches memory, a branch or an address, and no
access is out of bounds or racy.  Otherwise the next candidate of the same
seed is drawn.  By construction: integer divisors are in [1, 8], shift
amounts below the width, atomics only on 32/64-bit integer buffers and never
also loaded or stored, each output element written by one program.

Constructs on which tk is known to differ from Triton (found/README.md) are
left out unless --all-constructs is given.
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tkref as R  # noqa: E402

HEADER = "# difftest: "
VERSION = 1

TL = R.TL_NAME
DT_WEIGHTS = [("fp32", 8), ("fp16", 4), ("bf16", 4), ("fp64", 3), ("i32", 6), ("i8", 3),
              ("i16", 2), ("i64", 3), ("u8", 3), ("u16", 1), ("u32", 2), ("u64", 1)]
# float -> int casts go through tl.clamp into these bounds (exact in fp32)
SAFE = {"i8": (-128.0, 127.0), "i16": (-32768.0, 32767.0), "i32": (-1e9, 1e9),
        "i64": (-2.0 ** 40, 2.0 ** 40), "u8": (0.0, 255.0), "u16": (0.0, 65535.0),
        "u32": (0.0, 4e9), "u64": (0.0, 2.0 ** 40)}
FLOAT_LITS = [0.5, 1.0, 2.0, 0.25, 1.5, 3.0, 0.125, 4.0, 0.75, 2.5, 0.375]
# tolerance classes: (rtol, atol) on top of the reference's per-element bound
TOL = {
    "exact": (0.0, 0.0),
    "fp64": (1e-13, 1e-13), "fp64-loose": (1e-10, 1e-10),
    "fp32": (2.5e-7, 1e-7), "fp32-loose": (2e-5, 1e-5),
    "fp16": (2e-3, 1e-4), "fp16-loose": (1e-2, 1e-3),
    "bf16": (1.6e-2, 1e-3), "bf16-loose": (4e-2, 1e-2),
}

# Known differences between tk and Triton (see found/README.md); gen.py
# steers clear of them unless asked for every construct.
KNOWN = {
    "fp16-bf16": "fp16 with bf16 gives fp32 in tk, fp16 in Triton",
}


class E:
    """A generated expression: its code, dtype, symbolic shape (a tuple of
    'B', 'M', 'N' and 1) and what the reference may make of it."""
    __slots__ = ("code", "dt", "shape", "poison", "loose", "lit", "exact")

    def __init__(self, code, dt, shape, poison=False, loose=False, lit=False, exact=False):
        self.code, self.dt, self.shape = code, dt, tuple(shape)
        self.poison, self.loose, self.lit, self.exact = poison, loose, lit, exact


def sb(a, b):
    """Symbolic broadcast of two shapes (they are sub-shapes of one target)."""
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
            raise ValueError("shapes %s %s" % (a, b))
    return tuple(out)


def par(code):
    return code if code.replace("_", "").isalnum() or code.endswith(")") and _balanced_call(code) \
        else "(" + code + ")"


def _balanced_call(code):
    # "name(...)" or "(...)" with the outer parentheses matching
    if code.startswith("("):
        depth = 0
        for i, ch in enumerate(code):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i != len(code) - 1:
                return False
        return True
    head = code.split("(", 1)[0]
    if not head.replace(".", "").replace("_", "").isalnum():
        return False
    return _balanced_call(code[len(head):])


def lit_code(v):
    s = repr(v)
    return "(" + s + ")" if s.startswith("-") else s


class Gen:
    def __init__(self, seed, all_constructs=False):
        self.seed = seed
        self.r = random.Random(seed)
        self.avoid = set() if all_constructs else set(KNOWN)
        self.features = set()

    # ------------------------------------------------------------ helpers
    def steer(self, key):
        """True if the known difference `key` is to be avoided here; otherwise
        the kernel is tagged with it (run.py then explains a failure by it)."""
        if key in self.avoid:
            return True
        self.features.add("known:" + key)
        return False

    def lc(self, v):
        if v == -2 ** 63 and self.steer("int64-min-literal"):
            return "(-9223372036854775807 - 1)"
        return lit_code(v)

    def wchoice(self, pairs):
        tot = sum(w for _, w in pairs)
        x = self.r.random() * tot
        for v, w in pairs:
            x -= w
            if x < 0:
                return v
        return pairs[-1][0]

    def dtype(self):
        return self.wchoice(DT_WEIGHTS)

    def emit(self, s):
        self.lines.append("    " * self.indent + s)

    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def shape_code(self, shape):
        names = {"B": "BLOCK", "M": "BM", "N": "BN", 1: "1"}
        return "(" + ", ".join(names[s] for s in shape) + ("," if len(shape) == 1 else "") + ")"

    def mask_code(self, shape):
        if self.dims == 1:
            return "mask" if shape == ("B",) else None
        return {("M", "N"): "mask", ("M",): "mask_m", ("N",): "mask_n"}.get(tuple(shape))

    def kinds(self):
        return [("B",), ()] if self.dims == 1 else [("M", "N"), ("M",), ("N",), ()]

    def kind_weights(self):
        if self.dims == 1:
            return [(("B",), 8), ((), 2)]
        return [(("M", "N"), 8), (("M",), 2), (("N",), 2), ((), 1)]

    def lit_for(self, dt, nonzero=False, small=False):
        r = self.r
        if R.is_float(dt):
            v = r.choice(FLOAT_LITS)
            return -v if r.random() < 0.3 else v
        lo, hi = R.int_range(dt)
        if small or r.random() < 0.8:
            v = r.randint(0 if nonzero else -1, 9) if r.random() < 0.7 else r.randint(10, 100)
        else:
            v = r.choice([hi, hi // 2, lo, lo // 2, 127, 255, 1000])
        if v < 0 and lo == 0:
            v = -v
        v = max(lo, min(hi, v))
        if nonzero and v == 0:
            v = 3
        if r.random() < 0.3 and lo < 0 and v > 0 and v <= 100:
            v = -v
        return v

    def lit(self, dt, **kw):
        v = self.lit_for(dt, **kw)
        return E(self.lc(v), R.literal_type(v), (), lit=True, exact=True)

    def pair(self, a, b):
        """Operands of a binary operation, steered clear of known typing differences."""
        if {a.dt, b.dt} == {"fp16", "bf16"} and self.steer("fp16-bf16"):
            if a.dt == "bf16":
                a = self.to_dt(a, "fp32")
            else:
                b = self.to_dt(b, "fp32")
        return a, b

    def rtype(self, op, a, b):
        div = op in ("/", "//", "%")
        rt = R.computation_type(a.dt, a.lit, b.dt, b.lit, div)
        if op == "/" and R.is_int(rt):
            rt = "fp32"
        if op in ("<", "<=", ">", ">=", "==", "!="):
            rt = "i1"
        return rt

    def combine(self, code, dt, *parts, loose=False, call=False):
        """An operator (or, with call, a function) applied to parts.  Operators
        on constexprs only (a static_range variable) give a constexpr."""
        shape = ()
        for p in parts:
            shape = sb(shape, p.shape)
        lit = not call and bool(parts) and all(p.lit for p in parts)
        return E(code, dt, shape, poison=any(p.poison for p in parts),
                 loose=loose or any(p.loose for p in parts), lit=lit)

    def tensor(self, e):
        """A constexpr as a scalar tensor (constexprs have no .to(), no .shape)."""
        if not e.lit:
            return e
        return E("tl.full((), %s, tl.%s)" % (e.code, TL[e.dt]), e.dt, ())

    # ------------------------------------------------------------ conversions
    def to_dt(self, e, dt, clamp=True):
        if e.dt == dt:
            return e
        if e.lit:  # a constexpr has no .to(): make it a scalar of the dtype
            if R.is_float(e.dt) and R.is_int(dt):
                e = self.tensor(e)
            else:
                return E("tl.full((), %s, tl.%s)" % (e.code, TL[dt]), dt, ())
        if R.is_float(e.dt) and R.is_int(dt) and not R.is_bool(dt):
            src = e
            if e.dt not in ("fp32", "fp64"):
                src = E(par(e.code) + ".to(tl.float32)", "fp32", e.shape, e.poison, e.loose)
            if clamp:
                lo, hi = SAFE[dt]
                code = "tl.clamp(%s, %r, %r).to(tl.%s)" % (src.code, lo, hi, TL[dt])
            else:
                code = "%s.to(tl.%s)" % (par(src.code), TL[dt])
            self.features.add("cast:f2i")
            return E(code, dt, e.shape, e.poison, e.loose)
        self.features.add("cast")
        return E("%s.to(tl.%s)" % (par(e.code), TL[dt]), dt, e.shape, e.poison, e.loose)

    def to_cat(self, e, cat):
        if cat is None or (cat == "f") == R.is_float(e.dt) and not R.is_bool(e.dt):
            return e
        if cat == "f":
            return self.to_dt(e, self.r.choice(["fp32", "fp32", "fp16", "bf16", "fp64"]))
        return self.to_dt(e, self.r.choice(["i32", "i32", "i8", "i64", "u8", "u32", "i16"]))

    def full(self, e, shape):
        """e broadcast to exactly shape."""
        if e.lit:
            return E("tl.full(%s, %s, tl.%s)" % (self.shape_code(shape), e.code, TL[e.dt]), e.dt, shape)
        if tuple(e.shape) == tuple(shape):
            return e
        self.features.add("broadcast_to")
        code = "tl.broadcast_to(%s, %s)" % (e.code, self.shape_code(shape))
        return E(code, e.dt, shape, e.poison, e.loose)

    # ------------------------------------------------------------ expressions
    def adapt(self, v, target):
        """v (a variable) used in an expression of shape target, or None."""
        if v.shape == () or v.shape == target:
            return v
        if len(target) == 2:
            ed = self.r.random() < 0.2
            if v.shape == ("M",):
                code = "tl.expand_dims(%s, 1)" % v.code if ed else v.code + "[:, None]"
                return E(code, v.dt, ("M", 1), v.poison, v.loose, exact=v.exact)
            if v.shape == ("N",):
                code = "tl.expand_dims(%s, 0)" % v.code if ed else v.code + "[None, :]"
                return E(code, v.dt, (1, "N"), v.poison, v.loose, exact=v.exact)
        return None

    def leaf(self, shape, cat):
        cands = []
        for v, w in self.scope:
            if R.is_bool(v.dt):
                continue
            a = self.adapt(v, shape)
            if a is None:
                continue
            if cat == "f" and not R.is_float(v.dt) or cat == "i" and not R.is_int(v.dt):
                w *= 0.15
            cands.append((a, w))
        e = self.wchoice(cands)
        return self.to_cat(e, cat)

    def gen(self, shape, depth, cat=None):
        shape = tuple(shape)
        if depth <= 0 or self.r.random() < 0.1:
            return self.leaf(shape, cat)
        ops = [("arith", 10), ("lit", 6), ("div", 2), ("unary", 2), ("where", 3), ("minmax", 2),
               ("cast", 3)]
        if cat != "f":
            ops += [("idiv", 2), ("bit", 2), ("shift", 2)]
        if cat != "i":
            ops += [("math", 3), ("fma", 0.5), ("clamp", 1)]
        if self.reducible(shape):
            ops.append(("reduce", 3))
        if shape != ():
            ops.append(("scan", 1.5))
        ops.append(("bitcast", 0.7))
        if shape != ():
            ops += [("random", 0.6), ("gather", 1.0), ("join", 0.6)]
        if shape == ("B",) and self.cx["BLOCK"] >= 4:
            ops.append(("segment", 1.0))
        ops.append(("call", 1.0))
        if self.dims == 2 and shape == ("M", "N") and self.cx["BM"] == self.cx["BN"]:
            ops.append(("trans", 0.7))
        op = self.wchoice(ops)
        e = getattr(self, "g_" + op)(shape, depth - 1, cat)
        return self.to_cat(e, cat)

    def g_arith(self, shape, d, cat):
        a = self.gen(shape, d, cat)
        b = self.gen(shape, d, cat if self.r.random() < 0.7 else None)
        if R.is_bool(a.dt) or R.is_bool(b.dt):
            return a
        a, b = self.pair(a, b)
        op = self.r.choice("+-*")
        return self.combine("%s %s %s" % (par(a.code), op, par(b.code)), self.rtype(op, a, b), a, b)

    def g_lit(self, shape, d, cat):
        a = self.gen(shape, d, cat)
        ldt = a.dt
        if self.r.random() < 0.15 and cat is None:
            ldt = "fp32" if R.is_int(a.dt) else "i32"
        b = self.lit(ldt)
        op = self.r.choice("+-*")
        if self.r.random() < 0.3:
            code = "%s %s %s" % (b.code, op, par(a.code))
            rt = self.rtype(op, b, a)
        else:
            code = "%s %s %s" % (par(a.code), op, b.code)
            rt = self.rtype(op, a, b)
        return self.combine(code, rt, a)

    def safe_divisor(self, like, shape, d):
        """An expression or literal that is never 0 (and never -1 for ints)."""
        if self.r.random() < 0.4:
            return self.lit(like, nonzero=True) if R.is_float(like) else \
                E(self.lc(self.r.randint(2, 9)), "i32", (), lit=True)
        if R.is_float(like):
            b = self.gen(shape, d, "f")
            return self.combine("tl.abs(%s) + 0.5" % b.code, b.dt, b, call=True)
        b = self.to_dt(self.gen(shape, d, "i"), like)
        return self.combine("(%s & 7) + 1" % par(b.code), like, b)

    def g_div(self, shape, d, cat):
        a = self.gen(shape, d, cat)
        like = a.dt if (R.is_int(a.dt) or self.r.random() < 0.7) else "fp32"
        b = self.safe_divisor(like, shape, d)
        self.features.add("div")
        return self.combine("%s / %s" % (par(a.code), par(b.code)), self.rtype("/", a, b), a, b,
                            loose=True)

    def g_idiv(self, shape, d, cat):
        a = self.tensor(self.gen(shape, d, "i"))
        if self.r.random() < 0.4:
            v = self.r.randint(2, 9)
            if R.is_signed(a.dt) and self.r.random() < 0.3:
                v = -v
            b = E(self.lc(v), "i32", (), lit=True)
        else:
            b = self.safe_divisor(a.dt, shape, d)
        op = self.r.choice(["//", "%"])
        self.features.add("idiv")
        return self.combine("%s %s %s" % (par(a.code), op, par(b.code)), self.rtype(op, a, b), a, b)

    def g_bit(self, shape, d, cat):
        a = self.tensor(self.gen(shape, d, "i"))
        if self.r.random() < 0.4:
            b = self.lit(a.dt)
        else:
            b = self.gen(shape, d, "i")
        op = self.r.choice("&|^")
        self.features.add("bitwise")
        return self.combine("%s %s %s" % (par(a.code), op, par(b.code)), self.rtype(op, a, b), a, b)

    def g_shift(self, shape, d, cat):
        a = self.tensor(self.gen(shape, d, "i"))
        w = R.bits(a.dt)
        op = self.r.choice(["<<", ">>"])
        if self.r.random() < 0.6:
            amt = self.lc(self.r.randint(0, w - 1))
        else:
            b = self.to_dt(self.gen(shape, d, "i"), a.dt)
            amt = "(%s & %d)" % (par(b.code), w - 1)
            a = self.combine(a.code, a.dt, a, b)
        self.features.add("shift")
        return self.combine("%s %s %s" % (par(a.code), op, amt), a.dt, a)

    def g_unary(self, shape, d, cat):
        a = self.gen(shape, d, cat)
        ch = self.r.choice(["-", "abs", "~"] if R.is_int(a.dt) else ["-", "abs"])
        if ch == "abs":
            return self.combine("tl.abs(%s)" % a.code, a.dt, a, call=True)
        return self.combine("%s%s" % (ch, par(a.code)), a.dt, a)

    def g_math(self, shape, d, cat):
        a = self.gen(shape, d, "f")
        if a.dt not in ("fp32", "fp64"):
            a = self.to_dt(a, "fp32")
        fn = self.r.choice(["exp", "exp2", "log", "log2", "sqrt", "sin", "cos", "sigmoid", "erf",
                            "floor", "ceil", "sqrt_rn", "div_rn"])
        if fn in ("sqrt_rn", "div_rn") and a.dt != "fp32":
            fn = "sqrt"
        if fn == "div_rn":
            b = self.to_dt(self.gen(shape, d, "f"), "fp32")
            self.features.add("math:div_rn")
            return self.combine("tl.div_rn(%s, tl.abs(%s) + 0.5)" % (a.code, b.code), "fp32", a, b, call=True)
        arg = a.code
        if fn in ("log", "log2", "sqrt", "sqrt_rn"):
            arg = "tl.abs(%s) + 0.5" % a.code
        elif fn in ("exp", "exp2") and self.r.random() < 0.5:
            arg = "%s * 0.25" % par(a.code)
        self.features.add("math:" + fn)
        return self.combine("tl.%s(%s)" % (fn, arg), a.dt, a, loose=fn != "sqrt_rn", call=True)

    def g_fma(self, shape, d, cat):
        dt = self.r.choice(["fp32", "fp32", "fp64"])
        xs = [self.to_dt(self.gen(shape, d, "f"), dt) for _ in range(3)]
        self.features.add("fma")
        return self.combine("tl.fma(%s, %s, %s)" % tuple(x.code for x in xs), dt, *xs, loose=True, call=True)

    def g_clamp(self, shape, d, cat):
        a = self.gen(shape, d, "f")
        if a.dt not in ("fp32", "fp64") and self.steer("clamp-typing"):
            a = self.to_dt(a, "fp32")
        lo = -self.r.choice(FLOAT_LITS)
        hi = self.r.choice(FLOAT_LITS)
        rt = "fp64" if a.dt == "fp64" else "fp32"
        self.features.add("clamp")
        return self.combine("tl.clamp(%s, %r, %r)" % (a.code, lo, hi), rt, a, call=True)

    def cond(self, shape, d):
        r = self.r.random()
        if r < 0.15:
            opts = [self.adapt(v, shape) for v, _ in self.scope if R.is_bool(v.dt)]
            opts = [o for o in opts if o is not None]
            if opts:
                return self.r.choice(opts)
        if r < 0.3 and d > 0:
            a = self.cond(shape, d - 1)
            b = self.cond(shape, d - 1)
            op = self.r.choice("&|^")
            return self.combine("%s %s %s" % (par(a.code), op, par(b.code)), "i1", a, b)
        a = self.gen(shape, d)
        if self.r.random() < 0.4:
            b = self.lit(a.dt if self.r.random() < 0.8 else ("fp32" if R.is_int(a.dt) else "i32"))
        else:
            b = self.gen(shape, d)
        a, b = self.pair(a, b)
        op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        self.features.add("compare")
        return self.combine("%s %s %s" % (par(a.code), op, par(b.code)), "i1", a, b)

    def g_where(self, shape, d, cat):
        c = self.cond(shape, d)
        a = self.gen(shape, d, cat)
        if self.r.random() < 0.3:
            b = self.lit(a.dt)
        else:
            b = self.gen(shape, d, cat)
        a, b = self.pair(a, b)
        self.features.add("where")
        rt = self.rtype("+", a, b)
        return self.combine("tl.where(%s, %s, %s)" % (c.code, a.code, b.code), rt, c, a, b, call=True)

    def g_minmax(self, shape, d, cat):
        a = self.gen(shape, d, cat)
        b = self.gen(shape, d, cat)
        use_lit = self.r.random() < 0.4
        if (use_lit or "bf16" in (a.dt, b.dt)) and self.steer("minmax-typing"):
            use_lit = False
            if a.dt == "bf16":
                a = self.to_dt(a, "fp32")
            if b.dt == "bf16":
                b = self.to_dt(b, "fp32")
        if use_lit:
            b = self.lit(a.dt)
        fn = self.r.choice(["maximum", "minimum"])
        self.features.add("minmax")
        ta = "fp32" if a.dt == "bf16" else a.dt
        tb = "fp32" if b.dt == "bf16" else b.dt
        rt = R.computation_type(ta, False, tb, False, False)
        return self.combine("tl.%s(%s, %s)" % (fn, a.code, b.code), rt, a, b, call=True)

    def g_cast(self, shape, d, cat):
        a = self.gen(shape, d, None)
        dt = self.dtype()
        if cat == "f":
            dt = self.r.choice(R.FLOAT_TYPES)
        elif cat == "i":
            dt = self.r.choice(R.INT_TYPES)
        return self.to_dt(a, dt, clamp=self.r.random() < 0.85)

    def g_bitcast(self, shape, d, cat):
        r = self.r
        exact = [(v, w) for v, w in self.scope if v.exact and R.is_float(v.dt) and self.adapt(v, shape)]
        same_width = {8: ["i8", "u8"], 16: ["i16", "u16", "fp16", "bf16"], 32: ["i32", "u32", "fp32"],
                      64: ["i64", "u64", "fp64"]}
        if exact and r.random() < 0.5:
            v = self.adapt(self.wchoice(exact), shape)
            w = R.bits(v.dt)
            dt = r.choice([t for t in same_width[w] if R.is_int(t)])
            self.features.add("bitcast:f2i")
            return E("%s.to(tl.%s, bitcast=True)" % (v.code, TL[dt]), dt, v.shape, v.poison)
        a = self.tensor(self.gen(shape, d, "i"))
        w = R.bits(a.dt)
        dt = r.choice([t for t in same_width[w] if t != a.dt])
        if R.is_float(dt):
            # keep the exponent field below all-ones: finite values only
            m = {16: 0x3FFF, 32: 0x3FFFFFFF, 64: 0x3FFFFFFFFFFFFFFF}[w]
            code = "(%s & %d).to(tl.%s, bitcast=True)" % (par(a.code), m, TL[dt])
            self.features.add("bitcast:i2f")
        else:
            code = "%s.to(tl.%s, bitcast=True)" % (par(a.code), TL[dt])
            self.features.add("bitcast:i2i")
        return self.combine(code, dt, a)

    def g_random(self, shape, d, cat):
        """tl.randint / tl.rand / tl.randn at the index block of shape."""
        r = self.r
        offs = {("B",): "offs", ("M", "N"): "offs", ("M",): "rm", ("N",): "rn"}[tuple(shape)]
        if self.dims == 1 and self.offs64 and self.steer("rand-i64-offsets"):
            offs = "offs.to(tl.int32)"
        seeds = [v.code for v in self.scalars if R.is_int(v.dt)] + [str(r.randint(0, 10 ** 6))]
        seed = r.choice(seeds)
        fn = r.choice(["randint", "rand", "randn"] if cat != "i" else ["randint"])
        if cat == "f" and fn == "randint":
            fn = "rand"
        dt = "u32" if fn == "randint" else "fp32"
        self.features.add("random:" + fn)
        return E("tl.%s(%s, %s)" % (fn, seed, offs), dt, shape, loose=fn == "randn")

    def g_gather(self, shape, d, cat):
        """A load at data-dependent addresses: a small table indexed by (e & 7)."""
        e = self.full(self.tensor(self.gen(shape, d, "i")), shape)
        dt = self.dtype()
        if cat == "f" and not R.is_float(dt):
            dt = "fp32"
        elif cat == "i" and R.is_float(dt):
            dt = "i32"
        tbl = self.add_buffer("tbl", dt, 8, self.init_for(dt), "in")
        m = self.mask_code(shape)
        self.features.add("gather")
        if m:
            code = "tl.load(%s + (%s & 7), mask=%s, other=%s)" % (tbl, par(e.code), m, self.other_for(dt))
        else:
            code = "tl.load(%s + (%s & 7))" % (tbl, par(e.code))
        return E(code, dt, shape, exact=True)

    def g_segment(self, shape, d, cat):
        """Reductions and scans over segments of R lanes: reshape, reduce or
        scan along axis 1, broadcast back, reshape to (BLOCK,)."""
        r = self.r
        R_ = r.choice([k for k in (2, 4, 8, 16) if k <= self.cx["BLOCK"]])
        fn = self.wchoice([("sum", 3), ("max", 2), ("min", 1), ("cumsum", 2), ("cumprod", 1)])
        x = self.full(self.tensor(self.gen(shape, d, cat)), shape)
        if R.is_bool(x.dt):
            x = self.to_dt(x, "i32")
        if fn in ("cumsum", "cumprod") and x.dt == "bf16" and self.steer("scan-bf16"):
            x = self.to_dt(x, "fp32")
        if x.poison and fn not in ("cumsum", "cumprod"):
            x = self.neutralise(x, fn)
        sh = "(BLOCK // %d, %d)" % (R_, R_)
        inner = "tl.reshape(%s, %s)" % (x.code, sh)
        if fn in ("cumsum", "cumprod"):
            code = "tl.reshape(tl.%s(%s, axis=1), (BLOCK,))" % (fn, inner)
            dt = x.dt
            if dt == "bf16":
                dt = "fp32"
            elif fn == "cumsum" and R.is_int(dt) and R.bits(dt) < 32:
                dt = "i32" if R.is_signed(dt) else "u32"
        else:
            code = "tl.reshape(tl.broadcast_to(tl.%s(%s, axis=1, keep_dims=True), %s), (BLOCK,))" % (
                fn, inner, sh)
            dt = self.red_dtype(fn, x.dt)
        self.features.add("reshape:segment-" + fn)
        return E(code, dt, shape, x.poison, x.loose or R.is_float(dt))

    def g_join(self, shape, d, cat):
        """tl.join of two blocks reduced over the new last axis."""
        a = self.full(self.tensor(self.gen(shape, d, cat)), shape)
        if R.is_bool(a.dt):
            a = self.to_dt(a, "i32")
        b = self.full(self.to_dt(self.tensor(self.gen(shape, d, cat)), a.dt), shape)
        fn = self.r.choice(["sum", "max", "min"])
        self.features.add("join")
        code = "tl.%s(tl.join(%s, %s), axis=%d)" % (fn, a.code, b.code, len(shape))
        return self.combine(code, self.red_dtype(fn, a.dt), a, b, loose=R.is_float(a.dt), call=True)

    # calls of other @jit functions (inlined by tk)
    HELPERS = {
        "_mul_add": "def _mul_add(a, b):\n    return a * 2 + b\n",
        "_pick": "def _pick(a, b):\n    return tl.where(a > b, a, b - a)\n",
        "_nested": "def _nested(a, b):\n    return _mul_add(a, b) * b\n",
        "_pair": "def _pair(a, b):\n    return a - b, a + b\n",
        "_c_add": "def _c_add(a, b):\n    return a + b\n",
        "_c_xor": "def _c_xor(a, b):\n    return a ^ b\n",
        "_c_max": "def _c_max(a, b):\n    return tl.maximum(a, b)\n",
    }

    def helper_type(self, name, a, b):
        two = E("2", "i32", (), lit=True)
        if name == "_mul_add":
            return self.rtype("+", E("", self.rtype("*", a, two), ()), b)
        if name == "_pick":
            return self.rtype("+", a, E("", self.rtype("-", b, a), ()))
        if name == "_nested":
            return self.rtype("*", E("", self.helper_type("_mul_add", a, b), ()), b)
        return self.rtype("-", a, b), self.rtype("+", a, b)

    def use_helper(self, name):
        if name == "_nested":
            self.use_helper("_mul_add")
        if name not in self.helpers:
            self.helpers.append(name)

    def call_args(self, shape, d, cat):
        a = self.full(self.tensor(self.gen(shape, d, cat)), shape)
        b = self.full(self.tensor(self.gen(shape, d, cat)), shape)
        if R.is_bool(a.dt):
            a = self.to_dt(a, "i32")
        if R.is_bool(b.dt):
            b = self.to_dt(b, "i32")
        return self.pair(a, b)

    def g_call(self, shape, d, cat):
        name = self.r.choice(["_mul_add", "_pick", "_nested"])
        a, b = self.call_args(shape, d, cat)
        self.use_helper(name)
        self.features.add("call" + name)
        return self.combine("%s(%s, %s)" % (name, a.code, b.code), self.helper_type(name, a, b), a, b,
                            call=True)

    def g_trans(self, shape, d, cat):
        a = self.full(self.gen(shape, d, cat), shape)
        if a.poison:
            a = self.neutralise(a, "sum")
        self.features.add("trans")
        return E("tl.trans(%s)" % a.code, a.dt, shape, False, a.loose)

    # reductions and scans
    def reducible(self, shape):
        return True

    def neutral(self, fn, dt):
        if fn in ("sum", "xor_sum"):
            return "0"
        big = fn in ("min", "argmin")
        if R.is_float(dt):
            return "float('inf')" if big else "-float('inf')"
        lo, hi = R.int_range(dt)
        return self.lc(hi if big else lo)

    def neutralise(self, x, fn):
        m = self.mask_code(x.shape)
        code = "tl.where(%s, %s, %s)" % (m, x.code, self.neutral(fn, x.dt))
        return E(code, x.dt, x.shape, False, x.loose)

    def g_reduce(self, shape, d, cat):
        r = self.r
        keep = False
        axis = 0
        if shape == ():
            srcs = [("B",)] if self.dims == 1 else [("M", "N"), ("M",), ("N",)]
            src = r.choice(srcs)
            axis = r.choice([0, None]) if len(src) == 1 else None
        elif shape == ("M",):
            src, axis = ("M", "N"), 1
        elif shape == ("N",):
            src, axis = ("M", "N"), 0
        elif shape == ("M", "N"):
            src, axis, keep = ("M", "N"), r.choice([0, 1]), True
        else:  # ('B',)
            src, axis, keep = ("B",), 0, True
        fns = [("sum", 4), ("max", 2), ("min", 2), ("xor_sum", 0.7), ("combine", 0.8)]
        if axis is not None:
            fns += [("argmax", 1), ("argmin", 1)]
        fn = self.wchoice(fns)
        x = self.full(self.gen(src, d, cat if fn not in ("argmax", "argmin") else None), src)
        if R.is_bool(x.dt) or fn == "xor_sum" and R.is_float(x.dt):
            x = self.to_dt(x, "i32")
        comb = None
        if fn == "combine":
            # tl.reduce with a @jit combine: exact (integer add, xor) or order-free (max)
            comb = "_c_max" if R.is_float(x.dt) or self.r.random() < 0.3 else self.r.choice(["_c_add", "_c_xor"])
            if x.dt == "bf16":
                x = self.to_dt(x, "fp32")
            fn = {"_c_max": "max", "_c_add": "sum", "_c_xor": "xor_sum"}[comb]
        if x.poison:
            x = self.neutralise(x, fn)
        rdt = self.red_dtype(fn, x.dt)
        kw = "" if axis is None else ", axis=%d" % axis
        if keep:
            kw += ", keep_dims=True"
        code = "tl.%s(%s%s)" % (fn, x.code, kw)
        if comb:
            self.use_helper(comb)
            rdt = x.dt
            code = "tl.reduce(%s, %s, %s%s)" % (x.code, axis, comb, ", keep_dims=True" if keep else "")
            self.features.add("reduce:combine%s" % comb)
        if axis is None and len(src) == 2 and r.random() < 0.4:
            code = "tl.%s(tl.reshape(%s, (BM * BN,)), axis=0)" % (fn, x.code)
            self.features.add("reshape:flatten")
        if axis is None or len(src) == 1 and not keep:
            rshape = ()
        elif keep:
            rshape = tuple(1 if i == axis else s for i, s in enumerate(src))
        else:
            rshape = tuple(s for i, s in enumerate(src) if i != axis)
        self.features.add("reduce:%s%s" % (fn, "" if axis is None else ":axis%d" % axis))
        return E(code, rdt, rshape, False, x.loose or R.is_float(x.dt))

    def red_dtype(self, fn, dt):
        if fn == "xor_sum":
            return dt
        small = R.bits(dt) < 32
        if fn == "sum" and R.is_int(dt) and small:
            return "i32" if R.is_signed(dt) else "u32"
        if fn in ("max", "min") and small:
            return "fp32" if R.is_float(dt) else "i32"
        if fn in ("argmax", "argmin"):
            return "i32"
        return dt

    def g_scan(self, shape, d, cat):
        x = self.full(self.gen(shape, d, cat), shape)
        if R.is_bool(x.dt):
            x = self.to_dt(x, "i32")
        fn = self.r.choice(["cumsum", "cumsum", "cumprod", "combine"])
        if fn == "combine":
            comb = "_c_max" if R.is_float(x.dt) or self.r.random() < 0.3 else self.r.choice(["_c_add", "_c_xor"])
            if x.dt == "bf16":
                x = self.to_dt(x, "fp32")
            axis = 0 if len(shape) == 1 else self.r.choice([0, 1])
            rev = self.r.random() < 0.25
            if rev and x.poison:
                x = self.neutralise(x, {"_c_max": "max", "_c_add": "sum", "_c_xor": "sum"}[comb])
            self.use_helper(comb)
            self.features.add("scan:combine%s" % comb)
            return E("tl.associative_scan(%s, %d, %s%s)" % (x.code, axis, comb, ", reverse=True" if rev else ""),
                     x.dt, shape, x.poison, x.loose)
        if x.dt == "bf16" and self.steer("scan-bf16"):
            x = self.to_dt(x, "fp32")
        if fn == "cumprod" and R.is_float(x.dt) and self.r.random() < 0.7:
            # near 1, so that long products stay finite
            x = E("%s * 0.125 + 1.0" % par(x.code), x.dt if x.dt != "bf16" else "bf16", x.shape,
                  x.poison, x.loose)
        axis = 0 if len(shape) == 1 else self.r.choice([0, 1])
        rev = self.r.random() < 0.25
        if rev and x.poison:  # the masked tail comes first
            m = self.mask_code(x.shape)
            x = E("tl.where(%s, %s, %s)" % (m, x.code, "0" if fn == "cumsum" else "1"), x.dt, x.shape,
                  False, x.loose)
        dt = x.dt
        if dt == "bf16":
            dt = "fp32"
        elif fn == "cumsum" and R.is_int(dt) and R.bits(dt) < 32:
            dt = "i32" if R.is_signed(dt) else "u32"
        self.features.add("scan:%s:axis%d%s" % (fn, axis, ":reverse" if rev else ""))
        return E("tl.%s(%s, axis=%d%s)" % (fn, x.code, axis, ", reverse=True" if rev else ""), dt, shape,
                 x.poison, x.loose or R.is_float(dt))

    # ------------------------------------------------------------ arguments
    def add_buffer(self, prefix, dt, size, init, role):
        name = self.fresh(prefix) + "_ptr"
        self.args.append({"name": name, "kind": "buffer", "dtype": dt, "size": size, "init": init,
                          "role": role})
        return name

    def add_scalar(self, name, dt, value):
        self.args.append({"name": name, "kind": "scalar", "dtype": dt, "value": value})

    def init_for(self, dt):
        r = self.r
        seed = r.randrange(1 << 30)
        if dt == "i1":
            return {"kind": "randint", "lo": 0, "hi": 1, "seed": seed}
        if R.is_float(dt):
            k = self.wchoice([("normal", 4), ("uniform", 3), ("dyadic", 2)])
            if k == "uniform":
                return {"kind": "uniform", "lo": -4.0, "hi": 4.0, "seed": seed}
            if k == "dyadic":
                return {"kind": "dyadic", "lim": 64, "seed": seed}
            return {"kind": "normal", "sigma": 1.0, "seed": seed}
        lo, hi = R.int_range(dt)
        if r.random() < 0.3:
            return {"kind": "bits", "seed": seed}
        span = r.choice([10, 100, 1000])
        return {"kind": "randint", "lo": max(lo, -span), "hi": min(hi, span), "seed": seed}

    def region(self, shape):
        """(address code, mask code, size) of a per-program-disjoint output
        region for a value of shape."""
        if self.dims == 1:
            if shape == ("B",):
                return "offs", "mask", self.n
            return "pid", None, self.grid[0]
        if shape == ("M", "N"):
            return "offs", "mask", self.M * self.N
        if shape == ("M",):
            return "pid_n * M + rm", "mask_m", self.M * self.grid[1]
        if shape == ("N",):
            return "pid_m * N + rn", "mask_n", self.N * self.grid[0]
        return "pid_m * tl.num_programs(1) + pid_n", None, self.grid[0] * self.grid[1]

    def load_region(self, shape):
        """(address code, mask code, size) of an input of shape."""
        if self.dims == 1:
            if shape == ("B",):
                return "offs", "mask", self.n
            return None
        if shape == ("M", "N"):
            return "offs", "mask", self.M * self.N
        if shape == ("M",):
            return "rm", "mask_m", self.M
        if shape == ("N",):
            return "rn", "mask_n", self.N
        return None

    def other_for(self, dt):
        if dt == "i1":
            return self.r.choice(["0", "1"])
        if R.is_float(dt):
            return self.r.choice(["0.0", "1.0", "-2.5", "0.5"])
        return self.r.choice(["0", "1", "7"])

    def load_input(self, shape, dt=None, stack=None):
        """Emits a load into a new variable; stack = (loop var, count) loads
        slice `i` of a buffer holding `count` copies of the region."""
        dt = dt or self.dtype()
        var = self.fresh("x")
        if shape == ():
            size = self.r.randint(2, 6) if stack is None else stack[1]
            ptr = self.add_buffer("in", dt, size, self.init_for(dt), "in")
            if stack is not None:
                idx = stack[0]
            elif self.r.random() < 0.5:
                idx = self.lc(self.r.randrange(size))
            else:
                pidv = "pid" if self.dims == 1 else "pid_m"
                idx = "%s %% %d" % (pidv, size)
            self.emit("%s = tl.load(%s + %s)" % (var, ptr, idx))
            e = E(var, dt, (), exact=True)
        else:
            addr, mask, size = self.load_region(shape)
            if stack is not None:
                stride = {("B",): "n", ("M", "N"): "M * N", ("M",): "M", ("N",): "N"}[tuple(shape)]
                addr = "%s * %s + %s" % (stack[0], stride, addr)
                size *= stack[1]
            ptr = self.add_buffer("in", dt, size, self.init_for(dt), "in")
            poison = self.r.random() < 0.25
            if poison:
                self.emit("%s = tl.load(%s + %s, mask=%s)" % (var, ptr, addr, mask))
            else:
                extra = ""
                if self.r.random() < 0.1:
                    extra = self.r.choice([", cache_modifier='.cg'", ", eviction_policy='evict_last'",
                                           ", cache_modifier='.ca'", ", eviction_policy='evict_first'"])
                    self.features.add("load:hints")
                self.emit("%s = tl.load(%s + %s, mask=%s, other=%s%s)" % (var, ptr, addr, mask,
                                                                           self.other_for(dt), extra))
                self.features.add("load:other")
            e = E(var, dt, shape, poison=poison, exact=True)
        self.features.add("dtype:" + dt)
        return e

    # ------------------------------------------------------------ statements
    def add_var(self, e, w=4.0):
        self.scope.append((e, w))

    def new_var(self, e, prefix="v"):
        e = self.tensor(e)
        name = self.fresh(prefix)
        self.emit("%s = %s" % (name, e.code))
        v = E(name, e.dt, e.shape, e.poison, e.loose)
        # recent values are the likeliest operands: long chains of dependences
        self.scope = [(x, w * 0.8 if x.code.startswith(("v", "acc")) else w) for x, w in self.scope]
        self.add_var(v, 8.0)
        return v

    def expr_stmt_shape(self):
        return self.wchoice(self.kind_weights())

    def s_assign(self):
        shape = self.expr_stmt_shape()
        if self.r.random() < 0.1:
            a, b = self.call_args(shape, self.r.randint(1, 2), None)
            self.use_helper("_pair")
            t0, t1 = self.helper_type("_pair", a, b)
            p, q = self.fresh("v"), self.fresh("v")
            self.emit("%s, %s = _pair(%s, %s)" % (p, q, a.code, b.code))
            for name, dt in ((p, t0), (q, t1)):
                self.add_var(E(name, dt, shape, a.poison or b.poison, a.loose or b.loose), 6.0)
            self.features.add("call_pair")
            return
        e = self.full(self.gen(shape, self.r.randint(2, 4)), shape)
        if R.is_bool(e.dt):
            e = self.to_dt(e, "i32")
        self.new_var(e)

    def update(self, acc, shape, d):
        """An expression of acc's dtype and shape that combines acc with a new term."""
        r = self.r
        t = self.gen(shape, d)
        if R.is_bool(t.dt):
            t = self.to_dt(t, "i32")
        if {acc.dt, t.dt} == {"fp16", "bf16"} and self.steer("fp16-bf16"):
            t = self.to_dt(t, "fp32")
        k = self.wchoice([("+", 6), ("-", 2), ("*", 1), ("max", 1), ("where", 1)])
        if k in "+-*":
            code = "%s %s %s" % (acc.code, k, par(t.code))
            e = self.combine(code, self.rtype(k, acc, t), acc, t)
        elif k == "max":
            if "bf16" in (acc.dt, t.dt) and self.steer("minmax-typing"):
                e = self.combine("%s + %s" % (acc.code, par(t.code)), self.rtype("+", acc, t), acc, t)
            else:
                fn = r.choice(["maximum", "minimum"])
                ta = "fp32" if acc.dt == "bf16" else acc.dt
                tb = "fp32" if t.dt == "bf16" else t.dt
                e = self.combine("tl.%s(%s, %s)" % (fn, acc.code, t.code),
                                 R.computation_type(ta, False, tb, False, False), acc, t)
        else:
            c = self.cond(shape, 1)
            t = self.to_dt(t, acc.dt)
            e = self.combine("tl.where(%s, %s, %s)" % (c.code, acc.code, t.code), acc.dt, acc, c, t)
        return self.full(self.to_dt(e, acc.dt), shape)

    def s_loop(self, nested=False):
        r = self.r
        accs = []
        for _ in range(1 if r.random() < 0.7 else 2):
            shape = self.expr_stmt_shape()
            init = self.full(self.gen(shape, r.randint(0, 2)), shape)
            if R.is_bool(init.dt):
                init = self.to_dt(init, "i32")
            accs.append(self.new_var(init, "acc"))
        # an existing value may be carried through the loop as well
        mine = [v for v, _ in self.scope if v.code.startswith("v") and not v.lit]
        if mine and r.random() < 0.25 and not nested:
            accs.append(r.choice(mine))
        count = r.randint(0, 4) if r.random() < 0.2 else r.randint(2, 4)
        i = self.fresh("i")
        how = self.wchoice([("literal", 3), ("scalar", 3), ("static", 2), ("lo-hi", 1), ("down", 1),
                            ("step", 1), ("while", 1)])
        idx = i
        if how == "literal":
            self.emit("for %s in range(%d):" % (i, count))
        elif how == "static":
            self.emit("for %s in tl.static_range(%d):" % (i, count))
        elif how == "lo-hi":
            self.emit("for %s in range(1, %d):" % (i, count + 1))
            idx = "(%s - 1)" % i
        elif how == "down":
            self.emit("for %s in range(%d, -1, -1):" % (i, count - 1))
        elif how == "step":
            self.emit("for %s in range(0, %d, 2):" % (i, 2 * count))
            idx = "(%s // 2)" % i
        elif how == "while":
            self.emit("%s = tl.full((), 0, tl.int32)" % i)
            self.emit("while %s < %d:" % (i, count))
        else:
            if count == 1:
                count = 2  # Triton would make an int argument equal to 1 a constexpr
            name = self.fresh("L")
            self.add_scalar(name, "i32", count)
            self.emit("for %s in range(0, %s):" % (i, name))
        self.features.add("loop:" + how)
        if count == 0:
            self.features.add("loop:zero-trip")
        self.indent += 1
        saved = list(self.scope)
        self.add_var(E(i, "i32", (), lit=(how == "static")), 1.0)
        if count > 0 and r.random() < 0.6:
            lshape = r.choice([sh for sh in self.kinds()])
            xi = self.load_input(lshape, stack=(idx, count))
            self.add_var(xi, 6.0)
        # loop-carried values keep their dtype and shape
        poison = False
        for acc in accs:
            u = self.update(acc, acc.shape, r.randint(1, 2))
            self.emit("%s = %s" % (acc.code, u.code))
            poison = poison or u.poison
        if r.random() < 0.3:
            cond = "%s %% 2 == 0" % i if how not in ("lo-hi", "step") else "%s > 1" % i
            self.emit("if %s:" % cond)
            self.indent += 1
            acc = r.choice(accs)
            u = self.update(acc, acc.shape, 1)
            self.emit("%s = %s" % (acc.code, u.code))
            poison = poison or u.poison
            self.indent -= 1
            self.features.add("if-in-loop")
        if not nested and r.random() < 0.15:
            j = self.fresh("j")
            self.emit("for %s in range(%d):" % (j, r.randint(1, 3)))
            self.indent += 1
            self.add_var(E(j, "i32", ()), 1.0)
            acc = r.choice(accs)
            u = self.update(acc, acc.shape, 1)
            self.emit("%s = %s" % (acc.code, u.code))
            poison = poison or u.poison
            self.indent -= 1
            self.features.add("loop:nested")
        if how == "while":
            self.emit("%s = %s + 1" % (i, i))
        self.indent -= 1
        self.scope = saved
        for acc in accs:
            acc.poison = acc.poison or poison

    def scalar_cond(self):
        r = self.r
        k = self.wchoice([("pid", 2), ("scalar", 2), ("data", 2), ("size", 1)])
        if k == "pid":
            p = "pid" if self.dims == 1 else r.choice(["pid_m", "pid_n"])
            return "%s %% 2 == %d" % (p, r.randint(0, 1))
        if k == "scalar" and self.scalars:
            s = r.choice(self.scalars)
            return "%s %s %s" % (s.code, r.choice(["<", ">", "==", "!="]), self.lc(self.lit_for(s.dt)))
        if k == "size":
            return "%s > %d" % ("n" if self.dims == 1 else "M", r.randint(2, 200))
        src = ("B",) if self.dims == 1 else r.choice([("M", "N"), ("M",), ("N",)])
        x = self.full(self.gen(src, 1, "i"), src)
        if x.poison:
            x = self.neutralise(x, "sum")
        self.features.add("if:data")
        return "tl.sum(%s) %s %d" % (x.code, r.choice(["<", ">"]), r.randint(-50, 50))

    def s_if(self):
        r = self.r
        cond = self.scalar_cond()
        mine = [(v, w) for v, w in self.scope if v.code.startswith("v") and not v.lit]
        if mine and r.random() < 0.4:
            v = self.wchoice(mine)
            self.emit("if %s:" % cond)
            self.indent += 1
            self.emit("%s = %s" % (v.code, self.update(v, v.shape, 1).code))
            self.indent -= 1
            self.features.add("if")
            return
        shape = self.expr_stmt_shape()
        a = self.full(self.gen(shape, r.randint(1, 2)), shape)
        if R.is_bool(a.dt):
            a = self.to_dt(a, "i32")
        name = self.fresh("v")
        self.emit("if %s:" % cond)
        self.indent += 1
        self.emit("%s = %s" % (name, a.code))
        self.indent -= 1
        self.emit("else:")
        self.indent += 1
        b = self.full(self.to_dt(self.gen(shape, r.randint(1, 2)), a.dt), shape)
        self.emit("%s = %s" % (name, b.code))
        self.indent -= 1
        self.add_var(E(name, a.dt, shape, a.poison or b.poison, a.loose or b.loose))
        self.features.add("if-else")

    def s_atomic(self):
        r = self.r
        shape = self.expr_stmt_shape()
        dt = r.choice(["i32", "i32", "i64", "u32", "u64"])
        op = self.wchoice([("add", 4), ("max", 2), ("min", 2), ("and", 1), ("or", 1), ("xor", 1)])
        size = r.randint(1, 8)
        val = self.full(self.to_dt(self.gen(shape, r.randint(1, 2), "i"), dt), shape)
        mask = self.mask_code(shape)
        idx = {("B",): "offs", ("M", "N"): "offs", ("M",): "rm", ("N",): "rn"}.get(tuple(shape))
        if idx is None:
            idx = "pid" if self.dims == 1 else "pid_m + pid_n"
        idx = "(%s) %% %d" % (idx, size) if size > 1 else "0"
        # sometimes a data-dependent bin
        ints = [v for v, _ in self.scope if R.is_int(v.dt) and not R.is_bool(v.dt) and v.shape == shape
                and shape != () and not v.poison]
        if ints and r.random() < 0.4:
            x = r.choice(ints)
            size = 8
            idx = "(%s & 7)" % x.code
        lo, hi = R.int_range(dt)
        init = {"kind": "randint", "lo": max(lo, -1000), "hi": min(hi, 1000), "seed": r.randrange(1 << 30)}
        ptr = self.add_buffer("at", dt, size, init, "atomic")
        if idx == "0" and shape != ():
            self.emit("tl.atomic_%s(%s + tl.zeros(%s, dtype=tl.int32), %s%s)" % (
                op, ptr, self.shape_code(shape), val.code, ", mask=%s" % mask if mask else ""))
        else:
            self.emit("tl.atomic_%s(%s + %s, %s%s)" % (op, ptr, idx, val.code,
                                                       ", mask=%s" % mask if mask else ""))
        self.features.add("atomic:" + op)

    def s_dot(self):
        r = self.r
        dt = r.choice(["fp16", "bf16", "fp32", "fp32", "i8", "fp64"])
        init = self.init_for(dt)
        if dt == "i8":
            init = {"kind": "randint", "lo": -100, "hi": 100, "seed": init["seed"]}
        a, b = self.fresh("a"), self.fresh("b")
        pa = self.add_buffer("in", dt, self.M * 32, init, "in")
        self.emit("%s = tl.load(%s + rm[:, None] * BK + rk[None, :], mask=mask_m[:, None], other=0)"
                  % (a, pa))
        init = dict(init, seed=r.randrange(1 << 30))
        pb = self.add_buffer("in", dt, 32 * self.N, init, "in")
        self.emit("%s = tl.load(%s + rk[:, None] * N + rn[None, :], mask=mask_n[None, :], other=0)"
                  % (b, pb))
        out = {"i8": "i32", "fp64": "fp64"}.get(dt, "fp32")
        kw = ""
        if dt == "fp32":
            prec = r.choice([None, "ieee", "ieee", "tf32"])
            if prec:
                kw += ", input_precision=%r" % prec
            self.features.add("dot:fp32:%s" % (prec or "default"))
        elif dt == "fp16" and r.random() < 0.3:
            out = "fp16"
            kw += ", out_dtype=tl.float16"
        accs = [v for v, _ in self.scope if v.dt == out and v.shape == ("M", "N") and not v.poison
                and not v.lit and v.code.startswith(("v", "acc"))]
        poison = False
        if accs and r.random() < 0.5:
            c = r.choice(accs)
            kw += ", acc=%s" % c.code
            if out != "fp32" and "out_dtype" not in kw:
                kw += ", out_dtype=tl.%s" % TL[out]
            self.features.add("dot:acc")
        self.features.add("dot:" + dt)
        self.new_var(E("tl.dot(%s, %s%s)" % (a, b, kw), out, ("M", "N"), poison, R.is_float(out)))

    def s_store(self, v=None):
        r = self.r
        if v is None:
            cands = [(x, w) for x, w in self.scope if x.code.startswith(("v", "acc"))
                     and x.code not in self.stored]
            if not cands or r.random() < 0.3:
                shape = self.expr_stmt_shape()
                if r.random() < 0.15:
                    v = self.full(self.tensor(self.cond(shape, 1)), shape)
                    self.features.add("store:i1")
                else:
                    v = self.full(self.gen(shape, r.randint(1, 3)), shape)
            else:
                v = self.wchoice(cands)
        if R.is_bool(v.dt) and r.random() < 0.5:
            v = self.to_dt(v, "i8")
        odt = v.dt
        if r.random() < 0.3 and not R.is_bool(odt):
            odt = self.dtype()
            if R.is_float(v.dt) and R.is_int(odt):
                v = self.to_dt(v, odt)
        addr, mask, size = self.region(v.shape)
        fill = r.choice([0, 13, 77])
        ptr = self.add_buffer("out", odt, size, {"kind": "fill", "value": fill}, "out")
        loose = v.loose or R.is_float(v.dt) and odt != v.dt
        tclass = "exact" if R.is_int(odt) else odt + ("-loose" if loose else "")
        self.args[-1]["tol"] = {"class": tclass, "rtol": TOL[tclass][0], "atol": TOL[tclass][1]}
        self.stored.add(v.code)
        if mask and v.shape != () and r.random() < 0.2:
            c = self.cond(v.shape, 1)
            if not c.poison:
                mask = "%s & (%s)" % (mask, c.code)
                self.features.add("store:cond-mask")
        if mask:
            self.emit("tl.store(%s + %s, %s, mask=%s)" % (ptr, addr, v.code, mask))
        else:
            self.emit("tl.store(%s + %s, %s)" % (ptr, addr, v.code))
        self.stores += 1

    # ------------------------------------------------------------ the kernel
    def build(self):
        r = self.r
        self.lines, self.indent, self.counter = [], 1, 0
        self.args, self.scope, self.scalars, self.stores = [], [], [], 0
        self.stored = set()
        self.helpers = []
        self.features = set()
        self.dims = 1 if r.random() < 0.45 else 2
        self.features.add("dims%d" % self.dims)
        warps = r.choice([1, 2, 4, 4, 8]) if r.random() < 0.95 else 16
        self.use_dot = self.dims == 2 and r.random() < 0.15
        if self.dims == 1:
            block = self.wchoice([(r.choice([16, 32, 64, 128, 128, 256]), 85), (r.choice([512, 1024]), 10),
                                  (r.choice([1, 2, 4, 8]), 5)])
            g = r.randint(1, 4)
            self.n = max(2, block * g - r.choice([0, r.randint(0, block - 1)]))
            self.grid = [-(-self.n // block)]
            self.cx = {"BLOCK": block}
            if block < 16:
                self.features.add("block:small")
            self.add_scalar("n", "i32", self.n)
            self.emit("pid = tl.program_id(0)")
            self.offs64 = r.random() < 0.15
            if self.offs64:
                self.emit("offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)")
                self.features.add("offs:i64")
            else:
                self.emit("offs = pid * BLOCK + tl.arange(0, BLOCK)")
            if r.random() < 0.2:
                self.emit("offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK)")
                self.features.add("hints")
            self.emit("mask = offs < n")
            self.add_var(E("offs", "i64" if self.offs64 else "i32", ("B",)), 1.0)
            self.add_var(E("pid", "i32", ()), 0.5)
            self.add_var(E("mask", "i1", ("B",)), 1.0)
            self.add_var(E("n", "i32", ()), 0.3)
        else:
            limit = 512 if r.random() < 0.9 else 1024
            while True:
                bm, bn = r.choice([2, 4, 8, 16, 32]), r.choice([2, 4, 8, 16, 32, 64])
                if r.random() < 0.05:
                    bm, bn = r.choice([(1, bn), (bm, 1), (1, 1)])
                if self.use_dot:
                    bm, bn = r.choice([16, 32]), r.choice([16, 32])
                if bm * bn <= limit:
                    break
            gm, gn = r.randint(1, 3), r.randint(1, 2)
            self.M = max(2, bm * gm - r.choice([0, r.randint(0, bm - 1)]))
            self.N = max(2, bn * gn - r.choice([0, r.randint(0, bn - 1)]))
            self.grid = [-(-self.M // bm), -(-self.N // bn)]
            self.cx = {"BM": bm, "BN": bn}
            if bm == 1 or bn == 1:
                self.features.add("block:size-1-dim")
            if warps == 16:
                self.features.add("num_warps:16")
            self.add_scalar("M", "i32", self.M)
            self.add_scalar("N", "i32", self.N)
            self.offs64 = False
            lines = ["pid_m = tl.program_id(0)", "pid_n = tl.program_id(1)",
                     "rm = pid_m * BM + tl.arange(0, BM)", "rn = pid_n * BN + tl.arange(0, BN)"]
            if r.random() < 0.2:
                lines.append("rn = tl.max_contiguous(tl.multiple_of(rn, BN), BN)")
                self.features.add("hints")
            lines += ["mask_m = rm < M", "mask_n = rn < N",
                      "mask = mask_m[:, None] & mask_n[None, :]", "offs = rm[:, None] * N + rn[None, :]"]
            for line in lines:
                self.emit(line)
            for name, dt, sh, w in [("rm", "i32", ("M",), 0.7), ("rn", "i32", ("N",), 0.7),
                                    ("offs", "i32", ("M", "N"), 0.7), ("pid_m", "i32", (), 0.3),
                                    ("pid_n", "i32", (), 0.3), ("mask", "i1", ("M", "N"), 1.0),
                                    ("mask_m", "i1", ("M",), 0.5), ("mask_n", "i1", ("N",), 0.5),
                                    ("M", "i32", (), 0.2), ("N", "i32", (), 0.2)]:
                self.add_var(E(name, dt, sh), w)
            if self.use_dot:
                self.cx["BK"] = 32
                self.emit("rk = tl.arange(0, BK)")
        # extra runtime scalars
        for _ in range(r.choice([0, 1, 1, 2])):
            k = self.wchoice([("i32", 4), ("fp32", 3), ("i64", 1)])
            name = self.fresh("s")
            if k == "i32":
                v = r.choice([r.randint(-50, 0), r.randint(2, 50), r.randint(100, 10 ** 6)])
            elif k == "fp32":
                v = r.randint(-40, 40) / 8.0
                if v == 1.0 or v == int(v):
                    v += 0.125
            else:
                v = r.choice([1, -1]) * r.randint(2 ** 31, 2 ** 40)
            self.add_scalar(name, k, v)
            e = E(name, k, ())
            self.scalars.append(e)
            self.add_var(e, 1.0)
        # inputs
        for _ in range(r.randint(1, 4)):
            shape = self.wchoice(self.kind_weights())
            self.add_var(self.load_input(shape), 6.0)
        if r.random() < 0.1:
            shape = self.wchoice([(k, w) for k, w in self.kind_weights() if k != ()])
            self.add_var(self.load_input(shape, dt="i1"), 2.0)
        if self.use_dot:
            self.s_dot()
        # body
        stmts = [("assign", 8), ("loop", 3), ("if", 3), ("atomic", 2), ("store", 3)]
        if self.use_dot:
            stmts.append(("dot", 2))
        for _ in range(r.randint(2, 7)):
            getattr(self, "s_" + self.wchoice(stmts))()
        # results: the last values computed, and maybe one more expression
        mine = [v for v, _ in self.scope if v.code.startswith(("v", "acc")) and v.code not in self.stored]
        for v in mine[-r.randint(1, 3):]:
            self.s_store(v)
        if self.stores == 0 or r.random() < 0.3:
            self.s_store()
        return self.render(warps)

    def render(self, warps):
        name = "k%d" % self.seed
        params = [a["name"] for a in self.args]
        params += ["%s: tl.constexpr" % c for c in self.cx]
        sig = ",".join(("*" + a["dtype"]) if a["kind"] == "buffer" else a["dtype"] for a in self.args)
        meta = {"version": VERSION, "seed": self.seed, "kernel": name, "grid": self.grid,
                "num_warps": warps, "constexprs": self.cx, "signature": sig, "args": self.args,
                "features": sorted(self.features)}
        head = "%s%s\n" % (HEADER, json.dumps(meta, separators=(",", ":")))
        src = head + "import triton\nimport triton.language as tl\n\n\n"
        for h in self.helpers:
            src += "@triton.jit\n" + self.HELPERS[h] + "\n\n"
        src += "@triton.jit\n"
        src += "def %s(%s):\n" % (name, ", ".join(params))
        src += "\n".join(self.lines) + "\n"
        return src, meta


def read_header(text):
    for line in text.splitlines():
        if line.startswith(HEADER):
            return json.loads(line[len(HEADER):])
    raise ValueError("no '%s' header" % HEADER.strip())


def generate(seed, all_constructs=False, tries=200):
    """(source, meta, reference outputs, rejected candidates) for a seed."""
    last = None
    for attempt in range(tries):
        sub = seed if attempt == 0 else seed * 7919 + attempt * 104729 + 1
        g = Gen(sub, all_constructs)
        g.seed = seed
        try:
            src, meta = g.build()
        except R.Invalid as ex:  # a typing corner the generator got wrong
            last = ex
            continue
        meta["attempt"] = attempt
        try:
            ref = R.run(src, meta)
        except R.Invalid as ex:
            last = ex
            continue
        # keep the header's attempt in sync with the text
        head = "%s%s\n" % (HEADER, json.dumps(meta, separators=(",", ":")))
        src = head + src.split("\n", 1)[1]
        return src, meta, ref, attempt
    raise RuntimeError("seed %d: no valid program in %d tries (last: %s)" % (seed, tries, last))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="write a random tk/Triton kernel file")
    ap.add_argument("seed", type=int)
    ap.add_argument("-o", "--out", help="file to write (default: stdout)")
    ap.add_argument("--all-constructs", action="store_true",
                    help="also constructs on which tk is known to differ from Triton")
    a = ap.parse_args(argv)
    src, meta, _, _ = generate(a.seed, a.all_constructs)
    if a.out:
        with open(a.out, "w") as f:
            f.write(src)
    else:
        sys.stdout.write(src)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
