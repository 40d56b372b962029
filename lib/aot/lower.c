/* aot/lower.c: compiles the specialisations of an --emit=header: for each
 * ';'-separated signature, the kernel's PTX for the target arch and a cubin
 * for each --cubin-arch (its own PTX for that arch, assembled by the driver
 * or ptxas). Assumes a parsed module (comp_parse). Guarantees: errors stop
 * the header; a cubin that cannot be assembled is a warning (once per arch)
 * and the header falls back to the PTX for it. */
#include <string.h>

#include "aot/aot.h"
#include "tk/tk.h"

/* The PTX of one specialisation for one arch, in the compilation's arena;
 * *meta (when not NULL) gets the kernel's metadata, whose parameters stay
 * valid while ir_arena lives. NULL after errors. */
static char *spec_ptx(Compilation *c, const tk_compile_options *o, const SpecRequest *req,
                      const char *arch, Arena *ir_arena, CgKernel *meta)
{
    IrFunc *f = comp_specialize(c, &c->diag, req, ir_arena, NULL);
    if (!f)
        return NULL;
    CgOptions cg = {arch, o->opt_level >= 0 ? o->opt_level : 3, NULL, comp_line_info(o->line_info),
                    !comp_fp_fusion(o->fp_fusion)};
    CgKernel k;
    cg_kernel_init(&k);
    char *text = NULL;
    if (comp_codegen(&c->diag, f, &cg, NULL, NULL, &k) && k.ptx.data)
        text = arena_strndup(&c->arena, k.ptx.data, k.ptx.len);
    if (text && meta) {
        *meta = k;
        sb_init(&meta->ptx); /* the text is in the arena now */
    }
    cg_kernel_free(&k);
    return text;
}

/* A cubin per --cubin-arch where one can be assembled; a warning (once per
 * arch) where not, and the header then carries the PTX only. */
static void spec_cubins(Compilation *c, const tk_compile_options *o, const SpecRequest *req,
                        const char *arch, const char *ptx, AotSpec *spec, bool *warned)
{
    int n = 0;
    while (o->cubin_archs && o->cubin_archs[n])
        n++;
    AotCubin *cubins = arena_alloc(&c->arena, sizeof *cubins * (size_t)(n + 1));
    for (int i = 0; cubins && i < n; i++) {
        const char *ca = o->cubin_archs[i];
        Arena ir_arena;
        arena_init(&ir_arena);
        const char *text = strcmp(ca, arch) == 0 ? ptx : spec_ptx(c, o, req, ca, &ir_arena, NULL);
        StrBuf bin;
        sb_init(&bin);
        char why[2048];
        /* another arch's shared memory may differ: unknown there */
        int64_t smem = text == ptx ? spec->dynamic_shared : -1;
        if (text &&
            rt_assemble_ptx(text, strlen(text), ca, req->kernel, smem, &bin, why, sizeof why)) {
            char *data = arena_alloc(&c->arena, bin.len + 1);
            if (data)
                memcpy(data, bin.data, bin.len);
            cubins[spec->ncubins++] = (AotCubin){ca, data, bin.len};
        } else if (text && !warned[i]) {
            warned[i] = true;
            diag_plain(&c->diag, DIAG_WARNING,
                       "no cubin for %s in the header (%s); it "
                       "carries the PTX for the driver to compile",
                       ca, why);
        }
        sb_free(&bin);
        arena_free(&ir_arena);
    }
    spec->cubins = cubins;
}

/* The hints of the compiled parameters that signature entry `as` feeds,
 * from params[*j] on: a descriptor is its base, then 2 * rank - 1 shape and
 * stride parameters; a tuple its pointer and scalar leaves in order
 * (constexpr items feed none). false when the kernel has fewer. */
static bool entry_hints(const ArgSpec *as, AotParam *params, int nparams, int *j)
{
    if (as->is_const)
        return true;
    if (as->is_tuple) {
        for (int i = 0; i < as->nitems; i++)
            if (!entry_hints(&as->items[i], params, nparams, j))
                return false;
        return true;
    }
    int parts = as->desc_rank ? 2 * as->desc_rank : 1;
    for (int part = 0; part < parts; part++, (*j)++) {
        if (*j >= nparams)
            return false;
        params[*j].hint = part ? 0 : as->equal_to_1 ? 1 : as->divisibility == 16 ? 16 : 0;
    }
    return true;
}

/* A C name for compiled parameter `name`: a tuple's leaf "ptrs[1][0]" is
 * ptrs_1_0. */
static const char *c_name(Arena *a, const char *name)
{
    char *out = arena_strdup(a, name);
    size_t n = 0;
    for (const char *p = name; *p; p++)
        if (*p != ']')
            out[n++] = *p == '[' ? '_' : *p;
    out[n] = 0;
    return out;
}

/* Whether the C names of the parameters are distinct (a tuple's leaf
 * ptrs_0 against a parameter of that name); reports the first clash. */
static bool names_distinct(Compilation *c, const char *kernel, const AotParam *params, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < i; k++)
            if (strcmp(params[i].name, params[k].name) == 0) {
                diag_plain(&c->diag, DIAG_ERROR,
                           "kernel '%s': the header's launcher would name two parameters '%s' "
                           "(a tuple's leaf and a parameter of that name); rename the "
                           "parameter",
                           kernel, params[i].name);
                return false;
            }
    return true;
}

/* Compiles one specialisation (one signature) into spec. */
static bool aot_spec(Compilation *c, const tk_compile_options *o, const char *kernel,
                     const char *signature, bool *warned, AotSpec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->signature = signature;
    SpecRequest req;
    if (!comp_request(c, o, kernel, signature, &req))
        return false;
    const char *arch = req.arch;
    Arena ir_arena;
    arena_init(&ir_arena);
    CgKernel k;
    char *ptx = spec_ptx(c, o, &req, arch, &ir_arena, &k);
    AotParam *params =
        ptx ? arena_alloc(&c->arena, sizeof *params * (size_t)(k.nparams + 1)) : NULL;
    bool ok = ptx && params;
    for (int j = 0; ok && j < k.nparams; j++) {
        params[j].name = c_name(&c->arena, k.params[j].name);
        params[j].type = k.params[j].type;
    }
    int fed = 0;
    for (int i = 0; ok && i < req.nargs; i++)
        ok = entry_hints(&req.args[i], params, k.nparams, &fed);
    if (ptx && params && (!ok || fed != k.nparams)) {
        diag_plain(&c->diag, DIAG_INTERNAL,
                   "internal error: '%s' compiled with %d parameters "
                   "for a signature of %d",
                   kernel, k.nparams, req.nargs);
        ok = false;
    }
    ok = ok && names_distinct(c, kernel, params, k.nparams);
    if (ok) {
        spec->params = params;
        spec->nparams = k.nparams;
        spec->ptx = ptx;
        spec->dynamic_shared = k.dynamic_shared;
        spec->threads = k.threads;
        spec_cubins(c, o, &req, arch, ptx, spec, warned);
    }
    arena_free(&ir_arena);
    return ok && !c->arena.oom;
}

/* One header for one kernel: a specialisation per ';'-separated signature. */
bool aot_lower(Compilation *c, const tk_compile_options *o, const char *kernel, StrBuf *out)
{
    if (!o->signature) {
        diag_plain(&c->diag, DIAG_ERROR,
                   "--emit=header needs the runtime parameter types: one "
                   "-s SIGNATURE per specialisation");
        return false;
    }
    if (!aot_check_name(o->out_name ? o->out_name : kernel, o->out_name != NULL, &c->diag))
        return false;
    int n = 1;
    for (const char *p = o->signature; *p; p++)
        n += *p == ';';
    int narchs = 0;
    while (o->cubin_archs && o->cubin_archs[narchs])
        narchs++;
    AotSpec *specs = arena_alloc(&c->arena, sizeof *specs * (size_t)n);
    bool *warned = arena_alloc(&c->arena, sizeof *warned * (size_t)(narchs + 1));
    if (!specs || !warned)
        return false;
    memset(warned, 0, sizeof *warned * (size_t)(narchs + 1));
    const char *p = o->signature;
    bool ok = true;
    for (int k = 0; k < n; k++) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        ok = aot_spec(c, o, kernel, arena_strndup(&c->arena, p, len), warned, &specs[k]) && ok;
        p = end ? end + 1 : p + len;
    }
    if (!ok)
        return false;
    const char *slash = strrchr(c->src.name, '/');
    SpecRequest req;
    if (!comp_request(c, o, kernel, NULL, &req))
        return false;
    AotHeader h = {o->out_name ? o->out_name : kernel,
                   kernel,
                   slash ? slash + 1 : c->src.name,
                   req.arch,
                   req.num_warps,
                   req.num_stages,
                   req.defines,
                   req.ndefines,
                   specs,
                   n};
    if (!aot_check(&h, &c->diag))
        return false;
    aot_write_header(out, &h);
    return true;
}
