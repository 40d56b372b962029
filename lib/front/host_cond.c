/* host_cond.c: the value of a host `if` condition, where it can be known
 * without running Python. tk implements one Triton language version
 * (TK_TRITON_VERSION), so comparisons of triton.__version__ (as a string,
 * through version.parse / packaging's Version, importlib.metadata.version
 * ("triton")) are decided; so are environment reads with literal defaults
 * (read now, and listed in h->env_reads for the cache key),
 * hasattr(triton.language, NAME) against tk's own builtins, device
 * checks against the arch compiled for (front_set_target: capability,
 * Triton's get_current_target(), noted for the cache key too), module
 * constants computed from those, and host helpers (`def triton_ge(v):
 * return version.parse(triton.__version__) >= ...`, or bodies with
 * locals, if/elif/else, try/except and the operator module), this file's
 * or another file's of the package that a name was imported from.
 * Anything else is unknown: `and`/`or` stay three-valued, so an unknown
 * part decides nothing unless the rest cannot. Assumes host_lines cut the
 * text; never reports an error (host_branch keeps today's path for an
 * unknown condition, naming it). */
#include <stdlib.h>
#include <string.h>

#include "front/host.h"

/* What tk's builtins are: sema knows, and it sits above the front end, so
 * the driver hands the answers down (front_set_builtins). Until it does, a
 * condition that needs them is undecided. */
static FrontBuiltins builtins;

void front_set_builtins(const FrontBuiltins *b) { builtins = *b; }

/* The arch the module is compiled for ("sm_90a"), which decides device
 * checks (`torch.cuda.get_device_capability()[0] >= 9`). Per thread: the
 * runtime may load modules for devices of different archs at once. */
static _Thread_local char target_arch[16];

void front_set_target(const char *arch)
{
    size_t n = arch ? strlen(arch) : 0;
    if (n >= sizeof target_arch || (n && strncmp(arch, "sm_", 3) != 0))
        n = 0; /* not an arch tk knows: device checks stay undecided */
    memcpy(target_arch, arch ? arch : "", n);
    target_arch[n] = 0;
}

const char *front_target(void) { return target_arch; }

bool host_libdevice_known(const char *name)
{
    return builtins.libdevice_known && builtins.libdevice_known(name);
}

bool host_builtin_exists(const char *ns, const char *name)
{
    return builtins.exists && builtins.exists(ns, name);
}

#define TK_TRITON_VERSION "3.6.0"

enum { HV_PARTS = 4 };

typedef enum {
    HV_UNKNOWN,
    HV_BOOL,
    HV_INT,
    HV_STR,
    HV_VER,
    HV_TUPLE,
    HV_NONE,
    HV_MODULE,
    HV_TARGET, /* the device compiled for: get_current_target(), get_device_properties() */
    HV_OP,     /* a comparison of the operator module (operator.ge): i[0] = HostCmp */
} HvKind;

/* One value: ints for HV_INT (i[0]), HV_VER and HV_TUPLE (n parts);
 * s for HV_STR. A namespace path (`triton.language`) is HV_MODULE with s
 * holding the path as written. */
typedef struct HostVal {
    HvKind k;
    bool b;
    long i[HV_PARTS];
    int n;
    const char *s;
} HostVal;

typedef struct CondParse {
    HostScan *h;
    const char *t;
    size_t p, end;
    /* the names of the helper being evaluated: parameters and locals */
    const char *const *names;
    const HostVal *vals;
    int nnames;
    int depth;
} CondParse;

static const HostVal UNKNOWN = {.k = HV_UNKNOWN};

static HostVal hv_bool(bool b) { return (HostVal){.k = HV_BOOL, .b = b}; }

static void cp_ws(CondParse *c)
{
    while (c->p < c->end && strchr(" \t\r\n\\", c->t[c->p]))
        c->p++;
}

/* Consumes `s` (an operator, or a keyword as a whole word). */
static bool cp_eat(CondParse *c, const char *s)
{
    cp_ws(c);
    size_t n = strlen(s);
    if (c->p + n > c->end || memcmp(c->t + c->p, s, n) != 0)
        return false;
    if (host_is_id(s[0]) && c->p + n < c->end && host_is_id(c->t[c->p + n]))
        return false;
    if (!host_is_id(s[0]) && n == 1 && c->p + 1 < c->end && c->t[c->p + 1] == '=' &&
        strchr("<>=!", s[0]))
        return false;
    c->p += n;
    return true;
}

/* "3.0.1" -> 3, 0, 1; false for anything but digits and dots. */
static bool ver_parse(const char *s, HostVal *out)
{
    *out = (HostVal){.k = HV_VER};
    while (*s) {
        if (out->n == HV_PARTS || *s < '0' || *s > '9')
            return false;
        out->i[out->n++] = strtol(s, (char **)&s, 10);
        if (*s == '.' && s[1])
            s++;
        else if (*s)
            return false;
    }
    return out->n > 0;
}

/* Compares parts, shorter padded with zeros (as packaging does). */
static int parts_cmp(const HostVal *a, const HostVal *b, bool pad)
{
    int n = a->n > b->n ? a->n : b->n;
    for (int k = 0; k < n; k++) {
        if (!pad && (k >= a->n || k >= b->n))
            return k >= a->n ? (k >= b->n ? 0 : -1) : 1;
        long x = k < a->n ? a->i[k] : 0, y = k < b->n ? b->i[k] : 0;
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

static bool truth(HostVal v, bool *out)
{
    switch (v.k) {
    case HV_BOOL: *out = v.b; return true;
    case HV_INT: *out = v.i[0] != 0; return true;
    case HV_STR: *out = v.s[0] != 0; return true;
    case HV_NONE: *out = false; return true;
    case HV_VER:
    case HV_OP:
    case HV_MODULE: *out = true; return true;
    case HV_TUPLE: *out = v.n > 0; return true;
    default: return false;
    }
}

typedef enum { HC_LT, HC_LE, HC_GT, HC_GE, HC_EQ, HC_NE, HC_IS, HC_ISNOT, HC_IN, HC_NONE } HostCmp;

static HostVal cp_or(CondParse *c);
static HostVal cp_path(CondParse *c, const char *path);
static HostVal compare(HostVal a, HostCmp op, HostVal b);

/* A string literal (plain quotes, no prefix, no escapes that matter). */
static HostVal cp_string(CondParse *c)
{
    char q = c->t[c->p];
    size_t s = ++c->p;
    while (c->p < c->end && c->t[c->p] != q && c->t[c->p] != '\\' && c->t[c->p] != '\n')
        c->p++;
    if (c->p >= c->end || c->t[c->p] != q)
        return UNKNOWN;
    c->p++;
    return (HostVal){.k = HV_STR, .s = arena_strndup(c->h->lx->arena, c->t + s, c->p - 1 - s)};
}

static bool path_is(const char *path, const char *s) { return strcmp(path, s) == 0; }

/* Does the dotted path end with the component(s) `tail`? */
static bool path_ends(const char *path, const char *tail)
{
    size_t n = strlen(path), m = strlen(tail);
    return n >= m && strcmp(path + n - m, tail) == 0 && (n == m || path[n - m - 1] == '.');
}

/* The builtin namespace a path names (`tl`, `triton.language`), or NULL. */
static const char *path_ns(const HostScan *h, const char *path)
{
    const char *dot = strchr(path, '.');
    size_t head = dot ? (size_t)(dot - path) : strlen(path);
    if (!host_in(&h->prefixes, path, head))
        return NULL;
    const char *rest = dot ? dot + 1 : "";
    if (!dot)
        return strcmp(path, "triton") == 0 ? "triton" : "tl";
    if (strcmp(rest, "language") == 0)
        return "tl";
    if (!strncmp(rest, "language.", 9)) /* triton.language.X as tl.X */
        rest += 9;
    static const char *const sub[][2] = {{"core", "tl"},
                                         {"standard", "tl"},
                                         {"math", "tl.math"},
                                         {"extra", "tl.extra"},
                                         {"extra.cuda", "tl.extra.cuda"},
                                         {"extra.libdevice", "libdevice"},
                                         {"extra.cuda.libdevice", "libdevice"}};
    for (int i = 0; i < TK_ARRAY_LEN(sub); i++)
        if (strcmp(rest, sub[i][0]) == 0)
            return sub[i][1];
    return NULL;
}

int host_attr_exists(const HostScan *h, const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *ns =
        dot ? path_ns(h, arena_strndup(h->lx->arena, path, (size_t)(dot - path))) : NULL;
    if (!ns || !builtins.exists)
        return -1;
    return host_builtin_exists(ns, dot + 1);
}

/* Reads an environment variable now and notes it for the cache key. */
static HostVal cp_env(CondParse *c, const HostVal *args, int n, bool membership)
{
    if (n < 1 || args[0].k != HV_STR || (n == 2 && args[1].k != HV_STR && args[1].k != HV_NONE) ||
        n > 2)
        return UNKNOWN;
    const char *v = getenv(args[0].s);
    StrBuf *sb = &(c->h->root ? c->h->root : c->h)->env_reads;
    sb_printf(sb, "%s%s%s\n", args[0].s, v ? "=" : " unset", v ? v : "");
    if (membership)
        return hv_bool(v != NULL);
    if (v)
        return (HostVal){.k = HV_STR, .s = arena_strndup(c->h->lx->arena, v, strlen(v))};
    return n == 2 ? args[1] : (HostVal){.k = HV_NONE};
}

/* The compute capability of the target as major * 10 + minor (90 for
 * sm_90a), noted for the cache key; -1 when no target is set. */
static long target_sm(CondParse *c)
{
    if (!target_arch[0])
        return -1;
    long sm = strtol(target_arch + 3, NULL, 10);
    if (sm <= 0)
        return -1;
    StrBuf *sb = &(c->h->root ? c->h->root : c->h)->env_reads;
    if (!sb->data || !strstr(sb->data, "target "))
        sb_printf(sb, "target %s\n", target_arch);
    return sm;
}

/* torch.cuda.get_device_capability(): (major, minor) of the target. */
static HostVal target_capability(CondParse *c)
{
    long sm = target_sm(c);
    return sm < 0 ? UNKNOWN : (HostVal){.k = HV_TUPLE, .i = {sm / 10, sm % 10}, .n = 2};
}

/* An attribute of the target: Triton's GPUTarget (.backend, .arch,
 * .warp_size) or torch's device properties (.major, .minor). */
static HostVal target_attr(CondParse *c, const char *a, size_t len)
{
    long sm = target_sm(c);
    if (sm < 0)
        return UNKNOWN;
    if (len == 7 && !memcmp(a, "backend", 7))
        return (HostVal){.k = HV_STR, .s = "cuda"};
    if (len == 4 && !memcmp(a, "arch", 4))
        return (HostVal){.k = HV_INT, .i = {sm}};
    if (len == 9 && !memcmp(a, "warp_size", 9))
        return (HostVal){.k = HV_INT, .i = {32}};
    if (len == 5 && !memcmp(a, "major", 5))
        return (HostVal){.k = HV_INT, .i = {sm / 10}};
    if (len == 5 && !memcmp(a, "minor", 5))
        return (HostVal){.k = HV_INT, .i = {sm % 10}};
    return UNKNOWN;
}

/* The value of one expression of a helper's body, in its names. */
static HostVal cp_expr_in(CondParse *c, const char *expr, const char *const *names,
                          const HostVal *vals, int n)
{
    CondParse sub = {c->h, expr, 0, strlen(expr), names, vals, n, c->depth + 1};
    HostVal v = cp_or(&sub);
    cp_ws(&sub);
    return sub.p == sub.end ? v : UNKNOWN;
}

/* The statement after the block of the one at i (deeper lines skipped). */
static int after_block(const HostHelper *fn, int i)
{
    int k = i + 1;
    while (k < fn->nstmts && fn->stmts[k].indent > fn->stmts[i].indent)
        k++;
    return k;
}

/* Runs the body as Python would, while every value is known: the value
 * returned, or unknown. An `elif`/`else` reached in order follows a
 * branch that was taken, so it is skipped with the rest of its chain. */
static HostVal cp_helper(CondParse *c, const HostHelper *fn, const HostVal *args, int n)
{
    if (n != fn->nparams || c->depth > 8)
        return UNKNOWN;
    const char *names[HELPER_MAX_NAMES];
    HostVal vals[HELPER_MAX_NAMES];
    int nn = n;
    for (int i = 0; i < n; i++) {
        names[i] = fn->params[i];
        vals[i] = args[i];
    }
    for (int i = 0; i < fn->nstmts;) {
        const HostStmt *st = &fn->stmts[i];
        if (st->k == HS_ELIF || st->k == HS_ELSE) {
            i = after_block(fn, i);
            continue;
        }
        HostVal v = cp_expr_in(c, st->expr, names, vals, nn);
        bool b;
        if (st->k == HS_RETURN)
            return v;
        if (st->k == HS_ASSIGN) {
            int k = 0;
            while (k < nn && strcmp(names[k], st->name) != 0)
                k++;
            if (v.k == HV_UNKNOWN || k == HELPER_MAX_NAMES)
                return UNKNOWN;
            names[k] = st->name;
            vals[k] = v;
            nn += k == nn;
            i++;
            continue;
        }
        if (!truth(v, &b))
            return UNKNOWN;
        if (b) { /* into the branch */
            i++;
            continue;
        }
        i = after_block(fn, i); /* the next branch of the chain, if any */
        while (i < fn->nstmts && fn->stmts[i].indent == st->indent && fn->stmts[i].k == HS_ELIF) {
            v = cp_expr_in(c, fn->stmts[i].expr, names, vals, nn);
            if (!truth(v, &b))
                return UNKNOWN;
            if (b)
                break;
            i = after_block(fn, i);
        }
        if (i < fn->nstmts && fn->stmts[i].indent == st->indent &&
            (fn->stmts[i].k == HS_ELIF || fn->stmts[i].k == HS_ELSE))
            i++; /* the branch taken */
    }
    return (HostVal){.k = HV_NONE};
}

/* A comparison of the operator module: operator.ge and the like. */
static HostVal operator_fn(const char *path)
{
    static const struct {
        const char *name;
        HostCmp op;
    } ops[] = {{"operator.lt", HC_LT}, {"operator.le", HC_LE}, {"operator.gt", HC_GT},
               {"operator.ge", HC_GE}, {"operator.eq", HC_EQ}, {"operator.ne", HC_NE}};
    for (int i = 0; i < TK_ARRAY_LEN(ops); i++)
        if (strcmp(path, ops[i].name) == 0)
            return (HostVal){.k = HV_OP, .i = {ops[i].op}};
    return UNKNOWN;
}

/* A name of the helper being evaluated, or NULL. */
static const HostVal *frame_get(const CondParse *c, const char *name, size_t len)
{
    for (int i = c->nnames - 1; i >= 0; i--)
        if (strlen(c->names[i]) == len && memcmp(c->names[i], name, len) == 0)
            return &c->vals[i];
    return NULL;
}

/* A question about the platform the host runs on, asked with no
 * argument (`current_platform.is_rocm()`, `is_npu_available()`,
 * torch's `has_triton()`), where the module's own answer cannot be read
 * (a helper that tries to import another vendor's package): tk compiles
 * for an NVIDIA GPU with Triton, so the answer is known. */
static HostVal platform_query(CondParse *c, const char *path, int n)
{
    static const char *const no[] = {
        "is_rocm", "is_hip",  "is_xpu", "is_npu", "is_npu_available", "is_torch_npu_available",
        "is_mlu",  "is_musa", "is_cpu", "is_tpu", "is_hpu",           "is_torch_xpu_available"};
    static const char *const yes[] = {"is_cuda", "is_cuda_alike", "has_triton", "cuda.is_available",
                                      "is_torch_cuda_available"};
    if (n != 0 || target_sm(c) < 0)
        return UNKNOWN;
    for (int i = 0; i < TK_ARRAY_LEN(no); i++)
        if (path_ends(path, no[i]))
            return hv_bool(false);
    for (int i = 0; i < TK_ARRAY_LEN(yes); i++)
        if (path_ends(path, yes[i]))
            return hv_bool(true);
    return UNKNOWN;
}

/* A call of the function `path` with the values `args`. */
static HostVal cp_call(CondParse *c, const char *path, const HostVal *args, int n, const char *ns1)
{
    HostScan *h = c->h;
    const HostVal *named = frame_get(c, path, strlen(path));
    HostVal op = named ? *named : operator_fn(path);
    if (op.k == HV_OP)
        return n == 2 ? compare(args[0], (HostCmp)op.i[0], args[1]) : UNKNOWN;
    if ((path_ends(path, "importlib.import_module") || path_is(path, "__import__")) && n == 1 &&
        args[0].k == HV_STR && strcmp(args[0].s, "triton") == 0)
        return (HostVal){.k = HV_MODULE, .s = "triton"};
    if ((path_ends(path, "parse") || path_ends(path, "Version")) && n == 1 && args[0].k == HV_STR) {
        HostVal v;
        return ver_parse(args[0].s, &v) ? v : UNKNOWN;
    }
    if ((path_is(path, "version") || path_ends(path, "metadata.version") ||
         path_ends(path, "importlib_metadata.version")) &&
        n == 1 && args[0].k == HV_STR && strcmp(args[0].s, "triton") == 0)
        return (HostVal){.k = HV_STR, .s = TK_TRITON_VERSION};
    if (path_ends(path, "environ.get") || path_ends(path, "getenv"))
        return cp_env(c, args, n, false);
    if (path_ends(path, "cuda.get_device_capability") && n <= 1)
        return target_capability(c);
    if ((path_ends(path, "get_current_target") && n == 0) ||
        (path_ends(path, "cuda.get_device_properties") && n <= 1))
        return target_sm(c) < 0 ? UNKNOWN : (HostVal){.k = HV_TARGET};
    if (path_is(path, "hasattr") && n == 2 && ns1 && args[1].k == HV_STR)
        return builtins.exists ? hv_bool(host_builtin_exists(ns1, args[1].s)) : UNKNOWN;
    if (path_is(path, "int") && n == 1 && args[0].k == HV_INT)
        return args[0];
    if (path_is(path, "int") && n == 1 && args[0].k == HV_STR) {
        HostVal v;
        return ver_parse(args[0].s, &v) && v.n == 1 ? (HostVal){.k = HV_INT, .i = {v.i[0]}}
                                                    : UNKNOWN;
    }
    if (n == 1 && path_ends(path, "constexpr") && strlen(path) > 10 && /* tl.constexpr(x) */
        (path_is(path, "triton.language.constexpr") ||
         host_in(&h->prefixes, path, strlen(path) - strlen(".constexpr"))))
        return args[0];
    if (path_is(path, "bool") && n == 1) {
        bool b;
        return truth(args[0], &b) ? hv_bool(b) : UNKNOWN;
    }
    const char *dot = strrchr(path, '.');
    if (dot && strcmp(dot, ".split") == 0 && n == 1 && args[0].k == HV_STR &&
        strcmp(args[0].s, ".") == 0) {
        HostVal v = cp_path(c, arena_strndup(h->lx->arena, path, (size_t)(dot - path))), parts;
        if (v.k != HV_STR || !ver_parse(v.s, &parts))
            return UNKNOWN;
        parts.k = HV_TUPLE;
        parts.s = v.s; /* its items are the strings between the dots */
        return parts;
    }
    int k = dot ? -1 : namemap_get(&h->helpers, path);
    HostVal r = UNKNOWN;
    if (k >= 0)
        r = cp_helper(c, h->helper_list.items[k], args, n);
    const char *there = NULL;
    HostScan *file =
        k >= 0 || dot || namemap_get(&h->values, path) >= 0 ? NULL : host_imported(h, path, &there);
    k = file ? namemap_get(&file->helpers, there) : -1;
    if (k >= 0) {
        CondParse in_file = *c;
        in_file.h = file;
        r = cp_helper(&in_file, file->helper_list.items[k], args, n);
    }
    return r.k != HV_UNKNOWN ? r : platform_query(c, path, n);
}

/* A name or dotted path that is not called. */
static HostVal cp_path(CondParse *c, const char *path)
{
    static const struct {
        const char *w;
        HostVal v;
    } words[] = {
        {"True", {.k = HV_BOOL, .b = true}},
        {"False", {.k = HV_BOOL, .b = false}},
        {"None", {.k = HV_NONE}},
    };
    for (int i = 0; i < TK_ARRAY_LEN(words); i++)
        if (path_is(path, words[i].w))
            return words[i].v;
    const char *dot = strchr(path, '.');
    const HostVal *named = frame_get(c, path, dot ? (size_t)(dot - path) : strlen(path));
    if (named && !dot)
        return *named;
    if (named) /* pkg.__version__ of pkg = importlib.import_module("triton") */
        return named->k == HV_MODULE && !strcmp(named->s, "triton") &&
                path_is(dot + 1, "__version__")
            ? (HostVal){.k = HV_STR, .s = TK_TRITON_VERSION}
            : UNKNOWN;
    if (dot && operator_fn(path).k == HV_OP)
        return operator_fn(path);
    if (dot && path_is(dot + 1, "__version__") &&
        host_in(&c->h->prefixes, path, (size_t)(dot - path)))
        return (HostVal){.k = HV_STR, .s = TK_TRITON_VERSION};
    if (!dot) {
        int k = namemap_get(&c->h->values, path);
        if (k >= 0)
            return *(const HostVal *)c->h->value_list.items[k];
        if (host_in(&c->h->flags, path, strlen(path)))
            return hv_bool(true);
        const char *there = NULL;
        HostScan *file =
            namemap_get(&c->h->helpers, path) >= 0 ? NULL : host_imported(c->h, path, &there);
        k = file ? namemap_get(&file->values, there) : -1;
        if (k >= 0) /* a constant of another file: _IS_TRITON_3 */
            return *(const HostVal *)file->value_list.items[k];
        if (file && host_in(&file->flags, there, strlen(there)))
            return hv_bool(true); /* another file's HAS_TRITON */
        if (host_imported_from(c->h, path, "typing", "TYPE_CHECKING"))
            return hv_bool(false); /* false when the module runs */
    }
    if (path_is(path, "typing.TYPE_CHECKING"))
        return hv_bool(false);
    if (path_ns(c->h, path))
        return (HostVal){.k = HV_MODULE, .s = path};
    /* tk compiles for NVIDIA GPUs: a ROCm build of torch is not the target */
    if (path_ends(path, "torch.version.hip") && target_sm(c) >= 0)
        return (HostVal){.k = HV_NONE};
    return UNKNOWN;
}

/* Part k of "3.6.0".split("."), as a string. */
static HostVal split_part(CondParse *c, const char *s, int k)
{
    for (; k > 0; k--)
        s = strchr(s, '.') + 1;
    const char *e = strchr(s, '.');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    return (HostVal){.k = HV_STR, .s = arena_strndup(c->h->lx->arena, s, len)};
}

/* `.major`, `.release`, `.split(".")` and `[i]` after a value. */
static HostVal cp_postfix(CondParse *c, HostVal v)
{
    for (;;) {
        if (cp_eat(c, "[")) {
            HostVal i = cp_or(c);
            if (!cp_eat(c, "]") || i.k != HV_INT || (v.k != HV_TUPLE) || i.i[0] < 0 ||
                i.i[0] >= v.n)
                return UNKNOWN;
            v = v.s ? split_part(c, v.s, (int)i.i[0]) : (HostVal){.k = HV_INT, .i = {v.i[i.i[0]]}};
            continue;
        }
        size_t save = c->p;
        if (!cp_eat(c, "."))
            return v;
        cp_ws(c);
        size_t s = c->p;
        while (c->p < c->end && host_is_id(c->t[c->p]))
            c->p++;
        size_t len = c->p - s;
        if (len == 0) {
            c->p = save;
            return v;
        }
        const char *a = c->t + s;
        if (v.k == HV_TARGET) {
            v = target_attr(c, a, len);
            continue;
        }
        if (v.k == HV_TUPLE && v.s)
            return UNKNOWN; /* a list of strings has no attributes tk reads */
        if (v.k == HV_VER && len == 5 && !memcmp(a, "major", 5))
            v = (HostVal){.k = HV_INT, .i = {v.i[0]}};
        else if (v.k == HV_VER && len == 5 && !memcmp(a, "minor", 5))
            v = (HostVal){.k = HV_INT, .i = {v.n > 1 ? v.i[1] : 0}};
        else if (v.k == HV_VER && len == 7 && !memcmp(a, "release", 7))
            v.k = HV_TUPLE;
        else if (v.k == HV_STR && len == 5 && !memcmp(a, "split", 5)) {
            /* "3.6.0".split(".") indexed gives ints here: only int(...) of
             * a part is read, and the parts of a version are digits */
            HostVal sep = UNKNOWN;
            if (cp_eat(c, "(")) {
                cp_ws(c);
                if (c->p < c->end && (c->t[c->p] == '"' || c->t[c->p] == '\''))
                    sep = cp_string(c);
                if (!cp_eat(c, ")"))
                    return UNKNOWN;
            }
            HostVal parts;
            if (sep.k != HV_STR || strcmp(sep.s, ".") != 0 || !ver_parse(v.s, &parts))
                return UNKNOWN;
            parts.k = HV_TUPLE;
            parts.s = v.s; /* its items are the strings between the dots */
            v = parts;
        } else
            return UNKNOWN;
    }
}

/* Arguments of a call up to its ')'; keyword arguments make it unknown. */
static int cp_args(CondParse *c, HostVal *args, const char **ns1, bool *ok)
{
    int n = 0;
    *ok = true;
    if (cp_eat(c, ")"))
        return 0;
    for (;;) {
        cp_ws(c);
        size_t s = c->p;
        HostVal v = cp_or(c);
        if (n == 0) {
            /* the first argument's text, for hasattr(triton.language, ...) */
            size_t e = c->p;
            while (e > s && (c->t[e - 1] == ' ' || c->t[e - 1] == '\t'))
                e--;
            const char *txt = arena_strndup(c->h->lx->arena, c->t + s, e - s);
            *ns1 = txt ? path_ns(c->h, txt) : NULL;
        }
        if (n < HV_PARTS)
            args[n] = v;
        n++;
        if (cp_eat(c, ")"))
            return n;
        if (!cp_eat(c, ",")) {
            *ok = false;
            return n;
        }
        if (cp_eat(c, ")"))
            return n;
    }
}

static HostVal cp_primary(CondParse *c)
{
    cp_ws(c);
    if (c->p >= c->end)
        return UNKNOWN;
    char ch = c->t[c->p];
    if (ch == '"' || ch == '\'')
        return cp_postfix(c, cp_string(c));
    if (ch >= '0' && ch <= '9') {
        char *e;
        long v = strtol(c->t + c->p, &e, 10);
        c->p = (size_t)(e - c->t);
        return (HostVal){.k = HV_INT, .i = {v}};
    }
    if (cp_eat(c, "(")) {
        HostVal v = cp_or(c);
        if (cp_eat(c, ")"))
            return cp_postfix(c, v);
        /* a tuple of ints: (9, 0) */
        HostVal t = {.k = HV_TUPLE};
        while (v.k == HV_INT && t.n < HV_PARTS && cp_eat(c, ",")) {
            t.i[t.n++] = v.i[0];
            if (cp_eat(c, ")"))
                return t;
            v = cp_or(c);
        }
        if (v.k == HV_INT && t.n < HV_PARTS && cp_eat(c, ")")) {
            t.i[t.n++] = v.i[0];
            return t;
        }
        return UNKNOWN;
    }
    if (!host_is_id(ch))
        return UNKNOWN;
    size_t s = c->p;
    c->p = host_dotted(c->t, c->p, c->end);
    const char *path = arena_strndup(c->h->lx->arena, c->t + s, c->p - s);
    if (!path)
        return UNKNOWN;
    if (!cp_eat(c, "("))
        return cp_postfix(c, cp_path(c, path));
    HostVal args[HV_PARTS];
    const char *ns1 = NULL;
    bool ok;
    int n = cp_args(c, args, &ns1, &ok);
    if (!ok || n > HV_PARTS)
        return UNKNOWN;
    return cp_postfix(c, cp_call(c, path, args, n, ns1));
}


static HostCmp cp_cmp_op(CondParse *c)
{
    static const struct {
        const char *s;
        HostCmp op;
    } ops[] = {
        {"<=", HC_LE}, {">=", HC_GE}, {"==", HC_EQ}, {"!=", HC_NE}, {"<", HC_LT}, {">", HC_GT},
    };
    for (int i = 0; i < TK_ARRAY_LEN(ops); i++)
        if (cp_eat(c, ops[i].s))
            return ops[i].op;
    if (cp_eat(c, "is"))
        return cp_eat(c, "not") ? HC_ISNOT : HC_IS;
    if (cp_eat(c, "in"))
        return HC_IN;
    return HC_NONE;
}

/* a OP b, or unknown when Python would compare other kinds (or raise). */
static HostVal compare(HostVal a, HostCmp op, HostVal b)
{
    if (a.k == HV_UNKNOWN || b.k == HV_UNKNOWN)
        return UNKNOWN;
    if ((op == HC_IS || op == HC_ISNOT) && a.k == HV_BOOL && b.k == HV_BOOL)
        return hv_bool((a.b == b.b) == (op == HC_IS));
    if (op == HC_IS || op == HC_ISNOT) {
        if (a.k != HV_NONE && b.k != HV_NONE)
            return UNKNOWN;
        return hv_bool((a.k == b.k) == (op == HC_IS));
    }
    int r;
    if (a.k == HV_STR && b.k == HV_STR)
        r = strcmp(a.s, b.s);
    else if (a.k == HV_INT && b.k == HV_INT)
        r = a.i[0] < b.i[0] ? -1 : a.i[0] > b.i[0];
    else if (a.k == b.k && (a.k == HV_VER || (a.k == HV_TUPLE && !a.s && !b.s)))
        r = parts_cmp(&a, &b, a.k == HV_VER);
    else if (a.k == HV_BOOL && b.k == HV_BOOL)
        r = (int)a.b - (int)b.b;
    else if (op == HC_EQ || op == HC_NE)
        return a.k == HV_NONE || b.k == HV_NONE || (a.k == HV_STR) != (b.k == HV_STR)
            ? hv_bool(op == HC_NE)
            : UNKNOWN;
    else
        return UNKNOWN;
    switch (op) {
    case HC_LT: return hv_bool(r < 0);
    case HC_LE: return hv_bool(r <= 0);
    case HC_GT: return hv_bool(r > 0);
    case HC_GE: return hv_bool(r >= 0);
    case HC_EQ: return hv_bool(r == 0);
    case HC_NE: return hv_bool(r != 0);
    default: return UNKNOWN;
    }
}

/* Comparisons, chained as Python chains them: a < b < c. */
static HostVal cp_compare(CondParse *c)
{
    HostVal a = cp_primary(c);
    HostVal result = {.k = HV_NONE};
    for (;;) {
        size_t at = c->p;
        HostCmp op = cp_cmp_op(c);
        if (op == HC_NONE) {
            c->p = at;
            return result.k == HV_NONE ? a : result;
        }
        if (op == HC_IN) {
            /* "NAME" in os.environ */
            cp_ws(c);
            size_t e = c->p;
            c->p = host_dotted(c->t, c->p, c->end);
            const char *path = arena_strndup(c->h->lx->arena, c->t + e, c->p - e);
            if (!path || !path_ends(path, "environ"))
                return UNKNOWN;
            HostVal r = cp_env(c, &a, 1, true);
            return result.k == HV_NONE ? r : UNKNOWN;
        }
        HostVal b = cp_primary(c);
        HostVal r = compare(a, op, b);
        if (result.k == HV_NONE)
            result = r;
        else if (result.k == HV_BOOL && r.k == HV_BOOL)
            result = hv_bool(result.b && r.b);
        else
            result = UNKNOWN;
        a = b;
    }
}

static HostVal cp_not(CondParse *c)
{
    if (cp_eat(c, "not")) {
        HostVal v = cp_not(c);
        bool b;
        return truth(v, &b) ? hv_bool(!b) : UNKNOWN;
    }
    return cp_compare(c);
}

/* `a and b`: Python's value is a's when a is false, else b's; one false
 * operand makes a false truth value whatever the unknown ones are. */
static HostVal cp_and(CondParse *c)
{
    HostVal v = cp_not(c);
    while (cp_eat(c, "and")) {
        HostVal w = cp_not(c);
        bool bv, bw;
        bool kv = truth(v, &bv), kw = truth(w, &bw);
        if (kv && !bv)
            continue;
        if (kw && !bw && !kv)
            v = hv_bool(false);
        else
            v = kv ? w : UNKNOWN;
    }
    return v;
}

static HostVal cp_or(CondParse *c)
{
    HostVal v = cp_and(c);
    while (cp_eat(c, "or")) {
        HostVal w = cp_and(c);
        bool bv, bw;
        bool kv = truth(v, &bv), kw = truth(w, &bw);
        if (kv && bv)
            continue;
        if (kw && bw && !kv)
            v = hv_bool(true);
        else
            v = kv ? w : UNKNOWN;
    }
    return v;
}

static HostVal eval_range(HostScan *h, size_t from, size_t to)
{
    CondParse c = {h, h->text, from, to, NULL, NULL, 0, 0};
    HostVal v = cp_or(&c);
    cp_ws(&c);
    return c.p == c.end ? v : UNKNOWN;
}

HostCond host_cond_value(HostScan *h, size_t from, size_t to)
{
    bool b;
    HostVal v = eval_range(h, from, to);
    if (!truth(v, &b))
        return COND_UNKNOWN;
    return b ? COND_TRUE : COND_FALSE;
}

void host_forget(HostScan *h, const char *name)
{
    if (namemap_get(&h->values, name) >= 0)
        namemap_put(h->lx->arena, &h->values, name, -1);
    if (namemap_get(&h->helpers, name) >= 0)
        namemap_put(h->lx->arena, &h->helpers, name, -1);
}

HostNote host_read_value(HostScan *h, int first, int last)
{
    HostNote none = {0};
    const HostLine *L = &h->lines[first];
    if (first != last)
        return host_note_helper(h, first, last);
    const char *t = h->text;
    size_t p = L->start;
    while (p < L->end && host_is_id(t[p]))
        p++;
    size_t name_end = p;
    p = host_skip_blank(t, p, L->end);
    if (name_end == L->start || p >= L->end || t[p] != '=' || (p + 1 < L->end && t[p + 1] == '='))
        return none;
    size_t to = L->end;
    for (size_t q = p + 1; q < to; q++)
        if (t[q] == '#' || (t[q] == '=' && !strchr("=!<>", t[q - 1]) && t[q + 1] != '='))
            return none; /* a comment or a chained assignment: not read here */
    HostVal v = eval_range(h, p + 1, to);
    if (v.k == HV_UNKNOWN)
        return none;
    HostVal *keep = arena_alloc(h->lx->arena, sizeof *keep);
    const char *name = arena_strndup(h->lx->arena, t + L->start, name_end - L->start);
    if (!keep || !name)
        return none;
    *keep = v;
    return (HostNote){name, keep, NULL};
}

void host_keep_value(HostScan *h, HostNote n)
{
    if (n.value) {
        vec_push(h->lx->arena, &h->value_list, n.value);
        namemap_put(h->lx->arena, &h->values, n.name, h->value_list.len - 1);
    } else if (n.helper) {
        vec_push(h->lx->arena, &h->helper_list, n.helper);
        namemap_put(h->lx->arena, &h->helpers, n.name, h->helper_list.len - 1);
    }
}
