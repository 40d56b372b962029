/* spec.h: the private map of lib/sema/ (and its builtins/), what its files
 * share. A specialisation walks the AST of one kernel with an environment
 * of compile-time and runtime values (SVal), emitting typed IR through one
 * builder; helpers are inlined by walking their bodies with a fresh
 * environment. Internal to lib/sema/; sema/sema.h is its interface. */
#ifndef TK_SEMA_SPEC_H
#define TK_SEMA_SPEC_H

#include "sema/sema.h"

/* X(kind, what it holds) */
typedef enum {
    SV_VOID,     /* no value (absent argument, statement result) */
    SV_UNDEF,    /* a name that may not be used here; s = why */
    SV_NONE,     /* Python None */
    SV_INT,      /* constexpr int: i (big: u64 beyond INT64_MAX, in i's bits) */
    SV_FLOAT,    /* constexpr float: f */
    SV_BOOL,     /* constexpr bool: i */
    SV_DTYPE,    /* constexpr dtype: ty (scalar or pointer), or Triton's block_type (x.type
                  * of a block: ty with a shape); a pointer with a shape is a block
                  * pointer's pointer<block<T>>, or with i = 1 a block of pointers */
    SV_STR,      /* constexpr string: s */
    SV_TUPLE,    /* items[0..n) */
    SV_TENSOR,   /* runtime value (scalar or block): v */
    SV_FUNC,     /* @jit function: fn */
    SV_NS,       /* namespace: s = "tl", "tl.math", "libdevice", "triton", "math", ... */
    SV_BUILTIN,  /* builtin callable: s = name, ns = namespace; items = bound self (n = 1) */
    SV_SLICE,    /* ':' inside a subscript */
    SV_CONFIG,   /* a heuristic's args dict: items = name0, value0, name1, value1, ... */
    SV_MODULE,   /* another file of the package (`import pkg.utils as u`): fn = its N_MODULE */
    SV_BLOCKPTR, /* tl.make_block_ptr: ty = elem + block shape, i = order (4 bits a dim),
                  * items = base, shape[r], strides[r], offsets[r] (sema/builtins/blockptr.c) */
    SV_DESC,     /* tensor descriptor: ty = elem + block shape, i = DESC_* bits,
                  * items = base, shape[r], strides[r] */
} SvKind;

typedef struct SVal SVal;
struct SVal {
    SvKind k;
    bool big;
    int64_t i;
    double f;
    Type ty;
    const char *s;
    const char *ns;
    SVal *items;
    int n;
    IrValue *v;
    const Node *fn;
    const Source *src; /* SV_UNDEF with fn (a host condition): the file fn is in */
};

/* A name bound in an environment; `at` is where it was last assigned. */
typedef struct Binding {
    const char *name;
    SVal val;
    Span at;
} Binding;

/* Names are unique in an Env; once it holds more than ENV_INDEX_MIN of
 * them (a module's globals: every function of the file) `index` maps each
 * to its place in b, so binding and finding stay constant-time. */
enum { ENV_INDEX_MIN = 16 };
typedef struct Env {
    Binding *b;
    int n, cap;
    NameMap index; /* empty until n passes ENV_INDEX_MIN */
} Env;

/* A pending "rest of the body": statements run after an if-branch falls
 * through, so an early `return` inside a runtime `if` needs no CFG. */
typedef struct Cont {
    const NodeList *list;
    int from;
    struct Cont *next;
} Cont;

/* Arguments of a call, evaluated. */
typedef struct CallArgs {
    SVal *pos;
    Span *pos_at;
    int npos;
    const char **kw;
    SVal *kwv;
    Span *kw_at;
    int nkw;
    Span at; /* the whole call */
} CallArgs;

/* The globals of another file of the package, bound on first use. */
typedef struct SemaModule {
    const Node *module;
    Env env;
} SemaModule;

/* Per-element control flow inside tl.map_elementwise's scalar function
 * (sema/predicate.c): the function runs on blocks, so a branch or loop on
 * an element's value runs for every element and its effects are kept only
 * where the element's path goes. One per inlined function. */
typedef struct SemaPred {
    Type shape;    /* i1 block of the mapped shape (what every element value has) */
    IrValue *mask; /* elements whose path reaches the current statement; NULL: all */
    IrValue *done; /* elements that have returned; NULL: none */
    SVal ret;      /* what they returned, merged; SV_VOID before the first return */
    bool nested;   /* called under a per-element condition of an outer map */
} SemaPred;

typedef struct Sema {
    Arena *a;
    Arena *env_a; /* the bindings' (NULL: a): freed when sema ends, as nothing of the
                     IR points into them; the module's globals, bound for each
                     specialisation, would otherwise stay with a kept IR (the
                     interpreter's) */
    Diag *d;
    const Source *src;  /* the file of the code being read (changes with module) */
    const Node *module; /* the module whose code runs now */
    const Node *root;   /* the kernel's module */
    IrFunc *f;
    IrBuilder b;
    Env *globals; /* module's globals: &root_globals or an entry of mods */
    Env root_globals;
    SemaModule **mods;
    int nmods, capmods;
    Env *env;
    const Node *stack[64]; /* inlined call chain, for recursion errors */
    int depth;
    bool returned;    /* the current path has executed `return` */
    int loop_depth;   /* runtime loops around the current statement */
    int64_t unrolled; /* static_range bodies run so far (nested loops multiply) */
    int errors_at_start;
    PtrVec const_ptrs;   /* parameters annotated tl.const: nothing may be stored through them */
    SemaPred *pred;      /* inside tl.map_elementwise's function; NULL elsewhere */
    int const_fn;        /* inside @triton.constexpr_functions: Python loops run here */
    int module_const;    /* binding a module constant: the module's own Python defs may run */
    PtrVec const_fns;    /* the constexpr functions read so far (sema/constexpr_fn.c) */
    PtrVec bad_assigns;  /* assignments already reported by sema/stmt.c, once each */
    IrValue *grid[2][3]; /* program ids and counts asked for inside loops, made once at the
                            kernel's top (core.c's b_grid) */
    bool debug;          /* SpecRequest.debug: runtime asserts are kept */
} Sema;

/* ---- values (sema/expr.c) ---- */
SVal sv_int(int64_t i);
SVal sv_float(double f);
SVal sv_bool(bool b);
SVal sv_none(void);
SVal sv_tensor(IrValue *v);
SVal sv_dtype(Type t);
SVal sv_value_type(Type t);    /* x.type: a scalar's dtype, a block's block_type */
bool sv_is_block_type(SVal v); /* an SV_DTYPE that is a block_type */
SVal sv_str(const char *s);
SVal sv_tuple(Sema *s, const SVal *items, int n);
bool sv_is_num(SVal v); /* int, float or bool constexpr */
bool sv_is_const(SVal v);
const char *sv_describe(Sema *s, SVal v); /* "<32xfp32>", "constexpr int 3", ... */
const char *sema_type_str(Sema *s, Type t);

/* Diagnostics; always return a void value so callers can `return sema_err(...)`. */
SVal sema_err(Sema *s, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- module scope and decorators (sema.c, sema/tune.c) ---- */
/* Starts a Sema on `module`: its globals bound, the current environment. */
void sema_open(Sema *s, const Node *module);
void sema_bind_globals(Sema *s);

/* ---- other files of the package (sema/modules.c) ---- */
/* Where the code of another module runs: saved by enter, given back to leave. */
typedef struct SemaScope {
    const Node *module;
    const Source *src;
    Env *globals;
} SemaScope;
/* Makes `module`'s globals the module scope (binding them on first use);
 * diagnostics show that file. */
SemaScope sema_enter_module(Sema *s, const Node *module);
void sema_leave_module(Sema *s, SemaScope saved);
/* The module that defines a function (the current one if none does). */
const Node *sema_module_of(Sema *s, const Node *fn);
/* Binds what an import of a package file (N_IMPORT/N_FROM_IMPORT with a
 * target) names, replacing the host names of the import. */
void sema_bind_package_import(Sema *s, const Node *imp);
const char *sema_module_file(const Node *module);
/* mod.name for an SV_MODULE. */
SVal sema_module_attr(Sema *s, SVal mod, const char *name, Span at);
void sema_tune_configs(Sema *s, const Node *fn, KernelSig *out);

/* ---- environments (sema.c) ---- */
SVal *env_lookup(Env *e, const char *name, Span **at);
void env_set(Sema *s, Env *e, const char *name, SVal v, Span at);
Env env_copy(Sema *s, const Env *e);
SVal sema_lookup(Sema *s, const char *name, Span at);

/* ---- expressions (sema/expr.c) ---- */
SVal sema_eval(Sema *s, const Node *n);
SVal sema_fstring(Sema *s, const Node *n);
/* v's text as str() (conv 0 or 's') or repr() ('r', 'a') writes it; false
 * when v is no compile-time value (sema/fstring.c). */
bool sema_value_text(Sema *s, StrBuf *out, SVal v, int conv);
/* importlib, to find triton's modules (sema/builtins/importlib.c); the
 * namespace a module path names, or NULL (sema.c). */
SVal sema_importlib_attr(Sema *s, const char *ns, const char *name, Span at);
SVal sema_importlib_call(Sema *s, const char *ns, const char *name, CallArgs *ca);
const char *sema_module_ns(const char *path);
/* triton.language.target_info (sema/builtins/target.c). */
bool sema_target_known(const char *name);
SVal sema_target_attr(Sema *s, const char *name, Span at);
SVal sema_target_call(Sema *s, const char *name, CallArgs *ca);
/* Python's string methods and `%` formatting (sema/builtins/str.c). */
bool sema_str_method_known(const char *name);
SVal sema_str_call(Sema *s, SVal self, const char *name, CallArgs *ca);
SVal sema_str_percent(Sema *s, SVal fmt, SVal args, Span at);
bool sema_tl_class(const char *name);
/* tl.tensor, tl.tensor_descriptor, ...: classes */ /* an N_FSTR's constexpr string (sema/fstring.c) */
bool sema_eval_args(Sema *s, const Node *call, CallArgs *out);
/* States hint `kind` (HINT_MULTIPLE_OF...) with per-dim values about x, as
 * tl.multiple_of does; returns the value uses should read. */
SVal sema_hint(Sema *s, IrValue *x, int kind, const int *vals, int n, Span call);
SVal sema_binary(Sema *s, int op, SVal a, SVal b, Span at);
SVal sema_unary(Sema *s, int op, SVal a, Span at);
SVal sema_compare(Sema *s, int op, SVal a, SVal b, Span at);
IrValue *sema_to_tensor(Sema *s, SVal v, Span at);          /* NULL after an error */
IrValue *sema_const(Sema *s, Type t, SVal c, Span at);      /* constexpr as type t */
IrValue *sema_cast(Sema *s, IrValue *v, DType to, Span at); /* keeps the shape */
IrValue *sema_bitcast(Sema *s, IrValue *v, DType to, Span at);
IrValue *sema_broadcast(Sema *s, IrValue *v, int rank, const int *shape, Span at);
/* The shape a and b broadcast to (rank, shape); returns the first
 * dimension where they do not (-1: none), reporting nothing. */
int sema_common_shape(Type a, Type b, int *rank, int *shape);
bool sema_broadcast_shapes(Sema *s, Type a, Type b, int *rank, int *shape, Span at);
bool sema_broadcast_pair(Sema *s, IrValue **a, IrValue **b, Span at);
DType sema_promote(Sema *s, DType a, bool a_weak, DType b, bool b_weak, bool divmod, Span at);
DType sema_literal_dtype(SVal v);
bool sema_truth(Sema *s, SVal v, Span at, bool *out); /* constexpr truth value */
bool sema_const_int(Sema *s, SVal v, Span at, const char *what, int64_t *out);
IrValue *sema_to_bool(Sema *s, IrValue *v, Span at);
IrValue *sema_reshape(Sema *s, IrValue *v, int rank, const int *shape, Span at);
IrValue *sema_expand_dims(Sema *s, IrValue *v, int axis, Span at);
IrValue *sema_math(Sema *s, MathFn fn, IrValue *x, Span at); /* fp16/bf16 computed in fp32 */
/* fp8 values only move, convert and feed tl.dot: arithmetic on them (what
 * Triton accepts and then fails to lower) is an error naming `what`.
 * Returns false after reporting it. */
bool sema_check_not_fp8(Sema *s, DType dt, Span at, const char *what);
/* Whether a value cast between these dtypes exists (fp8 converts to and
 * from floats only, and to fp8e4b15 only from fp16 and fp32, as in
 * Triton); reports the error when not. */
bool sema_check_cast(Sema *s, DType from, DType to, Span at);
bool sema_binary_operands(Sema *s, SVal a, SVal b, bool divmod, IrValue **x, IrValue **y, Span at);
bool sema_block_shape(Sema *s, SVal shape, Span at, int *rank, int *dims);
/* Triton's TRITON_MAX_TENSOR_NUMEL: no block may hold more elements. Every
 * op that makes a block larger than its operands (broadcast, join, cat,
 * dot) checks its shape here, so shape products never overflow. */
#define SEMA_MAX_NUMEL (1 << 20)
bool sema_check_numel(Sema *s, int rank, const int *shape, Span at);

/* ---- builtins: each the files of sema/builtins/ file contributes a table ---- */
typedef struct Builtin Builtin;
typedef SVal (*BuiltinFn)(Sema *s, const Builtin *b, SVal *a, Span *at, Span call);
struct Builtin {
    const char *name;
    const char *params; /* "x,axis=,keep_dims=": '=' optional, '*' collects the rest */
    BuiltinFn fn;
    int arg;     /* a per-entry constant: MathFn, ReduceKind, AtomicKind... */
    bool method; /* also callable as x.name(...) */
};
typedef struct BuiltinTable {
    const Builtin *items;
    int n;
} BuiltinTable;
extern const BuiltinTable sema_tl_core, sema_tl_memory, sema_tl_reduce, sema_tl_shape,
    sema_tl_python, sema_tl_random;
/* sema/builtins/asm.c: tl.inline_asm_elementwise (in the tl tables), and
 * the functions of triton.language.extra.cuda (gdc_wait, ...). */
extern const BuiltinTable sema_tl_asm, sema_tl_cuda;
/* sema/builtins/extra.c: tl.add/sub/mul, reduce_or, flip, gather,
 * histogram, the functional descriptor forms (in the tl tables), and the
 * special registers (smid, ...) and fp8e4b15 conversions
 * (convert_custom_float8_sm80, _sm70) of triton.language.extra.cuda. */
extern const BuiltinTable sema_tl_extra, sema_tl_cuda_extra;
/* A value as the integer of its width (i1 as i8) and back, so xor
 * reductions move it exactly (sema/builtins/extra.c). */
IrValue *sema_to_bits(Sema *s, IrValue *x, Span at);
IrValue *sema_from_bits(Sema *s, IrValue *y, DType dt, Span at);
/* sema/builtins/sort.c: tl.sort, tl.topk, tl.bitonic_merge;
 * sema/builtins/lang.c: tl.tuple, tl.condition, tl.const;
 * sema/builtins/mapel.c: tl.map_elementwise. */
extern const BuiltinTable sema_tl_sort, sema_tl_lang, sema_tl_mapel;
/* sema/builtins/dot_scaled.c: tl.dot_scaled, emulated by upcasting. */
extern const BuiltinTable sema_tl_dot_scaled;
bool sv_has(SVal v); /* given and not None */
const char *sema_builtin_display(const Builtin *b);
IrValue *sema_arg_tensor(Sema *s, SVal v, Span at, const Builtin *b, const char *what);

/* ---- calls (sema/builtins.c, sema/inline.c) ---- */
SVal sema_call(Sema *s, SVal callee, CallArgs *args);
SVal sema_builtin_attr(Sema *s, const char *ns, const char *name, Span at);
SVal sema_method(Sema *s, SVal self, const char *name, Span at);
SVal sema_dtype_method(Sema *s, SVal self, const char *name, CallArgs *ca);
SVal sema_libdevice_call(Sema *s, const char *ns, const char *name, CallArgs *ca);
/* libdevice_sigs.c: libdevice functions by their typed signatures */
bool sema_libdevice_has_sig(const char *name);
SVal sema_libdevice_sig_call(Sema *s, const char *ns, const char *name, CallArgs *ca);
SVal sema_call_builtin(Sema *s, const char *ns, const char *name, SVal self, CallArgs *args);
/* torch's dtypes, finfo, iinfo and version.hip (sema/builtins/torch.c) */
SVal sema_torch_attr(Sema *s, const char *ns, const char *name, Span at);
/* torch's dtype of that name ("float16", "half", "long"), or DT_VOID. */
DType sema_torch_dtype(const char *name);
SVal sema_torch_call(Sema *s, const char *name, CallArgs *ca);
SVal sema_inline(Sema *s, const Node *fn, CallArgs *args);
/* Runs the body of def fn (of module owner) on the call's arguments, jit
 * or not: sema_inline's work after its check. */
SVal sema_inline_body(Sema *s, const Node *fn, const Node *owner, CallArgs *args);

/* ---- @triton.constexpr_function (sema/constexpr_fn.c) ---- */
/* The namespace of the SV_BUILTIN a constexpr function's name is bound
 * to: fn is its N_HOST (flagged NF_CONSTEXPR_FN), s its name. */
extern const char sema_constexpr_fn_ns[];
/* Why v, a plain def of the module (NF_HOST_FN) named `name`, may not be
 * used here: outside a module constant's binding, host code; else NULL. */
const char *sema_host_fn_refused(Sema *s, SVal v, const char *name);
SVal sema_constexpr_fn_value(const Node *host);
/* A call of one: its value, compile-time, or an error naming it. */
SVal sema_call_constexpr_fn(Sema *s, SVal callee, CallArgs *args);
/* Runs fn on already-evaluated values (combine functions, helpers). */
SVal sema_inline_values(Sema *s, const Node *fn, const SVal *vals, int n, Span at);

/* ---- block pointers and tensor descriptors (sema/builtins/blockptr.c) ---- */
extern const BuiltinTable sema_tl_blockptr, sema_desc_methods;
/* The block of pointers a block pointer addresses and its mask over the
 * dims boundary_check names (mask SV_VOID when none). */
bool sema_blockptr_access(Sema *s, SVal bp, SVal boundary_check, Span bc_at, Span at, IrValue **ptr,
                          SVal *mask);
/* padding_option's value for out-of-bounds reads (SV_VOID: none given). */
bool sema_padding_value(Sema *s, SVal opt, Span at, DType elem, SVal *other);
SVal sema_desc_attr(Sema *s, SVal desc, const char *name, Span at);
/* A descriptor's bits (SVal.i): NaN padding; Triton's alignment contract
 * stated on its parts (made in the kernel over a contiguous last dim). */
enum { DESC_NAN = 1, DESC_ALIGNED = 2 };
/* States the contract again on the parts of the descriptors in v (in tuples
 * too) that have DESC_ALIGNED: parts that a loop or a branch made new
 * values, each of which has it. */
void sema_desc_contract(Sema *s, SVal *v, Span at);
/* After a `for` whose body moves block pointer offsets args (from init, to
 * yield): drops the `>= 0` mask halves of offsets that only grow. */
void sema_blockptr_loop_done(Sema *s, IrBlock *body, IrValue **args, IrValue **init,
                             IrValue **yield, int n);
/* Host-built descriptor parameters (sema/desc_param.c). */
bool sema_parse_desc(const char *text, ArgSpec *out, const char **why);
void sema_bind_desc_param(Sema *s, const char *name, const ArgSpec *as, Span at);
/* Binds the kernel's parameters for req (sema/params.c); tune names the
 * values @triton.autotune and heuristics would give, for the errors. */
void sema_bind_params(Sema *s, const Node *fn, const SpecRequest *req, const KernelSig *tune);
/* Block pointers and descriptors are carried through loops and branches
 * as their runtime parts, like tuples. */
static inline bool sv_is_struct(SVal v)
{
    return v.k == SV_TUPLE || v.k == SV_BLOCKPTR || v.k == SV_DESC;
}

/* ---- reductions, scans, dot, shapes (sema_reduce.c, sema_shape.c) ---- */
SVal sema_reduce(Sema *s, const char *name, IrValue *x, SVal axis, bool keep_dims, SVal extra,
                 Span at);
SVal sema_reduce_custom(Sema *s, SVal input, SVal axis, SVal fn, bool keep_dims, Span at);
SVal sema_scan(Sema *s, SVal input, SVal axis, SVal fn, bool reverse, int kind, DType dt, Span at);
SVal sema_dot(Sema *s, IrValue *a, IrValue *b, SVal acc, SVal prec, SVal allow_tf32, SVal out_dtype,
              Span at);
int sema_norm_axis(Sema *s, SVal axis, int rank, Span at); /* -1 after an error */

/* ---- statements and control flow (sema.c, sema/flow.c) ---- */
void sema_exec(Sema *s, const NodeList *l, int from, Cont *cont);
void sema_assign(Sema *s, const Node *target, SVal v, Span at);
void sema_exec_if(Sema *s, const Node *n, Cont *cont);
/* Region helpers of sema/flow.c, which sema/loop.c shares: ends a block
 * with a terminator, puts an op built detached (its regions taken from
 * `tmp`) where the builder points, and a value made a tensor at the end of
 * a block. */
void sema_terminate(Sema *s, IrBlock *blk, IrKind k, Span at, IrValue **vals, int n);
IrOp *sema_place_op(Sema *s, IrOp *op, IrOp *tmp);
IrValue *sema_value_in(Sema *s, IrBlock *blk, SVal v, Span at);
/* `a if c else b`, c a runtime scalar: true with the value in *out where
 * a side may not run speculatively (a branch); false with both sides
 * built in place in sides[], for a select. */
bool sema_ifexp_branch(Sema *s, const Node *n, IrValue *cond, SVal sides[2], SVal *out);
void sema_exec_for(Sema *s, const Node *n);
void sema_exec_while(Sema *s, const Node *n);
bool sema_contains_return(const NodeList *l);
/* The reason of the undefined "$ret" where a value is returned on some
 * paths only (compared by identity: a kernel doing so returns a value). */
extern const char sema_partial_return[];
bool sema_same_val(SVal a, SVal b); /* the same IR value or equal compile-time values */

/* ---- per-element control flow in tl.map_elementwise (sema/predicate.c) ---- */
IrValue *sema_pred_active(Sema *s);                     /* the live elements; NULL: all */
IrValue *sema_pred_widen(Sema *s, IrValue *x, Span at); /* x broadcast to the mapped shape */
void sema_pred_if(Sema *s, const Node *n, IrValue *cond, Cont *rest);
void sema_pred_return(Sema *s, SVal v, Span at);
void sema_pred_enter(Sema *s, SemaPred *saved);
SVal sema_pred_leave(Sema *s, const SemaPred *saved);
IrValue *sema_pred_loop_cond(Sema *s, const Node *cond, IrValue *mask, IrValue **next);
SVal sema_pred_ifexp(Sema *s, const Node *n, IrValue *cond);
bool sema_pred_for(Sema *s, const Node *n, const CallArgs *ca);
void sema_pred_loop_yields(Sema *s, IrValue *mask, IrValue **y, IrValue *const *args, int n,
                           Span at);
bool sema_pred_effect_ok(Sema *s, const char *what, Span at);

/* ---- random numbers and scheduling helpers (sema_random.c) ---- */
SVal sema_rand(Sema *s, const char *name, SVal seed, SVal offset, SVal rounds, Span at);
SVal sema_swizzle2d(Sema *s, SVal i, SVal j, SVal si, SVal sj, SVal sg, Span at);

/* ---- constants (sema/const.c) ---- */
SVal sema_fold_binary(Sema *s, int op, SVal a, SVal b, Span at);
SVal sema_fold_compare(Sema *s, int op, SVal a, SVal b, Span at, bool *ok);
/* A constexpr's value; for a name that is no @jit function of the module
 * (or a tuple item that is none), an SV_UNDEF whose s says why. */
SVal sema_from_const(Sema *s, ConstValue c);
/* Whether module-level def fn is decorated with @triton.jit (sema.c). */
bool sema_func_is_jit(const Node *fn);
/* A compile-time value as a ConstValue (a tuple's text in the arena);
 * false for one that has none (a tensor, a function). */
bool sema_to_constvalue(Sema *s, SVal v, ConstValue *out);
bool sema_parse_type(const char *text, Type *t, int *div);
/* A parameter annotation (sema/signature.c): constexpr or not; the type
 * it spells, DT_VOID when none (*bad: it spells something unknown). */
bool sema_annot_is_constexpr(const Node *a);
Type sema_annot_type(const Node *a, bool *bad);
DType sema_dtype_name(const char *name); /* "float16", "fp16", "int1", ... DT_VOID if none */

#endif
