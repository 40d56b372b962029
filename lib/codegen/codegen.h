/* codegen.h: the interface of lib/codegen/, block IR -> LLVM IR -> PTX
 * (through target/). Takes IR after the lowering passes (every block value
 * has a layout). Below it: ir/, passes/ (the axis analysis), target/. */
#ifndef TK_CODEGEN_H
#define TK_CODEGEN_H

#include "ir/ir.h"
#include "target/target.h"

/* A compiled kernel and what launching it needs, in the manner of Triton's
 * kernel metadata; cg_compile fills it, the one place that reads it off
 * the IR and the code, for the JIT, AOT headers and tk_compile alike. */
enum { CG_SMEM_PLAN_LEN = 240, CG_NOTE_LEN = 128 };

typedef struct CgKernel {
    StrBuf ptx;            /* the PTX text */
    const char *name;      /* the PTX entry */
    int num_warps;         /* the warps the kernel was specialised for */
    int threads;           /* per program at launch: num_warps and any producer warps, x 32 */
    int dynamic_shared;    /* bytes of shared memory sized at launch; 0: all of it static */
    const IrParam *params; /* the entry's parameters in order (the IR's: valid while its
                            * arena lives), then one CUtensorMap per tmaps entry */
    int nparams;
    const IrTmap *tmaps; /* the tensor maps the launcher builds */
    int ntmaps;
    /* what takes the shared memory, largest first ("ring of the load at
     * line 42: 3 x 16384; layout scratch 34816; ..."), for a refusal */
    char smem_plan[CG_SMEM_PLAN_LEN];
    CgTimes times; /* how long LLVM's steps took (TK_VERBOSE) */
    int cluster;   /* CTAs per cluster to launch it in (1: no cluster) */
    /* why a num_ctas the IR asks for was not applied ("" when it was) */
    char cluster_note[CG_NOTE_LEN];
} CgKernel;

void cg_kernel_init(CgKernel *k);
/* The metadata the IR alone gives (all but the PTX and dynamic_shared,
 * which stays 0): for a kernel the interpreter runs without code. */
void cg_kernel_describe(const IrFunc *f, CgKernel *k);
/* Frees the PTX text (the rest belongs to the IR's arena). */
void cg_kernel_free(CgKernel *k);

/* Lowers one kernel to PTX text and its metadata, in *out (initialised by
 * cg_kernel_init). When llvm_out is not NULL it also receives the optimised
 * LLVM IR text (--emit=llvm). Errors (unsupported construct, LLVM failure,
 * missing libdevice) go to d. */
bool cg_compile(const IrFunc *f, const CgOptions *o, Diag *d, StrBuf *llvm_out, CgKernel *out);

#endif
