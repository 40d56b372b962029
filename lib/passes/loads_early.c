/* loads_early.c: each global load of a block issued before the
 * element-wise work that precedes it but does not feed it, with the pure
 * ops that compute its address and mask. A stencil's taps, unrolled (a
 * causal convolution's four shifted loads, each followed by its
 * multiply-adds), then have every load in flight before the first
 * multiply waits for data; in program order the first consumer of a
 * load stalled the warp after a quarter of them, and ptxas does not
 * move loads that far. Loads move only past pure element-wise ops: a
 * store, atomic, barrier, copy, wait, assume, any op with regions, and
 * dots, reductions and scans (whose work Triton's order keeps after the
 * loads written before them, not before) end the stretch a load may
 * move in. Loads keep their order among themselves. Runs last, on the
 * code the pipeline left (its copies and waits are such ends).
 *
 * Only in kernels without tl.dot: there the accumulators hold most of
 * the registers, and an epilogue's loads hoisted above the work on them
 * (a residual read before the activation) added up to 31 registers and
 * spills, while their latency is already hidden by the other programs'
 * main loops; element-wise and reduction kernels are the ones that wait
 * on their loads one by one. */
#include "passes/passes.h"
#include "passes/pipeline.h"

#include <string.h>

/* A load this pass may move: global, not volatile. */
static bool movable_load(const IrOp *o)
{
    return o->kind == IR_LOAD && o->nres == 1 && !(o->flags & IRF_VOLATILE);
}

/* An op a load may move above: pure and element-wise, or another load. */
static bool passable(const IrOp *o)
{
    switch (o->kind) {
    case IR_DOT:
    case IR_REDUCE:
    case IR_SCAN: return false;
    default: return movable_load(o) || (!o->nregions && pipe_pure_op(o));
    }
}

typedef struct Seg {
    IrOp **op; /* the stretch, in program order */
    int n;
    int *at;     /* by value id: index in op[] of its defining op, or -1 */
    bool *early; /* by index: moves to the front */
    int *stack;
} Seg;

/* Marks load i and what it reads from the stretch early, unless it reads
 * a value made there by an op that must stay (then nothing is marked). */
static void mark_cone(Seg *s, int i)
{
    int top = 0, nmarked = 0;
    s->stack[top++] = i;
    s->early[i] = true;
    int *marked = s->stack + s->n; /* the second half: what this cone marked */
    marked[nmarked++] = i;
    while (top > 0) {
        const IrOp *o = s->op[s->stack[--top]];
        for (int k = 0; k < o->nops; k++) {
            const IrValue *v = o->operands[k];
            int j = v ? s->at[v->id] : -1;
            if (j < 0 || s->early[j])
                continue;
            if (!passable(s->op[j]) || s->op[j]->kind == IR_LOAD) {
                for (int m = 0; m < nmarked; m++) /* an op that stays feeds it */
                    s->early[marked[m]] = false;
                return;
            }
            s->early[j] = true;
            marked[nmarked++] = j;
            s->stack[top++] = j;
        }
    }
}

/* Reorders the stretch op[0..n) that ends before `end` (NULL: the
 * block's end): the loads' cones first, the rest after, each in program
 * order; every op still follows what it reads. */
static void reorder(IrBlock *b, Seg *s, IrOp *end)
{
    bool any = false;
    for (int i = 0; i < s->n; i++)
        if (movable_load(s->op[i]) && !s->early[i]) {
            mark_cone(s, i);
            any |= s->early[i];
        }
    if (!any)
        return;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->n; i++) {
            if (s->early[i] != (pass == 0))
                continue;
            ir_remove(s->op[i]);
            if (end)
                ir_insert_before(end, s->op[i]);
            else
                ir_append(b, s->op[i]);
        }
}

static void clear(Seg *s)
{
    for (int i = 0; i < s->n; i++) {
        for (int r = 0; r < s->op[i]->nres; r++)
            s->at[s->op[i]->results[r]->id] = -1;
        s->early[i] = false;
    }
    s->n = 0;
}

static void block(IrFunc *f, IrBlock *b, Seg *s)
{
    for (IrOp *o = b->first; o;) {
        IrOp *next = o->next;
        if (passable(o)) {
            for (int r = 0; r < o->nres; r++)
                s->at[o->results[r]->id] = s->n;
            s->op[s->n++] = o;
        } else {
            reorder(b, s, o);
            clear(s);
            for (int r = 0; r < o->nregions; r++)
                block(f, o->regions[r], s);
        }
        o = next;
    }
    reorder(b, s, NULL);
    clear(s);
}

static bool not_dot(IrOp *op, void *ctx)
{
    (void)ctx;
    return op->kind != IR_DOT;
}

bool pass_loads_early(IrFunc *f)
{
    if (!ir_walk(f->body, not_dot, NULL))
        return true;
    int nops = f->next_id; /* a stretch's ops have one result each */
    Seg s = {0};
    s.op = arena_alloc(f->arena, sizeof(IrOp *) * (size_t)(nops + 1));
    s.at = arena_alloc(f->arena, sizeof(int) * (size_t)(f->next_id + 1));
    s.early = arena_alloc(f->arena, sizeof(bool) * (size_t)(nops + 1));
    s.stack = arena_alloc(f->arena, sizeof(int) * (size_t)(2 * nops + 2));
    if (!s.op || !s.at || !s.early || !s.stack || f->arena->oom)
        return false;
    for (int id = 0; id <= f->next_id; id++)
        s.at[id] = -1;
    memset(s.early, 0, sizeof(bool) * (size_t)(nops + 1));
    block(f, f->body, &s);
    return true;
}
