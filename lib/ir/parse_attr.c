/* ir/parse_attr.c: an op's attributes, the inverse of print.c's
 * print_prefix and print_suffix: predicates and kinds before the operands,
 * `key=value` words and flags after them, and a constant's value once its
 * type is known. Leaves what the text does not give at zero, as the
 * builders do. */
#include "ir/parse.h"
#include "ir/names.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* One name of a table; *out its index. */
static bool name_of(Parser *p, const char *const *names, int n, const char *what, int *out)
{
    Span at = (irp_skip_blanks(p), here(p));
    char buf[32];
    irp_word(p, buf, sizeof buf);
    for (int i = 0; i < n; i++)
        if (strcmp(buf, names[i]) == 0) {
            *out = i;
            return true;
        }
    return irp_fail_at(p, at, "unknown %s '%s'", what, buf);
}

#define NAME(p, table, what, out) name_of((p), (table), TK_ARRAY_LEN(table), (what), (out))

static bool math_name(Parser *p, int *out)
{
    static const char *const names[] = {
#define X(k, n) n,
        TK_MATH_FNS(X)
#undef X
    };
    return NAME(p, names, "math function", out);
}


/* "axis=1" */
static bool axis_attr(Parser *p, IrOp *a)
{
    int64_t v;
    if (!irp_keyed_int(p, "axis", 0, TK_MAX_RANK - 1, &v))
        return false;
    a->axis = (int)v;
    return true;
}

static bool op_ints(Parser *p, IrOp *a)
{
    return irp_int_list(p, a->ints, &a->nints, -(1 << 30), 1 << 30);
}

/* What comes between the mnemonic and the operands (print_prefix). */
bool irp_prefix(Parser *p, IrKind k, IrOp *a)
{
    switch (k) {
    case IR_CMP: return NAME(p, ir_cmp_names, "predicate", &a->sub);
    case IR_MATH: return math_name(p, &a->sub);
    case IR_EXTERN:
    case IR_PRINT: return irp_string(p, &a->str);
    case IR_ATOMIC_RMW: return NAME(p, ir_atomic_names, "atomic kind", &a->sub);
    case IR_REDUCE: return NAME(p, ir_reduce_names, "reduction", &a->sub) && axis_attr(p, a);
    case IR_SCAN:
        if (!NAME(p, ir_scan_names, "scan", &a->sub) || !axis_attr(p, a))
            return false;
        if (irp_accept_word(p, "reverse"))
            a->flags |= IRF_REVERSE;
        return true;
    case IR_RAND: return NAME(p, ir_rand_names, "random kind", &a->sub);
    case IR_HINT: return NAME(p, ir_hint_names, "hint", &a->sub) && op_ints(p, a);
    case IR_INLINE_ASM: return irp_string(p, &a->str) && irp_string(p, &a->str2);
    case IR_GDC: return NAME(p, ir_gdc_names, "grid dependency control", &a->sub);
    default: return true;
    }
}

/* " cache=.ca evict=evict_last volatile" and " sem=acq_rel scope=gpu" */
static bool mem_attrs(Parser *p, IrOp *a, const char *k1, const char *k2)
{
    char buf[32];
    if (irp_accept_word(p, k1)) {
        if (!irp_expect(p, "=") || !*irp_word(p, buf, sizeof buf))
            return FAIL(p, "expected a value for '%s'", k1);
        a->str = arena_strdup(p->a, buf);
    }
    if (irp_accept_word(p, k2)) {
        if (!irp_expect(p, "=") || !*irp_word(p, buf, sizeof buf))
            return FAIL(p, "expected a value for '%s'", k2);
        a->str2 = arena_strdup(p->a, buf);
    }
    if (irp_accept_word(p, "volatile"))
        a->flags |= IRF_VOLATILE;
    if (irp_accept_word(p, "desc"))
        a->flags |= IRF_DESC;
    return true;
}

/* A number's text (const), converted once the result type is known. */
static bool literal(Parser *p, OpText *t)
{
    irp_skip_blanks(p);
    t->literal_at = here(p);
    size_t start = p->pos;
    while (is_word_char(peek(p)) || peek(p) == '-' || peek(p) == '+')
        irp_advance(p);
    if (p->pos == start || p->pos - start > 64)
        return irp_fail_at(p, t->literal_at, "expected a constant");
    t->literal = arena_strndup(p->a, p->s + start, p->pos - start);
    return true;
}

static bool for_attrs(Parser *p, IrOp *a)
{
    if (irp_accept_word(p, "num_stages") && (!irp_expect(p, "=") || !irp_int(p, 1, 64, &a->ival)))
        return false;
    if (irp_accept_word(p, "flatten"))
        a->flags |= IRF_FLATTEN;
    if (irp_accept_word(p, "warp_specialize"))
        a->flags |= IRF_WARP_SPEC;
    return true;
}

/* " buffer=0 slots=3" and what follows it for the ring ops. */
static bool ring_attrs(Parser *p, IrKind k, IrOp *a)
{
    if (k == IR_TMA_COPY) {
        int64_t m;
        if (!irp_keyed_int(p, "tmap", 0, IR_MAX_TMAPS - 1, &m))
            return false;
        a->sub = (int)m;
    }
    if (!irp_keyed_int(p, "buffer", 0, 1 << 10, &a->ival) ||
        !irp_keyed_int(p, "slots", 1, 1 << 10, &a->ival2))
        return false;
    if (k == IR_TMA_WAIT && irp_accept_word(p, "empty"))
        a->sub = 1;
    if (k == IR_TMA_COPY && irp_accept_word(p, "nonneg"))
        a->flags |= IRF_NONNEG;
    if ((k == IR_ASYNC_COPY || k == IR_SHARED_VIEW) && irp_accept_word(p, "private")) {
        int64_t run;
        if (!irp_keyed_int(p, "run", 1, 1 << 16, &run))
            return false;
        a->sub = (int)run;
        if (irp_accept_word(p, "packed"))
            a->flags |= IRF_PACKED;
    }
    if (k == IR_ASYNC_COPY && irp_accept_word(p, "across"))
        a->flags |= IRF_ACROSS;
    return true;
}

/* " at \"file\":12" of an assert */
static bool assert_attrs(Parser *p, IrOp *a)
{
    if (!irp_string(p, &a->str))
        return false;
    if (!irp_accept_word(p, "at"))
        return true;
    return irp_string(p, &a->str2) && irp_expect(p, ":") && irp_int(p, 0, INT32_MAX, &a->ival);
}

static bool simple_suffix(Parser *p, IrKind k, IrOp *a)
{
    switch (k) {
    case IR_DIV: a->sub = irp_accept_word(p, "rn"); return true;
    case IR_CAST: a->sub = irp_accept_word(p, "rtz") ? CAST_RTZ : CAST_RTNE; return true;
    case IR_MIN:
    case IR_MAX: a->sub = irp_accept_word(p, "propagate_nan"); return true;
    case IR_PRINT:
        if (irp_accept_word(p, "hex"))
            a->flags |= IRF_HEX;
        return true;
    case IR_RAND:
        return !irp_accept_word(p, "rounds") ||
            (irp_expect(p, "=") && irp_int(p, 1, 1 << 10, &a->ival));
    case IR_DOT:
        for (int i = DOT_TF32; i <= DOT_TF32X3 && !a->sub; i++)
            if (irp_accept_word(p, ir_dot_names[i]))
                a->sub = i;
        a->ival = irp_accept_word(p, "async");
        if (a->ival && irp_accept_word(p, "spare"))
            a->flags |= IRF_SPARE;
        return true;
    default: return true;
    }
}

/* The plan of a pipelined loop: "stages=3, slots=4, warp_specialized". */
static bool loop_plan(Parser *p, IrPlan *pl)
{
    int64_t st, sl;
    if (!irp_keyed_int(p, "stages", 2, 64, &st) || !irp_expect(p, ",") ||
        !irp_keyed_int(p, "slots", 2, 65, &sl))
        return false;
    pl->stages = (int)st, pl->slots = (int)sl;
    if (irp_accept(p, ",")) {
        if (!irp_accept_word(p, "warp_specialized"))
            return FAIL(p, "expected 'warp_specialized'");
        pl->ws = true;
    }
    pl->mech = PIPE_LOOP;
    return true;
}

/* ", key=N" of a plan, into *out. */
static bool plan_int(Parser *p, const char *key, int64_t lo, int64_t hi, int *out)
{
    int64_t v;
    if (!irp_expect(p, ",") || !irp_keyed_int(p, key, lo, hi, &v))
        return false;
    *out = (int)v;
    return true;
}

/* The optional ", refill" of a cp.async plan, then its ", across"; a
 * private one's ", refill" and ", packed" (in that order). */
static bool refill(Parser *p, IrPlan *pl)
{
    while (irp_accept(p, ",")) {
        bool cp = pl->mech == PIPE_CP_ASYNC;
        if (!pl->refill && !pl->packed && !pl->across && irp_accept_word(p, "refill"))
            pl->refill = true;
        else if (!cp && !pl->packed && irp_accept_word(p, "packed"))
            pl->packed = true;
        else if (cp && !pl->across && irp_accept_word(p, "across"))
            pl->across = true;
        else
            return FAIL(p, cp ? "expected 'refill' or 'across'" : "expected 'refill' or 'packed'");
    }
    return true;
}

/* The optional ", spare" of an asynchronous dot's plan. */
static bool spare(Parser *p, IrPlan *pl)
{
    if (!irp_accept(p, ","))
        return true;
    pl->spare = irp_accept_word(p, "spare");
    return pl->spare || FAIL(p, "expected 'spare'");
}

/* The plan of a load or a dot, after its mechanism's name. */
static bool op_plan(Parser *p, IrPlan *pl)
{
    if (irp_accept_word(p, "cp_async"))
        return pl->mech = PIPE_CP_ASYNC,
               plan_int(p, "buffer", 0, 1 << 10, &pl->buffer) && refill(p, pl);
    if (irp_accept_word(p, "private"))
        return pl->mech = PIPE_PRIVATE,
               plan_int(p, "buffer", 0, 1 << 10, &pl->buffer) &&
                   plan_int(p, "run", 1, 16, &pl->run) && refill(p, pl);
    if (irp_accept_word(p, "tma"))
        return pl->mech = PIPE_TMA,
               plan_int(p, "buffer", 0, 1 << 10, &pl->buffer) &&
                   plan_int(p, "tmap", 0, IR_MAX_TMAPS - 1, &pl->tmap);
    if (irp_accept_word(p, "resident"))
        return pl->mech = PIPE_RESIDENT, plan_int(p, "buffer", 0, 1 << 10, &pl->buffer);
    if (irp_accept_word(p, "async"))
        return pl->mech = PIPE_ASYNC_DOT,
               plan_int(p, "pending", 0, 1, &pl->pending) && spare(p, pl);
    return FAIL(p, "expected a pipelining mechanism (cp_async, private, tma, resident or async)");
}

/* " pipe(...)" after a for's, a load's or a dot's attributes (print_plan):
 * the software pipelining plan. */
static bool plan_attrs(Parser *p, IrKind k, IrPlan *pl)
{
    if (!irp_accept_word(p, "pipe"))
        return true;
    if (!irp_expect(p, "("))
        return false;
    irp_skip_blanks(p);
    bool ok = k == IR_FOR ? loop_plan(p, pl) : op_plan(p, pl);
    return ok && irp_expect(p, ")");
}

/* " hints(multiple_of=[16,16], ...)" (print_hints): what the source
 * stated about the result. Every value must be positive; the count per
 * kind is checked against the result's rank by the verifier. */
static bool hint_attrs(Parser *p, IrHints *h)
{
    if (!irp_accept_word(p, "hints"))
        return true;
    if (!irp_expect(p, "("))
        return false;
    do {
        int k = 0, n = 0, v[TK_LAYOUT_MAX_RANK + TK_MAX_RANK] = {0};
        irp_skip_blanks(p);
        if (!NAME(p, ir_hint_names, "hint", &k) || !irp_expect(p, "=") ||
            !irp_int_list(p, v, &n, 1, INT32_MAX))
            return false;
        if (n < 1 || n > TK_MAX_RANK)
            return FAIL(p, "a hint needs 1 to %d values, got %d", TK_MAX_RANK, n);
        memcpy(h->v[k], v, sizeof h->v[k]);
    } while (irp_accept(p, ","));
    return irp_expect(p, ")");
}

static bool kind_suffix(Parser *p, IrKind k, OpText *t);

/* What comes after the operands, before " : types" (print_suffix, then
 * print_plan, then print_hints). */
bool irp_suffix(Parser *p, IrKind k, OpText *t)
{
    if (!kind_suffix(p, k, t))
        return false;
    if ((k == IR_FOR || k == IR_LOAD || k == IR_DOT) && !plan_attrs(p, k, &t->attrs.plan))
        return false;
    return hint_attrs(p, &t->attrs.hints);
}

static bool kind_suffix(Parser *p, IrKind k, OpText *t)
{
    IrOp *a = &t->attrs;
    int64_t v;
    switch (k) {
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS: return irp_int(p, 0, 2, &v) && (a->axis = (int)v, true);
    case IR_CONST: return literal(p, t);
    case IR_ARANGE:
        return irp_int(p, INT32_MIN, INT32_MAX, &a->ival) && irp_expect(p, ",") &&
            irp_int(p, INT32_MIN, INT32_MAX, &a->ival2);
    case IR_EXPAND_DIMS:
    case IR_CAT:
    case IR_SPLIT:
    case IR_GATHER: return axis_attr(p, a);
    case IR_PARTNER: return irp_keyed_int(p, "xor", 1, INT32_MAX, &a->ival);
    case IR_HISTOGRAM: return irp_keyed_int(p, "bins", 1, INT32_MAX, &a->ival);
    case IR_TRANS: return irp_expect(p, "perm") && irp_expect(p, "=") && op_ints(p, a);
    case IR_LOAD:
    case IR_STORE: return mem_attrs(p, a, "cache", "evict");
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: return mem_attrs(p, a, "sem", "scope");
    case IR_FOR: return for_attrs(p, a);
    case IR_ASYNC_COPY:
    case IR_SHARED_VIEW:
    case IR_TMA_WAIT:
    case IR_TMA_RELEASE:
    case IR_TMA_COPY: return ring_attrs(p, k, a);
    case IR_TMAP_MAKE: {
        int64_t m;
        if (!irp_keyed_int(p, "tmap", 0, IR_MAX_TMAPS - 1, &m))
            return false;
        a->sub = (int)m;
        return true;
    }
    case IR_TMA_STORE: {
        int64_t m;
        if (!irp_keyed_int(p, "tmap", 0, IR_MAX_TMAPS - 1, &m))
            return false;
        a->sub = (int)m;
        a->ival = irp_accept_word(p, "trans");
        if (irp_accept_word(p, "nonneg"))
            a->flags |= IRF_NONNEG;
        return true;
    }
    case IR_ASYNC_WAIT:
        if (!irp_int(p, -1, 64, &a->ival))
            return false;
        a->ival2 = irp_accept_word(p, "fence");
        a->sub = irp_accept_word(p, "no_barrier");
        return true;
    case IR_ASSERT: return assert_attrs(p, a);
    case IR_INLINE_ASM:
        if (!irp_keyed_int(p, "pack", 1, 16, &a->ival))
            return false;
        if (irp_accept_word(p, "pure"))
            a->flags |= IRF_PURE;
        return true;
    default: return simple_suffix(p, k, a);
    }
}

/* The constant's value for its result type: ints (true/false for i1), with
 * fval the same value, or floats, with ival 0, as sema makes them. */
bool irp_const_value(Parser *p, OpText *t, Type ty, IrOp *op)
{
    const char *s = t->literal;
    char *end = NULL;
    errno = 0;
    if (dtype_is_float(ty.dt)) {
        double v = strtod(s, &end);
        if (*end || (errno && isfinite(v) && fabs(v) > 1.0))
            return irp_fail_at(p, t->literal_at, "bad float constant '%s'", s);
        op->fval = v;
        op->ival = 0; /* as sema and pass_fold make float constants */
        return true;
    }
    if (ty.dt == DT_I1 && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)) {
        op->ival = s[0] == 't';
    } else if (ty.dt == DT_U64 && s[0] != '-') {
        op->ival = (int64_t)strtoull(s, &end, 10);
    } else if ((dtype_is_int(ty.dt) && ty.dt != DT_I1) || (ty.dt == DT_PTR && !ty.rank)) {
        op->ival = strtoll(s, &end, 10); /* a pointer's: the null `if ptr:` compares with */
    } else {
        return irp_fail_at(p, t->literal_at, "no constant of type %s", type_str(p->a, ty));
    }
    if ((end && (*end || end == s)) || errno)
        return irp_fail_at(p, t->literal_at, "bad integer constant '%s'", s);
    op->fval = (double)op->ival;
    return true;
}
