/* fresh.c: accumulators a loop resets to zeros become the dot's `fresh`
 * flag (pass_fresh), under which the dot counts its accumulator as zeros
 * (wgmma's scale-d, codegen/wgmma.c; a select elsewhere). Two spellings:
 *
 * after the dot, in the branch that hands a finished sum on (a persistent
 * GEMM's tile loop flattened by hand, its epilogue on the last K step):
 *
 *   for ... iter(acc = init):               for ... iter(acc = init, z = false):
 *     d = dot(a, b, acc)                      d = dot(a, b, acc, fresh z)
 *     r = if c { ...d...; yield 0 }     =>    if c { ...d...; yield 0 }
 *         else { yield d }                        else { yield d }
 *     yield r                                 yield d, c
 *
 * and before it, a sum started afresh at a tile's first K step:
 *
 *   d = dot(a, b, select(c, 0, acc))  or  dot(a, b, if c {0} else {acc})
 *     =>  d = dot(a, b, acc, fresh c)
 *
 * The loop then carries the dot's own result, which the pipeline needs to
 * leave the dot in flight into the next iteration (pipe_plan.c), and no
 * tile of zeros is selected in every iteration. Only where nothing else
 * reads the accumulator, the replaced value, or the loop's result. */
#include "passes/passes.h"

/* Branch br's value k is zeros in one arm and x in the other: the i1
 * under which it is zeros, built at b (the condition, or its negation);
 * NULL otherwise. */
static IrValue *zero_arm(IrBuilder *b, const IrOp *br, int k, const IrValue *x)
{
    if (br->kind != IR_IF || br->nregions != 2 || k < 0)
        return NULL;
    const IrValue *v[2];
    for (int r = 0; r < 2; r++) {
        const IrOp *y = br->regions[r]->last;
        if (!y || y->kind != IR_YIELD || k >= y->nops)
            return NULL;
        v[r] = y->operands[k];
    }
    IrValue *c = br->operands[0];
    if (ir_is_zero(v[0]) && v[1] == x)
        return c;
    if (ir_is_zero(v[1]) && v[0] == x)
        return ir_unary(b, IR_NOT, br->span, c, c->type);
    return NULL;
}

/* The dot reads its accumulator as zeros under flag. */
static bool set_fresh(IrFunc *f, IrOp *dot, IrValue *acc, IrValue *flag)
{
    IrValue **ops = arena_alloc(f->arena, sizeof(IrValue *) * 4);
    if (!ops || f->arena->oom)
        return false;
    ops[0] = dot->operands[0];
    ops[1] = dot->operands[1];
    ops[2] = acc;
    ops[3] = flag;
    dot->operands = ops;
    dot->nops = 4;
    return true;
}

static bool plain_dot(const IrOp *d, const IrBlock *body)
{
    return d && d->kind == IR_DOT && d->parent == body && d->nops == 3;
}

/* Slot j of loop: reset after its dot (the first spelling); the loop
 * that replaces it, or NULL. */
static IrOp *reset_after(IrFunc *f, IrOp *loop, int j)
{
    IrBlock *body = loop->regions[0];
    IrOp *y = body->last;
    IrValue *acc = body->args[j + 1], *r = y->operands[j];
    IrOp *br = r->def, *dot = NULL;
    if (!br || br->parent != body || br->kind != IR_IF || ir_count_reads(body, r) != 1 ||
        ir_count_reads(body, acc) != 1 || ir_count_reads(loop->parent, loop->results[j]))
        return NULL;
    for (IrOp *o = body->first; o && o != br; o = o->next)
        if (plain_dot(o, body) && o->operands[2] == acc)
            dot = o;
    IrBuilder at = {f, body, y};
    IrValue *flag = dot ? zero_arm(&at, br, ir_result_index(br, r), dot->results[0]) : NULL;
    if (!flag)
        return NULL;
    IrBuilder before = {f, loop->parent, loop};
    IrValue *no = ir_const_int(&before, loop->span, flag->type, 0), *z;
    no->name = "fresh";
    IrOp *nl = ir_for_carry_more(f, loop, &no, 1, &z);
    if (!nl || !set_fresh(f, dot, acc, z))
        return NULL;
    y->operands[j] = dot->results[0];
    ir_append_operand(f, y, flag);
    return nl;
}

/* The scalar a condition is, splatted or converted (tl.where over a tile
 * with a scalar condition), or NULL. */
static IrValue *scalar_of(IrValue *c)
{
    while (c->type.rank && c->def &&
           (c->def->kind == IR_SPLAT || c->def->kind == IR_CONVERT_LAYOUT))
        c = c->def->operands[0];
    return c->type.rank ? NULL : c;
}

/* Dot d's accumulator: zeros or acc (the second spelling). */
static bool reset_before(IrFunc *f, IrOp *d)
{
    IrValue *in = d->operands[2];
    IrOp *s = in->def;
    if (!s || s->parent != d->parent || ir_count_reads(d->parent, in) != 1)
        return false;
    IrBuilder at = {f, d->parent, d};
    IrValue *flag = NULL, *acc = NULL;
    IrValue *c = s->kind == IR_SELECT ? scalar_of(s->operands[0]) : NULL;
    if (c) {
        int z = ir_is_zero(s->operands[1]) ? 1 : ir_is_zero(s->operands[2]) ? 2 : 0;
        acc = z ? s->operands[3 - z] : NULL;
        flag = !acc ? NULL : z == 1 ? c : ir_unary(&at, IR_NOT, s->span, c, c->type);
    } else if (s->kind == IR_IF) {
        int k = ir_result_index(s, in);
        for (int r = 0; r < 2 && s->nregions == 2 && !acc; r++) {
            const IrOp *y = s->regions[r]->last;
            IrValue *v = y && y->kind == IR_YIELD && k < y->nops ? y->operands[k] : NULL;
            if (v && !ir_is_zero(v) && !ir_defined_in(v, s->regions[r]))
                acc = v;
        }
        flag = acc ? zero_arm(&at, s, k, acc) : NULL;
    }
    return flag && set_fresh(f, d, acc, flag);
}

typedef struct Fresh {
    IrFunc *f;
    bool ok;
} Fresh;

static bool visit(IrOp *op, void *ctx)
{
    Fresh *x = ctx;
    if (plain_dot(op, op->parent) && !reset_before(x->f, op) && x->f->arena->oom)
        x->ok = false;
    if (op->kind != IR_FOR || op->nregions != 1)
        return x->ok;
    IrOp *loop = op;
    for (int j = 0; j + 1 < loop->regions[0]->nargs && j < loop->nres; j++) {
        IrOp *nl = loop->regions[0]->args[j + 1]->type.rank ? reset_after(x->f, loop, j) : NULL;
        loop = nl ? nl : loop;
    }
    if (loop != op) /* op is gone: the walk goes on in the loop that replaced it */
        ir_walk(loop->regions[0], visit, x);
    return x->ok && !x->f->arena->oom;
}

bool pass_fresh(IrFunc *f)
{
    Fresh x = {f, true};
    ir_walk(f->body, visit, &x);
    ir_renumber(f); /* the rewrites left ids unused */
    return x.ok && !f->arena->oom;
}
