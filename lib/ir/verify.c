/* ir/verify.c: checks the invariants listed in ir.h (defined-before-use in
 * the right scope, dense unique ids, terminators) and runs the per-kind
 * checks of verify_kind.c on every op. Builders that drop values call
 * ir_renumber before verifying. Assumes nothing about the IR: it must
 * survive NULL operands, bad ids and broken links. Guarantees one
 * DIAG_INTERNAL diagnostic per problem at the op's span, and returns false
 * iff it reported anything. */
#include "ir/verify.h"
#include "ir/names.h"

#include <stdio.h>
#include <string.h>

void ir_vfail(Verifier *v, const IrOp *op, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    Span at = op ? op->span : v->f->span;
    diag_report(v->d, v->kind, at, "IR verifier: %s%s%s%s in @%s", op ? "'" : "",
                op ? ir_kind_name(op->kind) : "", op ? "': " : "", msg,
                v->f->name ? v->f->name : "?");
    v->ok = false;
}

/* A short type text for messages (rotating buffers, so two fit in one call). */
const char *ir_vtype(Type t)
{
    static char bufs[4][80];
    static int next;
    char *b = bufs[next++ & 3];
    StrBuf sb;
    sb_init(&sb);
    type_print(&sb, t);
    snprintf(b, 80, "%s", sb.data ? sb.data : "?");
    sb_free(&sb);
    return b;
}

/* ---- structure: scopes, ids, links ------------------------------------------ */

static bool id_ok(Verifier *v, const IrOp *op, const IrValue *x)
{
    if (x->id < 0 || x->id >= v->nids) {
        ir_vfail(v, op, "value id %d outside 0..%d", x->id, v->nids - 1);
        return false;
    }
    return true;
}

static void define(Verifier *v, const IrOp *op, IrValue *x)
{
    if (!x || !id_ok(v, op, x))
        return;
    if (v->seen[x->id])
        ir_vfail(v, op, "value %%%d is defined twice", x->id);
    if (x->type.rank < 0 || x->type.rank > TK_MAX_RANK)
        ir_vfail(v, op, "value %%%d has rank %d", x->id, x->type.rank);
    for (int i = 0; i < x->type.rank && i < TK_MAX_RANK; i++)
        if (x->type.shape[i] <= 0)
            ir_vfail(v, op, "value %%%d has dim %d of size %d", x->id, i, x->type.shape[i]);
    v->seen[x->id] = v->in_scope[x->id] = 1;
}

static void undefine(Verifier *v, const IrValue *x)
{
    if (x && x->id >= 0 && x->id < v->nids)
        v->in_scope[x->id] = 0;
}

static bool terminator_allowed(const IrOp *op)
{
    const IrBlock *b = op->parent;
    const IrOp *p = b ? b->parent : NULL;
    if (!p || b->last != op)
        return false;
    if (op->kind == IR_CONDITION)
        return p->kind == IR_WHILE && p->nregions > 0 && p->regions[0] == b;
    return p->kind == IR_FOR || p->kind == IR_IF || p->kind == IR_REDUCE || p->kind == IR_SCAN ||
        p->kind == IR_PRODUCER || (p->kind == IR_WHILE && p->nregions > 1 && p->regions[1] == b);
}

static void verify_block(Verifier *v, IrBlock *b, const IrOp *parent);

/* Hints stated on an op (IrHints) describe its one integer or pointer
 * result: one positive value per dim (one for a scalar), nothing past. */
static void check_hints(Verifier *v, const IrOp *op)
{
    for (int k = 0; k < 3; k++) {
        const int *h = op->hints.v[k];
        if (!h[0])
            continue;
        Type t = op->nres == 1 && op->results[0] ? op->results[0]->type : type_scalar(DT_I1);
        if (op->nres != 1 || (!dtype_is_int(t.dt) && t.dt != DT_PTR) || t.dt == DT_I1) {
            ir_vfail(v, op, "%s hint on an op without one integer or pointer result",
                     ir_hint_names[k]);
            continue;
        }
        int dims = t.rank > 0 ? t.rank : 1;
        bool ok = true;
        for (int d = 0; d < TK_MAX_RANK; d++)
            ok = ok && (d < dims) == (h[d] > 0);
        if (!ok)
            ir_vfail(v, op, "%s hint needs %d positive value%s for %s", ir_hint_names[k], dims,
                     dims == 1 ? "" : "s", ir_vtype(t));
    }
}

static void verify_op(Verifier *v, IrBlock *b, IrOp *op)
{
    if ((unsigned)op->kind >= IR_OP_COUNT) {
        ir_vfail(v, op, "unknown op kind %d", (int)op->kind);
        return;
    }
    if (op->parent != b)
        ir_vfail(v, op, "parent link is wrong");
    if ((op->nops && !op->operands) || (op->nres && !op->results) || op->nops < 0 || op->nres < 0 ||
        op->nregions < 0) {
        ir_vfail(v, op, "operand/result arrays are missing");
        return;
    }
    for (int i = 0; i < op->nops; i++) {
        IrValue *x = op->operands[i];
        if (x && id_ok(v, op, x) && !v->in_scope[x->id])
            ir_vfail(v, op, "operand %d (%%%d) is not defined before this use", i, x->id);
    }
    if ((op->kind == IR_YIELD || op->kind == IR_CONDITION) && !terminator_allowed(op))
        ir_vfail(v, op, "terminator outside the end of a region that takes it");
    ir_check_kind(v, op);
    ir_check_plan(v, op);
    check_hints(v, op);
    for (int r = 0; r < op->nregions && op->regions; r++) {
        IrBlock *rb = op->regions[r];
        if (!rb)
            continue;
        if (rb->parent != op)
            ir_vfail(v, op, "region %d has a wrong parent link", r);
        verify_block(v, rb, op);
    }
    for (int i = 0; i < op->nres; i++) {
        IrValue *x = op->results[i];
        if (!x)
            continue;
        if (x->def != op || x->index != i)
            ir_vfail(v, op, "result %d does not link back to its op", i);
        define(v, op, x);
    }
}

static void verify_block(Verifier *v, IrBlock *b, const IrOp *parent)
{
    for (int i = 0; i < b->nargs; i++) {
        IrValue *x = b->args ? b->args[i] : NULL;
        if (!x) {
            ir_vfail(v, parent, "block argument %d is missing", i);
            continue;
        }
        if (x->owner != b || x->def || x->index != i)
            ir_vfail(v, parent, "block argument %%%d does not link back to its block", x->id);
        define(v, parent, x);
    }
    IrOp *prev = NULL;
    for (IrOp *op = b->first; op; prev = op, op = op->next) {
        if (op->prev != prev) {
            ir_vfail(v, op, "list links are broken");
            break;
        }
        verify_op(v, b, op);
    }
    if (b->last != prev)
        ir_vfail(v, parent, "block's last op link is wrong");
    /* values of this block are not visible outside it */
    for (int i = 0; i < b->nargs && b->args; i++)
        undefine(v, b->args[i]);
    for (IrOp *op = b->first; op; op = op->next) {
        if (op->nres && !op->results)
            continue;
        for (int i = 0; i < op->nres; i++)
            undefine(v, op->results[i]);
    }
}

static void verify_params(Verifier *v)
{
    const IrFunc *f = v->f;
    if (f->nparams != f->body->nargs)
        ir_vfail(v, NULL, "%d parameters but %d body arguments", f->nparams, f->body->nargs);
    for (int i = 0; i < f->nparams && i < f->body->nargs && f->params; i++) {
        IrValue *x = f->body->args ? f->body->args[i] : NULL;
        Type t = f->params[i].type;
        if (x && !type_eq(x->type, t))
            ir_vfail(v, NULL, "parameter %d is %s but its value is %s", i, ir_vtype(t),
                     ir_vtype(x->type));
        if (t.rank != 0)
            ir_vfail(v, NULL, "parameter %d is a block %s", i, ir_vtype(t));
    }
}

bool ir_verify(const IrFunc *f, Diag *d) { return ir_verify_as(f, d, DIAG_INTERNAL); }

bool ir_verify_as(const IrFunc *f, Diag *d, DiagKind kind)
{
    Verifier v = {f, d, NULL, NULL, f ? f->next_id : 0, true, kind};
    if (!f || !f->body) {
        Span none = {0};
        diag_report(d, kind, none, "IR verifier: function has no body");
        return false;
    }
    size_t n = (size_t)(v.nids > 0 ? v.nids : 1);
    v.in_scope = tk_xalloc(n);
    v.seen = tk_xalloc(n);
    if (!v.in_scope || !v.seen) {
        tk_xfree(v.in_scope);
        tk_xfree(v.seen);
        diag_report(d, kind, f->span, "IR verifier: out of memory");
        return false;
    }
    memset(v.in_scope, 0, n);
    memset(v.seen, 0, n);
    verify_params(&v);
    verify_block(&v, f->body, NULL);
    for (int i = 0; i < v.nids; i++)
        if (!v.seen[i]) {
            ir_vfail(&v, NULL,
                     "value ids are not dense: no value has id %%%d (ir_renumber fixes it)", i);
            break;
        }
    tk_xfree(v.in_scope);
    tk_xfree(v.seen);
    return v.ok && ir_verify_layouts_as(f, d, kind);
}
