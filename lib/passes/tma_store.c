/* tma_store.c: stores of whole tiles of 2-D strided tensors become TMA
 * stores (sm_90a, tensor maps the launcher builds): the tile goes to
 * shared memory in the swizzled layout its tensor map names and one
 * thread writes it out (codegen/tma.c). A store qualifies where its
 * pointers are base + (outer + r) * stride + inner + c, unit-stride along
 * one dim (tile.c's tile_match_store), and its mask, if any, is exactly
 * the tensor's bounds, so TMA's dropping of what falls outside gives what
 * the mask gives (the contiguous extent a whole number of 16 bytes). It
 * must not sit in a K loop (a loop whose body runs a dot or reads the
 * pipeline's rings), and nothing after it may read or write the memory it
 * writes (its copy lands after the program has moved on). Stores are taken
 * in kernels whose loads are TMA's already (a GEMM's or an attention's
 * epilogue, through pointers or descriptors): a descriptor's store is a
 * pointer store by now (sema), and elsewhere the staging's shared memory
 * would cost a memory-bound kernel its occupancy. Runs after the pipeline
 * passes (their tensor maps are numbered first) and leaves every other
 * store as it is. */
#include "passes/passes.h"
#include "passes/tile.h"

#include <string.h>

/* Whether op sits in a K loop, at any depth: a pipelined or
 * warp-specialized loop, or one whose body itself computes a dot or reads
 * a ring (a persistent kernel's tile loop only issues the first copies of
 * its K loop); or in a producer's region. A flattened loop's epilogue (an
 * `if` of its body, pass_flatten's POST) is not, unless warp-specialized:
 * it runs once a tile, and *flat gets the loop, whose rings stay live
 * around the staging. */
static bool in_k_loop(const IrOp *op, const IrOp **flat)
{
    *flat = NULL;
    for (const IrOp *o = op; o->parent && o->parent->parent; o = o->parent->parent) {
        const IrOp *p = o->parent->parent;
        if (p->kind == IR_PRODUCER)
            return true;
        if (p->kind != IR_FOR && p->kind != IR_WHILE)
            continue;
        if ((p->flags & IRF_FLATTEN) && !(p->flags & IRF_WARP_SPEC) && !*flat && o->kind == IR_IF &&
            o != op) {
            *flat = p;
            continue;
        }
        if (p->plan.mech == PIPE_LOOP || (p->flags & (IRF_FLATTEN | IRF_WARP_SPEC)))
            return true;
        for (const IrOp *x = o->parent->first; x; x = x->next)
            if (x->kind == IR_DOT || x->kind == IR_TMA_WAIT || x->kind == IR_SHARED_VIEW)
                return true;
    }
    return false;
}

typedef struct Rings {
    const IrFunc *f;
    int64_t *slot; /* bytes of a slot, by buffer */
    int *nslots;
    bool other; /* a ring that TMA does not fill */
} Rings;

static bool ring_op(IrOp *op, void *ctx)
{
    Rings *r = ctx;
    if (op->kind == IR_ASYNC_COPY)
        r->other = true;
    if (op->kind != IR_TMA_COPY || op->ival < 0 || op->ival >= r->f->nbuffers || op->sub < 0 ||
        op->sub >= r->f->ntmaps)
        return true;
    const IrTmap *m = &r->f->tmaps[op->sub];
    r->slot[op->ival] = (ir_tmap_tile_bytes(m) + 1023) / 1024 * 1024;
    r->nslots[op->ival] = (int)op->ival2;
    return true;
}

/* Whether a tile of `bytes` fits past every ring of the kernel, as
 * codegen lays them out (1024-byte slots one after the other): the most
 * a flattened loop's epilogue can stage while its rings stay live. */
static bool fits_past_rings(IrFunc *f, int64_t bytes)
{
    int n = f->nbuffers > 0 ? f->nbuffers : 1;
    Rings r = {f, arena_alloc(f->arena, sizeof(int64_t) * (size_t)n),
               arena_alloc(f->arena, sizeof(int) * (size_t)n), false};
    if (!r.slot || !r.nslots)
        return false;
    ir_walk(f->body, ring_op, &r);
    int64_t total = bytes;
    for (int i = 0; i < f->nbuffers; i++)
        total += r.slot[i] * r.nslots[i];
    return !r.other && total <= 227 * 1024;
}

/* The parameter a pointer is computed from, or NULL where that is not
 * known. A pointer a loop carries has its initial value's base when every
 * iteration only moves it. */
static const IrValue *base_of(const IrFunc *f, const IrValue *v, const IrValue *arg, int depth)
{
    for (; v && depth < 64; depth++) {
        if (v == arg)
            return arg;
        if (!v->def) {
            if (v->owner == f->body)
                return v;
            const IrOp *loop = v->owner ? v->owner->parent : NULL;
            if (!loop || loop->kind != IR_FOR || v->owner != loop->regions[0] || v->index < 1 ||
                3 + v->index - 1 >= loop->nops || arg)
                return NULL;
            const IrOp *y = v->owner->last;
            if (!y || y->kind != IR_YIELD || v->index - 1 >= y->nops ||
                base_of(f, y->operands[v->index - 1], v, depth + 1) != v)
                return NULL;
            v = loop->operands[3 + v->index - 1];
            continue;
        }
        v = tile_pointer_source(v);
    }
    return NULL;
}

typedef struct Conflict {
    const IrFunc *f;
    const IrOp *st;
    const IrValue *base;
    bool after; /* the ops walked run after the store */
    bool found;
} Conflict;

/* Whether op accesses memory the store may write: through the same or an
 * unknown base. Before the store only writes count (a load's value is in
 * registers before the store is issued). */
static bool conflicts(IrOp *op, void *ctx)
{
    Conflict *c = ctx;
    const IrValue *ptr = NULL;
    bool write = false;
    switch (op->kind) {
    case IR_STORE:
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: write = true; /* fall through */
    case IR_LOAD:
    case IR_ASYNC_COPY: ptr = op->operands[0]; break;
    case IR_TMA_COPY:
    case IR_TMA_STORE: {
        int base = op->sub >= 0 && op->sub < c->f->ntmaps ? c->f->tmaps[op->sub].base : -1;
        write = op->kind == IR_TMA_STORE;
        if ((c->after || write) && (base < 0 || c->f->body->args[base] == c->base))
            c->found = true;
        return !c->found;
    }
    case IR_INLINE_ASM: c->found |= !(op->flags & IRF_PURE); return !c->found;
    default: return true;
    }
    if (op == c->st || (!c->after && !write))
        return true;
    const IrValue *b = base_of(c->f, ptr, NULL, 0);
    c->found |= !b || b == c->base;
    return !c->found;
}

/* Walks the ops after `from` in its block (with their regions). */
static void walk_after(const IrOp *from, Conflict *c)
{
    for (IrOp *o = from->next; o && !c->found; o = o->next) {
        conflicts(o, c);
        for (int r = 0; r < o->nregions && !c->found; r++)
            ir_walk(o->regions[r], conflicts, c);
    }
}

/* The region of `o` that holds op, or -1 where op is not inside o. */
static int region_holding(const IrOp *o, const IrOp *op)
{
    for (const IrOp *x = op; x->parent && x->parent->parent; x = x->parent->parent)
        if (x->parent->parent == o)
            for (int r = 0; r < o->nregions; r++)
                if (o->regions[r] == x->parent)
                    return r;
    return -1;
}

/* Walks the ops of b that may run in the same program as the store: of
 * an `if` around it, only the branch that holds it where `branch` (a
 * flattened loop's fallback for no tiles stores the same tensor in the
 * other). */
static void walk_beside(const IrBlock *b, Conflict *c, bool branch)
{
    for (IrOp *o = b->first; o && !c->found; o = o->next) {
        int held = branch && o->kind == IR_IF ? region_holding(o, c->st) : -1;
        if (held >= 0) {
            walk_beside(o->regions[held], c, branch);
            continue;
        }
        conflicts(o, c);
        for (int r = 0; r < o->nregions && !c->found; r++)
            ir_walk(o->regions[r], conflicts, c);
    }
}

/* Whether nothing but the store writes its tensor, and nothing after it
 * reads it: ops after it in its block and every enclosing one, and every
 * op of an enclosing loop (its next iteration). A flattened loop's store
 * (`flat`) may share its tensor with its fallback in the other branch;
 * the fallback's store stays plain, as its staging would not reuse the
 * rings' room. */
static bool alone(const IrFunc *f, const IrOp *st, const IrValue *base, bool flat)
{
    Conflict c = {f, st, base, false, false};
    walk_beside(f->body, &c, flat); /* writes anywhere */
    c.after = true;
    for (const IrOp *o = st; o && !c.found; o = o->parent ? o->parent->parent : NULL) {
        if (o != st && (o->kind == IR_FOR || o->kind == IR_WHILE))
            for (int r = 0; r < o->nregions && !c.found; r++)
                ir_walk(o->regions[r], conflicts, &c);
        if (!c.found && o->parent)
            walk_after(o, &c);
    }
    return !c.found;
}

/* A layout the staging writes from: elements spread over the threads. */
static bool stageable(const IrValue *v)
{
    return v->layout && (v->layout->kind == LY_BLOCKED || v->layout->kind == LY_MMA);
}

/* Whether the tensor's extent along its contiguous dim is known to be a
 * whole number of 16-byte units (or unbounded): a TMA store writes the
 * last unit that crosses the extent whole (on an H100, the columns past N
 * up to the next 16 bytes were written), where the mask writes nothing. */
static bool whole_units(const IrFunc *f, const IrTmap *t)
{
    const IrTmapExtent *e = &t->extent[0];
    int64_t bytes = dtype_bits(t->dt) / 8;
    if (e->param[0] == IR_TMA_UNBOUNDED)
        return true;
    if (e->add * bytes % 16)
        return false;
    if (e->param[0] < 0)
        return true;
    int64_t g = e->mul * bytes;
    for (int i = 0; i < IR_TMA_FACTORS && e->param[i] >= 0 && g % 16; i++)
        g *= f->params[e->param[i]].divisibility;
    return g % 16 == 0;
}

static int64_t value_bytes(const IrValue *v)
{
    return type_numel(v->type) * dtype_bits(v->type.dt) / 8;
}

/* The value a TMA store of st would stage, or NULL where st does not
 * qualify (see the top; room past a flattened loop's rings aside): *m
 * gets the tile, *flat the flattened loop whose epilogue holds st. */
static IrValue *staged_value(IrFunc *f, IrOp *st, TileMatch *m, const IrOp **flat)
{
    IrValue *val = st->operands[1];
    DType dt = val->type.dt;
    if ((st->flags & IRF_VOLATILE) || val->type.rank != 2 ||
        !(dt == DT_F16 || dt == DT_BF16 || dt == DT_F32 || dt == DT_F8E4 || dt == DT_F8E5) ||
        in_k_loop(st, flat))
        return NULL;
    if (!tile_match_store(f, st, m) || !whole_units(f, &m->map) ||
        !alone(f, st, f->body->args[m->map.base], *flat != NULL))
        return NULL;
    /* the value before a conversion that only this store reads (the
     * accumulator's layout, which the epilogue would cross to a blocked
     * one through shared memory): it goes to shared memory once */
    const IrOp *cv = val->def;
    if (cv && cv->kind == IR_CONVERT_LAYOUT && ir_count_reads(f->body, val) == 1 &&
        stageable(cv->operands[0]))
        val = cv->operands[0];
    return stageable(val) ? val : NULL;
}

int64_t tma_store_flat_staging(IrFunc *f, IrOp *st)
{
    TileMatch m;
    const IrOp *flat;
    if (!f->tma || !f->arch || strcmp(f->arch, "sm_90a") != 0 || st->kind != IR_STORE)
        return 0;
    IrValue *val = staged_value(f, st, &m, &flat);
    return val && flat ? value_bytes(val) : 0;
}

/* Store st as a TMA store, where it qualifies (see the top). */
static bool rewrite(IrFunc *f, IrOp *st)
{
    TileMatch m;
    const IrOp *flat;
    IrValue *val = staged_value(f, st, &m, &flat);
    if (!val || (flat && !fits_past_rings(f, value_bytes(val))))
        return false;
    int map = tile_add_tmap(f, &m.map);
    if (map < 0)
        return false;
    IrBuilder b = {f, st->parent, st};
    IrValue *ops[3] = {val, tile_coord(&b, st->span, &m, 0, NULL),
                       tile_coord(&b, st->span, &m, 1, NULL)};
    IrOp *t = ir_build(&b, IR_TMA_STORE, st->span, ops, 3, NULL, 0);
    t->sub = map;
    t->ival = m.trans;
    if (tile_origin_nonneg(&m))
        t->flags |= IRF_NONNEG;
    ir_remove(st);
    return true;
}

typedef struct Stores {
    Arena *a;
    PtrVec *out;
} Stores;

static bool collect(IrOp *op, void *ctx)
{
    Stores *s = ctx;
    if (op->kind == IR_STORE)
        vec_push(s->a, s->out, op);
    return true;
}

bool pass_tma_store(IrFunc *f)
{
    if (!f->tma || !f->arch || strcmp(f->arch, "sm_90a") != 0 || f->ntmaps == 0)
        return true;
    PtrVec stores = {0};
    Stores s = {f->arena, &stores};
    ir_walk(f->body, collect, &s);
    bool changed = false;
    for (int i = 0; i < stores.len && !f->arena->oom; i++)
        changed |= rewrite(f, stores.items[i]);
    if (changed) /* the pointers, masks and conversions the stores read */
        pass_dce(f);
    return !f->arena->oom;
}
