/* codegen/cluster.c: clusters of two CTAs for a TMA pipeline (num_ctas=2,
 * sm_90a). Each CTA is still one program; the launcher groups neighbouring
 * programs along the grid's x in pairs (.reqnctapercluster 2, 1, 1), and a
 * tile that both copy at the same coordinates is read from global memory
 * once: each CTA issues half of its boxes (box p from the CTA of rank p % 2)
 * with .multicast::cluster and a CTA mask of both, into the same shared
 * offset of both CTAs, whose full mbarriers each expect the whole tile.
 *
 * Whether the two copies agree is known only at run time (a grouped tile
 * order pairs programs of one column of tiles except at a group's edge), so
 * the two CTAs meet at every copy: each one's thread 0 writes its copy's
 * origin and liveness into the other's mailbox for the ring slot (mapa and
 * st.shared::cluster) and arrives on its own and on the other's
 * cluster-empty mbarrier of the slot (two arrivals a phase, release at
 * cluster scope); its threads wait on their own (acquire) and compare.
 * Equal and live: multicast; otherwise each CTA copies the whole tile for
 * itself, as without a cluster. The meeting is also the reuse side: a CTA
 * arrives at the point where its own pipeline may overwrite the slot, so
 * neither overwrites a slot the other still reads. This was chosen over a
 * cluster barrier per iteration: one remote arrival a copy, and no
 * barrier.cluster across both CTAs' warps inside the loop.
 *
 * The meetings pair up only if both CTAs run the loop the same number of
 * times: before the first copy, the loop's bounds are exchanged behind a
 * cluster barrier, and where they differ no copy of the kernel meets
 * (lockstep off, the same in both CTAs). The meetings of a slot's mailbox
 * are at least two rounds apart (rings of two slots or more), so a mailbox
 * is read before the other CTA writes it again.
 *
 * Needs: the TMA copies at the top of the kernel and directly in one for
 * loop there (all threads reach every meeting and both cluster barriers),
 * no producer warpgroup, sm_90a. Elsewhere the kernel is compiled as for
 * num_ctas=1 and CgKernel's cluster_note says why. */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

struct CgCluster {
    const IrOp *loop;      /* the loop whose copies meet */
    const IrOp *first;     /* the op before which the bounds are exchanged */
    int64_t *empty_off;    /* by ring: its cluster-empty mbarriers (8 bytes a slot), or -1 */
    int64_t *mail_off;     /* by ring: its mailboxes (16 bytes a slot) */
    int *slots;            /* by ring */
    int64_t bounds_off;    /* the loop bounds' mailbox (24 bytes) */
    LLVMValueRef lockstep; /* i1 alloca: the two CTAs run the loop alike (each thread's) */
    LLVMValueRef *phase;   /* by ring: phase bits of its cluster-empty mbarriers (each thread's) */
    LLVMValueRef rank;     /* %cluster_ctarank */
};

typedef struct Find {
    const IrOp *loop, *first;
    int copies; /* in the loop */
    int top;    /* at the top, before it */
    const char *why;
} Find;

static bool count_copy(IrOp *op, void *ctx)
{
    *(int *)ctx += op->kind == IR_TMA_COPY;
    return true;
}

static int copies_in(const IrOp *op)
{
    int n = 0;
    for (int r = 0; r < op->nregions; r++)
        ir_walk(op->regions[r], count_copy, &n);
    return n;
}

/* Whether v's value is known where `at` (an op of the kernel's body) runs:
 * a parameter, a constant, or an op of the body before it. */
static bool known_at(const IrValue *v, const IrOp *at)
{
    if (!v->def)
        return v->owner && !v->owner->parent;
    if (v->def->kind == IR_CONST && v->type.rank == 0)
        return true;
    if (v->def->parent != at->parent)
        return false;
    for (const IrOp *o = v->def; o; o = o->next)
        if (o == at)
            return true;
    return false;
}

/* The loop and first op of the plan, or why there is none. */
static void find(const IrFunc *f, Find *fd)
{
    for (const IrOp *op = f->body->first; op && !fd->why; op = op->next) {
        if (op->kind == IR_PRODUCER || op->kind == IR_TMA_RELEASE) {
            fd->why = "its loop is warp-specialized";
        } else if (op->kind == IR_TMA_COPY) {
            if (fd->loop)
                fd->why = "a TMA copy follows its loop";
            fd->top++;
            if (!fd->first)
                fd->first = op;
        } else if (op->nregions && copies_in(op)) {
            if (op->kind != IR_FOR)
                fd->why = "TMA copies inside a branch or a while loop";
            else if (fd->loop)
                fd->why = "TMA copies in more than one loop";
            fd->loop = op;
            if (!fd->first)
                fd->first = op;
            for (const IrOp *in = op->regions[0]->first; in && !fd->why; in = in->next)
                if (in->nregions && copies_in(in))
                    fd->why = "a TMA copy inside a branch or loop of its loop";
                else
                    fd->copies += in->kind == IR_TMA_COPY;
        }
    }
    if (!fd->why && !fd->loop)
        fd->why = "it has no TMA copies in a loop (--tma, and tiles that tensor maps fit)";
    for (int i = 0; i < 3 && !fd->why; i++)
        if (!known_at(fd->loop->operands[i], fd->first))
            fd->why = "its loop's bounds are computed after the first copy";
}

static bool slot_check(IrOp *op, void *ctx)
{
    if (op->kind == IR_TMA_COPY && op->ival2 < 2)
        *(const char **)ctx = "a TMA ring has one slot";
    return true;
}

void cg_cluster_plan(Cg *cg, char *why, size_t cap)
{
    const IrFunc *f = cg->f;
    why[0] = 0;
    cg->cl = NULL;
    if (f->num_ctas < 2)
        return;
    Find fd = {0};
    if (strcmp(cg->o->arch, "sm_90a") != 0)
        fd.why = "clusters with TMA multicast need sm_90a";
    else if (f->producer_warps)
        fd.why = "its loop is warp-specialized";
    else
        find(f, &fd);
    if (!fd.why)
        ir_walk(f->body, slot_check, &fd.why);
    if (fd.why) {
        snprintf(why, cap, "num_ctas=%d compiled as 1: %s", f->num_ctas, fd.why);
        return;
    }
    struct CgCluster *cl = cg_alloc(cg, sizeof *cl);
    cl->loop = fd.loop;
    cl->first = fd.first;
    cg->cl = cl;
}

/* Loop bounds are exchanged before this op (cg_emit_block asks). */
bool cg_cluster_first(const Cg *cg, const IrOp *op) { return cg->cl && cg->cl->first == op; }

static bool place_op(IrOp *op, void *ctx)
{
    Cg *cg = ctx;
    if (op->kind == IR_TMA_COPY && op->ival >= 0 && op->ival < cg->nbufs)
        cg->cl->slots[op->ival] = (int)op->ival2;
    return true;
}

int64_t cg_cluster_place(Cg *cg, int64_t at)
{
    struct CgCluster *cl = cg->cl;
    if (!cl)
        return at;
    size_t n = (size_t)cg->nbufs;
    cl->empty_off = cg_alloc(cg, sizeof(int64_t) * n);
    cl->mail_off = cg_alloc(cg, sizeof(int64_t) * n);
    cl->slots = cg_alloc(cg, sizeof(int) * n);
    cl->phase = cg_alloc(cg, sizeof(LLVMValueRef) * n);
    ir_walk(cg->f->body, place_op, cg);
    for (size_t i = 0; i < n; i++) {
        cl->empty_off[i] = cl->slots[i] ? at : -1;
        at += 8 * (int64_t)cl->slots[i];
    }
    at = (at + 15) / 16 * 16;
    for (size_t i = 0; i < n; i++) {
        cl->mail_off[i] = at;
        at += 16 * (int64_t)cl->slots[i];
    }
    cl->bounds_off = at;
    return at + 24;
}

/* ---- PTX pieces ---------------------------------------------------------------- */

static LLVMTypeRef i32t(Cg *cg) { return LLVMInt32TypeInContext(cg->ctx); }

static LLVMValueRef smem_u32(Cg *cg, LLVMValueRef off)
{
    LLVMValueRef p = cg_smem_addr_at(cg, off, cg_i32(cg, 0), DT_I8);
    return LLVMBuildPtrToInt(cg->b, p, i32t(cg), "");
}

/* The address of the same shared byte in the other CTA of the pair. */
static LLVMValueRef peer_addr(Cg *cg, LLVMValueRef addr)
{
    LLVMValueRef peer = LLVMBuildXor(cg->b, cg->cl->rank, cg_i32(cg, 1), "");
    LLVMValueRef args[2] = {addr, peer};
    LLVMTypeRef pt[2] = {i32t(cg), i32t(cg)};
    return cg_asm_pure(cg, i32t(cg), pt, 2, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", args);
}

static void store_remote(Cg *cg, LLVMValueRef addr, LLVMValueRef v)
{
    bool wide = LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64;
    LLVMValueRef args[2] = {addr, v};
    LLVMTypeRef pt[2] = {i32t(cg), LLVMTypeOf(v)};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 2,
           wide ? "st.shared::cluster.u64 [$0], $1;" : "st.shared::cluster.u32 [$0], $1;",
           wide ? "r,l,~{memory}" : "r,r,~{memory}", args);
}

static LLVMValueRef load_local(Cg *cg, LLVMValueRef addr, bool wide)
{
    LLVMTypeRef t = wide ? LLVMInt64TypeInContext(cg->ctx) : i32t(cg);
    LLVMTypeRef pt[1] = {i32t(cg)};
    return cg_asm(cg, t, pt, 1, wide ? "ld.shared.u64 $0, [$1];" : "ld.shared.u32 $0, [$1];",
                  wide ? "=l,r,~{memory}" : "=r,r,~{memory}", &addr);
}

/* Every thread of both CTAs: what each wrote to the other before it is
 * visible after it (release, then acquire). */
static void cluster_barrier(Cg *cg)
{
    cg_asm_void(cg, "barrier.cluster.arrive.release;");
    cg_asm_void(cg, "barrier.cluster.wait.acquire;");
}

static LLVMValueRef is_thread0(Cg *cg)
{
    return LLVMBuildICmp(cg->b, LLVMIntEQ, cg->tid, cg_i32(cg, 0), "");
}

/* ---- the kernel's parts ---------------------------------------------------------- */

/* Thread 0, among the TMA barriers' initialisation: the cluster-empty
 * mbarriers, two arrivals a phase (one from each CTA). */
void cg_cluster_init(Cg *cg)
{
    struct CgCluster *cl = cg->cl;
    if (!cl)
        return;
    for (int i = 0; i < cg->nbufs; i++)
        for (int s = 0; s < cl->slots[i]; s++) {
            LLVMValueRef args[2] = {smem_u32(cg, cg_i32(cg, cl->empty_off[i] + 8 * s)),
                                    cg_i32(cg, 2)};
            LLVMTypeRef pt[2] = {i32t(cg), i32t(cg)};
            cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 2,
                   "mbarrier.init.shared::cta.b64 [$0], $1;", "r,n", args);
        }
}

/* Every thread, after the barriers were initialised and fenced: the
 * state each CTA keeps, and a cluster barrier, so that no arrival or copy
 * from the other CTA reaches a barrier not yet initialised. */
void cg_cluster_start(Cg *cg)
{
    struct CgCluster *cl = cg->cl;
    if (!cl)
        return;
    LLVMTypeRef pt[1] = {i32t(cg)};
    cl->rank = cg_asm_pure(cg, i32t(cg), pt, 0, "mov.u32 $0, %cluster_ctarank;", "=r", NULL);
    cl->lockstep = LLVMBuildAlloca(cg->b, LLVMInt1TypeInContext(cg->ctx), "cluster.lockstep");
    LLVMBuildStore(cg->b, LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 0, 0), cl->lockstep);
    for (int i = 0; i < cg->nbufs; i++) {
        if (!cl->slots[i])
            continue;
        cl->phase[i] = LLVMBuildAlloca(cg->b, i32t(cg), "cluster.phase");
        LLVMBuildStore(cg->b, cg_i32(cg, 0), cl->phase[i]);
    }
    cluster_barrier(cg);
}

/* Every thread, before the first copy: thread 0 writes the loop's bounds
 * into the other CTA's mailbox; after a cluster barrier every thread
 * compares them with its own. Both CTAs come to the same answer. */
void cg_cluster_bounds(Cg *cg)
{
    struct CgCluster *cl = cg->cl;
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
    LLVMValueRef mine[3];
    for (int i = 0; i < 3; i++) {
        const IrValue *v = cl->loop->operands[i];
        LLVMValueRef x = v->def && v->def->kind == IR_CONST
            ? LLVMConstInt(i64, (unsigned long long)v->def->ival, 1)
            : cg_get(cg, v).el[0];
        mine[i] = LLVMGetIntTypeWidth(LLVMTypeOf(x)) == 64 ? x : LLVMBuildSExt(cg->b, x, i64, "");
    }
    LLVMValueRef box = smem_u32(cg, cg_i32(cg, cl->bounds_off));
    LLVMBasicBlockRef done = cg_begin_if(cg, is_thread0(cg), "cluster.bounds");
    LLVMValueRef far = peer_addr(cg, box);
    for (int i = 0; i < 3; i++)
        store_remote(cg, LLVMBuildAdd(cg->b, far, cg_i32(cg, 8 * i), ""), mine[i]);
    cg_end_if(cg, done);
    cluster_barrier(cg);
    LLVMValueRef same = LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
    for (int i = 0; i < 3; i++) {
        LLVMValueRef theirs = load_local(cg, LLVMBuildAdd(cg->b, box, cg_i32(cg, 8 * i), ""), true);
        same = LLVMBuildAnd(cg->b, same, LLVMBuildICmp(cg->b, LLVMIntEQ, theirs, mine[i], ""), "");
    }
    LLVMBuildStore(cg->b, same, cl->lockstep);
}

/* Every thread, in lockstep: the meeting for one copy (see the top);
 * whether the other CTA copies the same live tile (thread 0's answer; the
 * others get false, as they copy nothing). Thread 0 writes, arrives and
 * reads; every thread waits, so that no thread spins on a path the others
 * skip while wgmma groups are in flight (ptxas would serialise the
 * kernel's wgmmas). */
static LLVMValueRef meet(Cg *cg, int buf, LLVMValueRef slot, LLVMValueRef inner, LLVMValueRef outer,
                         LLVMValueRef live)
{
    struct CgCluster *cl = cg->cl;
    LLVMTypeRef i32 = i32t(cg);
    LLVMValueRef mail = smem_u32(cg,
                                 LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, slot, cg_i32(cg, 16), ""),
                                              cg_i32(cg, cl->mail_off[buf]), ""));
    LLVMValueRef bar = smem_u32(cg,
                                LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, slot, cg_i32(cg, 8), ""),
                                             cg_i32(cg, cl->empty_off[buf]), ""));
    LLVMValueRef words[3] = {inner, outer, LLVMBuildZExt(cg->b, live, i32, "")};
    LLVMBasicBlockRef done = cg_begin_if(cg, is_thread0(cg), "cluster.arrive");
    LLVMValueRef far = peer_addr(cg, mail);
    for (int i = 0; i < 3; i++)
        store_remote(cg, LLVMBuildAdd(cg->b, far, cg_i32(cg, 4 * i), ""), words[i]);
    LLVMTypeRef pt[3] = {i32, i32, i32};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 1,
           "mbarrier.arrive.release.cluster.shared::cta.b64 _, [$0];", "r,~{memory}", &bar);
    LLVMValueRef far_bar = peer_addr(cg, bar);
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 1,
           "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [$0];", "r,~{memory}", &far_bar);
    cg_end_if(cg, done);
    cg_mbarrier_wait(cg, bar, cl->phase[buf], slot, true);
    /* thread 0 alone reads the mailbox (the one copying): its next arrival,
     * which the other CTA waits for before writing the mailbox again, comes
     * after the read in its own program order */
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    done = cg_begin_if(cg, is_thread0(cg), "cluster.read");
    LLVMValueRef same = live;
    for (int i = 0; i < 3; i++) {
        LLVMValueRef theirs =
            load_local(cg, LLVMBuildAdd(cg->b, mail, cg_i32(cg, 4 * i), ""), false);
        same = LLVMBuildAnd(cg->b, same, LLVMBuildICmp(cg->b, LLVMIntEQ, theirs, words[i], ""), "");
    }
    LLVMBasicBlockRef read = LLVMGetInsertBlock(cg->b);
    cg_end_if(cg, done);
    LLVMTypeRef i1 = LLVMInt1TypeInContext(cg->ctx);
    LLVMValueRef phi = LLVMBuildPhi(cg->b, i1, "cluster.same");
    LLVMValueRef in[2] = {LLVMConstInt(i1, 0, 0), same};
    LLVMBasicBlockRef bbs[2] = {from, read};
    LLVMAddIncoming(phi, in, bbs, 2);
    return phi;
}

LLVMValueRef cg_cluster_share(Cg *cg, int buf, LLVMValueRef slot, LLVMValueRef inner,
                              LLVMValueRef outer, LLVMValueRef live)
{
    LLVMTypeRef i1 = LLVMInt1TypeInContext(cg->ctx);
    LLVMValueRef lock = LLVMBuildLoad2(cg->b, i1, cg->cl->lockstep, "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef work = cg_new_bb(cg, "cluster.meet"), join = cg_new_bb(cg, "cluster.met");
    LLVMBuildCondBr(cg->b, lock, work, join);
    LLVMPositionBuilderAtEnd(cg->b, work);
    LLVMValueRef same = meet(cg, buf, slot, inner, outer, live);
    LLVMBasicBlockRef met = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, join);
    LLVMValueRef phi = LLVMBuildPhi(cg->b, i1, "cluster.shared");
    LLVMValueRef in[2] = {LLVMConstInt(i1, 0, 0), same};
    LLVMBasicBlockRef bbs[2] = {from, met};
    LLVMAddIncoming(phi, in, bbs, 2);
    return phi;
}

/* Box p of a shared tile: from the CTA of rank p % 2, into both. */
LLVMValueRef cg_cluster_mine(Cg *cg, int p)
{
    return LLVMBuildICmp(cg->b, LLVMIntEQ, cg->cl->rank, cg_i32(cg, p % 2), "");
}

/* Every thread, at the kernel's end: no CTA leaves while the other may
 * still write into its shared memory. */
void cg_cluster_exit(Cg *cg)
{
    if (cg->cl)
        cluster_barrier(cg);
}
