/* no_backend.c: what the driver (lib/driver/compile.c) calls beyond the
 * front end, sema and the IR passes, for the fuzz targets, which link no
 * LLVM and no CUDA code: each reports that it is absent. The targets never
 * reach them; they only let the driver link. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                     int64_t smem, StrBuf *out, char *why, size_t cap)
{
    TK_UNUSED(ptx), TK_UNUSED(len), TK_UNUSED(arch), TK_UNUSED(kernel), TK_UNUSED(smem),
        TK_UNUSED(out);
    snprintf(why, cap, "no assembler in the fuzzer");
    return false;
}

/* The kernel record comp_lower_kernels makes and frees around codegen. */
void cg_kernel_init(CgKernel *k) { memset(k, 0, sizeof *k); }

void cg_kernel_free(CgKernel *k) { TK_UNUSED(k); }

/* The driver asks whether TK_DISABLE_LINE_INFO is set; the rule is the one
 * lib/cuda/driver.c keeps (set, not empty, not "0"). */
bool rt_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}
