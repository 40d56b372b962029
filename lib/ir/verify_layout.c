/* ir/verify_layout.c: the layout invariants pass_layout guarantees, checked
 * between passes once a function has layouts (before pass_layout no value
 * has one, and nothing is checked): every block value has a layout with a
 * linear form for its shape; elementwise ops, loads, stores and loop-carried
 * values agree with their operands; a tensor-core dot reads dot_op operands
 * of its own mma layout; a gather's index and a histogram's mask lie where
 * the elements they go with do. Reports "internal error" diagnostics (or
 * errors, for IR read from text). */
#include "ir/verify.h"

typedef struct LayoutCheck {
    const IrFunc *f;
    Diag *d;
    DiagKind kind;
    bool ok;
} LayoutCheck;

static void lfail(LayoutCheck *c, const IrOp *op, const char *what, const IrValue *v)
{
    if (c->ok)
        diag_report(c->d, c->kind, op->span, "IR verifier: '%s': %s (value %%%d) in @%s",
                    ir_kind_name(op->kind), what, v ? v->id : -1, c->f->name ? c->f->name : "?");
    c->ok = false;
}

static void check_value(LayoutCheck *c, const IrOp *op, const IrValue *v)
{
    if (!v || v->type.rank == 0)
        return;
    LinLayout ll;
    if (!v->layout)
        lfail(c, op, "block value without a layout", v);
    else if (v->layout->kind != LY_SHARED &&
             !layout_linear(v->layout, v->type.rank, v->type.shape, c->f->num_warps * 32, &ll))
        lfail(c, op, "layout does not fit the shape", v);
}

static bool same_layout_kind(IrKind k)
{
    return ir_kind_elementwise(k) || k == IR_ADDPTR || k == IR_PTR_TO_INT || k == IR_INT_TO_PTR ||
        k == IR_LOAD;
}

static void check_dot(LayoutCheck *c, const IrOp *op)
{
    const Layout *m = op->results[0]->layout;
    if (!m || m->kind != LY_MMA)
        return;
    for (int i = 0; i < 2; i++) {
        const Layout *l = op->operands[i]->layout;
        if (!l || l->kind != LY_DOT_OP || l->opidx != i || !layout_equal(l->parent, m))
            lfail(c, op, "tensor-core operand not in a dot_op layout of the result's mma",
                  op->operands[i]);
    }
    if (!layout_equal(op->operands[2]->layout, m))
        lfail(c, op, "accumulator not in the result's mma layout", op->operands[2]);
}

/* Each thread reads the pairs it holds: a gather's index lies in its
 * result's layout, a histogram's mask in its input's. */
static void check_paired(LayoutCheck *c, const IrOp *op)
{
    bool gather = op->kind == IR_GATHER;
    const IrValue *x = op->nops > 1 ? op->operands[1] : NULL;
    if (!x)
        return;
    const IrValue *to = gather ? (op->nres ? op->results[0] : NULL) : op->operands[0];
    if (to && !layout_equal(x->layout, to->layout))
        lfail(c, op,
              gather ? "index layout differs from the result's"
                     : "mask layout differs from the input's",
              x);
}

/* A carried value has one layout throughout: its initial value, the
 * body's argument, what the body yields for it and the loop's result. Code
 * generation reads the result's registers as the argument's, so a result
 * in another layout would be read as the wrong elements. */
static void check_for(LayoutCheck *c, const IrOp *op)
{
    const IrBlock *b = op->regions[0];
    const IrOp *y = b->last && b->last->kind == IR_YIELD ? b->last : NULL;
    for (int i = 3; i < op->nops && i - 2 < b->nargs; i++) {
        const IrValue *x = op->operands[i], *arg = b->args[i - 2];
        if (!x->type.rank)
            continue;
        if (!layout_equal(x->layout, arg->layout))
            lfail(c, op, "initial value layout differs from the carried value's", x);
        if (i - 3 < op->nres && !layout_equal(op->results[i - 3]->layout, arg->layout))
            lfail(c, op, "result layout differs from the carried value's", op->results[i - 3]);
        if (y && i - 3 < y->nops && !layout_equal(y->operands[i - 3]->layout, arg->layout))
            lfail(c, op, "yielded layout differs from the carried value's", y->operands[i - 3]);
    }
}

/* The values region b ends with (a yield, or a while's condition after its
 * flag) lie in the layouts of `want`, as do the arguments of b. */
static void check_yield(LayoutCheck *c, const IrOp *op, const IrBlock *b, IrValue *const *want,
                        int n)
{
    const IrOp *t = b->last;
    if (!t || (t->kind != IR_YIELD && t->kind != IR_CONDITION))
        return;
    int skip = t->kind == IR_CONDITION;
    for (int i = 0; i + skip < t->nops && i < n; i++) {
        const IrValue *x = t->operands[i + skip];
        if (x && want[i] && x->type.rank && !layout_equal(x->layout, want[i]->layout))
            lfail(c, op, "a region yields a layout other than its op's", x);
    }
}

static void check_args(LayoutCheck *c, const IrOp *op, const IrBlock *b, IrValue *const *want,
                       int n)
{
    for (int i = 0; i < b->nargs && i < n; i++)
        if (want[i] && b->args[i] && b->args[i]->type.rank &&
            !layout_equal(b->args[i]->layout, want[i]->layout))
            lfail(c, op, "a region argument's layout differs from its value's", b->args[i]);
}

static bool check_op(IrOp *op, void *ctx)
{
    LayoutCheck *c = ctx;
    for (int i = 0; i < op->nres; i++)
        check_value(c, op, op->results[i]);
    for (int r = 0; r < op->nregions; r++)
        for (int i = 0; i < op->regions[r]->nargs; i++)
            check_value(c, op, op->regions[r]->args[i]);
    if (same_layout_kind(op->kind) && op->nres == 1 && op->results[0]->type.rank)
        for (int i = 0; i < op->nops; i++) {
            const IrValue *x = op->operands[i];
            if (x && x->type.rank && !layout_equal(x->layout, op->results[0]->layout))
                lfail(c, op, "operand layout differs from the result's", x);
        }
    if (op->kind == IR_DOT)
        check_dot(c, op);
    if (op->kind == IR_GATHER || op->kind == IR_HISTOGRAM)
        check_paired(c, op);
    if (op->kind == IR_FOR && op->nregions == 1)
        check_for(c, op);
    if (op->kind == IR_IF)
        for (int r = 0; r < op->nregions; r++)
            check_yield(c, op, op->regions[r], op->results, op->nres);
    if (op->kind == IR_WHILE && op->nregions == 2) {
        check_yield(c, op, op->regions[0], op->results, op->nres);
        check_yield(c, op, op->regions[1], op->operands, op->nops);
        check_args(c, op, op->regions[0], op->operands, op->nops);
        check_args(c, op, op->regions[1], op->results, op->nres);
    }
    return c->ok;
}

bool ir_verify_layouts(const IrFunc *f, Diag *d)
{
    return ir_verify_layouts_as(f, d, DIAG_INTERNAL);
}

bool ir_verify_layouts_as(const IrFunc *f, Diag *d, DiagKind kind)
{
    if (!f || !f->body || f->nlayouts == 0)
        return true;
    LayoutCheck c = {f, d, kind, true};
    ir_walk(f->body, check_op, &c);
    return c.ok;
}
