/* pipeline.c: software pipelining of dot operands (pass_pipeline). In a
 * `for` loop with num_stages S >= 2, a load whose only use is the tile a
 * tensor-core dot reads becomes an asynchronous copy (cp.async) into a ring
 * of S shared buffers, issued S-1 iterations ahead:
 *
 *   prologue:  copies for iterations 0 .. S-2, one commit group each
 *   iteration i:  wait until the copies of iteration i landed (+ barrier);
 *              the dot reads slot i % S; copies for iteration i+S-1 go to
 *              slot (i+S-1) % S, which iteration i-1 read before the barrier
 *   after:     wait for every group (+ barrier)
 *
 * On sm_90a a wgmma dot whose accumulator circulates through the loop
 * (acc = dot(a, b, acc), or attention's dot(p, v, acc * alpha)) and whose B
 * is such a copy is made asynchronous: it leaves its instructions in flight
 * into the next iteration, a dot_wait after the loop reads the result, and
 * one inside reads the accumulator where the body does other than feed the
 * dot (wait_in_body). The tiles an iteration's wgmma reads may
 * then still be read during the next iteration, so the ring gets one more
 * slot: the copies of iteration i+S-1 overwrite what iteration i-2 read.
 *
 * The loads' address slice (the ops computing pointer and mask from the
 * induction variable and from loop-carried pointers advanced each iteration)
 * runs S-1 iterations ahead: the loop carries the pointers of iteration
 * i+S-1 and the slice sees iv + (S-1)*step. Copies past the end are masked
 * off (and read nothing). Loops whose slice is not so self-contained (a
 * carried value also used by other code, a load feeding its own address,
 * nested regions) are left alone, and so are loops with an atomic or a
 * barrier, which may order the loads. Runs after pass_layout, on GPU code only:
 * the interpreter never sees these ops.
 *
 * Loads no dot reads are pipelined too where the loop asks for it with
 * tl.range(..., num_stages=S), as Triton does (a loop that only has the
 * launch's num_stages keeps its plain loads). Such a load's ring is
 * private: every thread copies its own elements, in runs of 4 to 16
 * bytes, into its own part of each slot, and reads them back itself after
 * its own wait, so the loop needs no barrier. The copies of iteration
 * i+S-1 read memory before the stores of iterations i .. i+S-2 run, so a
 * load is taken only when no store of the loop may write what it reads:
 * their pointers come from different parameters.
 *
 * On sm_90a, where the launcher builds tensor maps (f->tma), a load that is
 * a tile of a 2-D strided tensor (tile.c) is copied by TMA instead: one
 * thread issues the whole tile with the slot's mbarrier counting its bytes,
 * and each iteration waits on the barrier of the slot it reads before the
 * CTA barrier. Its tile's origin is computed from the iteration index,
 * not from the pointers the slice carries; in a flattened loop also from
 * the body's scalars (the tile's offsets, the K step), whose values for
 * the copy's iteration the slice computes (emit_tma).
 *
 * A loop that asks for it with tl.range(..., warp_specialize=True) is
 * warp-specialized where every ring is such a TMA tile read by the body's
 * one dot, a wgmma, and the loop sits at the kernel's top level (a
 * flattened loop: in the ifs pass_flatten puts around it): an extra
 * producer warpgroup issues every copy (warp_spec.c), so the loop itself
 * has no prologue, no copies and no barrier. Each iteration waits for its
 * slot's tiles, and after its dot, by which time the wgmma of the
 * iteration before has completed, releases the slot that one read
 * (tma_release on the slot's empty mbarrier, which the producer waits on
 * before it refills the slot). Elsewhere the request changes nothing. */
#include "passes/pipeline.h"
#include "passes/warp_spec.h"

#include <string.h>

static bool count_uses(IrOp *op, void *ctx)
{
    Pipe *p = ctx;
    for (int i = 0; i < op->nops; i++)
        if (op->operands[i] && op->operands[i]->id < p->nids)
            p->uses[op->operands[i]->id]++;
    return true;
}

/* ---- rewriting ----------------------------------------------------------------------- */

/* v as a block of `like`'s shape and layout (splat of a scalar i1). */
static IrValue *splat_like(IrBuilder *b, Span sp, IrValue *v, const IrValue *like)
{
    Type t = type_with_shape(v->type, like->type.rank, like->type.shape);
    IrValue *r = ir_unary(b, IR_SPLAT, sp, v, t);
    r->layout = like->layout;
    return r;
}

/* The copy of load `ld` for an iteration whose (cloned) pointer and mask are
 * given, valid when `live` (a scalar i1) holds. */
static void emit_copy(Pipe *p, IrBuilder *b, int i, IrValue *ptr, IrValue *mask, IrValue *live,
                      IrValue *slot)
{
    const IrOp *ld = p->loads[i];
    IrValue *m = splat_like(b, ld->span, live, ptr);
    if (mask) {
        Type mt = mask->type;
        m = ir_binary(b, IR_AND, ld->span, mask, m, mt);
        m->layout = mask->layout;
    }
    IrValue *ops[3] = {ptr, m, slot};
    IrOp *c = ir_build(b, IR_ASYNC_COPY, ld->span, ops, 3, NULL, 0);
    c->ival = p->f->nbuffers + i;
    c->ival2 = p->slots;
    c->sub = p->priv[i];
}

static IrValue *mapped(IrValue **map, int nids, IrValue *v);

/* The TMA copy of load i for iteration index j; map gives the values of
 * that iteration for the body's scalars the origin reads (a flattened
 * loop's, tile.c), as the slice's clones compute them. */
static void emit_tma(Pipe *p, IrBuilder *b, int i, IrValue *j, IrValue **map, IrValue *live,
                     IrValue *slot)
{
    const IrOp *ld = p->loads[i];
    TileMatch t = *p->tile[i];
    for (int s = 0; s < t.nsyms; s++)
        t.syms[s] = mapped(map, p->nids, (IrValue *)t.syms[s]);
    IrValue *ops[4] = {tile_coord(b, ld->span, &t, 0, j), tile_coord(b, ld->span, &t, 1, j), live,
                       slot};
    IrOp *c = ir_build(b, IR_TMA_COPY, ld->span, ops, 4, NULL, 0);
    c->ival = p->f->nbuffers + i;
    c->ival2 = p->slots;
    c->sub = p->tmap[i];
}

static IrValue *mapped(IrValue **map, int nids, IrValue *v)
{
    return v && v->id < nids && map[v->id] ? map[v->id] : v;
}

static IrOp *clone(Pipe *p, IrBuilder *b, const IrOp *op, IrValue **map)
{
    return ir_clone(b, op, map, p->nids);
}

/* Copies for iterations 0 .. S-2 before the loop; returns the carried
 * values of iteration S-1 in ahead[]. */
static void prologue(Pipe *p, IrValue **map, IrValue **ahead)
{
    IrOp *loop = p->loop;
    IrBuilder b = {p->f, loop->parent, loop};
    IrValue *lb = loop->operands[0], *ub = loop->operands[1], *step = loop->operands[2];
    int nc = p->body->nargs - 1;
    for (int k = 0; k < nc; k++)
        ahead[k] = loop->operands[3 + k];
    for (int s = 0; s < p->stages - 1; s++) {
        IrValue *iv = lb;
        if (s) {
            IrValue *d = ir_binary(&b, IR_MUL, loop->span, step,
                                   ir_const_int(&b, loop->span, step->type, s), step->type);
            iv = ir_binary(&b, IR_ADD, loop->span, lb, d, lb->type);
        }
        memset(map, 0, sizeof(IrValue *) * (size_t)p->nids);
        map[p->body->args[0]->id] = iv;
        for (int k = 0; k < nc; k++)
            map[p->body->args[k + 1]->id] = ahead[k];
        for (int i = 0; i < p->nslice; i++)
            clone(p, &b, p->slice[i], map);
        IrValue *live = ir_binary(&b, IR_CMP, loop->span, iv, ub, type_scalar(DT_I1));
        live->def->sub = CMP_LT;
        IrValue *slot = ir_const_int(&b, loop->span, type_scalar(DT_I32), s);
        IrValue *j = ir_const_int(&b, loop->span, type_scalar(DT_I32), s);
        for (int i = 0; i < p->nloads; i++) {
            const IrOp *ld = p->loads[i];
            if (p->tile[i])
                emit_tma(p, &b, i, j, map, live, slot);
            else
                emit_copy(p, &b, i, mapped(map, p->nids, ld->operands[0]),
                          ld->nops > 1 ? mapped(map, p->nids, ld->operands[1]) : NULL, live, slot);
        }
        if (p->ncp)
            ir_build(&b, IR_ASYNC_COMMIT, loop->span, NULL, 0, NULL, 0);
        const IrOp *y = p->body->last;
        IrValue *next[64];
        for (int k = 0; k < nc && k < 64; k++)
            next[k] = p->carried[k] ? mapped(map, p->nids, y->operands[k]) : ahead[k];
        for (int k = 0; k < nc && k < 64; k++)
            ahead[k] = next[k];
    }
}

/* A new `for` with more carried slot counters: the one the body reads
 * and, unless wr is NULL (warp specialization: the producer writes), the
 * one its copies write. The body moves over. */
static IrOp *widen_loop(Pipe *p, IrValue **ahead, IrValue **rd, IrValue **wr)
{
    IrOp *old = p->loop;
    IrBuilder b = {p->f, old->parent, old};
    int n = old->nops, nc = wr ? 2 : 1;
    IrValue **ops = arena_alloc(p->f->arena, sizeof(IrValue *) * (size_t)(n + 2));
    Type *res = arena_alloc(p->f->arena, sizeof(Type) * (size_t)(old->nres + 2));
    if (!ops || !res || p->f->arena->oom)
        return NULL;
    for (int i = 0; i < n; i++)
        ops[i] = i >= 3 && p->carried[i - 3] ? ahead[i - 3] : old->operands[i];
    ops[n] = ir_const_int(&b, old->span, type_scalar(DT_I32), 0);
    ops[n + 1] = ir_const_int(&b, old->span, type_scalar(DT_I32), p->stages - 1);
    for (int i = 0; i < old->nres; i++)
        res[i] = old->results[i]->type;
    res[old->nres] = res[old->nres + 1] = type_scalar(DT_I32);
    IrOp *loop = ir_build(&b, IR_FOR, old->span, ops, n + nc, res, old->nres + nc);
    loop->ival = old->ival;
    loop->flags = old->flags;
    for (int i = 0; i < old->nres; i++) {
        loop->results[i]->layout = old->results[i]->layout;
        loop->results[i]->name = old->results[i]->name;
        ir_replace_uses(old->parent, old->results[i], loop->results[i]);
    }
    IrBlock *body = old->regions[0];
    loop->regions = old->regions;
    loop->nregions = 1;
    body->parent = loop;
    old->nregions = 0;
    ir_remove(old);
    *rd = ir_block_add_arg(p->f, body, type_scalar(DT_I32), "read_slot");
    if (wr)
        *wr = ir_block_add_arg(p->f, body, type_scalar(DT_I32), "write_slot");
    p->loop = loop;
    return loop;
}

static bool all_private(const Pipe *p)
{
    for (int i = 0; i < p->nloads; i++)
        if (!p->priv[i])
            return false;
    return true;
}

/* Load i becomes a view of its ring's slot rd. */
static void view_ring(Pipe *p, int i, IrValue *rd)
{
    IrOp *ld = p->loads[i];
    IrBuilder here = {p->f, p->body, ld};
    Type t = ld->results[0]->type;
    IrOp *v = ir_build(&here, IR_SHARED_VIEW, ld->span, &rd, 1, &t, 1);
    v->ival = p->f->nbuffers + i;
    v->ival2 = p->slots;
    v->sub = p->priv[i];
    if (p->priv[i]) {
        v->results[0]->layout = ld->results[0]->layout; /* read back into registers */
    } else {
        Layout sh = pipe_shared_for(p, i);
        v->results[0]->layout = ir_layout_intern(p->f, &sh);
    }
    v->results[0]->name = ld->results[0]->name;
    ir_replace_uses(p->body, ld->results[0], v->results[0]);
    ir_remove(ld);
}

/* The yield of the body with one more value. */
static void yield_also(Pipe *p, IrOp *yield, IrValue *x)
{
    IrValue **ops = arena_alloc(p->f->arena, sizeof(IrValue *) * (size_t)(yield->nops + 1));
    if (!ops || p->f->arena->oom)
        return;
    if (yield->nops) /* a loop that carries nothing yields nothing */
        memcpy(ops, yield->operands, sizeof(IrValue *) * (size_t)yield->nops);
    ops[yield->nops] = x;
    yield->operands = ops;
    yield->nops++;
}

static void rewrite_body(Pipe *p, IrValue **map, IrValue *rd, IrValue *wr)
{
    IrOp *loop = p->loop;
    IrBlock *body = p->body;
    IrBuilder b = {p->f, body, body->first};
    Span sp = loop->span;
    IrValue *iv = body->args[0], *ub = loop->operands[1], *step = loop->operands[2];
    IrValue *d = ir_binary(&b, IR_MUL, sp, step, ir_const_int(&b, sp, step->type, p->stages - 1),
                           step->type);
    IrValue *ahead = ir_binary(&b, IR_ADD, sp, iv, d, iv->type);
    IrValue *j = p->ncp < p->nloads ? ir_iteration_index(&b, sp, ahead, loop->operands[0],
                                                          step->def->ival)
                                    : NULL;
    for (int i = 0; i < p->nloads; i++) {
        if (!p->tile[i])
            continue;
        IrOp *tw = ir_build(&b, IR_TMA_WAIT, sp, &rd, 1, NULL, 0);
        tw->ival = p->f->nbuffers + i;
        tw->ival2 = p->slots;
    }
    IrOp *w = ir_build(&b, IR_ASYNC_WAIT, sp, NULL, 0, NULL, 0);
    w->ival = p->ncp ? p->stages - 2 : -1; /* -1: no cp.async group to wait for */
    w->ival2 = p->wgmma; /* the copies are read through the async proxy */
    w->sub = all_private(p); /* each thread reads only what it copied: no barrier */
    IrValue *live = ir_binary(&b, IR_CMP, sp, ahead, ub, type_scalar(DT_I1));
    live->def->sub = CMP_LT;
    /* the slice again, for iteration i+S-1: the carried arguments already
     * hold that iteration's values. In a flattened tile loop it goes at the
     * end of the body, next to the copies it feeds: its tile indices and
     * coordinates are then not live across the dots and the epilogue */
    memset(map, 0, sizeof(IrValue *) * (size_t)p->nids);
    map[iv->id] = ahead;
    IrOp *yield = body->last;
    IrBuilder end = {p->f, body, yield};
    IrBuilder *at_slice = (loop->flags & IRF_FLATTEN) ? &end : &b;
    for (int i = 0; i < p->nslice; i++)
        clone(p, at_slice, p->slice[i], map);
    for (int k = 0; k < yield->nops && k < body->nargs - 1; k++)
        if (p->carried[k])
            yield->operands[k] = mapped(map, p->nids, yield->operands[k]);
    for (int i = 0; i < p->nloads; i++) {
        IrOp *ld = p->loads[i];
        IrBuilder at = {p->f, body, yield};
        if (p->tile[i])
            emit_tma(p, &at, i, j, map, live, wr);
        else
            emit_copy(p, &at, i, mapped(map, p->nids, ld->operands[0]),
                      ld->nops > 1 ? mapped(map, p->nids, ld->operands[1]) : NULL, live, wr);
        view_ring(p, i, rd);
    }
    IrBuilder at = {p->f, body, yield};
    if (p->ncp)
        ir_build(&at, IR_ASYNC_COMMIT, sp, NULL, 0, NULL, 0);
    IrValue *nrd = ir_next_slot(&at, sp, rd, p->slots);
    IrValue *nwr = ir_next_slot(&at, sp, wr, p->slots);
    yield_also(p, yield, nrd);
    yield_also(p, yield, nwr);
    IrBuilder after = {p->f, loop->parent, loop->next};
    IrOp *drain = ir_build(&after, IR_ASYNC_WAIT, sp, NULL, 0, NULL, 0);
    drain->ival = p->ncp ? 0 : -1;
    drain->sub = all_private(p);
}

/* The body's only dot, a direct child of it; NULL when there are others
 * (nested ones count). */
typedef struct Dots {
    IrOp *dot;
    int n;
} Dots;

static bool count_dot(IrOp *op, void *ctx)
{
    Dots *d = ctx;
    if (op->kind == IR_DOT) {
        d->dot = op;
        d->n++;
    }
    return true;
}

static IrOp *only_dot(const Pipe *p)
{
    Dots d = {NULL, 0};
    ir_walk(p->body, count_dot, &d);
    return d.n == 1 && d.dot->parent == p->body ? d.dot : NULL;
}

/* The consumers' side of a warp-specialized loop (see the top). The
 * release goes right after the dot: its wgmma leaves at most its own group
 * in flight, so the previous iteration's reads of its slot are done. */
static void rewrite_ws(Pipe *p, IrValue *rd)
{
    IrBlock *body = p->body;
    IrBuilder b = {p->f, body, body->first};
    Span sp = p->loop->span;
    Type i32 = type_scalar(DT_I32), i1 = type_scalar(DT_I1);
    for (int i = 0; i < p->nloads; i++) {
        IrOp *tw = ir_build(&b, IR_TMA_WAIT, sp, &rd, 1, NULL, 0);
        tw->ival = p->f->nbuffers + i;
        tw->ival2 = p->slots;
    }
    for (int i = 0; i < p->nloads; i++)
        view_ring(p, i, rd);
    IrOp *dot = only_dot(p);
    IrBuilder at = {p->f, body, dot->next};
    IrValue *first = ir_binary(&at, IR_CMP, sp, rd, ir_const_int(&at, sp, i32, 0), i1);
    first->def->sub = CMP_EQ;
    IrValue *sel[3] = {first, ir_const_int(&at, sp, i32, p->slots - 1),
                       ir_binary(&at, IR_SUB, sp, rd, ir_const_int(&at, sp, i32, 1), i32)};
    IrValue *rel[2] = {ir_build(&at, IR_SELECT, sp, sel, 3, &i32, 1)->results[0],
                       ir_binary(&at, IR_CMP, sp, body->args[0], p->loop->operands[0], i1)};
    rel[1]->def->sub = CMP_NE; /* no iteration before the first */
    for (int i = 0; i < p->nloads; i++) {
        IrOp *r = ir_build(&at, IR_TMA_RELEASE, sp, rel, 2, NULL, 0);
        r->ival = p->f->nbuffers + i;
        r->ival2 = p->slots;
    }
    IrBuilder end = {p->f, body, body->last};
    yield_also(p, body->last, ir_next_slot(&end, sp, rd, p->slots));
}

static bool is_load_of(const Pipe *p, const IrValue *v)
{
    while (v && v->def && v->def->kind == IR_CONVERT_LAYOUT)
        v = v->def->operands[0];
    for (int i = 0; i < p->nloads; i++)
        if (v && v->def == p->loads[i])
            return true;
    return false;
}

/* Bytes of shared memory one slot of every ring takes. */
static int64_t slot_bytes(const Pipe *p)
{
    int64_t n = 0;
    for (int i = 0; i < p->nloads; i++) {
        Type t = p->loads[i]->results[0]->type;
        n += (type_numel(t) * (dtype_bits(t.dt) / 8) + 1023) / 1024 * 1024;
    }
    return n;
}

/* Whether an sm_90a dot of the body reads an operand from the rings:
 * wgmma then reads it through the async proxy. */
static bool reads_as_wgmma(const Pipe *p)
{
    if (!p->f->arch || strcmp(p->f->arch, "sm_90a") != 0)
        return false;
    for (IrOp *o = p->body->first; o; o = o->next)
        if (o->kind == IR_DOT && o->results[0]->layout && o->results[0]->layout->version == 3 &&
            (is_load_of(p, o->operands[0]) || is_load_of(p, o->operands[1])))
            return true;
    return false;
}

/* Which carried value dot o accumulates into, across iterations: the yield
 * slot of its result, when its accumulator is that slot's argument or
 * (attention's acc * alpha) that argument scaled; else -1. */
static int carried_index(const Pipe *p, const IrOp *o)
{
    const IrValue *acc = o->operands[2];
    while (acc->def && acc->def->parent == p->body && acc->def->kind == IR_MUL &&
           p->uses[acc->id] == 1)
        acc = acc->def->operands[0];
    return acc->def || acc->owner != p->body ? -1 : acc->index - 1;
}

typedef struct Reads {
    const IrValue *x;
    int n;
} Reads;

static bool count_reads(IrOp *op, void *ctx)
{
    Reads *r = ctx;
    for (int i = 0; i < op->nops; i++)
        r->n += op->operands[i] == r->x;
    return true;
}

static int reads_in(IrBlock *b, const IrValue *x)
{
    Reads r = {x, 0};
    ir_walk(b, count_reads, &r);
    return r.n;
}

/* Reads of x inside the regions of the body's ifs (a flattened loop's
 * epilogue reads the accumulator there, once per tile). */
static int uses_in_ifs(const Pipe *p, const IrValue *x)
{
    int n = 0;
    for (IrOp *o = p->body->first; o; o = o->next)
        for (int r = 0; o->kind == IR_IF && r < o->nregions; r++)
            n += reads_in(o->regions[r], x);
    return n;
}

/* The regions of the body's ifs read x through a dot_wait at their start,
 * so the wait runs only where they do. */
static void wait_in_ifs(Pipe *p, IrValue *x)
{
    for (IrOp *o = p->body->first; o; o = o->next)
        for (int r = 0; o->kind == IR_IF && r < o->nregions; r++) {
            IrBlock *blk = o->regions[r];
            if (!reads_in(blk, x))
                continue;
            IrBuilder b = {p->f, blk, blk->first};
            IrValue *w = ir_unary(&b, IR_DOT_WAIT, o->span, x, x->type);
            w->layout = x->layout;
            w->name = x->name;
            ir_replace_uses(blk, x, w);
            w->def->operands[0] = x;
        }
}

/* The dot of the body that can stay in flight (see the top), or NULL: not
 * where the extra slot would not fit in sm_90's 227 KB of shared memory,
 * and never a tf32x3 dot, which waits for its cross terms (codegen/wgmma.c)
 * and so for all of its work. */
static IrOp *async_dot(const Pipe *p)
{
    if (!p->f->arch || strcmp(p->f->arch, "sm_90a") != 0 ||
        (p->stages + 1) * slot_bytes(p) > 227 * 1024)
        return NULL;
    const IrOp *yield = p->body->last;
    for (IrOp *o = p->body->first; o; o = o->next) {
        if (o->kind != IR_DOT || !o->results[0]->layout || o->results[0]->layout->version != 3 ||
            o->sub == DOT_TF32X3)
            continue;
        const IrValue *r = o->results[0];
        int k = carried_index(p, o);
        if (k < 0 || k >= yield->nops || yield->operands[k] != r ||
            p->uses[r->id] != 1 + uses_in_ifs(p, r))
            continue;
        /* A from a copy or from registers (attention's p): codegen leaves the
         * group in flight only where what it reads stays put */
        if (is_load_of(p, o->operands[1]))
            return o;
    }
    return NULL;
}

/* The first op of block b that reads x, or NULL. */
static IrOp *first_use(IrBlock *b, const IrValue *x)
{
    for (IrOp *op = b->first; op; op = op->next)
        for (int i = 0; i < op->nops; i++)
            if (op->operands[i] == x)
                return op;
    return NULL;
}

/* The body reads the carried accumulator x other than as the dot's own
 * accumulator (attention rescales it): those reads go through a dot_wait
 * just before the first of them, so the previous iteration's instructions
 * stay in flight until then. */
static void wait_in_body(Pipe *p, IrValue *x)
{
    IrOp *at = first_use(p->body, x);
    if (!at || (at == p->dot && p->dot->operands[2] == x && p->uses[x->id] == 1))
        return; /* only the dot chains on it, in the tensor cores' order */
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

/* Appends a tensor map to the function; its index, or -1 out of memory. */
static int add_tmap(IrFunc *f, const IrTmap *t)
{
    IrTmap *maps = arena_alloc(f->arena, sizeof(IrTmap) * (size_t)(f->ntmaps + 1));
    if (!maps || f->arena->oom)
        return -1;
    if (f->ntmaps)
        memcpy(maps, f->tmaps, sizeof(IrTmap) * (size_t)f->ntmaps);
    maps[f->ntmaps] = *t;
    f->tmaps = maps;
    return f->ntmaps++;
}

/* The tensor maps of the loads TMA copies; false out of memory. */
static bool add_tmaps(Pipe *p)
{
    p->ncp = p->nloads;
    for (int i = 0; i < p->nloads; i++) {
        if (!p->tile[i])
            continue;
        if ((p->tmap[i] = add_tmap(p->f, &p->tile[i]->map)) < 0)
            return false;
        p->ncp--;
    }
    return true;
}

/* Whether the loop, which asks for it, is warp-specialized (see the top):
 * room for a producer warpgroup beside the consumers, every ring a TMA
 * tile, the body's one dot a wgmma, and the producer able to compute its
 * copies from what the kernel's top level computes before the loop. */
static bool warp_specialized(Pipe *p)
{
    IrFunc *f = p->f;
    /* 4 or 8 consumer warps: at 16, the 640 threads leave 96 registers a
     * thread at launch, too few for the accumulators of the tiles 16 warps
     * are for */
    if (f->producer_warps || !p->wgmma || (f->num_warps != 4 && f->num_warps != 8) ||
        !only_dot(p))
        return false;
    WsRing r[MAX_LOADS];
    for (int i = 0; i < p->nloads; i++) {
        if (!p->tile[i])
            return false;
        r[i] = (WsRing){p->tile[i], 0, 0};
    }
    return ws_computable(f, p->loop, r, p->nloads);
}

/* The producer of a warp-specialized loop, once its rings are numbered. */
static bool add_producer(Pipe *p)
{
    WsRing r[MAX_LOADS];
    for (int i = 0; i < p->nloads; i++)
        r[i] = (WsRing){p->tile[i], p->tmap[i], p->f->nbuffers + i};
    if (!ws_producer(p->f, p->loop, r, p->nloads, p->slots))
        return false;
    p->loop->flags |= IRF_WARP_SPEC;
    p->ws_loop = p->loop;
    return true;
}

static bool is_sync(IrOp *op, void *ctx)
{
    TK_UNUSED(ctx);
    return op->kind != IR_ATOMIC_RMW && op->kind != IR_ATOMIC_CAS && op->kind != IR_BARRIER;
}

/* The ring's slots. Under an asynchronous dot the copies for iteration
 * i+S-1 are issued after the wait that leaves only dot i in flight, so the
 * slot they overwrite, read by dot i-1, is free in the warpgroup that
 * waited; with one warpgroup (4 warps) S slots suffice, as in Triton. With
 * more, another warpgroup's dot i-1 may still read it, so the ring holds
 * one slot more; so does a warp-specialized loop, whose producer reuses a
 * slot only once the consumers release it. */
static int ring_slots(const Pipe *p)
{
    if (!p->dot)
        return p->stages;
    return p->stages + (p->ws || p->f->num_warps > 4 ? 1 : 0);
}

static void pipeline_loop(Pipe *p, IrOp *loop)
{
    bool ws_asked = (loop->flags & IRF_WARP_SPEC) != 0;
    /* an atomic or a barrier in the body may order the loads (a lock taken
     * each iteration): copies issued iterations ahead would read before it */
    if (!ir_walk(loop->regions[0], is_sync, NULL))
        return;
    p->loop = loop;
    p->body = loop->regions[0];
    p->stages = (int)(loop->ival > 0 ? loop->ival : p->f->num_stages);
    int nc = p->body->nargs - 1;
    const IrOp *step = loop->operands[2]->def;
    if (p->stages < 2 || nc > 64 || !step || step->kind != IR_CONST || step->ival < 1 ||
        !pipe_find_loads(p))
        return; /* copies run ahead only for loops known to count up */
    p->nslice = 0;
    memset(p->carried, 0, sizeof(bool) * 64);
    for (int i = 0; i < p->nloads; i++)
        for (int k = 0; k < p->loads[i]->nops && k < 2; k++) /* pointer, mask (may be none) */
            if (p->loads[i]->operands[k] && !pipe_pull(p, p->loads[i]->operands[k], 0))
                return;
    if (!pipe_slice_closed(p))
        return;
    p->wgmma = reads_as_wgmma(p);
    p->dot = async_dot(p);
    p->ws = ws_asked && warp_specialized(p);
    p->slots = ring_slots(p);
    IrValue **map = arena_alloc(p->f->arena, sizeof(IrValue *) * (size_t)p->nids);
    IrValue *ahead[64], *rd, *wr;
    if (!map || p->f->arena->oom || !add_tmaps(p))
        return;
    if (p->ws) { /* the producer copies: no prologue, the carried values as they were */
        for (int k = 0; k < nc; k++)
            ahead[k] = loop->operands[3 + k];
        if (!widen_loop(p, ahead, &rd, NULL))
            return;
        rewrite_ws(p, rd);
    } else {
        prologue(p, map, ahead);
        if (!widen_loop(p, ahead, &rd, &wr))
            return;
        rewrite_body(p, map, rd, wr);
    }
    if (p->dot)
        wait_for_dot(p);
    if (p->ws && !add_producer(p))
        return;
    p->f->nbuffers += p->nloads;
}

/* Loops whose body holds no other region: the K loops of GEMMs, also
 * inside a persistent loop over tiles; a flattened loop (pass_flatten) may
 * hold ifs (its epilogue). */
typedef struct Loops {
    Arena *a;
    PtrVec v;
} Loops;

static bool innermost_loop(IrOp *op, void *ctx)
{
    Loops *l = ctx;
    if (op->kind != IR_FOR || op->nregions != 1)
        return true;
    for (const IrOp *o = op->regions[0]->first; o; o = o->next)
        if (o->nregions && !(o->kind == IR_IF && (op->flags & IRF_FLATTEN)))
            return true;
    vec_push(l->a, &l->v, op);
    return true;
}

/* After the pass the flag marks the loop that was warp-specialized only. */
static bool clear_ws(IrOp *op, void *ctx)
{
    if (op->kind == IR_FOR && op != ctx)
        op->flags &= ~IRF_WARP_SPEC;
    return true;
}

void pass_pipeline(IrFunc *f)
{
    Pipe p;
    memset(&p, 0, sizeof p);
    p.f = f;
    p.nids = f->next_id;
    p.uses = arena_alloc(f->arena, sizeof(int) * (size_t)(p.nids + 1));
    p.slice = arena_alloc(f->arena, sizeof(IrOp *) * (size_t)(p.nids + 1));
    p.carried = arena_alloc(f->arena, sizeof(bool) * 64);
    if (!p.uses || !p.slice || !p.carried || f->arena->oom)
        return;
    p.axis = axis_analyze(f, f->arena);
    ir_walk(f->body, count_uses, &p);
    Loops loops = {f->arena, {0}};
    ir_walk(f->body, innermost_loop, &loops);
    for (int i = 0; i < loops.v.len && !f->arena->oom; i++)
        pipeline_loop(&p, loops.v.items[i]);
    ir_walk(f->body, clear_ws, p.ws_loop);
    ir_renumber(f);
}
