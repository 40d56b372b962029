/* codegen/tma.c: the TMA half of the software pipeline (sm_90a). A ring
 * that TMA fills has one mbarrier per slot, after the ring buffers in
 * shared memory. Thread 0 arms a slot's barrier with the bytes it expects
 * (mbarrier.arrive.expect_tx) and issues one cp.async.bulk.tensor per
 * 128-byte panel of the tile, which lands in the swizzled layout of
 * cg_tile_index (the tensor map's swizzle matches it) and counts its bytes
 * on the barrier. Every thread waits on the barrier of the slot it reads
 * with the parity of the slot's current phase; each thread keeps the
 * phases of a ring as bits of an i32 (one bit per slot, flipped at each
 * wait) that lives in registers across loops, so a loop entered again (a
 * persistent kernel) goes on where the last one left.
 *
 * A ring that a producer warpgroup fills (warp specialization) also has an
 * empty mbarrier per slot, after its full ones, which expects one arrival
 * from every consumer thread (tma_release, once the slot's tiles were
 * read). The producer's one thread waits on it before refilling the slot,
 * with phase bits of its own that start at ones: the wait for a slot's
 * first fill asks for the phase before the barrier's first, which counts
 * as complete, so it passes at once. LLVM 19 has no TMA intrinsics: the
 * instructions are inline PTX. */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

void cg_tma_params(Cg *cg, int n)
{
    const IrFunc *f = cg->f;
    TK_UNUSED(n);
    if (f->ntmaps == 0)
        return;
    cg->tmap = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)f->ntmaps);
    LLVMTypeRef map = LLVMArrayType(LLVMInt8TypeInContext(cg->ctx), 128);
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
    LLVMValueRef *which = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)f->ntmaps);
    int nhost = 0;
    for (int i = 0; i < f->ntmaps; i++) {
        if (f->tmaps[i].device)
            continue; /* cg_tmap_device_setup */
        unsigned at = (unsigned)ir_tmap_param(f, i);
        LLVMAddAttributeAtIndex(cg->fn, at + 1, LLVMCreateTypeAttribute(cg->ctx, byval, map));
        LLVMAddAttributeAtIndex(cg->fn, at + 1, LLVMCreateEnumAttribute(cg->ctx, align, 64));
        cg->tmap[i] = LLVMGetParam(cg->fn, at);
        char name[32];
        snprintf(name, sizeof name, "tk_tmap%d", i);
        LLVMSetValueName2(cg->tmap[i], name, strlen(name));
        which[nhost++] = cg_i32(cg, at + 1);
    }
    if (!nhost)
        return;
    /* grid constants: the instructions read the parameters where they are */
    const char *key = "grid_constant";
    LLVMValueRef md[3] = {cg->fn, LLVMMDStringInContext(cg->ctx, key, (unsigned)strlen(key)),
                          LLVMMDNodeInContext(cg->ctx, which, (unsigned)nhost)};
    LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations", LLVMMDNodeInContext(cg->ctx, md, 3));
}

/* The 32-bit shared address of byte `off` of shared memory. */
static LLVMValueRef smem_u32(Cg *cg, LLVMValueRef off)
{
    LLVMValueRef p = cg_smem_addr_at(cg, off, cg_i32(cg, 0), DT_I8);
    return LLVMBuildPtrToInt(cg->b, p, LLVMInt32TypeInContext(cg->ctx), "");
}

/* The full (or with `empty`, empty) mbarrier of a ring's slot. */
static LLVMValueRef barrier_at(Cg *cg, int buf, LLVMValueRef slot, bool empty)
{
    LLVMValueRef off = LLVMBuildMul(cg->b, slot, cg_i32(cg, 8), "");
    int64_t at = empty ? cg->empty_off[buf] : cg->bar_off[buf];
    return smem_u32(cg, LLVMBuildAdd(cg->b, off, cg_i32(cg, at), ""));
}

static LLVMValueRef barrier_of(Cg *cg, int buf, LLVMValueRef slot)
{
    return barrier_at(cg, buf, slot, false);
}

/* The thread that issues copies: thread 0, or in the producer's region
 * the one thread that runs it. */
static LLVMValueRef is_thread0(Cg *cg)
{
    if (cg->producer)
        return LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
    return LLVMBuildICmp(cg->b, LLVMIntEQ, cg->tid, cg_i32(cg, 0), "");
}

static void init_barrier(Cg *cg, LLVMValueRef bar, int count)
{
    LLVMTypeRef pt[2] = {LLVMInt32TypeInContext(cg->ctx), LLVMInt32TypeInContext(cg->ctx)};
    LLVMValueRef args[2] = {bar, cg_i32(cg, count)};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 2, "mbarrier.init.shared::cta.b64 [$0], $1;",
           "r,n", args);
}

void cg_tma_setup(Cg *cg)
{
    cg_tmap_device_setup(cg);
    bool any = false;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    for (int i = 0; i < cg->nbufs; i++) {
        if (cg->bar_off[i] < 0)
            continue;
        any = true;
        cg->phase[i] = LLVMBuildAlloca(cg->b, i32, "tma.phase");
        LLVMBuildStore(cg->b, cg_i32(cg, 0), cg->phase[i]);
        if (cg->empty_off[i] < 0)
            continue;
        cg->empty_phase[i] = LLVMBuildAlloca(cg->b, i32, "tma.empty_phase");
        LLVMBuildStore(cg->b, cg_i32(cg, -1), cg->empty_phase[i]);
    }
    if (!any)
        return;
    LLVMBasicBlockRef done = cg_begin_if(cg, is_thread0(cg), "tma.init");
    for (int i = 0; i < cg->nbufs; i++)
        for (int s = 0; s < cg->bar_slots[i]; s++) {
            init_barrier(cg, barrier_of(cg, i, cg_i32(cg, s)), 1);
            if (cg->empty_off[i] >= 0) /* every consumer thread releases the slot */
                init_barrier(cg, barrier_at(cg, i, cg_i32(cg, s), true), cg->T);
        }
    cg_cluster_init(cg);
    /* the initialised barriers visible to the async proxy (TMA's
     * complete_tx), then to every thread before its first wait */
    cg_asm_void(cg, "fence.mbarrier_init.release.cluster;");
    cg_end_if(cg, done);
    cg_barrier(cg);
    cg_cluster_start(cg);
}

/* Traps when the tile's origin is negative: TMA would give zeros where the
 * load reads memory before the tensor. Only where the pipeline could not
 * prove the origin non-negative (IRF_NONNEG): the trap is a path on which
 * thread 0 leaves while wgmma groups are in flight, and ptxas then
 * serialises every wgmma of the kernel (its performance warning C7518). */
static void check_origin(Cg *cg, LLVMValueRef inner, LLVMValueRef outer)
{
    LLVMValueRef neg = LLVMBuildOr(cg->b, inner, outer, "");
    neg = LLVMBuildICmp(cg->b, LLVMIntSLT, neg, cg_i32(cg, 0), "");
    LLVMBasicBlockRef done = cg_begin_if(cg, neg, "tma.negative");
    cg_intrinsic(cg, "llvm.trap", NULL, 0, NULL, 0);
    cg_end_if(cg, done);
}

static void copy_boxes(Cg *cg, const IrOp *op, const IrTmap *m, int buf, LLVMValueRef inner,
                       LLVMValueRef outer, LLVMValueRef slot, LLVMValueRef shared);

/* Thread 0, when the copy is live: arm the slot's barrier with the tile's
 * bytes, then copy it one panel (box) at a time (copy_boxes). */
static void emit_copy(Cg *cg, const IrOp *op)
{
    const IrTmap *m = &cg->f->tmaps[op->sub];
    int buf = (int)op->ival;
    if (buf < 0 || buf >= cg->nbufs || cg->bar_off[buf] < 0 || !cg->tmap) {
        cg_internal(cg, op->span, "tma_copy into ring %d without barriers", buf);
        return;
    }
    LLVMValueRef inner = cg_get(cg, op->operands[0]).el[0];
    LLVMValueRef outer = cg_get(cg, op->operands[1]).el[0];
    LLVMValueRef live = cg_get(cg, op->operands[2]).el[0];
    LLVMValueRef slot = cg_get(cg, op->operands[3]).el[0];
    /* in a cluster, the CTA meets the other whether or not its copy is live */
    LLVMValueRef shared = cg->cl ? cg_cluster_share(cg, buf, slot, inner, outer, live) : NULL;
    LLVMValueRef go = LLVMBuildAnd(cg->b, is_thread0(cg), live, "");
    LLVMBasicBlockRef done = cg_begin_if(cg, go, "tma.copy");
    copy_boxes(cg, op, m, buf, inner, outer, slot, shared);
    cg_end_if(cg, done);
}

/* Thread 0, for a live copy: arm the slot's barrier with the tile's bytes
 * and copy it one panel (box) at a time. With `shared` (i1, a cluster's):
 * where it holds, the boxes of this CTA's rank go to both CTAs of the pair
 * (multicast); where not, every box to this CTA alone. */
static void copy_boxes(Cg *cg, const IrOp *op, const IrTmap *m, int buf, LLVMValueRef inner,
                       LLVMValueRef outer, LLVMValueRef slot, LLVMValueRef shared)
{
    if (!(op->flags & IRF_NONNEG))
        check_origin(cg, inner, outer);
    if (m->device)
        cg_tmap_check(cg, op->sub);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
    LLVMValueRef bar = barrier_of(cg, buf, slot);
    int bytes = cg_mem_bytes(m->dt);
    int64_t panel_bytes = (int64_t)m->box[0] * m->box[1] * bytes;
    LLVMValueRef tx[2] = {bar, cg_i32(cg, panel_bytes * (m->cols / m->box[0]))};
    LLVMTypeRef txt[2] = {i32, i32};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), txt, 2,
           "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r", tx);
    LLVMValueRef map = LLVMBuildPtrToInt(cg->b, cg->tmap[op->sub], i64, "");
    LLVMValueRef base = cg_buffer_slot(cg, buf, slot);
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx);
    for (int p = 0; p < m->cols / m->box[0]; p++) {
        LLVMValueRef dst = smem_u32(cg, LLVMBuildAdd(cg->b, base, cg_i32(cg, p * panel_bytes), ""));
        LLVMValueRef args[7] = {dst, map,
                                LLVMBuildAdd(cg->b, inner, cg_i32(cg, (int64_t)p * m->box[0]), ""),
                                outer, bar};
        LLVMTypeRef pt[7] = {i32, i64, i32, i32, i32, i32, i16};
        if (!shared) {
            cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 5,
                   "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                   "[$0], [$1, {$2, $3}], [$4];",
                   "r,l,r,r,r", args);
            continue;
        }
        /* the pair's copy of this box (CTA mask 0b11), then this CTA's own */
        LLVMValueRef mc = LLVMBuildAnd(cg->b, shared, cg_cluster_mine(cg, p), "");
        args[5] = LLVMBuildZExt(cg->b, mc, i32, "");
        args[6] = LLVMConstInt(i16, 3, 0);
        cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 7,
               "{\n.reg .pred q;\nsetp.ne.b32 q, $5, 0;\n"
               "@q cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               ".multicast::cluster [$0], [$1, {$2, $3}], [$4], $6;\n}",
               "r,l,r,r,r,r,h", args);
        args[5] = LLVMBuildZExt(cg->b, LLVMBuildNot(cg->b, shared, ""), i32, "");
        cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 6,
               "{\n.reg .pred q;\nsetp.ne.b32 q, $5, 0;\n"
               "@q cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[$0], [$1, {$2, $3}], [$4];\n}",
               "r,l,r,r,r,r", args);
    }
}

/* Spins on the slot's barrier until the phase this thread expects has
 * completed, then expects the next one. */
static void emit_wait(Cg *cg, const IrOp *op)
{
    int buf = (int)op->ival;
    bool empty = op->sub == 1;
    if (buf < 0 || buf >= cg->nbufs || cg->bar_off[buf] < 0 || (empty && cg->empty_off[buf] < 0)) {
        cg_internal(cg, op->span, "tma_wait on ring %d without barriers", buf);
        return;
    }
    LLVMValueRef slot = cg_get(cg, op->operands[0]).el[0];
    LLVMValueRef bar = barrier_at(cg, buf, slot, empty);
    cg_mbarrier_wait(cg, bar, empty ? cg->empty_phase[buf] : cg->phase[buf], slot, false);
}

void cg_mbarrier_wait(Cg *cg, LLVMValueRef bar, LLVMValueRef phase, LLVMValueRef slot, bool cluster)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef bits = LLVMBuildLoad2(cg->b, i32, phase, "");
    LLVMValueRef parity =
        LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, bits, slot, ""), cg_i32(cg, 1), "");
    LLVMValueRef args[2] = {bar, parity};
    LLVMTypeRef pt[2] = {i32, i32};
    /* The spin loop lives inside the asm, its branch marked uniform: as an
     * LLVM loop around a predicate turned into a register, ptxas treated the
     * barrier address as divergent and moved it to uniform registers on
     * every try (R2UR), lengthening each wait; ${:uid} keeps the label
     * unique where the asm is emitted more than once. */
    const char *text = cluster
        ? "{\n.reg .pred p;\nmbar_wait_${:uid}:\n"
          "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [$0], $1;\n"
          "@!p bra.uni mbar_wait_${:uid};\n}"
        : "{\n.reg .pred p;\nmbar_wait_${:uid}:\n"
          "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
          "@!p bra.uni mbar_wait_${:uid};\n}";
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 2, text, cluster ? "r,r,~{memory}" : "r,r",
           args);
    LLVMValueRef flip = LLVMBuildShl(cg->b, cg_i32(cg, 1), slot, "");
    LLVMBuildStore(cg->b, LLVMBuildXor(cg->b, bits, flip, ""), phase);
}

/* Every consumer thread, when live: one arrival on the slot's empty
 * mbarrier (release semantics: its reads of the slot come first). */
static void emit_release(Cg *cg, const IrOp *op)
{
    int buf = (int)op->ival;
    if (buf < 0 || buf >= cg->nbufs || cg->empty_off[buf] < 0) {
        cg_internal(cg, op->span, "tma_release on ring %d without empty barriers", buf);
        return;
    }
    LLVMValueRef slot = cg_get(cg, op->operands[0]).el[0];
    LLVMValueRef live = cg_get(cg, op->operands[1]).el[0];
    LLVMBasicBlockRef done = cg_begin_if(cg, live, "tma.release");
    LLVMValueRef bar = barrier_at(cg, buf, slot, true);
    LLVMTypeRef pt[1] = {LLVMInt32TypeInContext(cg->ctx)};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 1, "mbarrier.arrive.shared::cta.b64 _, [$0];",
           "r", &bar);
    cg_end_if(cg, done);
}

/* Writes tile x (value v, in its layout) into the swizzled tile t at
 * byte offset base of shared memory: a vector per run of a thread's
 * consecutive elements that stays in one 16-byte chunk (the swizzle moves
 * whole chunks). */
static void stage_tile(Cg *cg, const IrValue *v, const CgTile *t, LLVMValueRef base)
{
    CgLayout l = cg_layout(cg, v);
    CgVal x = cg_get(cg, v);
    int dim, run = lin_run(&l.lin, 2, v->type.shape, &dim);
    int w = run < t->vec ? run : t->vec;
    if ((dim == 0) != t->trans)
        w = 1; /* stored across the registers' runs: one element each */
    LLVMTypeRef et = cg_mem_type(cg, v->type.dt);
    int lc = v->type.shape[1];
    for (int s = 0; s + w <= x.n; s += w) {
        LLVMValueRef e = cg_elem_index(cg, &l, s);
        LLVMValueRef r = LLVMBuildLShr(cg->b, e, cg_i32(cg, cg_ilog2(lc)), "");
        LLVMValueRef c = LLVMBuildAnd(cg->b, e, cg_i32(cg, lc - 1), "");
        LLVMValueRef p = cg_smem_addr_at(cg, base, cg_tile_index(cg, t, r, c), v->type.dt);
        LLVMValueRef val = x.el[s];
        if (w > 1) {
            val = LLVMGetUndef(LLVMVectorType(et, (unsigned)w));
            for (int i = 0; i < w; i++)
                val = LLVMBuildInsertElement(cg->b, val, x.el[s + i], cg_i32(cg, i), "");
        }
        LLVMSetAlignment(LLVMBuildStore(cg->b, val, p), (unsigned)(w * t->bytes));
    }
}

/* tma_store: every thread writes its elements into a swizzled tile in the
 * scratch (1024-byte aligned, as the 128-byte swizzle repeats every 8
 * rows of 128 bytes), fences them for the async proxy and meets the
 * others; thread 0 writes the tile out one panel (box) at a time as one
 * bulk group, and waits until the copies have read the tile before the
 * barrier that frees the scratch for whatever comes next. The copies are
 * predicated, not branched around: ptxas serialises every wgmma of a loop
 * that holds a divergent path (C7518, a flattened loop's epilogue). The
 * other threads commit and wait on no group, which returns at once. The global
 * writes finish on their own: nothing after the store reads them
 * (pass_tma_store). */
static void emit_store(Cg *cg, const IrOp *op)
{
    if (!cg->tmap || op->sub < 0 || op->sub >= cg->f->ntmaps) {
        cg_internal(cg, op->span, "tma_store without tensor map %d", op->sub);
        return;
    }
    const IrTmap *m = &cg->f->tmaps[op->sub];
    const IrValue *v = op->operands[0];
    CgTile t;
    cg_tile_geometry(&t, &v->type, op->ival != 0);
    int64_t pad = (1024 - cg->smem_reserved % 1024) % 1024;
    int64_t panel_bytes = (int64_t)m->box[0] * m->box[1] * t.bytes;
    cg_smem_need(cg, pad + type_numel(v->type) * t.bytes);
    LLVMValueRef base = cg_i32(cg, cg->smem_reserved + pad);
    stage_tile(cg, v, &t, base);
    cg_fence_async_shared(cg);
    cg_barrier(cg);
    LLVMValueRef inner = cg_get(cg, op->operands[1]).el[0];
    LLVMValueRef outer = cg_get(cg, op->operands[2]).el[0];
    LLVMValueRef t0 = is_thread0(cg);
    if (!(op->flags & IRF_NONNEG)) {
        LLVMBasicBlockRef checked = cg_begin_if(cg, t0, "tma.store.check");
        check_origin(cg, inner, outer);
        cg_end_if(cg, checked);
    }
    LLVMTypeRef i1 = LLVMInt1TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx),
                i64 = LLVMInt64TypeInContext(cg->ctx);
    LLVMValueRef map = LLVMBuildPtrToInt(cg->b, cg->tmap[op->sub], i64, "");
    for (int p = 0; p < m->cols / m->box[0]; p++) {
        LLVMValueRef src = smem_u32(cg, LLVMBuildAdd(cg->b, base, cg_i32(cg, p * panel_bytes), ""));
        LLVMValueRef args[5] = {map,
                                LLVMBuildAdd(cg->b, inner, cg_i32(cg, (int64_t)p * m->box[0]), ""),
                                outer, src, t0};
        LLVMTypeRef pt[5] = {i64, i32, i32, i32, i1};
        cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 5,
               "@$4 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];",
               "l,r,r,r,b,~{memory}", args);
    }
    cg_asm_void(cg, "cp.async.bulk.commit_group;");
    cg_asm_void(cg, "cp.async.bulk.wait_group.read 0;");
    cg_barrier(cg);
}

bool cg_emit_tma(Cg *cg, const IrOp *op)
{
    switch (op->kind) {
    case IR_TMA_COPY: emit_copy(cg, op); return true;
    case IR_TMAP_MAKE: return cg_emit_tmap(cg, op);
    case IR_TMA_STORE: emit_store(cg, op); return true;
    case IR_TMA_WAIT: emit_wait(cg, op); return true;
    case IR_TMA_RELEASE: emit_release(cg, op); return true;
    default: return false;
    }
}
