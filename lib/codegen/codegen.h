/* codegen.h: the interface of lib/codegen/, block IR -> LLVM IR -> PTX
 * (through target/). Takes IR after the lowering passes (every block value
 * has a layout). Below it: ir/, passes/ (the axis analysis), target/. */
#ifndef TK_CODEGEN_H
#define TK_CODEGEN_H

#include "ir/ir.h"
#include "target/target.h"

/* Lowers one kernel to PTX text. When llvm_out is not NULL it also receives
 * the optimised LLVM IR text (--emit=llvm). Errors (unsupported construct,
 * LLVM failure, missing libdevice) go to d. */
bool cg_compile(const IrFunc *f, const CgOptions *o, Diag *d, StrBuf *llvm_out,
                StrBuf *ptx_out);
/* The dynamic shared memory a kernel's PTX says it needs at launch (the
 * "tk.dynamic_shared_bytes" line cg_compile appends; 0 without one). */
int cg_dynamic_shared_bytes(const char *ptx);

#endif
