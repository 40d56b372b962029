/* codegen/warp_spec.c: the split of a warp-specialized kernel (sm_90a).
 * The kernel runs num_warps * 32 consumer threads (0 .. T-1, the threads
 * every layout counts) and one producer warpgroup (T .. T+127). After the
 * mbarriers are initialised (CTA-wide barrier 0, every thread), the
 * producer op sends the producer warpgroup its own way: it gives registers
 * back (setmaxnreg.dec), its first thread runs the op's region (the TMA
 * copies) and all its threads exit. The consumers take those registers
 * (setmaxnreg.inc) and run the rest of the kernel, meeting at named
 * barrier 1 of T threads instead of barrier 0, which the producer never
 * reaches. Both instructions are inline PTX. */
#include "codegen/cg.h"

#include <stdio.h>

/* setmaxnreg takes multiples of 8 from 24 to 256. At launch every thread
 * of the T + 128 may hold `entry` registers (the CTA's pool: what fits the
 * 64K register file, at most 248 so as not to pass ptxas's 255); the
 * producer keeps 24 (one thread of it issues the copies) and the
 * consumers share the rest, which must not be fewer than they had. */
CgRegs cg_ws_regs(int T)
{
    CgRegs r;
    int all = T + 128;
    r.entry = 65536 / all / 8 * 8;
    if (r.entry > 248)
        r.entry = 248;
    r.producer = 24;
    r.consumer = (r.entry * all - r.producer * 128) / T / 8 * 8;
    if (r.consumer > 256)
        r.consumer = 256;
    if (r.consumer < r.entry)
        r.consumer = r.entry;
    return r;
}

static void set_max_registers(Cg *cg, const char *action, int n)
{
    char text[64];
    snprintf(text, sizeof text, "setmaxnreg.%s.sync.aligned.u32 %d;", action, n);
    cg_asm_void(cg, text);
}

/* The producer's way: fewer registers, the region in its first thread,
 * then exit. */
static void emit_producer_side(Cg *cg, const IrOp *op, CgRegs regs)
{
    set_max_registers(cg, "dec", regs.producer);
    LLVMValueRef first = LLVMBuildICmp(cg->b, LLVMIntEQ, cg->tid, cg_i32(cg, cg->T), "");
    LLVMBasicBlockRef work = cg_new_bb(cg, "producer.work"), out = cg_new_bb(cg, "producer.exit");
    LLVMBuildCondBr(cg->b, first, work, out);
    LLVMPositionBuilderAtEnd(cg->b, work);
    cg->producer = true;
    const IrOp *y = cg_emit_block(cg, op->regions[0]);
    cg->producer = false;
    if (!cg->failed && (!y || y->kind != IR_YIELD))
        cg_internal(cg, op->span, "producer region lacks its yield");
    LLVMBuildBr(cg->b, out);
    LLVMPositionBuilderAtEnd(cg->b, out);
    LLVMBuildRetVoid(cg->b);
}

bool cg_emit_producer(Cg *cg, const IrOp *op)
{
    if (op->kind != IR_PRODUCER)
        return false;
    if (cg->sm != 90 || !cg->o->arch || cg->f->producer_warps != 4 || cg->T % 128 ||
        op->nregions != 1) {
        cg_internal(cg, op->span, "a producer warpgroup needs sm_90a and whole warpgroups");
        return true;
    }
    CgRegs regs = cg_ws_regs(cg->T);
    /* the warpgroup index, compared whole: every warp of a group goes one way */
    LLVMValueRef group = LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, 7), "");
    LLVMValueRef is_prod = LLVMBuildICmp(cg->b, LLVMIntEQ, group, cg_i32(cg, cg->T / 128), "");
    LLVMBasicBlockRef prod = cg_new_bb(cg, "producer"), cons = cg_new_bb(cg, "consumers");
    LLVMBuildCondBr(cg->b, is_prod, prod, cons);
    LLVMPositionBuilderAtEnd(cg->b, prod);
    emit_producer_side(cg, op, regs);
    LLVMPositionBuilderAtEnd(cg->b, cons);
    set_max_registers(cg, "inc", regs.consumer);
    cg->consumers = cg->T;
    return true;
}
