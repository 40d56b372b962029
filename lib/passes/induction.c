/* induction.c: loop-carried values the body yields unchanged are their
 * initial values, in the loop and after it; and loop-carried integer
 * blocks that step by a loop-invariant
 * block in every iteration (`offs_k += BLOCK_K`, a K index carried through
 * a GEMM's loop) are made inside the body from the iteration's index:
 * init + j * step. A carried block has one layout, and each use in another
 * (the masks of both operands, one along a row of A, one down a column of
 * B) converted it through shared memory in every iteration; made from an
 * arange and scalars, it is recomputed in whatever layout a use needs. The
 * loop still carries the block for uses after it (DCE drops it when there
 * are none). Integers wrap, so the product equals the sum of the steps. */
#include "passes/passes.h"

#include <stdbool.h>

typedef struct Induction {
    IrFunc *f;
} Induction;

static bool const_step(const IrValue *v, int64_t *out)
{
    const IrOp *d = v->def;
    if (!d || d->kind != IR_CONST || v->type.rank || dtype_is_float(v->type.dt))
        return false;
    *out = d->ival;
    return true;
}

/* Whether x has the same value in every iteration of the loop whose body
 * is `body`: made outside it, or a constant made in it. */
static bool invariant(const IrValue *x, const IrBlock *body)
{
    return (x->def && x->def->kind == IR_CONST) || !ir_defined_in(x, body);
}

/* The step of carried slot i (its yield is `arg + step` or `step + arg`),
 * or NULL. */
static IrValue *carried_step(IrBlock *body, const IrOp *y, int i)
{
    IrValue *arg = body->args[i + 1], *next = y->operands[i];
    const IrOp *d = next->def;
    if (!d || d->kind != IR_ADD || d->parent != body || d->nops != 2)
        return NULL;
    IrValue *step = d->operands[0] == arg ? d->operands[1]
        : d->operands[1] == arg           ? d->operands[0]
                                          : NULL;
    return step && invariant(step, body) && pass_can_remat(step) ? step : NULL;
}

/* init + j * step at the top of the body, j the iteration's index. */
static IrValue *made_from_index(IrFunc *f, IrOp *loop, IrValue *init, IrValue *step,
                                int64_t loop_step)
{
    IrBlock *body = loop->regions[0];
    IrBuilder b = {f, body, body->first};
    Span sp = loop->span;
    Type t = init->type, elem = type_scalar(t.dt);
    IrValue *j = ir_iteration_index(&b, sp, body->args[0], loop->operands[0], loop_step);
    if (j->type.dt != t.dt)
        j = ir_unary(&b, IR_CAST, sp, j, elem);
    IrValue *js = ir_unary(&b, IR_SPLAT, sp, j, t);
    if (step->def && step->def->kind == IR_CONST && ir_defined_in(step, body))
        step = ir_clone(&b, step->def, NULL, 0)->results[0]; /* made later in the body */
    return ir_binary(&b, IR_ADD, sp, init, ir_binary(&b, IR_MUL, sp, js, step, t), t);
}

static bool rewrite_loop(IrOp *op, void *ctx)
{
    Induction *in = ctx;
    int64_t loop_step;
    if (op->kind != IR_FOR || op->nregions != 1 || !const_step(op->operands[2], &loop_step) ||
        loop_step == 0)
        return true;
    IrBlock *body = op->regions[0];
    IrOp *y = body->last;
    if (!y || y->kind != IR_YIELD)
        return true;
    for (int i = 0; i < y->nops && 3 + i < op->nops && i + 1 < body->nargs; i++) {
        IrValue *arg = body->args[i + 1], *init = op->operands[3 + i];
        if (y->operands[i] == arg && i < op->nres) {
            /* carried unchanged (a scale a branch the constexprs left out
             * would have swapped): the initial value itself, inside the
             * loop and after it */
            ir_replace_uses(body, arg, init);
            ir_replace_uses(in->f->body, op->results[i], init);
            continue;
        }
        DType dt = arg->type.dt;
        if (!arg->type.rank || dt == DT_PTR || dt == DT_I1 || dtype_is_float(dt) ||
            !pass_can_remat(init) || ir_count_reads(body, arg) < 2)
            continue;
        IrValue *step = carried_step(body, y, i);
        if (!step)
            continue;
        IrValue *made = made_from_index(in->f, op, init, step, loop_step);
        if (in->f->arena->oom)
            return false;
        ir_replace_uses(body, arg, made);
    }
    return true;
}

void pass_induction(IrFunc *f)
{
    Induction in = {f};
    ir_walk(f->body, rewrite_loop, &in);
    ir_renumber(f);
}
