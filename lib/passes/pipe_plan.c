/* pipe_plan.c: the software pipelining plan (pass pipeline_plan). Decides,
 * for each innermost `for` of GPU code, whether its loads run ahead of it
 * and how, and records the decisions as IrPlan attributes that --emit=ir
 * prints and the reader reads back; the rewrite passes (pipeline_rings,
 * pipeline_async, pipeline_ws) carry them out and decide nothing. Changes
 * no op but the plans, and adds the tensor maps its TMA loads use (the
 * launcher builds them in the order they are planned).
 *
 * A loop is planned with num_stages S >= 2 (its own, else the kernel's)
 * when its step is a constant, or a scalar it does not compute (a
 * persistent loop's num_programs: TMA and warp specialization then stay
 * off, as their copies are placed by iteration index), has no atomic or barrier (which
 * may order the loads), and has loads worth staging (pipeline_loads.c)
 * whose address slice can run S-1 iterations ahead. Per load the plan
 * names the mechanism: a shared ring filled by cp.async (a dot operand),
 * by TMA (on sm_90a with tensor maps, a tile of a 2-D strided tensor), or
 * a private ring (a load no dot reads, where tl.range asks for stages);
 * and its ring's buffer. Per loop: the stages and the ring's slots. On
 * sm_90a the wgmma dot whose accumulator circulates through the loop may
 * stay in flight into the next iteration (an asynchronous dot, waited for
 * with one group pending); a loop that asks for warp specialization gets
 * it where every ring is a TMA tile that one dot of the body reads
 * (warp_spec.c), under the conditions of ws_kept. */
#include "passes/pipeline.h"
#include "passes/warp_spec.h"

#include <string.h>

/* Bytes of shared memory one slot of every ring takes. */
static int64_t slot_bytes(const Pipe *p)
{
    int64_t n = 0;
    for (int i = 0; i < p->nloads; i++)
        n += (pipe_tile_bytes(p->ld[i].op->results[0]) + 1023) / 1024 * 1024;
    return n;
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

/* Whether dot o of the body can stay in flight: a wgmma (not tf32x3,
 * which waits for its cross terms, codegen/wgmma.c, and so for all of its
 * work) whose accumulator the loop carries and only it reads, with B from
 * a copy and A from a copy or from registers (attention's p): codegen
 * leaves the group in flight only where what it reads stays put. */
static bool can_stay_in_flight(const Pipe *p, const IrOp *o)
{
    if (o->kind != IR_DOT || !o->results[0]->layout || o->results[0]->layout->version != 3 ||
        o->sub == DOT_TF32X3)
        return false;
    const IrOp *yield = p->body->last;
    const IrValue *r = o->results[0];
    int k = carried_index(p, o);
    return k >= 0 && k < yield->nops && yield->operands[k] == r &&
        p->uses[r->id] == 1 + pipe_uses_in_ifs(p, r) && pipe_is_load_of(p, o->operands[1]);
}

/* The first dot of the body that can stay in flight, or NULL; not where
 * its rings would not fit in sm_90's 227 KB of shared memory. */
static IrOp *async_dot(const Pipe *p)
{
    if (!p->f->arch || strcmp(p->f->arch, "sm_90a") != 0 || p->stages * slot_bytes(p) > 227 * 1024)
        return NULL;
    for (IrOp *o = p->body->first; o; o = o->next)
        if (can_stay_in_flight(p, o))
            return o;
    return NULL;
}

/* The plan of every dot that stays in flight: the first, and the later
 * ones that accumulate too (attention backward's dV and dK). Each waits,
 * after it is issued, for all groups but its own, so a later dot leaves
 * only itself in flight and an earlier one's registers are free again by
 * then; the next iteration's first dot that waits for all of them drains
 * the last one. */
static void plan_async_dots(const Pipe *p, bool spare)
{
    for (IrOp *o = p->dot; o; o = o->next)
        if (o == p->dot || can_stay_in_flight(p, o))
            o->plan = (IrPlan){.mech = PIPE_ASYNC_DOT, .pending = 1, .spare = spare};
}

/* Whether the loop, which asks for it, is warp-specialized: room for a
 * producer warpgroup beside the consumers, every ring a TMA tile that one
 * dot of the body reads (a GEMM's, attention's two), as wgmma, and the
 * producer able to compute its copies from what the kernel's top level
 * computes before the loop. One loop a kernel. */
static bool warp_specialized(Pipe *p)
{
    IrFunc *f = p->f;
    /* 4 or 8 consumer warps: at 16, the 640 threads leave 96 registers a
     * thread at launch, too few for the accumulators of the tiles 16 warps
     * are for */
    if (f->producer_warps || p->ws_loop || !p->wgmma || (f->num_warps != 4 && f->num_warps != 8))
        return false;
    WsRing r[MAX_LOADS];
    for (int i = 0; i < p->nloads; i++) {
        if (!p->ld[i].tile || !pipe_ring_dot(p, i))
            return false;
        r[i] = (WsRing){p->ld[i].tile, 0, 0, p->ld[i].op->span};
    }
    return ws_computable(f, p->loop, r, p->nloads);
}

/* Programs of the kernel that n slots of every ring let one SM hold, by
 * shared memory alone (sm_90: 228 KiB an SM, 1 KiB of it reserved a
 * program). */
static int64_t programs_per_sm(const Pipe *p, int n)
{
    return 228 * 1024 / (n * slot_bytes(p) + 1024);
}

static bool count_dots(IrOp *op, void *ctx)
{
    *(int *)ctx += op->kind == IR_DOT;
    return true;
}

/* Whether the rings are all the shared memory the kernel holds while the
 * loop runs, as far as planning can tell: the loop is the first to get
 * rings, and its dot, the kernel's only one, reads both operands from
 * them (a GEMM's K loop; attention's Q, staged for its first dot, takes
 * room of its own). The epilogue's scratch reuses the rings' room. */
static bool rings_alone(const Pipe *p)
{
    int ndots = 0;
    ir_walk(p->f->body, count_dots, &ndots);
    return ndots == 1 && p->nbuf == 0 && pipe_is_load_of(p, p->dot->operands[0]) &&
        pipe_is_load_of(p, p->dot->operands[1]);
}

/* Whether op sits inside another loop. */
static bool nested(const IrOp *op)
{
    for (const IrBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        if (b->parent->kind == IR_FOR)
            return true;
    return false;
}

/* Bytes of the tiles the body's dots read that are loaded outside the
 * loop (attention's Q), which want shared memory beside the rings
 * (pipe_resident.c). */
static int64_t outer_operand_bytes(const Pipe *p)
{
    int64_t n = 0;
    for (const IrOp *o = p->body->first; o; o = o->next)
        for (int k = 0; o->kind == IR_DOT && k < 2; k++) {
            const IrValue *x = pipe_strip_views(o->operands[k]);
            if (x && x->def && x->def->kind == IR_LOAD && x->def->parent != p->body)
                n += (pipe_tile_bytes(x) + 1023) / 1024 * 1024;
        }
    return n;
}

typedef struct Staging {
    IrFunc *f;
    int64_t bytes;
} Staging;

static bool largest_staging(IrOp *op, void *ctx)
{
    Staging *s = ctx;
    int64_t n = op->kind == IR_STORE ? tma_store_flat_staging(s->f, op) : 0;
    if (n > s->bytes)
        s->bytes = n;
    return true;
}

/* Bytes a flattened loop's epilogue would stage beside its rings for a
 * TMA store (they stay live across tiles; other loops' epilogues reuse
 * their room). pass_tma_store stages only beside rings that TMA fills. */
static int64_t epilogue_staging(const Pipe *p)
{
    Staging s = {p->f, 0};
    if (!(p->loop->flags & IRF_FLATTEN))
        return 0;
    for (int i = 0; i < p->nloads; i++)
        if (!p->ld[i].tile)
            return 0;
    ir_walk(p->body, largest_staging, &s);
    return s.bytes;
}

/* The ring's slots. Under an asynchronous dot the copies for iteration
 * i+S-1 are issued after the wait that leaves only dot i in flight, so the
 * slot they overwrite, read by dot i-1, is free in the warpgroup that
 * waited. With several warpgroups another one's dot i-1 may still read it:
 * a spare slot makes the copies overwrite dot i-2's, which every warpgroup
 * waited for before the barrier at the top of the iteration; without one,
 * a barrier after the wait (codegen's wgmma) frees it in all of them, once
 * an iteration. The spare slot is taken where the rings are all the
 * kernel's shared memory and it costs no program an SM (a 128x256 tile's
 * rings fit once either way) and the loop is not nested in another (a
 * persistent GEMM's K loop, inside its loop over tiles, ran 3% slower with
 * the spare slot than with the barrier at 8192x8192x1024 on the H100), the
 * barrier elsewhere, as Triton sizes its rings; nor where it would leave a
 * flattened loop's epilogue no room to stage its tile for a TMA store (a
 * persistent GEMM's plain stores under the next tile's K loop cost more
 * than the spare slot saves). A warp-specialized loop holds one slot more: its
 * producer reuses a slot only once the consumers release it. */
static int ring_slots(const Pipe *p)
{
    if (!p->dot)
        return p->stages;
    if (p->ws) /* the slot more where the tiles the dots read from outside still fit */
        return p->stages +
            ((p->stages + 1) * slot_bytes(p) + outer_operand_bytes(p) + 16 * 1024 <= 227 * 1024
                 ? 1
                 : 0);
    int s = p->stages;
    bool spare = p->f->num_warps > 4 &&
        (s + 1) * slot_bytes(p) + epilogue_staging(p) <= 227 * 1024 &&
        programs_per_sm(p, s + 1) >= programs_per_sm(p, s) && rings_alone(p) && !nested(p->loop);
    return s + (spare ? 1 : 0);
}

/* The tensor maps of the loads TMA copies; false out of memory. */
static bool add_tmaps(Pipe *p)
{
    for (int i = 0; i < p->nloads; i++)
        if (p->ld[i].tile && (p->ld[i].tmap = tile_add_tmap(p->f, &p->ld[i].tile->map)) < 0)
            return false;
    return true;
}

static bool is_sync(IrOp *op, void *ctx)
{
    TK_UNUSED(ctx);
    return op->kind != IR_ATOMIC_RMW && op->kind != IR_ATOMIC_CAS && op->kind != IR_BARRIER;
}

/* Whether the loop's loads can run ahead (see the top): fills p's loads,
 * their slice, and the stages. */
static bool can_run_ahead(Pipe *p, IrOp *loop)
{
    if (!ir_walk(loop->regions[0], is_sync, NULL))
        return false;
    p->loop = loop;
    p->body = loop->regions[0];
    p->stages = (int)(loop->ival > 0 ? loop->ival : p->f->num_stages);
    if (p->stages < 2 || p->body->nargs - 1 > 64 || !pipe_step_ok(loop) || !pipe_find_loads(p))
        return false;
    p->nslice = 0;
    p->body_writes = -1;
    memset(p->carried, 0, sizeof(bool) * 64);
    for (int i = 0; i < p->nloads; i++)
        for (int k = 0; k < p->ld[i].op->nops && k < 2; k++) /* pointer, mask (may be none) */
            if (p->ld[i].op->operands[k] && !pipe_pull(p, p->ld[i].op->operands[k], 0))
                return false;
    pipe_drop_slice_loads(p);
    return p->nloads > 0 && pipe_slice_closed_with_scalars(p);
}

/* What a walk looks for: a read of `x` (or of a layout conversion or a
 * transpose of it) that leaves it in shared memory past the point where
 * the iteration ends: a wgmma operand, read asynchronously through the
 * async proxy, or a carried value, read by the next iteration. */
typedef struct LateRead {
    const IrValue *x;
    bool found;
} LateRead;

static bool late_read(IrOp *op, void *ctx)
{
    LateRead *r = ctx;
    bool wgmma =
        op->kind == IR_DOT && op->results[0]->layout && op->results[0]->layout->version == 3;
    for (int k = 0; k < op->nops && !r->found; k++)
        if (op->operands[k] && pipe_strip_views(op->operands[k]) == r->x)
            r->found = op->kind == IR_YIELD || (wgmma && k < 2);
    return !r->found;
}

/* Whether load i's ring is refilled in place (IrPlan.refill), as Triton
 * sizes the rings that registers read: stages-1 slots, the copy for
 * iteration i+S-1 going, behind a barrier at the end of iteration i, into
 * the slot iteration i read. Only for a cp.async ring of a loop without a
 * producer, every read of which (mma.sync's fragments, a conversion into
 * registers, a private ring's thread reading back its own copies) is done
 * by the iteration's end; a copy is issued after them in program order,
 * so, as if by a thread started there, it writes after they read. */
static bool refilled(const Pipe *p, int i)
{
    if (p->ld[i].tile || p->ws)
        return false;
    LateRead r = {p->ld[i].op->results[0], false};
    ir_walk(p->body, late_read, &r);
    return !r.found;
}

/* Whether load i's private ring is packed (IrPlan.packed), as Triton
 * keeps such a vector once in shared memory: a 1-D load whose threads
 * hold copies of each other's elements (a row's scales in a layout that
 * spreads them over 128 threads would take 32 times their bytes), in a
 * loop whose shared rings put a CTA barrier behind each wait already. */
static bool packed(const Pipe *p, int i)
{
    const IrValue *ptr = p->ld[i].op->operands[0];
    LinLayout ll;
    if (!p->ld[i].run || ptr->type.rank != 1 || !ptr->layout ||
        !layout_linear(ptr->layout, 1, ptr->type.shape, p->f->num_warps * 32, &ll) ||
        ((int64_t)1 << (ll.nreg + ll.nthread)) <= type_numel(ptr->type))
        return false;
    for (int j = 0; j < p->nloads; j++)
        if (!p->ld[j].run)
            return true;
    return false;
}

/* The plan of load i, as p decided it. */
static IrPlan load_plan(const Pipe *p, int i)
{
    IrPlan pl = {.mech = PIPE_CP_ASYNC,
                 .buffer = p->nbuf + i,
                 .refill = refilled(p, i),
                 .across = p->ld[i].across};
    if (p->ld[i].tile)
        pl.mech = PIPE_TMA, pl.tmap = p->ld[i].tmap;
    else if (p->ld[i].run)
        pl.mech = PIPE_PRIVATE, pl.run = p->ld[i].run, pl.packed = packed(p, i);
    return pl;
}

/* Whether `loop` runs a few iterations (at most 4), its bounds a constant
 * apart: a causal attention's diagonal blocks, BM / BN of them. */
static bool few_iterations(const IrOp *loop)
{
    int64_t step = pipe_const_step(loop);
    const IrValue *lb = loop->operands[0], *ub = loop->operands[1];
    const IrOp *d = ub->def;
    if (!step || !d || d->kind != IR_ADD || d->nops != 2)
        return false;
    const IrValue *c = d->operands[0] == lb ? d->operands[1]
        : d->operands[1] == lb              ? d->operands[0]
                                            : NULL;
    if (!c || !c->def || c->def->kind != IR_CONST || c->type.rank || c->def->ival < 0)
        return false;
    return (c->def->ival + step - 1) / step <= 4;
}

static void plan_loop(Pipe *p, IrOp *loop)
{
    if (p->ws_alone && loop != p->ws_alone && few_iterations(loop))
        return; /* left as it is beside the warp-specialized loop (ws_kept) */
    if (!can_run_ahead(p, loop))
        return;
    p->wgmma = pipe_reads_as_wgmma(p);
    p->dot = async_dot(p);
    p->ws = (loop->flags & IRF_WARP_SPEC) && pipe_const_step(loop) && warp_specialized(p);
    p->slots = ring_slots(p);
    if (!add_tmaps(p))
        return;
    loop->plan = (IrPlan){.mech = PIPE_LOOP, .stages = p->stages, .slots = p->slots, .ws = p->ws};
    for (int i = 0; i < p->nloads; i++)
        p->ld[i].op->plan = load_plan(p, i);
    plan_async_dots(p, p->slots > p->stages && !p->ws);
    if (p->ws)
        p->ws_loop = loop;
    p->nbuf += p->nloads;
}

/* Loops whose body holds no other loop: the K loops of GEMMs, also
 * inside a persistent loop over tiles; ifs are allowed (a flattened
 * loop's epilogue and per-tile offsets, pass_flatten's or written so by
 * hand). */
typedef struct Loops {
    Arena *a;
    PtrVec v;
} Loops;

static bool no_loop(IrOp *op, void *ctx)
{
    TK_UNUSED(ctx);
    return op->kind != IR_FOR && op->kind != IR_WHILE;
}

/* Whether o is an if none of whose arms holds a loop. */
static bool loopless_if(IrOp *o)
{
    if (o->kind != IR_IF)
        return false;
    for (int r = 0; r < o->nregions; r++)
        if (!ir_walk(o->regions[r], no_loop, NULL))
            return false;
    return true;
}

static bool innermost_loop(IrOp *op, void *ctx)
{
    Loops *l = ctx;
    if (op->kind != IR_FOR || op->nregions != 1)
        return true;
    for (IrOp *o = op->regions[0]->first; o; o = o->next)
        if (o->nregions && !loopless_if(o))
            return true;
    vec_push(l->a, &l->v, op);
    return true;
}

/* A plan the IR came with is replaced by the analysis' own. */
static bool forget_plan(IrOp *op, void *ctx)
{
    TK_UNUSED(ctx);
    op->plan = (IrPlan){PIPE_NONE};
    return true;
}

/* Whether every operand of the dots of a warp-specialized loop is computed
 * in the iteration or read from shared memory: none held in registers
 * across iterations (attention's Q where the rings leave no room to make
 * it resident, or a carried value). For such an A operand ptxas (CUDA
 * 13.0) gave the warp-specialized kernel's P V wgmma the very registers
 * that held Q and nothing loaded Q again: wrong results on the H100 at
 * D=128 with BN=128. Such a loop is not specialized. */
static bool ws_operands_fresh(const IrOp *loop)
{
    const IrBlock *body = loop->regions[0];
    for (const IrOp *o = body->first; o; o = o->next)
        for (int k = 0; o->kind == IR_DOT && k < 2; k++) {
            const IrValue *x = pipe_strip_views(o->operands[k]);
            const IrOp *d = x ? x->def : NULL;
            bool resident = d && d->kind == IR_LOAD && d->plan.mech == PIPE_RESIDENT;
            if (!resident && (!d || d->parent != body))
                return false;
        }
    return true;
}

static bool other_planned_loop(IrOp *op, void *ctx)
{
    return !(op->kind == IR_FOR && op != ctx && op->plan.mech == PIPE_LOOP);
}

/* Whether every planned loop but the warp-specialized one runs a few
 * iterations: left unpipelined, they let the producer's rings be the
 * kernel's (a causal attention's diagonal blocks load their K and V
 * tiles themselves, one or two a program). */
static bool only_short_others(IrOp *op, void *ctx)
{
    return !(op->kind == IR_FOR && op != ctx && op->plan.mech == PIPE_LOOP && !few_iterations(op));
}

/* Whether the plan keeps its warp-specialized loop: no dot operand held
 * in registers across iterations, and no other loop of the kernel has
 * rings. The producer serves one loop; another's rings would have a place
 * of their own beside the producer's, where loops run one after another
 * otherwise share theirs: past the device's shared memory at the configs
 * Triton runs. */
static bool ws_kept(IrFunc *f, IrOp *loop)
{
    return ws_operands_fresh(loop) && ir_walk(f->body, other_planned_loop, loop);
}

static bool drop_ws(IrOp *op, void *ctx)
{
    TK_UNUSED(ctx);
    if (op->kind == IR_FOR)
        op->flags &= ~IRF_WARP_SPEC;
    return true;
}

static void plan_all(Pipe *p, IrFunc *f, int nbuf)
{
    ir_walk(f->body, forget_plan, NULL);
    p->nbuf = nbuf;
    p->ws_loop = NULL;
    Loops loops = {f->arena, {0}};
    ir_walk(f->body, innermost_loop, &loops);
    for (int i = 0; i < loops.v.len && !f->arena->oom; i++)
        plan_loop(p, loops.v.items[i]);
    pipe_plan_resident(p);
}

/* Plans f's loops. Where one is warp-specialized but the plan does not
 * keep it (ws_kept), plans them again: first with the short loops beside
 * it left unpipelined where those are all that stands in its way, then,
 * if it is still not kept, as ordinary loops. */
bool pass_pipeline_plan(IrFunc *f)
{
    Pipe p;
    if (!pipe_init(&p, f))
        return false;
    int nbuf = f->nbuffers;
    p.axis = axis_analyze(f, f->arena);
    plan_all(&p, f, nbuf);
    if (p.ws_loop && !ws_kept(f, p.ws_loop) && ws_operands_fresh(p.ws_loop) &&
        ir_walk(f->body, only_short_others, p.ws_loop)) {
        p.ws_alone = p.ws_loop;
        plan_all(&p, f, nbuf);
    }
    if (p.ws_loop && !ws_kept(f, p.ws_loop)) {
        p.ws_alone = NULL;
        ir_walk(f->body, drop_ws, NULL);
        plan_all(&p, f, nbuf);
    }
    return true;
}
