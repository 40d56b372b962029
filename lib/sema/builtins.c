/* sema/builtins.c: name resolution for tl.*, triton.*, math.* and Python
 * builtins, the argument binder every builtin goes through (arity, unknown
 * keywords, missing arguments), and the dispatch to the per-area tables in
 * the files of sema/builtins/. Reports unknown builtins and attributes by name. */
#include <string.h>

#include "sema/spec.h"


static const BuiltinTable *const tl_tables[] = {
    &sema_tl_core,   &sema_tl_memory,   &sema_tl_reduce,     &sema_tl_shape,
    &sema_tl_random, &sema_tl_blockptr, &sema_tl_asm,        &sema_tl_extra,
    &sema_tl_sort,   &sema_tl_lang,     &sema_tl_dot_scaled, &sema_tl_mapel};

static const Builtin *find_in(const BuiltinTable *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->items[i].name, name))
            return &t->items[i];
    return NULL;
}

static const Builtin *find_tl(const char *name)
{
    for (int i = 0; i < TK_ARRAY_LEN(tl_tables); i++) {
        const Builtin *b = find_in(tl_tables[i], name);
        if (b)
            return b;
    }
    return NULL;
}

static const Builtin *find_cuda(const char *name)
{
    const Builtin *b = find_in(&sema_tl_cuda, name);
    return b ? b : find_in(&sema_tl_cuda_extra, name);
}

static bool is_libdevice_ns(const char *ns)
{
    return !strcmp(ns, "tl.math") || !strcmp(ns, "libdevice");
}

bool sema_builtin_exists(const char *ns, const char *name)
{
    if (!strcmp(ns, "builtins"))
        return find_in(&sema_tl_python, name) != NULL;
    if (!strcmp(ns, "tl"))
        return find_tl(name) || sema_dtype_name(name) != DT_VOID || !strcmp(name, "constexpr");
    if (!strcmp(ns, "tl.extra.cuda"))
        return find_cuda(name) != NULL || !strcmp(name, "libdevice");
    if (!strcmp(ns, "target_info"))
        return sema_target_known(name);
    if (!strcmp(ns, "tl.extra")) /* the modules under it */
        return !strcmp(name, "cuda") || !strcmp(name, "libdevice");
    if (!strcmp(ns, "libdevice") || !strcmp(ns, "tl.math"))
        return sema_libdevice_known(name) || (!strcmp(ns, "tl.math") && find_tl(name));
    return false;
}

bool sv_has(SVal v) { return v.k != SV_VOID && v.k != SV_NONE; }

const char *sema_builtin_display(const Builtin *b) { return b->name; }

IrValue *sema_arg_tensor(Sema *s, SVal v, Span at, const Builtin *b, const char *what)
{
    if (v.k == SV_TENSOR)
        return v.v;
    if (sv_is_num(v))
        return sema_to_tensor(s, v, at);
    if (v.k != SV_UNDEF)
        sema_err(s, at, "%s of %s must be a tensor, got %s", what, b->name, sv_describe(s, v));
    return NULL;
}

/* ---- attributes of namespaces ---------------------------------------------------- */

static SVal ns(const char *name) { return (SVal){.k = SV_NS, .s = name}; }

static SVal builtin(const char *ns_name, const char *name)
{
    return (SVal){.k = SV_BUILTIN, .s = name, .ns = ns_name};
}

SVal sema_builtin_attr(Sema *s, const char *nsname, const char *name, Span at)
{
    if (!strncmp(nsname, "torch", 5))
        return sema_torch_attr(s, nsname, name, at);
    if (!strcmp(nsname, "target_info"))
        return sema_target_attr(s, name, at);
    if (!strncmp(nsname, "importlib", 9))
        return sema_importlib_attr(s, nsname, name, at);
    if (!strcmp(nsname, "tl")) {
        DType dt = sema_dtype_name(name);
        if (dt != DT_VOID && strcmp(name, "float") && strcmp(name, "double") &&
            strcmp(name, "half") && strcmp(name, "bool"))
            return sv_dtype(type_scalar(dt));
        if (!strcmp(name, "math"))
            return ns("tl.math");
        if (!strcmp(name, "core") || !strcmp(name, "standard")) /* tl.core.reshape */
            return ns("tl");
        if (!strcmp(name, "random")) /* tl.random.uint_to_uniform_float */
            return ns("tl.random");
        if (sema_tl_class(name))
            return builtin("tl.class", name);
        if (!strcmp(name, "extra"))
            return ns("tl.extra");
        if (!strcmp(name, "PropagateNan"))
            return ns("tl.PropagateNan");
        if (!strcmp(name, "TRITON_MAX_TENSOR_NUMEL"))
            return sv_int(SEMA_MAX_NUMEL);
        if (!strcmp(name, "CONSTEXPR_0")) /* tl.core's constexpr(0), a parameter's default */
            return sv_int(0);
        if (!strcmp(name, "constexpr") || find_tl(name))
            return builtin("tl", name);
        if (!strncmp(name, "float8", 6))
            return sema_err(s, at,
                            "tl.%s is not supported: the fp8 dtypes of tk are "
                            "tl.float8e4nv, tl.float8e5 and tl.float8e4b15",
                            name);
        return sema_err(s, at, "unknown builtin 'tl.%s'", name);
    }
    if (!strcmp(nsname, "tl.random")) {
        for (int i = 0; i < sema_tl_random.n; i++)
            if (!strcmp(sema_tl_random.items[i].name, name) && strcmp(name, "swizzle2d"))
                return builtin("tl", name);
    } else if (!strcmp(nsname, "tl.PropagateNan")) {
        if (!strcmp(name, "ALL"))
            return sv_int(0xFFFF);
        if (!strcmp(name, "NONE"))
            return sv_int(0);
    } else if (!strcmp(nsname, "tl.extra")) {
        if (!strcmp(name, "cuda"))
            return ns("tl.extra.cuda");
        if (!strcmp(name, "libdevice"))
            return ns("libdevice");
    } else if (!strcmp(nsname, "tl.extra.cuda")) {
        if (!strcmp(name, "libdevice"))
            return ns("libdevice");
        if (find_cuda(name))
            return builtin(nsname, name);
    } else if (is_libdevice_ns(nsname)) {
        if (sema_libdevice_known(name) || (!strcmp(nsname, "tl.math") && find_tl(name)))
            return builtin(nsname, name);
        return sema_err(s, at, "unknown libdevice function '%s'", name);
    } else if (!strcmp(nsname, "triton")) {
        if (!strcmp(name, "language"))
            return ns("tl");
        if (!strcmp(name, "cdiv") || !strcmp(name, "next_power_of_2") || !strcmp(name, "jit") ||
            !strcmp(name, "autotune") || !strcmp(name, "heuristics") || !strcmp(name, "Config") ||
            !strcmp(name, "constexpr_function"))
            return builtin("triton", name);
        if (!strcmp(name, "runtime")) /* triton.runtime.jit.constexpr_function */
            return ns("triton.runtime");
    } else if (!strcmp(nsname, "triton.runtime")) {
        if (!strcmp(name, "jit"))
            return ns("triton.runtime.jit");
    } else if (!strcmp(nsname, "triton.runtime.jit")) {
        if (!strcmp(name, "constexpr_function"))
            return builtin("triton", name);
    } else if (!strcmp(nsname, "math")) {
        if (!strcmp(name, "pi"))
            return sv_float(3.14159265358979323846);
        if (!strcmp(name, "e"))
            return sv_float(2.71828182845904523536);
        if (!strcmp(name, "tau"))
            return sv_float(6.28318530717958647692);
        if (!strcmp(name, "inf"))
            return sv_float(__builtin_inf());
        if (!strcmp(name, "nan"))
            return sv_float(__builtin_nan(""));
        if (sema_libdevice_known(name))
            return builtin("math", name);
    }
    return sema_err(s, at, "module '%s' has no attribute '%s'", nsname, name);
}

/* Triton's tensor operators are methods too (x.__neg__(), x.__radd__(1)):
 * each is its operator, the operands swapped for the reflected ones. */
typedef struct Dunder {
    const char *name;
    int op;
    char kind; /* b binary, r reflected binary, c comparison, q reflected one, u unary */
} Dunder;

static const Dunder *find_dunder(const char *name)
{
    static const Dunder dunders[] = {{"__add__", OP_ADD, 'b'},
                                     {"__radd__", OP_ADD, 'r'},
                                     {"__sub__", OP_SUB, 'b'},
                                     {"__rsub__", OP_SUB, 'r'},
                                     {"__mul__", OP_MUL, 'b'},
                                     {"__rmul__", OP_MUL, 'r'},
                                     {"__truediv__", OP_DIV, 'b'},
                                     {"__rtruediv__", OP_DIV, 'r'},
                                     {"__floordiv__", OP_FLOORDIV, 'b'},
                                     {"__rfloordiv__", OP_FLOORDIV, 'r'},
                                     {"__mod__", OP_MOD, 'b'},
                                     {"__rmod__", OP_MOD, 'r'},
                                     {"__and__", OP_BITAND, 'b'},
                                     {"__rand__", OP_BITAND, 'r'},
                                     {"__or__", OP_BITOR, 'b'},
                                     {"__ror__", OP_BITOR, 'r'},
                                     {"__xor__", OP_BITXOR, 'b'},
                                     {"__rxor__", OP_BITXOR, 'r'},
                                     {"__lshift__", OP_LSHIFT, 'b'},
                                     {"__rlshift__", OP_LSHIFT, 'r'},
                                     {"__rshift__", OP_RSHIFT, 'b'},
                                     {"__rrshift__", OP_RSHIFT, 'r'},
                                     {"__lt__", OP_LT, 'c'},
                                     {"__rlt__", OP_LT, 'q'},
                                     {"__le__", OP_LE, 'c'},
                                     {"__rle__", OP_LE, 'q'},
                                     {"__gt__", OP_GT, 'c'},
                                     {"__rgt__", OP_GT, 'q'},
                                     {"__ge__", OP_GE, 'c'},
                                     {"__rge__", OP_GE, 'q'},
                                     {"__eq__", OP_EQ, 'c'},
                                     {"__req__", OP_EQ, 'q'},
                                     {"__ne__", OP_NE, 'c'},
                                     {"__rne__", OP_NE, 'q'},
                                     {"__neg__", OP_NEG, 'u'},
                                     {"__invert__", OP_INVERT, 'u'},
                                     {"__not__", OP_NOT, 'u'}};
    for (int i = 0; i < TK_ARRAY_LEN(dunders); i++)
        if (!strcmp(dunders[i].name, name))
            return &dunders[i];
    return NULL;
}

static SVal dunder_call(Sema *s, SVal self, const char *name, CallArgs *ca)
{
    const Dunder *d = find_dunder(name);
    int want = d->kind == 'u' ? 0 : 1;
    if (ca->npos != want || ca->nkw)
        return sema_err(s, ca->at, "tensor.%s takes %d argument%s", name, want,
                        want == 1 ? "" : "s");
    switch (d->kind) {
    case 'u': return sema_unary(s, d->op, self, ca->at);
    case 'b': return sema_binary(s, d->op, self, ca->pos[0], ca->at);
    case 'r': return sema_binary(s, d->op, ca->pos[0], self, ca->at);
    case 'c': return sema_compare(s, d->op, self, ca->pos[0], ca->at);
    default: return sema_compare(s, d->op, ca->pos[0], self, ca->at);
    }
}

SVal sema_method(Sema *s, SVal self, const char *name, Span at)
{
    SVal m = {.k = SV_BUILTIN, .s = name, .n = 1};
    m.items = arena_alloc(s->a, sizeof(SVal));
    m.items[0] = self;
    if (self.k == SV_DTYPE) {
        if (!strncmp(name, "is_", 3) || !strcmp(name, "to_ir") || !strncmp(name, "get_int_m", 9) ||
            (sv_is_block_type(self) && !strcmp(name, "get_block_shapes")))
            return m.ns = "dtype", m;
        return sema_err(s, at, "dtype %s has no attribute '%s'", sema_type_str(s, self.ty), name);
    }
    if (self.k == SV_TENSOR) {
        const Builtin *b = find_tl(name);
        if (!strcmp(name, "to") || (b && b->method))
            return m.ns = "tl", m;
        if (find_dunder(name))
            return m.ns = "dunder", m;
        return sema_err(s, at, "tensor %s has no attribute '%s'", sema_type_str(s, self.v->type),
                        name);
    }
    if (self.k == SV_STR && sema_str_method_known(name))
        return m.ns = "str", m;
    /* a block pointer is a tensor in Triton: advance and store are its methods */
    if (self.k == SV_BLOCKPTR && (!strcmp(name, "advance") || !strcmp(name, "store")))
        return m.ns = "tl", m;
    return sema_err(s, at, "%s has no attribute '%s'", sv_describe(s, self), name);
}

/* ---- binding arguments ------------------------------------------------------------------ */

#define MAXP 12

/* Fills a[] (SV_VOID where not given) from the call, checking arity and
 * keywords against b->params. */
static bool bind(Sema *s, const Builtin *b, const char *qual, SVal self, CallArgs *ca, SVal *a,
                 Span *at)
{
    const char *names[MAXP];
    bool opt[MAXP], var[MAXP];
    int np = 0;
    char buf[256];
    size_t len = strlen(b->params);
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, b->params, len);
    buf[len] = 0;
    for (char *p = buf; *p && np < MAXP;) {
        char *e = strchr(p, ',');
        if (e)
            *e = 0;
        var[np] = *p == '*';
        if (var[np])
            p++;
        size_t l = strlen(p);
        opt[np] = l && p[l - 1] == '=';
        if (opt[np])
            p[l - 1] = 0;
        names[np++] = arena_strdup(s->a, p);
        if (!e)
            break;
        p = e + 1;
    }
    for (int i = 0; i < MAXP; i++) {
        a[i] = (SVal){.k = SV_VOID};
        at[i] = ca->at;
    }
    int npos = ca->npos + (self.k != SV_VOID);
    int vi = -1;
    for (int i = 0; i < np; i++)
        if (var[i])
            vi = i;
    int fixed = vi >= 0 ? vi : np;
    if (npos > fixed && vi < 0) {
        sema_err(s, ca->at, "%s takes at most %d argument%s, got %d", qual, np, np == 1 ? "" : "s",
                 npos);
        return false;
    }
    SVal *rest = arena_alloc(s->a, sizeof(SVal) * (size_t)(npos + 1));
    int nrest = 0;
    for (int i = 0; i < npos; i++) {
        SVal v = self.k != SV_VOID ? (i == 0 ? self : ca->pos[i - 1]) : ca->pos[i];
        Span sp = self.k != SV_VOID ? (i == 0 ? ca->at : ca->pos_at[i - 1]) : ca->pos_at[i];
        if (i < fixed) {
            a[i] = v;
            at[i] = sp;
        } else {
            rest[nrest++] = v;
        }
    }
    if (vi >= 0) {
        if (nrest == 1 && rest[0].k == SV_TUPLE)
            a[vi] = rest[0];
        else
            a[vi] = sv_tuple(s, rest, nrest);
    }
    for (int k = 0; k < ca->nkw; k++) {
        int i = 0;
        while (i < np && strcmp(names[i], ca->kw[k]))
            i++;
        if (i == np) {
            sema_err(s, ca->kw_at[k], "%s got an unknown keyword argument '%s'", qual, ca->kw[k]);
            return false;
        }
        if (a[i].k != SV_VOID && !var[i]) {
            sema_err(s, ca->kw_at[k], "%s got multiple values for argument '%s'", qual, ca->kw[k]);
            return false;
        }
        a[i] = ca->kwv[k];
        at[i] = ca->kw_at[k];
    }
    for (int i = 0; i < np; i++)
        if (a[i].k == SV_VOID && !opt[i] && !var[i]) {
            sema_err(s, ca->at, "%s is missing the argument '%s'", qual, names[i]);
            return false;
        }
    for (int i = 0; i < np; i++)
        if (a[i].k == SV_UNDEF)
            return false;
    return true;
}


/* Builtins that touch memory or the outside world: under a per-element
 * condition in tl.map_elementwise they would act for every element. */
static bool has_effect(const char *ns, const char *name)
{
    static const char *const effects[] = {
        "load",  "store",         "device_print",           "device_assert",
        "print", "debug_barrier", "load_tensor_descriptor", "store_tensor_descriptor"};
    if (!strcmp(ns, "desc") || !strncmp(name, "atomic_", 7))
        return true;
    for (int i = 0; i < TK_ARRAY_LEN(effects); i++)
        if (!strcmp(name, effects[i]))
            return true;
    return false;
}

/* The classes of triton.language that kernels name without building:
 * in isinstance() and in annotations (`x: tl.tensor = ...`). */
bool sema_tl_class(const char *name)
{
    static const char *const classes[] = {"tensor",   "tensor_descriptor", "tensor_descriptor_base",
                                          "dtype",    "block_type",        "base_value",
                                          "base_type"};
    for (int i = 0; i < TK_ARRAY_LEN(classes); i++)
        if (!strcmp(name, classes[i]))
            return true;
    return false;
}

SVal sema_call_builtin(Sema *s, const char *nsname, const char *name, SVal self, CallArgs *ca)
{
    if (!strcmp(nsname, "dtype"))
        return sema_dtype_method(s, self, name, ca);
    if (!strcmp(nsname, "torch"))
        return sema_torch_call(s, name, ca);
    if (!strcmp(nsname, "str"))
        return sema_str_call(s, self, name, ca);
    if (!strcmp(nsname, "dunder"))
        return dunder_call(s, self, name, ca);
    if (!strcmp(nsname, "target_info"))
        return sema_target_call(s, name, ca);
    if (!strncmp(nsname, "importlib", 9))
        return sema_importlib_call(s, nsname, name, ca);
    if (!strcmp(nsname, "tl.class") && !strcmp(name, "dtype") && ca->npos == 1 && ca->nkw == 0 &&
        ca->pos[0].k == SV_STR) { /* tl.dtype("uint32") names a dtype */
        DType dt = sema_dtype_name(ca->pos[0].s);
        if (dt == DT_VOID)
            return sema_err(s, ca->pos_at[0], "tl.dtype: no dtype is named '%s'", ca->pos[0].s);
        return sv_dtype(type_scalar(dt));
    }
    if (!strcmp(nsname, "tl.class"))
        return sema_err(s, ca->at,
                        "tl.%s is a class: a kernel may name it in isinstance() or an "
                        "annotation, not build one",
                        name);
    const Builtin *b = NULL;
    const char *qual;
    if (!strcmp(nsname, "desc")) {
        b = find_in(&sema_desc_methods, name);
        qual = arena_printf(s->a, "desc.%s()", name);
    } else if (!strcmp(nsname, "builtins")) {
        b = find_in(&sema_tl_python, name);
        qual = arena_printf(s->a, "%s()", name);
    } else if (!strcmp(nsname, "triton")) {
        b = find_in(&sema_tl_python, arena_printf(s->a, "triton.%s", name));
        qual = arena_printf(s->a, "triton.%s()", name);
    } else if (!strcmp(nsname, "tl.extra.cuda")) {
        b = find_cuda(name);
        qual = arena_printf(s->a, "%s()", name);
    } else if (is_libdevice_ns(nsname) || !strcmp(nsname, "math")) {
        if (!strcmp(nsname, "tl.math") && find_tl(name))
            return sema_call_builtin(s, "tl", name, self, ca);
        return sema_libdevice_call(s, nsname, name, ca);
    } else {
        if (!strcmp(name, "to"))
            name = "cast";
        b = find_tl(name);
        qual = self.k != SV_VOID ? arena_printf(s->a, "x.%s()", name)
                                 : arena_printf(s->a, "tl.%s()", name);
    }
    if (!strcmp(name, "constexpr")) {
        if (ca->npos != 1)
            return sema_err(s, ca->at, "tl.constexpr() takes one argument");
        return ca->pos[0];
    }
    if (!b)
        return sema_err(s, ca->at, "unknown builtin '%s'", name);
    if (s->pred && has_effect(nsname, name) && !sema_pred_effect_ok(s, qual, ca->at))
        return (SVal){.k = SV_UNDEF};
    SVal a[MAXP];
    Span at[MAXP];
    if (!bind(s, b, qual, self, ca, a, at))
        return (SVal){.k = SV_UNDEF};
    /* SV_UNDEF means an error was reported (callers then stay silent): a
     * builtin that gives it without one, as one of sema's own calls of
     * another builtin with the wrong arguments would, is tk's mistake and
     * must not end in a kernel quietly missing its ops */
    int errors = s->d->errors;
    SVal r = b->fn(s, b, a, at, ca->at);
    if (r.k == SV_UNDEF && s->d->errors == errors)
        return sema_err(s, ca->at, "internal error: tl.%s gave no value and reported nothing",
                        name);
    return r;
}
