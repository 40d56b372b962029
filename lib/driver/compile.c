/* compile.c: the compiler driver. Reads top to bottom as the pipeline:
 * source -> AST -> (per kernel) IR -> passes -> LLVM IR -> PTX -> cubin.
 * The public API (api/api.c) calls it, and AOT (aot/) above it.
 * Guarantees: nothing is lowered once a stage reported an error, and the
 * caller gets either the whole output or none of it plus the diagnostics. */
#include "driver/driver.h"

#include <string.h>

/* ---- one compilation ---------------------------------------------------- */

bool comp_init(Compilation *c, const char *name, const char *text, size_t len)
{
    memset(c, 0, sizeof *c);
    arena_init(&c->arena);
    char *copy = arena_alloc(&c->arena, len + 1);
    c->src.name = arena_strdup(&c->arena, name ? name : "<string>");
    if (!copy || c->arena.oom) {
        arena_free(&c->arena);
        return false;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    c->src.text = copy;
    c->src.len = len;
    diag_init(&c->diag, &c->src);
    return true;
}

void comp_free(Compilation *c)
{
    diag_free(&c->diag);
    arena_free(&c->arena);
}

bool comp_parse(Compilation *c)
{
    front_set_builtins(&(FrontBuiltins){sema_builtin_exists, sema_libdevice_known});
    front_set_target(c->arch);
    /* a Python file is a module: what is not a kernel is its host code,
     * even where it holds no kernel at all */
    size_t n = c->src.name ? strlen(c->src.name) : 0;
    bool py = n > 3 && strcmp(c->src.name + n - 3, ".py") == 0;
    c->module = (py ? parse_python_module : parse_module)(&c->src, &c->arena, &c->diag);
    if (c->module && c->diag.errors == 0)
        c->nimported = package_load(c->module, c->search_paths, &c->arena, &c->diag, &c->imported);
    if (c->arena.oom)
        diag_plain(&c->diag, DIAG_ERROR, "out of memory while parsing");
    return c->module && c->diag.errors == 0;
}

int comp_kernel_names(Compilation *c, const char ***names)
{
    return sema_kernel_names(c->module, names, &c->arena);
}

bool comp_kernel_sig(Compilation *c, const char *kernel, KernelSig *sig)
{
    return sema_kernel_sig(c->module, kernel, &c->arena, sig);
}

const char *comp_kernel_def(Compilation *c, const char *name)
{
    return sema_kernel_def(c->module, name);
}

bool comp_plain_def(Compilation *c, const char *name, int *line, const char **decorator)
{
    return sema_plain_def(c->module, name, line, decorator);
}

bool comp_parse_const(const char *text, ConstValue *out, const char **why)
{
    return sema_parse_const(text, out, why);
}

IrFunc *comp_specialize(const Compilation *c, Diag *d, const SpecRequest *req, Arena *ir_arena,
                        const PassOptions *po)
{
    int errors = d->errors;
    IrFunc *f = sema_specialize(c->module, &c->src, req, ir_arena, d);
    if (!f || d->errors > errors)
        return NULL;
    if (!ir_verify(f, d) || !pass_run_default(d, f, PASS_STAGE_SPECIALIZE, po))
        return NULL;
    return ir_verify(f, d) ? f : NULL;
}

bool comp_lower(Diag *d, IrFunc *f, const PassOptions *po)
{
    return pass_run_default(d, f, PASS_STAGE_LOWER, po) && ir_verify(f, d);
}

bool comp_codegen(Diag *d, IrFunc *f, const CgOptions *o, const PassOptions *po, StrBuf *llvm,
                  CgKernel *out)
{
    int errors = d->errors;
    return comp_lower(d, f, po) && cg_compile(f, o, d, llvm, out) && d->errors == errors;
}

/* ---- tk_compile --------------------------------------------------------------- */

/* A constexpr parameter named num_warps or num_stages is the compile's
 * setting too, as in Triton, where one keyword argument binds both: its
 * -D value sets what the options leave at the default, and the two given
 * and different is an error (sema binds the setting to such a parameter
 * without a value). */
static bool settings_from_defines(Compilation *c, const SpecDefine *defs, int n, int *settings)
{
    static const char *const names[2] = {"num_warps", "num_stages"};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            if (strcmp(defs[i].name, names[k]) != 0 || defs[i].value.kind != CV_INT)
                continue;
            if (settings[k] && settings[k] != defs[i].value.i) {
                diag_plain(&c->diag, DIAG_ERROR,
                           "-D %s=%lld but --%s %d: the parameter is the setting, give one "
                           "value",
                           names[k], (long long)defs[i].value.i, k ? "num-stages" : "num-warps",
                           settings[k]);
                return false;
            }
            settings[k] = defs[i].value.i < 0 || defs[i].value.i > 1024 ? -1 : (int)defs[i].value.i;
        }
    return true;
}

bool comp_request(Compilation *c, const tk_compile_options *o, const char *kernel,
                  const char *signature, SpecRequest *req)
{
    SpecDefine *defs = arena_alloc(&c->arena, sizeof *defs * (size_t)(o->ndefines + 1));
    for (int i = 0; i < o->ndefines; i++) {
        defs[i].name = o->defines[i].name;
        const char *why;
        if (!sema_parse_const(o->defines[i].value, &defs[i].value, &why))
            diag_plain(&c->diag, DIAG_ERROR, "-D %s=%s: %s", o->defines[i].name,
                       o->defines[i].value,
                       why ? why
                           : "not a value (give a number, True/False, a dtype such as "
                             "tl.float16, 'text', a tuple of those, or the name of a @jit "
                             "function)");
        if (cv_has_text(&defs[i].value)) {
            /* sema_parse_const's copy is on the heap; the compilation's arena holds it now */
            char *text = arena_strdup(&c->arena, defs[i].value.s);
            tk_xfree((char *)defs[i].value.s);
            defs[i].value.s = text;
        }
    }
    int settings[2] = {o->num_warps, o->num_stages};
    if (c->diag.errors || !settings_from_defines(c, defs, o->ndefines, settings))
        return false;
    char bad[128];
    if (!spec_request_init(req, kernel, settings[0], settings[1],
                           o->arch ? o->arch : TK_DEFAULT_ARCH, bad, sizeof bad)) {
        diag_plain(&c->diag, DIAG_ERROR, "%s", bad);
        return false;
    }
    req->debug = comp_debug(0);
    req->defines = defs;
    req->ndefines = o->ndefines;
    if (signature) {
        ArgSpec *args;
        int nargs;
        if (sema_parse_signature(signature, &c->arena, &c->diag, &args, &nargs)) {
            req->args = args;
            req->nargs = nargs;
        }
    }
    return c->diag.errors == 0;
}

/* PTX to a cubin for --emit=cubin: an error when it cannot be assembled. */
static bool assemble(Compilation *c, const char *ptx, size_t len, const char *arch,
                     const char *kernel, int64_t smem, StrBuf *out)
{
    char why[2048];
    if (rt_assemble_ptx(ptx, len, arch, kernel, smem, out, why, sizeof why))
        return true;
    diag_plain(&c->diag, DIAG_ERROR, "cannot assemble a cubin for %s: %s", arch, why);
    return false;
}

PassOptions comp_pass_options(Compilation *c, const tk_compile_options *o)
{
    PassOptions po = {o->print_ir_before, o->print_ir_after, NULL, false};
    if (po.print_before || po.print_after)
        po.dump = &c->diag.text; /* beside the diagnostics, as tkc prints both to stderr */
    return po;
}

/* Lowers one kernel to the requested text, appended to out. */
static bool lower_kernel(Compilation *c, const tk_compile_options *o, const char *kernel,
                         StrBuf *out)
{
    SpecRequest req;
    if (!comp_request(c, o, kernel, o->signature, &req))
        return false;
    Arena ir_arena;
    arena_init(&ir_arena);
    bool ok = false;
    PassOptions po = comp_pass_options(c, o);
    IrFunc *f = comp_specialize(c, &c->diag, &req, &ir_arena, &po);
    if (f) {
        f->tma = o->tma != 0;
        f->num_ctas = o->num_ctas > 1 ? o->num_ctas : 0;
    }
    if (f && o->emit == TK_EMIT_IR) {
        ok = comp_lower(&c->diag, f, &po); /* the IR as code generation sees it */
        if (ok)
            ir_print(out, f);
    } else if (f) {
        CgOptions cg = {req.arch, o->opt_level >= 0 ? o->opt_level : 3, NULL,
                        comp_line_info(o->line_info), !comp_fp_fusion(o->fp_fusion)};
        CgKernel k;
        cg_kernel_init(&k);
        ok = comp_codegen(&c->diag, f, &cg, &po, o->emit == TK_EMIT_LLVM ? out : NULL, &k);
        if (ok && k.cluster_note[0] && rt_env_on("TK_VERBOSE"))
            diag_plain(&c->diag, DIAG_WARNING, "kernel '%s': %s", kernel, k.cluster_note);
        const char *ptx = k.ptx.data ? k.ptx.data : "";
        if (ok && o->emit == TK_EMIT_PTX)
            sb_write(out, ptx, k.ptx.len);
        if (ok && o->emit == TK_EMIT_CUBIN)
            ok = assemble(c, ptx, k.ptx.len, cg.arch, kernel, k.dynamic_shared, out);
        cg_kernel_free(&k);
    }
    arena_free(&ir_arena);
    return ok;
}

/* ---- the whole module ------------------------------------------------------------------ */

int comp_choose_kernels(Compilation *c, const tk_compile_options *o, const char ***out)
{
    const char **kernels;
    int n;
    if (o->kernel) {
        kernels = arena_alloc(&c->arena, sizeof *kernels);
        if (!kernels)
            return 0;
        /* an alias (`kern = triton.jit(_impl)`) compiles its def, named as
         * Triton names the kernel */
        const char *def = sema_kernel_def(c->module, o->kernel);
        kernels[0] = def ? def : o->kernel;
        n = 1;
    } else {
        n = sema_entry_kernels(c->module, &kernels, &c->arena);
    }
    if (n == 0) {
        diag_plain(&c->diag, DIAG_ERROR, "no @jit kernel in the file");
        return 0;
    }
    if (n > 1 && o->emit != TK_EMIT_IR) {
        StrBuf names;
        sb_init(&names);
        for (int i = 0; i < n; i++)
            sb_printf(&names, "%s%s", i ? ", " : "", kernels[i]);
        diag_plain(&c->diag, DIAG_ERROR, "the file has several kernels (%s); choose one with -k",
                   names.data ? names.data : "");
        sb_free(&names);
        return 0;
    }
    if (n > 1 && o->signature) {
        diag_plain(&c->diag, DIAG_ERROR, "--signature needs -k when the file has several kernels");
        return 0;
    }
    *out = kernels;
    return n;
}

bool comp_lower_kernels(Compilation *c, const tk_compile_options *o, const char **kernels, int n,
                        StrBuf *out)
{
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok = lower_kernel(c, o, kernels[i], out) && ok;
    return ok;
}

/* print_ir_before/after name passes of the table, or "all". */
static tk_status check_print_options(const char *fn, const tk_compile_options *o)
{
    const char *lists[] = {o->print_ir_before, o->print_ir_after};
    const char *names[] = {"print_ir_before", "print_ir_after"};
    for (int i = 0; i < 2; i++) {
        size_t n = 0;
        const char *bad = pass_first_unknown(lists[i], true, &n);
        if (!bad)
            continue;
        StrBuf known;
        sb_init(&known);
        pass_names(&known);
        tk_status s = err_set(TK_ERR_INVALID, "%s: %s names no pass: '%.*s' (%s, or all)", fn,
                              names[i], (int)n, bad, known.data ? known.data : "");
        sb_free(&known);
        return s;
    }
    return TK_OK;
}

/* Every option tk_compile reads, checked before anything is compiled:
 * TK_ERR_INVALID naming the argument, or TK_OK. */
tk_status comp_check_options(const char *fn, const tk_compile_options *o)
{
    tk_status s = err_check_count(fn, "defines", o->defines, "ndefines", o->ndefines);
    for (int i = 0; s == TK_OK && i < o->ndefines; i++)
        if (!o->defines[i].name || !o->defines[i].value)
            s = err_set(TK_ERR_INVALID, "%s: defines[%d].%s is NULL", fn, i,
                        o->defines[i].name ? "value" : "name");
    if (s != TK_OK)
        return s;
    if ((int)o->emit < TK_EMIT_TOKENS || (int)o->emit > TK_EMIT_HEADER)
        return err_set(TK_ERR_INVALID, "%s: emit is %d (not a tk_emit)", fn, (int)o->emit);
    int warps = o->num_warps, stages = o->num_stages;
    char why[128];
    if (!ir_launch_settings(&warps, &stages, NULL, why, sizeof why))
        return err_set(TK_ERR_INVALID, "%s: %s", fn, why);
    int ctas = o->num_ctas;
    if (!ir_launch_ctas(&ctas, NULL, why, sizeof why))
        return err_set(TK_ERR_INVALID, "%s: %s", fn, why);
    if (ctas > 1 && o->emit == TK_EMIT_HEADER)
        return err_set(TK_ERR_INVALID,
                       "%s: num_ctas is %d with TK_EMIT_HEADER, whose launchers launch no "
                       "clusters",
                       fn, ctas);
    if (o->opt_level < -1 || o->opt_level > 3)
        return err_set(TK_ERR_INVALID, "%s: opt_level is %d (-1 for the default, or 0 to 3)", fn,
                       o->opt_level);
    if (o->line_info < -1 || o->line_info > 1)
        return err_set(TK_ERR_INVALID, "%s: line_info is %d (0 for the default, 1 on, -1 off)", fn,
                       o->line_info);
    if (o->fp_fusion < -1 || o->fp_fusion > 1)
        return err_set(TK_ERR_INVALID, "%s: fp_fusion is %d (0 for the default, 1 on, -1 off)", fn,
                       o->fp_fusion);
    return check_print_options(fn, o);
}

bool comp_line_info(int option) { return option ? option > 0 : !rt_env_on("TK_DISABLE_LINE_INFO"); }

bool comp_debug(int option)
{
    if (option)
        return option > 0;
    static const char *const names[] = {"TK_DEBUG", "TRITON_DEBUG"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        if (v && *v && strcmp(v, "0") != 0)
            return true;
    }
    return false;
}

bool comp_fp_fusion(int option)
{
    if (option)
        return option > 0;
    const char *v = getenv("TK_DEFAULT_FP_FUSION");
    return !v || strcmp(v, "0") != 0;
}

/* tk_last_error after a failed compilation: the diagnostics (cut to the
 * message buffer) whether or not the caller asked for them. */
static tk_status compile_failed(tk_status s, const Compilation *c)
{
    const char *text = c->diag.text.data;
    if (text && *text)
        return err_set(s, "%s", text);
    return err_set(s, "tk_compile: '%s' did not compile (%s)", c->src.name,
                   s == TK_ERR_NO_MEMORY ? "out of memory" : "no diagnostics");
}

tk_status comp_finish(Compilation *c, bool ok, StrBuf *res, char **out, size_t *out_len,
                      char **diags)
{
    ok = ok && c->diag.errors == 0;
    if (c->arena.oom || res->oom) {
        ok = false;
        diag_plain(&c->diag, DIAG_ERROR, "out of memory");
    }
    tk_status s = ok ? TK_OK : TK_ERR_COMPILE;
    if (ok) {
        *out = sb_take(res, out_len);
        if (!*out)
            s = TK_ERR_NO_MEMORY;
    }
    if (s != TK_OK)
        compile_failed(s, c);
    if (diags && c->diag.text.len)
        *diags = sb_take(&c->diag.text, NULL);
    sb_free(res);
    comp_free(c);
    return s;
}
