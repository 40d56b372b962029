/* cse.c: loop-invariant code motion and common subexpression elimination.
 * Pure ops of a `for` body whose operands all come from outside the loop
 * move in front of it (innermost loops first, so invariants climb through
 * nests); then an op equal to one that dominates it (same kind, attributes,
 * operands and result types, in the same or an enclosing block) is replaced
 * by it (one in another layout is a different value). Assumes verified IR; guarantees it stays verified, never moves or
 * merges loads, side effects or integer division (which may trap in the
 * interpreter when the loop would not have run), and leaves dense ids. */
#include "compiler.h"

#include <string.h>

/* Ops that compute a value from their operands and nothing else. */
static bool is_pure(const IrOp *op)
{
    if (op->nregions || op->nres == 0)
        return false;
    switch (op->kind) {
    case IR_LOAD: case IR_STORE: case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: case IR_PRINT:
    case IR_ASSERT: case IR_ASSUME: case IR_BARRIER: case IR_YIELD: case IR_CONDITION:
    case IR_SHARED_VIEW: case IR_GDC:
        return false;
    case IR_INLINE_ASM:
        return (op->flags & IRF_PURE) != 0;
    default:
        for (int i = 0; i < op->nops; i++)
            if (!op->operands[i])
                return false;
        return true;
    }
}

static bool may_trap(const IrOp *op)
{
    return (op->kind == IR_DIV || op->kind == IR_REM) && dtype_is_int(op->results[0]->type.dt);
}

/* ---- loop-invariant code motion --------------------------------------------- */

typedef struct Licm {
    unsigned char *inside; /* by id: defined in the loop being processed */
    int nids;
} Licm;

static void mark_inside(Licm *l, const IrBlock *b, unsigned char v)
{
    for (int i = 0; i < b->nargs; i++)
        if (b->args[i]->id >= 0 && b->args[i]->id < l->nids)
            l->inside[b->args[i]->id] = v;
    for (const IrOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nres; i++)
            if (op->results[i]->id >= 0 && op->results[i]->id < l->nids)
                l->inside[op->results[i]->id] = v;
        for (int r = 0; r < op->nregions; r++)
            mark_inside(l, op->regions[r], v);
    }
}

static bool invariant(const Licm *l, const IrOp *op)
{
    for (int i = 0; i < op->nops; i++) {
        int id = op->operands[i]->id;
        if (id < 0 || id >= l->nids || l->inside[id])
            return false;
    }
    return true;
}

static void licm_block(Licm *l, IrBlock *b);

static void hoist_from(Licm *l, IrOp *loop)
{
    IrBlock *body = loop->regions[0];
    licm_block(l, body); /* inner loops first */
    mark_inside(l, body, 1);
    for (IrOp *op = body->first, *next; op; op = next) {
        next = op->next;
        if (!is_pure(op) || may_trap(op) || !invariant(l, op))
            continue;
        ir_remove(op);
        ir_insert_before(loop, op);
        for (int i = 0; i < op->nres; i++)
            if (op->results[i]->id >= 0 && op->results[i]->id < l->nids)
                l->inside[op->results[i]->id] = 0;
    }
    mark_inside(l, body, 0);
}

static void licm_block(Licm *l, IrBlock *b)
{
    for (IrOp *op = b->first, *next; op; op = next) {
        next = op->next;
        if (op->kind == IR_FOR && op->nregions == 1)
            hoist_from(l, op);
        else
            for (int r = 0; r < op->nregions; r++)
                licm_block(l, op->regions[r]);
    }
}

/* ---- common subexpressions ----------------------------------------------------- */

typedef struct Entry {
    IrOp *op;
    struct Entry *next; /* same bucket, older */
    int bucket;
} Entry;

typedef struct Cse {
    Entry **buckets;
    int nbuckets;
    Entry *pool; /* a stack: scopes pop back to a mark */
    int top, cap;
    IrValue **repl; /* by id: the value that replaces it, or NULL */
    int nids;
} Cse;

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_op(const IrOp *a, const IrOp *b)
{
    if (a->kind != b->kind || a->nops != b->nops || a->nres != b->nres || a->sub != b->sub ||
        a->axis != b->axis || a->flags != b->flags || a->ival != b->ival || a->ival2 != b->ival2 ||
        memcmp(&a->fval, &b->fval, sizeof a->fval) != 0 || a->nints != b->nints ||
        !str_eq(a->str, b->str) || !str_eq(a->str2, b->str2))
        return false;
    for (int i = 0; i < a->nints && i < TK_MAX_RANK; i++)
        if (a->ints[i] != b->ints[i])
            return false;
    for (int i = 0; i < a->nops; i++)
        if (a->operands[i] != b->operands[i])
            return false;
    /* after pass_layout two equal blocks in different layouts (a dot's
     * accumulator and a blocked copy) are different values */
    for (int i = 0; i < a->nres; i++)
        if (!type_eq(a->results[i]->type, b->results[i]->type) ||
            a->results[i]->layout != b->results[i]->layout)
            return false;
    return true;
}

static int op_hash(const Cse *c, const IrOp *op)
{
    uint64_t h = hash_bytes(0, &op->kind, sizeof op->kind);
    h = hash_bytes(h, &op->sub, sizeof op->sub);
    h = hash_bytes(h, &op->ival, sizeof op->ival);
    h = hash_bytes(h, &op->fval, sizeof op->fval);
    for (int i = 0; i < op->nops; i++)
        h = hash_bytes(h, &op->operands[i]->id, sizeof(int));
    if (op->nres)
        h = hash_bytes(h, &op->results[0]->type, sizeof(Type));
    return (int)(h % (uint64_t)c->nbuckets);
}

static void rewrite_operands(Cse *c, IrOp *op)
{
    for (int i = 0; i < op->nops; i++) {
        IrValue *v = op->operands[i];
        if (v && v->id >= 0 && v->id < c->nids && c->repl[v->id])
            op->operands[i] = c->repl[v->id];
    }
}

static void cse_block(Cse *c, IrBlock *b)
{
    int mark = c->top;
    for (IrOp *op = b->first, *next; op; op = next) {
        next = op->next;
        rewrite_operands(c, op);
        for (int r = 0; r < op->nregions; r++)
            cse_block(c, op->regions[r]);
        if (!is_pure(op) || c->top == c->cap)
            continue;
        int h = op_hash(c, op);
        Entry *e = c->buckets[h];
        while (e && !same_op(e->op, op))
            e = e->next;
        if (e) {
            for (int i = 0; i < op->nres; i++)
                if (op->results[i]->id >= 0 && op->results[i]->id < c->nids)
                    c->repl[op->results[i]->id] = e->op->results[i];
            ir_remove(op);
            continue;
        }
        Entry *n = &c->pool[c->top++];
        n->op = op;
        n->bucket = h;
        n->next = c->buckets[h];
        c->buckets[h] = n;
    }
    while (c->top > mark) { /* LIFO: each popped entry heads its bucket */
        Entry *e = &c->pool[--c->top];
        c->buckets[e->bucket] = e->next;
    }
}

static bool count_op(IrOp *op, void *ctx)
{
    (*(int *)ctx)++;
    return true;
}

void pass_cse(IrFunc *f)
{
    int nops = 0;
    ir_walk(f->body, count_op, &nops);
    int nids = f->next_id > 0 ? f->next_id : 1;
    Licm l = {tk_xalloc((size_t)nids), nids};
    Cse c = {0};
    c.nbuckets = 2 * nops + 1;
    c.cap = nops + 1;
    c.nids = nids;
    c.buckets = tk_xalloc(sizeof(Entry *) * (size_t)c.nbuckets);
    c.pool = tk_xalloc(sizeof(Entry) * (size_t)c.cap);
    c.repl = tk_xalloc(sizeof(IrValue *) * (size_t)nids);
    if (l.inside && c.buckets && c.pool && c.repl) { /* else: out of memory, IR unchanged */
        memset(l.inside, 0, (size_t)nids);
        memset(c.buckets, 0, sizeof(Entry *) * (size_t)c.nbuckets);
        memset(c.repl, 0, sizeof(IrValue *) * (size_t)nids);
        licm_block(&l, f->body);
        cse_block(&c, f->body);
    }
    tk_xfree(l.inside);
    tk_xfree(c.buckets);
    tk_xfree(c.pool);
    tk_xfree(c.repl);
    ir_renumber(f);
}
