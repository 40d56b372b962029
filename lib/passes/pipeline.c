/* pipeline.c: the rings of software pipelining (pass pipeline_rings), and
 * what the other rewrites share. It follows the plan of pass
 * pipeline_plan (pipe_plan.c, IrPlan in ir.h) and decides nothing. In a
 * `for` planned with S stages, each planned load becomes an asynchronous
 * copy into a ring of shared buffers, issued S-1 iterations ahead:
 *
 *   prologue:  copies for iterations 0 .. S-2, one commit group each
 *   iteration i:  wait until the copies of iteration i landed (+ barrier);
 *              the dot reads slot i % slots; copies for iteration i+S-1
 *              go to slot (i+S-1) % slots, which an earlier iteration
 *              read before the barrier
 *   after:     wait for every group (+ barrier)
 *
 * The plan's slots are S, or S+1 under an asynchronous dot read by several
 * warpgroups (pipeline_async then leaves the dot in flight into the next
 * iteration, whose copies must not overwrite what it still reads).
 *
 * The loads' address slice (the ops computing pointer and mask from the
 * induction variable and from loop-carried pointers advanced each iteration)
 * runs S-1 iterations ahead: the loop carries the pointers of iteration
 * i+S-1 and the slice sees iv + (S-1)*step. Copies past the end are masked
 * off (and read nothing), and so are the slice's own loads (the indices
 * of a gathered tile, read ahead with it). A plan for a loop whose slice is not so
 * self-contained cannot be followed: the pass fails.
 *
 * A cp.async load (PIPE_CP_ASYNC) is copied in runs of 4 to 16 bytes
 * into a shared tile that every thread reads after the CTA barrier. A
 * private load (PIPE_PRIVATE) is copied by every thread, in runs of `run`
 * elements, into its own part of each slot, and read back by it alone
 * after its own wait, so the loop needs no barrier. A TMA load (PIPE_TMA,
 * sm_90a) is one copy of the whole tile by one thread, with the slot's
 * mbarrier counting its bytes; each iteration waits on the barrier of the
 * slot it reads before the CTA barrier. Its tile's origin is computed from
 * the iteration index, not from the pointers the slice carries; in a
 * flattened loop also from the body's scalars (the tile's offsets, the K
 * step), whose values for the copy's iteration the slice computes
 * (emit_tma). A warp-specialized loop's rings are left to pipeline_ws
 * (pipe_ws.c). Runs after pass_layout, on GPU code only: the interpreter
 * never sees these ops. */
#include "passes/pipeline.h"

#include <string.h>

/* ---- what the passes share --------------------------------------------------------- */

static bool count_uses(IrOp *op, void *ctx)
{
    Pipe *p = ctx;
    for (int i = 0; i < op->nops; i++)
        if (op->operands[i] && op->operands[i]->id < p->nids)
            p->uses[op->operands[i]->id]++;
    return true;
}

bool pipe_init(Pipe *p, IrFunc *f)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->nids = f->next_id;
    p->uses = arena_alloc(f->arena, sizeof(int) * (size_t)(p->nids + 1));
    p->slice = arena_alloc(f->arena, sizeof(IrOp *) * (size_t)(p->nids + 1));
    p->carried = arena_alloc(f->arena, sizeof(bool) * 64);
    if (!p->uses || !p->slice || !p->carried || f->arena->oom)
        return false;
    ir_walk(f->body, count_uses, p);
    return true;
}

const IrValue *pipe_strip_views(const IrValue *v)
{
    while (v && v->def && (v->def->kind == IR_CONVERT_LAYOUT || v->def->kind == IR_TRANS))
        v = v->def->operands[0];
    return v;
}

bool pipe_is_load_of(const Pipe *p, const IrValue *v)
{
    v = pipe_strip_views(v);
    for (int i = 0; i < p->nloads; i++)
        if (v && v->def == p->ld[i].op)
            return true;
    return false;
}

int64_t pipe_tile_bytes(const IrValue *v)
{
    return type_numel(v->type) * dtype_bits(v->type.dt) / 8;
}

/* What reads load i: its one dot, or NULL on another reader. */
typedef struct RingReader {
    const IrValue *x;
    IrOp *dot;
    bool other;
} RingReader;

static bool ring_reader(IrOp *op, void *ctx)
{
    RingReader *r = ctx;
    bool view = op->kind == IR_CONVERT_LAYOUT || op->kind == IR_TRANS;
    for (int k = 0; k < op->nops; k++) {
        if (!op->operands[k] || pipe_strip_views(op->operands[k]) != r->x || view)
            continue;
        if (op->kind == IR_DOT && k < 2 && (!r->dot || r->dot == op))
            r->dot = op;
        else
            r->other = true;
    }
    return true;
}

IrOp *pipe_ring_dot(const Pipe *p, int i)
{
    RingReader r = {p->ld[i].op->results[0], NULL, false};
    ir_walk(p->body, ring_reader, &r);
    return !r.other && r.dot && r.dot->parent == p->body ? r.dot : NULL;
}

int pipe_reads_in(IrBlock *b, const IrValue *x) { return ir_count_reads(b, x); }

bool pipe_op_reads(IrOp *op, const IrValue *x)
{
    for (int i = 0; i < op->nops; i++)
        if (op->operands[i] == x)
            return true;
    for (int r = 0; r < op->nregions; r++)
        if (ir_count_reads(op->regions[r], x))
            return true;
    return false;
}

/* Reads of x inside the regions of the body's ifs (a flattened loop's
 * epilogue reads the accumulator there, once per tile). */
int pipe_uses_in_ifs(const Pipe *p, const IrValue *x)
{
    int n = 0;
    for (IrOp *o = p->body->first; o; o = o->next)
        for (int r = 0; o->kind == IR_IF && r < o->nregions; r++)
            n += pipe_reads_in(o->regions[r], x);
    return n;
}

/* Whether an sm_90a dot of the body reads an operand from the rings:
 * wgmma then reads it through the async proxy. */
bool pipe_reads_as_wgmma(const Pipe *p)
{
    if (!p->f->arch || strcmp(p->f->arch, "sm_90a") != 0)
        return false;
    for (IrOp *o = p->body->first; o; o = o->next)
        if (o->kind == IR_DOT && o->results[0]->layout && o->results[0]->layout->version == 3 &&
            (pipe_is_load_of(p, o->operands[0]) || pipe_is_load_of(p, o->operands[1])))
            return true;
    return false;
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
    const IrOp *ld = p->ld[i].op;
    IrValue *m = splat_like(b, ld->span, live, ptr);
    if (mask) {
        Type mt = mask->type;
        m = ir_binary(b, IR_AND, ld->span, mask, m, mt);
        m->layout = mask->layout;
    }
    IrValue *ops[3] = {ptr, m, slot};
    IrOp *c = ir_build(b, IR_ASYNC_COPY, ld->span, ops, 3, NULL, 0);
    c->ival = p->ld[i].buf;
    c->ival2 = pipe_ring_slots(p, i);
    c->sub = p->ld[i].run;
    c->flags |= p->ld[i].packed ? IRF_PACKED : 0;
    c->flags |= p->ld[i].across ? IRF_ACROSS : 0;
}

static IrValue *mapped(IrValue **map, int nids, IrValue *v);

/* The TMA copy of load i for iteration index j; map gives the values of
 * that iteration for the body's scalars the origin reads (a flattened
 * loop's, tile.c), as the slice's clones compute them. */
static void emit_tma(Pipe *p, IrBuilder *b, int i, IrValue *j, IrValue **map, IrValue *live,
                     IrValue *slot, bool first)
{
    const IrOp *ld = p->ld[i].op;
    TileMatch t = *p->ld[i].tile;
    /* read before the symbols are mapped; a check in a later copy would
     * sit in the loop, where thread 0 could leave with wgmma in flight */
    bool nonneg = tile_origin_nonneg(&t) || (!first && tile_origin_grows(&t, p->loop));
    for (int s = 0; s < t.nsyms; s++)
        t.syms[s] = mapped(map, p->nids, (IrValue *)t.syms[s]);
    IrValue *ops[4] = {tile_coord(b, ld->span, &t, 0, j), tile_coord(b, ld->span, &t, 1, j), live,
                       slot};
    IrOp *c = ir_build(b, IR_TMA_COPY, ld->span, ops, 4, NULL, 0);
    c->ival = p->ld[i].buf;
    c->ival2 = p->slots;
    c->sub = p->ld[i].tmap;
    if (nonneg)
        c->flags |= IRF_NONNEG;
}

static IrValue *mapped(IrValue **map, int nids, IrValue *v)
{
    return v && v->id < nids && map[v->id] ? map[v->id] : v;
}

static IrOp *clone(Pipe *p, IrBuilder *b, const IrOp *op, IrValue **map)
{
    return ir_clone(b, op, map, p->nids);
}

/* The slice for an iteration ahead, at `at`. Its loads (a gathered tile's
 * indices) read only while that iteration is in range (`live`), so an
 * index table is never read past the loop's end. */
static void clone_slice(Pipe *p, IrBuilder *at, IrValue **map, IrValue *live)
{
    for (int i = 0; i < p->nslice; i++) {
        const IrOp *op = p->slice[i];
        IrValue *m = NULL;
        if (op->kind == IR_LOAD) {
            IrValue *ptr = mapped(map, p->nids, op->operands[0]);
            IrValue *mask = mapped(map, p->nids, op->operands[1]);
            m = ptr->type.rank ? splat_like(at, op->span, live, ptr) : live;
            if (mask) {
                m = ir_binary(at, IR_AND, op->span, mask, m, mask->type);
                m->layout = mask->layout;
            }
        }
        IrOp *c = clone(p, at, op, map);
        if (m && c)
            c->operands[1] = m;
    }
}

/* Copies for iterations 0 .. S-2 before the loop; returns the carried
 * values of iteration S-1 in ahead[], and each delayed value's of
 * iterations 0 .. S-2 in init[]. */
static void prologue(Pipe *p, IrValue **map, IrValue **ahead, IrValue **init)
{
    IrOp *loop = p->loop;
    IrBuilder b = {p->f, loop->parent, loop};
    IrValue *lb = loop->operands[0], *step = loop->operands[2];
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
        IrValue *live = pipe_in_range(&b, loop->span, loop, iv);
        clone_slice(p, &b, map, live);
        for (int d = 0; d < p->ndelay; d++)
            init[d * (p->stages - 1) + s] = mapped(map, p->nids, p->delay[d]);
        IrValue *slot = ir_const_int(&b, loop->span, type_scalar(DT_I32), s);
        IrValue *j = ir_const_int(&b, loop->span, type_scalar(DT_I32), s);
        for (int g = 0; g < p->ngroups; g++) {
            for (int i = 0; i < p->nloads; i++) {
                const IrOp *ld = p->ld[i].op;
                if (p->group[i] != g)
                    continue;
                if (p->ld[i].tile)
                    emit_tma(p, &b, i, j, map, live, slot, s == 0);
                else
                    emit_copy(p, &b, i, mapped(map, p->nids, ld->operands[0]),
                              ld->nops > 1 ? mapped(map, p->nids, ld->operands[1]) : NULL, live,
                              slot);
            }
            if (p->ncp)
                ir_build(&b, IR_ASYNC_COMMIT, loop->span, NULL, 0, NULL, 0);
        }
        const IrOp *y = p->body->last;
        IrValue *next[64];
        for (int k = 0; k < nc && k < 64; k++)
            next[k] = p->carried[k] ? mapped(map, p->nids, y->operands[k]) : ahead[k];
        for (int k = 0; k < nc && k < 64; k++)
            ahead[k] = next[k];
    }
}

IrOp *pipe_carry_more(Pipe *p, IrValue **init, int n, IrValue **args)
{
    IrOp *loop = ir_for_carry_more(p->f, p->loop, init, n, args);
    if (loop)
        p->loop = loop;
    return loop;
}

IrOp *pipe_widen_loop(Pipe *p, IrValue **ahead, IrValue **rd, IrValue **wr, IrValue **rf)
{
    IrOp *old = p->loop;
    IrBuilder b = {p->f, old->parent, old};
    for (int k = 0; k < old->nops - 3; k++)
        if (p->carried[k])
            old->operands[3 + k] = ahead[k];
    IrValue *init[3], *args[3];
    const char *names[3];
    IrValue **out[3];
    int n = 0;
    struct {
        IrValue **out;
        const char *name;
        int start;
    } slot[3] = {{rd, "read_slot", 0}, {wr, "write_slot", p->stages - 1}, {rf, "refill_slot", 0}};
    for (int i = 0; i < 3; i++) {
        if (!slot[i].out)
            continue;
        names[n] = slot[i].name;
        out[n] = slot[i].out;
        init[n++] = ir_const_int(&b, old->span, type_scalar(DT_I32), slot[i].start);
    }
    if (!pipe_carry_more(p, init, n, args))
        return NULL;
    for (int i = 0; i < n; i++) {
        args[i]->name = names[i];
        *out[i] = args[i];
    }
    return p->loop;
}

int pipe_ring_slots(const Pipe *p, int i) { return p->ld[i].refill ? p->stages - 1 : p->slots; }

bool pipe_read_by_others(const Pipe *p, int i) { return !p->ld[i].run || p->ld[i].packed; }

/* How many rings of p are refilled in place (shared: of those, the ones
 * other warps read too). */
static int refills(const Pipe *p, bool shared)
{
    int n = 0;
    for (int i = 0; i < p->nloads; i++)
        n += p->ld[i].refill && (!shared || pipe_read_by_others(p, i));
    return n;
}

static bool all_private(const Pipe *p)
{
    for (int i = 0; i < p->nloads; i++)
        if (pipe_read_by_others(p, i))
            return false;
    return true;
}

/* Load i becomes a view of its ring's slot rd. */
/* A transpose of a ring's tile that only dots read is the same tile read
 * the other way round: a shared layout with the order swapped, which the
 * dot reading it takes in place (codegen/mma.c). A tile read into
 * registers (pipeline_loads.c's read_in_registers) and transposed there
 * keeps its conversion. */
static void view_transposes(Pipe *p, IrValue *view)
{
    for (IrOp *o = p->body->first; o; o = o->next)
        if (o->kind == IR_TRANS && pipe_trans_reads(p, o, view) &&
            pass_only_dots_read(p->body, o->results[0])) {
            if (o->operands[0] != view) {
                IrOp *c = o->operands[0]->def;
                o->operands[0] = view;
                ir_remove(c);
            }
            o->results[0]->layout = pipe_shared_transposed(p->f, view->layout);
        }
}

const Layout *pipe_shared_transposed(IrFunc *f, const Layout *l)
{
    Layout t = *l;
    t.order[0] = l->order[1];
    t.order[1] = l->order[0];
    return ir_layout_intern(f, &t);
}

/* x in layout l, built at `at`: a conversion codegen recomputes there
 * (pipeline_loads.c's read_in_registers asks for values it can). */
static IrValue *convert_at(IrBuilder *at, IrValue *x, const Layout *l, Span sp)
{
    IrOp *c = ir_build(at, IR_CONVERT_LAYOUT, sp, &x, 1, &x->type, 1);
    c->results[0]->layout = l;
    c->results[0]->name = x->name;
    return c->results[0];
}

/* The copies of load ld's ring filled its masked-off elements with zeros:
 * each conversion that reads the ring into registers (read_in_registers)
 * puts ld's `other` there, with the mask and `other` recomputed in its
 * layout. */
static void other_after_reads(Pipe *p, const IrOp *ld, IrValue *view)
{
    for (IrOp *o = p->body->first; o && !p->f->arena->oom; o = o->next) {
        if (o->kind != IR_CONVERT_LAYOUT || o->operands[0] != view)
            continue;
        IrValue *r = o->results[0];
        IrBuilder at = {p->f, p->body, o->next};
        IrValue *ops[3] = {convert_at(&at, ld->operands[1], r->layout, o->span), r,
                           convert_at(&at, ld->operands[2], r->layout, o->span)};
        IrOp *sel = ir_build(&at, IR_SELECT, o->span, ops, 3, &r->type, 1);
        sel->results[0]->layout = r->layout;
        sel->results[0]->name = r->name;
        ir_replace_uses(p->body, r, sel->results[0]);
        sel->operands[1] = r;
        o = sel;
    }
}

IrValue *pipe_view_ring(Pipe *p, int i, IrValue *rd)
{
    IrOp *ld = p->ld[i].op;
    IrBuilder here = {p->f, p->body, ld};
    Type t = ld->results[0]->type;
    IrOp *v = ir_build(&here, IR_SHARED_VIEW, ld->span, &rd, 1, &t, 1);
    v->ival = p->ld[i].buf;
    v->ival2 = pipe_ring_slots(p, i);
    v->sub = p->ld[i].run;
    v->flags |= p->ld[i].packed ? IRF_PACKED : 0;
    if (p->ld[i].run) {
        v->results[0]->layout = ld->results[0]->layout; /* read back into registers */
    } else {
        Layout sh = pipe_shared_for(p, i);
        v->results[0]->layout = ir_layout_intern(p->f, &sh);
    }
    v->results[0]->name = ld->results[0]->name;
    IrValue *val = v->results[0];
    if (p->ld[i].run && ld->nops > 2 && ld->operands[1] && ld->operands[2] &&
        !ir_is_zero(ld->operands[2])) {
        /* the copy filled masked-off elements with zeros; put `other` there */
        IrValue *ops[3] = {ld->operands[1], val, ld->operands[2]};
        val = ir_build(&here, IR_SELECT, ld->span, ops, 3, &t, 1)->results[0];
        val->layout = v->results[0]->layout;
        val->name = v->results[0]->name;
    }
    ir_replace_uses(p->body, ld->results[0], val);
    ir_remove(ld);
    if (!p->ld[i].run) {
        view_transposes(p, v->results[0]);
        if (ld->nops > 2 && ld->operands[1] && ld->operands[2] && !ir_is_zero(ld->operands[2]))
            other_after_reads(p, ld, v->results[0]);
    }
    return v->results[0];
}

/* The yield of the body with one more value. */
void pipe_yield_also(Pipe *p, IrOp *yield, IrValue *x) { ir_append_operand(p->f, yield, x); }

/* At the top of the body: the waits until the slot rd it reads landed
 * (TMA barriers, then the cp.async groups and the CTA barrier). */
static IrOp *wait_for_slot(Pipe *p, IrBuilder *b, Span sp, IrValue *rd)
{
    for (int i = 0; i < p->nloads; i++) {
        if (!p->ld[i].tile)
            continue;
        IrOp *tw = ir_build(b, IR_TMA_WAIT, sp, &rd, 1, NULL, 0);
        tw->ival = p->ld[i].buf;
        tw->ival2 = p->slots;
    }
    IrOp *w = ir_build(b, IR_ASYNC_WAIT, sp, NULL, 0, NULL, 0);
    w->ival = p->ncp ? p->stages - 2 : -1; /* -1: no cp.async group to wait for */
    /* no proxy fence: cp.async and TMA are the ring's only writers, and
     * what they wrote is wgmma's to read once the wait and the barrier
     * (or the mbarrier) saw it land, as Triton's cp.async mainloop has
     * it; the fence cost a MEMBAR.ALL.CTA a K step */
    w->ival2 = 0;
    w->sub = all_private(p); /* each thread reads only what it copied: no barrier */
    return w;
}

/* At the end of the body: the commit of its copies and the next slots;
 * after the loop, the wait for every copy. */
static void close_iteration(Pipe *p, Span sp, IrValue *rd, IrValue *wr, IrValue *rf)
{
    IrOp *yield = p->body->last;
    IrBuilder at = {p->f, p->body, yield};
    if (p->ncp)
        ir_build(&at, IR_ASYNC_COMMIT, sp, NULL, 0, NULL, 0);
    if (rd) {
        pipe_yield_also(p, yield, ir_next_slot(&at, sp, rd, p->slots));
        pipe_yield_also(p, yield, ir_next_slot(&at, sp, wr, p->slots));
    }
    if (rf)
        pipe_yield_also(p, yield, ir_next_slot(&at, sp, rf, p->stages - 1));
    IrBuilder after = {p->f, p->loop->parent, p->loop->next};
    IrOp *drain = ir_build(&after, IR_ASYNC_WAIT, sp, NULL, 0, NULL, 0);
    drain->ival = p->ncp ? 0 : -1;
    drain->sub = all_private(p);
}

/* Before the copies that refill the slots the iteration read: a CTA
 * barrier, behind which every warp has read its part into registers. */
static void refill_barrier(Pipe *p, Span sp)
{
    IrBuilder at = {p->f, p->body, p->body->last};
    IrOp *w = ir_build(&at, IR_ASYNC_WAIT, sp, NULL, 0, NULL, 0);
    w->ival = -1; /* no group to wait for: the barrier alone */
}

static void rewrite_body(Pipe *p, IrValue **map, IrValue *rd, IrValue *wr, IrValue *rf)
{
    IrOp *loop = p->loop;
    IrBlock *body = p->body;
    IrBuilder b = {p->f, body, body->first};
    Span sp = loop->span;
    IrValue *iv = body->args[0], *step = loop->operands[2];
    IrValue *d = ir_binary(&b, IR_MUL, sp, step, ir_const_int(&b, sp, step->type, p->stages - 1),
                           step->type);
    IrValue *ahead = ir_binary(&b, IR_ADD, sp, iv, d, iv->type);
    IrValue *j = p->ncp < p->nloads
        ? ir_iteration_index(&b, sp, ahead, loop->operands[0], pipe_const_step(loop))
        : NULL;
    IrOp *top = wait_for_slot(p, &b, sp, rd);
    IrValue *live = pipe_in_range(&b, sp, loop, ahead);
    /* the slice again, for iteration i+S-1: the carried arguments already
     * hold that iteration's values. In a flattened tile loop it goes at the
     * end of the body, next to the copies it feeds: its tile indices and
     * coordinates are then not live across the dots and the epilogue */
    memset(map, 0, sizeof(IrValue *) * (size_t)p->nids);
    map[iv->id] = ahead;
    IrOp *yield = body->last;
    IrBuilder end = {p->f, body, yield};
    IrBuilder *at_slice = (loop->flags & IRF_FLATTEN) ? &end : &b;
    clone_slice(p, at_slice, map, live);
    for (int k = 0; k < yield->nops && k < body->nargs - 1; k++)
        if (p->carried[k])
            yield->operands[k] = mapped(map, p->nids, yield->operands[k]);
    IrOp *early[MAX_LOADS] = {NULL};
    IrValue *views[MAX_LOADS];
    int late = 0;
    for (int i = 0; i < p->nloads; i++)
        views[i] = pipe_view_ring(p, i, p->ld[i].refill ? rf : rd);
    pipe_early_points(p, views, early);
    for (int i = 0; i < p->nloads; i++)
        late += p->ld[i].refill && pipe_read_by_others(p, i) && !early[i];
    if (late)
        refill_barrier(p, sp);
    for (int i = 0; i < p->nloads; i++) {
        IrOp *ld = p->ld[i].op;
        IrBuilder at = {p->f, body, early[i] ? early[i] : yield};
        IrValue *slot = p->ld[i].refill ? rf : wr;
        bool shared_point = false;
        for (int k = 0; k < i; k++)
            shared_point |= early[k] && early[k] == early[i];
        if (early[i] && !shared_point) {
            IrOp *w = ir_build(&at, IR_ASYNC_WAIT, sp, NULL, 0, NULL, 0);
            w->ival = -1; /* the barrier alone: every warp has read the slot */
        }
        if (p->ld[i].tile)
            emit_tma(p, &at, i, j, map, live, slot, false);
        else
            emit_copy(p, &at, i, mapped(map, p->nids, ld->operands[0]),
                      ld->nops > 1 ? mapped(map, p->nids, ld->operands[1]) : NULL, live, slot);
    }
    for (int i = 0; i < p->nloads && p->ngroups > 1; i++) { /* each early point's group */
        bool first = early[i] != NULL;
        for (int k = 0; k < i && first; k++)
            first = early[k] != early[i];
        if (first)
            ir_build(&(IrBuilder){p->f, body, early[i]}, IR_ASYNC_COMMIT, sp, NULL, 0, NULL, 0);
    }
    pipe_wait_for_groups(p, top, views, early);
    close_iteration(p, sp, rd, wr, rf);
}

/* ---- following the plan -------------------------------------------------------------- */

/* Load o, planned for a ring, joins p's loads; false where its plan cannot
 * be followed: too many loads, or a TMA load that is no tile of its
 * tensor map. */
static bool add_planned_load(Pipe *p, IrOp *o)
{
    const IrPlan *pl = &o->plan;
    int i = p->nloads;
    if (i == MAX_LOADS)
        return false;
    p->ld[i].op = o;
    p->ld[i].buf = pl->buffer;
    p->ld[i].run = pl->mech == PIPE_PRIVATE ? pl->run : 0;
    p->ld[i].packed = pl->mech == PIPE_PRIVATE && pl->packed;
    p->ld[i].tile = NULL;
    p->ld[i].tmap = pl->tmap;
    p->ld[i].refill = (pl->mech == PIPE_CP_ASYNC || pl->mech == PIPE_PRIVATE) && pl->refill;
    p->ld[i].across = pl->mech == PIPE_CP_ASYNC && pl->across;
    if (pl->mech == PIPE_TMA) {
        TileMatch *m = arena_alloc(p->f->arena, sizeof *m);
        if (!m || pl->tmap >= p->f->ntmaps || !tile_match(p->f, p->loop, o, m) ||
            !ir_tmap_equal(&m->map, &p->f->tmaps[pl->tmap]))
            return false;
        p->ld[i].tile = m;
    } else {
        p->ncp++;
    }
    p->nloads++;
    return true;
}

/* The slice that computes the loads' pointers and masks, run ahead. */
static bool pull_slice(Pipe *p)
{
    p->nslice = 0;
    p->body_writes = -1;
    memset(p->carried, 0, sizeof(bool) * 64);
    for (int i = 0; i < p->nloads; i++)
        for (int k = 0; k < p->ld[i].op->nops && k < 2; k++) /* pointer, mask (may be none) */
            if (p->ld[i].op->operands[k] && !pipe_pull(p, p->ld[i].op->operands[k], 0))
                return false;
    return pipe_slice_closed_with_scalars(p);
}

bool pipe_from_plan(Pipe *p, IrOp *loop)
{
    const IrPlan *pl = &loop->plan;
    p->loop = loop;
    p->body = loop->regions[0];
    p->stages = pl->stages;
    p->slots = pl->slots;
    p->ws = pl->ws;
    p->nloads = p->ncp = 0;
    p->ngroups = 1;
    memset(p->group, 0, sizeof p->group);
    p->dot = NULL;
    if (p->body->nargs - 1 > 64 || !pipe_step_ok(loop))
        return false;
    for (IrOp *o = p->body->first; o; o = o->next) {
        PipeMech m = o->plan.mech;
        if (o->kind == IR_LOAD && (m == PIPE_CP_ASYNC || m == PIPE_PRIVATE || m == PIPE_TMA) &&
            !add_planned_load(p, o))
            return false;
        if (o->kind == IR_DOT && m == PIPE_ASYNC_DOT)
            p->dot = o;
    }
    if (!p->nloads)
        return true; /* rewritten already, or nothing to stage */
    return pull_slice(p);
}

typedef struct Planned {
    Arena *a;
    PtrVec *out;
} Planned;

static bool planned_loop(IrOp *op, void *ctx)
{
    Planned *l = ctx;
    if (op->kind == IR_FOR && op->plan.mech == PIPE_LOOP && op->nregions == 1)
        vec_push(l->a, l->out, op);
    return true;
}

void pipe_planned_loops(IrFunc *f, PtrVec *out)
{
    Planned l = {f->arena, out};
    ir_walk(f->body, planned_loop, &l);
}

/* The rings of one planned loop; false where the plan cannot be followed. */
/* Whether nothing in the body reads a result of op. */
static bool unread(const Pipe *p, IrOp *op)
{
    for (int r = 0; r < op->nres; r++)
        if (ir_count_reads(p->body, op->results[r]))
            return false;
    return true;
}

/* The originals of the slice, read by nothing once the copies took their
 * clones' values: removed, last first. LLVM would drop most of them, but
 * not a masked load (an asm statement) nor a layout conversion through
 * shared memory (its barriers). */
static void drop_dead_slice(Pipe *p)
{
    for (int i = p->nslice - 1; i >= 0; i--) {
        IrOp *op = p->slice[i];
        if (op->parent == p->body && !op->nregions && unread(p, op))
            ir_remove(op);
    }
}

/* Whether a region of op makes a value device map m is written from. */
static bool map_value_in(const TileMatch *m, const IrOp *op)
{
    for (int r = 0; r < op->nregions; r++) {
        const IrBlock *b = op->regions[r];
        if (ir_defined_in(m->base, b) || (m->stride && ir_defined_in(m->stride, b)))
            return true;
        for (int d = 0; d < 2; d++)
            for (int t = 0; t < m->extent[d].n; t++)
                for (int k = 0; k < m->extent[d].t[t].deg; k++) {
                    int s = m->extent[d].t[t].sym[k] - TILE_FIRST_VALUE;
                    if (s >= 0 && s < m->nsyms && ir_defined_in(m->syms[s], b))
                        return true;
                }
    }
    return false;
}

/* Each device map of the loop's TMA loads is written before the loop, or
 * before the outermost loop or if around it that makes none of its
 * values: once for all the tiles a persistent loop visits. */
static void make_device_maps(Pipe *p)
{
    for (int i = 0; i < p->nloads; i++) {
        const TileMatch *m = p->ld[i].tile;
        if (!m || !m->map.device)
            continue;
        IrOp *at = p->loop;
        for (IrOp *up = at->parent->parent;
             up && (up->kind == IR_FOR || up->kind == IR_WHILE || up->kind == IR_IF) &&
             !map_value_in(m, up);
             up = at->parent->parent)
            at = up;
        IrBuilder b = {p->f, at->parent, at};
        tile_make_map(&b, p->ld[i].op->span, m, p->ld[i].tmap);
    }
}

static bool rings_loop(Pipe *p, IrOp *loop)
{
    if (!pipe_from_plan(p, loop))
        return false;
    if (!p->nloads || p->ws)
        return true; /* nothing left to copy; a producer fills the rings (pipe_ws.c) */
    IrValue **map = arena_alloc(p->f->arena, sizeof(IrValue *) * (size_t)p->nids);
    IrValue **init = arena_alloc(p->f->arena, sizeof(IrValue *) * (size_t)(MAX_DELAYS * p->stages));
    IrValue *ahead[64], *rd = NULL, *wr = NULL, *rf = NULL;
    if (!map || !init || p->f->arena->oom)
        return false;
    make_device_maps(p);
    pipe_plan_groups(p);
    prologue(p, map, ahead, init);
    int n = refills(p, false);
    bool all = n == p->nloads;
    if (!pipe_widen_loop(p, ahead, all ? NULL : &rd, all ? NULL : &wr, n ? &rf : NULL) ||
        !pipe_delay_reads(p, init))
        return false;
    pipe_rewind_reads(p);
    rewrite_body(p, map, rd, wr, rf);
    pipe_delay_yield(p, map);
    drop_dead_slice(p);
    p->loop->plan = (IrPlan){PIPE_NONE}; /* carried out: the ring ops say it now */
    for (int i = 0; i < p->nloads; i++)
        if (p->f->nbuffers <= p->ld[i].buf)
            p->f->nbuffers = p->ld[i].buf + 1;
    return true;
}

bool pass_pipeline_rings(IrFunc *f)
{
    Pipe p;
    if (!pipe_init(&p, f))
        return false;
    PtrVec loops = {0};
    pipe_planned_loops(f, &loops);
    bool ok = true;
    for (int i = 0; i < loops.len && ok && !f->arena->oom; i++)
        ok = rings_loop(&p, loops.items[i]);
    if (ok)
        pipe_resident_rewrite(f);
    ir_renumber(f);
    return ok;
}

/* The group `pipeline`: the plan and its rewrites in the default order. */
bool pass_pipeline(IrFunc *f)
{
    return pass_pipeline_plan(f) && pass_pipeline_rings(f) && pass_pipeline_async(f) &&
        pass_pipeline_ws(f);
}
