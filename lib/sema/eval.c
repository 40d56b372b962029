/* sema/eval.c: evaluates expression nodes to values: names, literals,
 * operators, calls, attributes (x.dtype, x.shape, x.T, methods) and
 * subscripts (x[:, None], tuple[i]). Compile-time values stay compile-time;
 * everything else becomes IR through sema/expr.c. */
#include <string.h>

#include "sema/spec.h"

static SVal int_literal(Sema *s, const Node *n)
{
    if (n->flags & NF_BIG_INT) {
        SVal v = sv_int((int64_t)n->uval);
        v.big = true;
        return v;
    }
    TK_UNUSED(s);
    return sv_int(n->ival);
}

static SVal eval_boolop(Sema *s, const Node *n)
{
    SVal a = sema_eval(s, n->a);
    if (a.k == SV_UNDEF)
        return a;
    if (a.k != SV_TENSOR) {
        /* Python's short-circuit on a compile-time left operand */
        bool t;
        if (!sema_truth(s, a, n->a->span, &t))
            return (SVal){.k = SV_UNDEF};
        if ((n->op == OP_AND && !t) || (n->op == OP_OR && t))
            return a;
        return sema_eval(s, n->b);
    }
    SVal b = sema_eval(s, n->b);
    if (b.k == SV_UNDEF)
        return b;
    if (b.k != SV_TENSOR) {
        /* a tensor, then a compile-time value: as in Triton, the value is
         * the result where it decides it (false for `and`, true for `or`),
         * so `if pid == last and STORE:` is a static if; else the tensor is */
        bool t;
        if (!sema_truth(s, b, n->b->span, &t))
            return (SVal){.k = SV_UNDEF};
        return (n->op == OP_AND && !t) || (n->op == OP_OR && t) ? b : a;
    }
    IrValue *x = sema_to_bool(s, a.v, n->span);
    IrValue *y = sema_to_bool(s, sema_to_tensor(s, b, n->b->span), n->span);
    if (!x || !y || !sema_broadcast_pair(s, &x, &y, n->span))
        return (SVal){.k = SV_UNDEF};
    return sv_tensor(ir_binary(&s->b, n->op == OP_AND ? IR_AND : IR_OR, n->span, x, y, x->type));
}

/* a < b < c means (a < b) and (b < c), each operand evaluated once. */
static SVal eval_compare(Sema *s, const Node *n)
{
    SVal left = sema_eval(s, n->list.items[0]);
    SVal result = sv_bool(true);
    for (int i = 1; i < n->list.len; i++) {
        SVal right = sema_eval(s, n->list.items[i]);
        SVal r = sema_compare(s, n->cmp_ops[i - 1], left, right, n->span);
        if (r.k == SV_UNDEF)
            return r;
        if (i == 1)
            result = r;
        else if (result.k != SV_TENSOR && r.k != SV_TENSOR)
            result = sv_bool(result.i && r.i);
        else
            result = sema_binary(s, OP_BITAND, result, r, n->span);
        left = right;
    }
    return result;
}

static SVal eval_ifexp(Sema *s, const Node *n)
{
    SVal c = sema_eval(s, n->b);
    if (c.k == SV_UNDEF)
        return c;
    if (c.k != SV_TENSOR) {
        bool t;
        if (!sema_truth(s, c, n->b->span, &t))
            return (SVal){.k = SV_UNDEF};
        return sema_eval(s, t ? n->a : n->c);
    }
    if (s->pred) /* in tl.map_elementwise's function: each side under its mask */
        return sema_pred_ifexp(s, n, c.v);
    SVal args[3] = {c};
    if (c.v->type.rank == 0) {
        SVal r;
        if (sema_ifexp_branch(s, n, c.v, args + 1, &r))
            return r;
    } else { /* a block condition: tk's extension, elementwise like tl.where */
        args[1] = sema_eval(s, n->a);
        args[2] = sema_eval(s, n->c);
    }
    Span at[3] = {n->b->span, n->a->span, n->c->span};
    CallArgs ca = {.pos = args, .pos_at = at, .npos = 3, .at = n->span};
    return sema_call_builtin(s, "tl", "where", (SVal){.k = SV_VOID}, &ca);
}

/* [f(x) for x in t if c]: unrolled over a compile-time tuple, as Triton
 * does (or a range of compile-time ints); the name is bound for the comprehension only (Python 3). A
 * condition must be a compile-time value (Triton would ignore it). */
/* range(...) of compile-time ints as a tuple, for a comprehension (a
 * @triton.constexpr_function's body is Python: [2 * i for i in range(n)]). */
static SVal range_tuple(Sema *s, const Node *call)
{
    CallArgs ca;
    int64_t b[3] = {0, 0, 1};
    if (!sema_eval_args(s, call, &ca))
        return (SVal){.k = SV_UNDEF};
    if (ca.npos < 1 || ca.npos > 3 || ca.nkw)
        return sema_err(s, call->span, "range() takes one to three numbers");
    for (int i = 0; i < ca.npos; i++)
        if (!sema_const_int(s, ca.pos[i], ca.pos_at[i], "a comprehension's range bound",
                            &b[ca.npos == 1 ? 1 : i]))
            return (SVal){.k = SV_UNDEF};
    if (b[2] == 0)
        return sema_err(s, call->span, "range() step must not be zero");
    int64_t n = b[2] > 0 ? (b[1] - b[0] + b[2] - 1) / b[2] : (b[0] - b[1] - b[2] - 1) / -b[2];
    n = n < 0 ? 0 : n;
    if (n > 4096)
        return sema_err(s, call->span, "a comprehension over %lld items is too long", (long long)n);
    SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(n + 1));
    for (int64_t i = 0; items && i < n; i++)
        items[i] = sv_int(b[0] + i * b[2]);
    return items ? sv_tuple(s, items, (int)n) : (SVal){.k = SV_UNDEF};
}

static SVal eval_listcomp(Sema *s, const Node *n)
{
    const Node *src = n->c;
    bool is_range = src->kind == N_CALL && src->a->kind == N_NAME && !strcmp(src->a->name, "range");
    SVal it = is_range ? range_tuple(s, src) : sema_eval(s, src);
    if (it.k == SV_UNDEF)
        return it;
    if (it.k != SV_TUPLE)
        return sema_err(s, n->c->span, "a comprehension in a kernel runs over a tuple, not %s",
                        sv_describe(s, it));
    if (n->b->kind != N_NAME)
        return sema_err(s, n->b->span, "a comprehension in a kernel binds one name");
    Span *was_at = NULL;
    SVal *was = env_lookup(s->env, n->b->name, &was_at);
    SVal saved = was ? *was : (SVal){.k = SV_UNDEF, .s = "a comprehension's name"};
    Span saved_at = was_at ? *was_at : n->b->span;
    SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(it.n + 1));
    int k = 0;
    bool ok = items != NULL;
    for (int i = 0; ok && i < it.n; i++) {
        env_set(s, s->env, n->b->name, it.items[i], n->b->span);
        bool keep = true;
        for (int c = 0; ok && keep && c < n->list.len; c++) {
            const Node *cond = n->list.items[c];
            SVal cv = sema_eval(s, cond);
            if (cv.k == SV_TENSOR) {
                sema_err(s, cond->span, "a comprehension's 'if' needs a compile-time value");
                ok = false;
            } else {
                ok = cv.k != SV_UNDEF && sema_truth(s, cv, cond->span, &keep);
            }
        }
        if (ok && keep) {
            items[k] = sema_eval(s, n->a);
            ok = items[k++].k != SV_UNDEF;
        }
    }
    env_set(s, s->env, n->b->name, saved, saved_at);
    return ok ? sv_tuple(s, items, k) : (SVal){.k = SV_UNDEF};
}

static SVal eval_seq(Sema *s, const Node *n)
{
    SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(n->list.len + 1));
    for (int i = 0; i < n->list.len; i++) {
        items[i] = sema_eval(s, n->list.items[i]);
        if (items[i].k == SV_UNDEF)
            return items[i];
    }
    return sv_tuple(s, items, n->list.len);
}

/* ---- attributes ---------------------------------------------------------------- */

static SVal shape_tuple(Sema *s, Type t)
{
    SVal dims[TK_MAX_RANK];
    for (int i = 0; i < t.rank; i++)
        dims[i] = sv_int(t.shape[i]);
    return sv_tuple(s, dims, t.rank);
}

static SVal tensor_attr(Sema *s, SVal x, const char *name, Span at)
{
    Type t = x.v->type;
    if (!strcmp(name, "dtype"))
        return sv_dtype(type_elem(t));
    if (!strcmp(name, "type"))
        return sv_value_type(t);
    if (!strcmp(name, "shape"))
        return shape_tuple(s, t);
    if (!strcmp(name, "numel"))
        return sv_int(type_numel(t));
    if (!strcmp(name, "ndim"))
        return sv_int(t.rank);
    if (!strcmp(name, "T")) {
        CallArgs none = {.at = at};
        return sema_call_builtin(s, "tl", "trans", x, &none);
    }
    return sema_method(s, x, name, at);
}

/* A dtype's .name: its str() text, as Triton's (int64, fp32, pointer<fp16>,
 * fp16[16, 16] for a block type). */
static SVal dtype_str(Sema *s, SVal d)
{
    StrBuf sb;
    sb_init(&sb);
    SVal r = sema_value_text(s, &sb, d, 's') && !sb.oom ? sv_str(arena_strdup(s->a, sb.data))
                                                        : (SVal){.k = SV_UNDEF};
    sb_free(&sb);
    return r;
}

/* The attributes of Triton's block_type (x.type of a block): element_ty
 * and scalar are the dtype of its elements, a pointer for a block of
 * pointers; shape and numel as the block's; name as str() writes it. The
 * bit widths belong to the element dtype alone, as in Triton. */
static SVal block_type_attr(Sema *s, SVal d, const char *name, Span at)
{
    if (!strcmp(name, "element_ty") || !strcmp(name, "scalar"))
        return sv_dtype(type_elem(d.ty));
    if (!strcmp(name, "shape"))
        return shape_tuple(s, d.ty);
    if (!strcmp(name, "numel"))
        return sv_int(type_numel(d.ty));
    if (!strcmp(name, "name"))
        return dtype_str(s, d);
    if (!strcmp(name, "primitive_bitwidth") || !strcmp(name, "int_bitwidth"))
        return sema_err(s, at,
                        "the block type %s has no attribute '%s' (its .element_ty, the "
                        "dtype of its elements, has)",
                        sema_type_str(s, d.ty), name);
    return sema_method(s, d, name, at);
}

static SVal dtype_attr(Sema *s, SVal d, const char *name, Span at)
{
    Type t = d.ty;
    if (sv_is_block_type(d))
        return block_type_attr(s, d, name, at);
    if (!strcmp(name, "element_ty")) {
        if (t.dt == DT_PTR && t.rank > 0) /* a block pointer's: the block it points to */
            return sv_dtype(type_block(t.elem, t.rank, t.shape));
        if (t.dt != DT_PTR)
            return sema_err(s, at, "'element_ty' is only defined on pointer dtypes, not %s",
                            sema_type_str(s, t));
        return sv_dtype(type_scalar(t.elem));
    }
    if (!strcmp(name, "scalar")) /* a dtype's is itself */
        return d;
    if (!strcmp(name, "primitive_bitwidth") || !strcmp(name, "int_bitwidth"))
        return sv_int(dtype_bits(t.dt));
    if (!strcmp(name, "name"))
        return dtype_str(s, d);
    return sema_method(s, d, name, at);
}

static SVal eval_attr(Sema *s, const Node *n)
{
    SVal base = sema_eval(s, n->a);
    /* tl.constexpr's .value: a constexpr is its own value here */
    if (base.k != SV_UNDEF && sv_is_const(base) && strcmp(n->name, "value") == 0)
        return base;
    switch (base.k) {
    case SV_UNDEF: return base;
    case SV_NS: return sema_builtin_attr(s, base.s, n->name, n->span);
    case SV_MODULE: return sema_module_attr(s, base, n->name, n->span);
    case SV_TENSOR: return tensor_attr(s, base, n->name, n->span);
    case SV_DTYPE: return dtype_attr(s, base, n->name, n->span);
    case SV_DESC: return sema_desc_attr(s, base, n->name, n->span);
    default: break;
    }
    /* A block pointer's type is Triton's pointer<block<T>>: .dtype and .type
     * give it, .element_ty the block, whose .element_ty is T, and x.to() of
     * either block type casts to T. */
    if (base.k == SV_BLOCKPTR && (!strcmp(n->name, "dtype") || !strcmp(n->name, "type")))
        return sv_dtype(
            type_with_shape(type_ptr(type_elem(base.ty).dt), base.ty.rank, base.ty.shape));
    if (sv_is_num(base) || base.k == SV_BLOCKPTR || base.k == SV_STR)
        return sema_method(s, base, n->name, n->span);
    return sema_err(s, n->span, "%s has no attribute '%s'", sv_describe(s, base), n->name);
}

/* ---- subscripts -------------------------------------------------------------------- */

static bool full_slice(const Node *i) { return i->kind == N_SLICE && !i->a && !i->b && !i->c; }

static SVal index_tensor(Sema *s, const Node *n, IrValue *x)
{
    for (int k = 0; k < n->list.len; k++) {
        const Node *i = n->list.items[k];
        if (!full_slice(i) && i->kind != N_NONE)
            return sema_err(s, i->span,
                            "tensors can only be indexed with ':' and None "
                            "(e.g. x[:, None]); got something else");
    }
    /* As Triton's __getitem__: entry k that is None inserts a dimension at
     * k, ':' keeps what is there; fewer entries than dimensions keep the
     * rest (x[None] on a 1-D block is x[None, :]), and ':' past the last
     * dimension adds none (a scalar's [None, None, :] is 1x1). */
    for (int k = 0; k < n->list.len && x; k++) {
        if (n->list.items[k]->kind != N_NONE)
            continue;
        if (x->type.rank > 0 && k > x->type.rank)
            return sema_err(s, n->list.items[k]->span,
                            "None at index entry %d, past the %d dimensions of %s", k, x->type.rank,
                            sema_type_str(s, x->type));
        x = sema_expand_dims(s, x, k, n->span);
    }
    return x ? sv_tensor(x) : (SVal){.k = SV_UNDEF};
}

/* One bound of a tuple slice: a constexpr int, or dflt when left out. */
static bool slice_bound(Sema *s, const Node *e, int64_t dflt, int64_t *out)
{
    if (!e) {
        *out = dflt;
        return true;
    }
    SVal v = sema_eval(s, e);
    if (v.k == SV_NONE) {
        *out = dflt;
        return true;
    }
    return v.k != SV_UNDEF && sema_const_int(s, v, e->span, "a tuple slice bound", out);
}

static int64_t clamp_bound(int64_t i, int64_t n, bool neg_step)
{
    if (i < 0)
        i += n;
    int64_t lo = neg_step ? -1 : 0, hi = neg_step ? n - 1 : n;
    return i < lo ? lo : i > hi ? hi : i;
}

/* t[lo:hi:step] with constexpr bounds, as Python slices a tuple. */
static SVal slice_tuple(Sema *s, SVal t, const Node *sl)
{
    int64_t step, lo, hi;
    if (!slice_bound(s, sl->c, 1, &step))
        return (SVal){.k = SV_UNDEF};
    if (step == 0)
        return sema_err(s, sl->c->span, "a tuple slice's step cannot be zero");
    bool neg = step < 0;
    if (!slice_bound(s, sl->a, neg ? t.n - 1 : 0, &lo) ||
        !slice_bound(s, sl->b, neg ? -(int64_t)t.n - 1 : t.n, &hi))
        return (SVal){.k = SV_UNDEF};
    lo = clamp_bound(lo, t.n, neg), hi = clamp_bound(hi, t.n, neg);
    SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(t.n + 1));
    int k = 0;
    for (int64_t i = lo; neg ? i > hi : i < hi; i += step)
        items[k++] = t.items[i];
    return sv_tuple(s, items, k);
}

static SVal eval_subscript(Sema *s, const Node *n)
{
    SVal base = sema_eval(s, n->a);
    if (base.k == SV_UNDEF)
        return base;
    if (base.k == SV_TENSOR)
        return index_tensor(s, n, base.v);
    if (base.k == SV_TUPLE && n->list.len == 1 && n->list.items[0]->kind == N_SLICE)
        return slice_tuple(s, base, n->list.items[0]);
    if (base.k == SV_TUPLE && n->list.len == 1) {
        SVal iv = sema_eval(s, n->list.items[0]);
        int64_t i;
        if (!sema_const_int(s, iv, n->list.items[0]->span, "a tuple index", &i))
            return (SVal){.k = SV_UNDEF};
        int64_t at = i < 0 ? i + base.n : i;
        if (at < 0 || at >= base.n)
            return sema_err(s, n->span, "tuple index %lld out of range (the tuple has %d item%s)",
                            (long long)i, base.n, base.n == 1 ? "" : "s");
        return base.items[at];
    }
    if (base.k == SV_CONFIG && n->list.len == 1) { /* args['name'] in a heuristic */
        SVal key = sema_eval(s, n->list.items[0]);
        for (int i = 0; key.k == SV_STR && i < base.n; i++)
            if (!strcmp(base.items[2 * i].s, key.s))
                return base.items[2 * i + 1];
        return sema_err(s, n->span, "no launch argument named %s", sv_describe(s, key));
    }
    if (base.k == SV_DTYPE || base.k == SV_BUILTIN) /* tl.constexpr[...] style annotations */
        return base;
    return sema_err(s, n->span, "%s cannot be indexed", sv_describe(s, base));
}

/* ---- calls ------------------------------------------------------------------------------ */

bool sema_eval_args(Sema *s, const Node *n, CallArgs *ca)
{
    int cap = n->list.len + 1;
    for (int i = 0; i < n->list.len; i++)
        if (n->list.items[i]->kind == N_STARRED)
            cap += 16;
    *ca = (CallArgs){.at = n->span};
    ca->pos = arena_alloc(s->a, sizeof(SVal) * (size_t)cap);
    ca->pos_at = arena_alloc(s->a, sizeof(Span) * (size_t)cap);
    for (int i = 0; i < n->list.len; i++) {
        const Node *arg = n->list.items[i];
        if (arg->kind == N_STARRED) {
            SVal t = sema_eval(s, arg->a);
            if (t.k == SV_UNDEF)
                return false;
            if (t.k != SV_TUPLE) {
                sema_err(s, arg->span, "'*' needs a tuple, got %s", sv_describe(s, t));
                return false;
            }
            for (int j = 0; j < t.n && ca->npos < cap; j++) {
                ca->pos_at[ca->npos] = arg->span;
                ca->pos[ca->npos++] = t.items[j];
            }
            continue;
        }
        ca->pos_at[ca->npos] = arg->span;
        ca->pos[ca->npos] = sema_eval(s, arg);
        if (ca->pos[ca->npos].k == SV_UNDEF)
            return false;
        ca->npos++;
    }
    ca->nkw = n->list2.len;
    ca->kw = arena_alloc(s->a, sizeof(char *) * (size_t)(ca->nkw + 1));
    ca->kwv = arena_alloc(s->a, sizeof(SVal) * (size_t)(ca->nkw + 1));
    ca->kw_at = arena_alloc(s->a, sizeof(Span) * (size_t)(ca->nkw + 1));
    for (int i = 0; i < ca->nkw; i++) {
        const Node *kw = n->list2.items[i];
        ca->kw[i] = kw->name;
        ca->kw_at[i] = kw->span;
        ca->kwv[i] = sema_eval(s, kw->a);
        if (ca->kwv[i].k == SV_UNDEF)
            return false;
    }
    return true;
}

static SVal eval_call(Sema *s, const Node *n)
{
    SVal callee = sema_eval(s, n->a);
    if (callee.k == SV_UNDEF)
        return callee;
    CallArgs ca;
    if (!sema_eval_args(s, n, &ca))
        return (SVal){.k = SV_UNDEF};
    return sema_call(s, callee, &ca);
}

SVal sema_eval(Sema *s, const Node *n)
{
    if (!n)
        return sv_none();
    switch (n->kind) {
    case N_NAME: return sema_lookup(s, n->name, n->span);
    case N_INT: return int_literal(s, n);
    case N_FLOAT: return sv_float(n->fval);
    case N_STR: return sv_str(n->str ? n->str : "");
    case N_FSTR: return sema_fstring(s, n);
    case N_TRUE: return sv_bool(true);
    case N_FALSE: return sv_bool(false);
    case N_NONE: return sv_none();
    case N_BINOP: {
        SVal a = sema_eval(s, n->a);
        SVal b = sema_eval(s, n->b);
        if (n->op == OP_MATMUL) {
            if (a.k == SV_UNDEF || b.k == SV_UNDEF)
                return (SVal){.k = SV_UNDEF};
            if (a.k != SV_TENSOR || b.k != SV_TENSOR)
                return sema_err(s, n->span, "'@' needs two tensors, got %s and %s",
                                sv_describe(s, a), sv_describe(s, b));
            SVal none = {.k = SV_VOID};
            return sema_dot(s, a.v, b.v, none, none, none, none, n->span);
        }
        return sema_binary(s, n->op, a, b, n->span);
    }
    case N_UNARY: return sema_unary(s, n->op, sema_eval(s, n->a), n->span);
    case N_BOOLOP: return eval_boolop(s, n);
    case N_COMPARE: return eval_compare(s, n);
    case N_CALL: return eval_call(s, n);
    case N_ATTR: return eval_attr(s, n);
    case N_SUBSCRIPT: return eval_subscript(s, n);
    case N_TUPLE:
    case N_LIST: return eval_seq(s, n);
    case N_LISTCOMP: return eval_listcomp(s, n);
    case N_ELLIPSIS: return (SVal){.k = SV_VOID}; /* `...` as a statement: nothing */
    case N_IFEXP: return eval_ifexp(s, n);
    case N_NAMEDEXPR: { /* name := value: binds the name, gives the value */
        SVal v = sema_eval(s, n->b);
        if (v.k != SV_UNDEF)
            sema_assign(s, n->a, v, n->span);
        return v;
    }
    case N_SLICE: return (SVal){.k = SV_SLICE};
    case N_PTR_TYPE: {
        DType dt = sema_dtype_name(n->name);
        if (dt == DT_VOID)
            return sema_err(s, n->span, "unknown element type '%s'", n->name);
        return sv_dtype(type_ptr(dt));
    }
    case N_LAMBDA: return sema_err(s, n->span, "lambda is only allowed in decorators");
    case N_DICT: return sema_err(s, n->span, "dictionaries are only allowed in decorators");
    case N_STARRED: return sema_err(s, n->span, "'*' is only allowed in call arguments");
    default: break;
    }
    return sema_err(s, n->span, "'%s' is not an expression", ast_kind_name(n->kind));
}
