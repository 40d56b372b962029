/* pipeline_loads.c: which loads of a loop the pipelining plan stages
 * through shared memory, with which ring (a shared tile, a TMA tile, or a
 * private run per thread), and the slice of ops that computes their
 * addresses and must run ahead of the loop (which the rewrites compute
 * again from the plan). Assumes the loop's layouts are assigned; changes
 * nothing in the IR. */
#include "passes/pipeline.h"

#include <string.h>

/* The dot-operand layout of convert_layout op o of value x, or NULL. */
static const Layout *dot_conversion(const IrOp *o, const IrValue *x)
{
    if (o->kind != IR_CONVERT_LAYOUT || o->operands[0] != x)
        return NULL;
    const Layout *l = o->results[0]->layout;
    return l && l->kind == LY_DOT_OP ? l : NULL;
}

/* How many of the ops from o on in its block are conversions of x to a
 * dot-operand layout; *dop: the last one's layout. */
static int dot_conversions(const IrOp *o, const IrValue *x, const Layout **dop)
{
    int n = 0;
    for (; o; o = o->next)
        if (dot_conversion(o, x)) {
            *dop = dot_conversion(o, x);
            n++;
        }
    return n;
}

/* Whether transpose o reads x: directly, or through a conversion to
 * registers that nothing else reads (the layout pass gives a transpose's
 * operand the transpose's own blocked layout, as a tile loaded along its
 * first dim, attention backward's Q^T, does not have). A ring's tile is
 * transposed in place (pipeline.c), so that conversion goes. */
bool pipe_trans_reads(const Pipe *p, const IrOp *o, const IrValue *x)
{
    const IrValue *in = o->operands[0];
    if (in == x)
        return true;
    const IrOp *c = in->def;
    return c && c->kind == IR_CONVERT_LAYOUT && c->operands[0] == x && in->id < p->nids &&
        p->uses[in->id] == 1 && in->layout && in->layout->kind == LY_BLOCKED;
}

/* The dot-operand layout a load's value is converted to, where every use of
 * it is such a conversion in its block, directly or through a transpose
 * whose every use is one (a decode kernel reads one latent tile as the K of
 * one dot and the V of the next), else NULL. Where there is more than one
 * use, or a transpose beside a direct use, every conversion must read the
 * ring in the order it is stored (16-bit elements: mma and wgmma read
 * either majorness). A tile of other elements read only through one
 * transpose (fp8 attention's K, and its V stored transposed) is read
 * K-major where the ring holds it along the dot's K: *trans says so. */
static const Layout *feeds_dots_only(Pipe *p, const IrOp *ld, bool *trans)
{
    const IrValue *r = ld->results[0];
    const Layout *dop = NULL;
    int direct = dot_conversions(ld->next, r, &dop), seen = direct, ntrans = 0, via = 0;
    for (const IrOp *o = ld->next; o; o = o->next) {
        if (o->kind != IR_TRANS || o->nops != 1 || r->type.rank != 2 || !pipe_trans_reads(p, o, r))
            continue;
        const IrValue *t = o->results[0];
        int n = dot_conversions(o->next, t, &dop);
        if (n == 0 || n != p->uses[t->id])
            return NULL;
        seen++; /* the transpose, or the conversion before it */
        ntrans++;
        via += n;
    }
    if (seen != p->uses[r->id] || !dop)
        return NULL;
    bool plain = direct == 1 && ntrans == 0;
    *trans = direct == 0 && ntrans == 1 && via == 1;
    if (!plain && !*trans && dtype_bits(r->type.dt) != 16)
        return NULL;
    return dop;
}

/* cp.async moves 4, 8 or 16 bytes per thread and chunk. */
bool pipe_copyable(const Pipe *p, const IrOp *ld)
{
    const IrValue *ptr = ld->operands[0], *mask = ld->nops > 1 ? ld->operands[1] : NULL;
    LinLayout ll;
    if (ptr->type.rank != 2 || !ptr->layout ||
        !layout_linear(ptr->layout, 2, ptr->type.shape, p->f->num_warps * 32, &ll))
        return false;
    int bytes = dtype_bits(ptr->type.elem) / 8;
    int dim, w = lin_run(&ll, 2, ptr->type.shape, &dim);
    int aw = p->axis ? axis_vector_width_along(p->axis, ptr, mask, bytes, dim) : 1;
    if (aw < w)
        w = aw;
    int b = w * bytes;
    return b == 4 || b == 8 || b == 16;
}

/* A ring buffer's tile, stored transposed (dim 0 contiguous) when `down`. */
static Layout shared_tile(Type t, bool down)
{
    Layout sh =
        layout_shared_tile(t.shape[down ? 1 : 0], t.shape[down ? 0 : 1], dtype_bits(t.dt) / 8);
    sh.order[0] = down ? 0 : 1;
    sh.order[1] = down ? 1 : 0;
    return sh;
}

/* The ring buffer's tile of a load: as TMA writes it (the tensor's
 * contiguous dim along the stored rows) when m is its tile, else for
 * cp.async with the dim the load runs along contiguous, or the other one
 * when the ring is filled across (one element a copy). */
static Layout ring_layout(const Pipe *p, const IrOp *ld, const TileMatch *m, bool across)
{
    const IrValue *ptr = ld->operands[0];
    Type t = ld->results[0]->type;
    if (m)
        return shared_tile(t, m->trans);
    LinLayout ll;
    int dim = 1;
    if (layout_linear(ptr->layout, 2, ptr->type.shape, p->f->num_warps * 32, &ll))
        lin_run(&ll, 2, ptr->type.shape, &dim);
    bool down = dim == 0 && t.shape[0] > 1;
    return shared_tile(t, across ? !down : down);
}

Layout pipe_shared_for(Pipe *p, int i)
{
    return ring_layout(p, p->ld[i].op, p->ld[i].tile, p->ld[i].across);
}

Layout pipe_load_tile(const Pipe *p, const IrOp *ld) { return ring_layout(p, ld, NULL, false); }

/* A ring keeps the order the load reads in (copies move whole runs), so
 * an operand that wgmma reads only K-major (tf32, int8, fp8) is copied
 * only when the ring holds it along K; otherwise the dot stages it,
 * transposed, from registers (codegen/mma.c). A ring filled across holds
 * the other order. */
bool pipe_ring_order_fits(const Pipe *p, const IrOp *ld, const Layout *dop, const TileMatch *m,
                          bool trans, bool across)
{
    Type t = ld->results[0]->type;
    if (!layout_needs_kmajor(dop->parent, dtype_bits(t.dt) / 8))
        return !across;
    Layout sh = ring_layout(p, ld, m, across);
    int k = dop->opidx == 0 ? 1 : 0; /* K is dim 1 of A, dim 0 of B */
    return sh.order[0] == (trans ? 1 - k : k);
}

/* TMA's view of a load when TMA can copy it (a tile of a 2-D strided
 * tensor, tile.c), else NULL. */
static TileMatch *tma_tile(Pipe *p, const IrOp *ld)
{
    /* a tile's origin is a polynomial in the iteration index: constant steps */
    if (!p->f->tma || !p->f->arch || strcmp(p->f->arch, "sm_90a") != 0 || !pipe_const_step(p->loop))
        return NULL;
    TileMatch *m = arena_alloc(p->f->arena, sizeof *m);
    return m && tile_match(p->f, p->loop, ld, m) ? m : NULL;
}

/* The parameter a pointer is computed from, or NULL where that is not
 * known: offsets added to it, its shape changed, or carried through the
 * loop from an initial value. */
static const IrValue *pointer_base(const Pipe *p, const IrValue *v)
{
    for (int depth = 0; v && depth < 64; depth++) {
        if (!v->def) {
            if (v->owner == p->f->body)
                return v;
            if (v->owner != p->body || v->index < 1 || 3 + v->index - 1 >= p->loop->nops)
                return NULL;
            v = p->loop->operands[3 + v->index - 1];
            continue;
        }
        v = tile_pointer_source(v);
    }
    return NULL;
}

typedef struct StoreCheck {
    const Pipe *p;
    const IrValue *base;
} StoreCheck;

static bool store_elsewhere(IrOp *o, void *ctx)
{
    const StoreCheck *c = ctx;
    if (o->kind != IR_STORE)
        return true;
    const IrValue *sb = pointer_base(c->p, o->operands[0]);
    return sb && sb != c->base;
}

/* No store of the body (nested ones too: a flattened loop's epilogue) may
 * write what load ld reads. */
static bool stores_elsewhere(const Pipe *p, const IrOp *ld)
{
    StoreCheck c = {p, pointer_base(p, ld->operands[0])};
    return c.base && ir_walk(p->body, store_elsewhere, &c);
}

/* A weight tile unpacked and scaled before the dot, as dequantising GEMMs
 * write it, reaches the dot's operand through the ops after its load. */
bool pass_reaches_dot_operand(IrFunc *f, const IrOp *ld)
{
    int n = f->next_id;
    bool *hot = arena_alloc(f->arena, sizeof(bool) * (size_t)n);
    if (!hot || ld->results[0]->id >= n)
        return false;
    memset(hot, 0, sizeof(bool) * (size_t)n);
    hot[ld->results[0]->id] = true;
    for (const IrOp *o = ld->next; o; o = o->next) {
        bool in = false;
        for (int k = 0; k < o->nops; k++)
            in |= o->operands[k] && o->operands[k]->id < n && hot[o->operands[k]->id] &&
                (o->kind != IR_DOT || k < 2);
        if (in && o->kind == IR_DOT)
            return true;
        for (int r = 0; in && r < o->nres; r++)
            if (o->results[r]->id < n)
                hot[o->results[r]->id] = true;
    }
    return false;
}

/* Elements per run of a private ring for load ld (see the top), 0 where
 * its runs are not 4, 8 or 16 bytes of a byte-sized element type. Loads
 * that feed a dot's operands are staged with the kernel's stages; others
 * where tl.range asks. */
static int private_run(Pipe *p, const IrOp *ld)
{
    const IrValue *ptr = ld->operands[0], *mask = ld->nops > 1 ? ld->operands[1] : NULL;
    DType dt = ld->results[0]->type.dt;
    LinLayout ll;
    if (!p->axis || (p->loop->ival < 2 && !pass_reaches_dot_operand(p->f, ld)) || dt == DT_I1 ||
        dt == DT_F8E4 || dt == DT_F8E5 || ptr->type.rank < 1 || ptr->type.rank > 2 ||
        !ptr->layout ||
        !layout_linear(ptr->layout, ptr->type.rank, ptr->type.shape, p->f->num_warps * 32, &ll))
        return 0;
    int bytes = dtype_bits(dt) / 8;
    int dim, w = lin_run(&ll, ptr->type.rank, ptr->type.shape, &dim);
    int aw = axis_vector_width_along(p->axis, ptr, mask, bytes, dim);
    w = aw < w ? aw : w;
    while (w * bytes > 16)
        w /= 2;
    return w * bytes >= 4 && stores_elsewhere(p, ld) ? w : 0;
}

/* Whether layout l holds runs of at least two elements along the dim ld's
 * ring is stored along (the run of its copies): reads across the stored
 * rows would take one element at a time, all of a warp's in one bank. */
static bool reads_along(const Pipe *p, const IrOp *ld, const Layout *l)
{
    const IrValue *ptr = ld->operands[0];
    LinLayout lc, lr;
    int threads = p->f->num_warps * 32, dc, dr;
    if (!layout_linear(ptr->layout, 2, ptr->type.shape, threads, &lc) ||
        !layout_linear(l, 2, ptr->type.shape, threads, &lr))
        return false;
    lin_run(&lc, 2, ptr->type.shape, &dc);
    return lin_run(&lr, 2, ptr->type.shape, &dr) >= 2 && dr == dc;
}

/* Whether every use of load ld's value is a conversion, in its block, into
 * a register layout other than a dot operand's (an attention mask tile
 * the layout pass left in its coalesced layout, read in the mma layout:
 * layout_spread.c's read_from_ring): its ring then holds the tile as
 * cp.async copies it, in runs of up to 16 bytes, and the conversions read
 * the ring into their layouts (codegen/async.c), with no round trip of
 * their own. An `other` that is not zero is put back after each read
 * (pipe_view_ring), from a mask and a value codegen can recompute there. */
static bool read_in_registers(Pipe *p, const IrOp *ld)
{
    const IrValue *r = ld->results[0];
    int bits = dtype_bits(r->type.dt), n = 0;
    if (r->type.rank != 2 || (bits != 8 && bits != 16 && bits != 32) || r->type.dt == DT_I1 ||
        !pipe_copyable(p, ld) || !stores_elsewhere(p, ld) ||
        (p->loop->ival < 2 && !pass_reaches_dot_operand(p->f, ld)))
        return false;
    if (ld->nops > 2 && ld->operands[1] && ld->operands[2] && !ir_is_zero(ld->operands[2]) &&
        (!pass_can_remat(ld->operands[1]) || !pass_can_remat(ld->operands[2])))
        return false;
    for (const IrOp *o = ld->next; o; o = o->next)
        for (int k = 0; k < o->nops; k++) {
            if (o->operands[k] != r)
                continue;
            if (o->kind != IR_CONVERT_LAYOUT) /* a yield too: carried to the next iteration */
                return false;
            const Layout *l = o->results[0]->layout;
            if (!l || l->kind == LY_SHARED || l->kind == LY_DOT_OP || !reads_along(p, ld, l))
                return false;
            n++;
        }
    return n > 0 && n == p->uses[r->id];
}

bool pipe_find_loads(Pipe *p)
{
    p->nloads = 0;
    for (IrOp *o = p->body->first; o; o = o->next) {
        /* a cache operator or an eviction priority is a hint a copy into a
         * ring drops, as Triton's cp.async does (Liger's MoE x tile,
         * evict_first); .cv, which asks for a fresh read, stays a load */
        if (o->kind != IR_LOAD || (o->flags & IRF_VOLATILE) ||
            (o->str && strcmp(o->str + (o->str[0] == '.'), "cv") == 0))
            continue;
        /* copies fill masked-off elements with zeros: another `other` is
         * put back where a private ring is read (pipe_view_ring) */
        bool other = o->nops > 2 && o->operands[2] && !ir_is_zero(o->operands[2]);
        if (p->nloads == MAX_LOADS)
            break;
        bool trans = false;
        const Layout *dop = other ? NULL : feeds_dots_only(p, o, &trans);
        if (!dop && read_in_registers(p, o)) {
            p->ld[p->nloads++] = (PipeLoad){.op = o};
            continue;
        }
        int run = dop ? 0 : private_run(p, o);
        if (run) {
            p->ld[p->nloads++] = (PipeLoad){.op = o, .run = run};
        }
        if (!dop)
            continue;
        TileMatch *m = tma_tile(p, o); /* TMA copies tiles cp.async cannot */
        int ntiles = 0;
        for (int i = 0; i < p->nloads; i++)
            ntiles += p->ld[i].tile != NULL;
        if (p->f->ntmaps + ntiles >= IR_MAX_TMAPS)
            m = NULL; /* the launcher passes at most IR_MAX_TMAPS */
        if (!m && !pipe_copyable(p, o))
            continue;
        /* a tf32 tile read along N that wgmma takes along K: its ring
         * filled across, as Triton's 4-byte copies fill it */
        bool across = !pipe_ring_order_fits(p, o, dop, m, trans, false) && !m &&
            dtype_bits(o->results[0]->type.dt) == 32 &&
            pipe_ring_order_fits(p, o, dop, m, trans, true);
        if (across || pipe_ring_order_fits(p, o, dop, m, trans, false))
            p->ld[p->nloads++] = (PipeLoad){.op = o, .tile = m, .across = across};
    }
    return p->nloads > 0;
}

bool pipe_in_body(const Pipe *p, const IrValue *v)
{
    return (v->def && v->def->parent == p->body) || (!v->def && v->owner == p->body);
}

bool pipe_in_slice(const Pipe *p, const IrOp *op)
{
    for (int i = 0; i < p->nslice; i++)
        if (p->slice[i] == op)
            return true;
    return false;
}


/* An if whose regions compute values only (a flattened loop's per-tile
 * offsets, recomputed when the tile changes): part of a slice as a whole. */
static bool pure_if(const IrOp *op)
{
    if (op->kind != IR_IF)
        return false;
    for (int r = 0; r < op->nregions; r++)
        for (const IrOp *o = op->regions[r]->first; o; o = o->next)
            if (o->kind != IR_YIELD && !pipe_pure_op(o))
                return false;
    return true;
}

bool pipe_pure_op(const IrOp *op)
{
    if (op->nregions)
        return pure_if(op);
    if (op->nres != 1)
        return false;
    switch (op->kind) {
    case IR_LOAD:
    case IR_STORE:
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS:
    case IR_PRINT:
    case IR_ASSERT:
    case IR_ASSUME:
    case IR_BARRIER:
    case IR_RAND:
    case IR_DOT:
    case IR_REDUCE:
    case IR_SCAN:
    case IR_GATHER:
    case IR_HISTOGRAM:
    case IR_PARTNER:
    case IR_SHARED_VIEW:
    case IR_INLINE_ASM: return false;
    default: return true;
    }
}

static bool is_load(const Pipe *p, const IrOp *op)
{
    for (int i = 0; i < p->nloads; i++)
        if (p->ld[i].op == op)
            return true;
    return false;
}

static bool writes_memory(IrOp *o, void *ctx)
{
    bool *w = ctx;
    if (o->kind == IR_STORE || o->kind == IR_ATOMIC_RMW || o->kind == IR_ATOMIC_CAS ||
        (o->kind == IR_INLINE_ASM && !(o->flags & IRF_PURE)))
        *w = true;
    return !*w;
}

/* A load the slice may run ahead: a gathered tile's indices (a paged
 * cache's token table, a MoE's sorted ids) read S-1 iterations early. Its
 * clone is masked off past the loop's end (pipeline.c), and the loop
 * writes no memory it could read a stale value from. Not a tile the
 * pipeline copies into a ring, and never inside an if of the slice, whose
 * clones are not masked. */
static bool slice_load(Pipe *p, const IrOp *op)
{
    for (int i = 0; i < p->nloads; i++)
        if (p->ld[i].op == op && !p->ld[i].run)
            return false; /* a ring's tile; a private ring's load joins the slice instead */
    if (op->kind != IR_LOAD || op->nops < 3 || (op->flags & IRF_VOLATILE))
        return false;
    if (p->body_writes < 0) { /* once per loop */
        bool w = false;
        ir_walk(p->body, writes_memory, &w);
        p->body_writes = w;
    }
    return !p->body_writes;
}

/* Adds what v needs to the slice; false when the slice cannot run ahead. */
bool pipe_pull(Pipe *p, IrValue *v, int depth)
{
    if (!v || !pipe_in_body(p, v) || depth > 64)
        return v != NULL && depth <= 64;
    if (!v->def) {
        int k = v->index - 1; /* 0 is the induction variable */
        if (k < 0 || p->carried[k])
            return true;
        p->carried[k] = true;
        const IrOp *y = p->body->last;
        return y && y->kind == IR_YIELD && k < y->nops && pipe_pull(p, y->operands[k], depth + 1);
    }
    IrOp *op = v->def;
    if (pipe_in_slice(p, op))
        return true;
    if (!pipe_pure_op(op) && !slice_load(p, op))
        return false;
    for (int i = 0; i < op->nops; i++) /* a load's absent mask and other are NULL */
        if (op->operands[i] && !pipe_pull(p, op->operands[i], depth + 1))
            return false;
    for (int r = 0; r < op->nregions; r++) /* what a pure if reads from the body */
        for (const IrOp *o = op->regions[r]->first; o; o = o->next)
            for (int i = 0; i < o->nops; i++)
                if (!pipe_pull(p, o->operands[i], depth + 1))
                    return false;
    if (!pipe_in_slice(p, op)) /* an if's region may lead back to it through the loop */
        p->slice[p->nslice++] = op;
    return true;
}


/* Whether a slice op reads (transitively) a carried argument the slice
 * advances: those run S-1 iterations ahead and must be read by nothing
 * else. Slice values of the induction variable alone are cloned for the
 * copies, so the originals keep serving the rest of the body. */
static bool runs_ahead(const Pipe *p, const IrValue *x, int depth)
{
    if (!x || !pipe_in_body(p, x) || depth > 64)
        return false;
    if (!x->def) /* the pass's own arguments come after the 64 carried ones may take */
        return x->index > 0 && x->index <= 64 && p->carried[x->index - 1];
    if (!pipe_in_slice(p, x->def))
        return false;
    for (int i = 0; i < x->def->nops; i++)
        if (runs_ahead(p, x->def->operands[i], depth + 1))
            return true;
    return false;
}

/* Each read inside an op's regions of a value that runs ahead is of a
 * scalar the body can have for its own iteration (pipe_delay). */
static bool reads_ahead_delayed(IrOp *o, void *ctx)
{
    Pipe *p = ctx;
    for (int i = 0; i < o->nops; i++)
        if (runs_ahead(p, o->operands[i], 0) && !pipe_delay(p, o->operands[i]))
            return false;
    return true;
}

bool pipe_runs_ahead(const Pipe *p, const IrValue *x) { return runs_ahead(p, x, 0); }

bool pipe_is_planned_load(const Pipe *p, const IrOp *o)
{
    for (int i = 0; i < p->nloads; i++)
        if (p->ld[i].op == o)
            return true;
    return false;
}

/* The reads inside the regions of o of values that run ahead are of
 * delayed scalars. */
static bool regions_read_delayed(Pipe *p, IrOp *o)
{
    for (int r = 0; r < o->nregions; r++)
        if (!ir_walk(o->regions[r], reads_ahead_delayed, p))
            return false;
    return true;
}

/* A load that the slice runs ahead (the indices of a gathered tile) is no
 * private ring's load: it goes from the pipeline's loads. */
void pipe_drop_slice_loads(Pipe *p)
{
    int n = 0;
    for (int i = 0; i < p->nloads; i++)
        if (!pipe_in_slice(p, p->ld[i].op))
            p->ld[n++] = p->ld[i];
    p->nloads = n;
}

/* Every use of a value that runs ahead is inside the slice, a pipelined
 * load, or the yield slot that carries it, or reads it for its own
 * iteration: computed again from a constant step (pipe_rewind.c) or, a
 * scalar, carried behind the slice (pipe_delay); the loop's result for a
 * carried argument is unused. */
bool pipe_slice_closed(Pipe *p)
{
    p->ndelay = 0;
    for (IrOp *o = p->body->first; o; o = o->next) {
        if (pipe_in_slice(p, o) || is_load(p, o))
            continue;
        for (int i = 0; i < o->nops; i++) {
            if (!runs_ahead(p, o->operands[i], 0))
                continue;
            if (o->kind == IR_YIELD && p->carried[i])
                continue;
            /* read for the current iteration: computed again (pipe_rewind.c) */
            if (o->kind != IR_YIELD && !(p->loop->flags & IRF_WARP_SPEC) &&
                pipe_rewindable(p, o->operands[i], 0))
                continue;
            if (!pipe_delay(p, o->operands[i]))
                return false;
        }
        if (o->nregions && !regions_read_delayed(p, o))
            return false;
    }
    for (int k = 0; k < p->body->nargs - 1; k++)
        if (p->carried[k] && p->uses[p->loop->results[k]->id])
            return false;
    return true;
}

/* A scalar load of the body that no ring stages (a block's scale, a
 * table entry) and whose address moves with the loop. */
static bool scalar_load(const Pipe *p, const IrOp *o)
{
    return o->kind == IR_LOAD && o->results[0]->type.rank == 0 && !(o->flags & IRF_VOLATILE) &&
        pipe_in_body(p, o->operands[0]) && !is_load(p, o) && !pipe_in_slice(p, o);
}

bool pipe_slice_closed_with_scalars(Pipe *p)
{
    if (!pipe_slice_closed(p))
        return false;
    bool carried[64];
    for (IrOp *o = p->body->first; o; o = o->next) {
        if (!scalar_load(p, o))
            continue;
        int n = p->nslice;
        memcpy(carried, p->carried, sizeof carried);
        if (pipe_pull(p, o->results[0], 0) && pipe_slice_closed(p))
            continue;
        p->nslice = n; /* left where it is: its uses cannot wait S-1 iterations */
        memcpy(p->carried, carried, sizeof carried);
    }
    return pipe_slice_closed(p);
}

int64_t pipe_const_step(const IrOp *loop)
{
    const IrOp *d = loop->operands[2]->def;
    return d && d->kind == IR_CONST && d->ival >= 1 ? d->ival : 0;
}

bool pipe_step_ok(const IrOp *loop)
{
    const IrValue *st = loop->operands[2];
    if (pipe_const_step(loop))
        return true;
    if (st->type.rank != 0 || !dtype_is_int(st->type.dt) || (st->def && st->def->kind == IR_CONST))
        return false;
    /* defined outside the loop: a parameter, or an op in an enclosing block */
    const IrBlock *at = st->def ? st->def->parent : st->owner;
    for (const IrBlock *b = at; b; b = b->parent ? b->parent->parent : NULL)
        if (b == loop->regions[0])
            return false;
    return true;
}

IrValue *pipe_in_range(IrBuilder *b, Span sp, const IrOp *loop, IrValue *iv)
{
    IrValue *ub = loop->operands[1], *step = loop->operands[2];
    Type i1 = type_scalar(DT_I1);
    IrValue *up = ir_binary(b, IR_CMP, sp, iv, ub, i1);
    up->def->sub = CMP_LT;
    if (pipe_const_step(loop))
        return up;
    IrValue *down = ir_binary(b, IR_CMP, sp, iv, ub, i1);
    down->def->sub = CMP_GT;
    IrValue *pos = ir_binary(b, IR_CMP, sp, step, ir_const_int(b, sp, step->type, 0), i1);
    pos->def->sub = CMP_GT;
    IrValue *ops[3] = {pos, up, down};
    return ir_build(b, IR_SELECT, sp, ops, 3, &i1, 1)->results[0];
}
