/* ir/verify_plan.c: the checks of a software pipelining plan (IrPlan,
 * pass pipeline_plan): each mechanism on the op kind it is for, a load's or
 * a dot's plan inside a planned loop, ring numbers that the rewrites can
 * use as they are. The plan comes from text as often as from the pass
 * (test/passes), so every field is checked before a rewrite trusts it. */
#include "ir/verify.h"

#include <string.h>

/* The planned `for` whose body holds op directly, or NULL. */
static const IrOp *planned_loop(const IrOp *op)
{
    const IrOp *loop = op->parent ? op->parent->parent : NULL;
    return loop && loop->kind == IR_FOR && loop->plan.mech == PIPE_LOOP ? loop : NULL;
}

static bool is_ring_mech(PipeMech m)
{
    return m == PIPE_CP_ASYNC || m == PIPE_PRIVATE || m == PIPE_TMA;
}

/* No two loads of one loop share a ring; a warp-specialized loop's rings
 * are all filled by TMA (its producer issues only TMA copies). */
static void check_loop_rings(Verifier *v, const IrOp *loop)
{
    const IrBlock *body = loop->nregions == 1 ? loop->regions[0] : NULL;
    for (const IrOp *a = body ? body->first : NULL; a; a = a->next) {
        if (a->kind != IR_LOAD || !is_ring_mech(a->plan.mech))
            continue;
        if (loop->plan.ws && a->plan.mech != PIPE_TMA)
            ir_vfail(v, a, "a warp-specialized loop's loads are planned for TMA only");
        for (const IrOp *b = a->next; b; b = b->next)
            if (b->kind == IR_LOAD && is_ring_mech(b->plan.mech) &&
                b->plan.buffer == a->plan.buffer)
                ir_vfail(v, b, "ring buffer %d is planned twice in one loop", b->plan.buffer);
    }
}

static void check_loop(Verifier *v, const IrOp *op)
{
    const IrPlan *pl = &op->plan;
    if (pl->stages < 2 || pl->slots < pl->stages || pl->slots > pl->stages + 1)
        ir_vfail(v, op, "plan of %d stages in %d slots (slots: stages or stages+1)", pl->stages,
                 pl->slots);
    const IrValue *step = op->nops >= 3 ? op->operands[2] : NULL;
    bool constant = step && step->def && step->def->kind == IR_CONST;
    if (!step || step->type.rank != 0 || (step->def && step->def->parent == op->regions[0]))
        ir_vfail(v, op, "a pipelined loop steps by a scalar it does not compute");
    if (!constant && pl->ws)
        ir_vfail(v, op, "a warp-specialized loop steps by a constant");
    for (const IrOp *a = constant || op->nregions != 1 ? NULL : op->regions[0]->first; a;
         a = a->next)
        if (a->kind == IR_LOAD && a->plan.mech == PIPE_TMA)
            ir_vfail(v, a, "TMA copies run ahead in loops that step by a constant");
    check_loop_rings(v, op);
}

/* A refilled ring's slot is copied into again at the end of the iteration
 * that reads it: only a cp.async ring of a loop without a producer, whose
 * value the iteration does not carry into the next. */
static void check_refill(Verifier *v, const IrOp *op)
{
    const IrOp *loop = planned_loop(op);
    if (op->plan.mech != PIPE_CP_ASYNC && op->plan.mech != PIPE_PRIVATE)
        ir_vfail(v, op, "only a cp.async ring is refilled in place");
    else if (loop && loop->plan.ws)
        ir_vfail(v, op, "a warp-specialized loop's rings are not refilled in place");
    const IrOp *y = op->parent ? op->parent->last : NULL;
    for (int i = 0; y && y->kind == IR_YIELD && i < y->nops; i++)
        if (op->nres && y->operands[i] == op->results[0])
            ir_vfail(v, op, "a refilled ring's value is carried into the next iteration");
}

static void check_load(Verifier *v, const IrOp *op)
{
    const IrPlan *pl = &op->plan;
    if (!planned_loop(op))
        ir_vfail(v, op, "a planned load outside the body of a planned loop");
    if (pl->buffer < 0)
        ir_vfail(v, op, "ring buffer %d", pl->buffer);
    if (pl->mech == PIPE_PRIVATE && (pl->run < 1 || pl->run > 16))
        ir_vfail(v, op, "private ring runs of %d elements", pl->run);
    if (pl->mech == PIPE_TMA && (pl->tmap < 0 || pl->tmap >= v->f->ntmaps))
        ir_vfail(v, op, "tensor map %d of %d", pl->tmap, v->f->ntmaps);
    if (pl->mech == PIPE_TMA && (!v->f->arch || strcmp(v->f->arch, "sm_90a") != 0))
        ir_vfail(v, op, "TMA copies are for sm_90a");
    if (pl->packed && (pl->mech != PIPE_PRIVATE || op->nres != 1 || op->results[0]->type.rank != 1))
        ir_vfail(v, op, "a packed ring is a private ring of a 1-D load");
    if (pl->refill)
        check_refill(v, op);
}

static void check_dot(Verifier *v, const IrOp *op)
{
    const Layout *l = op->nres == 1 && op->results[0] ? op->results[0]->layout : NULL;
    const IrOp *loop = op->parent ? op->parent->parent : NULL;
    if (!loop || loop->kind != IR_FOR) /* planned, or its rings built already */
        ir_vfail(v, op, "an asynchronous dot outside the body of a for");
    if (op->plan.pending != 1)
        ir_vfail(v, op, "an asynchronous dot leaves 1 group in flight, not %d", op->plan.pending);
    if (!l || l->kind != LY_MMA || l->version != 3)
        ir_vfail(v, op, "an asynchronous dot is a wgmma (an mma v3 result)");
}

typedef struct SameBuffer {
    const IrOp *op;
    bool found;
} SameBuffer;

static bool same_buffer(IrOp *o, void *ctx)
{
    SameBuffer *s = ctx;
    s->found |= o != s->op && o->kind == IR_LOAD && o->plan.mech != PIPE_NONE &&
        o->plan.mech != PIPE_LOOP && o->plan.mech != PIPE_ASYNC_DOT &&
        o->plan.buffer == s->op->plan.buffer;
    return !s->found;
}

/* A resident operand is loaded outside pipelined and warp-specialized
 * loops (in an outer loop at most, copied again in each step), into a
 * buffer no ring uses. */
static void check_resident(Verifier *v, const IrOp *op)
{
    SameBuffer s = {op, false};
    ir_walk(v->f->body, same_buffer, &s);
    if (s.found)
        ir_vfail(v, op, "buffer %d of a resident operand is planned for another load too",
                 op->plan.buffer);
    for (const IrBlock *b = op->parent; b && b->parent; b = b->parent->parent) {
        const IrOp *loop = b->parent;
        if ((loop->kind == IR_FOR || loop->kind == IR_WHILE) &&
            (loop->plan.mech == PIPE_LOOP || (loop->flags & IRF_WARP_SPEC)))
            ir_vfail(v, op, "a resident operand is loaded outside pipelined loops");
    }
    if (op->plan.buffer < 0 || op->nres != 1 || op->results[0]->type.rank != 2)
        ir_vfail(v, op, "a resident operand is a 2-D tile in buffer >= 0");
}

void ir_check_plan(Verifier *v, const IrOp *op)
{
    PipeMech m = op->plan.mech;
    if (m == PIPE_NONE)
        return;
    bool fits = (m == PIPE_LOOP && op->kind == IR_FOR) ||
        ((is_ring_mech(m) || m == PIPE_RESIDENT) && op->kind == IR_LOAD) ||
        (m == PIPE_ASYNC_DOT && op->kind == IR_DOT);
    if (!fits) {
        ir_vfail(v, op, "pipelining plan %d does not fit this op", (int)m);
        return;
    }
    if (m == PIPE_LOOP)
        check_loop(v, op);
    else if (m == PIPE_ASYNC_DOT)
        check_dot(v, op);
    else if (m == PIPE_RESIDENT)
        check_resident(v, op);
    else
        check_load(v, op);
}
