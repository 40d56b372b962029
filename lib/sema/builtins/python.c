/* sema/builtins/python.c: Python builtins usable in kernels (min, max, abs, float,
 * int, len, print), triton.cdiv / triton.next_power_of_2, dtype methods,
 * and the libdevice functions (tl.math.X, tl.extra.cuda.libdevice.X),
 * which become IR_MATH where one exists and IR_EXTERN __nv_* otherwise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

/* ---- Python builtins ---------------------------------------------------------------- */

static SVal py_minmax(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    SVal t = a[0];
    TK_UNUSED(at);
    if (t.n == 0)
        return sema_err(s, call, "%s() needs at least one argument", b->name);
    SVal acc = t.items[0];
    for (int i = 1; i < t.n; i++) {
        SVal x = t.items[i];
        if (sv_is_num(acc) && sv_is_num(x)) {
            SVal lt = sema_compare(s, OP_LT, x, acc, call);
            bool take = b->arg ? !lt.i && sema_compare(s, OP_NE, x, acc, call).i : lt.i;
            acc = take ? x : acc;
            continue;
        }
        SVal args[2] = {acc, x};
        Span sp[2] = {call, call};
        CallArgs ca = {.pos = args, .pos_at = sp, .npos = 2, .at = call};
        acc = sema_call_builtin(s, "tl", b->arg ? "maximum" : "minimum", (SVal){.k = SV_VOID}, &ca);
        if (acc.k == SV_UNDEF)
            return acc;
    }
    return acc;
}

static SVal py_abs(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b);
    if (a[0].k == SV_FLOAT)
        return sv_float(fabs(a[0].f));
    if (a[0].k == SV_INT && a[0].i == INT64_MIN && !a[0].big)
        return sema_err(s, call,
                        "constexpr integer overflow in abs() (values must fit in 64 bits)");
    if (a[0].k == SV_INT && a[0].big)
        return a[0]; /* a literal above INT64_MAX is already positive */
    if (a[0].k == SV_INT || a[0].k == SV_BOOL)
        return sv_int(a[0].i < 0 ? -a[0].i : a[0].i);
    CallArgs ca = {.pos = a, .pos_at = at, .npos = 1, .at = call};
    return sema_call_builtin(s, "tl", "abs", (SVal){.k = SV_VOID}, &ca);
}

static SVal py_float(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(call);
    SVal v = a[0];
    if (v.k == SV_VOID)
        return sv_float(0);
    if (v.k == SV_STR) {
        const char *t = v.s;
        int sign = 1;
        if (*t == '-' || *t == '+')
            sign = *t++ == '-' ? -1 : 1;
        if (!strcmp(t, "inf") || !strcmp(t, "infinity") || !strcmp(t, "Infinity"))
            return sv_float(sign * (double)INFINITY);
        if (!strcmp(t, "nan"))
            return sv_float(NAN);
        char *end;
        double d = strtod(v.s, &end);
        if (*end == 0 && end != v.s)
            return sv_float(d);
        return sema_err(s, at[0], "float() cannot parse '%s'", v.s);
    }
    if (sv_is_num(v))
        return sv_float(v.k == SV_FLOAT ? v.f : (double)v.i);
    return sema_err(s, at[0],
                    "float() needs a constexpr number or string, got %s (use "
                    "x.to(tl.float32) for tensors)",
                    sv_describe(s, v));
}

static SVal py_int(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(call);
    SVal v = a[0];
    if (v.k == SV_FLOAT) {
        if (!(fabs(v.f) < 9.2e18))
            return sema_err(s, at[0], "int() of %g does not fit in 64 bits", v.f);
        return sv_int((int64_t)v.f);
    }
    if (v.k == SV_INT || v.k == SV_BOOL)
        return b->arg ? sv_bool(v.i != 0) : sv_int(v.i);
    if (v.k == SV_VOID)
        return b->arg ? sv_bool(false) : sv_int(0);
    return sema_err(s, at[0], "%s() needs a constexpr number, got %s", b->name, sv_describe(s, v));
}

static SVal py_len(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(call);
    if (a[0].k == SV_TUPLE)
        return sv_int(a[0].n);
    if (a[0].k == SV_STR)
        return sv_int((int64_t)strlen(a[0].s));
    if (a[0].k == SV_TENSOR && a[0].v->type.rank > 0)
        return sv_int(a[0].v->type.shape[0]);
    return sema_err(s, at[0], "len() of %s", sv_describe(s, a[0]));
}

/* print(...) in a kernel is device_print, as in Triton: the leading
 * strings form the prefix, and constexprs are printed at run time as the
 * scalars they are. */
static SVal py_print(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b);
    TK_UNUSED(at);
    int k = 0;
    StrBuf pre;
    sb_init(&pre);
    for (; k < a[0].n && a[0].items[k].k == SV_STR; k++)
        sb_printf(&pre, "%s%s", k ? " " : "", a[0].items[k].s);
    SVal *rest = arena_alloc(s->a, sizeof(SVal) * (size_t)(a[0].n + 2));
    rest[0] = sv_str(arena_strdup(s->a, pre.data ? pre.data : ""));
    sb_free(&pre);
    for (int i = k; i < a[0].n; i++)
        rest[1 + i - k] = a[0].items[i];
    Span *rsp = arena_alloc(s->a, sizeof(Span) * (size_t)(a[0].n + 2));
    for (int i = 0; i <= a[0].n - k; i++)
        rsp[i] = call;
    CallArgs ca = {.pos = rest, .pos_at = rsp, .npos = 1 + a[0].n - k, .at = call};
    return sema_call_builtin(s, "tl", "device_print", (SVal){.k = SV_VOID}, &ca);
}

static SVal py_cdiv(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    CallArgs ca = {.pos = a, .pos_at = at, .npos = 2, .at = call};
    TK_UNUSED(b);
    return sema_call_builtin(s, "tl", "cdiv", (SVal){.k = SV_VOID}, &ca);
}

static SVal py_next_pow2(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    int64_t n;
    TK_UNUSED(b), TK_UNUSED(call);
    if (!sema_const_int(s, a[0], at[0], "next_power_of_2's argument", &n))
        return bad();
    if (n > ((int64_t)1 << 62))
        return sema_err(s, at[0], "next_power_of_2(%lld) does not fit in 64 bits", (long long)n);
    int64_t p = 1;
    while (p < n)
        p <<= 1;
    return sv_int(p);
}

static SVal py_host_only(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(a), TK_UNUSED(at);
    return sema_err(s, call, "%s can only be used as a decorator", b->name);
}

static SVal py_loop_only(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(a), TK_UNUSED(at);
    return sema_err(s, call, "%s() can only be the iterable of a for loop", b->name);
}

/* Whether v is an instance of the class `cls` names, as Triton's Python
 * sees kernel values: blocks and block pointers are tl.tensor, tuples
 * tl.tuple, descriptors tl.tensor_descriptor, compile-time values
 * tl.constexpr (so never a Python int or float: Triton wraps them). */
static bool instance_of(SVal v, SVal cls, bool *known)
{
    *known = true;
    if (cls.k == SV_TUPLE) {
        bool any = false;
        for (int i = 0; i < cls.n && *known; i++)
            any |= instance_of(v, cls.items[i], known);
        return any;
    }
    if (cls.k != SV_BUILTIN) {
        *known = false;
        return false;
    }
    const char *c = cls.s;
    if (!strcmp(cls.ns, "tl.class")) {
        bool tensor = v.k == SV_TENSOR || v.k == SV_BLOCKPTR;
        if (!strcmp(c, "tensor"))
            return tensor;
        if (!strcmp(c, "base_value"))
            return tensor || v.k == SV_DESC || v.k == SV_TUPLE;
        if (!strcmp(c, "tensor_descriptor") || !strcmp(c, "tensor_descriptor_base"))
            return v.k == SV_DESC;
        if (!strcmp(c, "dtype") || !strcmp(c, "base_type"))
            return v.k == SV_DTYPE;
        if (!strcmp(c, "block_type"))
            return v.k == SV_DTYPE && sv_is_block_type(v);
        *known = false;
        return false;
    }
    if (!strcmp(cls.ns, "tl") && !strcmp(c, "pointer_type")) /* a block pointer's type too */
        return v.k == SV_DTYPE && !sv_is_block_type(v) && v.ty.dt == DT_PTR;
    if (!strcmp(cls.ns, "tl") && !strcmp(c, "tuple"))
        return v.k == SV_TUPLE;
    if (!strcmp(cls.ns, "tl") && !strcmp(c, "constexpr"))
        return sv_is_const(v) && v.k != SV_TUPLE;
    if (!strcmp(cls.ns, "builtins") &&
        (!strcmp(c, "int") || !strcmp(c, "float") || !strcmp(c, "bool")))
        return false;
    *known = false;
    return false;
}

static SVal py_isinstance(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(call);
    bool known;
    bool r = instance_of(a[0], a[1], &known);
    if (!known)
        return sema_err(s, at[1],
                        "isinstance() in a kernel takes tl.tensor, tl.tensor_descriptor, "
                        "tl.tuple, tl.constexpr, tl.dtype, tl.block_type or tl.pointer_type "
                        "(or a tuple of them), not %s",
                        sv_describe(s, a[1]));
    return sv_bool(r);
}

/* getattr(module, "name"): a name of a namespace tk reads or of another
 * file of the package (a host helper taking a function from the module it
 * found, builtins/importlib.c). */
static SVal py_getattr(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(call);
    if (a[1].k != SV_STR)
        return sema_err(s, at[1], "getattr takes the attribute's name as a string, got %s",
                        sv_describe(s, a[1]));
    if (a[0].k == SV_NS)
        return sema_builtin_attr(s, a[0].s, a[1].s, at[1]);
    if (a[0].k == SV_MODULE)
        return sema_module_attr(s, a[0], a[1].s, at[1]);
    return sema_err(s, at[0], "tk reads getattr of a module only, not of %s", sv_describe(s, a[0]));
}

/* triton.constexpr_function(f) in call form, over a function a kernel may
 * already call at compile time (tl.core.get_int_dtype, another such
 * helper): f itself. */
static SVal py_constexpr_function(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(call);
    if (a[0].k == SV_BUILTIN || a[0].k == SV_FUNC)
        return a[0];
    return sema_err(s, at[0], "triton.constexpr_function() takes a function, got %s",
                    sv_describe(s, a[0]));
}

static const Builtin python[] = {
    {"min", "*args", py_minmax, 0, false},
    {"max", "*args", py_minmax, 1, false},
    {"abs", "x", py_abs, 0, false},
    {"float", "x=", py_float, 0, false},
    {"int", "x=", py_int, 0, false},
    {"bool", "x=", py_int, 1, false},
    {"len", "x", py_len, 0, false},
    {"print", "*args", py_print, 0, false},
    {"range", "*args", py_loop_only, 0, false},
    {"isinstance", "x,t", py_isinstance, 0, false},
    {"getattr", "x,name", py_getattr, 0, false},
    {"triton.cdiv", "x,y", py_cdiv, 0, false},
    {"triton.next_power_of_2", "n", py_next_pow2, 0, false},
    {"triton.jit", "*args", py_host_only, 0, false},
    {"triton.autotune", "*args", py_host_only, 0, false},
    {"triton.heuristics", "*args", py_host_only, 0, false},
    {"triton.Config", "*args", py_host_only, 0, false},
    {"triton.constexpr_function", "fn", py_constexpr_function, 0, false},
};

const BuiltinTable sema_tl_python = {python, TK_ARRAY_LEN(python)};

/* ---- dtype methods ------------------------------------------------------------------ */

SVal sema_dtype_method(Sema *s, SVal self, const char *name, CallArgs *ca)
{
    DType d = self.ty.dt;
    if (ca->npos || ca->nkw)
        return sema_err(s, ca->at, "dtype.%s() takes no arguments", name);
    if (sv_is_block_type(self) && !strcmp(name, "get_block_shapes")) {
        SVal dims[TK_MAX_RANK]; /* block_type.get_block_shapes(): its shape */
        for (int i = 0; i < self.ty.rank; i++)
            dims[i] = sv_int(self.ty.shape[i]);
        return sv_tuple(s, dims, self.ty.rank);
    }
    static const struct {
        const char *name;
        int what;
    } preds[] = {{"is_floating", 0},
                 {"is_int", 1},
                 {"is_int_signed", 2},
                 {"is_int_unsigned", 3},
                 {"is_ptr", 4},
                 {"is_fp16", 5},
                 {"is_bf16", 6},
                 {"is_fp32", 7},
                 {"is_fp64", 8},
                 {"is_bool", 9},
                 {"is_int1", 9},
                 {"is_int8", 10},
                 {"is_int16", 11},
                 {"is_int32", 12},
                 {"is_int64", 13},
                 {"is_uint8", 14},
                 {"is_uint16", 15},
                 {"is_uint32", 16},
                 {"is_uint64", 17},
                 {"is_fp8", -5},
                 {"is_fp8e4nv", 18},
                 {"is_fp8e5", 19},
                 {"is_fp8e4b15", 20},
                 /* the other fp8 formats (AMD's) are not tk dtypes */
                 {"is_fp8e4b8", -1},
                 {"is_fp8e5b16", -1},
                 {"is_block", -1},
                 {"is_void", -2},
                 {"is_standard_floating", -6},
                 {"get_int_max_value", -3},
                 {"get_int_min_value", -4}};
    static const DType exact[] = {DT_F16, DT_BF16, DT_F32,  DT_F64,    DT_I1,  DT_I8,
                                  DT_I16, DT_I32,  DT_I64,  DT_U8,     DT_U16, DT_U32,
                                  DT_U64, DT_F8E4, DT_F8E5, DT_F8E4B15};
    for (int i = 0; i < TK_ARRAY_LEN(preds); i++) {
        if (strcmp(preds[i].name, name))
            continue;
        /* Triton's block_type (x.type of a block) answers by its name,
         * which is no dtype's: only is_block() holds, and the integer
         * limits are its element dtype's alone */
        if (sv_is_block_type(self) && preds[i].what != -3 && preds[i].what != -4)
            return sv_bool(!strcmp(name, "is_block"));
        switch (preds[i].what) {
        case 0: return sv_bool(dtype_is_float(d));
        case 1: return sv_bool(dtype_is_int(d));
        case 2: return sv_bool(dtype_is_signed(d));
        case 3: return sv_bool(dtype_is_int(d) && !dtype_is_signed(d) && d != DT_I1);
        case 4: return sv_bool(d == DT_PTR);
        case -1: return sv_bool(false);
        case -2: return sv_bool(d == DT_VOID);
        case -5: return sv_bool(dtype_is_fp8(d));
        case -6: return sv_bool(dtype_is_float(d) && !dtype_is_fp8(d));
        case -3:
        case -4: {
            if (!dtype_is_int(d) || d == DT_I1 || sv_is_block_type(self))
                return sema_err(s, ca->at, "dtype.%s() is only defined for integer dtypes, not %s",
                                name, sema_type_str(s, self.ty));
            int bits = dtype_bits(d);
            bool sign = dtype_is_signed(d);
            if (preds[i].what == -4)
                return sv_int(sign ? (int64_t)(-(((uint64_t)1) << (bits - 1))) : 0);
            if (!sign && bits == 64) {
                SVal v = sv_int(-1); /* 2**64 - 1: a big int, its bits in i */
                v.big = true;
                return v;
            }
            return sv_int(sign ? (int64_t)((((uint64_t)1) << (bits - 1)) - 1)
                               : (int64_t)((((uint64_t)1) << bits) - 1));
        }
        default: return sv_bool(d == exact[preds[i].what - 5]);
        }
    }
    return sema_err(s, ca->at, "dtype %s has no method '%s'", sema_type_str(s, self.ty), name);
}

/* ---- libdevice ------------------------------------------------------------------------ */

/* Functions reachable as tl.math.X / libdevice.X (elementwise, float). */
static const char *const libdevice_names[] = {
    "acos",      "acosh",      "asin",      "asinh",      "atan",      "atan2",       "atanh",
    "cbrt",      "ceil",       "copysign",  "cos",        "cosh",      "cospi",       "erf",
    "erfc",      "erfcinv",    "erfcx",     "erfinv",     "exp",       "exp10",       "exp2",
    "expm1",     "fabs",       "abs",       "fdim",       "floor",     "fma",         "fmax",
    "fmin",      "fmod",       "hypot",     "lgamma",     "log",       "log10",       "log1p",
    "log2",      "logb",       "nearbyint", "nextafter",  "pow",       "rcbrt",       "remainder",
    "rhypot",    "rint",       "round",     "rsqrt",      "sin",       "sinh",        "sinpi",
    "sqrt",      "tan",        "tanh",      "tgamma",     "trunc",     "j0",          "j1",
    "y0",        "y1",         "isnan",     "isinf",      "isfinited", "signbit",     "ilogb",
    "div_rn",    "div_rz",     "div_rd",    "div_ru",     "sqrt_rn",   "rcp_rn",      "fast_expf",
    "fast_logf", "fast_log2f", "fast_sinf", "fast_cosf",  "fast_tanf", "fast_exp10f", "fast_log10f",
    "fast_powf", "saturatef",  "normcdf",   "normcdfinv",
};

static bool float_fn(const char *name)
{
    for (int i = 0; i < TK_ARRAY_LEN(libdevice_names); i++)
        if (!strcmp(libdevice_names[i], name))
            return true;
    return false;
}

bool sema_libdevice_known(const char *name)
{
    return float_fn(name) || sema_libdevice_has_sig(name);
}

/* The float path takes float arguments (and pow's integer exponent);
 * integer and mixed calls go by libdevice_sigs.c's typed signatures. */
static bool by_signature(const char *name, const CallArgs *ca)
{
    if (!float_fn(name))
        return true;
    for (int i = 0; i < ca->npos; i++) {
        SVal v = ca->pos[i];
        bool num = v.k == SV_INT || v.k == SV_BOOL;
        bool tint = v.k == SV_TENSOR && v.v && !dtype_is_float(v.v->type.dt);
        if ((num || tint) && !(i == 1 && !strcmp(name, "pow")) && sema_libdevice_has_sig(name))
            return tint;
    }
    return false;
}

static int math_fn(const char *name)
{
    static const char *const names[] = {"exp", "exp2", "log",   "log2", "sqrt", "rsqrt", "sin",
                                        "cos", "abs",  "floor", "ceil", "erf",  "tanh",  "sqrt_rn"};
    static const MathFn fns[] = {MATH_EXP,   MATH_EXP2, MATH_LOG,  MATH_LOG2,   MATH_SQRT,
                                 MATH_RSQRT, MATH_SIN,  MATH_COS,  MATH_ABS,    MATH_FLOOR,
                                 MATH_CEIL,  MATH_ERF,  MATH_TANH, MATH_SQRT_RN};
    for (int i = 0; i < TK_ARRAY_LEN(names); i++)
        if (!strcmp(names[i], name))
            return fns[i];
    if (!strcmp(name, "fabs"))
        return MATH_ABS;
    return -1;
}

/* math.X on compile-time numbers. */
static SVal fold_math(Sema *s, const char *name, CallArgs *ca)
{
    if (ca->npos < 1 || !sv_is_num(ca->pos[0]))
        return sema_err(s, ca->at, "math.%s needs a constexpr number", name);
    double x = ca->pos[0].k == SV_FLOAT ? ca->pos[0].f : (double)ca->pos[0].i;
    double y = ca->npos > 1 && sv_is_num(ca->pos[1])
        ? (ca->pos[1].k == SV_FLOAT ? ca->pos[1].f : (double)ca->pos[1].i)
        : 0;
    if (!strcmp(name, "sqrt"))
        return sv_float(sqrt(x));
    if (!strcmp(name, "exp"))
        return sv_float(exp(x));
    if (!strcmp(name, "log"))
        return sv_float(ca->npos > 1 ? log(x) / log(y) : log(x));
    if (!strcmp(name, "log2"))
        return sv_float(log2(x));
    if (!strcmp(name, "log10"))
        return sv_float(log10(x));
    if (!strcmp(name, "pow"))
        return sv_float(pow(x, y));
    if (!strcmp(name, "sin"))
        return sv_float(sin(x));
    if (!strcmp(name, "cos"))
        return sv_float(cos(x));
    if (!strcmp(name, "tanh"))
        return sv_float(tanh(x));
    if (!strcmp(name, "erf"))
        return sv_float(erf(x));
    if (!strcmp(name, "floor") || !strcmp(name, "ceil")) {
        double r = name[0] == 'f' ? floor(x) : ceil(x);
        if (!(r >= -0x1p63 && r < 0x1p63))
            return sema_err(s, ca->at, "math.%s(%g) does not fit in 64 bits", name, x);
        return sv_int((int64_t)r);
    }
    if (!strcmp(name, "fabs"))
        return sv_float(fabs(x));
    if (!strcmp(name, "isnan"))
        return sv_bool(isnan(x));
    if (!strcmp(name, "isinf"))
        return sv_bool(isinf(x));
    return sema_err(s, ca->at, "math.%s is not supported on constexprs", name);
}

/* libdevice's own spelling: __nv_<name>f for fp32, __nv_<name> for fp64,
 * with the few exceptions libdevice has. */
static const char *extern_name(Sema *s, const char *name, DType dt, bool int_arg, DType *ret)
{
    bool f64 = dt == DT_F64;
    *ret = dt;
    if (!strcmp(name, "isnan") || !strcmp(name, "isinf") || !strcmp(name, "signbit") ||
        !strcmp(name, "isfinited") || !strcmp(name, "ilogb")) {
        *ret = DT_I32;
        if (!strcmp(name, "isfinited"))
            return f64 ? "__nv_isfinited" : "__nv_finitef";
        if (!strcmp(name, "ilogb"))
            return f64 ? "__nv_ilogb" : "__nv_ilogbf";
        return arena_printf(s->a, "__nv_%s%s", name, f64 ? "d" : "f");
    }
    if (!strcmp(name, "pow") && int_arg)
        return f64 ? "__nv_powi" : "__nv_powif";
    if (!strcmp(name, "abs"))
        name = "fabs";
    if (!strncmp(name, "fast_", 5) || !strcmp(name, "saturatef"))
        return arena_printf(s->a, "__nv_%s", name);
    if (!strncmp(name, "div_r", 5) || !strcmp(name, "sqrt_rn") || !strcmp(name, "rcp_rn"))
        return arena_printf(s->a, "__nv_%s%s", f64 ? "d" : "f", name);
    return arena_printf(s->a, "__nv_%s%s", name, f64 ? "" : "f");
}

SVal sema_libdevice_call(Sema *s, const char *ns, const char *name, CallArgs *ca)
{
    bool all_const = ca->npos > 0;
    for (int i = 0; i < ca->npos; i++)
        all_const &= sv_is_num(ca->pos[i]);
    if (!strcmp(ns, "math") || (all_const && !strcmp(ns, "math")))
        return fold_math(s, name, ca);
    if (ca->nkw)
        return sema_err(s, ca->kw_at[0], "%s.%s() takes no keyword arguments", ns, name);
    if (!sema_libdevice_known(name))
        return sema_err(s, ca->at, "unknown libdevice function '%s'", name);
    if (by_signature(name, ca))
        return sema_libdevice_sig_call(s, ns, name, ca);
    if (ca->npos < 1 || ca->npos > 3)
        return sema_err(s, ca->at, "%s.%s() takes 1 to 3 arguments, got %d", ns, name, ca->npos);
    /* the float arguments meet in one dtype, as Triton's dispatch requires */
    IrValue *args[3];
    bool int_arg = false;
    SVal acc = ca->pos[0];
    for (int i = 0; i < ca->npos; i++) {
        args[i] = sema_to_tensor(s, ca->pos[i], ca->pos_at[i]);
        if (!args[i])
            return bad();
        if (!sema_check_not_fp8(s, args[i]->type.dt, ca->pos_at[i],
                                arena_printf(s->a, "%s.%s", ns, name)))
            return bad();
        if (!dtype_is_float(args[i]->type.dt)) {
            if (!strcmp(name, "pow") && i == 1 && dtype_is_int(args[i]->type.dt)) {
                int_arg = true;
                continue;
            }
            return sema_err(s, ca->pos_at[i], "%s.%s expects floating-point arguments, got %s", ns,
                            name, sema_type_str(s, args[i]->type));
        }
    }
    for (int i = 1; i < ca->npos; i++) {
        if (int_arg && i == 1)
            continue;
        IrValue *x, *y;
        if (!sema_binary_operands(s, acc, sv_tensor(args[i]), false, &x, &y, ca->at))
            return bad();
        acc = sv_tensor(x);
    }
    IrValue *first = sema_to_tensor(s, acc, ca->at);
    DType orig = first->type.dt;
    DType dt = orig == DT_F64 ? DT_F64 : DT_F32;
    int rank = first->type.rank;
    int shape[TK_MAX_RANK];
    memcpy(shape, first->type.shape, sizeof shape);
    for (int i = 0; i < ca->npos; i++) {
        int r2;
        int sh2[TK_MAX_RANK];
        if (!sema_broadcast_shapes(s, type_block(dt, rank, shape), args[i]->type, &r2, sh2, ca->at))
            return bad();
        rank = r2;
        memcpy(shape, sh2, sizeof shape);
    }
    for (int i = 0; i < ca->npos; i++) {
        DType want = int_arg && i == 1 ? DT_I32 : dt;
        args[i] = sema_broadcast(s, sema_cast(s, args[i], want, ca->at), rank, shape, ca->at);
        if (!args[i])
            return bad();
    }
    int mf = math_fn(name);
    if (mf >= 0 && !strcmp(ns, "tl.math") && ca->npos == 1)
        return sv_tensor(sema_cast(s, sema_math(s, (MathFn)mf, args[0], ca->at), orig, ca->at));
    DType ret;
    const char *ext = extern_name(s, name, dt, int_arg, &ret);
    Type rt = type_block(ret, rank, shape);
    IrOp *op = ir_build(&s->b, IR_EXTERN, ca->at, args, ca->npos, &rt, 1);
    op->str = ext;
    IrValue *r = op->results[0];
    return sv_tensor(ret == dt ? sema_cast(s, r, orig, ca->at) : r);
}
