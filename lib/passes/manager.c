/* manager.c: the pass table and the pass manager. Every pass the compiler
 * runs is a row of one table (its name, its function, the targets whose
 * code it serves); the default pipeline is a list of those names, and
 * `--passes=` runs any other list. The manager prints the IR before or
 * after the passes asked for, and verifies the IR after each pass in debug
 * builds and whenever the caller asks (IR read back from text).
 * Assumes a verified IrFunc; guarantees a verified one, or false with a
 * diagnostic naming the pass. */
#include "passes/passes.h"

#include <string.h>

static bool run_fold(IrFunc *f) { return pass_fold(f), true; }
static bool run_flatten(IrFunc *f) { return pass_flatten(f), true; }
static bool run_dce(IrFunc *f) { return pass_dce(f), true; }
static bool run_induction(IrFunc *f) { return pass_induction(f), true; }
static bool run_squeeze(IrFunc *f) { return pass_squeeze(f), true; }
static bool run_layout(IrFunc *f) { return pass_layout(f); }

static const PassInfo pass_table[] = {
    {"fold", run_fold, PASS_PTX | PASS_INTERP, "constant folding and algebraic simplification"},
    {"flatten", run_flatten, PASS_PTX | PASS_INTERP,
     "one loop over (tile, K step) for tile loops marked flatten=True"},
    {"induction", run_induction, PASS_PTX | PASS_INTERP,
     "carried integer blocks stepped by a constant made from the iteration's index"},
    {"squeeze", run_squeeze, PASS_PTX | PASS_INTERP,
     "[M, 1] tiles loaded from expanded vectors' addresses loaded as the vectors"},
    {"fresh", pass_fresh, PASS_PTX | PASS_INTERP,
     "accumulators reset to zeros in a branch become the dot's fresh flag"},
    {"dce", run_dce, PASS_PTX | PASS_INTERP, "removes unused ops that have no effect"},
    {"layout", run_layout, PASS_PTX | PASS_INTERP,
     "a layout for every block value, conversions where a use needs another"},
    {"pipeline_plan", pass_pipeline_plan, PASS_PTX,
     "software pipelining plan: per load cp.async, private or TMA ring; stages, async wgmma, "
     "warp specialization"},
    {"pipeline_rings", pass_pipeline_rings, PASS_PTX,
     "planned loads become copies into rings of shared buffers, stages-1 iterations ahead"},
    {"pipeline_async", pass_pipeline_async, PASS_PTX,
     "planned wgmma dots stay in flight into the next iteration"},
    {"pipeline_ws", pass_pipeline_ws, PASS_PTX,
     "planned loops get a producer warpgroup that issues their TMA copies"},
    {"tma_store", pass_tma_store, PASS_PTX,
     "stores of whole tiles outside K loops written by TMA through shared memory (sm_90a)"},
    {"loads_early", pass_loads_early, PASS_PTX,
     "global loads issued before the element-wise work between them and the previous one"},
    /* a group: the four pipeline_* above, as the default pipeline runs them */
    {"pipeline", pass_pipeline, PASS_PTX,
     "pipeline_plan, pipeline_rings, pipeline_async, "
     "pipeline_ws in one"},
};

/* The default pipeline. The interpreter runs the IR after the passes that
 * serve it; the rest (PASS_PTX only) run when code is generated. fold runs
 * again after flatten, which leaves index arithmetic to simplify. There is
 * no CSE or loop-invariant hoisting here: LLVM's EarlyCSE, GVN and LICM do
 * both on the generated code, per thread and with the target's costs. */
static const char *const default_passes[] = {
    "fold",           "flatten",     "fold",      "induction",     "squeeze",
    "fresh",          "dce",         "layout",    "pipeline_plan", "pipeline_rings",
    "pipeline_async", "pipeline_ws", "tma_store", "loads_early"};

const PassInfo *pass_lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof pass_table / sizeof pass_table[0]; i++)
        if (strlen(pass_table[i].name) == len && strncmp(pass_table[i].name, name, len) == 0)
            return &pass_table[i];
    return NULL;
}

int pass_count(void) { return (int)(sizeof pass_table / sizeof pass_table[0]); }

const PassInfo *pass_at(int i) { return i >= 0 && i < pass_count() ? &pass_table[i] : NULL; }

/* The name after the one at s (past its comma; an empty name after a
 * trailing comma is one too), or NULL at the end. */
static const char *next_name(const char *s)
{
    s += strcspn(s, ",");
    return *s ? s + 1 : NULL;
}

/* Whether the list names the pass: "all", or the name among the commas. */
static bool list_names(const char *list, const char *name)
{
    if (!list)
        return false;
    if (strcmp(list, "all") == 0)
        return true;
    for (const char *s = list; s; s = next_name(s)) {
        size_t n = strcspn(s, ",");
        if (n == strlen(name) && strncmp(s, name, n) == 0)
            return true;
    }
    return false;
}

const char *pass_first_unknown(const char *list, bool all_ok, size_t *len)
{
    if (!list || !*list || (all_ok && strcmp(list, "all") == 0))
        return NULL;
    for (const char *s = list; s; s = next_name(s)) {
        *len = strcspn(s, ",");
        if (!pass_lookup(s, *len))
            return s;
    }
    return NULL;
}

void pass_names(StrBuf *out)
{
    for (int i = 0; i < pass_count(); i++)
        sb_printf(out, "%s%s", i ? ", " : "", pass_table[i].name);
}

bool pass_check_list(Diag *d, const char *option, const char *list, bool all_ok)
{
    size_t n = 0;
    const char *bad = pass_first_unknown(list, all_ok, &n);
    if (!bad)
        return true;
    StrBuf known;
    sb_init(&known);
    pass_names(&known);
    diag_plain(d, DIAG_ERROR, "%s: unknown pass '%.*s' (%s%s)", option, (int)n, bad,
               known.data ? known.data : "", all_ok ? ", or all" : "");
    sb_free(&known);
    return false;
}

static void dump(const PassOptions *o, const char *when, const PassInfo *p, const IrFunc *f)
{
    sb_printf(o->dump, "# IR %s %s on '%s'\n", when, p->name, f->name);
    ir_print(o->dump, f);
}

/* One pass: the dumps it was asked for around it, then the verifier. */
static bool run_one(Diag *d, IrFunc *f, const PassInfo *p, const PassOptions *o)
{
    if (o && o->dump && list_names(o->print_before, p->name))
        dump(o, "before", p, f);
    bool ok = p->run(f);
    if (f->arena->oom) {
        diag_plain(d, DIAG_ERROR, "out of memory in pass %s on '%s'", p->name, f->name);
        return false;
    }
    if (!ok) {
        diag_plain(d, DIAG_ERROR, "internal error: pass %s could not finish on '%s'", p->name,
                   f->name);
        return false;
    }
    if (o && o->dump && list_names(o->print_after, p->name))
        dump(o, "after", p, f);
#ifdef NDEBUG
    bool verify = o && o->verify_each;
#else
    bool verify = true; /* debug builds check every pass */
#endif
    return !verify || ir_verify(f, d);
}

bool pass_run_list(Diag *d, IrFunc *f, const char *list, const PassOptions *o)
{
    for (const char *s = list && *list ? list : NULL; s; s = next_name(s)) {
        const PassInfo *p = pass_lookup(s, strcspn(s, ","));
        if (!p) {
            diag_plain(d, DIAG_ERROR, "unknown pass '%.*s'", (int)strcspn(s, ","), s);
            return false;
        }
        if (!run_one(d, f, p, o))
            return false;
    }
    return true;
}

bool pass_run_default(Diag *d, IrFunc *f, PassStage stage, const PassOptions *o)
{
    for (size_t i = 0; i < sizeof default_passes / sizeof default_passes[0]; i++) {
        const PassInfo *p = pass_lookup(default_passes[i], strlen(default_passes[i]));
        bool interp = (p->targets & PASS_INTERP) != 0;
        if (interp != (stage == PASS_STAGE_SPECIALIZE))
            continue;
        if (!run_one(d, f, p, o))
            return false;
    }
    return true;
}
