/* dce.c: dead code elimination by liveness: an op lives when it has a side
 * effect or something live reads its results; a `for` slot (init, carried
 * argument, yield value, result) lives when its result or its argument is
 * read by something live, so unused accumulators go even though they feed
 * themselves; unused `if` results leave both yields. Assumes verified IR;
 * guarantees every store, atomic, print, assert, assume, barrier and
 * volatile load (and control flow around one) stays, and dense ids. */
#include "passes/passes.h"

#include <string.h>

typedef struct Dce {
    unsigned char *live; /* by value id */
    int nids;
    bool changed;
} Dce;

static bool is_live(const Dce *d, const IrValue *v)
{
    return v && v->id >= 0 && v->id < d->nids && d->live[v->id];
}

static void mark(Dce *d, const IrValue *v)
{
    if (v && v->id >= 0 && v->id < d->nids && !d->live[v->id]) {
        d->live[v->id] = 1;
        d->changed = true;
    }
}

static bool any_result_live(const Dce *d, const IrOp *op)
{
    for (int i = 0; i < op->nres; i++)
        if (is_live(d, op->results[i]))
            return true;
    return false;
}

static void mark_operands(Dce *d, const IrOp *op)
{
    for (int i = 0; i < op->nops; i++)
        mark(d, op->operands[i]);
}

/* Ops we do not prune inside (while, custom reduce/scan): all of it lives. */
static void mark_all(Dce *d, const IrBlock *b)
{
    for (int i = 0; i < b->nargs; i++)
        mark(d, b->args[i]);
    for (const IrOp *op = b->first; op; op = op->next) {
        mark_operands(d, op);
        for (int i = 0; i < op->nres; i++)
            mark(d, op->results[i]);
        for (int r = 0; r < op->nregions; r++)
            mark_all(d, op->regions[r]);
    }
}

static void mark_block(Dce *d, const IrBlock *b);

static const IrOp *yield_of(const IrBlock *b, int n)
{
    const IrOp *y = b ? b->last : NULL;
    return y && y->kind == IR_YIELD && y->nops == n ? y : NULL;
}

static void mark_for(Dce *d, const IrOp *op)
{
    const IrBlock *body = op->regions[0];
    const IrOp *y = yield_of(body, op->nres);
    bool slots_ok = y && body->nargs == op->nres + 1 && op->nops == op->nres + 3;
    for (int i = 0; i < op->nres; i++)
        if (!slots_ok || is_live(d, op->results[i]) || is_live(d, body->args[i + 1])) {
            mark(d, op->results[i]);
            if (slots_ok) {
                mark(d, body->args[i + 1]);
                mark(d, op->operands[3 + i]);
                mark(d, y->operands[i]);
            }
        }
    if (!slots_ok)
        mark_operands(d, op);
    mark_block(d, body);
    if (ir_op_has_effect(op) || any_result_live(d, op))
        for (int i = 0; i < 3 && i < op->nops; i++)
            mark(d, op->operands[i]);
}

static void mark_if(Dce *d, const IrOp *op)
{
    for (int r = 0; r < op->nregions; r++) {
        const IrOp *y = yield_of(op->regions[r], op->nres);
        for (int i = 0; i < op->nres; i++)
            if (!y || is_live(d, op->results[i])) {
                mark(d, op->results[i]);
                if (y)
                    mark(d, y->operands[i]);
            }
        if (!y)
            mark_all(d, op->regions[r]);
        mark_block(d, op->regions[r]);
    }
    if (ir_op_has_effect(op) || any_result_live(d, op))
        mark_operands(d, op);
}

/* while: every carried value stays (the trip count may depend on any of
 * them), but inside its regions only what is used or has an effect lives,
 * as in the rest of the function. */
static void mark_while(Dce *d, const IrOp *op)
{
    mark_operands(d, op);
    for (int i = 0; i < op->nres; i++)
        mark(d, op->results[i]);
    for (int r = 0; r < op->nregions; r++) {
        const IrBlock *b = op->regions[r];
        for (int i = 0; i < b->nargs; i++)
            mark(d, b->args[i]);
        if (b->last && (b->last->kind == IR_YIELD || b->last->kind == IR_CONDITION))
            mark_operands(d, b->last);
        mark_block(d, b);
    }
}

static void mark_block(Dce *d, const IrBlock *b)
{
    for (const IrOp *op = b->last; op; op = op->prev) {
        if (op->kind == IR_FOR && op->nregions == 1)
            mark_for(d, op);
        else if (op->kind == IR_IF)
            mark_if(d, op);
        else if (op->kind == IR_WHILE && (ir_op_has_effect(op) || any_result_live(d, op)))
            mark_while(d, op);
        else if (op->kind == IR_YIELD || op->kind == IR_CONDITION)
            continue; /* their parents decide */
        else if (ir_op_has_effect(op) || any_result_live(d, op)) {
            mark_operands(d, op);
            for (int r = 0; r < op->nregions; r++)
                mark_all(d, op->regions[r]);
        }
    }
}

/* ---- removal ------------------------------------------------------------------ */

static void drop_operand(IrOp *op, int i)
{
    memmove(op->operands + i, op->operands + i + 1, sizeof(IrValue *) * (size_t)(op->nops - i - 1));
    op->nops--;
}

static void drop_result(IrOp *op, int i)
{
    memmove(op->results + i, op->results + i + 1, sizeof(IrValue *) * (size_t)(op->nres - i - 1));
    op->nres--;
    for (int j = i; j < op->nres; j++)
        op->results[j]->index = j;
}

static void drop_arg(IrBlock *b, int i)
{
    memmove(b->args + i, b->args + i + 1, sizeof(IrValue *) * (size_t)(b->nargs - i - 1));
    b->nargs--;
    for (int j = i; j < b->nargs; j++)
        b->args[j]->index = j;
}

static void prune_for(const Dce *d, IrOp *op)
{
    IrBlock *body = op->regions[0];
    IrOp *y = body->last;
    for (int i = op->nres - 1; i >= 0; i--) {
        if (is_live(d, op->results[i]) || is_live(d, body->args[i + 1]))
            continue;
        drop_operand(y, i);
        drop_operand(op, 3 + i);
        drop_result(op, i);
        drop_arg(body, i + 1);
    }
}

static void prune_if(const Dce *d, IrOp *op)
{
    for (int i = op->nres - 1; i >= 0; i--) {
        if (is_live(d, op->results[i]))
            continue;
        for (int r = 0; r < op->nregions; r++)
            drop_operand(op->regions[r]->last, i);
        drop_result(op, i);
    }
}

static void sweep(const Dce *d, IrBlock *b)
{
    for (IrOp *op = b->last, *prev; op; op = prev) {
        prev = op->prev;
        /* the mark phase left every slot live unless the shape was regular */
        if (op->kind == IR_FOR && op->nregions == 1)
            prune_for(d, op);
        else if (op->kind == IR_IF)
            prune_if(d, op);
        for (int r = 0; r < op->nregions; r++)
            sweep(d, op->regions[r]);
        if (!ir_op_has_effect(op) && !any_result_live(d, op))
            ir_remove(op);
    }
}

void pass_dce(IrFunc *f)
{
    Dce d = {NULL, f->next_id, false};
    size_t bytes = (size_t)(d.nids > 0 ? d.nids : 1);
    /* From the function's arena, so that running out of memory here marks
     * the compilation as failed instead of quietly skipping the pass. */
    d.live = arena_alloc(f->arena, bytes);
    if (!d.live || f->arena->oom)
        return;
    do {
        d.changed = false;
        mark_block(&d, f->body);
    } while (d.changed);
    sweep(&d, f->body);
    ir_renumber(f);
}
