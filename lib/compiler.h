/* compiler.h: the map of the compiler. Each stage's entry point, in
 * pipeline order; lib/pipeline.c strings them together.
 *
 *   text -> lex (grammar/tk.l) -> parse (grammar/tk.y) -> AST (front/ast.h)
 *        -> sema: specialise one kernel -> block IR     (sema/, ir/ir.h)
 *        -> passes: fold, dce, ...                      (passes/passes.h)
 *        -> codegen: LLVM IR                            (codegen/cg.h)
 *        -> target: NVPTX -> PTX                        (target/target.h)
 *        -> cubin: the driver's linker or ptxas          (runtime/rt_cubin.c)
 *        -> or a C header with launchers (AOT)          (aot/aot.h)
 *        -> or the interpreter runs the IR on the CPU   (interp/interp.h)
 * Every stage allocates from the compilation's arena (support/base.h). */
#ifndef TK_COMPILER_H
#define TK_COMPILER_H

#include "front/ast.h"
#include "support/base.h"
#include "ir/ir.h"
#include "tk/tk.h"

/* ---- lexer and parser (grammar/) ------------------------------------------ */

/* Writes one line per token ("LINE:COL KIND 'text'"), for --emit=tokens. */
bool lex_dump_tokens(const Source *src, Diag *d, StrBuf *out);
/* Parses a whole file. Returns the N_MODULE (possibly partial) and reports
 * every syntax error to d; the caller checks d->errors. */
Node *parse_module(const Source *src, Arena *a, Diag *d);
/* Parses a file another module imports: host code is split off even when
 * the file has no kernel. */
Node *parse_python_module(const Source *src, Arena *a, Diag *d);
/* Reads the package files that the module's imports name (front/package.c),
 * relative to its file, then in `search` (NULL-terminated folders), then in
 * its file's parent folders; points each import node's `target` at the
 * parsed file. An import it cannot find stays a host name. Returns how many
 * files it read, their sources in *files. */
int package_load(Node *module, const char *const *search, Arena *a, Diag *d,
                 const Source ***files);

/* ---- sema: specialisation (lib/sema/) ------------------------------------ */

/* A compile-time value: constexpr parameters, module constants, folded
 * expressions. */
typedef enum { CV_NONE, CV_INT, CV_FLOAT, CV_BOOL, CV_DTYPE, CV_STR } ConstKind;
typedef struct ConstValue {
    ConstKind kind;
    int64_t i;    /* CV_INT, CV_BOOL */
    double f;     /* CV_FLOAT */
    Type type;    /* CV_DTYPE: a scalar or pointer type */
    const char *s;/* CV_STR */
} ConstValue;

typedef struct SpecDefine {
    const char *name;
    ConstValue value;
    Span span; /* where it was given, or a zero span for the command line */
} SpecDefine;

/* The type of one runtime parameter, from a signature or a launch. */
typedef struct ArgSpec {
    Type type;        /* scalar or pointer */
    int divisibility; /* 16 or 1 */
    bool equal_to_1;  /* integer known == 1 (Triton specialises it) */
} ArgSpec;

typedef struct SpecRequest {
    const char *kernel;
    const SpecDefine *defines;
    int ndefines;
    const ArgSpec *args; /* one per runtime (non-constexpr) parameter, in order */
    int nargs;           /* -1: none given; types must come from annotations */
    int num_warps;
    int num_stages;
    const char *arch; /* the target ("sm_90a" picks warpgroup MMA layouts); NULL: interpreter */
} SpecRequest;

/* Parses "-D" text ("1024", "1e-5", "True", "tl.float16", "fp16", "'s'").
 * A number that does not fit (an int beyond int64, a finite float beyond
 * float64) is refused with *why saying so; *why is NULL for text that is no
 * value at all. */
bool sema_parse_const(const char *text, ConstValue *out, const char **why);
/* Parses "*fp32:16,*fp32,i32". Reports malformed entries to d. */
bool sema_parse_signature(const char *text, Arena *a, Diag *d, ArgSpec **args, int *nargs);
/* Names of the functions that a launch can target (all @jit defs), in order. */
int sema_kernel_names(const Node *module, const char ***names, Arena *a);
/* The entry points when no kernel is named: the @jit defs that no other
 * function of the file calls (the rest are helpers), in order; linear. */
int sema_entry_kernels(const Node *module, const char ***names, Arena *a);
/* Names of the runtime and constexpr parameters of one kernel. */
typedef struct KernelSig {
    const char *name;
    int nparams;
    const char **param_names;
    bool *is_constexpr;
    Type *annotated;     /* DT_VOID when the source gives no type */
    bool *has_default;
    /* @triton.autotune(configs=[triton.Config({...}, num_warps=, num_stages=)],
     * key=[...]): the configs to time and the argument names keying the choice */
    struct KernelConfig *configs;
    int nconfigs;
    bool configs_from_host; /* host Python builds the configs: tk cannot read them */
    const char **tune_keys;
    int ntune_keys;
    /* reset_to_zero=[...] and restore_value=[...]: buffers zeroed before each
     * timed run, and buffers put back as they were after each */
    const char **reset_to_zero;
    int nreset_to_zero;
    const char **restore_value;
    int nrestore_value;
    /* @triton.heuristics({'NAME': lambda args: ...}): constexprs computed from
     * the launch arguments with sema_eval_heuristic */
    const char **heuristic_names;
    const Node **heuristic_fns; /* the N_LAMBDA nodes */
    int nheuristics;
    /* @triton.heuristics(host_fn()) or (values=NAME) that host Python binds:
     * the launch passes the constexprs it would compute */
    bool heuristics_from_host;
} KernelSig;
/* One autotune config: constexpr values plus launch settings (0: not given). */
typedef struct KernelConfig {
    SpecDefine *defines;
    int ndefines;
    int num_warps;
    int num_stages;
} KernelConfig;
/* Evaluates a heuristic lambda with the launch arguments by name (args['n']
 * or a parameter of the same name); false after reporting to d. */
bool sema_eval_heuristic(const Node *module, const Node *lambda, const char *const *names,
                         const ConstValue *values, int n, Arena *a, Diag *d, ConstValue *out);
bool sema_kernel_sig(const Node *module, const char *kernel, Arena *a, KernelSig *out);
/* Builds the IR of one kernel. Returns NULL after reporting errors. */
IrFunc *sema_specialize(const Node *module, const Source *src, const SpecRequest *req,
                        Arena *a, Diag *d);

/* ---- IR passes (lib/passes/passes.h) ----------------------------------------- */

#include "passes/passes.h"

/* ---- code generation (lib/codegen/, lib/target/) --------------------- */

typedef struct CgOptions {
    const char *arch;      /* "sm_80" ... "sm_90a" */
    int opt_level;         /* 0..3 */
    const char *libdevice; /* path of libdevice.10.bc; NULL: default/CUDA_HOME */
} CgOptions;

/* Lowers one kernel to PTX text. When llvm_out is not NULL it also receives
 * the optimised LLVM IR text (--emit=llvm). Errors (unsupported construct,
 * LLVM failure, missing libdevice) go to d. */
bool cg_compile(const IrFunc *f, const CgOptions *o, Diag *d, StrBuf *llvm_out,
                StrBuf *ptx_out);
/* The dynamic shared memory a kernel's PTX says it needs at launch (the
 * "tk.dynamic_shared_bytes" line cg_compile appends; 0 without one). */
int cg_dynamic_shared_bytes(const char *ptx);

/* ---- PTX -> cubin, ahead of time (runtime/rt_cubin.c) --------------------- */

/* Assembles NUL-terminated PTX of `len` bytes for `arch` ("sm_90a"),
 * appending the cubin to out: through the CUDA driver's linker when a
 * driver and GPU are there, else `ptxas` from PATH. false with a one-line
 * reason in why (what was tried, why each failed) when neither can. */
bool rt_assemble_ptx(const char *ptx, size_t len, const char *arch, const char *kernel,
                     StrBuf *out, char *why, size_t cap);

/* ---- errors of API calls (runtime/rt_driver.c) ----------------------------- */

#include "support/error.h" /* err_set and the API argument checks */

/* ---- the reference interpreter (lib/interp/) ------------------------------ */

/* A host buffer the interpreter may touch; every access is checked against these. */
typedef struct InterpBuffer {
    const char *name;    /* for messages; may be NULL */
    unsigned char *base;
    size_t bytes;
} InterpBuffer;

typedef struct InterpMemory {
    const InterpBuffer *bufs;
    int nbufs;
} InterpMemory;

/* One slot per runtime parameter, in order: the address for pointers, the
 * value for scalars (ints in i/u at their width, floats in f). */
typedef union InterpArg {
    int64_t i;
    uint64_t u;
    double f;
    void *p;
} InterpArg;

/* How a launch runs. threads > 1 lets programs run in parallel when the
 * kernel has no atomics and no prints (0: one thread per CPU); errors are
 * those of the lowest failing program either way. max_steps bounds the
 * work of one launch: every program started and every loop iteration
 * (for and while back-edges) is one step (0: INTERP_DEFAULT_MAX_STEPS).
 * device_print text goes to `out` (stdout when NULL). */
typedef struct InterpOptions {
    int threads;
    uint64_t max_steps;
    StrBuf *out;
} InterpOptions;

/* 2**17 times what the largest launch of the test suite takes (under
 * 2**13), and a minute or two of a loop that does nothing (about 80 ns a
 * step): a runaway kernel stops, and no real one gets near it. */
#define INTERP_DEFAULT_MAX_STEPS ((uint64_t)1 << 30)

typedef enum InterpResult {
    INTERP_OK,
    INTERP_FAULT,       /* the kernel went wrong: out of bounds, assert, unsupported op */
    INTERP_NO_MEMORY,   /* the host had no memory for the workspaces (not the kernel's fault) */
    INTERP_OVER_BUDGET, /* the launch ran past max_steps; what it stored so far stays */
    INTERP_BAD_GRID     /* an empty grid, or more programs than the budget or host can count */
} InterpResult;

/* Runs every program of the grid. An out-of-bounds access, a failed
 * device_assert, an unsupported op or the step budget running out stops the
 * launch with an error in d naming the kernel, the program id and (for
 * accesses) the element and the address, at the op's source position. */
InterpResult interp_run(const IrFunc *f, const unsigned grid[3], const InterpArg *args,
                        const InterpMemory *mem, const InterpOptions *o, Diag *d);
/* interp_run with the default budget: true when it ran to the end. */
bool interp_launch(const IrFunc *f, const unsigned grid[3], const InterpArg *args,
                   const InterpMemory *mem, int threads, Diag *d, StrBuf *out);

/* ---- the pipeline (lib/pipeline.c) ------------------------------------------ */

/* One compilation: source, arena, diagnostics. */
typedef struct Compilation {
    Source src;
    Arena arena;
    Diag diag;
    Node *module;
    const char *const *search_paths; /* for package imports; NULL-terminated, may be NULL */
    const Source **imported;          /* the package files comp_parse read */
    int nimported;
} Compilation;

bool comp_init(Compilation *c, const char *name, const char *text, size_t len);
/* The specialisation request of one kernel from tk_compile's options, with
 * `signature` (NULL: types from annotations); false after reporting to
 * c->diag. */
struct tk_compile_options;
bool comp_request(Compilation *c, const struct tk_compile_options *o, const char *kernel,
                  const char *signature, SpecRequest *req);
void comp_free(Compilation *c);
bool comp_parse(Compilation *c);
/* The build of one kernel reads the parsed module and never writes it; it
 * allocates in its own arena and reports to the Diag it is given (not
 * c->diag), so several builds of one module may run in parallel threads. */
/* Specialises one kernel into IR allocated in ir_arena, then verifies and
 * runs the IR passes. NULL after reporting errors to d. */
IrFunc *comp_specialize(const Compilation *c, Diag *d, const SpecRequest *req, Arena *ir_arena,
                        const PassOptions *po);
/* The IR passes only GPU code runs (software pipelining); what the
 * interpreter runs stops before them. */
bool comp_lower(Diag *d, IrFunc *f, const PassOptions *po);
/* Lowers (comp_lower) and turns the IR into LLVM IR text (llvm may be NULL)
 * and PTX text. */
bool comp_codegen(Diag *d, IrFunc *f, const CgOptions *o, const PassOptions *po, StrBuf *llvm,
                  StrBuf *ptx);
/* The pass options tk_compile's print_ir_before/after ask for; the IR
 * goes into c's diagnostics text. */
struct tk_compile_options;
PassOptions comp_pass_options(Compilation *c, const struct tk_compile_options *o);
/* The checks of tk_compile's options, for the API function `fn`:
 * TK_ERR_INVALID naming the argument, or TK_OK. */
tk_status comp_check_options(const char *fn, const tk_compile_options *o);
/* The end of tk_compile and tk_compile_ir: the output `res` (when ok and
 * no error was reported) or none, the diagnostics, tk_last_error after a
 * failure; frees `res` and the compilation. */
tk_status comp_finish(Compilation *c, bool ok, StrBuf *res, char **out, size_t *out_len,
                      char **diags);

#endif
