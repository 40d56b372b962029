/* rt_jit.c: builds one variant of a kernel for one key: specialise with
 * the launch's constexprs and argument specs, lower to PTX (or find it on
 * disk), JIT-compile the PTX into a module with the driver. The text half needs no
 * GPU, so tests run it on machines without one. Reads the module's parsed
 * source and writes nothing shared (its own arena and Diag), so builds run
 * in parallel threads. Guarantees: a failure leaves nothing cached and
 * reports the stage (compile, JIT, load) and kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rt_backend.h"
#include "rt_nvtx.h"

enum { META_MAGIC = 0x544b4d41 /* "TKMA": 256 parameters, clusters, device maps */ };

static int warned_dump;

/* ---- the specialisation request ---------------------------------------------- */

tk_status rt_const_value(const char *kernel, const char *param, const tk_arg *a, ConstValue *cv)
{
    memset(cv, 0, sizeof *cv);
    if (a->text) {
        const char *why;
        if (!comp_parse_const(a->text, cv, &why))
            return err_set(TK_ERR_LAUNCH, "kernel '%s': cannot read constexpr %s = '%s' (%s)",
                           kernel, param, a->text,
                           why ? why
                               : "give a number, True/False, a dtype such as "
                                 "tl.float16, 'text', a tuple of those, or the name of a @jit "
                                 "function");
        return TK_OK;
    }
    switch (a->dtype) {
    case TK_F16:
    case TK_BF16:
    case TK_F32:
    case TK_F64:
    case TK_F8E4NV:
    case TK_F8E5:
    case TK_F8E4B15:
        cv->kind = CV_FLOAT;
        cv->f = a->v.f;
        break;
    case TK_I1:
        cv->kind = CV_BOOL;
        cv->i = a->v.i != 0;
        break;
    default:
        cv->kind = CV_INT;
        cv->i = a->v.i;
        break;
    }
    return TK_OK;
}

static tk_status build_request(tk_kernel *k, const RtLaunchArgs *la, Arena *a, SpecRequest *req)
{
    char why[128];
    if (!spec_request_init(req, k->name, la->num_warps, la->num_stages, NULL, why, sizeof why))
        return err_set(TK_ERR_LAUNCH, "kernel '%s': %s", k->name, why);
    req->debug = la->debug;
    SpecDefine *defs = arena_alloc(a, sizeof *defs * (size_t)(k->sig.nparams + 1));
    if (!defs)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    int nd = 0;
    for (int p = 0; p < k->sig.nparams; p++) {
        if (!la->consts[p])
            continue;
        defs[nd].name = k->sig.param_names[p];
        tk_status s =
            rt_const_value(k->name, k->sig.param_names[p], la->consts[p], &defs[nd].value);
        if (s != TK_OK)
            return s;
        if (cv_has_text(&defs[nd].value)) {
            /* sema_parse_const's copy is on the heap; the request's arena holds it now */
            char *text = arena_strdup(a, defs[nd].value.s);
            tk_xfree((char *)defs[nd].value.s);
            defs[nd].value.s = text;
        }
        nd++;
    }
    req->defines = defs;
    req->ndefines = nd;
    ArgSpec *specs = arena_alloc(a, sizeof *specs * (size_t)(k->nruntime + 1));
    if (!specs)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    int ns = 0;
    for (int j = 0; j < k->nruntime; j++)
        if (la->values[j]) { /* NULL: given None, a constexpr now */
            tk_status s = rt_tuple_spec(k, la->values[j], rt_no_spec(k, j), a, &specs[ns++]);
            if (s != TK_OK)
                return s;
        }
    req->args = specs;
    req->nargs = ns;
    return TK_OK;
}

/* Each build reports to a Diag of its own (builds of one module run in
 * parallel threads); what it holds becomes the error message. */
static tk_status diag_take(Diag *d, const char *kernel, const char *what)
{
    return err_set(TK_ERR_COMPILE, "kernel '%s' %s:\n%s", kernel, what,
                   d->text.data && d->text.len ? d->text.data : "(no diagnostics)\n");
}

static tk_status specialize(tk_kernel *k, const RtLaunchArgs *la, const char *arch, Arena *ir_arena,
                            IrFunc **out)
{
    const Compilation *c = &k->mod->comp;
    SpecRequest req;
    tk_status s = build_request(k, la, ir_arena, &req);
    if (s != TK_OK)
        return s;
    req.arch = arch;
    Diag d;
    diag_init(&d, &c->src);
    *out = comp_specialize(c, &d, &req, ir_arena, NULL);
    if (!*out) {
        s = diag_take(&d, k->name, "cannot be specialised for this launch");
        if (ir_arena->oom)
            s = TK_ERR_NO_MEMORY; /* the source may be fine */
    }
    diag_free(&d);
    return s;
}

/* The runtime argument that feeds compiled parameter `name`: the one of
 * that name, or the descriptor or tuple that sema expanded it from (*part
 * says which piece); k->nruntime when none. */
static int param_source(const tk_kernel *k, const RtLaunchArgs *la, const char *name, int *part)
{
    *part = 0;
    for (int j = 0; j < k->nruntime; j++)
        if (strcmp(name, k->sig.param_names[k->runtime_idx[j]]) == 0)
            return j;
    for (int j = 0; j < k->nruntime; j++) {
        const char *param = k->sig.param_names[k->runtime_idx[j]];
        if ((*part = rt_desc_part(param, name)) > 0)
            return j;
        if (la->values[j] && (*part = rt_tuple_part(la->values[j], param, name)) > 0)
            return j;
    }
    *part = 0;
    return k->nruntime;
}

/* The kernel's metadata as the cache keeps it: which launch argument feeds
 * each parameter of the compiled kernel, the tensor maps, the threads. */
static tk_status map_params(tk_kernel *k, const RtLaunchArgs *la, const CgKernel *ck, RtJitMeta *m)
{
    if (ck->nparams > RT_MAX_PARAMS) /* tuples can flatten into more */
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s' compiled with %d parameters; a launch passes at most %d",
                       k->name, ck->nparams, RT_MAX_PARAMS);
    for (int i = 0; i < ck->nparams; i++) {
        int part = 0, j = param_source(k, la, ck->params[i].name, &part);
        if (j == k->nruntime)
            return err_set(TK_ERR_INTERNAL,
                           "internal error: compiled parameter '%s' of kernel "
                           "'%s' is not one of its runtime parameters",
                           ck->params[i].name, k->name);
        m->param_of[i] = j;
        m->param_dt[i] = (uint8_t)ck->params[i].type.dt;
        m->param_part[i] = (uint8_t)part;
    }
    if (ck->ntmaps > RT_MAX_TMAPS)
        return err_set(TK_ERR_INTERNAL, "internal error: kernel '%s' compiled with %d tensor maps",
                       k->name, ck->ntmaps);
    m->ntmaps = (uint32_t)ck->ntmaps;
    for (int i = 0; i < ck->ntmaps; i++) {
        const IrTmap *t = &ck->tmaps[i];
        RtTmapMeta *r = &m->tmaps[i];
        *r = (RtTmapMeta){.device = t->device,
                          .base = t->base,
                          .stride = t->stride,
                          .stride_const = t->stride_const,
                          .ext_mul = {t->extent[0].mul, t->extent[1].mul},
                          .ext_add = {t->extent[0].add, t->extent[1].add},
                          .dt = (int32_t)t->dt,
                          .box = {t->box[0], t->box[1]},
                          .swizzle = t->swizzle};
        for (int d = 0; d < 2; d++)
            for (int f = 0; f < IR_TMA_FACTORS; f++)
                r->ext_param[d][f] = t->extent[d].param[f];
    }
    m->magic = META_MAGIC;
    m->nparams = (uint32_t)ck->nparams;
    m->num_warps = ck->num_warps;
    m->threads = ck->threads;
    m->dyn_shared = ck->dynamic_shared;
    m->cluster = ck->cluster;
    memcpy(m->smem_plan, ck->smem_plan, sizeof m->smem_plan);
    memcpy(m->cluster_note, ck->cluster_note, sizeof m->cluster_note);
    return TK_OK;
}

/* ---- TK_DUMP_DIR ---------------------------------------------------------------------- */

static void dump_file(const char *dir, const char *kernel, RtDigest d, const char *ext,
                      const char *text, size_t len)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s-%016llx.%s", dir, kernel, (unsigned long long)d.hi, ext);
    /* replaced, never written through: the folder may be shared */
    FilePart part = {text, len};
    int err = file_replace(path, &part, 1, 0666);
    if (err)
        rt_warn_once(&warned_dump, "TK_DUMP_DIR: cannot write %s (%s)", path, strerror(err));
}

static void dump_ir(const char *dir, const char *kernel, RtDigest d, const IrFunc *f)
{
    StrBuf sb;
    sb_init(&sb);
    ir_print(&sb, f);
    if (!sb.oom && sb.data)
        dump_file(dir, kernel, d, "ir", sb.data, sb.len);
    sb_free(&sb);
}

static const char *dump_dir(void)
{
    const char *dir = getenv("TK_DUMP_DIR");
    if (!dir || !*dir)
        return NULL;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        rt_warn_once(&warned_dump, "TK_DUMP_DIR: cannot create %s (%s)", dir, strerror(errno));
    return dir;
}

/* ---- the text half --------------------------------------------------------------------- */

static bool meta_ok(const tk_kernel *k, const RtLaunchArgs *la, const RtJitMeta *m)
{
    if (m->magic != META_MAGIC || m->nparams > RT_MAX_PARAMS || m->num_warps != la->num_warps ||
        m->dyn_shared < 0 || m->threads < m->num_warps * 32 || m->threads > 1024)
        return false;
    for (uint32_t i = 0; i < m->nparams; i++)
        if (m->param_of[i] < 0 || m->param_of[i] >= k->nruntime || m->param_dt[i] >= DT_COUNT ||
            !rt_part_ok(la->values[m->param_of[i]], m->param_part[i]))
            return false;
    if (m->ntmaps > RT_MAX_TMAPS || !memchr(m->smem_plan, 0, sizeof m->smem_plan) ||
        !memchr(m->cluster_note, 0, sizeof m->cluster_note) || m->cluster < 1 ||
        m->cluster > la->num_ctas)
        return false;
    for (uint32_t i = 0; i < m->ntmaps; i++) {
        const RtTmapMeta *t = &m->tmaps[i];
        if (t->device == 1)
            continue;
        if (t->device || t->base < 0 || (uint32_t)t->base >= m->nparams || t->stride < -1 ||
            (t->stride < 0 && t->stride_const < 1) ||
            (t->stride >= 0 && (uint32_t)t->stride >= m->nparams) || m->param_dt[t->base] != DT_PTR)
            return false;
        for (int d = 0; d < 2; d++)
            for (int f = 0; f < IR_TMA_FACTORS; f++)
                if (t->ext_mul[d] < 1 || t->ext_param[d][f] < IR_TMA_UNBOUNDED ||
                    (t->ext_param[d][f] >= 0 && (uint32_t)t->ext_param[d][f] >= m->nparams))
                    return false;
    }
    return true;
}

static bool load_text(tk_kernel *k, const RtLaunchArgs *la, const char *dir, RtJitText *t)
{
    RtDiskEntry e;
    void *buf = NULL;
    if (!rt_disk_load(dir, t->digest, t->key_blob, t->key_len, &e, &buf))
        return false;
    if (e.meta_len != sizeof t->meta || e.ptx_len == 0 || e.ptx[e.ptx_len - 1] != 0) {
        tk_xfree(buf);
        rt_stats_add(&rt_stats.disk_rejects);
        return false;
    }
    memcpy(&t->meta, e.meta, sizeof t->meta);
    if (!meta_ok(k, la, &t->meta)) {
        tk_xfree(buf);
        rt_stats_add(&rt_stats.disk_rejects);
        return false;
    }
    t->ptx = e.ptx;
    t->ptx_len = e.ptx_len;
    t->cubin = e.cubin_len ? e.cubin : NULL;
    t->cubin_len = e.cubin_len;
    t->buf = buf;
    t->from_disk = true;
    rt_stats_add(&rt_stats.disk_hits);
    return true;
}

static tk_status compile_text(tk_kernel *k, const RtLaunchArgs *la, const char *arch, RtJitText *t)
{
    Arena ir_arena;
    arena_init(&ir_arena);
    IrFunc *f = NULL;
    rt_nvtx_push("compile", k->name);
    double t0 = rt_now_ms();
    tk_status s = specialize(k, la, arch, &ir_arena, &f);
    double t1 = rt_now_ms();
    if (s == TK_OK) {
        f->tma = !la->no_tma; /* the launcher builds the tensor maps */
        f->num_ctas = la->num_ctas > 1 ? la->num_ctas : 0;
    }
    const char *dump = dump_dir();
    StrBuf llvm;
    sb_init(&llvm);
    CgKernel ck;
    cg_kernel_init(&ck);
    if (s == TK_OK) {
        if (dump)
            dump_ir(dump, k->name, t->digest, f);
        CgOptions o = {arch, 3, NULL, comp_line_info(0), !la->fp_fusion};
        Diag d;
        diag_init(&d, &k->mod->comp.src);
        if (!comp_codegen(&d, f, &o, NULL, dump ? &llvm : NULL, &ck))
            s = diag_take(&d, k->name, "failed in code generation");
        else if (ck.ptx.oom || !ck.ptx.data)
            s = err_set(TK_ERR_NO_MEMORY, "out of memory generating PTX for '%s'", k->name);
        else
            s = map_params(k, la, &ck, &t->meta);
        diag_free(&d);
    }
    if (s == TK_OK) {
        if (dump && llvm.data)
            dump_file(dump, k->name, t->digest, "ll", llvm.data, llvm.len);
        if (dump)
            dump_file(dump, k->name, t->digest, "ptx", ck.ptx.data, ck.ptx.len);
        size_t len = 0;
        char *text = sb_take(&ck.ptx, &len);
        t->buf = text;
        t->ptx = text;
        t->ptx_len = len + 1; /* the driver wants the NUL */
        t->spec_ms = t1 - t0;
        t->llvm_ms = rt_now_ms() - t1;
        t->llvm_steps = ck.times;
        rt_stats_add(&rt_stats.compiles);
    }
    sb_free(&llvm);
    cg_kernel_free(&ck);
    arena_free(&ir_arena);
    rt_nvtx_pop();
    return s;
}

static void store_text(const char *dir, const RtJitText *t)
{
    RtDiskEntry e = {t->key_blob,    t->key_len,  (const unsigned char *)&t->meta,
                     sizeof t->meta, t->ptx,      t->ptx_len,
                     t->cubin,       t->cubin_len};
    rt_disk_store(dir, t->digest, &e); /* failure warns and degrades to memory only */
}

tk_status rt_jit_text(tk_kernel *k, const RtLaunchArgs *la, const char *arch, bool store,
                      RtJitText *t)
{
    memset(t, 0, sizeof *t);
    RtKeyParts parts = {{k->mod->source_hash[0], k->mod->source_hash[1]},
                        k->name,
                        arch,
                        rt_build_identity(),
                        &la->key,
                        comp_line_info(0) ? k->mod->comp.src.name : NULL};
    t->digest = rt_key_digest(&parts);
    t->key_blob = rt_key_blob(&parts, &t->key_len);
    if (!t->key_blob)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    const char *dir = rt_disk_dir();
    if (dir && !rt_env_on("TK_ALWAYS_COMPILE") && load_text(k, la, dir, t))
        return TK_OK;
    tk_status s = compile_text(k, la, arch, t);
    if (s == TK_OK && store && dir)
        store_text(dir, t);
    return s;
}

void rt_jit_text_free(RtJitText *t)
{
    tk_xfree(t->key_blob);
    tk_xfree(t->buf);
    memset(t, 0, sizeof *t);
}

/* ---- the GPU half ------------------------------------------------------------------------ */

/* PTX straight into a module through the driver's JIT. Not through its
 * linker (cuLink*), whose cubin would be one a link step can take: it
 * compiles the PTX as relocatable code, which on Hopper costs kernels up
 * to a third more registers (a GEMM epilogue 213 against 128, a Welford
 * reduction 72 against 48: fewer programs an SM). The driver keeps the
 * machine code it makes in its own cache (keyed on the PTX), so a warm
 * start that finds the PTX on disk does not compile again either. */
static tk_status jit_ptx(const char *kernel, const char *ptx, CUmodule *mod)
{
    static _Thread_local char log[16384];
    log[0] = 0;
    /* line tables in the PTX become line info in the code, for profilers */
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_GENERATE_LINE_INFO};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)1};
    unsigned nopts = rt_ptx_has_lines(ptx, strlen(ptx)) ? 3 : 2;
    CUresult r = rt_cu.p_cuModuleLoadDataEx(mod, ptx, nopts, opts, vals);
    if (r == CUDA_SUCCESS)
        return TK_OK;
    *mod = NULL;
    tk_status s = rt_cu_fail(r, "cuModuleLoadDataEx", kernel);
    if (log[0]) {
        char first[1024];
        snprintf(first, sizeof first, "%s", tk_last_error());
        err_set(s, "%s\nthe driver's PTX compiler said:\n%s", first, log);
    }
    return s;
}

static tk_status load_function(tk_kernel *k, RtVariant *v)
{
    const char *name = k->name;
    RT_CU(name, cuModuleGetFunction, &v->fn, v->mod, name);
    tk_kernel_info *in = &v->info;
    RT_CU(name, cuFuncGetAttribute, &in->registers, CU_FUNC_ATTRIBUTE_NUM_REGS, v->fn);
    RT_CU(name, cuFuncGetAttribute, &in->spill_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, v->fn);
    RT_CU(name, cuFuncGetAttribute, &in->shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, v->fn);
    RT_CU(name, cuFuncGetAttribute, &in->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
          v->fn);
    const tk_device_props *p = &k->mod->ctx->props;
    /* before the driver is asked for the room: it refuses with a bare
     * CUDA_ERROR_INVALID_VALUE */
    if (in->shared_bytes + v->dyn_shared > p->shared_per_block)
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s' needs %d bytes of shared memory; the device "
                       "gives at most %d per program (%d over: %d static, %d dynamic%s%s%s); "
                       "use smaller blocks or fewer stages",
                       name, in->shared_bytes + v->dyn_shared, p->shared_per_block,
                       in->shared_bytes + v->dyn_shared - p->shared_per_block, in->shared_bytes,
                       v->dyn_shared, v->smem_plan[0] ? ", taken by: " : "", v->smem_plan,
                       v->smem_plan[0] ? "" : " for pipeline rings and layout scratch");
    if (v->dyn_shared > 48 * 1024)
        RT_CU(name, cuFuncSetAttribute, v->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              v->dyn_shared);
    in->num_warps = v->num_warps;
    in->threads = v->threads;
    in->dynamic_shared_bytes = v->dyn_shared;
    in->function = v->fn;
    int threads = v->threads;
    if (threads > in->max_threads)
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s' uses %d registers per thread, so at most %d "
                       "threads per program fit; num_warps=%d asks for %d (use fewer warps)",
                       name, in->registers, in->max_threads, v->num_warps, threads);
    return TK_OK;
}

static void apply_meta(RtVariant *v, const RtJitMeta *m)
{
    v->nparams = (int)m->nparams;
    for (int i = 0; i < v->nparams; i++) {
        v->param_of[i] = m->param_of[i];
        v->param_dt[i] = m->param_dt[i];
        v->param_part[i] = m->param_part[i];
    }
    v->num_warps = m->num_warps;
    v->cluster = m->cluster;
    v->threads = m->threads;
    v->dyn_shared = m->dyn_shared;
    memcpy(v->smem_plan, m->smem_plan, sizeof v->smem_plan);
    v->ntmaps = (int)m->ntmaps;
    memcpy(v->tmaps, m->tmaps, sizeof v->tmaps[0] * m->ntmaps);
}

/* How long the steps after the text took: ptxas (or the driver's JIT) and
 * the module load. */
typedef struct RtLoadTimes {
    double ptxas_ms; /* ptxas, from the spawn to the cubin read back (0: not run) */
    double jit_ms;   /* cuModuleLoadDataEx on the PTX: the driver's JIT and the load */
    double load_ms;  /* loading a cubin (ptxas's or the disk's) and the function */
} RtLoadTimes;

/* TK_VERBOSE=1: where a build's time went, on stderr: the front end and
 * sema (specialise), LLVM split into the lowering to LLVM IR, libdevice,
 * the optimisation pipeline and PTX emission, then ptxas or the driver's
 * JIT and the load, and the whole build (the rest of it is the disk
 * cache's write). */
static void report_build(const tk_kernel *k, const RtVariant *v, const RtLaunchArgs *la,
                         const RtJitText *t, double text_ms, const RtLoadTimes *lt, double total_ms)
{
    const tk_kernel_info *in = &v->info;
    fprintf(stderr, "tk: kernel '%s' [%s, %d warps, %d stages] ", k->name, k->mod->ctx->arch,
            la->num_warps, la->num_stages);
    if (t->from_disk) {
        fprintf(stderr, "from the disk cache: read %.2f ms", text_ms);
    } else {
        const CgTimes *c = &t->llvm_steps;
        double ir = t->llvm_ms - c->link_ms - c->opt_ms - c->emit_ms;
        fprintf(stderr, "compiled: specialise %.2f ms, LLVM %.2f ms (to LLVM IR %.2f", t->spec_ms,
                t->llvm_ms, ir > 0 ? ir : 0);
        if (c->link_ms > 0)
            fprintf(stderr, ", libdevice %.2f", c->link_ms);
        fprintf(stderr, ", optimise %.2f, PTX %.2f)", c->opt_ms, c->emit_ms);
    }
    if (lt->ptxas_ms > 0)
        fprintf(stderr, ", ptxas %.2f ms", lt->ptxas_ms);
    if (lt->jit_ms > 0)
        fprintf(stderr, ", driver JIT and load %.2f ms", lt->jit_ms);
    if (lt->load_ms > 0)
        fprintf(stderr, ", load %.2f ms", lt->load_ms);
    fprintf(stderr, "; %.2f ms in all; %d registers, %d spill bytes, %d shared bytes\n", total_ms,
            in->registers, in->spill_bytes, in->shared_bytes + in->dynamic_shared_bytes);
    if (t->meta.cluster_note[0])
        fprintf(stderr, "tk: kernel '%s': %s\n", k->name, t->meta.cluster_note);
    else if (v->cluster > 1)
        fprintf(stderr, "tk: kernel '%s': clusters of %d CTAs along x, TMA tiles multicast\n",
                k->name, v->cluster);
}

/* PTX to machine code with ptxas where one is found, as Triton does: the
 * driver's JIT compiles one module at a time in a process (the autotuner's
 * configs, compiled in parallel, waited 50 ms each for it on an H100), while
 * ptxas processes run side by side, and the cubin goes into the disk entry,
 * so a later process loads it without compiling. Both make whole-program
 * code. false (and the JIT takes the PTX) where there is no ptxas or it
 * fails; its complaint is kept for TK_VERBOSE. */
static atomic_bool ptxas_off; /* none found, or one failed: the JIT from then on */

static bool assemble(const tk_kernel *k, const RtJitText *t, const char *arch, StrBuf *out)
{
    static int warned;
    if (atomic_load(&ptxas_off))
        return false;
    tk_status s = rt_ptxas(t->ptx, t->ptx_len, arch, t->meta.dyn_shared, out);
    if (s == TK_OK && !out->oom) {
        rt_stats_add(&rt_stats.ptxas_builds);
        return true;
    }
    /* a ptxas that fails on tk's PTX (older than it, say) would fail on
     * every kernel, each time after a process start */
    atomic_store(&ptxas_off, true);
    if (s != TK_OK && s != TK_ERR_NOT_FOUND && rt_env_on("TK_VERBOSE"))
        rt_warn_once(&warned, "tk: kernel '%s': ptxas failed, the driver's JIT compiles: %s",
                     k->name, err_text());
    err_clear();
    out->len = 0;
    return false;
}

/* v->mod from the disk entry's cubin, else from ptxas's (kept in cubin and
 * t for the disk), else from the driver's JIT; *jitted when compiled here.
 * A disk cubin from another driver may not load: then the PTX is compiled.
 * lt gets each step's time. */
static tk_status make_module(tk_kernel *k, RtJitText *t, const char *arch, RtVariant *v,
                             StrBuf *cubin, bool *jitted, RtLoadTimes *lt)
{
    double t0 = rt_now_ms();
    CUresult r = t->cubin ? rt_cu.p_cuModuleLoadData(&v->mod, t->cubin) : CUDA_SUCCESS;
    if (t->cubin && r == CUDA_SUCCESS) {
        rt_stats_add(&rt_stats.cubin_loads);
        lt->load_ms += rt_now_ms() - t0;
        return TK_OK;
    }
    *jitted = true;
    if (!t->cubin) {
        double t1 = rt_now_ms();
        bool made = assemble(k, t, arch, cubin);
        double t2 = rt_now_ms();
        if (made)
            lt->ptxas_ms += t2 - t1;
        r = made ? rt_cu.p_cuModuleLoadData(&v->mod, cubin->data) : CUDA_SUCCESS;
        if (made && r == CUDA_SUCCESS) {
            t->cubin = (const unsigned char *)cubin->data, t->cubin_len = cubin->len;
            lt->load_ms += rt_now_ms() - t2;
            return TK_OK;
        }
    }
    /* an earlier launch's fault fails every load from now on: it is no
     * reason to give up on ptxas's cubins, nor for the JIT to try */
    if (r != CUDA_SUCCESS && rt_cu_is_fault(r)) {
        v->mod = NULL;
        return rt_cu_fail(r, "cuModuleLoadData", k->name);
    }
    v->mod = NULL;
    if (cubin->len) /* a cubin this driver cannot load (a newer ptxas): the JIT */
        atomic_store(&ptxas_off, true);
    t->cubin = NULL, t->cubin_len = 0;
    double t3 = rt_now_ms();
    tk_status s = jit_ptx(k->name, t->ptx, &v->mod);
    lt->jit_ms += rt_now_ms() - t3;
    return s;
}

tk_status rt_jit_build_cuda(tk_kernel *k, const RtLaunchArgs *la, RtVariant *v)
{
    tk_context *ctx = k->mod->ctx;
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RtJitText t;
    double t0 = rt_now_ms(), t1;
    s = rt_jit_text(k, la, ctx->arch, false, &t);
    t1 = rt_now_ms();
    if (s != TK_OK) {
        rt_jit_text_free(&t);
        return s;
    }
    apply_meta(v, &t.meta);
    bool jitted = false;
    rt_nvtx_push("load", k->name); /* ptxas or the JIT (when needed) and the module load */
    StrBuf cubin;
    sb_init(&cubin);
    RtLoadTimes lt = {0, 0, 0};
    s = make_module(k, &t, ctx->arch, v, &cubin, &jitted, &lt);
    if (s != TK_OK) {
        sb_free(&cubin);
        goto done;
    }
    const char *dir = rt_disk_dir();
    if (jitted && dir && !t.from_disk)
        store_text(dir, &t);
    sb_free(&cubin);
    double t2 = rt_now_ms();
    s = load_function(k, v);
    lt.load_ms += rt_now_ms() - t2;
    if (s == TK_OK && rt_env_on("TK_VERBOSE"))
        report_build(k, v, la, &t, t1 - t0, &lt, rt_now_ms() - t0);
done:
    rt_nvtx_pop();
    rt_jit_text_free(&t);
    return s;
}

tk_status rt_jit_build_interp(tk_kernel *k, const RtLaunchArgs *la, RtVariant *v)
{
    IrFunc *f = NULL;
    tk_status s = specialize(k, la, NULL, &v->ir_arena, &f);
    RtJitMeta m;
    memset(&m, 0, sizeof m);
    CgKernel ck;
    cg_kernel_init(&ck);
    if (s == TK_OK) {
        cg_kernel_describe(f, &ck);
        s = map_params(k, la, &ck, &m);
    }
    if (s != TK_OK)
        return s;
    const char *dump = dump_dir();
    if (dump) {
        RtKeyParts parts = {{k->mod->source_hash[0], k->mod->source_hash[1]},
                            k->name,
                            "interp",
                            rt_build_identity(),
                            &la->key,
                            NULL};
        dump_ir(dump, k->name, rt_key_digest(&parts), f);
    }
    apply_meta(v, &m);
    v->ir = f;
    v->info = (tk_kernel_info){.registers = 32,
                               .spill_bytes = 0,
                               .shared_bytes = 0,
                               .max_threads = 1024,
                               .num_warps = v->num_warps,
                               .threads = v->threads};
    rt_stats_add(&rt_stats.compiles);
    return TK_OK;
}

tk_status rt_jit_build(tk_kernel *k, const RtLaunchArgs *la, RtVariant **out)
{
    *out = NULL;
    RtVariant *v = tk_xalloc(sizeof *v);
    if (!v)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    memset(v, 0, sizeof *v);
    arena_init(&v->ir_arena);
    pthread_mutex_init(&v->tma_lock, NULL);
    v->key = la->key;
    v->num_warps = la->num_warps;
    tk_status s = k->mod->ctx->be->build(k, la, v);
    if (s != TK_OK) {
        rt_variant_free(v);
        return s;
    }
    *out = v;
    return TK_OK;
}
