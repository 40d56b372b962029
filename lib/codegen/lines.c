/* codegen/lines.c: line tables, so that a profiler (Nsight Compute's
 * source view) can map each instruction of a kernel to its source line.
 * Builds LLVM debug info at line-tables-only level: one compile unit, a
 * file per source file, a subprogram for the kernel and one per inlined
 * @jit helper, and a location on every instruction from the span of the
 * IR op that made it. Ops inlined from a helper keep the helper's own file
 * and line, with the chain of calls as inlined-at locations (the IR's
 * scopes, sema/inline.c). The NVPTX backend turns this into `.file` and
 * `.loc` directives. Off (cg->lines NULL) when CgOptions.line_info is
 * false: the module then carries no debug metadata at all. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/DebugInfo.h>

#include "codegen/cg.h"

struct CgLines {
    LLVMDIBuilderRef dib;
    LLVMMetadataRef cu;
    const Source **srcs; /* the files met so far, and their DIFiles */
    LLVMMetadataRef *files;
    int nfiles;
    LLVMMetadataRef *sp;      /* by scope: the subprogram its ops are in */
    LLVMMetadataRef *inlined; /* by scope: where it was inlined; NULL for the kernel */
    int nscopes;
};

/* The DIFile of a source: its directory and base name (relative names
 * are taken from the working directory, where the compiler read them). */
static LLVMMetadataRef file_of(Cg *cg, const Source *src)
{
    struct CgLines *l = cg->lines;
    for (int i = 0; i < l->nfiles; i++)
        if (l->srcs[i] == src)
            return l->files[i];
    const char *name = src && src->name ? src->name : "<string>";
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    int dlen = slash ? (int)(slash - name) : 0;
    char cwd[PATH_MAX], dir[2 * PATH_MAX + 2];
    if (name[0] != '/' && name[0] != '<' && getcwd(cwd, sizeof cwd)) /* relative */
        snprintf(dir, sizeof dir, "%s%s%.*s", cwd, dlen ? "/" : "", dlen, name);
    else
        snprintf(dir, sizeof dir, "%.*s", dlen, name);
    LLVMMetadataRef f = LLVMDIBuilderCreateFile(l->dib, base, strlen(base), dir, strlen(dir));
    l->srcs[l->nfiles] = src;
    l->files[l->nfiles++] = f;
    return f;
}

static LLVMMetadataRef subprogram(Cg *cg, LLVMMetadataRef file, const char *name, int line)
{
    struct CgLines *l = cg->lines;
    LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(l->dib, file, NULL, 0, LLVMDIFlagZero);
    unsigned ln = line > 0 ? (unsigned)line : 0;
    return LLVMDIBuilderCreateFunction(l->dib, file, name, strlen(name), name, strlen(name), file,
                                       ln, ty, 0, 1, ln, LLVMDIFlagZero, 1);
}

static LLVMMetadataRef location(Cg *cg, Span sp)
{
    struct CgLines *l = cg->lines;
    int s = sp.scope > 0 && sp.scope < l->nscopes ? sp.scope : 0;
    return LLVMDIBuilderCreateDebugLocation(cg->ctx, sp.line > 0 ? (unsigned)sp.line : 0,
                                            sp.col > 0 ? (unsigned)sp.col : 0, l->sp[s],
                                            l->inlined[s]);
}

/* A helper inlined several times has one subprogram; each call its own
 * inlined-at location (calls come before the scopes made inside them). */
static void add_scopes(Cg *cg)
{
    struct CgLines *l = cg->lines;
    const IrFunc *f = cg->f;
    for (int i = 1; i < l->nscopes; i++) {
        const IrScope *sc = &f->scopes[i];
        l->sp[i] = NULL;
        for (int j = 1; j < i && !l->sp[i]; j++) {
            const IrScope *o = &f->scopes[j];
            if (o->src == sc->src && o->line == sc->line && !strcmp(o->name, sc->name))
                l->sp[i] = l->sp[j];
        }
        if (!l->sp[i])
            l->sp[i] = subprogram(cg, file_of(cg, sc->src), sc->name, sc->line);
        Span call = sc->call;
        if (call.scope >= i)
            call.scope = 0; /* scopes nest outwards only; keep a bad table harmless */
        l->inlined[i] = location(cg, call);
    }
}

void cg_lines_begin(Cg *cg)
{
    if (!cg->o->line_info)
        return;
    const IrFunc *f = cg->f;
    int nscopes = f->nscopes > 0 ? f->nscopes : 1;
    struct CgLines *l = cg_alloc(cg, sizeof *l);
    l->srcs = cg_alloc(cg, sizeof *l->srcs * (size_t)(nscopes + 1));
    l->files = cg_alloc(cg, sizeof *l->files * (size_t)(nscopes + 1));
    l->sp = cg_alloc(cg, sizeof *l->sp * (size_t)nscopes);
    l->inlined = cg_alloc(cg, sizeof *l->inlined * (size_t)nscopes);
    if (cg->failed)
        return; /* out of memory: no line tables (the compile stops anyway) */
    l->nscopes = nscopes;
    l->dib = LLVMCreateDIBuilder(cg->mod);
    cg->lines = l;
    LLVMMetadataRef file = file_of(cg, f->src);
    l->cu = LLVMDIBuilderCreateCompileUnit(l->dib, LLVMDWARFSourceLanguagePython, file, "tk", 2, 1,
                                           "", 0, 0, "", 0, LLVMDWARFEmissionLineTablesOnly, 0, 0,
                                           0, "", 0, "", 0);
    l->sp[0] = subprogram(cg, file, f->name, f->span.line);
    l->inlined[0] = NULL;
    LLVMSetSubprogram(cg->fn, l->sp[0]);
    add_scopes(cg);
    /* the kernel's entry code (parameters, thread index) is its `def` line */
    LLVMSetCurrentDebugLocation2(cg->b, location(cg, (Span){f->span.line, f->span.col, 0, 0, 0}));
}

void cg_lines_at(Cg *cg, Span sp)
{
    if (cg->lines && sp.line > 0)
        LLVMSetCurrentDebugLocation2(cg->b, location(cg, sp));
}

LLVMMetadataRef cg_lines_get(Cg *cg)
{
    return cg->lines ? LLVMGetCurrentDebugLocation2(cg->b) : NULL;
}

void cg_lines_set(Cg *cg, LLVMMetadataRef loc)
{
    if (cg->lines)
        LLVMSetCurrentDebugLocation2(cg->b, loc);
}

void cg_lines_finish(Cg *cg)
{
    struct CgLines *l = cg->lines;
    if (!l)
        return;
    LLVMDIBuilderFinalize(l->dib);
    LLVMDisposeDIBuilder(l->dib);
    cg->lines = NULL;
    /* the NVPTX backend writes .file/.loc only for a module that says
     * which debug metadata and DWARF version it holds */
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMAddModuleFlag(cg->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(i32, 2, 0)));
    LLVMAddModuleFlag(cg->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(i32, LLVMDebugMetadataVersion(), 0)));
}
