/* compile_ir.c: the compiler driver's second entry, for IR read back from
 * the text --emit=ir writes: IR -> the named passes -> IR, LLVM IR or PTX.
 * Nothing runs that the caller did not name, so a test can run one pass on
 * IR it wrote; the IR already says the target, warps and stages that
 * specialisation would have chosen. Guarantees as tk_compile: the whole
 * output or none of it, plus the diagnostics. */
#include "driver/driver.h"

#include <string.h>

static bool lower_ir(Compilation *c, const tk_compile_options *o, IrFunc *f, StrBuf *out)
{
    if (o->emit == TK_EMIT_IR) {
        ir_print(out, f);
        return true;
    }
    const char *arch = f->arch ? f->arch : o->arch ? o->arch : TK_DEFAULT_ARCH;
    if (o->arch && strcmp(o->arch, arch) != 0) {
        diag_plain(&c->diag, DIAG_ERROR, "'%s' was specialised for %s, not %s", f->name, arch,
                   o->arch);
        return false;
    }
    CgOptions cg = {arch, o->opt_level >= 0 ? o->opt_level : 3, NULL, comp_line_info(o->line_info),
                    !comp_fp_fusion(o->fp_fusion)};
    CgKernel k;
    cg_kernel_init(&k);
    int errors = c->diag.errors;
    bool ok = cg_compile(f, &cg, &c->diag, o->emit == TK_EMIT_LLVM ? out : NULL, &k) &&
        c->diag.errors == errors;
    if (ok && o->emit == TK_EMIT_PTX)
        sb_write(out, k.ptx.data ? k.ptx.data : "", k.ptx.len);
    cg_kernel_free(&k);
    return ok;
}

static bool options_fit(Diag *d, const tk_compile_options *o)
{
    if (o->emit != TK_EMIT_IR && o->emit != TK_EMIT_LLVM && o->emit != TK_EMIT_PTX)
        diag_plain(d, DIAG_ERROR, "IR input gives --emit=ir, llvm or ptx only");
    else if (o->ndefines || o->signature || o->num_warps > 0 || o->num_stages > 0 || o->tma ||
             o->num_ctas > 0)
        diag_plain(d, DIAG_ERROR,
                   "IR input is specialised already: no -D, --signature, "
                   "--num-warps, --num-stages, --num-ctas or --tma");
    return d->errors == 0;
}

/* The kernels to lower: the one opts->kernel names, or all of them. */
static int choose(Compilation *c, const tk_compile_options *o, IrFunc **fs, int n)
{
    if (!o->kernel)
        return n;
    for (int i = 0; i < n; i++)
        if (strcmp(fs[i]->name, o->kernel) == 0) {
            fs[0] = fs[i];
            return 1;
        }
    diag_plain(&c->diag, DIAG_ERROR, "no kernel '%s' in the IR", o->kernel);
    return 0;
}

bool comp_run_ir(Compilation *c, const tk_compile_options *o, const char *passes, StrBuf *out)
{
    IrFunc **fs;
    if (!options_fit(&c->diag, o) || !pass_check_list(&c->diag, "--passes", passes, false))
        return false;
    PassOptions po = comp_pass_options(c, o);
    po.verify_each = true; /* IR from text may be anything the verifier accepts */
    int n = ir_parse(&c->src, &c->arena, &c->diag, &fs);
    if (n > 0)
        n = choose(c, o, fs, n);
    if (n > 1 && o->emit != TK_EMIT_IR) {
        diag_plain(&c->diag, DIAG_ERROR, "the IR has several kernels; choose one with -k");
        return false;
    }
    bool ok = n > 0;
    for (int i = 0; i < n && ok; i++)
        ok = pass_run_list(&c->diag, fs[i], passes, &po) && lower_ir(c, o, fs[i], out);
    return ok;
}
