/* pipe_ws.c: warp specialization (pass pipeline_ws), as the plan of pass
 * pipeline_plan asks: a `for` planned warp_specialized gets an extra
 * producer warpgroup that issues every TMA copy of its rings (warp_spec.c
 * builds it), so the loop itself has no prologue, no copies and no
 * barrier. Each iteration waits for its slot's tiles and, after the dot
 * that reads a ring, releases the slot that dot has done with
 * (tma_release on the slot's empty mbarrier, which the producer waits on
 * before it refills the slot). Assumes the plan verified (every ring of
 * such a loop a TMA tile that one dot of the body reads);
 * after the pass IRF_WARP_SPEC marks the loops that were specialized only. */
#include "passes/pipeline.h"
#include "passes/warp_spec.h"

/* Releases load i's slot right after the dot that reads it. A dot that
 * waits for its own wgmma has done with the slot this iteration read
 * (attention's Q K^T: the softmax needs its result); one left in flight
 * (a GEMM's, attention's P V) waits only for the groups before its own,
 * so the slot it frees is the previous iteration's, none in the first. */
static void release_after(Pipe *p, int i, IrOp *dot, IrValue *rd)
{
    Span sp = p->loop->span;
    Type i32 = type_scalar(DT_I32), i1 = type_scalar(DT_I1);
    IrBuilder at = {p->f, p->body, dot->next};
    IrValue *rel[2] = {rd, ir_const_int(&at, sp, i1, 1)};
    if (dot->ival) {
        IrValue *first = ir_binary(&at, IR_CMP, sp, rd, ir_const_int(&at, sp, i32, 0), i1);
        first->def->sub = CMP_EQ;
        IrValue *sel[3] = {first, ir_const_int(&at, sp, i32, p->slots - 1),
                           ir_binary(&at, IR_SUB, sp, rd, ir_const_int(&at, sp, i32, 1), i32)};
        rel[0] = ir_build(&at, IR_SELECT, sp, sel, 3, &i32, 1)->results[0];
        rel[1] = ir_binary(&at, IR_CMP, sp, p->body->args[0], p->loop->operands[0], i1);
        rel[1]->def->sub = CMP_NE; /* no iteration before the first */
    }
    IrOp *r = ir_build(&at, IR_TMA_RELEASE, sp, rel, 2, NULL, 0);
    r->ival = p->ld[i].buf;
    r->ival2 = p->slots;
}

/* The consumers' side of a warp-specialized loop (see the top): each
 * iteration waits for a ring's tile where it loaded it (attention's QK^T
 * and softmax run while V's copy lands), reads it in place and releases
 * the ring's slot once its dot is done with it. */
static void rewrite_ws(Pipe *p, IrOp **dots, IrValue *rd)
{
    IrBlock *body = p->body;
    Span sp = p->loop->span;
    for (int i = 0; i < p->nloads; i++) {
        IrBuilder b = {p->f, body, p->ld[i].op};
        IrOp *tw = ir_build(&b, IR_TMA_WAIT, sp, &rd, 1, NULL, 0);
        tw->ival = p->ld[i].buf;
        tw->ival2 = p->slots;
        pipe_view_ring(p, i, rd);
    }
    for (int i = p->nloads - 1; i >= 0; i--) /* each goes right after its dot: in order */
        release_after(p, i, dots[i], rd);
    IrBuilder end = {p->f, body, body->last};
    pipe_yield_also(p, body->last, ir_next_slot(&end, sp, rd, p->slots));
}


/* After the loop and the waits for its dots: a drain (no copy groups,
 * -1), behind which the rings are dead and what follows may put its
 * scratch in their place (codegen/async.c), as after any pipelined loop:
 * the producer copied only the loop's iterations, and the consumers
 * waited for each. The fence orders the wgmma's and the copies' accesses
 * through the async proxy before the scratch's. */
static void drain_after(Pipe *p)
{
    IrOp *at = p->loop->next;
    while (at && at->kind == IR_DOT_WAIT)
        at = at->next;
    if (!at || at->kind == IR_YIELD)
        return; /* nothing follows to take the place (a flattened loop's epilogue is in it) */
    IrBuilder b = {p->f, p->loop->parent, at};
    IrOp *drain = ir_build(&b, IR_ASYNC_WAIT, p->loop->span, NULL, 0, NULL, 0);
    drain->ival = -1;
    drain->ival2 = 1;
}

/* The producer of a warp-specialized loop, once its rings are numbered. */
static bool add_producer(Pipe *p)
{
    WsRing r[MAX_LOADS];
    for (int i = 0; i < p->nloads; i++)
        r[i] = (WsRing){p->ld[i].tile, p->ld[i].tmap, p->ld[i].buf, p->ld[i].op->span};
    if (!ws_producer(p->f, p->loop, r, p->nloads, p->slots))
        return false;
    p->loop->flags |= IRF_WARP_SPEC;
    p->loop->plan = (IrPlan){PIPE_NONE}; /* carried out: the flag says so from now on */
    p->ws_loop = p->loop;
    return true;
}

/* One loop planned warp-specialized; false where the plan cannot be
 * followed. */
static bool ws_loop(Pipe *p, IrOp *loop)
{
    if (!pipe_from_plan(p, loop))
        return false;
    if (!p->ws || !p->nloads)
        return true;
    IrOp *dots[MAX_LOADS];
    for (int i = 0; i < p->nloads; i++)
        if (!(dots[i] = pipe_ring_dot(p, i)))
            return false; /* each TMA tile read by one dot */
    if (p->ncp || p->f->producer_warps)
        return false; /* one producer a kernel */
    IrValue *ahead[64], *rd;
    int nc = p->body->nargs - 1;
    for (int k = 0; k < nc; k++) /* no prologue: the carried values as they were */
        ahead[k] = loop->operands[3 + k];
    if (!pipe_widen_loop(p, ahead, &rd, NULL, NULL))
        return false;
    rewrite_ws(p, dots, rd);
    if (!add_producer(p))
        return false;
    drain_after(p);
    for (int i = 0; i < p->nloads; i++)
        if (p->f->nbuffers <= p->ld[i].buf)
            p->f->nbuffers = p->ld[i].buf + 1;
    return true;
}

static bool clear_ws(IrOp *op, void *ctx)
{
    if (op->kind == IR_FOR && op != ctx)
        op->flags &= ~IRF_WARP_SPEC;
    return true;
}

bool pass_pipeline_ws(IrFunc *f)
{
    Pipe p;
    if (!pipe_init(&p, f))
        return false;
    PtrVec loops = {0};
    pipe_planned_loops(f, &loops);
    bool ok = true;
    for (int i = 0; i < loops.len && ok && !f->arena->oom; i++)
        ok = ws_loop(&p, loops.items[i]);
    ir_walk(f->body, clear_ws, p.ws_loop);
    ir_renumber(f);
    return ok;
}
