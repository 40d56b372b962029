/* passes.h: the map of lib/passes/. Each pass takes a verified IrFunc and
 * leaves a verified IrFunc that computes the same values; the pass manager
 * (manager.c) holds them in one table, runs the default pipeline or a
 * list a test names, prints the IR around the passes asked for, and runs
 * the verifier between them.
 * Analyses (axis.h) only read the IR and answer questions about it for
 * code generation. Passes allocate from the function's arena only. */
#ifndef TK_PASSES_H
#define TK_PASSES_H

#include "ir/ir.h"

/* constant folding and algebraic simplification (fold.c) */
void pass_fold(IrFunc *f);
/* removes ops whose results are unused and that have no effect (dce.c) */
void pass_dce(IrFunc *f);

/* turns a loop over tiles marked tl.range(..., flatten=True) and the K
 * loop inside it into one loop over (tile, K step), so that pipelining runs
 * across tiles (flatten.c); true when it changed a loop */
bool pass_flatten(IrFunc *f);
/* gives every block value a layout and inserts convert_layout ops where a
 * use needs another (layout.c); false on out-of-memory */
bool pass_layout(IrFunc *f);
/* v is built from arange, constants, scalars and cheap elementwise or shape
 * ops, so it can be recomputed in any layout instead of moved (layout.c) */
bool pass_can_remat(const IrValue *v);
/* turns the loads feeding tensor-core dots in `for` loops with num_stages
 * >= 2 into cp.async copies S-1 iterations ahead (pipeline.c); after
 * pass_layout, for GPU code only */
void pass_pipeline(IrFunc *f);


/* ---- the pass manager (manager.c) ---- */

/* The targets whose code a pass serves in the default pipeline. */
typedef enum PassTarget {
    PASS_PTX = 1u << 0,    /* code generation */
    PASS_INTERP = 1u << 1, /* the interpreter, which runs the IR itself */
} PassTarget;

typedef struct PassInfo {
    const char *name;
    bool (*run)(IrFunc *f); /* false: the pass could not finish */
    unsigned targets;       /* PassTarget bits */
    const char *what;       /* one line saying what it does */
} PassInfo;

typedef struct PassOptions {
    const char *print_before; /* "all" or comma-separated pass names; NULL: none */
    const char *print_after;
    StrBuf *dump;             /* where the printed IR goes (NULL: nowhere) */
    bool verify_each;         /* verify after every pass (always in debug builds) */
} PassOptions;

/* Where a default pipeline run stops: the IR the interpreter runs, or the
 * rest of the passes, which serve code generation only. */
typedef enum PassStage { PASS_STAGE_SPECIALIZE, PASS_STAGE_LOWER } PassStage;

const PassInfo *pass_lookup(const char *name, size_t len);
int pass_count(void);
const PassInfo *pass_at(int i);
/* The first name of a comma-separated list that names no pass (its
 * length in *len), or NULL; with all_ok, "all" names every pass. */
const char *pass_first_unknown(const char *list, bool all_ok, size_t *len);
/* Appends the names of every pass, comma-separated. */
void pass_names(StrBuf *out);
/* Checks a comma-separated list of pass names before anything runs (with
 * all_ok, "all" too); false with an error naming the option otherwise. */
bool pass_check_list(Diag *d, const char *option, const char *list, bool all_ok);
/* Runs the listed passes in order. */
bool pass_run_list(Diag *d, IrFunc *f, const char *list, const PassOptions *o);
/* Runs the default pipeline's passes of one stage, in order. */
bool pass_run_default(Diag *d, IrFunc *f, PassStage stage, const PassOptions *o);

#endif
