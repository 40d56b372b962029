/* no_backend.c: what lib/pipeline.c calls beyond the front end, sema and
 * the IR passes, for the fuzz targets, which link no LLVM, no runtime and
 * no AOT writer: each reports that it is absent. The targets never reach
 * them; they only let pipeline.c link. */
#include <stdio.h>

#include "compiler.h"
#include "aot/aot.h"

/* The fuzzer links no LLVM; comp_codegen is never called from here. */
bool cg_compile(const IrFunc *f, const CgOptions *o, Diag *d, StrBuf *llvm_out, StrBuf *ptx_out)
{
    TK_UNUSED(f), TK_UNUSED(o), TK_UNUSED(llvm_out), TK_UNUSED(ptx_out);
    diag_plain(d, DIAG_ERROR, "no code generation in the fuzzer");
    return false;
}

/* Nor the assembler, the AOT header writer or what it reads from PTX. */
bool rt_assemble_ptx(const char *ptx, size_t len, const char *arch, const char *kernel,
                     StrBuf *out, char *why, size_t cap)
{
    TK_UNUSED(ptx), TK_UNUSED(len), TK_UNUSED(arch), TK_UNUSED(kernel), TK_UNUSED(out);
    snprintf(why, cap, "no assembler in the fuzzer");
    return false;
}

bool aot_lower(Compilation *c, const struct tk_compile_options *o, const char *kernel,
               StrBuf *out)
{
    TK_UNUSED(o), TK_UNUSED(kernel), TK_UNUSED(out);
    diag_plain(&c->diag, DIAG_ERROR, "no AOT headers in the fuzzer");
    return false;
}
