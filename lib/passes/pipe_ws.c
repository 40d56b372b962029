/* pipe_ws.c: warp specialization (pass pipeline_ws), as the plan of pass
 * pipeline_plan asks: a `for` planned warp_specialized gets an extra
 * producer warpgroup that issues every TMA copy of its rings (warp_spec.c
 * builds it), so the loop itself has no prologue, no copies and no
 * barrier. Each iteration waits for its slot's tiles and, after its dot, by
 * which time the wgmma of the iteration before has completed, releases
 * the slot that one read (tma_release on the slot's empty mbarrier, which
 * the producer waits on before it refills the slot). Assumes the plan
 * verified (every ring of such a loop a TMA tile, the body's one dot);
 * after the pass IRF_WARP_SPEC marks the loops that were specialized only. */
#include "passes/pipeline.h"
#include "passes/warp_spec.h"

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
        tw->ival = p->ld[i].buf;
        tw->ival2 = p->slots;
    }
    for (int i = 0; i < p->nloads; i++)
        pipe_view_ring(p, i, rd);
    IrOp *dot = pipe_only_dot(p);
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
        r->ival = p->ld[i].buf;
        r->ival2 = p->slots;
    }
    IrBuilder end = {p->f, body, body->last};
    pipe_yield_also(p, body->last, ir_next_slot(&end, sp, rd, p->slots));
}


/* The producer of a warp-specialized loop, once its rings are numbered. */
static bool add_producer(Pipe *p)
{
    WsRing r[MAX_LOADS];
    for (int i = 0; i < p->nloads; i++)
        r[i] = (WsRing){p->ld[i].tile, p->ld[i].tmap, p->ld[i].buf};
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
    if (p->ncp || !pipe_only_dot(p) || p->f->producer_warps)
        return false; /* TMA tiles read by one dot; one producer a kernel */
    IrValue *ahead[64], *rd;
    int nc = p->body->nargs - 1;
    for (int k = 0; k < nc; k++) /* no prologue: the carried values as they were */
        ahead[k] = loop->operands[3 + k];
    if (!pipe_widen_loop(p, ahead, &rd, NULL, NULL))
        return false;
    rewrite_ws(p, rd);
    if (!add_producer(p))
        return false;
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
