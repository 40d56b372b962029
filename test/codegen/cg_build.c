/* cg_build.c: code generation from hand-built IR: each kernel compiles to
 * PTX holding the instructions its construct needs. With an argument DIR,
 * the PTX files are also written there (for ptxas). */
#include "cg_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
static const char *outdir;
/* The metadata of the last kernel compile() compiled. */
static int last_threads, last_dynamic_shared, last_nparams;
static char last_plan[CG_SMEM_PLAN_LEN];

static char *compile(IrFunc *f, const char *arch, bool want_llvm, char **llvm)
{
    Diag d;
    diag_init(&d, f->src);
    Diag vd;
    diag_init(&vd, f->src);
    if (!ir_verify(f, &vd))
        fprintf(stderr, "%s: IR verifier: %s\n", f->name, vd.text.data ? vd.text.data : "");
    diag_free(&vd);
    StrBuf ll;
    sb_init(&ll);
    CgKernel k;
    cg_kernel_init(&k);
    CgOptions o = {arch, 3, NULL, false, false};
    pass_layout(f);
    bool ok = cg_compile(f, &o, &d, want_llvm ? &ll : NULL, &k);
    last_threads = ok ? k.threads : -1;
    last_dynamic_shared = ok ? k.dynamic_shared : -1;
    last_nparams = ok ? k.nparams : -1;
    memcpy(last_plan, k.smem_plan, sizeof last_plan);
    if (!ok)
        fprintf(stderr, "%s: %s\n", f->name, d.text.data ? d.text.data : "(no message)");
    CHECK(ok);
    diag_free(&d);
    if (llvm)
        *llvm = ll.data ? sb_take(&ll, NULL) : NULL;
    sb_free(&ll);
    char *text = ok && k.ptx.data ? sb_take(&k.ptx, NULL) : NULL;
    cg_kernel_free(&k);
    if (text && outdir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s_%s.ptx", outdir, f->name, arch);
        FILE *fp = fopen(path, "w");
        if (fp) {
            fputs(text, fp);
            fclose(fp);
        }
    }
    return text;
}

static void expect(const char *ptx, const char *what, const char *name)
{
    if (!ptx || !strstr(ptx, what)) {
        fprintf(stderr, "%s: PTX lacks '%s'\n", name, what);
        failures++;
    }
}

static void finish(IrFunc *f, const char *const *want, int nwant)
{
    const char *archs[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        char *ptx = compile(f, archs[a], false, NULL);
        for (int i = 0; i < nwant; i++)
            expect(ptx, want[i], f->name);
        tk_xfree(ptx);
    }
}

static void check(IrFunc *f, const Want *w) { finish(f, w->s, w->n); }


/* A kernel that needs libdevice, compiled with a libdevice path that does not
 * exist: a clear error naming the path, never a crash. */
static void missing_libdevice(Arena *a)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "needs_libdevice", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, SP);
    IrValue *v = load(&b, x, NULL, NULL);
    store(&b, x, op1(&b, IR_MATH, v, v->type, MATH_TANH), NULL);
    Diag d;
    diag_init(&d, NULL);
    CgKernel ptx;
    cg_kernel_init(&ptx);
    CgOptions o = {"sm_80", 3, "/nonexistent/libdevice.10.bc", false, false};
    pass_layout(f);
    CHECK(!cg_compile(f, &o, &d, NULL, &ptx));
    CHECK(d.errors == 1);
    CHECK(d.text.data && strstr(d.text.data, "/nonexistent/libdevice.10.bc"));
    CHECK(d.text.data && strstr(d.text.data, "CUDA_HOME"));
    cg_kernel_free(&ptx);
    diag_free(&d);
    /* a libdevice name that libdevice lacks */
    IrFunc *g = new_kernel(a, "bad_extern", &b);
    x = ir_add_param(g, "x", type_ptr(DT_F32), 16, SP);
    v = load(&b, x, NULL, NULL);
    IrValue *e = op1(&b, IR_EXTERN, v, v->type, 0);
    e->def->str = "__nv_no_such_functionf";
    store(&b, x, e, NULL);
    diag_init(&d, NULL);
    cg_kernel_init(&ptx);
    o = (CgOptions){"sm_80", 3, NULL, false, false};
    pass_layout(g);
    CHECK(!cg_compile(g, &o, &d, NULL, &ptx));
    CHECK(d.text.data &&
          strstr(d.text.data, "'__nv_no_such_functionf' is not a libdevice function"));
    cg_kernel_free(&ptx);
    diag_free(&d);
    /* an unknown target is an error too */
    diag_init(&d, NULL);
    cg_kernel_init(&ptx);
    o = (CgOptions){"sm_75", 3, NULL, false, false};
    pass_layout(f);
    CHECK(!cg_compile(f, &o, &d, NULL, &ptx));
    CHECK(d.text.data && strstr(d.text.data, "sm_75"));
    cg_kernel_free(&ptx);
    diag_free(&d);
}

int main(int argc, char **argv)
{
    outdir = argc > 1 ? argv[1] : NULL;
    Arena a;
    arena_init(&a);
    Want w;
    check(k_vector_add(&a, 1, &w), &w);
    check(k_vector_add(&a, 16, &w), &w);
    check(k_softmax(&a, 1024, 4, &w), &w);
    check(k_softmax(&a, 16384, 8, &w), &w);
    check(k_softmax(&a, 8, 4, &w), &w);
    check(k_rows(&a, &w), &w);
    check(k_flow(&a, &w), &w);
    check(k_dot(&a, DT_F16, DT_F32, &w), &w);
    check(k_dot(&a, DT_BF16, DT_F32, &w), &w);
    check(k_dot(&a, DT_F32, DT_F32, &w), &w);
    check(k_dot(&a, DT_I8, DT_I32, &w), &w);
    /* the metadata beside the PTX: threads of the warps asked for, parameters,
     * no dynamic shared memory for a small kernel */
    IrFunc *small = k_dot_sized(&a, DT_F32, DT_F32, 32, 32, 32, &w);
    small->num_warps = 8;
    check(small, &w);
    CHECK(last_threads == 8 * 32 && last_dynamic_shared == 0 && last_nparams == small->nparams);
    /* 64 KiB of operands: dynamic shared memory, announced to the runtime in
     * the metadata (not in the PTX) */
    IrFunc *big = k_dot_sized(&a, DT_F32, DT_F32, 128, 64, 128, &w);
    w = (Want){{".extern .shared .align 16 .b8 tk_smem[]"}, 1};
    check(big, &w);
    CHECK(last_dynamic_shared == 65536 && last_threads == big->num_warps * 32);
    /* and what takes it, for a refusal at launch: the operands' conversions */
    CHECK(strcmp(last_plan, "layout and reduction scratch 65536") == 0);
    check(k_misc(&a, &w), &w);
    check(k_scan(&a, &w), &w);
    check(k_shapes(&a, &w), &w);
    check(k_counter(&a, &w), &w);
    check(k_rand(&a, &w), &w);
    missing_libdevice(&a);
    arena_free(&a);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
