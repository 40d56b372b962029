/* ir_parse.c: the IR reader builds what specialisation built. Kernels of
 * the conformance suite and the codegen tests go through the pipeline as
 * tkc --emit=ir takes them (sm_80, and sm_90a with TMA and warp
 * specialization); their text is read back and the two IrFuncs are compared
 * field by field: every op's kind, operands, attributes and regions, every
 * value's id, type, layout and name, and the function's own fields. */
#include "ir_test.h"
#include "tk/tk.h"

#include <math.h>
#include <stdlib.h>

typedef struct Job {
    const char *file, *kernel, *signature;
    const char *defines; /* "A=1 B=2" */
    const char *arch;
    int num_warps, tma;
} Job;

static const Job jobs[] = {
    {"test/conformance/vector_add.tk", "vector_add", "*fp32:16,*fp32:16,*fp32:16,i32", "BLOCK=1024",
     "sm_80", 4, 0},
    {"test/conformance/layernorm.tk", "layernorm_rows",
     "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32,i32,i32,fp32", "BLOCK=512", "sm_80", 4, 0},
    {"test/conformance/row_argmax.tk", "row_stats", "*fp32,*fp32,*i32,*fp32,i32,i32,i32",
     "R=16 C=64", "sm_80", 4, 0},
    {"test/conformance/softmax_persistent.tk", "softmax_persistent", "*fp32,*fp32,i32,i32,i32,i32",
     "BLOCK=512 STAGES=2", "sm_80", 4, 0},
    {"test/conformance/matmul_grouped.tk", "matmul_grouped",
     "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32", "BM=64 BN=64 BK=32 GROUP=4", "sm_80",
     4, 0},
    {"test/conformance/matmul_grouped.tk", "matmul_grouped",
     "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
     "BM=128 BN=128 BK=64 GROUP=4", "sm_90a", 8, 1},
    {"test/codegen/flatten.tk", "gemm", "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16",
     "BM=64 BN=64 BK=32 NUM_SMS=8", "sm_80", 4, 0},
    {"test/codegen/warp_spec.tk", "ws_matmul",
     "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
     "BM=128 BN=128 BK=64", "sm_90a", 8, 1},
    {"test/codegen/scan.tk", "cums", "*fp32,*fp32", NULL, "sm_80", 4, 0},
    {"test/codegen/debug.tk", "show", "*fp32,*i32", NULL, "sm_80", 4, 0},
    {"test/codegen/debug.tk", "check", "*fp32", NULL, "sm_80", 4, 0},
    {"test/codegen/atomics.tk", "atomics", "*fp32,*i32,*u32,*i32,i32", NULL, "sm_80", 4, 0},
};

static char *slurp(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TK_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    return buf;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A name the text cannot tell from none: the printer writes both as `_`. */
static bool same_name(const char *a, const char *b)
{
    bool none_a = !a || !a[0] || strcmp(a, "_") == 0, none_b = !b || !b[0] || strcmp(b, "_") == 0;
    return (none_a && none_b) || same_str(a, b);
}

static bool same_value(const IrValue *a, const IrValue *b)
{
    if (!a || !b)
        return !a && !b;
    bool lay = (!a->layout && !b->layout) ||
        (a->layout && b->layout && layout_equal(a->layout, b->layout));
    return a->id == b->id && type_eq(a->type, b->type) && lay && same_name(a->name, b->name) &&
        a->index == b->index && !a->def == !b->def;
}

static bool same_block(const IrBlock *a, const IrBlock *b, const char *where);

static bool same_attrs(const IrOp *a, const IrOp *b)
{
    bool fval =
        memcmp(&a->fval, &b->fval, sizeof a->fval) == 0 || (isnan(a->fval) && isnan(b->fval));
    bool ints = a->nints == b->nints && memcmp(a->ints, b->ints, sizeof a->ints) == 0;
    return a->axis == b->axis && a->sub == b->sub && a->flags == b->flags && a->ival == b->ival &&
        a->ival2 == b->ival2 && fval && same_str(a->str, b->str) && same_str(a->str2, b->str2) &&
        ints;
}

static bool same_op(const IrOp *a, const IrOp *b, const char *where)
{
    bool ok = a->kind == b->kind && a->nops == b->nops && a->nres == b->nres &&
        a->nregions == b->nregions && same_attrs(a, b);
    for (int i = 0; ok && i < a->nops; i++)
        ok = same_value(a->operands[i], b->operands[i]);
    for (int i = 0; ok && i < a->nres; i++)
        ok = same_value(a->results[i], b->results[i]);
    if (!ok)
        fprintf(stderr,
                "%s: op '%s' (result %%%d) differs: axis %d/%d sub %d/%d flags %d/%d "
                "ival %lld/%lld ival2 %lld/%lld fval %g/%g\n",
                where, ir_kind_name(a->kind), a->nres ? a->results[0]->id : -1, a->axis, b->axis,
                a->sub, b->sub, a->flags, b->flags, (long long)a->ival, (long long)b->ival,
                (long long)a->ival2, (long long)b->ival2, a->fval, b->fval);
    for (int r = 0; ok && r < a->nregions; r++)
        ok = same_block(a->regions[r], b->regions[r], where);
    return ok;
}

static bool same_block(const IrBlock *a, const IrBlock *b, const char *where)
{
    bool ok = a->nargs == b->nargs;
    for (int i = 0; ok && i < a->nargs; i++)
        ok = same_value(a->args[i], b->args[i]);
    const IrOp *x = a->first, *y = b->first;
    for (; ok && x && y; x = x->next, y = y->next)
        ok = same_op(x, y, where);
    if (ok && (x || y))
        fprintf(stderr, "%s: a block has %s ops\n", where, x ? "fewer" : "more");
    return ok && !x && !y;
}

static bool same_func(const IrFunc *a, const IrFunc *b, const char *where)
{
    bool ok = same_str(a->name, b->name) && a->nparams == b->nparams &&
        a->num_warps == b->num_warps && a->num_stages == b->num_stages &&
        same_str(a->arch, b->arch) && a->next_id == b->next_id && a->nlayouts == b->nlayouts &&
        a->nbuffers == b->nbuffers && a->tma == b->tma && a->ntmaps == b->ntmaps &&
        a->producer_warps == b->producer_warps;
    for (int i = 0; ok && i < a->nparams; i++)
        ok = type_eq(a->params[i].type, b->params[i].type) &&
            a->params[i].divisibility == b->params[i].divisibility &&
            same_str(a->params[i].name, b->params[i].name);
    for (int i = 0; ok && i < a->ntmaps; i++)
        ok = ir_tmap_equal(&a->tmaps[i], &b->tmaps[i]); /* fields: padding is not read */
    for (int i = 0; ok && i < a->nlayouts; i++)
        if (!(ok = layout_equal(a->layouts[i], b->layouts[i])))
            fprintf(stderr, "%s: layout #L%d differs\n", where, i);
    if (!ok)
        fprintf(stderr,
                "%s: the function's fields differ (next_id %d/%d, %d/%d layouts, "
                "buffers %d/%d, warps %d/%d stages %d/%d)\n",
                where, a->next_id, b->next_id, a->nlayouts, b->nlayouts, a->nbuffers, b->nbuffers,
                a->num_warps, b->num_warps, a->num_stages, b->num_stages);
    return ok && same_block(a->body, b->body, where);
}

/* "A=1 B=2" into defines (in the arena's strings). */
static int split_defines(Arena *a, const char *text, tk_define *out, int cap)
{
    int n = 0;
    for (char *s = text ? arena_strdup(a, text) : NULL, *tok; s && n < cap; s = NULL) {
        char *save = NULL;
        for (tok = strtok_r(s, " ", &save); tok && n < cap; tok = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(tok, '=');
            *eq = 0;
            out[n++] = (tk_define){tok, eq + 1};
        }
    }
    return n;
}

/* Specialises and lowers one kernel as tkc --emit=ir does. */
static IrFunc *lower(Compilation *c, const Job *j, const char *kernel, Arena *ir_arena)
{
    tk_define defs[8];
    tk_compile_options o = {0};
    o.arch = j->arch, o.num_warps = j->num_warps, o.tma = j->tma, o.opt_level = -1;
    o.signature = j->signature, o.defines = defs;
    o.ndefines = split_defines(&c->arena, j->defines, defs, 8);
    SpecRequest req;
    if (!comp_request(c, &o, kernel, o.signature, &req))
        return NULL;
    IrFunc *f = comp_specialize(c, &c->diag, &req, ir_arena, NULL);
    if (f)
        f->tma = j->tma != 0;
    return f && comp_lower(&c->diag, f, NULL) ? f : NULL;
}

static void check_kernel(Compilation *c, const Job *j, const char *kernel)
{
    char where[256];
    snprintf(where, sizeof where, "%s @%s %s", j->file, kernel, j->arch);
    Arena a1, a2;
    arena_init(&a1);
    arena_init(&a2);
    IrFunc *f = lower(c, j, kernel, &a1);
    CHECK(f != NULL);
    StrBuf text;
    sb_init(&text);
    if (f)
        ir_print(&text, f);
    Source src = {"printed.tkir", text.data ? text.data : "", text.len};
    Diag d;
    diag_init(&d, &src);
    IrFunc **back = NULL;
    int n = f ? ir_parse(&src, &a2, &d, &back) : 0;
    if (f && n != 1)
        fprintf(stderr, "%s: not read back:\n%s\n", where, d.text.data ? d.text.data : "");
    CHECK(!f || n == 1);
    if (n == 1)
        CHECK(same_func(f, back[0], where));
    diag_free(&d);
    sb_free(&text);
    arena_free(&a1);
    arena_free(&a2);
}

static void check_job(const Job *j)
{
    size_t len;
    char *text = slurp(j->file, &len);
    CHECK(text != NULL);
    if (!text)
        return;
    Compilation c;
    CHECK(comp_init(&c, j->file, text, len));
    free(text);
    if (!comp_parse(&c)) {
        fprintf(stderr, "%s: %s\n", j->file, c.diag.text.data ? c.diag.text.data : "");
        CHECK(false);
    } else {
        check_kernel(&c, j, j->kernel);
    }
    if (c.diag.errors)
        fprintf(stderr, "%s: %s\n", j->file, c.diag.text.data ? c.diag.text.data : "");
    comp_free(&c);
}

int main(void)
{
    for (int i = 0; i < TK_ARRAY_LEN(jobs); i++)
        check_job(&jobs[i]);
    return t_finish("ir_parse");
}
