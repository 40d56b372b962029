/* pipe_refill.c: where a loop's rings refilled in place (IrPlan.refill)
 * take their next copies, and how the copies are waited for (pass
 * pipeline_rings, pipeline.c): each ring's refill goes right after the
 * iteration's last read of its slot where a dot still follows, and each
 * such point's copies are a cp.async group of their own, waited for just
 * before the group's first reader. */
#include "passes/pipeline.h"

/* Whether op o, or an op nested in its regions, takes one of the n values
 * in `views` as an operand. */
static bool takes_any(const IrOp *o, IrValue *const *views, int n)
{
    for (int k = 0; k < o->nops; k++)
        for (int v = 0; v < n; v++)
            if (o->operands[k] == views[v])
                return true;
    for (int r = 0; r < o->nregions; r++)
        for (const IrOp *c = o->regions[r]->first; c; c = c->next)
            if (takes_any(c, views, n))
                return true;
    return false;
}

/* The last op at the body's top level that reads ring i's slot, following
 * the views of it (a transposed or reshaped view stays in shared memory)
 * and its conversions to the ops that read it into registers; NULL when
 * none does. */
static IrOp *last_reader(Pipe *p, IrValue *view)
{
    enum { MAX_VIEWS = 16 };
    IrValue *views[MAX_VIEWS] = {view};
    int n = 1;
    IrOp *last = NULL;
    for (IrOp *o = p->body->first; o; o = o->next) {
        if (!takes_any(o, views, n))
            continue;
        last = o;
        /* a conversion may be lowered where its value is used (a dot's
         * operand read from shared memory by the dot itself), and the
         * `other` put back after it reads that value: their users read too */
        bool defers = o->kind == IR_CONVERT_LAYOUT || o->kind == IR_SELECT;
        for (int r = 0; r < o->nres && n < MAX_VIEWS; r++)
            if (defers || (o->results[r]->layout && o->results[r]->layout->kind == LY_SHARED))
                views[n++] = o->results[r];
    }
    return last;
}

/* Where ring i's refill goes: right after the iteration's last read of the
 * slot it refills, behind a CTA barrier, where a dot still follows, so that
 * its copy runs under the rest of the body (a decode's K, read by the first
 * dot, copied while the softmax and the dot with V run); NULL (at the end
 * of the body with the others) where no dot follows (a GEMM's operands,
 * read by its one dot) or no read is at the top level. */
static IrOp *early_refill_point(Pipe *p, int i, IrValue *view)
{
    IrOp *yield = p->body->last;
    if (!p->ld[i].refill || p->ld[i].run)
        return NULL;
    for (const IrOp *o = p->body->first; o; o = o->next)
        if (o->kind == IR_DOT && o->results[0]->layout && o->results[0]->layout->kind == LY_MMA &&
            o->results[0]->layout->version == 3)
            return NULL; /* a wgmma left in flight must not meet a barrier early */
    IrOp *last = last_reader(p, view);
    if (!last || last->kind == IR_YIELD)
        return NULL;
    for (const IrOp *o = last->next; o && o != yield; o = o->next)
        if (o->kind == IR_DOT)
            return last->next;
    return NULL;
}

/* The groups of the loads' copies within an iteration (p->group, p->ngroups)
 * from their refill points (early[i], NULL: the end of the body): a group
 * per point, in body order, the end's last (empty where every ring is
 * refilled early). One group where the rings are not all shared cp.async
 * rings refilled in place, or no ring is refilled early. */
static void refill_groups(Pipe *p, IrOp *const *early, int *group, int *ngroups)
{
    IrOp *pts[MAX_LOADS];
    int n = 0;
    bool split = p->ncp == p->nloads && !p->ws && !(p->loop->flags & IRF_FLATTEN);
    for (int i = 0; i < p->nloads; i++) {
        group[i] = 0;
        split &= p->ld[i].refill && pipe_read_by_others(p, i);
    }
    *ngroups = 1;
    for (const IrOp *o = p->body->first; o && split; o = o->next)
        for (int i = 0; i < p->nloads; i++)
            if (early[i] == o && (n == 0 || pts[n - 1] != o))
                pts[n++] = early[i];
    if (!split || n == 0)
        return;
    for (int i = 0; i < p->nloads; i++) {
        group[i] = n;
        for (int k = 0; k < n; k++)
            if (pts[k] == early[i])
                group[i] = k;
    }
    *ngroups = n + 1;
}

void pipe_early_points(Pipe *p, IrValue *const *views, IrOp **early)
{
    for (int i = 0; i < p->nloads; i++)
        early[i] = early_refill_point(p, i, views[i]);
}

/* Decided before the prologue, which copies each group in turn, from the
 * loads' own values (the views that replace them read the same way). */
void pipe_plan_groups(Pipe *p)
{
    IrValue *vals[MAX_LOADS];
    IrOp *early[MAX_LOADS];
    for (int i = 0; i < p->nloads; i++)
        vals[i] = p->ld[i].op->results[0];
    pipe_early_points(p, vals, early);
    refill_groups(p, early, p->group, &p->ngroups);
}

/* Commits at the body's top level before op `at`. */
static int commits_before(const Pipe *p, const IrOp *at)
{
    int n = 0;
    for (const IrOp *o = p->body->first; o && o != at; o = o->next)
        n += o->kind == IR_ASYNC_COMMIT;
    return n;
}

/* With G groups an iteration, the copies of group g for this iteration
 * were committed S-1 iterations back: the G-1-g groups after it in that
 * iteration, (S-2)G in the ones between and the commits of this
 * iteration before `at` may stay in flight at `at`. Group 0's wait is the
 * top's (wait_for_slot's `top`); every other group's goes before its
 * first reader, with a barrier: V's copies, committed at the end of the
 * iteration before, land under this one's first dot and softmax. Where
 * the groups came out otherwise than planned (the prologue committed
 * them as planned), the top waits for every copy. */
void pipe_wait_for_groups(Pipe *p, IrOp *top, IrValue *const *views, IrOp *const *early)
{
    int group[MAX_LOADS], ngroups, G = p->ngroups, S = p->stages;
    refill_groups(p, early, group, &ngroups);
    bool same = ngroups == G;
    for (int i = 0; i < p->nloads && same; i++)
        same = group[i] == p->group[i];
    if (G == 1)
        return;
    if (!same) {
        top->ival = 0;
        return;
    }
    top->ival = G - 1 + (S - 2) * G;
    for (int g = 1; g < G; g++) {
        IrOp *at = NULL;
        for (IrOp *o = p->body->first; o && !at; o = o->next)
            for (int i = 0; i < p->nloads && !at; i++)
                if (group[i] == g && takes_any(o, &views[i], 1))
                    at = o;
        if (!at)
            continue;
        IrBuilder b = {p->f, p->body, at};
        IrOp *w = ir_build(&b, IR_ASYNC_WAIT, top->span, NULL, 0, NULL, 0);
        w->ival = G - 1 - g + (S - 2) * G + commits_before(p, w);
    }
}
