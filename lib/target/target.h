/* target.h: the interface of lib/target/: from an LLVM module that code
 * generation built to PTX text. Takes a module with one kernel (NVVM
 * conventions), links libdevice when the kernel calls it, runs LLVM's
 * O-level pipeline and the NVPTX backend. Never exits the process: LLVM's
 * diagnostics and fatal errors come back as errors in a Diag. */
#ifndef TK_TARGET_H
#define TK_TARGET_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "support/support.h"

/* What code generation and the target are asked for. */
typedef struct CgOptions {
    const char *arch;      /* "sm_80" ... "sm_90a" */
    int opt_level;         /* 0..3 */
    const char *libdevice; /* path of libdevice.10.bc; NULL: default/CUDA_HOME */
    bool line_info;        /* .file/.loc line tables for profilers (codegen/lines.c) */
    bool no_fp_fusion;     /* keep float mul and add apart (Triton's enable_fp_fusion=False) */
} CgOptions;

/* The target machine for an arch ("sm_80"); NULL after reporting to d.
 * ptx84: emit PTX ISA 8.4, which fp8 conversions (8.1 on sm_89), fp8
 * mma.sync and tensormap.replace (8.3) need; other kernels keep the older
 * ISA, which older drivers load. */
LLVMTargetMachineRef nvptx_machine(const char *arch, int opt_level, bool ptx84, Diag *d);
/* Links libdevice (when needed), runs the O-level pipeline and emits PTX.
 * *fatal: LLVM hit a fatal error; the module and its context must then be
 * leaked, not disposed. */
/* Wall-clock milliseconds of nvptx_finish's steps for one kernel, for the
 * runtime's TK_VERBOSE report: where a cold build's LLVM time goes. A step
 * it did not reach counts 0. */
typedef struct CgTimes {
    double link_ms; /* reading and linking libdevice (0 when the kernel needs none) */
    double opt_ms;  /* the O-level pipeline, with the module checks around it */
    double emit_ms; /* the NVPTX backend and the PTX edits (ptx_rewrite) */
} CgTimes;
bool nvptx_finish(LLVMModuleRef mod, LLVMTargetMachineRef tm, const CgOptions *o,
                  bool link_libdevice, const char *kernel, Diag *d, StrBuf *llvm_out,
                  StrBuf *ptx_out, CgTimes *times, bool *fatal);
/* Turns the selects of kernel fn whose arm is an expensive computation of
 * its own into branches (select_branch.c): how many, or -1 when memory ran
 * out. */
int nvptx_select_branches(LLVMModuleRef mod, LLVMValueRef fn);
/* Writes kernel fn's scalar llvm.copysign calls as bitwise operations
 * (copysign.c): how many, or -1 when memory ran out. */
int nvptx_copysign_bits(LLVMModuleRef mod, LLVMValueRef fn);
/* Moves what kernel fn computes from a masked load's words, one value at a
 * time, down to where it is used (sink_unpack.c): how many, or -1 when
 * memory ran out. */
int nvptx_sink_unpacks(LLVMModuleRef mod, LLVMValueRef fn);
/* Appends the PTX text ptx[0..len) to out, with the edits that keep the
 * assembler from miscompiling it and the address form it assembles best
 * (ptx_rewrite.c says which); out->oom when memory runs out. */
void ptx_rewrite(const char *ptx, size_t len, StrBuf *out);
/* Adds `.explicitcluster` and `.reqnctapercluster n, 1, 1` to the one
 * entry of ptx (after its .maxntid), which LLVM 19 cannot write; false
 * when the entry has no .maxntid or memory runs out. */
bool ptx_cluster_dims(StrBuf *ptx, int n);
/* Counts LLVM's error diagnostics of one context into d (instead of LLVM
 * printing them and exiting). */
typedef struct CgLlvmDiag {
    Diag *d;
    int errors;
} CgLlvmDiag;
void nvptx_diag_handler(LLVMDiagnosticInfoRef di, void *ctx);

#endif
