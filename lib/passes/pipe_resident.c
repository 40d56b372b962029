/* pipe_resident.c: loop-invariant wgmma operands kept in shared memory
 * (PIPE_RESIDENT). Attention loads its Q tile once, before the KV loop,
 * and every iteration's QK^T reads it. As the dot's A fragments in
 * registers it holds 32 registers a thread at a head dim of 128 (8 warps,
 * 128 rows), 64 at 256, for the whole loop, beside the accumulator; wgmma
 * can read A from shared memory as well as B, as Triton's Hopper attention
 * does. So such a load is copied once into a buffer of its own (cp.async,
 * the prologue's copies overlapping it), waited for before the first loop
 * that reads it, and each dot converts a view of that buffer, which
 * codegen reads in place (mma.c's copied operands).
 *
 * Planned where all the load's uses are layout conversions that only
 * wgmma dots in loops the load is not in read (the load outside every
 * loop, or in an outer loop: a key block's K and V in a kernel that walks
 * its key blocks itself, copied again in every step), or transposes whose
 * every use is one (attention backward's K^T and V^T, tiles a key block's
 * program keeps for its whole loop over queries), cp.async can copy it
 * into a tile wgmma reads, and the buffer fits beside the largest loop's
 * rings with room for the scratch. A transpose reads the buffer the other
 * way round, in place. */
#include "passes/pipeline.h"

#include <string.h>

enum {
    SMEM_MAX = 227 * 1024,    /* sm_90's shared memory per block */
    SCRATCH_ROOM = 16 * 1024, /* left for conversions and reductions in the loops */
};

/* The loops around op. */
static int loop_depth(const IrOp *op)
{
    int n = 0;
    for (const IrBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        n += b->parent->kind == IR_FOR || b->parent->kind == IR_WHILE;
    return n;
}

static bool is_wgmma(const IrOp *op)
{
    const Layout *l = op->kind == IR_DOT && op->nres == 1 ? op->results[0]->layout : NULL;
    return l && l->kind == LY_MMA && l->version == 3;
}

/* Whether operand x of mma.sync dot op is held whole by several warps
 * (A where warps stand along N, B where they stand along M) in 256 bytes
 * a thread or more: MLA's decode keeps its 16 heads' 512-wide latent
 * query, 128 registers a thread in every warp beside a 16x512
 * accumulator, and spilled. Read from shared memory in each step instead
 * (ldmatrix), as Triton keeps it, it holds no registers across the loop. */
static bool replicated_operand(const Pipe *p, const IrOp *op, const IrValue *x)
{
    const Layout *m = op->kind == IR_DOT && op->nres == 1 ? op->results[0]->layout : NULL;
    const Layout *l = x->layout;
    LinLayout ll;
    if (!m || m->kind != LY_MMA || m->version == 3 || !l || l->kind != LY_DOT_OP ||
        (l->opidx == 0 ? m->wn : m->wm) < 2 ||
        !layout_linear(l, x->type.rank, x->type.shape, p->f->num_warps * 32, &ll))
        return false;
    return ((int64_t)1 << ll.nreg) * (dtype_bits(x->type.dt) / 8) >= 256;
}

/* ---- planning -------------------------------------------------------------------- */

typedef struct Uses {
    const IrValue *x; /* the load's result, or a transpose of it */
    Arena *a;
    PtrVec convs;  /* the conversions that read it */
    PtrVec transp; /* the transposes that read it, where they may */
    bool may_transpose;
    int n;   /* reads seen */
    bool ok; /* each of them as the plan needs */
} Uses;

static bool is_transpose(const IrOp *op)
{
    return op->kind == IR_TRANS && op->nops == 1 && op->results[0]->type.rank == 2 &&
        (op->nints < 2 || (op->ints[0] == 1 && op->ints[1] == 0));
}

/* A read of the value: a conversion to a dot-operand layout, or a 2-D
 * transpose where the plan may take one. */
static bool load_use(IrOp *op, void *ctx)
{
    Uses *u = ctx;
    for (int i = 0; i < op->nops; i++) {
        if (op->operands[i] != u->x)
            continue;
        u->n++;
        const Layout *l = op->nres == 1 ? op->results[0]->layout : NULL;
        if (u->may_transpose && is_transpose(op)) {
            vec_push(u->a, &u->transp, op);
            continue;
        }
        u->ok &= op->kind == IR_CONVERT_LAYOUT && l && l->kind == LY_DOT_OP;
        vec_push(u->a, &u->convs, op);
    }
    return true;
}

typedef struct ConvUses {
    const Pipe *p;
    const IrValue *conv;
    int depth; /* the loops around the load */
    int n;
    bool ok;
} ConvUses;

/* A read of a conversion: a wgmma dot (or an mma.sync dot whose warps
 * share the operand) inside a loop the load is not in, as the operand the
 * conversion's layout is for. */
static bool conv_use(IrOp *op, void *ctx)
{
    ConvUses *u = ctx;
    for (int i = 0; i < op->nops; i++) {
        if (op->operands[i] != u->conv)
            continue;
        u->n++;
        u->ok &= (is_wgmma(op) || replicated_operand(u->p, op, u->conv)) &&
            i == u->conv->layout->opidx && loop_depth(op) > u->depth;
    }
    return true;
}

/* Whether n reads of x are all its uses, where the counts (by value id,
 * below nids) are known. */
static bool all_uses(const Pipe *p, const IrValue *x, int n)
{
    return n > 0 && (!p->uses || (x->id < p->nids && p->uses[x->id] == n));
}

/* What reads a load's value: its conversions, and those of its
 * transposes, which go with them. */
typedef struct Reads {
    PtrVec convs, tconvs, transp;
} Reads;

/* Whether every use of x is a conversion that wgmma dots in loops alone
 * read (or, where they may, a transpose): adds them to convs. */
static bool read_by_dots(const Pipe *p, const IrValue *x, int depth, bool may_transpose,
                         PtrVec *convs, PtrVec *transp)
{
    Uses u = {.x = x, .a = p->f->arena, .may_transpose = may_transpose, .ok = true};
    ir_walk(p->f->body, load_use, &u);
    if (!u.ok || !all_uses(p, x, u.n))
        return false;
    for (int i = 0; i < u.convs.len; i++) {
        const IrOp *c = u.convs.items[i];
        ConvUses cu = {p, c->results[0], depth, 0, true};
        ir_walk(p->f->body, conv_use, &cu);
        if (!cu.ok || !all_uses(p, cu.conv, cu.n))
            return false;
        vec_push(p->f->arena, convs, (void *)c);
    }
    for (int i = 0; transp && i < u.transp.len; i++)
        vec_push(p->f->arena, transp, u.transp.items[i]);
    return true;
}

/* The conversions of load ld's value and of its transposes, each read by
 * wgmma dots in loops only; false where any use of them is another. */
static bool conversions(const Pipe *p, const IrOp *ld, Reads *out)
{
    *out = (Reads){0};
    int depth = loop_depth(ld);
    if (!read_by_dots(p, ld->results[0], depth, true, &out->convs, &out->transp))
        return false;
    for (int i = 0; i < out->transp.len; i++) {
        const IrOp *t = out->transp.items[i];
        if (!read_by_dots(p, t->results[0], depth, false, &out->tconvs, NULL))
            return false;
    }
    return out->convs.len + out->tconvs.len > 0 && !p->f->arena->oom;
}

static bool warp_spec_loop(IrOp *op, void *ctx)
{
    TK_UNUSED(ctx);
    return !(op->kind == IR_FOR && (op->flags & IRF_WARP_SPEC));
}

/* A load in a loop is copied again in every iteration, behind a CTA
 * barrier (make_resident), which warp-specialized loops' producers would
 * never reach. */
static bool resident_ok(const Pipe *p, const IrOp *ld)
{
    Reads rd;
    if (ld->kind != IR_LOAD || ld->plan.mech != PIPE_NONE || ld->nres != 1 ||
        ld->results[0]->type.rank != 2 ||
        (loop_depth(ld) > 0 && !ir_walk(p->f->body, warp_spec_loop, NULL)))
        return false;
    if (ld->nops > 2 && ld->operands[1] && !ir_is_zero(ld->operands[2]))
        return false; /* the copy gives zeros where masked off */
    if (!conversions(p, ld, &rd) || !pipe_copyable(p, ld))
        return false;
    for (int i = 0; i < rd.convs.len + rd.tconvs.len; i++) {
        bool t = i >= rd.convs.len;
        const IrOp *c = t ? rd.tconvs.items[i - rd.convs.len] : rd.convs.items[i];
        if (!pipe_ring_order_fits(p, ld, c->results[0]->layout, NULL, t, false))
            return false;
    }
    return true;
}

/* The bytes of the rings of planned loop `loop`. */
static int64_t loop_rings(const IrOp *loop)
{
    int64_t n = 0;
    for (const IrOp *o = loop->regions[0]->first; o; o = o->next) {
        PipeMech m = o->plan.mech;
        if (o->kind != IR_LOAD || (m != PIPE_CP_ASYNC && m != PIPE_PRIVATE && m != PIPE_TMA))
            continue;
        int slots = o->plan.refill ? loop->plan.stages - 1 : loop->plan.slots;
        n += pipe_tile_bytes(o->results[0]) * slots;
    }
    return n;
}

typedef struct Budget {
    int64_t rings;    /* the largest loop's rings */
    int64_t resident; /* planned so far */
    Pipe *p;
} Budget;

static bool largest_rings(IrOp *op, void *ctx)
{
    Budget *b = ctx;
    if (op->kind == IR_FOR && op->plan.mech == PIPE_LOOP) {
        int64_t n = loop_rings(op);
        b->rings = n > b->rings ? n : b->rings;
    }
    return true;
}

static bool plan_load(IrOp *op, void *ctx)
{
    Budget *b = ctx;
    if (op->kind != IR_LOAD || !resident_ok(b->p, op))
        return true;
    int64_t bytes = (pipe_tile_bytes(op->results[0]) + 1023) / 1024 * 1024;
    if (b->rings + b->resident + bytes + SCRATCH_ROOM > SMEM_MAX)
        return true;
    b->resident += bytes;
    op->plan = (IrPlan){.mech = PIPE_RESIDENT, .buffer = b->p->nbuf++};
    return true;
}

void pipe_plan_resident(Pipe *p)
{
    if (!p->f->arch || strcmp(p->f->arch, "sm_90a") != 0)
        return;
    Budget b = {0, 0, p};
    ir_walk(p->f->body, largest_rings, &b);
    ir_walk(p->f->body, plan_load, &b);
}

/* ---- the rewrite ------------------------------------------------------------------- */

/* Whether op, or an op in its regions, reads one of the conversions. */
static bool reads_any(IrOp *op, const PtrVec *convs)
{
    for (int k = 0; k < convs->len; k++)
        if (pipe_op_reads(op, ((const IrOp *)convs->items[k])->results[0]))
            return true;
    return false;
}

typedef struct Redirect {
    IrFunc *f;
    IrValue *conv;     /* the conversion the dots read */
    IrValue *view;     /* the buffer's view */
    const IrOp *trans; /* the transpose the conversion read, or NULL */
} Redirect;

/* The view transposed at b, as a ring's slot is (pipeline.c). */
static IrValue *transposed(IrBuilder *b, const IrOp *t, IrValue *view)
{
    IrOp *n = ir_build(b, IR_TRANS, t->span, &view, 1, &t->results[0]->type, 1);
    n->nints = t->nints;
    memcpy(n->ints, t->ints, sizeof n->ints);
    n->results[0]->layout = pipe_shared_transposed(b->f, view->layout);
    n->results[0]->name = t->results[0]->name;
    return n->results[0];
}

/* A dot reading the conversion converts the view itself (or its
 * transpose), in its own block, where codegen reads the operand in place. */
static bool redirect(IrOp *op, void *ctx)
{
    Redirect *r = ctx;
    for (int i = 0; op->kind == IR_DOT && i < 2; i++) {
        if (op->operands[i] != r->conv)
            continue;
        IrBuilder b = {r->f, op->parent, op};
        IrValue *src = r->trans ? transposed(&b, r->trans, r->view) : r->view;
        IrValue *c = ir_unary(&b, IR_CONVERT_LAYOUT, op->span, src, r->conv->type);
        c->layout = r->conv->layout;
        c->name = r->conv->name;
        op->operands[i] = c;
    }
    return true;
}

/* Where the wait and the view go: the first op after ld in its block that
 * reads a conversion (the loop), past the conversions themselves. Counts
 * the groups committed on the way (the loop's prologue). */
static IrOp *first_reader(IrOp *ld, const PtrVec *convs, int *commits)
{
    IrOp *o = ld->next;
    *commits = 0;
    while (o && !reads_any(o, convs)) {
        *commits += o->kind == IR_ASYNC_COMMIT;
        o = o->next;
    }
    return o;
}

/* Load ld (PIPE_RESIDENT) becomes, where it was, a copy into slot 0 of its
 * buffer and its commit; before the first op that reads it, a wait that
 * leaves the groups committed in between in flight (the loop's prologue)
 * and the view, which the dots convert in their own blocks. */
static void make_resident(IrFunc *f, IrOp *ld)
{
    Reads rd;
    Pipe whole = {.f = f}; /* no use counts: the rewrite only checks the kinds */
    if (!conversions(&whole, ld, &rd))
        return;         /* the plan came from text for a load it does not fit; left as it is */
    PtrVec convs = {0}; /* every conversion, the transposes' after the load's */
    for (int i = 0; i < rd.convs.len + rd.tconvs.len; i++)
        vec_push(f->arena, &convs,
                 i < rd.convs.len ? rd.convs.items[i] : rd.tconvs.items[i - rd.convs.len]);
    IrValue *r = ld->results[0];
    Span sp = ld->span;
    IrBuilder at = {f, ld->parent, ld};
    /* in a loop, the last iteration's dots (waited for at their loop's end
     * in each warp) may still be reading the buffer in other warps */
    if (loop_depth(ld) > 0)
        ir_build(&at, IR_BARRIER, sp, NULL, 0, NULL, 0);
    IrValue *zero = ir_const_int(&at, sp, type_scalar(DT_I32), 0);
    IrValue *ops[3] = {ld->operands[0], ld->nops > 1 ? ld->operands[1] : NULL, zero};
    IrOp *copy = ir_build(&at, IR_ASYNC_COPY, sp, ops, 3, NULL, 0);
    copy->ival = ld->plan.buffer;
    copy->ival2 = 1;
    ir_build(&at, IR_ASYNC_COMMIT, sp, NULL, 0, NULL, 0);
    int commits;
    IrBuilder w = {f, ld->parent, first_reader(ld, &convs, &commits)};
    IrOp *wait = ir_build(&w, IR_ASYNC_WAIT, sp, NULL, 0, NULL, 0);
    wait->ival = commits;
    wait->ival2 = 1; /* wgmma reads it through the async proxy */
    IrOp *v = ir_build(&w, IR_SHARED_VIEW, sp, &zero, 1, &r->type, 1);
    v->ival = ld->plan.buffer;
    v->ival2 = 1;
    Layout sh = pipe_load_tile(&whole, ld);
    v->results[0]->layout = ir_layout_intern(f, &sh);
    v->results[0]->name = r->name;
    for (int i = 0; i < convs.len && !f->arena->oom; i++) {
        IrOp *c = convs.items[i];
        Redirect to = {f, c->results[0], v->results[0],
                       i >= rd.convs.len ? c->operands[0]->def : NULL};
        ir_walk(f->body, redirect, &to);
        ir_remove(c);
    }
    for (int i = 0; i < rd.transp.len; i++)
        ir_remove(rd.transp.items[i]);
    ir_remove(ld);
    if (f->nbuffers <= copy->ival)
        f->nbuffers = (int)copy->ival + 1;
}

typedef struct Found {
    Arena *a;
    PtrVec loads;
} Found;

static bool collect(IrOp *op, void *ctx)
{
    Found *fd = ctx;
    if (op->kind == IR_LOAD && op->plan.mech == PIPE_RESIDENT)
        vec_push(fd->a, &fd->loads, op);
    return true;
}

void pipe_resident_rewrite(IrFunc *f)
{
    Found fd = {f->arena, {0}};
    ir_walk(f->body, collect, &fd);
    for (int i = 0; i < fd.loads.len && !f->arena->oom; i++)
        make_resident(f, fd.loads.items[i]);
}
