/* sema/constexpr_fn.c: calls of @triton.constexpr_function helpers, Python
 * that a kernel calls at compile time on constexpr arguments (Triton runs
 * the function and wraps its result in a constexpr). The front end leaves
 * such a def to the host (an N_HOST flagged NF_CONSTEXPR_FN); the first call
 * parses its lines alone, and its body runs like a helper's on compile-time
 * values, with Python's loops run here (sema/flow.c, s->const_fn).
 * Guarantees: a call gives a compile-time value or an error naming the
 * function; no op its body builds reaches the kernel. */
#include <string.h>

#include "sema/spec.h"

const char sema_constexpr_fn_ns[] = "constexpr_function";

SVal sema_constexpr_fn_value(const Node *host)
{
    return (SVal){
        .k = SV_BUILTIN, .ns = sema_constexpr_fn_ns, .s = host->list.items[0]->name, .fn = host};
}

/* The def of `host` (lines of module's source) parsed alone: every other
 * line blanked, so spans stay those of the file. NULL with *why set when
 * the grammar does not take it. */
static const Node *parse_def(Sema *s, const Node *host, const Node *module, const char **why)
{
    const Source *src = module->src;
    *why = "its source is not available";
    if (!src || !src->text)
        return NULL;
    char *text = arena_alloc(s->a, src->len + 1);
    Source *one = arena_alloc(s->a, sizeof *one);
    if (!text || !one)
        return NULL;
    int line = 1;
    for (size_t i = 0; i < src->len; i++) {
        char c = src->text[i];
        bool in = line >= host->span.line && line <= host->span.end_line;
        text[i] = c == '\n' || in ? c : ' ';
        line += c == '\n';
    }
    text[src->len] = 0;
    *one = (Source){.name = src->name, .text = text, .len = src->len};
    Diag held;
    diag_init(&held, one);
    held.max_errors = 1;
    const Node *m = parse_module(one, s->a, &held);
    const Node *fn = NULL;
    for (int i = 0; m && !held.errors && i < m->list.len && !fn; i++)
        if (m->list.items[i]->kind == N_FUNC &&
            !strcmp(m->list.items[i]->name, host->list.items[0]->name))
            fn = m->list.items[i];
    if (held.errors) {
        const char *t = held.text.data ? held.text.data : "";
        const char *msg = strstr(t, "error: ");
        msg = msg ? msg + 7 : t;
        *why = arena_strndup(s->a, msg, strcspn(msg, "\n"));
    }
    diag_free(&held);
    return fn;
}

/* A constexpr function read: its N_HOST, its def or why there is none. */
typedef struct ConstFn {
    const Node *host, *fn;
    const char *why;
} ConstFn;

/* The N_FUNC of constexpr function `host`, parsed on its first call. */
static const Node *def_of(Sema *s, const Node *host, const Node *module, const char **why)
{
    for (int i = 0; i < s->const_fns.len; i++) {
        const ConstFn *c = s->const_fns.items[i];
        if (c->host == host) {
            *why = c->why;
            return c->fn;
        }
    }
    ConstFn *c = arena_alloc(s->a, sizeof *c);
    c->host = host;
    c->fn = parse_def(s, host, module, &c->why);
    vec_push(s->a, &s->const_fns, c);
    *why = c->why;
    return c->fn;
}

/* How messages name the function host is. */
static const char *kind_of(const Node *host)
{
    return host->flags & NF_HOST_FN ? "Python function" : "@triton.constexpr_function";
}

static bool const_arg(Sema *s, const Node *host, SVal v, Span at)
{
    if (v.k == SV_UNDEF || sv_is_const(v))
        return v.k != SV_UNDEF;
    sema_err(s, at, "'%s' is a %s: its arguments must be compile-time values, got %s",
             host->list.items[0]->name, kind_of(host), sv_describe(s, v));
    return false;
}

const char *sema_host_fn_refused(Sema *s, SVal v, const char *name)
{
    /* module constants and constexpr functions run Python: they may call
     * a plain def, as Python would */
    if (v.k != SV_BUILTIN || v.ns != sema_constexpr_fn_ns || !v.fn || !(v.fn->flags & NF_HOST_FN) ||
        s->module_const || s->const_fn)
        return NULL;
    return arena_printf(s->a, "'%s' is set by host Python code (%s:%d), which tk does not run",
                        name, sema_module_file(sema_module_of(s, v.fn)), v.fn->span.line);
}

SVal sema_call_constexpr_fn(Sema *s, SVal callee, CallArgs *ca)
{
    const char *name = callee.s;
    const Node *host = callee.fn;
    const char *refused = sema_host_fn_refused(s, callee, name);
    if (refused)
        return sema_err(s, ca->at,
                        "%s: a kernel calls @triton.jit and @triton.constexpr_function "
                        "functions; only module constants and constexpr functions may call "
                        "a plain def",
                        refused);
    for (int i = 0; i < ca->npos; i++)
        if (!const_arg(s, host, ca->pos[i], ca->pos_at[i]))
            return (SVal){.k = SV_UNDEF};
    for (int i = 0; i < ca->nkw; i++)
        if (!const_arg(s, host, ca->kwv[i], ca->kw_at[i]))
            return (SVal){.k = SV_UNDEF};
    const Node *owner = sema_module_of(s, callee.fn);
    const char *why;
    const Node *fn = def_of(s, callee.fn, owner, &why);
    if (!fn)
        return sema_err(s, ca->at,
                        "tk cannot read %s '%s' (%s:%d): %s; give its value as a constexpr "
                        "instead",
                        kind_of(host), name, sema_module_file(owner), callee.fn->span.line, why);
    /* the body's ops go to a block of their own, which no op holds; their
     * ids are given back after, as no value of the body outlives the call
     * (a call gives a compile-time value or an error) */
    IrBuilder saved = s->b;
    int ids = s->f ? s->f->next_id : 0;
    if (s->f) {
        IrOp *tmp = ir_op_new(s->f, IR_IF, ca->at, NULL, 0, NULL, 0);
        s->b = (IrBuilder){.f = s->f, .blk = ir_op_add_region(s->f, tmp)};
    }
    s->const_fn++;
    SVal r = sema_inline_body(s, fn, owner, ca);
    s->const_fn--;
    s->b = saved;
    if (s->f)
        s->f->next_id = ids;
    /* a module constant may also be a function or module (a helper that
     * finds libdevice's rsqrt) */
    bool named = (host->flags & NF_HOST_FN) &&
        (r.k == SV_NS || r.k == SV_FUNC || r.k == SV_BUILTIN || r.k == SV_MODULE);
    if (r.k != SV_UNDEF && !sv_is_const(r) && !named)
        return sema_err(s, ca->at, "%s '%s' gives %s, not a compile-time value", kind_of(host),
                        name, sv_describe(s, r));
    return r;
}
