/* sema/params.c: a kernel's parameters bound for one specialisation:
 * constexprs from -D values or their defaults, runtime parameters from the
 * signature (or annotations) as IR parameters, None as a constexpr, and
 * runtime parameters left out of a shorter signature to their defaults,
 * typed as Triton's launch types such an argument. */
#include <stdio.h>
#include <string.h>

#include "sema/spec.h"

static const SpecDefine *find_define(const SpecRequest *req, const char *name)
{
    for (int i = 0; i < req->ndefines; i++)
        if (req->defines[i].name && strcmp(req->defines[i].name, name) == 0)
            return &req->defines[i];
    return NULL;
}

static void define_err(Sema *s, const SpecDefine *d, const char *fmt, const char *a1,
                       const char *a2)
{
    if (d->span.line > 0)
        diag_report(s->d, DIAG_ERROR, d->span, fmt, a1, a2);
    else
        diag_plain(s->d, DIAG_ERROR, fmt, a1, a2);
}

static void check_defines(Sema *s, const Node *fn, const SpecRequest *req)
{
    for (int i = 0; i < req->ndefines; i++) {
        const SpecDefine *d = &req->defines[i];
        const Node *p = NULL;
        for (int k = 0; k < fn->list.len && !p; k++)
            if (strcmp(fn->list.items[k]->name, d->name) == 0)
                p = fn->list.items[k];
        if (!p)
            define_err(s, d, "-D %s: kernel '%s' has no constexpr parameter of that name", d->name,
                       fn->name);
        else if (!sema_annot_is_constexpr(p->a) && d->value.kind != CV_NONE)
            define_err(s, d, "-D %s: '%s' is a runtime parameter, not a tl.constexpr", d->name,
                       d->name);
    }
}

/* A runtime parameter given None is a constexpr None, as in Triton. */
static bool param_is_none(const SpecRequest *req, const Node *p)
{
    const SpecDefine *d = find_define(req, p->name);
    return d && d->value.kind == CV_NONE;
}

static bool param_is_runtime(const SpecRequest *req, const Node *p)
{
    return !sema_annot_is_constexpr(p->a) && !param_is_none(req, p);
}

static int count_runtime(const Node *fn, const SpecRequest *req)
{
    int n = 0;
    for (int i = 0; i < fn->list.len; i++)
        n += param_is_runtime(req, fn->list.items[i]);
    return n;
}

/* A type in signature spelling: "*fp16", "i32". */
static const char *sig_str(Sema *s, Type t)
{
    return t.dt == DT_PTR ? arena_printf(s->a, "*%s", dtype_name(t.elem)) : dtype_name(t.dt);
}

/* Item `as` of a tuple parameter (Triton's tuple arguments): a tuple of its
 * items, a constexpr item's value, or a new IR parameter named after its
 * place ("ptrs[1][0]"), so the leaves are the kernel's parameters in order. */
static SVal tuple_param_item(Sema *s, const Node *p, const char *path, const ArgSpec *as)
{
    if (as->is_tuple) {
        SVal *items = arena_alloc(s->a, sizeof *items * (size_t)(as->nitems + 1));
        for (int i = 0; i < as->nitems; i++)
            items[i] = tuple_param_item(s, p, arena_printf(s->a, "%s[%d]", path, i), &as->items[i]);
        return sv_tuple(s, items, as->nitems);
    }
    if (as->is_const)
        return sema_from_const(s, as->value);
    if (dtype_is_fp8(as->type.dt))
        return sema_err(s, p->span,
                        "item %s of parameter '%s' cannot be a scalar %s: pass a tl.float32 and "
                        "convert it in the kernel",
                        path, p->name, dtype_name(as->type.dt));
    IrValue *v = ir_add_param(s->f, path, as->type, as->divisibility, p->span);
    /* Triton specialises integer items equal to 1 into the constant 1 too */
    return as->equal_to_1 && dtype_is_int(as->type.dt) ? sv_int(1) : sv_tensor(v);
}

static void bind_runtime_param(Sema *s, const Node *fn, const Node *p, const SpecRequest *req,
                               int idx)
{
    bool bad;
    Type at = sema_annot_type(p->a, &bad);
    if (bad) {
        sema_err(s, p->a->span,
                 "unknown type annotation on parameter '%s' (use e.g. *fp32, "
                 "i32 or tl.constexpr)",
                 p->name);
        return;
    }
    Type t = at;
    int div = 1;
    bool one = false;
    if (req->nargs >= 0 && idx < req->nargs) {
        const ArgSpec *as = &req->args[idx];
        if (as->is_tuple && at.dt != DT_VOID) {
            sema_err(s, p->a->span,
                     "parameter '%s' is annotated %s but the signature gives the tuple %s", p->name,
                     sig_str(s, at), sema_sig_entry(as, s->a));
            return;
        }
        if (as->is_tuple || as->is_const) {
            env_set(s, s->env, p->name, tuple_param_item(s, p, p->name, as), p->span);
            return;
        }
        if (as->desc_rank > 0) {
            if (at.dt != DT_VOID)
                sema_err(s, p->a->span,
                         "parameter '%s' is annotated %s but the signature gives "
                         "a tensor descriptor",
                         p->name, sig_str(s, at));
            else
                sema_bind_desc_param(s, p->name, as, p->span);
            return;
        }
        if (at.dt != DT_VOID && !type_eq(at, as->type)) {
            sema_err(s, p->a->span, "parameter '%s' is annotated %s but the signature gives %s",
                     p->name, sig_str(s, at), sig_str(s, as->type));
            return;
        }
        t = as->type;
        div = as->divisibility;
        one = as->equal_to_1 && dtype_is_int(t.dt);
    } else if (at.dt == DT_VOID) {
        sema_err(s, p->span,
                 "runtime parameter '%s' of kernel '%s' has no type: annotate it "
                 "(e.g. '%s: *fp32') or pass --signature",
                 p->name, fn->name, p->name);
        return;
    }
    if (dtype_is_fp8(t.dt)) { /* no host type carries one: pass fp32 and convert */
        sema_err(s, p->span,
                 "parameter '%s' cannot be a scalar %s: pass a tl.float32 and "
                 "convert it in the kernel",
                 p->name, dtype_name(t.dt));
        return;
    }
    IrValue *v = ir_add_param(s->f, p->name, t, div, p->span);
    if (p->a && p->a->kind == N_ATTR && strcmp(p->a->name, "const") == 0 && t.dt == DT_PTR)
        vec_push(s->a, &s->const_ptrs, v);
    /* Triton specialises integer arguments equal to 1 into the constant 1 */
    env_set(s, s->env, p->name, one ? sv_int(1) : sv_tensor(v), p->span);
}

/* The heuristic entry that computes constexpr `name`, or -1. */
static int heuristic_of(const KernelSig *tune, const char *name)
{
    for (int i = 0; i < tune->nheuristics; i++)
        if (strcmp(tune->heuristic_names[i], name) == 0)
            return i;
    return -1;
}

/* The first autotune config's value of constexpr `name`, or NULL. */
static const ConstValue *config_value(const KernelSig *tune, const char *name)
{
    for (int c = 0; c < tune->nconfigs; c++)
        for (int j = 0; j < tune->configs[c].ndefines; j++)
            if (strcmp(tune->configs[c].defines[j].name, name) == 0)
                return &tune->configs[c].defines[j].value;
    return NULL;
}

/* A config value as -D takes it ("..." where it is not a number or bool). */
static const char *cv_text(const ConstValue *v, char *buf, size_t n)
{
    if (v->kind == CV_INT)
        snprintf(buf, n, "%lld", (long long)v->i);
    else if (v->kind == CV_BOOL)
        snprintf(buf, n, "%s", v->i ? "True" : "False");
    else if (v->kind == CV_FLOAT)
        snprintf(buf, n, "%g", v->f);
    else
        snprintf(buf, n, "...");
    return buf;
}

/* A constexpr without a value. Heuristics are Python, which the launch or
 * the command line stands for: say which one would have computed it. */
static SVal missing_const(Sema *s, const Node *p, const KernelSig *tune)
{
    int h = heuristic_of(tune, p->name);
    if (h >= 0 && tune->heuristic_hosts[h])
        return sema_err(s, p->span,
                        "missing value for constexpr parameter '%s': @triton.heuristics "
                        "computes it with %s, which tk does not run; give it (-D %s=..., or "
                        "tk_const)",
                        p->name, tune->heuristic_hosts[h], p->name);
    if (h >= 0)
        return sema_err(s, p->span,
                        "missing value for constexpr parameter '%s': a @triton.heuristics "
                        "lambda computes it, which only the Python launch runs; give it "
                        "(-D %s=..., or tk_const)",
                        p->name, p->name);
    if (tune->heuristics_from_host)
        return sema_err(s, p->span,
                        "missing value for constexpr parameter '%s': @triton.heuristics may "
                        "compute it in host Python (a dict tk does not read); give it (-D "
                        "%s=..., or tk_const)",
                        p->name, p->name);
    const ConstValue *cv = config_value(tune, p->name);
    char text[32];
    if (cv && cv_text(cv, text, sizeof text))
        return sema_err(s, p->span,
                        "missing value for constexpr parameter '%s': @triton.autotune's "
                        "configs give it (%d configs; the first: %s=%s) and a launch tunes "
                        "among them; to compile one here, give it (-D %s=%s)",
                        p->name, tune->nconfigs, p->name, text, p->name, text);
    return sema_err(s, p->span, "missing value for constexpr parameter '%s'", p->name);
}

/* The first runtime parameter past the signature's nargs entries that
 * has no default, or NULL: a launch may leave out those with defaults, as
 * Triton's may. */
static const Node *first_undefaulted(const Node *fn, const SpecRequest *req)
{
    int idx = 0;
    for (int i = 0; i < fn->list.len; i++) {
        const Node *p = fn->list.items[i];
        if (param_is_runtime(req, p) && idx++ >= req->nargs && !p->b)
            return p;
    }
    return NULL;
}

/* Runtime parameter p, left out of the launch, bound to its default as
 * Triton's launch passes that value: an int as i32 (i64 past its range;
 * 1 as the constant 1, which Triton specialises), a float as fp32, a
 * bool as i1; anything else (None, a string, a dtype) as the constexpr
 * Triton makes of it. */
static SVal default_arg(Sema *s, const Node *p)
{
    Env *saved = s->env;
    s->env = s->globals;
    SVal v = sema_eval(s, p->b);
    s->env = saved;
    if ((v.k != SV_INT && v.k != SV_FLOAT && v.k != SV_BOOL) || (v.k == SV_INT && v.i == 1))
        return v;
    if (v.big)
        return sema_err(s, p->b->span,
                        "runtime parameter '%s' is left out of the launch and its default %s "
                        "is past 64 bits; give it",
                        p->name, sv_describe(s, v));
    DType dt = v.k == SV_FLOAT ? DT_F32
        : v.k == SV_BOOL       ? DT_I1
        : v.i == (int32_t)v.i  ? DT_I32
                               : DT_I64;
    return sv_tensor(sema_const(s, type_scalar(dt), v, p->b->span));
}

void sema_bind_params(Sema *s, const Node *fn, const SpecRequest *req, const KernelSig *tune)
{
    check_defines(s, fn, req);
    int nrt = count_runtime(fn, req);
    const Node *need = req->nargs >= 0 && req->nargs < nrt ? first_undefaulted(fn, req) : NULL;
    if (req->nargs > nrt || need) {
        StrBuf names;
        sb_init(&names);
        for (int i = 0; i < fn->list.len; i++)
            if (param_is_runtime(req, fn->list.items[i]))
                sb_printf(&names, "%s%s", names.len ? ", " : "", fn->list.items[i]->name);
        sema_err(s, fn->span,
                 "the signature has %d entries but kernel '%s' has %d runtime "
                 "parameters (%s)%s%s%s",
                 req->nargs, fn->name, nrt, names.data ? names.data : "none",
                 need ? "; only those with defaults may be left out, and '" : "",
                 need ? need->name : "", need ? "' has none" : "");
        sb_free(&names);
        return;
    }
    int idx = 0;
    for (int i = 0; i < fn->list.len; i++) {
        const Node *p = fn->list.items[i];
        if (param_is_runtime(req, p) && req->nargs >= 0 && idx >= req->nargs) {
            env_set(s, s->env, p->name, default_arg(s, p), p->span);
            continue;
        }
        if (param_is_runtime(req, p)) {
            bind_runtime_param(s, fn, p, req, idx++);
            continue;
        }
        if (param_is_none(req, p)) {
            SVal none = sv_none();
            none.s = p->name; /* named in errors that use it */
            env_set(s, s->env, p->name, none, p->span);
            continue;
        }
        const SpecDefine *d = find_define(req, p->name);
        SVal v;
        if (d) {
            v = sema_from_const(s, d->value);
            if (v.k == SV_UNDEF)
                define_err(s, d, "constexpr %s: %s", d->name, v.s);
        } else if (p->b) {
            Env *saved = s->env;
            s->env = s->globals;
            v = sema_eval(s, p->b);
            s->env = saved;
        } else if (strcmp(p->name, "num_warps") == 0 || strcmp(p->name, "num_stages") == 0) {
            /* the compile's setting, as Triton binds its keyword argument to both */
            v = sv_int(p->name[4] == 'w' ? req->num_warps : req->num_stages);
        } else {
            v = missing_const(s, p, tune);
        }
        env_set(s, s->env, p->name, v, p->span);
    }
}
