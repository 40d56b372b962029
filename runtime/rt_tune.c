/* rt_tune.c: the autotuner. A kernel with configs (@triton.autotune, or
 * tk_kernel_set_tuning; rt_tune_config.c keeps them) chooses one per tuning
 * key: the first launch for a key compiles every config that pruning keeps
 * in parallel threads, times each with tk_bench and keeps the fastest, in
 * memory and on disk (the JIT cache's entry format: atomic writes, checked
 * reads). Assumes a kernel's tuning settings are fixed before its first
 * tuned launch. Guarantees: one
 * tuning per key and process (others wait for it); a disk entry is used only
 * when its whole identity matches; the interpreter takes the first config
 * and says so; every failure comes back as a status. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_backend.h"
#include "rt_nvtx.h"

double (*rt_tune_time_hook)(tk_kernel *k, int index, const tk_bench_options *plan);

enum { TUNE_MAGIC = 0x544b5455, MAX_TUNE_ARGS = 2 * RT_MAX_PARAMS };

/* The timing budget when the kernel's tuning names none (milliseconds).
 * Triton's autotuner spends do_bench's 25 + 100 ms on every config, which
 * makes timing, not compiling, most of an autotuned kernel's first call.
 * Ranking configs asks for less: the median of the runs that fit in a few
 * milliseconds, each after an L2 flush (hundreds of runs for a kernel of
 * tens of microseconds). The first config timed warms the GPU's clocks for
 * all of them. A warmup or rep given by the source or the host is used as
 * given, per config, as Triton does. */
#define TUNE_FIRST_WARMUP_MS 10.0
#define TUNE_WARMUP_MS       1.0
#define TUNE_REP_MS          5.0

/* One choice for one key (an entry of RtTune.table). */
typedef struct TuneEntry {
    RtKey key;
    tk_tune_choice choice;
} TuneEntry;


/* What the disk entry holds besides the identity. */
typedef struct TuneRecord {
    uint32_t magic;
    int32_t index, nconfigs, reserved;
    double ms;
} TuneRecord;

/* ---- one config's launch ----------------------------------------------------------------- */

typedef struct ConfigLaunch {
    tk_kernel *k;
    const tk_config *cfg;
    const tk_arg *given; /* the launch's own arguments, as the hook sees them */
    int ngiven;
    bool hook_failed; /* the host's hook failed: the launch stops */
    tk_grid grid;
    tk_arg args[MAX_TUNE_ARGS];
    int nargs;
    tk_launch_options opts;
} ConfigLaunch;

/* The launch of config c: the arguments, the config's constexprs and the
 * host's per-config ones (config_defines), the settings and the grid. */
static tk_status config_launch(tk_kernel *k, const tk_config *c, tk_grid_fn grid_fn,
                               void *grid_user, tk_grid grid, const tk_arg *args, int nargs,
                               const tk_launch_options *opts, ConfigLaunch *out)
{
    if (nargs < 0 || (nargs > 0 && !args) || nargs + c->ndefines > MAX_TUNE_ARGS)
        return err_set(TK_ERR_INVALID, "kernel '%s': bad argument list", k->name);
    tk_define extra[RT_MAX_PARAMS];
    int nextra = 0, cap = MAX_TUNE_ARGS - nargs - c->ndefines;
    if (k->tune->config_defines) {
        nextra = k->tune->config_defines(c, args, nargs, extra,
                                         cap < RT_MAX_PARAMS ? cap : RT_MAX_PARAMS,
                                         k->tune->config_defines_user);
        if (nextra < 0 || nextra > cap || nextra > RT_MAX_PARAMS)
            return err_set(TK_ERR_LAUNCH, "kernel '%s': the config_defines callback failed",
                           k->name);
    }
    out->k = k;
    out->cfg = c;
    out->given = args;
    out->ngiven = nargs;
    out->hook_failed = false;
    memset(&out->opts, 0, sizeof out->opts);
    if (opts)
        out->opts = *opts;
    if (c->num_warps > 0)
        out->opts.num_warps = c->num_warps;
    if (c->num_stages > 0)
        out->opts.num_stages = c->num_stages;
    if (c->num_ctas > 0)
        out->opts.num_ctas = c->num_ctas;
    if (nargs)
        memcpy(out->args, args, sizeof *args * (size_t)nargs);
    for (int j = 0; j < c->ndefines; j++)
        out->args[nargs + j] = tk_const_text(c->defines[j].name, c->defines[j].value);
    for (int j = 0; j < nextra; j++) {
        if (!extra[j].name || !extra[j].value)
            return err_set(TK_ERR_LAUNCH,
                           "kernel '%s': the config_defines callback gave a define without a "
                           "name or value",
                           k->name);
        out->args[nargs + c->ndefines + j] = tk_const_text(extra[j].name, extra[j].value);
    }
    out->nargs = nargs + c->ndefines + nextra;
    out->grid = grid_fn ? grid_fn(c, args, nargs, grid_user) : grid;
    return TK_OK;
}

static tk_status run_config(void *user)
{
    ConfigLaunch *cl = user;
    return rt_launch_direct(cl->k, cl->grid, cl->args, cl->nargs, &cl->opts);
}

/* The host's hook for one stage of cl's runs (tk_config_hook_fn). */
static tk_status run_hook(ConfigLaunch *cl, int stage)
{
    RtTune *t = cl->k->tune;
    if (!t->hook || t->hook(cl->cfg, stage, cl->given, cl->ngiven, t->hook_user) == 0)
        return TK_OK;
    cl->hook_failed = true;
    return err_set(TK_ERR_LAUNCH, "kernel '%s': the host's hook around a config's run failed",
                   cl->k->name);
}

/* One timed run: reset_to_zero buffers zeroed before, restore_value
 * buffers put back after (also when the run failed), as Triton's hooks. */
typedef struct TimedRun {
    ConfigLaunch *launch;
    RtTuneBufs *bufs;
} TimedRun;

static tk_status run_timed(void *user)
{
    TimedRun *r = user;
    tk_status s = run_hook(r->launch, TK_HOOK_BEFORE_TIMED);
    if (s != TK_OK)
        return s;
    s = rt_tune_bufs_before(r->bufs);
    if (s == TK_OK)
        s = run_config(r->launch);
    tk_status hook = run_hook(r->launch, TK_HOOK_AFTER_TIMED);
    tk_status after = rt_tune_bufs_after(r->bufs);
    return s != TK_OK ? s : hook != TK_OK ? hook : after;
}

/* "BM=128, BN=256, num_warps=8" */
static void describe(const tk_config *c, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int j = 0; j < c->ndefines && at < cap; j++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s=%s", j ? ", " : "", c->defines[j].name,
                               c->defines[j].value);
    if (at < cap)
        at += (size_t)snprintf(out + at, cap - at, "%snum_warps=%d, num_stages=%d", at ? ", " : "",
                               c->num_warps ? c->num_warps : 4, c->num_stages ? c->num_stages : 3);
    if (at < cap && c->num_ctas > 1)
        snprintf(out + at, cap - at, ", num_ctas=%d", c->num_ctas);
}

/* ---- the tuning key ------------------------------------------------------------------------ */

static int param_index(const tk_kernel *k, const char *name)
{
    for (int p = 0; p < k->sig.nparams; p++)
        if (strcmp(k->sig.param_names[p], name) == 0)
            return p;
    return -1;
}

/* The key: each key argument's value (a pointer's dtype only) and every
 * runtime argument's dtype and kind; `text` describes the key values. */
static tk_status tune_key(tk_kernel *k, const RtLaunchArgs *la, RtKey *key, char *text, size_t cap)
{
    const RtTune *t = k->tune;
    size_t at = 0;
    text[0] = 0;
    key->nwords = 0;
    for (int i = 0; i < t->nkey; i++) {
        int p = param_index(k, t->key[i]);
        if (p < 0)
            return err_set(TK_ERR_INVALID, "kernel '%s': autotune key '%s' is not a parameter",
                           k->name, t->key[i]);
        const tk_arg *a = la->consts[p];
        for (int j = 0; !k->sig.is_constexpr[p] && j < k->nruntime; j++)
            if (k->runtime_idx[j] == p)
                a = la->values[j];
        uint64_t w0 = UINT64_MAX, w1 = 0;
        if (a && a->text) {
            w0 = 3;
            w1 = rt_hash64(0x51ed270b27ULL, a->text, strlen(a->text));
        } else if (a) {
            w0 = (uint64_t)a->dtype | (uint64_t)a->kind << 8;
            if (a->kind != TK_ARG_PTR)
                memcpy(&w1, &a->v, sizeof w1);
        }
        key->w[key->nwords++] = w0;
        key->w[key->nwords++] = w1;
        if (at < cap) {
            if (a && a->text)
                at += (size_t)snprintf(text + at, cap - at, "%s%s=%s", i ? " " : "", t->key[i],
                                       a->text);
            else if (a && a->kind == TK_ARG_PTR)
                at += (size_t)snprintf(text + at, cap - at, "%s%s=ptr", i ? " " : "", t->key[i]);
            else if (a &&
                     (a->dtype == TK_F32 || a->dtype == TK_F64 || a->dtype == TK_F16 ||
                      a->dtype == TK_F8E4NV || a->dtype == TK_F8E5 || a->dtype == TK_F8E4B15 ||
                      a->dtype == TK_BF16))
                at += (size_t)snprintf(text + at, cap - at, "%s%s=%g", i ? " " : "", t->key[i],
                                       a->v.f);
            else
                at += (size_t)snprintf(text + at, cap - at, "%s%s=%" PRId64, i ? " " : "",
                                       t->key[i], a ? a->v.i : 0);
        }
    }
    for (int j = 0; j < k->nruntime && key->nwords < RT_KEY_MAX_WORDS; j++) {
        const tk_arg *a = la->values[j];
        key->w[key->nwords++] = a ? (uint64_t)a->dtype | (uint64_t)a->kind << 8 : UINT64_MAX;
    }
    rt_key_finish(key);
    return TK_OK;
}

/* ---- the disk entry ------------------------------------------------------------------------- */

/* The identity of a choice across processes, as text. */
static char *identity(tk_kernel *k, const RtKey *key, size_t *len)
{
    const RtTune *t = k->tune;
    tk_context *ctx = k->mod->ctx;
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb,
              "tk-tune 1\nkernel %s\nsource %016" PRIx64 "%016" PRIx64 "\nversion %s\n"
              "device %s %s\nconfigs %d %016" PRIx64 "\nkey",
              k->name, k->mod->source_hash[0], k->mod->source_hash[1], rt_build_identity(),
              ctx->be->device_label ? ctx->be->device_label : ctx->props.name, ctx->arch,
              t->nconfigs, t->configs_hash);
    for (int i = 0; i < key->nwords; i++)
        sb_printf(&sb, " %" PRIx64, key->w[i]);
    sb_printf(&sb, "\n");
    if (sb.oom) {
        sb_free(&sb);
        return NULL;
    }
    return sb_take(&sb, len);
}

static RtDigest identity_digest(const char *id, size_t len)
{
    uint64_t h[2];
    rt_hash_text(id, len, h);
    RtDigest d = {h[0] ^ 0x74756e65ULL, h[1]}; /* apart from the JIT entries' digests */
    return d;
}

static bool disk_load(tk_kernel *k, const char *id, size_t id_len, tk_tune_choice *c)
{
    const char *dir = rt_disk_dir();
    if (!dir)
        return false;
    RtDiskEntry e;
    void *buf = NULL;
    if (!rt_disk_load(dir, identity_digest(id, id_len), (const unsigned char *)id, id_len, &e,
                      &buf))
        return false;
    TuneRecord r;
    bool ok = e.meta_len == sizeof r;
    if (ok)
        memcpy(&r, e.meta, sizeof r);
    ok = ok && r.magic == TUNE_MAGIC && r.nconfigs == k->tune->nconfigs && r.index >= 0 &&
        r.index < r.nconfigs && r.ms >= 0;
    if (ok) {
        c->index = r.index;
        c->ms = r.ms;
        c->from_disk = 1;
    } else
        rt_stats_add(&rt_stats.disk_rejects);
    tk_xfree(buf);
    return ok;
}

/* The entry's text part names the config for a person reading the cache. */
static void disk_store(tk_kernel *k, const char *id, size_t id_len, const tk_tune_choice *c)
{
    const char *dir = rt_disk_dir();
    if (!dir)
        return;
    TuneRecord r = {TUNE_MAGIC, c->index, k->tune->nconfigs, 0, c->ms};
    char text[1024];
    describe(&k->tune->configs[c->index], text, sizeof text);
    RtDiskEntry e = {(const unsigned char *)id,
                     id_len,
                     (const unsigned char *)&r,
                     sizeof r,
                     text,
                     strlen(text) + 1,
                     NULL,
                     0};
    rt_disk_store(dir, identity_digest(id, id_len), &e); /* a failure warns; memory only */
}

/* ---- tuning --------------------------------------------------------------------------------- */

typedef struct CompileJob {
    ConfigLaunch launch;
    pthread_t thread;
    bool started;
    tk_status status;
    char message[512];
} CompileJob;

/* Compiles (or finds) one config's variant. Builds of different keys run
 * outside the module lock (rt_variant_get), so the configs compile in
 * parallel, each with its own arena, Diag and LLVM context. */
static void *compile_job(void *p)
{
    CompileJob *j = p;
    tk_kernel_info info;
    j->status =
        tk_kernel_prepare(j->launch.k, j->launch.args, j->launch.nargs, &j->launch.opts, &info);
    if (j->status != TK_OK)
        snprintf(j->message, sizeof j->message, "%s", tk_last_error());
    return NULL;
}

static void tune_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tune_print(const char *fmt, ...)
{
    if (!rt_env_on("TK_PRINT_AUTOTUNING"))
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("tk: autotune ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Starts a thread per kept config to compile it and waits for them all. */
static tk_status compile_configs(tk_kernel *k, const int *keep, tk_grid_fn grid_fn, void *grid_user,
                                 tk_grid grid, const tk_arg *args, int nargs,
                                 const tk_launch_options *opts, CompileJob *jobs)
{
    RtTune *t = k->tune;
    tk_status s = TK_OK;
    for (int i = 0; i < t->nconfigs && s == TK_OK; i++) {
        if (!keep[i])
            continue;
        s = config_launch(k, &t->configs[i], grid_fn, grid_user, grid, args, nargs, opts,
                          &jobs[i].launch);
        if (s == TK_OK && pthread_create(&jobs[i].thread, NULL, compile_job, &jobs[i]) == 0)
            jobs[i].started = true;
        else if (s == TK_OK)
            compile_job(&jobs[i]); /* no thread to be had: compile here */
    }
    for (int i = 0; i < t->nconfigs; i++)
        if (jobs[i].started)
            pthread_join(jobs[i].thread, NULL);
    return s;
}

/* The interpreter's choice, untimed: the first kept config that compiles,
 * since Triton's tuner drops a config that fails to (a static_assert on
 * its block sizes); every one failing is the first one's error. */
static tk_status first_compiling(tk_kernel *k, const int *keep, tk_grid_fn grid_fn, void *grid_user,
                                 tk_grid grid, const tk_arg *args, int nargs,
                                 const tk_launch_options *opts, int *out)
{
    RtTune *t = k->tune;
    CompileJob *j = tk_xalloc(sizeof *j);
    if (!j)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    char first_msg[512] = "";
    tk_status s = TK_OK, first_fail = TK_OK;
    *out = -1;
    for (int i = 0; i < t->nconfigs && *out < 0; i++) {
        if (!keep[i])
            continue;
        memset(j, 0, sizeof *j);
        s = config_launch(k, &t->configs[i], grid_fn, grid_user, grid, args, nargs, opts,
                          &j->launch);
        if (s != TK_OK)
            break;
        compile_job(j);
        if (j->status == TK_OK)
            *out = i;
        else if (j->status != TK_ERR_COMPILE) {
            s = err_set(j->status, "%s", j->message);
            break;
        } else if (first_fail == TK_OK) {
            first_fail = j->status;
            snprintf(first_msg, sizeof first_msg, "%s", j->message);
        }
    }
    tk_xfree(j);
    if (s == TK_OK && *out < 0)
        s = err_set(first_fail, "kernel '%s': every autotune config failed; the first: %s", k->name,
                    first_msg);
    return s;
}

/* The median time of one compiled config (ms), with tk_bench or the test
 * hook; the config's own failure is in j->status and j->message. */
static double time_config(tk_kernel *k, int i, CompileJob *j, RtTuneBufs *bufs, bool first)
{
    RtTune *t = k->tune;
    TimedRun run = {&j->launch, bufs};
    double warm = first ? TUNE_FIRST_WARMUP_MS : TUNE_WARMUP_MS;
    tk_bench_options bo = {.warmup_ms = t->warmup_ms > 0 ? t->warmup_ms : warm,
                           .rep_ms = t->rep_ms > 0 ? t->rep_ms : TUNE_REP_MS,
                           .stream = j->launch.opts.stream};
    double ms = -1;
    if (rt_tune_time_hook) {
        for (int rep = 0; rep < 2 && j->status == TK_OK; rep++)
            j->status = run_timed(&run);
        if (j->status == TK_OK)
            ms = rt_tune_time_hook(k, i, &bo);
    } else {
        tk_bench_result r;
        j->status = tk_bench(k->mod->ctx, run_timed, &run, &bo, &r);
        if (j->status == TK_OK)
            ms = r.median_ms;
    }
    if (j->status != TK_OK)
        snprintf(j->message, sizeof j->message, "%s", tk_last_error());
    return ms;
}

/* Compiles the kept configs in threads, then times each; the fastest wins.
 * A config that fails to compile or launch (too much shared memory, say) is
 * left out, as Triton does; if all fail, the first failure is returned. */
static tk_status tune_time(tk_kernel *k, const int *keep, tk_grid_fn grid_fn, void *grid_user,
                           tk_grid grid, const tk_arg *args, int nargs,
                           const tk_launch_options *opts, const char *key_text, tk_tune_choice *out)
{
    RtTune *t = k->tune;
    CompileJob *jobs = tk_xalloc(sizeof *jobs * (size_t)t->nconfigs);
    if (!jobs)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    memset(jobs, 0, sizeof *jobs * (size_t)t->nconfigs);
    tk_status first_fail = TK_OK;
    char first_msg[512] = "";
    double t0 = rt_now_ms();
    tk_status s = compile_configs(k, keep, grid_fn, grid_user, grid, args, nargs, opts, jobs);
    double t1 = rt_now_ms();
    int first = 0;
    while (first < t->nconfigs && !keep[first])
        first++;
    RtLaunchArgs la;
    RtTuneBufs bufs = {0};
    if (s == TK_OK)
        s = rt_launch_args(k, jobs[first].launch.args, jobs[first].launch.nargs,
                           &jobs[first].launch.opts, &la);
    if (s == TK_OK)
        s = rt_tune_bufs_begin(k, &t->reset, &la, args, nargs, jobs[first].launch.opts.stream,
                               &bufs);
    int best = -1;
    double best_ms = 0;
    for (int i = 0; i < t->nconfigs && s == TK_OK; i++) {
        if (!keep[i])
            continue;
        char desc[512];
        describe(&t->configs[i], desc, sizeof desc);
        double ms = jobs[i].status == TK_OK ? time_config(k, i, &jobs[i], &bufs, i == first) : -1;
        tk_status cs = jobs[i].status;
        /* a lost context, or host code that failed, ends the tuning */
        if (cs == TK_ERR_KERNEL_FAULT || cs == TK_ERR_NO_DEVICE || jobs[i].launch.hook_failed) {
            s = err_set(cs, "%s", jobs[i].message);
            break;
        }
        if (cs != TK_OK || ms < 0) {
            tune_print("%s: config %d {%s}: failed: %s", k->name, i, desc,
                       cs != TK_OK ? jobs[i].message : "the timer gave no time");
            if (first_fail == TK_OK) {
                first_fail = cs != TK_OK ? cs : TK_ERR_INTERNAL;
                snprintf(first_msg, sizeof first_msg, "%s", jobs[i].message);
            }
            continue;
        }
        tune_print("%s [%s]: config %d {%s}: %.4f ms", k->name, key_text, i, desc, ms);
        if (best < 0 || ms < best_ms) {
            best = i;
            best_ms = ms;
        }
    }
    tk_xfree(jobs);
    if (s != TK_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tk_last_error());
        rt_tune_bufs_end(&bufs, false); /* the first error is the one to report */
        return err_set(s, "%s", msg);
    }
    s = rt_tune_bufs_end(&bufs, best >= 0);
    if (s != TK_OK)
        return s;
    if (best < 0)
        return err_set(first_fail, "kernel '%s': every autotune config failed; the first: %s",
                       k->name, first_msg);
    rt_stats_add(&rt_stats.tunings);
    out->index = best;
    out->ms = best_ms;
    out->tuned_here = 1;
    tune_print("%s [%s]: chose config %d (%.4f ms); compiled in %.0f ms, timed in %.0f ms", k->name,
               key_text, best, best_ms, t1 - t0, rt_now_ms() - t1);
    return TK_OK;
}

/* Zeroes the reset_to_zero buffers once, for the launch of config `index`
 * that follows a choice made without timing (read from disk, or the
 * interpreter's first config): Triton's autotuner zeroes them after every
 * choice for a new key, so that launch starts from zero however the choice
 * was made. Timing zeroes them itself (tune_time). */
static tk_status reset_once(tk_kernel *k, int index, const tk_arg *args, int nargs,
                            const tk_launch_options *opts)
{
    RtTune *t = k->tune;
    if (t->reset.nzero == 0)
        return TK_OK;
    RtTuneReset zero = t->reset;
    zero.nrestore = 0; /* nothing runs, so nothing is to put back */
    ConfigLaunch *cl = tk_xalloc(sizeof *cl);
    if (!cl)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    RtLaunchArgs la;
    RtTuneBufs bufs;
    tk_status s =
        config_launch(k, &t->configs[index], NULL, NULL, (tk_grid){1, 1, 1}, args, nargs, opts, cl);
    if (s == TK_OK)
        s = rt_launch_args(k, cl->args, cl->nargs, &cl->opts, &la);
    if (s == TK_OK)
        s = rt_tune_bufs_begin(k, &zero, &la, args, nargs, cl->opts.stream, &bufs);
    if (s == TK_OK)
        s = rt_tune_bufs_end(&bufs, true);
    tk_xfree(cl);
    return s;
}

/* Finds or makes the choice for one launch. Caller holds t->lock. */
static tk_status tune_choose(tk_kernel *k, const RtKey *key, const char *key_text,
                             tk_grid_fn grid_fn, void *grid_user, tk_grid grid, const tk_arg *args,
                             int nargs, const tk_launch_options *opts, tk_tune_choice *c)
{
    RtTune *t = k->tune;
    tk_context *ctx = k->mod->ctx;
    memset(c, 0, sizeof *c);
    /* tuning without the decorator's Python would time and pick otherwise
     * than Triton; the host's own pruning stands for prune_configs_by. A
     * config's own pre_hook runs before each of its launches, one config's
     * too (a split-K GEMM's zeroing of its output): none runs without the
     * host's hook */
    bool pruning = t->python && !strcmp(t->python, "prune_configs_by");
    if (t->nconfigs == 1 && !(t->config_hook && !t->hook))
        return TK_OK; /* as Triton: one config is run, not pruned, timed or reset */
    if (t->python && !(pruning && t->prune) && !(!pruning && t->hook))
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': its @triton.autotune has %s, Python that tk does not run, "
                       "so tk cannot tune it: give the config's constexprs to launch it untuned "
                       "(-D, tk_const)%s",
                       k->name, t->python,
                       pruning ? ", or the pruning as tk_tune_options.prune" : "");
    bool timed = ctx->be->timed || rt_tune_time_hook;
    size_t id_len = 0;
    char *id = timed ? identity(k, key, &id_len) : NULL;
    if (timed && !id)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    tk_status s = TK_OK;
    if (id && disk_load(k, id, id_len, c)) {
        rt_stats_add(&rt_stats.tune_disk_hits);
        char desc[512];
        describe(&t->configs[c->index], desc, sizeof desc);
        tune_print("%s [%s]: config %d {%s} from the disk cache (%.4f ms when tuned); no tuning",
                   k->name, key_text, c->index, desc, c->ms);
        tk_xfree(id);
        return reset_once(k, c->index, args, nargs, opts);
    }
    int *keep = tk_xalloc(sizeof *keep * (size_t)t->nconfigs);
    if (!keep) {
        tk_xfree(id);
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    }
    for (int i = 0; i < t->nconfigs; i++)
        keep[i] = 1;
    if (t->prune)
        t->prune(t->configs, t->nconfigs, args, nargs, keep, t->prune_user);
    int first = -1;
    for (int i = 0; i < t->nconfigs && first < 0; i++)
        if (keep[i])
            first = i;
    if (first < 0)
        s = err_set(TK_ERR_INVALID, "kernel '%s': the prune callback kept no config", k->name);
    else if (!timed &&
             (s = first_compiling(k, keep, grid_fn, grid_user, grid, args, nargs, opts, &first)) !=
                 TK_OK) {
        /* no config compiles: s says why */
    } else if (!timed) {
        char desc[512];
        describe(&t->configs[first], desc, sizeof desc);
        if (!t->noted)
            fprintf(stderr,
                    "tk: note: kernel '%s' is autotuned; the interpreter does not time "
                    "configs and runs config %d {%s}\n",
                    k->name, first, desc);
        t->noted = 1;
        c->index = first;
        c->interpreted = 1;
        s = reset_once(k, first, args, nargs, opts);
    } else {
        s = tune_time(k, keep, grid_fn, grid_user, grid, args, nargs, opts, key_text, c);
        if (s == TK_OK)
            disk_store(k, id, id_len, c);
    }
    tk_xfree(keep);
    tk_xfree(id);
    return s;
}

static const RtKey *entry_key(void *e) { return &((TuneEntry *)e)->key; }

/* The choice for these arguments: from memory, else from disk or by tuning. */
static tk_status tune_lookup(tk_kernel *k, tk_grid_fn grid_fn, void *grid_user, tk_grid grid,
                             const tk_arg *args, int nargs, const tk_launch_options *opts,
                             bool find_only, TuneEntry **out, bool *chosen_now)
{
    RtTune *t = k->tune;
    if (t->nconfigs <= 0)
        return err_set(TK_ERR_INVALID, "kernel '%s' has no autotune configs", k->name);
    atomic_store(&t->launched, 1);
    /* the arguments with config 0 check the launch and map the runtime arguments */
    ConfigLaunch *cl = tk_xalloc(sizeof *cl);
    if (!cl)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    RtLaunchArgs la;
    RtKey key;
    char key_text[512];
    tk_status s = config_launch(k, &t->configs[0], NULL, NULL, grid, args, nargs, opts, cl);
    if (s == TK_OK)
        s = rt_launch_args(k, cl->args, cl->nargs, &cl->opts, &la);
    if (s == TK_OK)
        s = tune_key(k, &la, &key, key_text, sizeof key_text);
    tk_xfree(cl);
    if (s != TK_OK)
        return s;
    TuneEntry *e = rt_table_find(&t->table, &key, entry_key);
    if (e || find_only) {
        *out = e;
        return e ? TK_OK
                 : err_set(TK_ERR_NOT_FOUND,
                           "kernel '%s' has no tuned config for "
                           "[%s] yet: launch it first",
                           k->name, key_text);
    }
    pthread_mutex_lock(&t->lock);
    e = rt_table_find(&t->table, &key, entry_key); /* another thread tuned it meanwhile */
    if (!e) {
        TuneEntry *n = tk_xalloc(sizeof *n);
        if (!n)
            s = err_set(TK_ERR_NO_MEMORY, "out of memory");
        if (s == TK_OK) {
            n->key = key;
            rt_nvtx_push("autotune", k->name);
            s = tune_choose(k, &key, key_text, grid_fn, grid_user, grid, args, nargs, opts,
                            &n->choice);
            rt_nvtx_pop();
        }
        if (s == TK_OK) {
            n->choice.config = t->configs[n->choice.index];
            e = rt_table_insert(&t->table, &n->key, n);
            /* a choice among several configs, made here for a new key */
            if (chosen_now && e == n)
                *chosen_now = t->nconfigs > 1;
            if (!e)
                s = err_set(TK_ERR_NO_MEMORY, "out of memory");
        }
        if (e != n)
            tk_xfree(n);
    }
    pthread_mutex_unlock(&t->lock);
    *out = e;
    return s;
}

tk_status rt_tune_launch(tk_kernel *k, tk_grid_fn grid_fn, void *grid_user, tk_grid grid,
                         const tk_arg *args, int nargs, const tk_launch_options *opts)
{
    TuneEntry *e = NULL;
    bool chosen_now = false;
    tk_status s =
        tune_lookup(k, grid_fn, grid_user, grid, args, nargs, opts, false, &e, &chosen_now);
    if (s != TK_OK)
        return s;
    ConfigLaunch cl;
    s = config_launch(k, &k->tune->configs[e->choice.index], grid_fn, grid_user, grid, args, nargs,
                      opts, &cl);
    if (s == TK_OK && chosen_now)
        s = run_hook(&cl, TK_HOOK_CHOSEN);
    if (s == TK_OK)
        s = run_hook(&cl, TK_HOOK_BEFORE_LAUNCH);
    return s == TK_OK ? run_config(&cl) : s;
}

tk_status tk_launch_tuned(tk_kernel *k, tk_grid_fn grid, void *grid_user, const tk_arg *args,
                          int nargs, const tk_launch_options *opts)
{
    if (!k || !grid)
        return err_null_arg("tk_launch_tuned", !k ? "k" : "grid");
    tk_status s = rt_check_args("tk_launch_tuned", args, nargs);
    if (s != TK_OK)
        return s;
    if (!k->tune)
        return err_set(TK_ERR_INVALID,
                       "kernel '%s' has no autotune configs (add "
                       "@triton.autotune or call tk_kernel_set_tuning)",
                       k->name);
    rt_nvtx_push("launch", k->name);
    s = rt_tune_launch(k, grid, grid_user, (tk_grid){1, 1, 1}, args, nargs, opts);
    rt_nvtx_pop();
    return s;
}

tk_status tk_kernel_tuned_config(tk_kernel *k, const tk_arg *args, int nargs,
                                 const tk_launch_options *opts, tk_tune_choice *out)
{
    if (!k || !out)
        return err_null_arg("tk_kernel_tuned_config", !k ? "k" : "out");
    memset(out, 0, sizeof *out);
    tk_status s = rt_check_args("tk_kernel_tuned_config", args, nargs);
    if (s != TK_OK)
        return s;
    if (!k->tune)
        return err_set(TK_ERR_INVALID, "kernel '%s' has no autotune configs", k->name);
    TuneEntry *e = NULL;
    s = tune_lookup(k, NULL, NULL, (tk_grid){1, 1, 1}, args, nargs, opts, true, &e, NULL);
    if (s == TK_OK)
        *out = e->choice;
    return s;
}
