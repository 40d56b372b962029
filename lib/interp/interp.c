/* interp.c: the reference interpreter's driver: plans a workspace slot for
 * every IR value, runs the grid's programs (in parallel threads when the
 * kernel has no atomics and no prints) and walks the structured control
 * flow. Assumes a verified IR (ir.h invariants). Guarantees that an error
 * stops the launch and that the error reported is that of the lowest
 * program (x fastest, then y, then z), whatever the number of threads. */
#include "interp/internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool interp_fail(InterpProg *p, const IrOp *op, const char *fmt, ...)
{
    if (!p->failed) {
        p->failed = true;
        p->err_span = op ? op->span : (Span){0};
        va_list ap;
        va_start(ap, fmt);
        sb_vprintf(&p->err, fmt, ap);
        va_end(ap);
    }
    return false;
}

void interp_format_index(char *buf, size_t n, Type t, int64_t flat)
{
    int64_t idx[TK_MAX_RANK] = {0};
    for (int d = t.rank - 1; d >= 0; d--) {
        idx[d] = t.shape[d] ? flat % t.shape[d] : 0;
        flat = t.shape[d] ? flat / t.shape[d] : 0;
    }
    size_t len = 0;
    len += (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < t.rank && len < n; d++)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (len < n)
        snprintf(buf + len, n - len, ")");
}

/* ---- planning --------------------------------------------------------------------- */

/* A value's bytes in the workspace, rounded to 16; false when they do not
 * fit in size_t (IR not from sema may carry any shape). */
static bool value_size(const IrValue *v, size_t *out)
{
    int64_t n = type_numel(v->type);
    size_t b;
    if (n < 0 || !size_mul_ok((size_t)n, interp_elsize(v->type.dt), &b) || !size_add_ok(b, 15, &b))
        return false;
    *out = b & ~(size_t)15;
    return true;
}

/* Only for values the plan has already sized. */
static size_t value_bytes(const IrValue *v)
{
    size_t b = 0;
    value_size(v, &b);
    return b;
}

typedef struct Plan {
    InterpLaunch *L;
    size_t max_value;
    bool effects; /* atomics or prints: programs must run in order */
    bool ok;
    bool too_big; /* some size does not fit in size_t */
} Plan;

static void plan_value(Plan *pl, const IrValue *v)
{
    if (!v || v->id < 0 || v->id >= pl->L->f->next_id) {
        pl->ok = false;
        return;
    }
    size_t b = 0;
    pl->L->offset[v->id] = pl->L->ws_bytes;
    if (!value_size(v, &b) || !size_add_ok(pl->L->ws_bytes, b, &pl->L->ws_bytes))
        pl->too_big = true;
    if (b > pl->max_value)
        pl->max_value = b;
}

/* The bytes of a parallel copy of vs, at least *most so far. */
static void values_bytes(Plan *pl, IrValue *const *vs, int n, size_t *most)
{
    size_t s = 0, b = 0;
    for (int i = 0; i < n; i++)
        if (vs[i] && (!value_size(vs[i], &b) || !size_add_ok(s, b, &s)))
            pl->too_big = true;
    if (s > *most)
        *most = s;
}

static void plan_block(Plan *pl, const IrBlock *b)
{
    for (int i = 0; i < b->nargs; i++)
        plan_value(pl, b->args[i]);
    for (const IrOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nres; i++)
            plan_value(pl, op->results[i]);
        if (op->kind == IR_ATOMIC_RMW || op->kind == IR_ATOMIC_CAS || op->kind == IR_PRINT)
            pl->effects = true;
        values_bytes(pl, op->operands, op->nops, &pl->L->scratch_bytes);
        for (int r = 0; r < op->nregions; r++) {
            values_bytes(pl, op->regions[r]->args, op->regions[r]->nargs, &pl->L->scratch_bytes);
            plan_block(pl, op->regions[r]);
        }
    }
}

/* One worker's workspace: values, scratch for parallel copies, and the
 * working arrays of reductions and dot (two doubles per element of the
 * largest value). False when that does not fit in size_t. */
static bool plan_sizes(Plan *pl, size_t *per_worker)
{
    InterpLaunch *L = pl->L;
    size_t tmp;
    return !pl->too_big && size_mul_ok(pl->max_value, 4, &tmp) &&
        size_add_ok(tmp, 64, &L->tmp_bytes) &&
        size_add_ok(L->ws_bytes, L->scratch_bytes, per_worker) &&
        size_add_ok(*per_worker, L->tmp_bytes, per_worker);
}

/* ---- execution ---------------------------------------------------------------------- */

/* Moves values as one parallel copy (a loop may yield its arguments swapped). */
static void move_values(InterpProg *p, IrValue *const *dst, IrValue *const *src, int n)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t b = value_bytes(src[i]);
        memcpy(p->scratch + off, interp_slot(p, src[i]), b);
        off += b;
    }
    off = 0;
    for (int i = 0; i < n; i++) {
        size_t b = value_bytes(src[i]);
        memcpy(interp_slot(p, dst[i]), p->scratch + off, b);
        off += b;
    }
}

static int64_t scalar_int(InterpProg *p, const IrValue *v)
{
    return ((const int64_t *)interp_slot(p, v))[0];
}

/* ---- the step budget ------------------------------------------------------------------- */

/* Each worker counts its steps and adds them to the launch's shared count
 * once every STEP_CHUNK steps, or as soon as the total it last saw plus
 * its own would pass the budget. A launch never stops before it has run
 * more than max_steps steps in all (exactly then with one thread, at most
 * STEP_CHUNK per other thread later). */
enum { STEP_CHUNK = 4096 };

static bool take_step(InterpProg *p)
{
    uint64_t max = p->L->max_steps;
    p->pending++;
    if (p->pending < STEP_CHUNK && p->seen + p->pending <= max)
        return true;
    p->seen = atomic_fetch_add(p->L->steps_used, p->pending) + p->pending;
    p->pending = 0;
    return p->seen <= max;
}

/* Stops the program at `op` (a loop, or the kernel for a program start). */
static bool over_budget(InterpProg *p, const IrOp *op, Span at, const char *where)
{
    if (!p->failed) {
        interp_fail(p, op,
                    "kernel '%s', program (%u, %u, %u): %s ran past the interpreter's "
                    "budget of %llu steps for one launch (a step is a program or a loop "
                    "iteration); an endless loop? (raise the budget with TK_INTERP_MAX_STEPS)",
                    p->L->f->name, p->pid[0], p->pid[1], p->pid[2], where,
                    (unsigned long long)p->L->max_steps);
        p->err_span = at;
        p->over_budget = true;
    }
    return false;
}

static bool loop_step(InterpProg *p, const IrOp *op)
{
    return take_step(p) || over_budget(p, op, op->span, "the loop");
}

static bool exec_for(InterpProg *p, const IrOp *op)
{
    const IrBlock *b = op->nregions > 0 ? op->regions[0] : NULL;
    int n = op->nops - 3;
    if (!b || n < 0 || b->nargs != n + 1 || op->nres != n)
        return interp_fail(p, op, "internal error: malformed for loop");
    int64_t lb = scalar_int(p, op->operands[0]), ub = scalar_int(p, op->operands[1]);
    int64_t step = scalar_int(p, op->operands[2]);
    if (step == 0)
        return interp_fail(p, op, "for loop with step 0 in kernel '%s', program (%u, %u, %u)",
                           p->L->f->name, p->pid[0], p->pid[1], p->pid[2]);
    move_values(p, b->args + 1, op->operands + 3, n);
    DType ivt = b->args[0]->type.dt;
    /* the next value past the end of int64 is past ub too: the loop is over
     * (an i64 loop up to 2**63 - 1 overflowed here) */
    for (int64_t iv = lb; step > 0 ? iv < ub : iv > ub;) {
        if (!loop_step(p, op))
            return false;
        *(int64_t *)interp_slot(p, b->args[0]) = interp_wrap(ivt, iv);
        const IrOp *t = interp_exec_block(p, b);
        if (!t)
            return false;
        if (t->nops != n)
            return interp_fail(p, op, "internal error: for body yields %d values, expected %d",
                               t->nops, n);
        move_values(p, b->args + 1, t->operands, n);
        if (__builtin_add_overflow(iv, step, &iv))
            break;
    }
    move_values(p, op->results, b->args + 1, n);
    return true;
}

static bool exec_while(InterpProg *p, const IrOp *op)
{
    if (op->nregions != 2 || op->regions[0]->nargs != op->nops)
        return interp_fail(p, op, "internal error: malformed while loop");
    const IrBlock *before = op->regions[0], *after = op->regions[1];
    move_values(p, before->args, op->operands, op->nops);
    for (;;) {
        if (!loop_step(p, op))
            return false;
        const IrOp *c = interp_exec_block(p, before);
        if (!c)
            return false;
        if (c->kind != IR_CONDITION || c->nops != op->nres + 1 || after->nargs != op->nres)
            return interp_fail(p, op, "internal error: malformed while condition");
        if (!scalar_int(p, c->operands[0])) {
            move_values(p, op->results, c->operands + 1, op->nres);
            return true;
        }
        move_values(p, after->args, c->operands + 1, op->nres);
        const IrOp *y = interp_exec_block(p, after);
        if (!y)
            return false;
        if (y->nops != before->nargs)
            return interp_fail(p, op, "internal error: while body yields %d values", y->nops);
        move_values(p, before->args, y->operands, y->nops);
    }
}

static bool exec_if(InterpProg *p, const IrOp *op)
{
    bool cond = scalar_int(p, op->operands[0]) != 0;
    const IrBlock *b = cond ? (op->nregions > 0 ? op->regions[0] : NULL)
                            : (op->nregions > 1 ? op->regions[1] : NULL);
    if (!b)
        return op->nres == 0 || interp_fail(p, op, "internal error: if without a region");
    const IrOp *t = interp_exec_block(p, b);
    if (!t)
        return false;
    if (t->nops != op->nres)
        return interp_fail(p, op, "internal error: if region yields %d values, expected %d",
                           t->nops, op->nres);
    move_values(p, op->results, t->operands, op->nres);
    return true;
}

static bool exec_op(InterpProg *p, const IrOp *op)
{
    switch (op->kind) {
    case IR_CONST:
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS:
    case IR_ARANGE:
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_TRANS:
    case IR_JOIN:
    case IR_SPLIT:
    case IR_CAT:
    case IR_PARTNER:
    case IR_HINT:
    case IR_CONVERT_LAYOUT: return interp_shape_op(p, op);
    case IR_LOAD: return interp_load(p, op);
    case IR_STORE: return interp_store(p, op);
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: return interp_atomic(p, op);
    case IR_REDUCE: return interp_reduce(p, op);
    case IR_SCAN: return interp_scan(p, op);
    case IR_GATHER: return interp_gather(p, op);
    case IR_HISTOGRAM: return interp_histogram(p, op);
    case IR_DOT: return interp_dot(p, op);
    case IR_RAND: return interp_rand(p, op);
    case IR_FOR: return exec_for(p, op);
    case IR_WHILE: return exec_while(p, op);
    case IR_IF: return exec_if(p, op);
    case IR_PRINT: return interp_print(p, op);
    case IR_ASSERT: return interp_assert(p, op);
    case IR_YIELD:
    case IR_CONDITION:
    case IR_ASSUME:
    case IR_BARRIER: return true;
    case IR_GDC: return true; /* one grid at a time: nothing to wait for or release */
    case IR_INLINE_ASM:
        return interp_fail(p, op,
                           "kernel '%s' calls tl.inline_asm_elementwise, whose PTX the "
                           "interpreter cannot run (run it on a GPU)",
                           p->L->f->name);
    default: return interp_elementwise(p, op);
    }
}

static const IrOp no_terminator; /* a region that simply ends */

const IrOp *interp_exec_block(InterpProg *p, const IrBlock *b)
{
    for (const IrOp *op = b->first; op; op = op->next) {
        if (!exec_op(p, op))
            return NULL;
        if (op->kind == IR_YIELD || op->kind == IR_CONDITION)
            return op;
    }
    return &no_terminator;
}

/* ---- the grid --------------------------------------------------------------------------- */

typedef struct Grid {
    const InterpLaunch *L;
    long total;
    atomic_long next;
    atomic_long stop; /* programs at or past this index are not started */
} Grid;

typedef struct Worker {
    Grid *g;
    InterpProg p;
    long fail_at; /* program index of the error, or -1 */
    pthread_t thread;
} Worker;

static void set_params(InterpProg *p)
{
    const IrFunc *f = p->L->f;
    for (int i = 0; i < f->nparams && i < f->body->nargs; i++) {
        const IrValue *v = f->body->args[i];
        const InterpArg *a = &p->L->args[i];
        void *slot = interp_slot(p, v);
        DType dt = v->type.dt;
        if (dt == DT_PTR)
            *(int64_t *)slot = (int64_t)(uintptr_t)a->p;
        else if (dtype_is_float(dt))
            interp_set_double(dt, slot, 0, a->f);
        else
            *(int64_t *)slot = dt == DT_I1 ? a->i != 0 : interp_wrap(dt, a->i);
    }
}

static void *worker_run(void *arg)
{
    Worker *w = arg;
    Grid *g = w->g;
    const unsigned *grid = g->L->grid;
    for (;;) {
        long i = atomic_fetch_add(&g->next, 1);
        if (i >= g->total || i >= atomic_load(&g->stop))
            break;
        w->p.pid[0] = (unsigned)(i % grid[0]);
        w->p.pid[1] = (unsigned)((i / grid[0]) % grid[1]);
        w->p.pid[2] = (unsigned)(i / ((long)grid[0] * grid[1]));
        bool ok = take_step(&w->p) ? interp_exec_block(&w->p, g->L->f->body) != NULL
                                   : over_budget(&w->p, NULL, g->L->f->span, "the launch");
        if (!ok) {
            w->fail_at = i;
            long cur = atomic_load(&g->stop);
            while (i < cur && !atomic_compare_exchange_weak(&g->stop, &cur, i))
                ;
            break;
        }
    }
    return NULL;
}

static int cmp_buf(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const InterpBuffer *)a)->base;
    uintptr_t y = (uintptr_t)((const InterpBuffer *)b)->base;
    return x < y ? -1 : x > y;
}

static bool worker_init(Worker *w, Grid *g)
{
    const InterpLaunch *L = g->L;
    memset(w, 0, sizeof *w);
    w->g = g;
    w->fail_at = -1;
    w->p.L = L;
    sb_init(&w->p.err);
    w->p.ws = tk_xalloc(L->ws_bytes + L->scratch_bytes + L->tmp_bytes);
    if (!w->p.ws)
        return false;
    memset(w->p.ws, 0, L->ws_bytes);
    w->p.scratch = w->p.ws + L->ws_bytes;
    w->p.tmp = w->p.scratch + L->scratch_bytes;
    set_params(&w->p);
    return true;
}

/* Runs the grid on nthreads workers; returns the failed worker, if any. */
static Worker *run_grid(Grid *g, Worker *ws, int nthreads, bool *oom)
{
    int started = 0;
    for (int t = 0; t < nthreads; t++) {
        if (!worker_init(&ws[t], g)) {
            *oom = true;
            break;
        }
        started++;
    }
    if (!*oom) {
        int spawned = 1;
        for (int t = 1; t < started; t++, spawned++)
            if (pthread_create(&ws[t].thread, NULL, worker_run, &ws[t]) != 0)
                break;
        worker_run(&ws[0]);
        for (int t = 1; t < spawned; t++)
            pthread_join(ws[t].thread, NULL);
    }
    Worker *bad = NULL;
    for (int t = 0; t < started; t++)
        if (ws[t].fail_at >= 0 && (!bad || ws[t].fail_at < bad->fail_at))
            bad = &ws[t];
    return bad;
}

static int pick_threads(int threads, bool effects, long total)
{
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > 64)
        threads = 64;
    if (effects || total < 2)
        return 1;
    return threads > total ? (int)total : threads;
}

/* Unnamed buffers take the name of the first pointer argument that points
 * into them, so messages say 'x_ptr' rather than '#2'. */
static void name_buffers(InterpLaunch *L)
{
    const IrFunc *f = L->f;
    for (int i = 0; i < f->nparams; i++) {
        if (f->params[i].type.dt != DT_PTR || !f->params[i].name)
            continue;
        uintptr_t a = (uintptr_t)L->args[i].p;
        for (int b = 0; b < L->nbufs; b++) {
            uintptr_t base = (uintptr_t)L->bufs[b].base;
            if (!L->bufs[b].name && a >= base && a - base < L->bufs[b].bytes)
                L->bufs[b].name = f->params[i].name;
        }
    }
}

/* The grid's program count, or false with an error: an empty grid, more
 * programs than a long can index, or more than the step budget allows. */
static bool count_programs(const IrFunc *f, const unsigned grid[3], uint64_t max_steps, long *total,
                           Diag *d)
{
    if (!grid[0] || !grid[1] || !grid[2]) {
        diag_plain(d, DIAG_ERROR, "kernel '%s': the grid (%u, %u, %u) has no programs", f->name,
                   grid[0], grid[1], grid[2]);
        return false;
    }
    uint64_t n;
    if (__builtin_mul_overflow((uint64_t)grid[0], (uint64_t)grid[1], &n) ||
        __builtin_mul_overflow(n, (uint64_t)grid[2], &n) || n > (uint64_t)LONG_MAX) {
        diag_plain(d, DIAG_ERROR,
                   "kernel '%s': the grid (%u, %u, %u) has more programs than "
                   "the interpreter can count",
                   f->name, grid[0], grid[1], grid[2]);
        return false;
    }
    if (n > max_steps) {
        diag_plain(d, DIAG_ERROR,
                   "kernel '%s': the grid (%u, %u, %u) has %llu programs, more "
                   "than the interpreter's budget of %llu steps for one launch (each program "
                   "is a step; raise the budget with TK_INTERP_MAX_STEPS)",
                   f->name, grid[0], grid[1], grid[2], (unsigned long long)n,
                   (unsigned long long)max_steps);
        return false;
    }
    *total = (long)n;
    return true;
}

/* Reports the lowest failing program's error; a broken IR invariant is the
 * compiler's fault, not the kernel's. */
static InterpResult report(const Worker *bad, Diag *d)
{
    const char *msg = bad->p.err.data ? bad->p.err.data : "error";
    static const char internal[] = "internal error: ";
    bool ours = !strncmp(msg, internal, sizeof internal - 1);
    /* an op inlined from a helper carries the helper's line and column:
     * they are read in the helper's file, which may be another one */
    const IrFunc *f = bad->p.L->f;
    Span at = bad->p.err_span;
    const Source *kernel_src = d->src;
    if (at.scope > 0 && at.scope < f->nscopes && f->scopes[at.scope].src)
        d->src = f->scopes[at.scope].src;
    diag_report(d, ours ? DIAG_INTERNAL : DIAG_ERROR, at, "%s",
                ours ? msg + sizeof internal - 1 : msg);
    d->src = kernel_src;
    return bad->p.over_budget ? INTERP_OVER_BUDGET : INTERP_FAULT;
}

/* The host's memory in bytes (SIZE_MAX when unknown): workspaces larger
 * than this are refused rather than handed to an allocator that may abort. */
static size_t host_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t n;
    return pages > 0 && page > 0 && size_mul_ok((size_t)pages, (size_t)page, &n) ? n : SIZE_MAX;
}

/* Plans the workspace and runs the programs on worker threads. */
static InterpResult run_launch(InterpLaunch *L, long total, int threads, Diag *d)
{
    const IrFunc *f = L->f;
    Plan pl = {.L = L, .ok = true};
    plan_block(&pl, f->body);
    if (!pl.ok) {
        diag_plain(d, DIAG_INTERNAL, "kernel '%s': IR value ids are not dense", f->name);
        return INTERP_FAULT;
    }
    size_t per_worker = 0;
    if (!plan_sizes(&pl, &per_worker) || per_worker > host_bytes()) {
        diag_plain(d, DIAG_ERROR,
                   "kernel '%s' needs more interpreter workspace than this "
                   "host has (its values are too large)",
                   f->name);
        return INTERP_NO_MEMORY;
    }
    Grid g = {.L = L, .total = total};
    atomic_init(&g.next, 0);
    atomic_init(&g.stop, g.total);
    int nt = pick_threads(threads, pl.effects, g.total);
    Worker *ws = tk_xalloc(sizeof(Worker) * (size_t)nt);
    if (ws)
        memset(ws, 0, sizeof(Worker) * (size_t)nt);
    bool oom = false;
    Worker *bad = ws ? run_grid(&g, ws, nt, &oom) : NULL;
    InterpResult r = INTERP_OK;
    if (!ws || oom) {
        diag_plain(d, DIAG_ERROR,
                   "out of memory in the interpreter (kernel '%s' needs %zu bytes per thread)",
                   f->name, per_worker);
        r = INTERP_NO_MEMORY;
    } else if (bad) {
        r = report(bad, d);
    }
    for (int t = 0; ws && t < nt; t++) {
        tk_xfree(ws[t].p.ws);
        sb_free(&ws[t].p.err);
    }
    tk_xfree(ws);
    return r;
}

InterpResult interp_run(const IrFunc *f, const unsigned grid[3], const InterpArg *args,
                        const InterpMemory *mem, const InterpOptions *o, Diag *d)
{
    if (!f || !grid || (f->nparams && !args)) {
        diag_plain(d, DIAG_INTERNAL, "interp_launch: missing kernel, grid or arguments");
        return INTERP_FAULT;
    }
    _Atomic uint64_t used;
    atomic_init(&used, 0);
    InterpLaunch L = {.f = f,
                      .grid = {grid[0], grid[1], grid[2]},
                      .args = args,
                      .out = o ? o->out : NULL,
                      .steps_used = &used,
                      .max_steps = o && o->max_steps ? o->max_steps : INTERP_DEFAULT_MAX_STEPS};
    long total = 0;
    if (!count_programs(f, grid, L.max_steps, &total, d))
        return INTERP_BAD_GRID;
    int nbufs = mem ? mem->nbufs : 0;
    L.offset = tk_xalloc(sizeof(size_t) * (size_t)(f->next_id + 1));
    L.bufs = tk_xalloc(sizeof(InterpBuffer) * (size_t)(nbufs + 1));
    InterpResult r = INTERP_NO_MEMORY;
    if (!L.offset || !L.bufs) {
        diag_plain(d, DIAG_ERROR, "out of memory in the interpreter");
    } else {
        if (nbufs)
            memcpy(L.bufs, mem->bufs, sizeof(InterpBuffer) * (size_t)nbufs);
        qsort(L.bufs, (size_t)nbufs, sizeof(InterpBuffer), cmp_buf);
        L.nbufs = nbufs;
        name_buffers(&L);
        r = run_launch(&L, total, o ? o->threads : 0, d);
    }
    tk_xfree(L.offset);
    tk_xfree(L.bufs);
    return r;
}

bool interp_launch(const IrFunc *f, const unsigned grid[3], const InterpArg *args,
                   const InterpMemory *mem, int threads, Diag *d, StrBuf *out)
{
    InterpOptions o = {.threads = threads, .out = out};
    return interp_run(f, grid, args, mem, &o, d) == INTERP_OK;
}
