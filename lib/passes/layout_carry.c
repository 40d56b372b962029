/* layout_carry.c: loop-carried values kept in the layout the body reads
 * them in.
 *
 * A loop that carries a vector of row offsets (`rows += BM`) and reads it
 * only to address per-row statistics, loaded in a slice of the dot's
 * layout (lp_loads_in_place), or to build a mask against the dot's tile,
 * converts the vector to that slice in every iteration: through shared
 * memory, between CTA barriers, once per read (attention backward's dK/dV
 * loop, three conversions and seven barriers an iteration). When every read
 * of the carried value in the body is a conversion to one layout L, or the
 * elementwise step that makes the next value from it and values that can
 * be recomputed in any layout (`rows + BM`), the loop carries it in L: the
 * initial value is converted once before the loop, the result back after
 * it where something reads it, and the conversions in the body go. The
 * same where the next value is a branch's that keeps the value or makes it
 * anew from values recomputable in any layout (a hand-flattened persistent
 * GEMM's row offsets, set in `if ki == 0`): the branch's value is read
 * through conversions to L too, and the arm that makes it makes it in L.
 * Triton moves such conversions through the loop's arguments the same way. */
#include "passes/layout_internal.h"

/* The ops of a block (nested regions included) that read x. */
typedef struct Readers {
    const IrValue *x;
    IrOp *ops[16];
    int n;
    bool overflow;
} Readers;

static bool note_reader(IrOp *op, void *ctx)
{
    Readers *r = ctx;
    for (int i = 0; i < op->nops; i++) {
        if (op->operands[i] != r->x)
            continue;
        if (r->n == (int)(sizeof r->ops / sizeof r->ops[0]))
            r->overflow = true;
        else
            r->ops[r->n++] = op;
        break;
    }
    return !r->overflow;
}

/* A branch making the next value (a hand-flattened persistent loop's row
 * offsets, set anew in `if ki == 0` and kept otherwise): each arm yields
 * x or a value recomputable in any layout. What else reads the branch's
 * value is left to read_layout. */
static bool branch_step(const IrOp *d, const IrValue *next, const IrValue *x)
{
    int j = ir_result_index(d, next);
    if (j < 0)
        return false;
    for (int r = 0; r < d->nregions; r++) {
        const IrOp *y = d->regions[r]->last;
        const IrValue *v = y && y->kind == IR_YIELD && j < y->nops ? y->operands[j] : NULL;
        if (!v || (v != x && !pass_can_remat(v)))
            return false;
    }
    return true;
}

/* The op making the next value of slot k from its argument x: NULL with
 * *ok where the body yields x unchanged; an elementwise op of x and
 * recomputable values whose result only the yield reads, or a branch
 * (branch_step). */
static IrOp *step_of(IrBlock *body, int k, const IrValue *x, bool *ok)
{
    IrValue *next = body->last->operands[k];
    *ok = next == x;
    if (*ok)
        return NULL;
    IrOp *d = next->def;
    if (d && d->kind == IR_IF && d->parent == body) {
        *ok = branch_step(d, next, x);
        return d;
    }
    if (!d || d->parent != body || d->nres != 1 || !lp_elementwise(d->kind) ||
        ir_count_reads(body, next) != 1)
        return NULL;
    bool reads_x = false;
    for (int i = 0; i < d->nops; i++) {
        const IrValue *o = d->operands[i];
        if (o == x)
            reads_x = true;
        else if (o->type.rank && !pass_can_remat(o))
            return NULL;
    }
    *ok = reads_x;
    return d;
}

/* The one layout every conversion among x's readers makes, where every
 * other reader is the step (or an arm's yield in a branch step) or the
 * loop's yield: false where a reader is something else or the layouts
 * differ; *l, where not NULL already, must be that layout. */
static bool read_layout(const Readers *r, const IrOp *step, const IrOp *yield, const Layout **l)
{
    if (r->overflow)
        return false;
    for (int i = 0; i < r->n; i++) {
        const IrOp *op = r->ops[i];
        if (op == step || op == yield ||
            (op->kind == IR_YIELD && step && op->parent->parent == step))
            continue;
        if (op->kind != IR_CONVERT_LAYOUT)
            return false;
        const Layout *to = op->results[0]->layout;
        if (!to || (*l && !layout_equal(*l, to)))
            return false;
        *l = to;
    }
    return true;
}

static IrValue *convert(IrBuilder *b, IrValue *x, const Layout *l, Span sp)
{
    IrValue *c = ir_unary(b, IR_CONVERT_LAYOUT, sp, x, x->type);
    if (c) {
        c->layout = l;
        c->name = x->name;
    }
    return c;
}

/* Where the loop's result r is read after it, it is read converted back
 * to layout was. */
static bool result_back(IrFunc *f, IrOp *loop, IrValue *r, const Layout *was)
{
    if (!ir_count_reads(loop->parent, r))
        return true;
    IrBuilder b = {f, loop->parent, loop->next};
    IrValue *c = convert(&b, r, was, loop->span);
    if (!c)
        return false;
    ir_replace_uses(loop->parent, r, c);
    c->def->operands[0] = r;
    return true;
}

/* v in layout l: the conversions among its readers r go. */
static void carry_reads(IrBlock *body, IrValue *v, const Readers *r, const Layout *l)
{
    v->layout = l;
    for (int i = 0; i < r->n; i++)
        if (r->ops[i]->kind == IR_CONVERT_LAYOUT) {
            ir_replace_uses(body, r->ops[i]->results[0], v);
            ir_remove(r->ops[i]);
        }
}

/* Branch d's result next in layout l: the arms that make it anew make it
 * in l (recomputed there, pass_can_remat). */
static bool branch_in(IrFunc *f, IrOp *d, IrValue *next, const IrValue *x, const Layout *l)
{
    int j = ir_result_index(d, next);
    for (int r = 0; r < d->nregions; r++) {
        IrOp *y = d->regions[r]->last;
        IrValue *v = y->operands[j];
        if (v == x || layout_equal(v->layout, l))
            continue;
        IrBuilder at = {f, d->regions[r], y};
        if (!(y->operands[j] = convert(&at, v, l, y->span)))
            return false;
    }
    next->layout = l;
    return true;
}

/* Carries slot k of loop in layout l. */
static bool carry_in(IrFunc *f, IrOp *loop, int k, IrOp *step, const Readers *r, const Layout *l)
{
    IrBlock *body = loop->regions[0];
    IrValue *x = body->args[k + 1], *res = loop->results[k];
    const Layout *was = x->layout;
    IrBuilder before = {f, loop->parent, loop};
    IrValue *init = convert(&before, loop->operands[k + 3], l, loop->span);
    if (!init)
        return false;
    loop->operands[k + 3] = init;
    if (step && step->kind == IR_IF) {
        IrValue *next = body->last->operands[k];
        Readers rn = {next, {0}, 0, false};
        ir_walk(body, note_reader, &rn);
        if (!branch_in(f, step, next, x, l))
            return false;
        carry_reads(body, x, r, l);
        carry_reads(body, next, &rn, l);
        res->layout = l;
        return result_back(f, loop, res, was);
    }
    for (int i = 0; step && i < step->nops; i++) {
        IrValue *o = step->operands[i];
        if (o == x || !o->type.rank || layout_equal(o->layout, l))
            continue;
        IrBuilder at = {f, body, step};
        if (!(step->operands[i] = convert(&at, o, l, step->span)))
            return false;
    }
    if (step)
        step->results[0]->layout = l;
    carry_reads(body, x, r, l);
    res->layout = l;
    return result_back(f, loop, res, was);
}

typedef struct Carry {
    LayoutPass *p;
    bool failed;
} Carry;

static bool carry_loop(IrOp *op, void *ctx)
{
    Carry *c = ctx;
    if (op->kind != IR_FOR || c->failed)
        return !c->failed;
    IrBlock *body = op->regions[0];
    const IrOp *yield = body->last;
    if (!yield || yield->kind != IR_YIELD)
        return true;
    for (int k = 0; k < yield->nops && k + 1 < body->nargs && k + 3 < op->nops; k++) {
        IrValue *x = body->args[k + 1];
        if (!x->layout || x->type.rank != 1)
            continue;
        bool ok;
        IrOp *step = step_of(body, k, x, &ok);
        Readers r = {x, {0}, 0, false};
        ir_walk(body, note_reader, &r);
        const Layout *l = NULL;
        if (!ok || !read_layout(&r, step, yield, &l))
            continue;
        if (step && step->kind == IR_IF) { /* the branch's result is read too */
            Readers rn = {yield->operands[k], {0}, 0, false};
            ir_walk(body, note_reader, &rn);
            if (!read_layout(&rn, step, yield, &l))
                continue;
        }
        if (!l || layout_equal(l, x->layout) || !lp_few_per_thread(c->p, x, l))
            continue;
        if (!carry_in(c->p->f, op, k, step, &r, l))
            return !(c->failed = true);
    }
    return true;
}

bool lp_carry_in_place(LayoutPass *p)
{
    Carry c = {p, false};
    ir_walk(p->f->body, carry_loop, &c);
    return !c.failed && !p->f->arena->oom;
}
