/* ir.c: dtypes, types and the IR builder: creating functions, blocks, values
 * and ops, moving ops around, replacing uses and walking regions.
 * Assumes every object lives in the function's arena; guarantees fresh value
 * ids in creation order (ir_renumber makes them dense again after passes). */
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- dtypes ------------------------------------------------------------- */

static const char *const dtype_names[] = {
#define X(k, n, b) n,
    TK_DTYPES(X)
#undef X
};
static const int dtype_widths[] = {
#define X(k, n, b) b,
    TK_DTYPES(X)
#undef X
};

const char *dtype_name(DType t) { return (unsigned)t < DT_COUNT ? dtype_names[t] : "?"; }
int dtype_bits(DType t) { return (unsigned)t < DT_COUNT ? dtype_widths[t] : 0; }
bool dtype_is_float(DType t) { return t >= DT_F8E4 && t <= DT_F64; }
bool dtype_is_fp8(DType t) { return t == DT_F8E4 || t == DT_F8E5 || t == DT_F8E4B15; }
bool dtype_is_int(DType t) { return t >= DT_I1 && t <= DT_U64; }
bool dtype_is_signed(DType t) { return t >= DT_I8 && t <= DT_I64; }

/* Every spelling Triton users write for a dtype, tl. prefix optional, but
 * the fp8 dtypes' (fp8_named). */
static const struct {
    const char *name;
    DType dt;
} dtype_aliases[] = {
    {"void", DT_VOID},     {"i1", DT_I1},       {"int1", DT_I1},     {"bool", DT_I1},
    {"i8", DT_I8},         {"int8", DT_I8},     {"i16", DT_I16},     {"int16", DT_I16},
    {"i32", DT_I32},       {"int32", DT_I32},   {"i64", DT_I64},     {"int64", DT_I64},
    {"u8", DT_U8},         {"uint8", DT_U8},    {"u16", DT_U16},     {"uint16", DT_U16},
    {"u32", DT_U32},       {"uint32", DT_U32},  {"u64", DT_U64},     {"uint64", DT_U64},
    {"fp16", DT_F16},      {"float16", DT_F16}, {"f16", DT_F16},     {"bf16", DT_BF16},
    {"bfloat16", DT_BF16}, {"fp32", DT_F32},    {"float32", DT_F32}, {"f32", DT_F32},
    {"fp64", DT_F64},      {"float64", DT_F64}, {"f64", DT_F64},
};

/* An fp8 dtype by its IR name (fp8e4nv) or Triton's (float8e4nv). */
static DType fp8_named(const char *s)
{
    const char *fmt = !strncmp(s, "float8", 6) ? s + 6 : !strncmp(s, "fp8", 3) ? s + 3 : NULL;
    for (int t = 0; fmt && t < DT_COUNT; t++)
        if (dtype_is_fp8((DType)t) && !strcmp(fmt, dtype_name((DType)t) + 3))
            return (DType)t;
    return DT_VOID;
}

DType dtype_parse(const char *s)
{
    if (!s)
        return DT_VOID;
    if (strncmp(s, "tl.", 3) == 0)
        s += 3;
    for (int i = 0; i < TK_ARRAY_LEN(dtype_aliases); i++)
        if (strcmp(s, dtype_aliases[i].name) == 0)
            return dtype_aliases[i].dt;
    return fp8_named(s);
}

/* ---- types ----------------------------------------------------------------- */

Type type_scalar(DType dt)
{
    Type t;
    memset(&t, 0, sizeof t);
    t.dt = dt;
    t.elem = DT_VOID;
    return t;
}

Type type_ptr(DType elem)
{
    Type t = type_scalar(DT_PTR);
    t.elem = elem;
    return t;
}

Type type_with_shape(Type elem_of, int rank, const int *shape)
{
    Type t = type_elem(elem_of);
    if (rank < 0)
        rank = 0;
    if (rank > TK_MAX_RANK)
        rank = TK_MAX_RANK;
    t.rank = rank;
    for (int i = 0; i < rank; i++)
        t.shape[i] = shape[i];
    return t;
}

Type type_block(DType dt, int rank, const int *shape)
{
    return type_with_shape(type_scalar(dt), rank, shape);
}

Type type_elem(Type t)
{
    Type e = type_scalar(t.dt);
    e.elem = t.dt == DT_PTR ? t.elem : DT_VOID;
    return e;
}

bool type_same_shape(Type a, Type b)
{
    if (a.rank != b.rank || a.rank < 0 || a.rank > TK_MAX_RANK)
        return false;
    for (int i = 0; i < a.rank; i++)
        if (a.shape[i] != b.shape[i])
            return false;
    return true;
}

bool type_eq(Type a, Type b)
{
    if (a.dt != b.dt || !type_same_shape(a, b))
        return false;
    return a.dt != DT_PTR || a.elem == b.elem;
}

int64_t type_numel(Type t)
{
    int64_t n = 1; /* saturating: sema keeps blocks far smaller, but IR from elsewhere may not */
    for (int i = 0; i < t.rank && i < TK_MAX_RANK; i++)
        if (__builtin_mul_overflow(n, (int64_t)t.shape[i], &n))
            return INT64_MAX;
    return n;
}

static void type_print_elem(StrBuf *sb, Type t)
{
    if (t.dt == DT_PTR)
        sb_printf(sb, "ptr<%s>", dtype_name(t.elem));
    else
        sb_puts(sb, dtype_name(t.dt));
}

void type_print(StrBuf *sb, Type t)
{
    if (t.rank == 0) {
        type_print_elem(sb, t);
        return;
    }
    sb_putc(sb, '<');
    for (int i = 0; i < t.rank && i < TK_MAX_RANK; i++)
        sb_printf(sb, "%dx", t.shape[i]);
    type_print_elem(sb, t);
    sb_putc(sb, '>');
}

const char *type_str(Arena *a, Type t)
{
    char buf[96];
    StrBuf sb;
    sb_init(&sb);
    type_print(&sb, t);
    snprintf(buf, sizeof buf, "%s", sb.data ? sb.data : "?");
    sb_free(&sb);
    return arena_strdup(a, buf);
}

/* ---- names -------------------------------------------------------------- */

static const char *const ir_kind_names[] = {
#define X(k, m, d) m,
    TK_IR_OPS(X)
#undef X
};
static const char *const math_fn_names[] = {
#define X(k, n) n,
    TK_MATH_FNS(X)
#undef X
};

const char *ir_kind_name(IrKind k) { return (unsigned)k < IR_OP_COUNT ? ir_kind_names[k] : "?"; }
const char *math_fn_name(MathFn f) { return (unsigned)f < MATH_COUNT ? math_fn_names[f] : "?"; }

int ir_index_digits(int64_t size)
{
    int w = 0;
    for (int64_t p = 1; p < size; p *= 10)
        w++;
    return w;
}

int64_t dtype_float_to_int(DType t, double x)
{
    if (t == DT_I1)
        return x != 0;
    if (isnan(x))
        return 0;
    x = trunc(x);
    if (t == DT_U64 || t == DT_PTR)
        return x <= 0 ? 0 : x >= 0x1p64 ? (int64_t)UINT64_MAX : (int64_t)(uint64_t)x;
    if (t == DT_I64)
        return x >= 0x1p63 ? INT64_MAX : x < -0x1p63 ? INT64_MIN : (int64_t)x;
    int bits = dtype_bits(t);
    /* an 8-bit result is the low byte of the 16-bit one, as the GPU
     * converts (cvt.rzi to 16 bits, then the byte stored): 200.0 gives
     * -56 as i8, as in Triton's code */
    int sat = bits == 8 ? 16 : bits;
    double lo = dtype_is_signed(t) ? -ldexp(1, sat - 1) : 0;
    double hi = dtype_is_signed(t) ? ldexp(1, sat - 1) - 1 : ldexp(1, sat) - 1;
    int64_t v = (int64_t)(x < lo ? lo : x > hi ? hi : x);
    if (bits == 8)
        v = dtype_is_signed(t) ? ((v & 0xff) ^ 0x80) - 0x80 : v & 0xff;
    return v;
}

/* Truncation in units of t's last place at x's exponent (clamped to the
 * smallest normal one, where the subnormals share a unit). Every format's
 * value is exact in a double, so nothing rounds on the way. */
double dtype_round_toward_zero(DType t, double x)
{
    int mant, emin;
    double max;
    switch (t) {
    case DT_F16: mant = 10, emin = -14, max = 65504.0; break;
    case DT_BF16: mant = 7, emin = -126, max = 0x1.fep127; break;
    case DT_F32: mant = 23, emin = -126, max = 0x1.fffffep127; break;
    case DT_F8E5: mant = 2, emin = -14, max = 57344.0; break;
    case DT_F8E4: mant = 3, emin = -6, max = 448.0; break;
    default: return x;
    }
    if (x == 0 || !isfinite(x))
        return x;
    int e = ilogb(x);
    if (e < emin)
        e = emin;
    double r = scalbn(trunc(scalbn(x, mant - e)), e - mant);
    return fabs(r) > max ? copysign(max, x) : r;
}

static const char *const mem_sem_names[] = {
#define X(k, n) n,
    TK_MEM_SEMS(X)
#undef X
};
static const char *const mem_scope_names[] = {
#define X(k, n) n,
    TK_MEM_SCOPES(X)
#undef X
};

static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

int mem_sem_parse(const char *s) { return name_index(mem_sem_names, SEM_COUNT, s); }
int mem_scope_parse(const char *s) { return name_index(mem_scope_names, SCOPE_COUNT, s); }
const char *mem_sem_name(MemSem m) { return (unsigned)m < SEM_COUNT ? mem_sem_names[m] : "?"; }
const char *mem_scope_name(MemScope m)
{
    return (unsigned)m < SCOPE_COUNT ? mem_scope_names[m] : "?";
}

/* ---- building ------------------------------------------------------------- */

const Layout *ir_layout_intern(IrFunc *f, const Layout *l)
{
    for (int i = 0; i < f->nlayouts; i++)
        if (layout_equal(f->layouts[i], l))
            return f->layouts[i];
    const Layout *parent = l->parent ? ir_layout_intern(f, l->parent) : NULL;
    if (l->parent && !parent)
        return NULL;
    if (f->nlayouts % 16 == 0) {
        Layout **grown = arena_alloc(f->arena, sizeof(Layout *) * (size_t)(f->nlayouts + 16));
        if (!grown || f->arena->oom)
            return NULL;
        if (f->nlayouts)
            memcpy(grown, f->layouts, sizeof(Layout *) * (size_t)f->nlayouts);
        f->layouts = grown;
    }
    Layout *c = arena_alloc(f->arena, sizeof *c);
    if (!c || f->arena->oom)
        return NULL;
    *c = *l;
    c->parent = parent;
    c->id = f->nlayouts;
    f->layouts[f->nlayouts++] = c;
    return c;
}

IrFunc *ir_func_new(Arena *a, const char *name, const Source *src)
{
    IrFunc *f = arena_alloc(a, sizeof *f);
    f->name = name ? arena_strdup(a, name) : "kernel";
    f->arena = a;
    f->src = src;
    f->num_warps = TK_DEFAULT_NUM_WARPS;
    f->num_stages = TK_DEFAULT_NUM_STAGES;
    f->body = ir_block_new(f, NULL);
    return f;
}

IrBlock *ir_block_new(IrFunc *f, IrOp *parent)
{
    IrBlock *b = arena_alloc(f->arena, sizeof *b);
    b->parent = parent;
    return b;
}

static IrValue *ir_value_new(IrFunc *f, Type t)
{
    IrValue *v = arena_alloc(f->arena, sizeof *v);
    v->id = f->next_id++;
    v->type = t;
    return v;
}

IrValue *ir_block_add_arg(IrFunc *f, IrBlock *b, Type t, const char *name)
{
    if (b->nargs == b->args_cap) {
        int cap = b->args_cap ? b->args_cap * 2 : 4;
        IrValue **args = arena_alloc(f->arena, sizeof(IrValue *) * (size_t)cap);
        if (b->nargs)
            memcpy(args, b->args, sizeof(IrValue *) * (size_t)b->nargs);
        b->args = args;
        b->args_cap = cap;
    }
    IrValue *v = ir_value_new(f, t);
    v->owner = b;
    v->index = b->nargs;
    v->name = name;
    b->args[b->nargs++] = v;
    return v;
}

IrValue *ir_add_param(IrFunc *f, const char *name, Type t, int divisibility, Span sp)
{
    IrParam *ps = arena_alloc(f->arena, sizeof(IrParam) * (size_t)(f->nparams + 1));
    if (f->nparams)
        memcpy(ps, f->params, sizeof(IrParam) * (size_t)f->nparams);
    ps[f->nparams].name = name;
    ps[f->nparams].type = t;
    ps[f->nparams].divisibility = divisibility > 1 ? divisibility : 1;
    ps[f->nparams].span = sp;
    f->params = ps;
    f->nparams++;
    return ir_block_add_arg(f, f->body, t, name);
}

int ir_scope_add(IrFunc *f, const Source *src, const char *name, int line, Span call)
{
    if (call.scope == 0)
        call.scope = f->cur_scope;
    if (f->nscopes == f->scopes_cap) {
        int cap = f->scopes_cap ? f->scopes_cap * 2 : 8;
        IrScope *s = arena_alloc(f->arena, sizeof *s * (size_t)cap);
        if (!s || f->arena->oom)
            return 0;
        if (f->nscopes)
            memcpy(s, f->scopes, sizeof *s * (size_t)f->nscopes);
        else
            f->nscopes = 1; /* index 0 is the kernel itself */
        f->scopes = s;
        f->scopes_cap = cap;
    }
    f->scopes[f->nscopes] = (IrScope){src, name, line, call};
    return f->nscopes++;
}

IrOp *ir_op_new(IrFunc *f, IrKind k, Span sp, IrValue *const *ops, int nops, const Type *res,
                int nres)
{
    IrOp *op = arena_alloc(f->arena, sizeof *op);
    if (sp.scope == 0)
        sp.scope = f->cur_scope;
    op->kind = k;
    op->span = sp;
    op->nops = nops > 0 ? nops : 0;
    if (op->nops) {
        op->operands = arena_alloc(f->arena, sizeof(IrValue *) * (size_t)op->nops);
        for (int i = 0; i < op->nops; i++)
            op->operands[i] = ops ? ops[i] : NULL;
    }
    op->nres = nres > 0 ? nres : 0;
    if (op->nres) {
        op->results = arena_alloc(f->arena, sizeof(IrValue *) * (size_t)op->nres);
        for (int i = 0; i < op->nres; i++) {
            IrValue *v = ir_value_new(f, res[i]);
            v->def = op;
            v->index = i;
            op->results[i] = v;
        }
    }
    return op;
}

IrBlock *ir_op_add_region(IrFunc *f, IrOp *op)
{
    IrBlock **rs = arena_alloc(f->arena, sizeof(IrBlock *) * (size_t)(op->nregions + 1));
    if (op->nregions)
        memcpy(rs, op->regions, sizeof(IrBlock *) * (size_t)op->nregions);
    IrBlock *b = ir_block_new(f, op);
    rs[op->nregions++] = b;
    op->regions = rs;
    return b;
}

void ir_append(IrBlock *b, IrOp *op)
{
    op->parent = b;
    op->next = NULL;
    op->prev = b->last;
    if (b->last)
        b->last->next = op;
    else
        b->first = op;
    b->last = op;
}

void ir_insert_before(IrOp *at, IrOp *op)
{
    IrBlock *b = at->parent;
    op->parent = b;
    op->next = at;
    op->prev = at->prev;
    if (at->prev)
        at->prev->next = op;
    else if (b)
        b->first = op;
    at->prev = op;
}

void ir_remove(IrOp *op)
{
    IrBlock *b = op->parent;
    if (op->prev)
        op->prev->next = op->next;
    else if (b)
        b->first = op->next;
    if (op->next)
        op->next->prev = op->prev;
    else if (b)
        b->last = op->prev;
    op->prev = op->next = NULL;
    op->parent = NULL;
}

void ir_replace_uses(IrBlock *scope, IrValue *from, IrValue *to)
{
    if (!scope)
        return;
    for (IrOp *op = scope->first; op; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            if (op->operands[i] == from)
                op->operands[i] = to;
        for (int r = 0; r < op->nregions; r++)
            ir_replace_uses(op->regions[r], from, to);
    }
}

static IrValue *clone_operand(IrValue **map, int nmap, IrValue *v)
{
    return v && v->id < nmap && map[v->id] ? map[v->id] : v;
}

static void clone_block(IrFunc *f, const IrBlock *from, IrBlock *to, IrValue **map, int nmap)
{
    for (int i = 0; i < from->nargs; i++) {
        const IrValue *a = from->args[i];
        IrValue *c = ir_block_add_arg(f, to, a->type, a->name);
        c->layout = a->layout;
        if (a->id < nmap)
            map[a->id] = c;
    }
    IrBuilder b = {f, to, NULL};
    for (const IrOp *o = from->first; o; o = o->next)
        ir_clone(&b, o, map, nmap);
}

IrOp *ir_clone(IrBuilder *b, const IrOp *op, IrValue **map, int nmap)
{
    IrValue **ops = arena_alloc(b->f->arena, sizeof(IrValue *) * (size_t)(op->nops + 1));
    Type *types = arena_alloc(b->f->arena, sizeof(Type) * (size_t)(op->nres + 1));
    if (!ops || !types)
        return NULL;
    for (int i = 0; i < op->nops; i++)
        ops[i] = clone_operand(map, nmap, op->operands[i]);
    for (int i = 0; i < op->nres; i++)
        types[i] = op->results[i]->type;
    IrOp *c = ir_build(b, op->kind, op->span, ops, op->nops, types, op->nres);
    c->axis = op->axis;
    c->sub = op->sub;
    c->flags = op->flags;
    c->ival = op->ival;
    c->ival2 = op->ival2;
    c->fval = op->fval;
    c->str = op->str;
    c->str2 = op->str2;
    memcpy(c->ints, op->ints, sizeof c->ints);
    c->nints = op->nints;
    c->hints = op->hints;
    for (int i = 0; i < op->nres; i++) {
        c->results[i]->layout = op->results[i]->layout;
        c->results[i]->name = op->results[i]->name;
        if (op->results[i]->id < nmap)
            map[op->results[i]->id] = c->results[i];
    }
    for (int r = 0; r < op->nregions; r++)
        clone_block(b->f, op->regions[r], ir_op_add_region(b->f, c), map, nmap);
    return c;
}

IrOp *ir_build(IrBuilder *b, IrKind k, Span sp, IrValue *const *ops, int nops, const Type *res,
               int nres)
{
    IrOp *op = ir_op_new(b->f, k, sp, ops, nops, res, nres);
    if (b->before)
        ir_insert_before(b->before, op);
    else if (b->blk)
        ir_append(b->blk, op);
    return op;
}

IrValue *ir_const_int(IrBuilder *b, Span sp, Type t, int64_t v)
{
    IrOp *op = ir_build(b, IR_CONST, sp, NULL, 0, &t, 1);
    op->ival = v;
    op->fval = (double)v;
    return op->results[0];
}

IrValue *ir_const_float(IrBuilder *b, Span sp, Type t, double v)
{
    IrOp *op = ir_build(b, IR_CONST, sp, NULL, 0, &t, 1);
    op->fval = v;
    op->ival = v >= -0x1p63 && v < 0x1p63 && (double)(int64_t)v == v ? (int64_t)v : 0;
    return op->results[0];
}

IrValue *ir_unary(IrBuilder *b, IrKind k, Span sp, IrValue *x, Type res)
{
    return ir_build(b, k, sp, &x, 1, &res, 1)->results[0];
}

IrValue *ir_binary(IrBuilder *b, IrKind k, Span sp, IrValue *x, IrValue *y, Type res)
{
    IrValue *ops[2] = {x, y};
    return ir_build(b, k, sp, ops, 2, &res, 1)->results[0];
}

IrValue *ir_iteration_index(IrBuilder *b, Span sp, IrValue *iv, IrValue *lb, int64_t step)
{
    IrValue *j = ir_binary(b, IR_SUB, sp, iv, lb, iv->type);
    if (step != 1)
        j = ir_binary(b, IR_DIV, sp, j, ir_const_int(b, sp, iv->type, step), iv->type);
    return j->type.dt == DT_I32 ? j : ir_unary(b, IR_CAST, sp, j, type_scalar(DT_I32));
}

/* The body moves over to the new loop, which keeps the old one's plan,
 * flags and results' layouts. */
IrOp *ir_for_carry_more(IrFunc *f, IrOp *old, IrValue **init, int n, IrValue **args)
{
    IrBuilder b = {f, old->parent, old};
    int nops = old->nops;
    IrValue **ops = arena_alloc(f->arena, sizeof(IrValue *) * (size_t)(nops + n));
    Type *res = arena_alloc(f->arena, sizeof(Type) * (size_t)(old->nres + n));
    if (!ops || !res || f->arena->oom)
        return NULL;
    memcpy(ops, old->operands, sizeof(IrValue *) * (size_t)nops);
    for (int i = 0; i < n; i++)
        ops[nops + i] = init[i];
    for (int i = 0; i < old->nres; i++)
        res[i] = old->results[i]->type;
    for (int i = 0; i < n; i++)
        res[old->nres + i] = init[i]->type;
    IrOp *loop = ir_build(&b, IR_FOR, old->span, ops, nops + n, res, old->nres + n);
    loop->ival = old->ival;
    loop->flags = old->flags;
    loop->plan = old->plan;
    for (int i = 0; i < old->nres; i++) {
        loop->results[i]->layout = old->results[i]->layout;
        loop->results[i]->name = old->results[i]->name;
        ir_replace_uses(old->parent, old->results[i], loop->results[i]);
    }
    for (int i = 0; i < n; i++) {
        loop->results[old->nres + i]->layout = init[i]->layout;
        loop->results[old->nres + i]->name = init[i]->name;
    }
    IrBlock *body = old->regions[0];
    loop->regions = old->regions;
    loop->nregions = 1;
    body->parent = loop;
    old->nregions = 0;
    ir_remove(old);
    for (int i = 0; i < n; i++) {
        args[i] = ir_block_add_arg(f, body, init[i]->type, init[i]->name);
        args[i]->layout = init[i]->layout;
    }
    return loop;
}

void ir_append_operand(IrFunc *f, IrOp *op, IrValue *x)
{
    IrValue **ops = arena_alloc(f->arena, sizeof(IrValue *) * (size_t)(op->nops + 1));
    if (!ops || f->arena->oom)
        return;
    if (op->nops) /* a loop that carries nothing yields nothing */
        memcpy(ops, op->operands, sizeof(IrValue *) * (size_t)op->nops);
    ops[op->nops] = x;
    op->operands = ops;
    op->nops++;
}

IrValue *ir_next_slot(IrBuilder *b, Span sp, IrValue *x, int n)
{
    Type i32 = type_scalar(DT_I32);
    IrValue *one = ir_binary(b, IR_ADD, sp, x, ir_const_int(b, sp, i32, 1), i32);
    IrValue *wrap = ir_binary(b, IR_CMP, sp, one, ir_const_int(b, sp, i32, n), type_scalar(DT_I1));
    wrap->def->sub = CMP_EQ;
    IrValue *ops[3] = {wrap, ir_const_int(b, sp, i32, 0), one};
    return ir_build(b, IR_SELECT, sp, ops, 3, &i32, 1)->results[0];
}

/* ---- reading -------------------------------------------------------------- */

bool ir_walk(IrBlock *b, IrWalkFn fn, void *ctx)
{
    if (!b)
        return true;
    for (IrOp *op = b->first, *next; op; op = next) {
        next = op->next; /* fn may remove op */
        if (!fn(op, ctx))
            return false;
        for (int r = 0; r < op->nregions; r++)
            if (!ir_walk(op->regions[r], fn, ctx))
                return false;
    }
    return true;
}

typedef struct Reads {
    const IrValue *x;
    int n;
} Reads;

static bool count_reads(IrOp *op, void *ctx)
{
    Reads *r = ctx;
    for (int i = 0; i < op->nops; i++)
        r->n += op->operands[i] == r->x;
    return true;
}

int ir_result_index(const IrOp *op, const IrValue *v)
{
    for (int i = 0; i < op->nres; i++)
        if (op->results[i] == v)
            return i;
    return -1;
}

bool ir_is_zero(const IrValue *v)
{
    const IrOp *d = v ? v->def : NULL;
    while (d && (d->kind == IR_SPLAT || d->kind == IR_CONVERT_LAYOUT))
        d = d->operands[0]->def;
    return d && d->kind == IR_CONST && d->ival == 0 && d->fval == 0.0;
}

bool ir_defined_in(const IrValue *x, const IrBlock *b)
{
    const IrBlock *at = x->def ? x->def->parent : x->owner;
    for (; at; at = at->parent ? at->parent->parent : NULL)
        if (at == b)
            return true;
    return false;
}

int ir_count_reads(IrBlock *b, const IrValue *x)
{
    Reads r = {x, 0};
    ir_walk(b, count_reads, &r);
    return r.n;
}

/* Ids in definition order: block args before the ops of the block, results
 * before the op's regions, so printed text reads in ascending order. */
static void renumber_block(IrBlock *b, int *next)
{
    for (int i = 0; i < b->nargs; i++)
        b->args[i]->id = (*next)++;
    for (IrOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nres; i++)
            op->results[i]->id = (*next)++;
        for (int r = 0; r < op->nregions; r++)
            renumber_block(op->regions[r], next);
    }
}

void ir_renumber(IrFunc *f)
{
    int next = 0;
    renumber_block(f->body, &next);
    f->next_id = next;
}

int ir_arch_sm(const char *arch)
{
    int n = 0;
    return arch && sscanf(arch, "sm_%d", &n) == 1 ? n : 0;
}

bool ir_atomic_vectorizes(const IrOp *op, DType dt, int sm)
{
    return sm >= 90 && op->kind == IR_ATOMIC_RMW && op->sub == ATOM_ADD &&
        (dt == DT_F32 || dt == DT_F16 || dt == DT_BF16);
}

/* What an op does besides computing its results (stores, atomics,
 * prints, barriers, copies, waits, volatile loads, impure asm; a dot_wait
 * whose result no one reads still retires the wgmma in flight, which must
 * not outlive the loop: ptxas then serialises every wgmma), itself or in its
 * regions; a region's terminator does not count. DCE keeps such ops, and
 * sema runs no such op on a path its program does not take. */
static bool block_has_effect(const IrBlock *b);

bool ir_op_has_effect(const IrOp *op)
{
    switch (op->kind) {
    case IR_STORE:
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS:
    case IR_PRINT:
    case IR_ASSERT:
    case IR_ASSUME:
    case IR_BARRIER:
    case IR_YIELD:
    case IR_CONDITION:
    case IR_ASYNC_COPY:
    case IR_ASYNC_COMMIT:
    case IR_ASYNC_WAIT:
    case IR_TMA_COPY:
    case IR_TMAP_MAKE:
    case IR_TMA_STORE:
    case IR_TMA_WAIT:
    case IR_TMA_RELEASE:
    case IR_DOT_WAIT:
    case IR_PRODUCER:
    case IR_GDC: return true;
    case IR_INLINE_ASM: return (op->flags & IRF_PURE) == 0;
    case IR_LOAD: return (op->flags & IRF_VOLATILE) != 0;
    default:
        for (int r = 0; r < op->nregions; r++)
            if (block_has_effect(op->regions[r]))
                return true;
        return false;
    }
}

/* Terminators do not make their parent effectful. */
static bool block_has_effect(const IrBlock *b)
{
    for (const IrOp *op = b->first; op; op = op->next)
        if (op->kind != IR_YIELD && op->kind != IR_CONDITION && ir_op_has_effect(op))
            return true;
    return false;
}

bool ir_kind_elementwise(IrKind k)
{
    switch (k) {
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_DIV:
    case IR_REM:
    case IR_AND:
    case IR_OR:
    case IR_XOR:
    case IR_SHL:
    case IR_SHR:
    case IR_MIN:
    case IR_MAX:
    case IR_UMULHI:
    case IR_NEG:
    case IR_NOT:
    case IR_CMP:
    case IR_SELECT:
    case IR_FMA:
    case IR_MATH:
    case IR_EXTERN:
    case IR_CAST:
    case IR_BITCAST: return true;
    default: return false;
    }
}

int64_t ir_tmap_tile_bytes(const IrTmap *m)
{
    return (int64_t)m->cols * m->box[1] * dtype_bits(m->dt) / 8;
}

int ir_tmap_devices(const IrFunc *f)
{
    int n = 0;
    for (int i = 0; i < f->ntmaps; i++)
        n += f->tmaps[i].device;
    return n;
}

int ir_tmap_param(const IrFunc *f, int i)
{
    int at = f->nparams;
    for (int k = 0; k < i; k++)
        at += !f->tmaps[k].device;
    return at;
}

bool ir_tmap_equal(const IrTmap *a, const IrTmap *b)
{
    bool same = a->device == b->device && a->base == b->base && a->stride == b->stride &&
        a->stride_const == b->stride_const && a->dt == b->dt && a->box[0] == b->box[0] &&
        a->box[1] == b->box[1] && a->swizzle == b->swizzle && a->cols == b->cols;
    for (int d = 0; d < 2 && same; d++) {
        same = a->extent[d].add == b->extent[d].add && a->extent[d].mul == b->extent[d].mul;
        for (int i = 0; i < IR_TMA_FACTORS; i++)
            same = same && a->extent[d].param[i] == b->extent[d].param[i];
    }
    return same;
}
