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

#include <llvm-c/DebugInfo.h>

#include <stdio.h>

/* setmaxnreg takes multiples of 8 from 24 to 256. At launch every thread
 * of the T + 128 may hold `entry` registers (a program's share of the 64K
 * register file, at most 248 so as not to pass ptxas's 255); the producer
 * keeps 24 (one thread of it issues the copies) and the consumers share
 * the rest, which must not be fewer than they had. */
CgRegs cg_ws_regs(int T, int programs)
{
    CgRegs r;
    int all = T + 128;
    r.entry = 65536 / (all * programs) / 8 * 8;
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

static LLVMValueRef set_max_registers(Cg *cg, const char *action, int n)
{
    char text[64];
    snprintf(text, sizeof text, "setmaxnreg.%s.sync.aligned.u32 %d;", action, n);
    return cg_asm_void(cg, text);
}

/* The producer's way: fewer registers, the region in its first thread,
 * then exit. */
static void emit_producer_side(Cg *cg, const IrOp *op, CgRegs regs)
{
    cg->ws_dec = set_max_registers(cg, "dec", regs.producer);
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
    CgRegs regs = cg_ws_regs(cg->T, 1); /* two programs an SM: cg_ws_programs */
    /* the warpgroup index, compared whole: every warp of a group goes one way */
    LLVMValueRef group = LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, 7), "");
    LLVMValueRef is_prod = LLVMBuildICmp(cg->b, LLVMIntEQ, group, cg_i32(cg, cg->T / 128), "");
    LLVMBasicBlockRef prod = cg_new_bb(cg, "producer"), cons = cg_new_bb(cg, "consumers");
    LLVMBuildCondBr(cg->b, is_prod, prod, cons);
    LLVMPositionBuilderAtEnd(cg->b, prod);
    emit_producer_side(cg, op, regs);
    LLVMPositionBuilderAtEnd(cg->b, cons);
    cg->ws_inc = set_max_registers(cg, "inc", regs.consumer);
    cg->consumers = cg->T;
    return true;
}

/* The call `old` made again with the count n, in its place. */
static void redo_set(Cg *cg, LLVMValueRef old, const char *action, int n)
{
    LLVMPositionBuilderBefore(cg->b, old);
    LLVMValueRef now = set_max_registers(cg, action, n);
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(old);
    if (loc)
        LLVMInstructionSetDebugLoc(now, loc);
    LLVMInstructionEraseFromParent(old);
}

/* One consumer warpgroup alone on an SM leaves the tensor cores idle
 * while it runs its softmax or epilogue (an attention kernel at 4 warps
 * ran at 322 TFLOP/s against 422 with two programs an SM on the H100).
 * Two programs share an SM where their shared memory fits twice (228 KB
 * an SM on sm_90, 1 KB of it the system's per program); their registers
 * then fit twice too, and the split hands out half as many. */
int cg_ws_programs(Cg *cg)
{
    if (!cg->ws_dec || !cg->ws_inc)
        return 1;
    if (cg->T != 128 || 2 * (cg->smem_bytes + 1024) > 228 * 1024)
        return 1;
    CgRegs r = cg_ws_regs(cg->T, 2);
    redo_set(cg, cg->ws_dec, "dec", r.producer);
    redo_set(cg, cg->ws_inc, "inc", r.consumer);
    cg->ws_dec = cg->ws_inc = NULL;
    return 2;
}
