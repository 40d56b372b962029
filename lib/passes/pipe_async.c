/* pipe_async.c: asynchronous wgmma (pass pipeline_async), as the plan of
 * pass pipeline_plan asks. A dot planned `async` (sm_90a, a wgmma whose
 * accumulator circulates through the loop: acc = dot(a, b, acc), or
 * attention's dot(p, v, acc * alpha)) leaves its instructions in flight
 * into the next iteration, with one group pending at its wait
 * (codegen/wgmma.c): a dot_wait after the loop reads the result, and one
 * inside reads the accumulator where the body does other than feed the
 * dot (wait_in_body), or where a flattened loop's epilogue reads it in
 * its ifs (wait_in_ifs). The rings' extra slot that this needs with
 * several warpgroups is in the plan already (pipeline_rings). */
#include "passes/pipeline.h"

/* The regions of the body's ifs read x through a dot_wait at their start,
 * so the wait runs only where they do. */
static void wait_in_ifs(Pipe *p, IrValue *x)
{
    for (IrOp *o = p->body->first; o; o = o->next)
        for (int r = 0; o->kind == IR_IF && r < o->nregions; r++) {
            IrBlock *blk = o->regions[r];
            if (!pipe_reads_in(blk, x))
                continue;
            IrBuilder b = {p->f, blk, blk->first};
            IrValue *w = ir_unary(&b, IR_DOT_WAIT, o->span, x, x->type);
            w->layout = x->layout;
            w->name = x->name;
            ir_replace_uses(blk, x, w);
            w->def->operands[0] = x;
        }
}

/* The first op of block b that reads x, or NULL. */
static IrOp *first_use(IrBlock *b, const IrValue *x)
{
    for (IrOp *op = b->first; op; op = op->next)
        if (pipe_op_reads(op, x))
            return op;
    return NULL;
}

/* The body reads the carried accumulator x other than as the dot's own
 * accumulator (attention rescales it; a chunked scan stores its state
 * every few steps): reads inside the body's ifs alone wait there, so a
 * step that takes no branch leaves the previous step's instructions in
 * flight; any other read goes through a dot_wait just before the first
 * op that reads x. */
static void wait_in_body(Pipe *p, IrValue *x)
{
    bool dot_acc = p->dot->operands[2] == x;
    int in_ifs = pipe_uses_in_ifs(p, x);
    if (p->uses[x->id] == (dot_acc ? 1 : 0) + in_ifs) {
        if (in_ifs)
            wait_in_ifs(p, x);
        return; /* the dot chains on it, in the tensor cores' order */
    }
    IrOp *at = first_use(p->body, x);
    IrBuilder b = {p->f, p->body, at};
    IrValue *w = ir_unary(&b, IR_DOT_WAIT, at->span, x, x->type);
    w->layout = x->layout;
    w->name = x->name;
    ir_replace_uses(p->body, x, w);
    w->def->operands[0] = x;
}

/* After the loop, the result the asynchronous dot yields is read through a
 * dot_wait; inside it, other reads of the accumulator too. */
static void wait_for_dot(Pipe *p)
{
    const IrOp *yield = p->body->last;
    for (int k = 0; k < yield->nops && k < p->loop->nres; k++) {
        if (yield->operands[k] != p->dot->results[0])
            continue;
        IrValue *r = p->loop->results[k];
        IrBuilder after = {p->f, p->loop->parent, p->loop->next};
        IrValue *w = ir_unary(&after, IR_DOT_WAIT, p->loop->span, r, r->type);
        w->layout = r->layout;
        w->name = r->name;
        ir_replace_uses(p->loop->parent, r, w);
        w->def->operands[0] = r;
        if (k + 1 < p->body->nargs)
            wait_in_body(p, p->body->args[k + 1]);
    }
    wait_in_ifs(p, p->dot->results[0]);
    p->dot->ival = 1;
}


/* The dot leaves its work in flight; its plan is carried out. */
static void async_dot(Pipe *p, IrOp *dot)
{
    p->dot = dot;
    p->body = dot->parent;
    p->loop = dot->parent->parent;
    wait_for_dot(p);
    if (dot->plan.spare)
        dot->flags |= IRF_SPARE;
    dot->plan = (IrPlan){PIPE_NONE};
}

typedef struct AsyncDots {
    Arena *a;
    PtrVec v;
} AsyncDots;

static bool planned_dot(IrOp *op, void *ctx)
{
    AsyncDots *d = ctx;
    if (op->kind == IR_DOT && op->plan.mech == PIPE_ASYNC_DOT)
        vec_push(d->a, &d->v, op);
    return true;
}

bool pass_pipeline_async(IrFunc *f)
{
    Pipe p;
    if (!pipe_init(&p, f))
        return false;
    AsyncDots d = {f->arena, {0}};
    ir_walk(f->body, planned_dot, &d);
    for (int i = 0; i < d.v.len; i++) {
        IrOp *dot = d.v.items[i];
        IrOp *loop = dot->parent ? dot->parent->parent : NULL;
        if (!loop || loop->kind != IR_FOR)
            return false; /* the verifier allows no other */
        async_dot(&p, dot);
    }
    ir_renumber(f);
    return true;
}
