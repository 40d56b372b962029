/* rt_launch.c: checks a launch's arguments against the kernel's parameters,
 * builds the cache key (Triton's specialisation: pointers 16-byte aligned,
 * integers divisible by 16 or equal to 1), packs the values and launches on
 * the context's backend. Guarantees: an argument mismatch is reported
 * with the kernel and parameter names and nothing is launched; the hit path
 * allocates nothing and takes no lock beyond the cache's read path. */
#include <stdio.h>
#include <string.h>

#include "rt_backend.h"
#include "rt_nvtx.h"

static const DType dtype_of[] = {
    [TK_VOID] = DT_VOID,       [TK_I1] = DT_I1,   [TK_I8] = DT_I8,       [TK_I16] = DT_I16,
    [TK_I32] = DT_I32,         [TK_I64] = DT_I64, [TK_U8] = DT_U8,       [TK_U16] = DT_U16,
    [TK_U32] = DT_U32,         [TK_U64] = DT_U64, [TK_F16] = DT_F16,     [TK_BF16] = DT_BF16,
    [TK_F32] = DT_F32,         [TK_F64] = DT_F64, [TK_F8E4NV] = DT_F8E4, [TK_F8E5] = DT_F8E5,
    [TK_F8E4B15] = DT_F8E4B15,
};

static bool valid_dtype(tk_dtype t) { return (unsigned)t < TK_ARRAY_LEN(dtype_of) && t != TK_VOID; }

DType rt_dtype(tk_dtype t) { return valid_dtype(t) ? dtype_of[t] : DT_VOID; }

static bool tk_is_float(tk_dtype t)
{
    return t == TK_F16 || t == TK_BF16 || t == TK_F32 || t == TK_F64 || t == TK_F8E4NV ||
        t == TK_F8E5 || t == TK_F8E4B15;
}

/* Pointers, scalars, descriptors and tuples fill the runtime parameters. */
static bool is_runtime(const tk_arg *a)
{
    return a->kind == TK_ARG_PTR || a->kind == TK_ARG_SCALAR || a->kind == TK_ARG_DESC ||
        a->kind == TK_ARG_TUPLE;
}

static const char *pname(const tk_kernel *k, int p) { return k->sig.param_names[p]; }

/* What computes constexpr `name` when a heuristic entry that host code
 * computes names it ("the host function 'f'"), or NULL. */
static const char *heuristic_host(const KernelSig *sig, const char *name)
{
    for (int i = 0; i < sig->nheuristics; i++)
        if (strcmp(sig->heuristic_names[i], name) == 0)
            return sig->heuristic_hosts[i];
    return NULL;
}

/* "x_ptr, y_ptr, n" for messages. */
static void list_params(const tk_kernel *k, bool constexprs, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int p = 0; p < k->sig.nparams && at < cap; p++)
        if (k->sig.is_constexpr[p] == constexprs)
            at += (size_t)snprintf(out + at, cap - at, "%s%s", at ? ", " : "", pname(k, p));
    if (!out[0])
        snprintf(out, cap, "none");
}

/* The parameter a constexpr argument names: the c-th constexpr of a launch
 * usually names what it named last time, so try that first. */
static int find_const(tk_kernel *k, int c, const char *name)
{
    int hint = c < RT_MAX_PARAMS ? __atomic_load_n(&k->const_hint[c], __ATOMIC_RELAXED) : 0;
    if (hint < k->sig.nparams && strcmp(pname(k, hint), name) == 0)
        return hint;
    int p;
    for (p = 0; p < k->sig.nparams && strcmp(pname(k, p), name) != 0; p++)
        ;
    if (p < k->sig.nparams && c < RT_MAX_PARAMS)
        __atomic_store_n(&k->const_hint[c], p, __ATOMIC_RELAXED);
    return p;
}

/* tk_none(): a None, which turns a runtime parameter into a constexpr None. */
static bool rt_arg_is_none(const tk_arg *a) { return a->text && strcmp(a->text, "None") == 0; }

/* A constexpr needs a name, except as a tuple's item, and a value or text:
 * tk_const_text(name, NULL) would otherwise read as the number 0. */
static tk_status check_const(const char *fn, const tk_arg *args, int i, bool item)
{
    char what[32];
    const tk_arg *a = &args[i];
    bool named = a->name || item;
    if (a->kind != TK_ARG_CONST || (named && (a->text || a->dtype != TK_VOID)))
        return TK_OK;
    snprintf(what, sizeof what, "args[%d].%s", i, named ? "text" : "name");
    return err_null_arg(fn, what);
}

tk_status rt_check_args(const char *fn, const tk_arg *args, int nargs)
{
    tk_status s = err_check_count(fn, "args", args, "nargs", nargs);
    for (int i = 0, span; s == TK_OK && i < nargs; i += span) {
        span = rt_arg_span(args, i, nargs);
        if (span < 0)
            return err_set(TK_ERR_INVALID,
                           "%s: args[%d] is a tuple of %lld items that does not fit the list "
                           "(its items run past nargs, or tuples nest more than 8 deep)",
                           fn, i, (long long)args[i].v.i);
        for (int k = i; s == TK_OK && k < i + span; k++)
            s = check_const(fn, args, k, k > i);
    }
    return s;
}

static tk_status bind_const(tk_kernel *k, int c, const tk_arg *a, RtLaunchArgs *la)
{
    char names[512];
    if (!a->name)
        return err_set(TK_ERR_LAUNCH, "kernel '%s': a constexpr argument has no name", k->name);
    int p = find_const(k, c, a->name);
    if (p == k->sig.nparams) {
        list_params(k, true, names, sizeof names);
        return err_set(TK_ERR_LAUNCH, "kernel '%s' has no parameter '%s'; its constexprs: %s",
                       k->name, a->name, names);
    }
    if (!k->sig.is_constexpr[p] && !rt_arg_is_none(a))
        return err_set(TK_ERR_LAUNCH,
                       "'%s' is a runtime parameter of kernel '%s', not a "
                       "constexpr: pass it in order with tk_ptr/tk_i32/...",
                       a->name, k->name);
    if (la->consts[p])
        return err_set(TK_ERR_LAUNCH, "kernel '%s': constexpr '%s' is given twice", k->name,
                       a->name);
    la->consts[p] = a;
    return TK_OK;
}

/* Triton's specialisation bits of one argument: pointers aligned to 16
 * bytes and integers divisible by 16 are "divisible by 16"; integers equal
 * to 1 are marked as such (and are not divisible by 16). */
static void spec_bits(const tk_arg *a, DType dt, bool *div16, bool *eq1)
{
    *div16 = *eq1 = false;
    if (a->kind == TK_ARG_PTR)
        *div16 = (uintptr_t)a->v.ptr % 16 == 0;
    else if (dtype_is_int(dt) && dt != DT_I1) {
        *eq1 = a->v.i == 1;
        *div16 = !*eq1 && a->v.i % 16 == 0;
    }
}

void rt_arg_spec(const tk_arg *a, ArgSpec *out)
{
    if (a->kind == TK_ARG_DESC) {
        rt_desc_spec(a, out);
        return;
    }
    DType dt = valid_dtype(a->dtype) ? dtype_of[a->dtype] : DT_I32;
    bool div16, eq1;
    spec_bits(a, dt, &div16, &eq1);
    memset(out, 0, sizeof *out);
    out->type = a->kind == TK_ARG_PTR ? type_ptr(dt) : type_scalar(dt);
    out->divisibility = div16 ? 16 : 1;
    out->equal_to_1 = eq1;
}

/* Whether an integer scalar's value fits its dtype: tk_i32() and the like
 * cannot carry more, but a tk_arg built by hand can, and the launch would
 * then pass a silently truncated value. */
static bool scalar_fits(const tk_arg *a)
{
    switch (a->dtype) {
    case TK_I1: return a->v.u <= 1;
    case TK_I8: return a->v.i >= INT8_MIN && a->v.i <= INT8_MAX;
    case TK_I16: return a->v.i >= INT16_MIN && a->v.i <= INT16_MAX;
    case TK_I32: return a->v.i >= INT32_MIN && a->v.i <= INT32_MAX;
    case TK_U8: return a->v.u <= UINT8_MAX;
    case TK_U16: return a->v.u <= UINT16_MAX;
    case TK_U32: return a->v.u <= UINT32_MAX;
    default: return true;
    }
}

tk_status rt_leaf_word(const tk_kernel *k, int j, const char *what, const tk_arg *a, bool no_spec,
                       uint64_t *word)
{
    if (!valid_dtype(a->dtype))
        return err_set(TK_ERR_LAUNCH, "kernel '%s': argument %d ('%s') has no valid dtype", k->name,
                       j + 1, what);
    if (a->kind == TK_ARG_SCALAR && !scalar_fits(a))
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': argument %d ('%s') holds %lld, which does "
                       "not fit in %s",
                       k->name, j + 1, what, (long long)a->v.i, dtype_name(dtype_of[a->dtype]));
    bool div16, eq1;
    spec_bits(a, dtype_of[a->dtype], &div16, &eq1);
    if (no_spec)
        div16 = eq1 = false;
    *word =
        (uint64_t)a->dtype | (uint64_t)a->kind << 8 | (uint64_t)div16 << 16 | (uint64_t)eq1 << 17;
    return TK_OK;
}

static tk_dtype tk_dtype_of(DType dt)
{
    for (int t = 0; t < (int)TK_ARRAY_LEN(dtype_of); t++)
        if (t != TK_VOID && dtype_of[t] == dt)
            return (tk_dtype)t;
    return TK_VOID;
}

/* A scalar given as another type than its parameter's annotation declares
 * takes the declared one, as Triton's launcher converts a Python int or
 * float: any number for a float parameter, an integer that fits for an
 * integer one. *out is the converted argument. */
static tk_status as_declared(const tk_kernel *k, int p, const tk_arg *a, DType want, tk_arg *out)
{
    *out = *a;
    out->dtype = tk_dtype_of(want);
    if (dtype_is_float(want)) {
        if (!tk_is_float(a->dtype))
            out->v.f = dtype_is_signed(dtype_of[a->dtype]) ? (double)a->v.i : (double)a->v.u;
        return TK_OK;
    }
    if (tk_is_float(a->dtype))
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': parameter '%s' is declared %s but the launch passes %s",
                       k->name, pname(k, p), dtype_name(want), dtype_name(dtype_of[a->dtype]));
    bool neg = dtype_is_signed(dtype_of[a->dtype]) && a->v.i < 0;
    bool over = !dtype_is_signed(dtype_of[a->dtype]) && a->v.u > INT64_MAX;
    bool fits = dtype_is_signed(want) ? !over : !neg;
    if (!fits || !scalar_fits(out))
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': parameter '%s' is declared %s, which cannot hold %s%llu",
                       k->name, pname(k, p), dtype_name(want), neg ? "-" : "",
                       neg ? 0ULL - (unsigned long long)a->v.i : (unsigned long long)a->v.u);
    return TK_OK;
}

/* Checks runtime argument j against the annotation in the source, if any,
 * and gives its key word: dtype, kind and specialisation bits. A scalar of
 * another type than the annotation's is converted into la->declared[j]. */
static tk_status check_value(tk_kernel *k, int j, RtLaunchArgs *la, uint64_t *word)
{
    int p = k->runtime_idx[j];
    const tk_arg *a = la->values[j];
    DType given = valid_dtype(a->dtype) ? dtype_of[a->dtype] : DT_VOID;
    Type decl = k->sig.annotated[p];
    if (a->kind == TK_ARG_SCALAR && given != DT_VOID && decl.dt != DT_VOID && decl.dt != DT_PTR &&
        decl.dt != given && tk_dtype_of(decl.dt) != TK_VOID) {
        tk_status s = as_declared(k, p, a, decl.dt, &la->declared[j]);
        if (s != TK_OK)
            return s;
        a = la->values[j] = &la->declared[j];
    }
    if (a->kind == TK_ARG_DESC && k->sig.annotated[p].dt != DT_VOID)
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': parameter '%s' is declared %s%s but the "
                       "launch passes a tensor descriptor (leave it unannotated)",
                       k->name, pname(k, p), k->sig.annotated[p].dt == DT_PTR ? "*" : "",
                       dtype_name(k->sig.annotated[p].dt == DT_PTR ? k->sig.annotated[p].elem
                                                                   : k->sig.annotated[p].dt));
    if (a->kind == TK_ARG_DESC)
        return rt_desc_check(k, j, pname(k, p), rt_no_spec(k, j), a, word);
    tk_status s = rt_leaf_word(k, j, pname(k, p), a, rt_no_spec(k, j), word);
    if (s != TK_OK)
        return s;
    DType dt = dtype_of[a->dtype];
    Type ann = k->sig.annotated[p];
    if (ann.dt != DT_VOID) {
        if (a->kind == TK_ARG_PTR && (ann.dt != DT_PTR || ann.elem != dt))
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': parameter '%s' is declared %s%s but "
                           "the launch passes a pointer to %s",
                           k->name, pname(k, p), ann.dt == DT_PTR ? "*" : "",
                           dtype_name(ann.dt == DT_PTR ? ann.elem : ann.dt), dtype_name(dt));
        if (a->kind != TK_ARG_PTR && ann.dt == DT_PTR)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': parameter '%s' is a pointer (*%s) but "
                           "the launch passes a scalar %s",
                           k->name, pname(k, p), dtype_name(ann.elem), dtype_name(dt));
        if (a->kind != TK_ARG_PTR && ann.dt != dt)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': parameter '%s' is declared %s but the "
                           "launch passes %s",
                           k->name, pname(k, p), dtype_name(ann.dt), dtype_name(dt));
    }
    return TK_OK;
}

void rt_key_const(RtKey *key, const tk_arg *a)
{
    if (!a) {
        key->w[key->nwords++] = 0;
        key->w[key->nwords++] = 0;
    } else if (a->text) {
        key->w[key->nwords++] = 3;
        key->w[key->nwords++] = rt_hash64(0x51ed270b27ULL, a->text, strlen(a->text));
    } else {
        key->w[key->nwords++] = 1 | (uint64_t)a->dtype << 8;
        uint64_t bits;
        memcpy(&bits, &a->v, sizeof bits);
        key->w[key->nwords++] = bits;
    }
}

/* A setting of the environment, read once into *cell (-1 until then):
 * launches do not scan the environment. */
static bool read_once(_Atomic int *cell, bool (*read)(void))
{
    int v = atomic_load_explicit(cell, memory_order_relaxed);
    if (v < 0) {
        v = read();
        atomic_store_explicit(cell, v, memory_order_relaxed);
    }
    return v;
}

static bool env_fusion(void) { return comp_fp_fusion(0); }
static bool env_debug(void) { return comp_debug(0); }
static bool env_no_tma(void) { return rt_env_on("TK_NO_TMA"); }

/* TK_DEFAULT_FP_FUSION: fma unless "0" */
static bool fusion_default(void)
{
    static _Atomic int on = -1;
    return read_once(&on, env_fusion);
}

/* TRITON_DEBUG / TK_DEBUG: the debug option's default */
static bool debug_default(void)
{
    static _Atomic int on = -1;
    return read_once(&on, env_debug);
}

/* TK_NO_TMA=1: kernels copy their tiles with cp.async even where TMA
 * could (to compare the two) */
static bool tma_off(void)
{
    static _Atomic int off = -1;
    return read_once(&off, env_no_tma);
}

/* A constexpr parameter named num_warps, num_stages or num_ctas is also
 * the launch's setting, as in Triton, where one keyword argument binds
 * both: given as a constexpr, it sets the launch's setting the options
 * leave at its default (the two given and different is an error); not
 * given and without a default of its own, it takes the launch's setting
 * (its default included), bound in la->implied once the settings are
 * checked. */
static tk_status settings_as_params(const tk_kernel *k, RtLaunchArgs *la)
{
    static const char *const names[3] = {"num_warps", "num_stages", "num_ctas"};
    int *setting[3] = {&la->num_warps, &la->num_stages, &la->num_ctas};
    for (int i = 0; i < 3; i++) {
        la->implied[i] = (tk_arg){TK_ARG_CONST, TK_I64, NULL, {0}, NULL};
        int p = 0;
        while (p < k->sig.nparams && strcmp(pname(k, p), names[i]) != 0)
            p++;
        if (p == k->sig.nparams || !k->sig.is_constexpr[p])
            continue;
        const tk_arg *a = la->consts[p];
        if (!a && k->sig.has_default[p])
            continue; /* its default, as where Triton's launch leaves it out */
        if (!a) {
            la->implied[i].name = names[i];
            la->consts[p] = &la->implied[i];
            continue;
        }
        ConstValue cv;
        if (rt_const_value(k->name, names[i], a, &cv) != TK_OK)
            return TK_ERR_LAUNCH;
        if (cv.kind != CV_INT || cv.i < 1 || cv.i > 1024)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': constexpr '%s' is the launch's %s too: give it a small "
                           "positive integer",
                           k->name, names[i], names[i]);
        if (*setting[i] && *setting[i] != cv.i)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': constexpr '%s' is %lld but the launch's %s is %d: "
                           "the parameter is the setting, give one value",
                           k->name, names[i], (long long)cv.i, names[i], *setting[i]);
        *setting[i] = (int)cv.i;
    }
    return TK_OK;
}

tk_status rt_launch_args(tk_kernel *k, const tk_arg *args, int nargs, const tk_launch_options *opts,
                         RtLaunchArgs *la)
{
    if (nargs < 0 || (nargs > 0 && !args))
        return err_set(TK_ERR_INVALID, "kernel '%s': bad argument list", k->name);
    la->no_tma = false;
    la->num_warps = opts ? opts->num_warps : 0;
    la->num_stages = opts ? opts->num_stages : 0;
    int fusion = opts ? opts->fp_fusion : 0;
    if (fusion < -1 || fusion > 1)
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': fp_fusion is %d (0 for the default, 1 on, -1 off)", k->name,
                       fusion);
    la->fp_fusion = fusion ? fusion > 0 : fusion_default();
    int debug = opts ? opts->debug : 0;
    if (debug < -1 || debug > 1)
        return err_set(TK_ERR_LAUNCH, "kernel '%s': debug is %d (0 for the default, 1 on, -1 off)",
                       k->name, debug);
    la->debug = debug ? debug > 0 : debug_default();
    la->num_ctas = opts ? opts->num_ctas : 0;
    memset(la->consts, 0, sizeof la->consts[0] * (size_t)k->sig.nparams);
    int nrun = 0, nconst = 0, nitems = 0;
    for (int i = 0, span; i < nargs; i += span) {
        const tk_arg *a = &args[i];
        span = rt_arg_span(args, i, nargs);
        if (span < 0)
            return err_set(TK_ERR_INVALID, "kernel '%s': argument %d is a malformed tuple", k->name,
                           i + 1);
        if ((nitems += span - 1) > RT_MAX_PARAMS)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': the launch's tuples hold more than %d items in all",
                           k->name, RT_MAX_PARAMS);
        if (a->kind == TK_ARG_CONST) {
            tk_status s = bind_const(k, nconst++, a, la);
            if (s != TK_OK)
                return s;
        } else if (!is_runtime(a))
            return err_set(TK_ERR_LAUNCH, "kernel '%s': argument %d has an unknown kind", k->name,
                           i + 1);
    }
    tk_status st = settings_as_params(k, la);
    if (st != TK_OK)
        return st;
    char why[128];
    if (!ir_launch_settings(&la->num_warps, &la->num_stages, NULL, why, sizeof why))
        return err_set(TK_ERR_LAUNCH, "kernel '%s': %s", k->name, why);
    if (!ir_launch_ctas(&la->num_ctas, NULL, why, sizeof why))
        return err_set(TK_ERR_LAUNCH, "kernel '%s': %s", k->name, why);
    for (int i = 0; i < 3; i++) /* the settings' defaults, where a parameter takes one */
        if (la->implied[i].name)
            la->implied[i].v.i = i == 0 ? la->num_warps : i == 1 ? la->num_stages : la->num_ctas;
    /* the runtime arguments fill the runtime parameters not given tk_none(), in order */
    int nnone = 0, next = 0;
    for (int r = 0; r < k->nruntime; r++)
        nnone += la->consts[k->runtime_idx[r]] != NULL;
    for (int i = 0; i < nargs; i += rt_arg_span(args, i, nargs)) {
        const tk_arg *a = &args[i];
        if (!is_runtime(a))
            continue;
        while (next < k->nruntime && la->consts[k->runtime_idx[next]])
            la->values[next++] = NULL;
        if (next < k->nruntime)
            la->values[next++] = a;
        nrun++;
    }
    while (next < k->nruntime && la->consts[k->runtime_idx[next]])
        la->values[next++] = NULL;
    if (nnone > 0 && nrun == k->nruntime - nnone)
        nrun = k->nruntime;
    /* runtime parameters left out at the end take their defaults, as in
     * Triton; specialisation binds them (no value: NULL, as None) */
    int left = next;
    while (left < k->nruntime &&
           (la->consts[k->runtime_idx[left]] || k->sig.has_default[k->runtime_idx[left]]))
        la->values[left++] = NULL;
    if (nrun < k->nruntime && next < k->nruntime && left == k->nruntime)
        nrun = k->nruntime;
    if (nrun != k->nruntime) {
        char names[512];
        list_params(k, false, names, sizeof names);
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s' takes %d runtime argument%s (%s) but the "
                       "launch gives %d",
                       k->name, k->nruntime, k->nruntime == 1 ? "" : "s", names, nrun);
    }
    RtKey *key = &la->key;
    key->nwords = 0;
    for (int j = 0; j < k->nruntime; j++) {
        if (!la->values[j]) {
            key->w[key->nwords++] = UINT64_MAX; /* None */
            continue;
        }
        const tk_arg *a = la->values[j];
        tk_status s = a->kind == TK_ARG_TUPLE
            ? rt_tuple_key(k, j, pname(k, k->runtime_idx[j]), a, key)
            : check_value(k, j, la, &key->w[key->nwords++]);
        if (s != TK_OK)
            return s;
    }
    for (int p = 0; p < k->sig.nparams; p++) {
        if (!k->sig.is_constexpr[p])
            continue;
        if (!la->consts[p] && !k->sig.has_default[p] && k->sig.configs_from_host)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s' needs a value for constexpr '%s': its "
                           "@triton.autotune configs are given by the host (Python code tk does "
                           "not run), so pass the constexprs (tk_const(\"%s\", ...)) or a "
                           "config list",
                           k->name, pname(k, p), pname(k, p));
        const char *host = heuristic_host(&k->sig, pname(k, p));
        if (!la->consts[p] && !k->sig.has_default[p] && host)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s' needs a value for constexpr '%s': @triton.heuristics "
                           "computes it with %s, which tk does not run, so pass the constexpr "
                           "(tk_const(\"%s\", ...))",
                           k->name, pname(k, p), host, pname(k, p));
        if (!la->consts[p] && !k->sig.has_default[p] && k->sig.heuristics_from_host)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s' needs a value for constexpr '%s': its "
                           "@triton.heuristics values are computed by the host (Python code tk "
                           "does not run), so pass the constexprs (tk_const(\"%s\", ...))",
                           k->name, pname(k, p), pname(k, p));
        if (!la->consts[p] && !k->sig.has_default[p])
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s' needs a value for constexpr '%s' (add "
                           "tk_const(\"%s\", ...) to the launch)",
                           k->name, pname(k, p), pname(k, p));
        rt_key_const(key, la->consts[p]);
    }
    key->w[key->nwords++] = (uint64_t)la->num_warps;
    key->w[key->nwords++] = (uint64_t)la->num_stages;
    if (!la->fp_fusion)
        key->w[key->nwords++] = RT_KEY_NO_FUSION;
    if (la->debug)
        key->w[key->nwords++] = RT_KEY_DEBUG;
    la->ctas_word = key->nwords;
    if (la->num_ctas > 1) /* keys without clusters stay as they were */
        key->w[key->nwords++] = RT_KEY_CTAS2;
    if (tma_off()) {
        la->no_tma = true;
        key->w[key->nwords++] = RT_KEY_NO_TMA;
    }
    rt_key_finish(key);
    return TK_OK;
}

/* ---- packing ------------------------------------------------------------------------- */

bool rt_arg_is_float(const tk_arg *a) { return tk_is_float(a->dtype); }

/* One parameter's bytes, little-endian in a 64-bit slot, as the compiled
 * kernel's dtype wants them. */
uint64_t rt_pack_value(const tk_arg *a, DType dt)
{
    if (a->kind == TK_ARG_PTR)
        return (uint64_t)(uintptr_t)a->v.ptr;
    bool fl = tk_is_float(a->dtype);
    double f =
        fl ? a->v.f : (dtype_is_signed(dtype_of[a->dtype]) ? (double)a->v.i : (double)a->v.u);
    /* only in range is the cast defined: an infinite or NaN fp32 scalar
     * is packed as a float and never needs it */
    int64_t i = !fl ? a->v.i : f >= -0x1p63 && f < 0x1p63 ? (int64_t)f : 0;
    uint64_t out = 0;
    switch (dt) {
    case DT_F16: out = tk_f32_to_f16((float)f); break;
    case DT_BF16: out = tk_f32_to_bf16((float)f); break;
    case DT_F32: {
        float x = (float)f;
        uint32_t b;
        memcpy(&b, &x, 4);
        out = b;
        break;
    }
    case DT_F64: memcpy(&out, &f, 8); break;
    case DT_I1: out = i != 0; break;
    case DT_I8:
    case DT_U8: out = (uint8_t)i; break;
    case DT_I16:
    case DT_U16: out = (uint16_t)i; break;
    case DT_I32:
    case DT_U32: out = (uint32_t)i; break;
    default: out = (uint64_t)i; break;
    }
    return out;
}

/* ---- launching ------------------------------------------------------------------------ */

static tk_status check_grid(const tk_kernel *k, tk_grid g)
{
    const tk_device_props *p = &k->mod->ctx->props;
    unsigned d[3] = {g.x, g.y, g.z};
    for (int i = 0; i < 3; i++) {
        if (d[i] == 0)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': grid (%u, %u, %u) is empty; every "
                           "dimension must be at least 1",
                           k->name, g.x, g.y, g.z);
        if (d[i] > (unsigned)p->max_grid[i])
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': grid (%u, %u, %u) is over the device's "
                           "limit of (%d, %d, %d)",
                           k->name, g.x, g.y, g.z, p->max_grid[0], p->max_grid[1], p->max_grid[2]);
    }
    return TK_OK;
}

tk_status tk_launch(tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs,
                    const tk_launch_options *opts)
{
    if (!k)
        return err_null_arg("tk_launch", "k");
    tk_status s = rt_check_args("tk_launch", args, nargs);
    if (s != TK_OK)
        return s;
    /* a first launch's range holds its compile, load and autotune ranges */
    rt_nvtx_push("launch", k->name);
    if ((!opts || !opts->as_given) && rt_tune_applies(k, args, nargs))
        s = rt_tune_launch(k, NULL, NULL, grid, args, nargs, opts);
    else
        s = rt_launch_direct(k, grid, args, nargs, opts);
    rt_nvtx_pop();
    return s;
}

tk_status rt_launch_direct(tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs,
                           const tk_launch_options *opts)
{
    tk_status s = check_grid(k, grid);
    if (s != TK_OK)
        return s;
    RtLaunchArgs la;
    s = rt_launch_args(k, args, nargs, opts, &la);
    if (s != TK_OK)
        return s;
    RtVariant *v = NULL;
    s = rt_variant_get(k, &la, &v);
    if (s != TK_OK)
        return s;
    return k->mod->ctx->be->launch(k, v, grid, &la, opts);
}

tk_status tk_kernel_prepare(tk_kernel *k, const tk_arg *args, int nargs,
                            const tk_launch_options *opts, tk_kernel_info *info)
{
    if (!k || !info)
        return err_null_arg("tk_kernel_prepare", !k ? "k" : "info");
    memset(info, 0, sizeof *info);
    RtLaunchArgs la;
    tk_status s = rt_check_args("tk_kernel_prepare", args, nargs);
    if (s == TK_OK)
        s = rt_launch_args(k, args, nargs, opts, &la);
    RtVariant *v = NULL;
    if (s == TK_OK)
        s = rt_variant_get(k, &la, &v);
    if (s == TK_OK)
        *info = v->info;
    return s;
}
