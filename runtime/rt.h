/* rt.h: the runtime's internal map (the CUDA driver itself is in cuda/cuda.h): the
 * JIT cache (keys, in-memory table, disk entries) and the API objects.
 * Only the runtime sources and the runtime unit tests include it. */
#ifndef TK_RT_H
#define TK_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuda/cuda.h"
#include "driver/driver.h"
#include "interp/interp.h"

/* ---- cache keys and the in-memory table (rt_cache.c) -------------------------- */

/* RT_MAX_PARAMS also bounds the items of a launch's tuples, all together */
enum { RT_MAX_PARAMS = 256, RT_KEY_MAX_WORDS = 5 * RT_MAX_PARAMS + 7, RT_MAX_TMAPS = IR_MAX_TMAPS };

/* The launch-dependent part of a key, in 64-bit words: one per runtime
 * argument (dtype, pointer flag, specialisation bits; a tuple: its item
 * count, then its items' words, two for a constexpr item), two per
 * constexpr (kind, value bits or text hash), then num_warps and num_stages. */
typedef struct RtKey {
    int nwords;
    uint64_t hash; /* of the words, for the table */
    uint64_t w[RT_KEY_MAX_WORDS];
} RtKey;

void rt_key_finish(RtKey *k);
bool rt_key_eq(const RtKey *a, const RtKey *b);

/* Everything that identifies a compiled kernel across processes. */
typedef struct RtKeyParts {
    uint64_t source_hash[2]; /* two independent hashes of the source text */
    const char *kernel;
    const char *arch;
    const char *version; /* tk_version() */
    const RtKey *launch;
    /* with line tables: the source's file name, which the PTX names (the
     * hashes cover only its text); NULL without them */
    const char *lines;
} RtKeyParts;

/* The disk identity: a 128-bit digest (file name) plus the serialised
 * parts, stored in the entry and compared on load. */
typedef struct RtDigest {
    uint64_t lo, hi;
} RtDigest;
RtDigest rt_key_digest(const RtKeyParts *p);
/* Serialises the parts (for the entry's identity check); heap, tk_xfree. */
unsigned char *rt_key_blob(const RtKeyParts *p, size_t *len);
void rt_hash_text(const char *text, size_t len, uint64_t out[2]);
uint64_t rt_hash64(uint64_t h, const void *p, size_t n);

/* Per-kernel table of compiled variants: a last-hit fast path plus an
 * open-addressing table under a rwlock. Values are opaque pointers. */
typedef struct RtTable {
    pthread_rwlock_t lock;
    struct RtSlot {
        RtKey *key;
        void *value;
    } *slots;
    int cap, count;
    void *_Atomic last; /* the variant of the last hit */
} RtTable;

void rt_table_init(RtTable *t);
void rt_table_free(RtTable *t, void (*free_value)(void *));
/* The stored value for key, or NULL. key_of(value) gives a value's key so
 * the fast path can compare without taking the lock. */
void *rt_table_find(RtTable *t, const RtKey *key, const RtKey *(*key_of)(void *));
/* Inserts unless present; returns the value now stored (an earlier one wins). */
void *rt_table_insert(RtTable *t, const RtKey *key, void *value);

/* Counters for tests and benchmarks. */
typedef struct RtStats {
    long compiles, memory_hits, disk_hits, disk_stores, disk_rejects;
    long tunings, tune_disk_hits;   /* configs timed for a new key; choices read from disk */
    long ptxas_builds, cubin_loads; /* machine code from ptxas; cubins loaded from disk */
} RtStats;
void rt_stats_get(RtStats *out);
void rt_stats_add(long *counter);
extern RtStats rt_stats;

/* ---- the disk cache (rt_disk.c) ------------------------------------------------- */

/* One cached kernel: its identity blob, metadata, PTX and cubin (may be empty). */
typedef struct RtDiskEntry {
    const unsigned char *key;
    size_t key_len;
    const unsigned char *meta;
    size_t meta_len;
    const char *ptx;
    size_t ptx_len;
    const unsigned char *cubin;
    size_t cubin_len;
} RtDiskEntry;

/* The cache folder from $TK_CACHE_DIR or ~/.cache/tk, created 0700 if missing;
 * NULL (after one warning) when it cannot be written, is not this user's or
 * others may write it, or TK_CACHE_DISABLE=1. */
const char *rt_disk_dir(void);
/* Writes atomically (temp file + rename). false (with a warning once) on failure. */
bool rt_disk_store(const char *dir, RtDigest d, const RtDiskEntry *e);
/* Reads and checks an entry; *buf owns the memory the entry points into
 * (tk_xfree). false when absent, foreign, truncated or corrupt, or when it is
 * not a regular file of this user's that no one else may write (one warning). */
bool rt_disk_load(const char *dir, RtDigest d, const unsigned char *key, size_t key_len,
                  RtDiskEntry *e, void **buf);
/* The entry's path (for tests). */
void rt_disk_path(const char *dir, RtDigest d, char *out, size_t cap);
/* Forgets the once-only state (cache folder, warnings); for tests. */
void rt_disk_reset(void);
/* What the cache keys name as the compiler: tk's version and the size and
 * modification time of the file this code was loaded from (libtk.so or the
 * program it is linked into), so that a rebuilt or upgraded tk never takes
 * kernels another build compiled; the version alone when that file cannot
 * be found. */
const char *rt_build_identity(void);

/* ---- API objects ---------------------------------------------------------------------- */

typedef struct RtBuffer {
    unsigned char *base; /* what tk_alloc returned */
    size_t bytes;
    unsigned char *block; /* the host allocation: red zones around base (rt_context.c) */
    int id;
} RtBuffer;

struct tk_context {
    const struct RtBackend *be; /* what it runs on (rt_backend.h) */
    int device;
    CUdevice dev;
    CUcontext cu;
    bool owns_primary;
    tk_device_props props;
    char arch[16];
    int interp_threads;
    uint64_t interp_max_steps;       /* programs plus loop iterations per launch */
    const char *_Atomic last_kernel; /* named when a later call sees a fault */
    const char *const *search_paths; /* for modules' package imports (the caller's array) */
    pthread_mutex_t lock;            /* buffers */
    RtBuffer *bufs;                  /* interpret mode: live host buffers */
    int nbufs, capbufs, next_buf_id;
};

struct tk_module {
    tk_context *ctx;
    pthread_mutex_t lock;        /* kernels, comp's arena and diag, the builds in flight */
    pthread_cond_t built;        /* signalled when a build in flight ends */
    struct RtBuilding *building; /* builds in flight (rt_module.c) */
    Compilation comp;            /* parsed once; builds only read it */
    uint64_t source_hash[2];
    const char **names;
    int nnames;
    tk_kernel **kernels; /* one per name, made on first use */
};

/* A tensor map a TMA kernel takes after its parameters (IrTmap as the
 * metadata stores it): parameter indices of the compiled kernel. */
typedef struct RtTmapMeta {
    int32_t device;       /* 1: the kernel writes this map into the scratch (IrTmap.device);
                             the launcher builds none and reads nothing below but the box */
    int32_t base, stride; /* pointer parameter; dim 1's stride (elements), -1: stride_const */
    int64_t stride_const; /* dim 1's stride where no parameter gives it */
    int32_t ext_param[2][IR_TMA_FACTORS]; /* extents of dims 0 and 1: the product of these
                                             parameters (-1: none; [0] -2: unbounded) */
    int64_t ext_mul[2];                   /* its coefficient */
    int64_t ext_add[2];                   /* added to it */
    int32_t dt;                           /* DType of the elements */
    int32_t box[2], swizzle;              /* the box and swizzle (bytes) of one copy */
} RtTmapMeta;

/* The last tensor maps a variant built, keyed by the argument values they
 * came from (rt_tma.c). */
enum { RT_TMA_CACHE = 8, RT_TMA_KEY = (2 + 2 * IR_TMA_FACTORS) * RT_MAX_TMAPS };
typedef struct RtTmaEntry {
    int nkey; /* 0: empty */
    uint64_t key[RT_TMA_KEY];
    unsigned char maps[RT_MAX_TMAPS][128];
} RtTmaEntry;

/* One compiled variant of a kernel (an entry of its RtTable). */
typedef struct RtVariant {
    RtKey key;
    int nparams;                       /* the compiled kernel's runtime parameters */
    int param_of[RT_MAX_PARAMS];       /* index among the launch's runtime args */
    uint8_t param_dt[RT_MAX_PARAMS];   /* DType of each compiled parameter */
    uint8_t param_part[RT_MAX_PARAMS]; /* which part of a descriptor argument (0: all) */
    int num_warps;
    int cluster;                      /* CTAs per cluster at launch (1: none) */
    int threads;                      /* per program at launch (a producer warpgroup adds 128) */
    int dyn_shared;                   /* dynamic shared bytes to pass at launch */
    char smem_plan[CG_SMEM_PLAN_LEN]; /* what takes it (CgKernel's), for a refusal */
    int ntmaps;                       /* tensor maps passed after the parameters */
    RtTmapMeta tmaps[RT_MAX_TMAPS];
    pthread_mutex_t tma_lock; /* tma_cache */
    RtTmaEntry tma_cache[RT_TMA_CACHE];
    int tma_next; /* the entry a miss replaces */
    CUmodule mod;
    CUfunction fn;
    Arena ir_arena; /* interpret mode: holds ir */
    IrFunc *ir;
    tk_kernel_info info;
} RtVariant;

struct tk_kernel {
    tk_module *mod;
    const char *name;
    KernelSig sig;
    int nruntime;                   /* runtime (non-constexpr) parameters */
    int runtime_idx[RT_MAX_PARAMS]; /* i-th runtime param -> sig index */
    int const_hint[RT_MAX_PARAMS];  /* sig index the c-th constexpr argument named last time */
    RtTable table;
    struct RtTune *_Atomic tune; /* configs and choices of an autotuned kernel, or NULL */
    /* bit j % 64 of word j / 64: runtime param j is not specialised (rt_nospec.c) */
    _Atomic uint64_t no_spec[RT_MAX_PARAMS / 64];
};

/* ---- internals shared between files ----------------------------------------------- */

/* Makes ctx's CUDA context current on this thread (the CUDA backend). */
tk_status rt_ctx_enter(tk_context *ctx);
/* The bytes from p to the end of the buffer (tk_alloc's, or the driver's
 * allocation) that holds it. */
tk_status rt_buffer_extent(tk_context *ctx, const void *p, size_t *bytes);
/* Zeroes or copies device memory in stream order (at once when interpreting,
 * where a range not inside one buffer is TK_ERR_INVALID). */
tk_status rt_zero_async(tk_context *ctx, void *p, size_t bytes, tk_stream stream);
tk_status rt_copy_async(tk_context *ctx, void *dst, const void *src, size_t bytes,
                        tk_stream stream);
/* Looks up or compiles the variant for one launch; fills the packed
 * arguments. Defined in rt_module.c and used by rt_launch.c. */
typedef struct RtLaunchArgs {
    RtKey key;
    const tk_arg *values[RT_MAX_PARAMS]; /* per runtime param; NULL: given tk_none() */
    const tk_arg *consts[RT_MAX_PARAMS]; /* per sig param (constexprs, and runtime params
                                            given tk_none()) */
    int num_warps, num_stages;
    int num_ctas; /* 1, or 2: the key holds RT_KEY_CTAS2 at word ctas_word */
    int ctas_word;
    bool fp_fusion;    /* comp_fp_fusion of the launch's option; off: the key ends in
                       RT_KEY_NO_FUSION (before RT_KEY_NO_TMA) */
    bool debug;        /* runtime asserts kept (the option, else TRITON_DEBUG/TK_DEBUG); the
                       key then holds RT_KEY_DEBUG after the warps and stages */
    bool no_tma;       /* compile without TMA (no tensor map fits the arguments, or
                    TK_NO_TMA=1); the key then ends in RT_KEY_NO_TMA */
    tk_arg implied[3]; /* num_warps, num_stages, num_ctas bound to parameters of those
                          names the launch gave no value (rt_launch.c) */
    tk_arg declared[RT_MAX_PARAMS]; /* per runtime param: a scalar converted to the type its
                                       annotation declares (values[j] then points here) */
} RtLaunchArgs;
#define RT_KEY_NO_TMA    0x4e4f2d544d41ULL   /* "NO-TMA" */
#define RT_KEY_NO_FUSION 0x4e4f2d46555345ULL /* "NO-FUSE" */
#define RT_KEY_DEBUG     0x4445425547ULL     /* "DEBUG" */
#define RT_KEY_CTAS2     0x43544153322dULL   /* "CTAS2-" */
tk_status rt_variant_get(tk_kernel *k, const RtLaunchArgs *la, RtVariant **out);
/* The text half of a variant, which needs no GPU: metadata, PTX (with its
 * NUL) and the cubin when the disk entry has one. `buf` owns the memory. */
typedef struct RtJitMeta {
    uint32_t magic, nparams;
    int32_t num_warps, dyn_shared;
    int32_t threads; /* per program: num_warps * 32 plus the kernel's producer warps */
    int32_t cluster; /* CTAs per cluster (CgKernel's) */
    int32_t param_of[RT_MAX_PARAMS];
    uint8_t param_dt[RT_MAX_PARAMS];
    uint8_t param_part[RT_MAX_PARAMS]; /* RtVariant's */
    uint32_t ntmaps;
    RtTmapMeta tmaps[RT_MAX_TMAPS];
    char smem_plan[CG_SMEM_PLAN_LEN]; /* CgKernel's, NUL-terminated */
    char cluster_note[CG_NOTE_LEN];   /* CgKernel's, NUL-terminated */
} RtJitMeta;
typedef struct RtJitText {
    RtDigest digest;
    unsigned char *key_blob;
    size_t key_len;
    RtJitMeta meta;
    const char *ptx;
    size_t ptx_len;
    const unsigned char *cubin;
    size_t cubin_len;
    bool from_disk;
    double spec_ms, llvm_ms; /* time spent specialising and in LLVM */
    CgTimes llvm_steps;      /* the part of llvm_ms the target's steps took */
    void *buf;
} RtJitText;
/* Finds the PTX of one variant for `arch` on disk, or compiles it (and,
 * when store is set, writes it to disk). Thread-safe. */
tk_status rt_jit_text(tk_kernel *k, const RtLaunchArgs *la, const char *arch, bool store,
                      RtJitText *out);
void rt_jit_text_free(RtJitText *t);
/* The specialisation of one runtime argument (type, divisibility, == 1). */
void rt_arg_spec(const tk_arg *a, ArgSpec *out);
/* A constexpr argument's value (kernel and param name it in errors); a
 * text (cv_has_text) is on the heap (tk_xfree). */
tk_status rt_const_value(const char *kernel, const char *param, const tk_arg *a, ConstValue *cv);
/* Constexpr key words: kind tag and the value's bits (or the text's hash). */
void rt_key_const(RtKey *key, const tk_arg *a);
/* Checks pointer or scalar a (runtime param j, or an item of it; `what`
 * names it) and gives its key word: dtype, kind and specialisation bits. */
tk_status rt_leaf_word(const tk_kernel *k, int j, const char *what, const tk_arg *a, bool no_spec,
                       uint64_t *word);
/* ---- tuple arguments (rt_tuple.c) ---- */
/* The list entries args[i] spans: 1, or a tuple with its items; -1 when a
 * tuple's items run past nargs or tuples nest more than 8 deep. */
int rt_arg_span(const tk_arg *args, int i, int nargs);
/* Checks tuple argument a (runtime param j, named param) and appends its
 * key words. */
tk_status rt_tuple_key(tk_kernel *k, int j, const char *param, const tk_arg *a, RtKey *key);
/* The specialisation of a checked tuple argument (or of one of its items). */
tk_status rt_tuple_spec(const tk_kernel *k, const tk_arg *a, bool no_spec, Arena *ar, ArgSpec *out);
/* The part (offset from its marker) of the leaf of tuple a that compiled
 * parameter `compiled` ("ptrs[1][0]") is, for parameter param; -1: none. */
int rt_tuple_part(const tk_arg *a, const char *param, const char *compiled);
/* Whether `part` names a piece of runtime argument a (a descriptor's part,
 * a tuple's pointer or scalar leaf): what a disk entry's metadata claims. */
bool rt_part_ok(const tk_arg *a, int part);
/* ---- tensor descriptor arguments (rt_desc.c) ---- */
/* The part of a descriptor argument that feeds a compiled parameter: 0 the
 * base, 1 + d shape dim d, RT_DESC_STRIDE + d stride dim d. */
enum { RT_DESC_STRIDE = 1 + TK_DESC_MAX_RANK, RT_DESC_PARTS = 1 + 2 * TK_DESC_MAX_RANK };
/* Checks descriptor argument a for runtime param j (named param) and gives
 * its key word: dtype, rank, block shape, the base's alignment. */
tk_status rt_desc_check(const tk_kernel *k, int j, const char *param, bool no_spec, const tk_arg *a,
                        uint64_t *word);
/* The specialisation of a checked descriptor argument. */
void rt_desc_spec(const tk_arg *a, ArgSpec *out);
/* The argument that feeds part `part` of a: a itself unless a descriptor
 * or a tuple; a descriptor's base, a shape or a stride built in *tmp; a
 * tuple's leaf `part` entries after it. */
const tk_arg *rt_part_arg(const tk_arg *a, int part, tk_arg *tmp);
/* The part of descriptor parameter `param` that compiled parameter
 * `compiled` is (param_shape<d>, param_stride<d>), or -1. */
int rt_desc_part(const char *param, const char *compiled);
/* The compiler's element type of a tk_dtype; DT_VOID when it has none. */
DType rt_dtype(tk_dtype t);
/* Whether runtime param j of k is left unspecialised (do_not_specialize). */
static inline bool rt_no_spec(tk_kernel *k, int j)
{
    if (k->sig.no_specialize && k->sig.no_specialize[k->runtime_idx[j]])
        return true; /* the source's @triton.jit(do_not_specialize=...) */
    return (atomic_load_explicit(&k->no_spec[j / 64], memory_order_relaxed) >> (j % 64)) & 1;
}
/* The argument list of API call fn, before anything else reads it:
 * TK_ERR_INVALID naming the argument for a negative count, NULL args with
 * a count, or a constexpr with no name or with neither value nor text. */
tk_status rt_check_args(const char *fn, const tk_arg *args, int nargs);
/* Checks launch arguments against the kernel and builds the key (rt_launch.c). */
tk_status rt_launch_args(tk_kernel *k, const tk_arg *args, int nargs, const tk_launch_options *opts,
                         RtLaunchArgs *la);
/* Compiles (or reads from disk and loads) one variant. Thread-safe: builds
 * of one module run in parallel (each with its own arena and Diag). Defined
 * in rt_jit.c. */
tk_status rt_jit_build(tk_kernel *k, const RtLaunchArgs *la, RtVariant **out);
/* Tests: called by each build before it starts, outside every lock. */
extern void (*rt_build_hook)(tk_kernel *k);
void rt_variant_free(void *v);
/* ---- TMA tensor maps (rt_tma.c) ---------------------------------------------------- */

/* What cuTensorMapEncodeTiled takes for one map. */
typedef struct RtTmaEncode {
    CUtensorMapDataType dt;
    void *base;
    cuuint64_t dim[2], stride[1];
    cuuint32_t box[2], elem_stride[2];
    CUtensorMapSwizzle swizzle;
} RtTmaEncode;
/* The encoding of map m for the kernel's parameter values (vals, by
 * compiled parameter: addresses, and integers as the kernel reads them);
 * false when they make no valid tensor map (a misaligned base or stride,
 * an extent out of 1 .. 2^32). Needs no GPU. */
bool rt_tma_plan(const RtTmapMeta *m, const int64_t *vals, int nvals, RtTmaEncode *out);
/* The variant's tensor maps (128 bytes each) for these parameter values:
 * copied from its cache, else encoded by the driver and cached. *ok false
 * (status TK_OK) when they cannot be made: launch the kernel without TMA. */
tk_status rt_tma_maps(RtVariant *v, const int64_t *vals, unsigned char (*out)[128], bool *ok);
/* Encodes one map (through the driver's cuTensorMapEncodeTiled, or
 * rt_tma_encode_hook when set); false when the driver refuses it. */
extern bool (*rt_tma_encode_hook)(const RtTmaEncode *e, unsigned char *map);

/* tk_launch without the autotuner (rt_launch.c). */
tk_status rt_launch_direct(tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs,
                           const tk_launch_options *opts);

/* ---- the autotuner (rt_tune.c, its settings in rt_tune_config.c) -------------------- */

/* reset_to_zero and restore_value: names, and the host's size callback. */
typedef struct RtTuneReset {
    char **zero; /* reset_to_zero: parameter names */
    int nzero;
    char **restore; /* restore_value */
    int nrestore;
    size_t (*bytes)(const char *name, const tk_arg *args, int nargs, void *user);
    void *user;
} RtTuneReset;

/* A tuned kernel's settings and choices (k->tune). */
typedef struct RtTune {
    pthread_mutex_t lock; /* one tuning at a time per kernel */
    tk_config *configs;   /* owned, with their defines and texts */
    int nconfigs;
    char **key;
    int nkey;
    tk_prune_fn prune;
    void *prune_user;
    tk_config_defines_fn config_defines; /* per-config constexprs (tk_tune_options) */
    void *config_defines_user;
    tk_config_hook_fn hook; /* host code around the runs (tk_tune_options) */
    void *hook_user;
    double warmup_ms, rep_ms;
    RtTuneReset reset; /* reset_to_zero and restore_value, names owned */
    uint64_t configs_hash;
    int noted;            /* the interpreter's note was printed */
    const char *python;   /* an autotune option tk does not run (KernelSig.tune_python) */
    bool config_hook;     /* KernelSig.tune_config_hook */
    _Atomic int launched; /* a tuned launch happened: settings are fixed */
    RtTable table;        /* key -> choice (rt_tune.c) */
} RtTune;

/* Makes the tuner of a kernel from its @triton.autotune configs (none: OK,
 * no tuner); rt_tune_config.c. */
tk_status rt_tune_init(tk_kernel *k);
void rt_tune_free(tk_kernel *k);
/* true when a launch goes through the tuner (the kernel has configs and the
 * launch names none of their constexprs). */
bool rt_tune_applies(const tk_kernel *k, const tk_arg *args, int nargs);
tk_status rt_tune_launch(tk_kernel *k, tk_grid_fn grid_fn, void *grid_user, tk_grid grid,
                         const tk_arg *args, int nargs, const tk_launch_options *opts);
/* Tests: when set, each config runs twice (with its resets) and this gives
 * its time (ms; negative: it failed) instead of tk_bench with the budget in
 * plan, on the interpreter too, so the tuner and its cache can be tested
 * without a GPU. */
extern double (*rt_tune_time_hook)(tk_kernel *k, int index, const tk_bench_options *plan);

/* ---- reset_to_zero and restore_value (rt_tune_reset.c) ------------------------------- */

typedef struct RtTuneBuf {
    const char *name;
    void *ptr;
    size_t bytes;
    void *saved; /* restore_value: a copy made before tuning */
    bool zero;   /* reset_to_zero */
} RtTuneBuf;

typedef struct RtTuneBufs {
    tk_context *ctx;
    tk_stream stream;
    RtTuneBuf *b;
    int n;
} RtTuneBufs;

/* Finds the named buffers among a launch's arguments (la from
 * rt_launch_args), measures them and copies the restore_value ones. */
tk_status rt_tune_bufs_begin(tk_kernel *k, const RtTuneReset *r, const RtLaunchArgs *la,
                             const tk_arg *args, int nargs, tk_stream stream, RtTuneBufs *out);
/* Before each timed run: zero the reset_to_zero buffers. */
tk_status rt_tune_bufs_before(RtTuneBufs *b);
/* After each timed run (failed or not): put the restore_value buffers back. */
tk_status rt_tune_bufs_after(RtTuneBufs *b);
/* After tuning: zero again when zero_again (for the launch that follows)
 * and free the copies. */
tk_status rt_tune_bufs_end(RtTuneBufs *b, bool zero_again);

#endif
