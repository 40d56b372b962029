/* no_backend.c: what the driver (lib/driver/compile.c) calls beyond the
 * front end, sema and the IR passes, for the fuzz targets, which link no
 * LLVM and no CUDA code: each reports that it is absent. The targets never
 * reach them; they only let the driver link. */
#include <stdio.h>

#include "driver/driver.h"

/* The fuzzer links no LLVM; comp_codegen is never called from here. */
bool cg_compile(const IrFunc *f, const CgOptions *o, Diag *d, StrBuf *llvm_out, CgKernel *out)
{
    TK_UNUSED(f), TK_UNUSED(o), TK_UNUSED(llvm_out), TK_UNUSED(out);
    diag_plain(d, DIAG_ERROR, "no code generation in the fuzzer");
    return false;
}

/* Nor the assembler. */
bool rt_assemble_ptx(const char *ptx, size_t len, const char *arch, const char *kernel,
                     StrBuf *out, char *why, size_t cap)
{
    TK_UNUSED(ptx), TK_UNUSED(len), TK_UNUSED(arch), TK_UNUSED(kernel), TK_UNUSED(out);
    snprintf(why, cap, "no assembler in the fuzzer");
    return false;
}
