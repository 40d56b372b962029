/* tk.h: the public API of libtk.
 *
 * Two halves: the compiler (source text to tokens, AST, IR, LLVM IR, PTX),
 * which needs no GPU, and the runtime (contexts, buffers, modules, kernels,
 * launches with a JIT cache keyed on constexpr values and argument types).
 * Every function returns a tk_status; on failure tk_last_error() gives the
 * message (per thread). Nothing here exits or aborts the process. A NULL
 * pointer argument, a negative count, or a pointer that is NULL while its
 * count is not zero gives TK_ERR_INVALID with a message naming the argument
 * ("tk_compile: defines is NULL but ndefines is 3"), except where NULL is
 * documented as meaning a default; destroy and free functions ignore NULL.
 *
 * What the ABI promises, for as long as the SONAME (libtk.so.0) stays:
 *   - libtk exports exactly the functions declared in this header, each at
 *     symbol version TK_0; nothing else (no internal names, no LLVM, no C++
 *     runtime), so a host may define any name of its own.
 *   - No exported function is removed and none changes its signature; new
 *     ones are added. Enum values keep their numbers; new ones go at the end.
 *   - The option and result structs (tk_compile_options, tk_context_options,
 *     tk_launch_options, tk_kernel_info, tk_device_props) end in `reserved`
 *     space, so fields can be added without changing their size or offsets.
 *     Create option structs zeroed (`= {0}` or designated initialisers):
 *     reserved space must be zero, and a zero field means the default, today
 *     and in every later 0.x release.
 *   - Structs passed in arrays or by value (tk_define, tk_arg, tk_grid) keep
 *     their layout; a change there, or anything else above, takes a new
 *     SONAME, libtk.so.1.
 * tk_version() is the library that runs; TK_VERSION_* the header compiled
 * against. Every declaration of a function sits at the start of a line:
 * the build reads this header to write the list of exported symbols. */
#ifndef TK_TK_H
#define TK_TK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kept equal to project(tk VERSION ...) in CMakeLists.txt (configure checks). */
#define TK_VERSION_MAJOR  0
#define TK_VERSION_MINOR  1
#define TK_VERSION_PATCH  0
#define TK_VERSION_STRING "0.1.0"

/* libtk is built with hidden visibility; what is declared here is its API. */
#if defined(__GNUC__) && !defined(_WIN32)
#pragma GCC visibility push(default)
#endif

/* tk_status, tk_stream and tk_grid are defined the same way by the headers
 * `tkc --emit=header` writes, so a program may include those and this one. */
#ifndef TK_STATUS_DEFINED
#define TK_STATUS_DEFINED
typedef enum tk_status {
    TK_OK = 0,
    TK_ERR_COMPILE,      /* the source has errors; the message holds diagnostics */
    TK_ERR_INVALID,      /* a bad argument to an API call */
    TK_ERR_NOT_FOUND,    /* unknown kernel, missing file */
    TK_ERR_LAUNCH,       /* launch arguments do not match the kernel */
    TK_ERR_NO_DEVICE,    /* no libcuda, no GPU */
    TK_ERR_DRIVER,       /* a CUDA driver call failed */
    TK_ERR_KERNEL_FAULT, /* the kernel faulted (illegal address, assert) */
    TK_ERR_NO_MEMORY,
    TK_ERR_IO,
    TK_ERR_INTERNAL
} tk_status;
#endif

/* The message of the last failed call on this thread ("" if none). */
const char *tk_last_error(void);
const char *tk_status_name(tk_status s);
/* The version of the library that runs, "MAJOR.MINOR.PATCH". */
const char *tk_version(void);

/* ---- element types ------------------------------------------------------ */

typedef enum tk_dtype {
    TK_VOID = 0,
    TK_I1,
    TK_I8,
    TK_I16,
    TK_I32,
    TK_I64,
    TK_U8,
    TK_U16,
    TK_U32,
    TK_U64,
    TK_F16,
    TK_BF16,
    TK_F32,
    TK_F64,
    TK_F8E4NV, /* fp8 e4m3fn (tl.float8e4nv): bias 7, no infinities, max 448 */
    TK_F8E5,   /* fp8 e5m2 (tl.float8e5): bias 15, with infinities, max 57344 */
    TK_F8E4B15 /* fp8 e4m3 of bias 15 (tl.float8e4b15): no infinities or NaN, max 1.875 */
} tk_dtype;

/* fp16 and bf16 for host code: conversions from fp32 round to nearest even
 * (as the GPU's cvt.rn), to fp32 are exact. */
uint16_t tk_f32_to_f16(float x);
float tk_f16_to_f32(uint16_t h);
uint16_t tk_f32_to_bf16(float x);
float tk_bf16_to_f32(uint16_t h);
/* fp8 for host code: from fp32 rounds to nearest even and saturates as the
 * GPU's cvt.rn.satfinite (beyond the largest finite value, infinities
 * included, gives that value; NaN gives 0x7f with its sign); to fp32 is exact. */
uint8_t tk_f32_to_fp8e4nv(float x);
float tk_fp8e4nv_to_f32(uint8_t b);
uint8_t tk_f32_to_fp8e5(float x);
float tk_fp8e5_to_f32(uint8_t b);
/* fp8e4b15 as Triton converts fp32 to it: rounded toward zero to fp16, the
 * magnitude clamped to 1.75 (NaN and infinities too) and rounded to 3
 * fraction bits, ties away from zero; to fp32 is exact (0x7f is 1.875). */
uint8_t tk_f32_to_fp8e4b15(float x);
float tk_fp8e4b15_to_f32(uint8_t b);

/* ---- the compiler ---------------------------------------------------------- */

typedef enum tk_emit {
    TK_EMIT_TOKENS,
    TK_EMIT_AST,
    TK_EMIT_IR,
    TK_EMIT_LLVM,
    TK_EMIT_PTX,
    TK_EMIT_CUBIN,
    TK_EMIT_HEADER
} tk_emit;

typedef struct tk_define {
    const char *name;
    const char *value; /* "1024", "1e-5", "True", "tl.float16", "'text'" */
} tk_define;

typedef struct tk_compile_options {
    const char *kernel;       /* NULL: every kernel that can be specialised */
    const tk_define *defines; /* constexpr values */
    int ndefines;
    const char
        *signature;   /* runtime parameter types, "*fp32:16,*fp32,i32"; NULL: from annotations */
    const char *arch; /* "sm_80" (default), "sm_86", "sm_89", "sm_90", "sm_90a" */
    int num_warps;    /* 0: 4 */
    int num_stages;   /* 0: 3 */
    int opt_level;    /* -1: default (3) */
    tk_emit emit;
    /* folders searched for the package files a module imports jit code from
     * (`from pkg.ops.utils import f`), before the file's own folder and its
     * parents; NULL-terminated, NULL: none. Relative imports (`from .utils
     * import f`) are found next to the file. */
    const char *const *search_paths;
    /* TK_EMIT_HEADER: the launcher's C name (NULL: the kernel's), and the
     * archs to embed cubins for ("sm_90a"; NULL-terminated, NULL: none);
     * `signature` then holds one signature per specialisation, separated
     * by ';' */
    const char *out_name;
    const char *const *cubin_archs;
    /* sm_90a: copy the tiles of 2-D strided tensors that feed tl.dot with
     * TMA; the kernel then takes one tensor map (CUtensorMap, 128 bytes)
     * per such tile after its parameters, as the tk runtime builds them,
     * and where it writes maps itself (a descriptor over a pointer it
     * computes) a pointer to 128 bytes per such map and program of scratch
     * (docs/embedding.md). Not with TK_EMIT_HEADER, whose launchers do not. */
    int tma;
    /* line tables (.file/.loc) in the PTX, for Nsight Compute's source
     * view: 0 on unless the environment sets TK_DISABLE_LINE_INFO=1, 1 on,
     * -1 off (a cubin then carries no line info either) */
    int line_info;
    /* the IR printed before or after passes, into the diagnostics text:
     * "all" or pass names separated by commas (fold, flatten, dce, cse,
     * layout, pipeline); NULL: none */
    const char *print_ir_before;
    const char *print_ir_after;
    /* float multiplies and adds fused into fma where one feeds the other
     * (Triton's enable_fp_fusion): 0 on unless the environment sets
     * TK_DEFAULT_FP_FUSION=0, 1 on, -1 off */
    int fp_fusion;
    /* CTAs per cluster (Triton's num_ctas), 0: 1. 2 on sm_90a with `tma`:
     * the kernel runs in clusters of two neighbouring programs along the
     * grid's x, and a tile both load in the K loop is copied once per
     * cluster (TMA multicast). Where that cannot be done (no TMA copies,
     * another arch, a warp-specialized loop, ...) the kernel is compiled as
     * for 1 (TK_VERBOSE says why). Not with TK_EMIT_HEADER. */
    int num_ctas;
} tk_compile_options;

/* Compiles `src` (len bytes, need not be NUL-terminated) named `filename` in
 * diagnostics (NULL: "<string>"). On success *out (heap, free with
 * tk_free_text) holds the requested output (*out_len bytes, when out_len is
 * not NULL; a cubin is binary). On failure returns TK_ERR_COMPILE and, if
 * diags is not NULL, *diags holds every diagnostic as text (free with
 * tk_free_text); warnings come back there on success too. Every failure
 * also sets tk_last_error (the diagnostics, cut to its length), diags or
 * not. Options out of range (emit, num_warps not 0 or a power of two up to
 * 32, num_stages < 0, opt_level outside -1..3) give TK_ERR_INVALID.
 *   TK_EMIT_CUBIN   assembles the PTX for `arch` through the CUDA driver
 *                   when one is usable, else with ptxas from PATH; an error
 *                   when neither can
 *   TK_EMIT_HEADER  a self-contained C header (see tkc(1)): the PTX of each
 *                   specialisation in `signature` and cubins for
 *                   `cubin_archs` where they can be assembled (a warning
 *                   where not), a typed launcher per specialisation and a
 *                   dispatcher on the :16 and :1 hints; it needs only libc,
 *                   libdl and the driver at run time */
tk_status tk_compile(const char *filename, const char *src, size_t len,
                     const tk_compile_options *opts, char **out, size_t *out_len, char **diags);
void tk_free_text(char *text);

/* Compiles tk's block IR, the text TK_EMIT_IR gives, instead of source: its
 * kernels (opts->kernel picks one by name) go through the passes `passes`
 * names, comma-separated, in order (fold, dce, cse, flatten, layout,
 * pipeline; NULL or "": none), then to TK_EMIT_IR, TK_EMIT_LLVM or
 * TK_EMIT_PTX as with tk_compile. The IR says the target, warps and stages;
 * opts->arch, when set, must agree with it, and the options that shape
 * specialisation (defines, signature, num_warps, num_stages, tma) are
 * refused. Errors in the text come back in *diags as file:line:col. */
tk_status tk_compile_ir(const char *filename, const char *text, size_t len,
                        const tk_compile_options *opts, const char *passes, char **out,
                        size_t *out_len, char **diags);

/* ---- the text of a package file ---------------------------------------------- */

/* Every later compilation in this process (tk_compile, a module's load and
 * its launches) that reads the package file `path`, one a module imports
 * jit code or names from, reads a copy of `text` instead of the file: an
 * embedder that has run the file's host code (Python's import) hands in the
 * text its kernels are to see. NULL text removes the file's text. Paths are
 * compared after realpath(), so every spelling of a file matches; the file
 * a module is loaded from is not affected (its text is the one given). The
 * text is part of the JIT cache's key, as the file's would be.
 * Thread-safe. A NULL or empty path gives TK_ERR_INVALID; a text for a path
 * that names no file, TK_ERR_NOT_FOUND. */
tk_status tk_source_overlay(const char *path, const char *text);

/* Every later compilation in this process searches the folder `dir` for the
 * package files a module imports jit code from by an absolute name, after
 * the context's search_paths and before the importing file's own folder
 * and its parents: an embedder whose host code found a package elsewhere
 * (Python, on sys.path, for a module a code generator wrote outside it)
 * says where. Each folder is kept once (by realpath()); the files found
 * are part of the JIT cache's key, as always. Thread-safe. A NULL or empty
 * dir gives TK_ERR_INVALID; one that names no folder, TK_ERR_NOT_FOUND. */
tk_status tk_source_search_path(const char *dir);

/* ---- the runtime ------------------------------------------------------------- */

/* The first launch of a kernel with a new key (source, kernel, constexpr
 * values, argument dtypes, Triton's specialisation of pointers aligned to 16
 * bytes and integers divisible by 16 or equal to 1, num_warps, num_stages,
 * arch, compiler version) compiles it; later launches find it in memory,
 * and a new process finds the PTX and cubin on disk. Environment:
 *   TK_INTERPRET=1        every context runs on the CPU reference interpreter
 *   TK_INTERPRET_THREADS  interpreter threads per launch (default: CPUs, at most 16)
 *   TK_INTERP_MAX_STEPS   interpreter step budget of one launch (programs plus loop
 *                         iterations; default 2**30); a launch that runs past it, or
 *                         whose grid has more programs, gives TK_ERR_LAUNCH
 *   TK_CACHE_DIR          the disk cache (default ~/.cache/tk)
 *   TK_CACHE_DISABLE=1    no disk cache (memory only)
 *   TK_ALWAYS_COMPILE=1   ignore what the disk cache holds (still writes it)
 *   TK_DUMP_DIR=dir       write .ir, .ll and .ptx of every kernel compiled
 *   TK_ARCH=sm_XX         the target (default: the device's; sm_90a on Hopper)
 *   TK_VERBOSE=1          report each build's stage times on stderr
 *   TK_LIBCUDA=path       the CUDA driver library to load (default libcuda.so.1) */

typedef struct tk_context tk_context;
typedef struct tk_module tk_module;
typedef struct tk_kernel tk_kernel;
#ifndef TK_STREAM_DEFINED
#define TK_STREAM_DEFINED
typedef void *tk_stream; /* a CUstream, or NULL for the default stream */
#endif

typedef struct tk_context_options {
    int device;       /* CUDA device ordinal */
    int interpret;    /* 1: run every launch on the CPU reference interpreter */
    void *cu_context; /* a caller's CUcontext to use instead of the primary one */
    /* folders searched for imported package files, as in tk_compile_options;
     * the context keeps the pointer, so the array must outlive it */
    const char *const *search_paths;
    /* interpreter: the most programs plus loop iterations one launch may run
     * before it stops with TK_ERR_LAUNCH (0: TK_INTERP_MAX_STEPS, else 2**30) */
    uint64_t interp_max_steps;
    uint64_t reserved[2]; /* zero (room for later options) */
} tk_context_options;

/* TK_ERR_NO_DEVICE (with the reason) where there is no driver or no such
 * GPU. An interpreter context never loads libcuda. opts NULL: the defaults.
 * Destroy a context after its modules. */
tk_status tk_context_create(tk_context **ctx, const tk_context_options *opts);
void tk_context_destroy(tk_context *ctx);

/* Device memory (host memory aligned to 256 bytes when interpreting, with
 * red zones of at least 1 KiB between buffers; the interpreter checks every
 * access against these buffers, so an overrun into a neighbour is caught).
 * A size the host cannot give is TK_ERR_NO_MEMORY. Copies wait for
 * the GPU; a fault of an earlier launch surfaces here as TK_ERR_KERNEL_FAULT.
 * tk_free of NULL, and copies and memsets of 0 bytes, do nothing. */
tk_status tk_alloc(tk_context *ctx, size_t bytes, void **dptr);
tk_status tk_free(tk_context *ctx, void *dptr);
tk_status tk_copy_to(tk_context *ctx, void *dst_dev, const void *src_host, size_t bytes);
tk_status tk_copy_from(tk_context *ctx, void *dst_host, const void *src_dev, size_t bytes);
tk_status tk_memset(tk_context *ctx, void *dptr, int byte, size_t bytes);
tk_status tk_synchronize(tk_context *ctx);

/* Parses the source once (syntax errors: TK_ERR_COMPILE with every
 * diagnostic); kernels are compiled per launch key. An unknown kernel name
 * gives TK_ERR_NOT_FOUND listing the module's kernels. A NULL name for
 * tk_module_load_string reads "<string>" in messages. */
tk_status tk_module_load_file(tk_context *ctx, const char *path, tk_module **mod);
tk_status tk_module_load_string(tk_context *ctx, const char *name, const char *src,
                                tk_module **mod);
void tk_module_destroy(tk_module *mod);
tk_status tk_module_kernel(tk_module *mod, const char *name, tk_kernel **k);

/* Launch arguments, in the kernel's parameter order; constexprs by name
 * anywhere in the list. */
/* TK_ARG_DESC: v.ptr points to a tk_tensor_desc (see tk_desc below).
 * TK_ARG_TUPLE: a tuple (Triton's tuple arguments, see tk_tuple below) of
 * v.i items, which are the arguments that follow it in the list. */
typedef enum tk_arg_kind {
    TK_ARG_PTR,
    TK_ARG_SCALAR,
    TK_ARG_CONST,
    TK_ARG_DESC,
    TK_ARG_TUPLE
} tk_arg_kind;
typedef struct tk_arg {
    tk_arg_kind kind;
    tk_dtype dtype;   /* element type for pointers, value type for scalars */
    const char *name; /* constexpr name (TK_ARG_CONST) */
    union {
        void *ptr;
        int64_t i;
        uint64_t u;
        double f;
    } v;
    const char *text; /* TK_ARG_CONST given as text ("tl.float16"), or NULL */
} tk_arg;

static inline tk_arg tk_ptr(void *p, tk_dtype t)
{
    tk_arg a = {TK_ARG_PTR, t, 0, {0}, 0};
    a.v.ptr = p;
    return a;
}
static inline tk_arg tk_i32(int32_t x)
{
    tk_arg a = {TK_ARG_SCALAR, TK_I32, 0, {0}, 0};
    a.v.i = x;
    return a;
}
static inline tk_arg tk_i64(int64_t x)
{
    tk_arg a = {TK_ARG_SCALAR, TK_I64, 0, {0}, 0};
    a.v.i = x;
    return a;
}
static inline tk_arg tk_u32(uint32_t x)
{
    tk_arg a = {TK_ARG_SCALAR, TK_U32, 0, {0}, 0};
    a.v.u = x;
    return a;
}
static inline tk_arg tk_f32(float x)
{
    tk_arg a = {TK_ARG_SCALAR, TK_F32, 0, {0}, 0};
    a.v.f = x;
    return a;
}
static inline tk_arg tk_f64(double x)
{
    tk_arg a = {TK_ARG_SCALAR, TK_F64, 0, {0}, 0};
    a.v.f = x;
    return a;
}
static inline tk_arg tk_const(const char *name, int64_t x)
{
    tk_arg a = {TK_ARG_CONST, TK_I64, name, {0}, 0};
    a.v.i = x;
    return a;
}
static inline tk_arg tk_const_f(const char *name, double x)
{
    tk_arg a = {TK_ARG_CONST, TK_F64, name, {0}, 0};
    a.v.f = x;
    return a;
}
static inline tk_arg tk_const_text(const char *name, const char *text)
{
    tk_arg a = {TK_ARG_CONST, TK_VOID, name, {0}, text};
    return a;
}

/* A tuple argument of n items: the next n arguments of the list, each
 * whole (a nested tuple with its items counts as one), e.g. for
 * `def k(ptrs, n)` launched as k[grid]((x, y), n):
 *     {tk_tuple(2), tk_ptr(x, TK_F32), tk_ptr(y, TK_F32), tk_i32(n)}
 * Items are pointers, scalars, tuples, or positional constexprs, which
 * need no name: tk_none(NULL) (Triton's None in a tuple), tk_const(NULL,
 * 4). Each pointer and scalar item is specialised like an argument of its
 * own (16-byte alignment, divisible by 16, equal to 1). */
static inline tk_arg tk_tuple(int n)
{
    tk_arg a = {TK_ARG_TUPLE, TK_VOID, 0, {0}, 0};
    a.v.i = n;
    return a;
}

#ifndef TK_GRID_DEFINED
#define TK_GRID_DEFINED
/* one line, the same in tk.h and the AOT prelude */
/* clang-format off */
typedef struct tk_grid { unsigned x, y, z; } tk_grid;
/* clang-format on */
#endif

typedef struct tk_launch_options {
    int num_warps;  /* 0: 4 */
    int num_stages; /* 0: 3 */
    tk_stream stream;
    /* 1: programmatic dependent launch (Triton's launch_pdl=True): on sm_90
     * and later the kernel may start while the stream's previous kernel
     * finishes, and waits for it where it calls gdc_wait(); elsewhere an
     * ordinary launch */
    int launch_pdl;
    /* float multiplies and adds fused into fma where one feeds the other
     * (Triton's enable_fp_fusion): 0 on unless the environment sets
     * TK_DEFAULT_FP_FUSION=0, 1 on, -1 off */
    int fp_fusion;
    /* CTAs per cluster (Triton's num_ctas), 0: 1; 2 as tk_compile_options'
     * num_ctas says. A grid whose x is odd launches the kernel compiled
     * for 1 (the same results). Needs cuLaunchKernelEx (CUDA 11.8). */
    int num_ctas;
    /* 1: this launch's constexprs and options as given, even where
     * tk_kernel_set_tuning gave the kernel configs (what a compiled kernel
     * of Triton launches); 0: such a kernel is tuned */
    int as_given;
    /* Triton's debug: 1 tl.device_assert and `assert` check at run time,
     * -1 they compile to nothing, 0 the default: off unless the
     * environment sets TRITON_DEBUG or TK_DEBUG (not "0") */
    int debug;
    int unused;
    uint64_t reserved[1]; /* zero (room for later options) */
} tk_launch_options;

/* Queues one launch (asynchronous on the GPU; synchronous when interpreting).
 * Arguments that do not match the kernel (count, pointer or scalar, declared
 * types, missing or unknown constexprs) and empty or oversized grids give
 * TK_ERR_LAUNCH and launch nothing; a source error found while specialising
 * gives TK_ERR_COMPILE. Thread-safe; a cache hit costs well under 1 us. A
 * fault is reported by the call that sees it (TK_ERR_KERNEL_FAULT naming
 * the kernel); after a fault the CUDA context cannot be used again. opts
 * NULL: the defaults. A constexpr argument needs a name, and text unless it
 * carries a value (tk_const_text(name, NULL) is TK_ERR_INVALID). */
tk_status tk_launch(tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs,
                    const tk_launch_options *opts);

/* Compiles (or finds in the cache) without launching, like Triton's warmup(). */
typedef struct tk_kernel_info {
    int registers;    /* per thread */
    int spill_bytes;  /* local memory per thread */
    int shared_bytes; /* static shared memory */
    int max_threads;  /* per block */
    int num_warps;
    int dynamic_shared_bytes; /* passed at launch (0 when the kernel uses none) */
    void *function;           /* the CUfunction (NULL when interpreting), for tk_occupancy */
    int threads;              /* per program at launch: num_warps * 32, and 128 more for the
                            producer warpgroup of a warp-specialized loop (0: num_warps * 32) */
    int reserved_int;         /* room for a later field */
    uint64_t reserved[3];     /* room for later fields */
} tk_kernel_info;
tk_status tk_kernel_prepare(tk_kernel *k, const tk_arg *args, int nargs,
                            const tk_launch_options *opts, tk_kernel_info *info);

typedef struct tk_device_props {
    char name[256];
    int sm_count, cc_major, cc_minor, warp_size;
    int regs_per_sm, shared_per_sm, shared_per_block, max_threads_per_sm;
    int max_threads_per_block, max_grid[3];
    /* 0 where the driver does not say (and on the interpreter) */
    int sm_clock_khz, mem_clock_khz, mem_bus_width_bits, unused;
    uint64_t reserved[2]; /* room for later fields */
} tk_device_props;
tk_status tk_device_properties(tk_context *ctx, tk_device_props *props);
/* Programs of this kernel that fit on one SM at once. */
tk_status tk_occupancy(tk_context *ctx, const tk_kernel_info *info, int *blocks_per_sm);

/* None for a constexpr parameter (Triton's `x is None` folds). */
static inline tk_arg tk_none(const char *name) { return tk_const_text(name, "None"); }

/* ---- tensor descriptors built on the host (Triton's TensorDescriptor) -------- */

/* A tensor of `rank` dims at `base` (elements of `dtype`; shape and strides
 * in elements) read and written in blocks of `block`, for a kernel
 * parameter that takes a descriptor (signature entry tensordesc<fp16[64,
 * 64]>, annotation-free). The launch passes the base, the shape and the
 * strides, and specialises on the dtype, the block shape and whether the
 * base is 16-byte aligned. It refuses (TK_ERR_LAUNCH) a rank outside 1 ..
 * TK_DESC_MAX_RANK, a NULL base, a last stride other than 1, a shape outside
 * 1 .. 2^31-1, a negative stride and a block dim that is no power of two. */
#define TK_DESC_MAX_RANK 5 /* Triton's, and TMA's */
typedef struct tk_tensor_desc {
    void *base;
    tk_dtype dtype;
    int rank;
    int64_t shape[TK_DESC_MAX_RANK];
    int64_t strides[TK_DESC_MAX_RANK];
    int block[TK_DESC_MAX_RANK];
} tk_tensor_desc;

/* Fills a descriptor (Triton's TensorDescriptor(base, shape, strides,
 * block_shape)); dims past TK_DESC_MAX_RANK are not read, and the launch
 * refuses such a rank. */
static inline tk_tensor_desc tk_tensor_desc_make(void *base, tk_dtype dt, int rank,
                                                 const int64_t *shape, const int64_t *strides,
                                                 const int *block)
{
    tk_tensor_desc d = {base, dt, rank, {0}, {0}, {0}};
    for (int i = 0; i < rank && i < TK_DESC_MAX_RANK; i++) {
        d.shape[i] = shape[i];
        d.strides[i] = strides[i];
        d.block[i] = block[i];
    }
    return d;
}
/* The launch argument for a descriptor; *d must outlive the tk_launch call
 * (the launch reads it, and keeps nothing). */
static inline tk_arg tk_desc(const tk_tensor_desc *d)
{
    tk_arg a = {TK_ARG_DESC, d ? d->dtype : TK_VOID, 0, {0}, 0};
    a.v.ptr = (void *)d;
    return a;
}

/* ---- benchmarking (in the manner of triton.testing.do_bench) ------------------ */

/* The work to time: queues launches on the stream the options name. */
typedef tk_status (*tk_bench_fn)(void *user);

typedef struct tk_bench_options {
    double warmup_ms; /* 0: 25, the time spent warming up */
    double rep_ms;    /* 0: 100, the time budget of the timed runs */
    int no_flush;     /* 1: no L2 flush between runs */
    int max_runs;     /* 0: 10000 */
    tk_stream stream; /* where fn queues its work and the events are recorded */
    /* NULL, or room for max_runs times (10000 when max_runs is 0): each
     * timed run's milliseconds, in the order they ran (out->runs of them),
     * for statistics of the caller's own (do_bench's quantiles, "all") */
    double *times;
    uint64_t reserved[3]; /* zero (room for later options) */
} tk_bench_options;

typedef struct tk_bench_result {
    double median_ms, mean_ms, min_ms, max_ms;
    double p20_ms, p80_ms; /* quantiles 0.2 and 0.8, as do_bench(quantiles=[0.5, 0.2, 0.8]) */
    int runs;              /* timed runs, chosen from rep_ms and an estimate of one run */
    int warmup_runs;
    int wall_clock;       /* 1: host wall-clock times of interpreter runs, not GPU times */
    uint64_t reserved[4]; /* room for later fields */
} tk_bench_result;

/* Calls fn once, estimates its time, warms up for warmup_ms, then times
 * each of `runs` calls with a pair of CUDA events, zeroing a buffer twice
 * the L2 size before each so every run starts with a cold cache. On an
 * interpreter context the times are host wall-clock times of synchronous
 * runs, and out->wall_clock says so. An error from fn stops the benchmark
 * and is returned. */
tk_status tk_bench(tk_context *ctx, tk_bench_fn fn, void *user, const tk_bench_options *opts,
                   tk_bench_result *out);

/* ---- autotuning (@triton.autotune) ------------------------------------------------ */

/* A kernel with @triton.autotune(configs=[...], key=[...]), or one given
 * configs by tk_kernel_set_tuning, is tuned by tk_launch and
 * tk_launch_tuned: the first launch for a new key (the values of the key
 * arguments and the dtypes of all arguments) compiles every config in
 * parallel threads, times each with tk_bench and keeps the fastest; later
 * launches run it. Choices are cached in memory and on disk (by kernel,
 * source hash, key values, configs, device, tk version), so another process
 * does not tune again. A launch that names a constexpr some config sets runs
 * as given, untuned. On the interpreter the first config (after pruning) is
 * used without timing, and a note says so; a kernel of one config runs it,
 * untuned and unpruned, as in Triton. For in-place kernels, the
 * decorator's reset_to_zero=[...] buffers are zeroed before each timed run
 * and once more before the first launch of each key (whether its config was
 * timed, read from the disk cache or taken by the interpreter), and
 * restore_value=[...] buffers are put back as they were after each timed
 * run (as Triton does; the copies are queued on the launch's stream, inside
 * the timed region).
 * Environment:
 *   TK_PRINT_AUTOTUNING=1  print each config's time and the choice on stderr */

typedef struct tk_config {
    const tk_define *defines; /* constexpr values */
    int ndefines;
    int num_warps;        /* 0: the launch's (4) */
    int num_stages;       /* 0: the launch's (3) */
    int num_ctas;         /* 0: the launch's (1) */
    int reserved_i;       /* zero */
    uint64_t reserved[1]; /* zero */
} tk_config;

/* The grid of a config, as Triton's grid lambda over META. */
typedef tk_grid (*tk_grid_fn)(const tk_config *cfg, const tk_arg *args, int nargs, void *user);
/* prune_configs_by / early_config_prune: clear keep[i] for configs not to
 * time (keep[] starts all 1; at least one must stay). */
typedef void (*tk_prune_fn)(const tk_config *configs, int nconfigs, const tk_arg *args, int nargs,
                            int *keep, void *user);

/* Constexprs computed from a config and the launch (Triton's
 * @triton.heuristics under @triton.autotune, which sees each config's
 * values): called for every config a launch compiles, times or runs, in the
 * launching thread. Sets up to `cap` defines in out (their texts must stay
 * valid until the launch returns) and returns how many; -1 stops the
 * launch (TK_ERR_LAUNCH). A launch that gives the configs' constexprs runs
 * untuned and does not call it. */
typedef int (*tk_config_defines_fn)(const tk_config *cfg, const tk_arg *args, int nargs,
                                    tk_define *out, int cap, void *user);

/* Host code around the runs of a config (Triton's Config.pre_hook and the
 * pre_hook/post_hook of @triton.autotune): called in the launching thread
 * with TK_HOOK_BEFORE_TIMED before each timed run of cfg (before the
 * reset_to_zero buffers are zeroed), TK_HOOK_AFTER_TIMED after it (before
 * restore_value puts buffers back), TK_HOOK_CHOSEN once when cfg has been
 * chosen for a new key among several configs (timed, read from the disk
 * cache or the interpreter's first: Triton's pre_hook with reset_only=True
 * after tuning) and
 * TK_HOOK_BEFORE_LAUNCH before each launch of the chosen config, a kernel
 * of one config's included. A nonzero return stops the launch
 * (TK_ERR_LAUNCH). */
enum {
    TK_HOOK_BEFORE_TIMED = 0,
    TK_HOOK_AFTER_TIMED = 1,
    TK_HOOK_BEFORE_LAUNCH = 2,
    TK_HOOK_CHOSEN = 3
};
typedef int (*tk_config_hook_fn)(const tk_config *cfg, int stage, const tk_arg *args, int nargs,
                                 void *user);

typedef struct tk_tune_options {
    const tk_config *configs; /* NULL: keep the @triton.autotune configs */
    int nconfigs;
    const char *const *key; /* argument names keying the choice; NULL: keep the source's */
    int nkey;
    tk_prune_fn prune; /* NULL: time every config */
    void *prune_user;
    /* Per config. 0: tk's tuning budget, a few milliseconds a config (a
     * median over the runs that fit), where Triton spends 25 and 100 on
     * each; give 25 and 100 for Triton's. */
    double warmup_ms, rep_ms;
    /* The bytes of a reset_to_zero or restore_value buffer at this launch;
     * NULL: from the pointer to the end of the allocation holding it (right
     * for buffers from tk_alloc or cuMemAlloc; give it for memory the host
     * sub-allocates, or the tuner zeroes and restores past the buffer). */
    size_t (*buffer_bytes)(const char *name, const tk_arg *args, int nargs, void *user);
    void *buffer_user;
    tk_config_defines_fn config_defines; /* NULL: the configs' defines alone */
    void *config_defines_user;
    /* NULL: no host code around the runs; a kernel whose @triton.autotune
     * has pre_hook or post_hook is not tuned without one */
    tk_config_hook_fn hook;
    void *hook_user;
} tk_tune_options;

/* Sets or replaces the configs, key and pruning of a kernel (copied); call
 * before its first tuned launch (TK_ERR_INVALID after). */
tk_status tk_kernel_set_tuning(tk_kernel *k, const tk_tune_options *opts);

/* The kernel's configs (owned by the kernel; valid until its module is
 * destroyed or tk_kernel_set_tuning replaces them); *n = 0 when it has none. */
tk_status tk_kernel_configs(tk_kernel *k, const tk_config **configs, int *n);

/* tk_launch for a tuned kernel whose grid depends on the config. */
tk_status tk_launch_tuned(tk_kernel *k, tk_grid_fn grid, void *grid_user, const tk_arg *args,
                          int nargs, const tk_launch_options *opts);

typedef struct tk_tune_choice {
    int index;        /* into the config list */
    tk_config config; /* points into the kernel; valid while its module lives */
    double ms;        /* its median time when it was tuned (0 on the interpreter) */
    int tuned_here;   /* 1: timed by this process; 0: found in the disk cache or chosen untimed */
    int from_disk;    /* 1: read from the disk cache */
    int interpreted;  /* 1: the interpreter took the first config without timing */
    uint64_t reserved[4];
} tk_tune_choice;

/* The config chosen for these launch arguments; TK_ERR_NOT_FOUND when no
 * launch has chosen one for their key yet. */
tk_status tk_kernel_tuned_config(tk_kernel *k, const tk_arg *args, int nargs,
                                 const tk_launch_options *opts, tk_tune_choice *out);

/* ---- do_not_specialize (@triton.jit(do_not_specialize=[...])) ------------------- */

/* Launches of k stop specialising the named runtime parameters on Triton's
 * hints (an integer divisible by 16 or equal to 1, a pointer aligned to 16
 * bytes): one compiled variant serves every value. Replaces the names of an
 * earlier call (n = 0 clears them); the parameters the source's own
 * @triton.jit(do_not_specialize=[...]) names stay unspecialised whatever
 * this sets. A name that is not a runtime parameter of k gives
 * TK_ERR_INVALID. */
tk_status tk_kernel_set_no_specialize(tk_kernel *k, const char *const *names, int n);

#if defined(__GNUC__) && !defined(_WIN32)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
