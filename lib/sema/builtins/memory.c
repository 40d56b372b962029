/* sema/builtins/memory.c: tl.load, tl.store and the atomics. The pointer decides
 * the shape: mask, other and stored values broadcast to it (a load's pointer
 * to them too), values are cast to its element type (as Triton does), masks
 * must be boolean. Cache and eviction hints and atomic sem/scope are checked
 * against Triton's lists. */
#include <stdio.h>
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

static IrValue *pointer_arg(Sema *s, const Builtin *b, SVal v, Span at)
{
    if (v.k == SV_TENSOR && v.v->type.dt == DT_PTR)
        return v.v;
    if (v.k != SV_UNDEF)
        sema_err(s, at, "tl.%s expects a pointer or a block of pointers, got %s", b->name,
                 sv_describe(s, v));
    return NULL;
}

/* A value of the pointer's shape: broadcast into it (never beyond it). */
static IrValue *to_ptr_shape(Sema *s, IrValue *x, Type pt, Span at, const char *what)
{
    if (x->type.rank > pt.rank) {
        sema_err(s, at, "%s %s does not broadcast to the pointer %s", what,
                 sema_type_str(s, x->type), sema_type_str(s, pt));
        return NULL;
    }
    for (int i = 0; i < x->type.rank; i++) {
        int d = x->type.shape[x->type.rank - 1 - i], p = pt.shape[pt.rank - 1 - i];
        if (d != p && d != 1) {
            sema_err(s, at, "%s %s does not broadcast to the pointer %s", what,
                     sema_type_str(s, x->type), sema_type_str(s, pt));
            return NULL;
        }
    }
    return sema_broadcast(s, x, pt.rank, pt.shape, at);
}

/* tl.load broadcasts a block of pointers up to its mask's or other's
 * shape as well, as Triton's load does (its store and atomics do not): a
 * gather whose indices span one more dimension than its mask's rows. An
 * incompatible shape is left to mask_arg and value_arg to report. */
static IrValue *ptr_to_common(Sema *s, IrValue *p, SVal v, Span at)
{
    int r, shape[TK_MAX_RANK];
    if (!p || p->type.rank == 0 || v.k != SV_TENSOR || v.v->type.rank == 0 ||
        sema_common_shape(p->type, v.v->type, &r, shape) >= 0)
        return p;
    return sema_broadcast(s, p, r, shape, at);
}

static bool mask_arg(Sema *s, const Builtin *b, SVal v, Span at, Type pt, IrValue **out)
{
    *out = NULL;
    if (!sv_has(v))
        return true;
    if (v.k == SV_BOOL && v.i)
        return true; /* mask=True masks nothing */
    IrValue *m = sema_arg_tensor(s, v, at, b, "the mask");
    if (!m)
        return false;
    if (m->type.dt != DT_I1) {
        sema_err(s, at, "the mask of tl.%s must be boolean (i1), got %s", b->name,
                 sema_type_str(s, m->type));
        return false;
    }
    *out = to_ptr_shape(s, m, pt, at, "mask");
    return *out != NULL;
}

/* A value stored or combined through pointer block pt: cast to its
 * element type, broadcast to its shape. */
static IrValue *value_arg(Sema *s, const Builtin *b, SVal v, Span at, Type pt, const char *what)
{
    DType elem = pt.elem;
    if (sv_is_num(v))
        return sema_const(s, type_block(elem, pt.rank, pt.shape), v, at);
    IrValue *x = sema_arg_tensor(s, v, at, b, what);
    if (!x)
        return NULL;
    if (x->type.dt == DT_PTR) {
        sema_err(s, at, "cannot %s a pointer (%s) through %s", b->name, sema_type_str(s, x->type),
                 sema_type_str(s, pt));
        return NULL;
    }
    x = to_ptr_shape(s, x, pt, at, what);
    return x ? sema_cast(s, x, elem, at) : NULL;
}

static bool str_choice(Sema *s, SVal v, Span at, const char *what, const char *const *ok, int n,
                       const char **out)
{
    *out = NULL;
    if (!sv_has(v))
        return true;
    if (v.k != SV_STR) {
        sema_err(s, at, "%s must be a string, got %s", what, sv_describe(s, v));
        return false;
    }
    if (!v.s[0])
        return true;
    for (int i = 0; i < n; i++)
        if (!strcmp(ok[i], v.s)) {
            *out = ok[i];
            return true;
        }
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < n; i++)
        sb_printf(&sb, "%s'%s'", i ? ", " : "", ok[i]);
    sema_err(s, at, "unknown %s '%s' (expected one of %s)", what, v.s, sb.data ? sb.data : "");
    sb_free(&sb);
    return false;
}

/* Triton's names; it refuses "evict_normal" (the default) by name. */
static const char *const evictions[] = {"evict_first", "evict_last"};

/* PTX has no load or store with both a cache operator and an L1 eviction
 * priority, nor a volatile load with one: Triton 3.6 emits them and ptxas
 * refuses ("Modifier '.evict_last' cannot be combined with modifier
 * '.cg'"). Its loads with .cv drop the priority and assemble, so those
 * pass here too. */
static bool hints_combine(Sema *s, const char *cm, const char *ev, bool vol, Span at_ev)
{
    if (!ev)
        return true;
    const char *other = vol ? "volatile=True" : NULL;
    char buf[48];
    if (!other && cm && strcmp(cm, ".cv") != 0) {
        snprintf(buf, sizeof buf, "cache_modifier='%s'", cm);
        other = buf;
    }
    if (!other)
        return true;
    sema_err(s, at_ev,
             "eviction_policy='%s' cannot be combined with %s: PTX has no such access "
             "(Triton's fails in ptxas); keep one of the two hints",
             ev, other);
    return false;
}

/* boundary_check and padding_option belong to block pointers. */
static bool no_block_ptr(Sema *s, SVal v, Span at)
{
    if (!sv_has(v) || (v.k == SV_TUPLE && v.n == 0) || (v.k == SV_STR && !v.s[0]))
        return true;
    sema_err(s, at,
             "boundary_check and padding_option need a block pointer "
             "(tl.make_block_ptr), not a block of pointers");
    return false;
}

/* A load or store through a block pointer (a[0]) becomes one through the
 * block of pointers it addresses, with the mask of its boundary_check;
 * mask= and other= are not allowed with it, as in Triton. */
static bool from_block_ptr(Sema *s, const Builtin *b, SVal *a, Span *at, int imask, int ibc,
                           Span call, bool load)
{
    if (sv_has(a[imask]) || (load && sv_has(a[2])))
        return sema_err(s, at[sv_has(a[imask]) ? imask : 2],
                        "tl.%s through a block pointer "
                        "takes boundary_check, not mask or other",
                        b->name),
               false;
    IrValue *p;
    if (!sema_blockptr_access(s, a[0], a[ibc], at[ibc], call, &p, &a[imask]))
        return false;
    a[0] = sv_tensor(p);
    a[ibc] = (SVal){.k = SV_VOID};
    return true;
}

static SVal b_load(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    static const char *const cache[] = {".ca", ".cg", ".cv"};
    if (a[0].k == SV_BLOCKPTR) {
        DType elem = a[0].ty.dt;
        if (!from_block_ptr(s, b, a, at, 1, 3, call, true) ||
            !sema_padding_value(s, a[4], at[4], elem, &a[2]))
            return bad();
        if (a[1].k != SV_TENSOR)
            a[2] = (SVal){.k = SV_VOID}; /* nothing checked: nothing to pad */
        a[4] = (SVal){.k = SV_VOID};
    }
    IrValue *p = pointer_arg(s, b, a[0], at[0]);
    if (!p || !no_block_ptr(s, a[3], at[3]) || !no_block_ptr(s, a[4], at[4]))
        return bad();
    p = ptr_to_common(s, ptr_to_common(s, p, a[1], at[1]), a[2], at[2]);
    IrValue *mask, *other = NULL;
    if (!p || !mask_arg(s, b, a[1], at[1], p->type, &mask))
        return bad();
    if (sv_has(a[2])) {
        if (!sv_has(a[1]))
            return sema_err(s, at[2], "tl.load: 'other' needs a 'mask'");
        other = value_arg(s, b, a[2], at[2], p->type, "other");
        if (!other)
            return bad();
    }
    const char *cm, *ev;
    bool vol = false;
    if (!str_choice(s, a[5], at[5], "cache_modifier", cache, 3, &cm) ||
        !str_choice(s, a[6], at[6], "eviction_policy", evictions, 2, &ev) ||
        (sv_has(a[7]) && !sema_truth(s, a[7], at[7], &vol)) ||
        !hints_combine(s, cm, ev, vol, at[6]))
        return bad();
    Type rt = type_block(p->type.elem, p->type.rank, p->type.shape);
    IrOp *op = ir_build(&s->b, IR_LOAD, call, (IrValue *[]){p, mask, other}, 3, &rt, 1);
    op->str = cm;
    op->str2 = ev;
    op->flags = vol ? IRF_VOLATILE : 0;
    return sv_tensor(op->results[0]);
}

/* Whether pointer p is computed from a parameter annotated tl.const: back
 * through offsets and shape ops, both sides of a select, and a loop's
 * carried value to its initial one. */
static bool from_const_param(const Sema *s, const IrValue *p, int depth)
{
    if (!p || depth > 64)
        return false;
    const IrOp *d = p->def;
    if (!d) {
        for (int i = 0; i < s->const_ptrs.len; i++)
            if (s->const_ptrs.items[i] == p)
                return true;
        const IrOp *loop = p->owner ? p->owner->parent : NULL;
        return loop && loop->kind == IR_FOR && p->index > 0 && 3 + p->index - 1 < loop->nops &&
            from_const_param(s, loop->operands[3 + p->index - 1], depth + 1);
    }
    switch (d->kind) {
    case IR_ADDPTR:
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_CONVERT_LAYOUT:
    case IR_RESHAPE:
    case IR_TRANS: return from_const_param(s, d->operands[0], depth + 1);
    case IR_SELECT:
        return from_const_param(s, d->operands[1], depth + 1) ||
            from_const_param(s, d->operands[2], depth + 1);
    default: return false;
    }
}

/* Triton refuses a store or an atomic through a tl.const pointer. */
static bool writable(Sema *s, const IrValue *p, Span at)
{
    if (!from_const_param(s, p, 0))
        return true;
    sema_err(s, at,
             "cannot store through a pointer to constant memory (a parameter annotated "
             "tl.const)");
    return false;
}

static SVal b_store(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    static const char *const cache[] = {".wb", ".cg", ".cs", ".wt"};
    if (a[0].k == SV_BLOCKPTR && !from_block_ptr(s, b, a, at, 2, 3, call, false))
        return bad();
    IrValue *p = pointer_arg(s, b, a[0], at[0]);
    if (!p || !no_block_ptr(s, a[3], at[3]) || !writable(s, p, at[0]))
        return bad();
    IrValue *v = value_arg(s, b, a[1], at[1], p->type, "the value");
    IrValue *mask;
    if (!v || !mask_arg(s, b, a[2], at[2], p->type, &mask))
        return bad();
    const char *cm, *ev;
    if (!str_choice(s, a[4], at[4], "cache_modifier", cache, 4, &cm) ||
        !str_choice(s, a[5], at[5], "eviction_policy", evictions, 2, &ev) ||
        !hints_combine(s, cm, ev, false, at[5]))
        return bad();
    IrOp *op = ir_build(&s->b, IR_STORE, call, (IrValue *[]){p, v, mask}, 3, NULL, 0);
    op->str = cm;
    op->str2 = ev;
    return sv_none();
}

/* sem= and scope= of an atomic, by the IR's names (ir.h MemSem, MemScope);
 * left out or "", Triton's defaults: acq_rel at gpu scope. */
static bool sem_scope(Sema *s, SVal *a, Span *at, int i, const char **sem, const char **scope)
{
    const char *sems[SEM_COUNT], *scopes[SCOPE_COUNT];
    for (int k = 0; k < SEM_COUNT; k++)
        sems[k] = mem_sem_name((MemSem)k);
    for (int k = 0; k < SCOPE_COUNT; k++)
        scopes[k] = mem_scope_name((MemScope)k);
    if (!str_choice(s, a[i], at[i], "sem", sems, SEM_COUNT, sem) ||
        !str_choice(s, a[i + 1], at[i + 1], "scope", scopes, SCOPE_COUNT, scope))
        return false;
    if (!*sem)
        *sem = mem_sem_name(SEM_ACQ_REL);
    if (!*scope)
        *scope = mem_scope_name(SCOPE_GPU);
    return true;
}

static SVal b_atomic(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *p = pointer_arg(s, b, a[0], at[0]);
    if (!p || !writable(s, p, at[0]))
        return bad();
    DType e = p->type.elem;
    bool bitwise = b->arg == ATOM_AND || b->arg == ATOM_OR || b->arg == ATOM_XOR;
    /* Triton runs and/or/xor on an fp32 or fp64 pointer on the bits */
    bool bits = bitwise && (e == DT_F32 || e == DT_F64);
    if ((bitwise && !dtype_is_int(e) && !bits) || e == DT_I1 || e == DT_I8 || e == DT_U8 ||
        (e == DT_I16 || e == DT_U16) || dtype_is_fp8(e))
        return sema_err(s, at[0], "tl.%s is not supported on %s", b->name,
                        sema_type_str(s, p->type));
    IrValue *v = value_arg(s, b, a[1], at[1], p->type, "the value");
    IrValue *mask;
    const char *sem, *scope;
    if (!v || !mask_arg(s, b, a[2], at[2], p->type, &mask) || !sem_scope(s, a, at, 3, &sem, &scope))
        return bad();
    if (bits) {
        Type ip = p->type;
        ip.elem = e == DT_F32 ? DT_I32 : DT_I64;
        p = ir_unary(&s->b, IR_BITCAST, call, p, ip);
        v = sema_bitcast(s, v, ip.elem, call);
    }
    Type rt = type_block(p->type.elem, p->type.rank, p->type.shape);
    IrOp *op = ir_build(&s->b, IR_ATOMIC_RMW, call, (IrValue *[]){p, v, mask}, 3, &rt, 1);
    op->sub = b->arg;
    op->str = sem;
    op->str2 = scope;
    return sv_tensor(bits ? sema_bitcast(s, op->results[0], e, call) : op->results[0]);
}

static SVal b_atomic_cas(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *p = pointer_arg(s, b, a[0], at[0]);
    if (!p || !writable(s, p, at[0]))
        return bad();
    DType e = p->type.elem;
    if (dtype_bits(e) < 16 || e == DT_I1)
        return sema_err(s, at[0], "tl.atomic_cas is not supported on %s",
                        sema_type_str(s, p->type));
    IrValue *c = value_arg(s, b, a[1], at[1], p->type, "cmp");
    IrValue *v = value_arg(s, b, a[2], at[2], p->type, "the value");
    const char *sem, *scope;
    if (!c || !v || !sem_scope(s, a, at, 3, &sem, &scope))
        return bad();
    Type rt = type_block(e, p->type.rank, p->type.shape);
    IrOp *op = ir_build(&s->b, IR_ATOMIC_CAS, call, (IrValue *[]){p, c, v}, 3, &rt, 1);
    op->str = sem;
    op->str2 = scope;
    return sv_tensor(op->results[0]);
}

static const Builtin memory[] = {
    {"load",
     "pointer,mask=,other=,boundary_check=,padding_option=,cache_modifier=,"
     "eviction_policy=,volatile=",
     b_load, 0, false},
    {"store", "pointer,value,mask=,boundary_check=,cache_modifier=,eviction_policy=", b_store, 0,
     true},
    {"atomic_add", "pointer,val,mask=,sem=,scope=", b_atomic, ATOM_ADD, true},
    {"atomic_max", "pointer,val,mask=,sem=,scope=", b_atomic, ATOM_MAX, true},
    {"atomic_min", "pointer,val,mask=,sem=,scope=", b_atomic, ATOM_MIN, true},
    {"atomic_xchg", "pointer,val,mask=,sem=,scope=", b_atomic, ATOM_XCHG, true},
    {"atomic_and", "pointer,val,mask=,sem=,scope=", b_atomic, ATOM_AND, true},
    {"atomic_or", "pointer,val,mask=,sem=,scope=", b_atomic, ATOM_OR, true},
    {"atomic_xor", "pointer,val,mask=,sem=,scope=", b_atomic, ATOM_XOR, true},
    {"atomic_cas", "pointer,cmp,val,sem=,scope=", b_atomic_cas, 0, true},
};

const BuiltinTable sema_tl_memory = {memory, TK_ARRAY_LEN(memory)};
