/* sema.h: the interface of lib/sema/, specialisation: one @jit kernel of a
 * parsed module, with its constexpr values, argument types and launch
 * settings, becomes block IR. Also the queries on a module that a launch
 * needs (kernel names, signatures, autotune configs, -D values).
 * Below it: front/ (the tree it reads) and ir/ (what it builds). */
#ifndef TK_SEMA_H
#define TK_SEMA_H

#include "front/front.h"
#include "ir/ir.h"

/* A compile-time value: constexpr parameters, module constants, folded
 * expressions. */
typedef enum {
    CV_NONE,
    CV_INT,
    CV_FLOAT,
    CV_BOOL,
    CV_DTYPE,
    CV_STR,
    CV_TUPLE, /* s: its text, "(0.5, (1, 'a'))", items as -D spells them */
    CV_FUNC,  /* s: the name ("_relu", "acts.relu") of a @jit function of the module */
} ConstKind;
typedef struct ConstValue {
    ConstKind kind;
    int64_t i;     /* CV_INT, CV_BOOL */
    double f;      /* CV_FLOAT */
    Type type;     /* CV_DTYPE: a scalar or pointer type */
    const char *s; /* CV_STR, CV_TUPLE, CV_FUNC */
} ConstValue;

/* Whether v holds text (sema_parse_const copies it to the heap). */
static inline bool cv_has_text(const ConstValue *v)
{
    return (v->kind == CV_STR || v->kind == CV_TUPLE || v->kind == CV_FUNC) && v->s;
}

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
    /* a tensor descriptor built on the host (`tensordesc<fp16[64, 64]>`):
     * type is the base pointer; 0 for any other parameter */
    int desc_rank;
    int desc_block[TK_MAX_RANK];
    /* a tuple (`(*fp32:16,i32)`, Triton's tuple arguments): its items, each
     * an ArgSpec, flattened into parameters NAME[i] (NAME[i][j] when nested)
     * in order; type is DT_VOID */
    bool is_tuple;
    int nitems;
    const struct ArgSpec *items;
    /* a constexpr item of a tuple (None, a number): no parameter, the value */
    bool is_const;
    ConstValue value;
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
    /* Triton's debug=True: device_assert and `assert` statements check at
     * run time; off (the default, as in Triton), they compile to nothing */
    bool debug;
} SpecRequest;

/* The one constructor of a request (request.c): the kernel, its launch
 * settings with the defaults applied and checked (ir_launch_settings) and
 * the target (NULL: the interpreter); no defines, no argument types (nargs
 * -1). false with the message in why. sema_specialize takes only requests
 * made here: it does not check them again. */
bool spec_request_init(SpecRequest *req, const char *kernel, int num_warps, int num_stages,
                       const char *arch, char *why, size_t cap);
/* Parses "-D" text ("1024", "1e-5", "True", "tl.float16", "fp16", "'s'",
 * a tuple of such "(1, (2.5, None))", the name of a @jit function "_relu",
 * which specialisation looks up in the module). A number that does not fit
 * (an int beyond int64, a finite float beyond float64) is refused with
 * *why saying so; *why is NULL for text that is no value at all. */
bool sema_parse_const(const char *text, ConstValue *out, const char **why);
/* Parses "*fp32:16,*fp32,i32", with tuples in parentheses:
 * "(*fp32:16,*fp32:16),(i32,None),fp32" (a one-item tuple is "(i32,)").
 * Reports malformed entries and unbalanced brackets to d. */
bool sema_parse_signature(const char *text, Arena *a, Diag *d, ArgSpec **args, int *nargs);
/* One entry in signature spelling ("*fp32:16", "(*fp32,(i32,None))"). */
const char *sema_sig_entry(const ArgSpec *as, Arena *a);
/* Names of the functions that a launch can target (all @jit defs), in order. */
/* Whether tk has builtin NAME in namespace ns ("tl", "tl.extra.cuda",
 * "builtins"), and whether libdevice has a function NAME: what the front
 * end asks when it decides host conditions (front_set_builtins). */
bool sema_builtin_exists(const char *ns, const char *name);
bool sema_libdevice_known(const char *name);
int sema_kernel_names(const Node *module, const char ***names, Arena *a);
/* The name of the def a kernel name names: its own, or the def a
 * module-level alias binds (`kern = triton.jit(_impl)` gives "_impl");
 * NULL for none. */
const char *sema_kernel_def(const Node *module, const char *name);
/* A module-level def `name` that is no kernel: its line, and its first
 * decorator's name (NULL: it has none); false when there is no such def. */
bool sema_plain_def(const Node *module, const char *name, int *line, const char **decorator);
/* The entry points when no kernel is named: the @jit defs that no other
 * function of the file calls (the rest are helpers), in order; linear. */
int sema_entry_kernels(const Node *module, const char ***names, Arena *a);
/* Names of the runtime and constexpr parameters of one kernel. */
typedef struct KernelSig {
    const char *name;
    int nparams;
    const char **param_names;
    bool *is_constexpr;
    Type *annotated; /* DT_VOID when the source gives no type */
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
    /* warmup= and rep= of the decorator (ms a config); 0 where not given */
    double tune_warmup_ms, tune_rep_ms;
    /* the first autotune option that is Python tk does not run
     * ("prune_configs_by", "pre_hook", "post_hook"), or NULL: it matters
     * only to tuning, which the runtime refuses while it stands */
    const char *tune_python;
    /* a triton.Config's own pre_hook (tune_python then names it): it runs
     * before every launch of its config, one config's too */
    bool tune_config_hook;
    /* @triton.heuristics({'NAME': lambda args: ...}): constexprs computed from
     * the launch arguments with sema_eval_heuristic. An entry whose value is
     * no such lambda (a host function, `'NAME': heur_block_n`) is host code:
     * its constexpr comes with the launch, and heuristic_hosts names it. */
    const char **heuristic_names;
    const Node **heuristic_fns;   /* the values: N_LAMBDA nodes, or the host code's */
    const char **heuristic_hosts; /* per entry: "the host function 'f'", or NULL */
    int nheuristics;
    /* @triton.heuristics(host_fn()) or (values=NAME) that host Python binds:
     * the launch passes the constexprs it would compute */
    bool heuristics_from_host;
    /* @triton.jit(do_not_specialize=[...]) (names or indices of
     * parameters; do_not_specialize_on_alignment's too): per parameter,
     * whether launches leave it unspecialised; NULL when none is */
    bool *no_specialize;
} KernelSig;
/* One autotune config: constexpr values plus launch settings (0: not given). */
typedef struct KernelConfig {
    SpecDefine *defines;
    int ndefines;
    int num_warps;
    int num_stages;
} KernelConfig;
/* Evaluates a heuristic lambda with the launch arguments by name (args['n']
 * or a parameter of the same name); false after reporting to d, also for
 * an entry that host code computes. */
bool sema_eval_heuristic(const Node *module, const Node *lambda, const char *const *names,
                         const ConstValue *values, int n, Arena *a, Diag *d, ConstValue *out);
bool sema_kernel_sig(const Node *module, const char *kernel, Arena *a, KernelSig *out);
/* Builds the IR of one kernel. Returns NULL after reporting errors. */
IrFunc *sema_specialize(const Node *module, const Source *src, const SpecRequest *req, Arena *a,
                        Diag *d);

#endif
