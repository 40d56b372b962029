/* cg_memory.c: global loads, stores and atomics. Masked or cache-hinted
 * accesses go through inline PTX so that the mask becomes a predicate
 * (`@%p ld.global`): masked-off lanes never touch memory and take `other`.
 * Atomics run once per element (repeated copies of small blocks are
 * skipped) and give the old value to every thread holding the element. */
#include <stdio.h>
#include <string.h>

#include "cg.h"

/* PTX register class, constraint letter and LLVM integer type for an element. */
static const char *reg_cons(int bits) { return bits <= 16 ? "h" : bits == 32 ? "r" : "l"; }

static LLVMTypeRef reg_type(Cg *cg, int bits)
{
    return LLVMIntTypeInContext(cg->ctx, bits <= 16 ? 16 : (unsigned)bits);
}

static int elem_bits(DType dt) { return dt == DT_I1 ? 8 : dtype_bits(dt); }

/* Element value -> the integer register that PTX moves (and back). */
static LLVMValueRef to_reg(Cg *cg, LLVMValueRef v, DType dt)
{
    int bits = elem_bits(dt);
    if (dt == DT_I1)
        v = LLVMBuildZExt(cg->b, v, LLVMInt8TypeInContext(cg->ctx), "");
    else if (dt == DT_PTR)
        v = LLVMBuildPtrToInt(cg->b, v, LLVMInt64TypeInContext(cg->ctx), "");
    else if (dtype_is_float(dt))
        v = LLVMBuildBitCast(cg->b, v, LLVMIntTypeInContext(cg->ctx, (unsigned)bits), "");
    if (bits == 8)
        v = LLVMBuildZExt(cg->b, v, reg_type(cg, 8), "");
    return v;
}

static LLVMValueRef from_reg(Cg *cg, LLVMValueRef v, DType dt)
{
    int bits = elem_bits(dt);
    if (bits == 8)
        v = LLVMBuildTrunc(cg->b, v, LLVMInt8TypeInContext(cg->ctx), "");
    if (dt == DT_I1)
        return LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
    if (dt == DT_PTR)
        return LLVMBuildIntToPtr(cg->b, v, cg_type(cg, DT_PTR), "");
    if (dtype_is_float(dt))
        return LLVMBuildBitCast(cg->b, v, cg_type(cg, dt), "");
    return v;
}

/* ".cg" / "cg" -> ".cg" when valid for the access, else "". */
static const char *cache_suffix(Cg *cg, const IrOp *op, bool store, char *buf, size_t cap)
{
    const char *s = op->str, *ev = op->str2;
    buf[0] = 0;
    if (s && *s) {
        if (*s == '.')
            s++;
        static const char *const ld_ok[] = {"ca", "cg", "cs", "cv", "lu"};
        static const char *const st_ok[] = {"wb", "cg", "cs", "wt"};
        const char *const *ok = store ? st_ok : ld_ok;
        int n = store ? TK_ARRAY_LEN(st_ok) : TK_ARRAY_LEN(ld_ok);
        for (int i = 0; i < n; i++)
            if (strcmp(s, ok[i]) == 0) {
                snprintf(buf, cap, ".%s", s);
                return buf;
            }
        cg_error(cg, op->span, "unknown cache modifier '%s' for %s", op->str,
                 store ? "store (expected .wb, .cg, .cs or .wt)"
                       : "load (expected .ca, .cg, .cs, .cv or .lu)");
        return buf;
    }
    if (ev && *ev) {
        if (strcmp(ev, "evict_first") == 0 || strcmp(ev, "evict_last") == 0 ||
            strcmp(ev, "evict_normal") == 0)
            snprintf(buf, cap, ".L1::%s", ev);
        else
            cg_error(cg, op->span, "unknown eviction policy '%s' (expected evict_first, "
                     "evict_last or evict_normal)", ev);
    }
    return buf;
}

static LLVMValueRef inline_asm(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np,
                               const char *text, const char *cons, LLVMValueRef *args)
{
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, (unsigned)np, 0);
    LLVMValueRef ia = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0,
                                       LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(cg->b, ft, ia, args, (unsigned)np, "");
}

/* One predicated load of a scalar element; `other` where the predicate is false. */
static LLVMValueRef asm_load(Cg *cg, const IrOp *op, DType dt, LLVMValueRef ptr,
                             LLVMValueRef pred, LLVMValueRef other, const char *cache)
{
    int bits = elem_bits(dt);
    char text[256], cons[64];
    const char *rc = reg_cons(bits);
    snprintf(text, sizeof text, "mov.b%d $0, $1;\n\t@$2 ld%s.global%s.b%d $0, [ $3 + 0 ];",
             bits <= 16 ? 16 : bits, (op->flags & IRF_VOLATILE) ? ".volatile" : "",
             (op->flags & IRF_VOLATILE) ? "" : cache, bits);
    snprintf(cons, sizeof cons, "=%s,%s,b,l", rc, rc);
    LLVMTypeRef rt = reg_type(cg, bits);
    LLVMTypeRef pt[3] = {rt, LLVMInt1TypeInContext(cg->ctx), cg_type(cg, DT_PTR)};
    LLVMValueRef args[3] = {to_reg(cg, other, dt), pred, ptr};
    return from_reg(cg, inline_asm(cg, rt, pt, 3, text, cons, args), dt);
}

static void asm_store(Cg *cg, const IrOp *op, DType dt, LLVMValueRef ptr, LLVMValueRef pred,
                      LLVMValueRef val, const char *cache)
{
    int bits = elem_bits(dt);
    char text[256], cons[64];
    snprintf(text, sizeof text, "@$0 st%s.global%s.b%d [ $1 + 0 ], $2;",
             (op->flags & IRF_VOLATILE) ? ".volatile" : "",
             (op->flags & IRF_VOLATILE) ? "" : cache, bits);
    snprintf(cons, sizeof cons, "b,l,%s", reg_cons(bits));
    LLVMTypeRef pt[3] = {LLVMInt1TypeInContext(cg->ctx), cg_type(cg, DT_PTR), reg_type(cg, bits)};
    LLVMValueRef args[3] = {pred, ptr, to_reg(cg, val, dt)};
    inline_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 3, text, cons, args);
}

static void emit_load(Cg *cg, const IrOp *op)
{
    Type rt = op->results[0]->type;
    DType dt = rt.dt;
    CgVal p = cg_get(cg, op->operands[0]);
    bool has_mask = op->nops > 1 && op->operands[1];
    bool has_other = op->nops > 2 && op->operands[2];
    CgVal m = has_mask ? cg_get(cg, op->operands[1]) : p;
    CgVal o = has_other ? cg_get(cg, op->operands[2]) : p;
    char buf[32];
    const char *cache = cache_suffix(cg, op, false, buf, sizeof buf);
    bool plain = !has_mask && !*cache && !(op->flags & IRF_VOLATILE);
    CgVal r = cg_val_new(cg, p.n);
    LLVMValueRef zero = cg_const_elem(cg, dt, 0, 0.0);
    for (int s = 0; s < p.n; s++) {
        if (plain) {
            LLVMValueRef v = LLVMBuildLoad2(cg->b, cg_mem_type(cg, dt), p.el[s], "");
            r.el[s] = dt == DT_I1 ? LLVMBuildTrunc(cg->b, v, cg_type(cg, dt), "") : v;
            continue;
        }
        LLVMValueRef pred = has_mask ? m.el[m.n == 1 ? 0 : s]
                                     : LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
        LLVMValueRef other = has_other ? o.el[o.n == 1 ? 0 : s] : zero;
        r.el[s] = asm_load(cg, op, dt, p.el[s], pred, other, cache);
    }
    cg_set(cg, op->results[0], r);
}

static void emit_store(Cg *cg, const IrOp *op)
{
    DType dt = op->operands[1]->type.dt;
    CgVal p = cg_get(cg, op->operands[0]);
    CgVal v = cg_get(cg, op->operands[1]);
    bool has_mask = op->nops > 2 && op->operands[2];
    CgVal m = has_mask ? cg_get(cg, op->operands[2]) : p;
    char buf[32];
    const char *cache = cache_suffix(cg, op, true, buf, sizeof buf);
    bool plain = !has_mask && !*cache && !(op->flags & IRF_VOLATILE);
    for (int s = 0; s < p.n; s++) {
        LLVMValueRef val = v.el[v.n == 1 ? 0 : s];
        if (plain) {
            if (dt == DT_I1)
                val = LLVMBuildZExt(cg->b, val, LLVMInt8TypeInContext(cg->ctx), "");
            LLVMBuildStore(cg->b, val, p.el[s]);
            continue;
        }
        LLVMValueRef pred = has_mask ? m.el[m.n == 1 ? 0 : s]
                                     : LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
        asm_store(cg, op, dt, p.el[s], pred, val, cache);
    }
}

/* ---- atomics ---------------------------------------------------------------------- */

static LLVMAtomicOrdering ordering(const char *sem)
{
    if (!sem || !*sem || strcmp(sem, "acq_rel") == 0)
        return LLVMAtomicOrderingAcquireRelease;
    if (strcmp(sem, "relaxed") == 0)
        return LLVMAtomicOrderingMonotonic;
    if (strcmp(sem, "acquire") == 0)
        return LLVMAtomicOrderingAcquire;
    if (strcmp(sem, "release") == 0)
        return LLVMAtomicOrderingRelease;
    return LLVMAtomicOrderingAcquireRelease;
}

static LLVMAtomicOrdering failure_ordering(LLVMAtomicOrdering o)
{
    if (o == LLVMAtomicOrderingAcquireRelease || o == LLVMAtomicOrderingAcquire)
        return LLVMAtomicOrderingAcquire;
    return LLVMAtomicOrderingMonotonic;
}

static bool rmw_op(Cg *cg, const IrOp *op, DType dt, LLVMAtomicRMWBinOp *out)
{
    bool fl = dtype_is_float(dt), sg = dtype_is_signed(dt);
    switch ((AtomicKind)op->sub) {
    case ATOM_ADD: *out = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd; return true;
    case ATOM_MAX:
        *out = fl ? LLVMAtomicRMWBinOpFMax : sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax;
        return true;
    case ATOM_MIN:
        *out = fl ? LLVMAtomicRMWBinOpFMin : sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin;
        return true;
    case ATOM_XCHG: *out = LLVMAtomicRMWBinOpXchg; return true;
    case ATOM_AND: case ATOM_OR: case ATOM_XOR:
        if (fl) {
            cg_error(cg, op->span, "atomic and/or/xor need an integer dtype, not %s",
                     dtype_name(dt));
            return false;
        }
        *out = op->sub == ATOM_AND ? LLVMAtomicRMWBinOpAnd
               : op->sub == ATOM_OR ? LLVMAtomicRMWBinOpOr : LLVMAtomicRMWBinOpXor;
        return true;
    }
    cg_internal(cg, op->span, "unknown atomic kind %d", op->sub);
    return false;
}

/* One atomic, run only where pred holds; returns the old value (undef elsewhere). */
static LLVMValueRef guarded_atomic(Cg *cg, const IrOp *op, DType dt, LLVMValueRef pred,
                                   LLVMValueRef ptr, LLVMValueRef cmpv, LLVMValueRef val,
                                   LLVMAtomicRMWBinOp rop, LLVMValueRef smem_slot)
{
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef doit = cg_new_bb(cg, "atomic");
    LLVMBasicBlockRef cont = cg_new_bb(cg, "atomic.cont");
    LLVMBuildCondBr(cg->b, pred, doit, cont);
    LLVMPositionBuilderAtEnd(cg->b, doit);
    LLVMAtomicOrdering ord = ordering(op->str);
    LLVMValueRef old;
    if (op->kind == IR_ATOMIC_CAS) {
        bool fl = dtype_is_float(dt);
        LLVMTypeRef it = LLVMIntTypeInContext(cg->ctx, (unsigned)dtype_bits(dt));
        LLVMValueRef c = fl ? LLVMBuildBitCast(cg->b, cmpv, it, "") : cmpv;
        LLVMValueRef v = fl ? LLVMBuildBitCast(cg->b, val, it, "") : val;
        LLVMValueRef pair = LLVMBuildAtomicCmpXchg(cg->b, ptr, c, v, ord, failure_ordering(ord), 0);
        old = LLVMBuildExtractValue(cg->b, pair, 0, "");
        if (fl)
            old = LLVMBuildBitCast(cg->b, old, cg_type(cg, dt), "");
    } else {
        old = LLVMBuildAtomicRMW(cg->b, rop, ptr, val, ord, 0);
    }
    if (smem_slot)
        LLVMBuildStore(cg->b, old, smem_slot);
    LLVMBasicBlockRef done = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, cont);
    LLVMPositionBuilderAtEnd(cg->b, cont);
    LLVMValueRef phi = LLVMBuildPhi(cg->b, cg_type(cg, dt), "");
    LLVMValueRef inc[2] = {old, LLVMGetUndef(cg_type(cg, dt))};
    LLVMBasicBlockRef bbs[2] = {done, from};
    LLVMAddIncoming(phi, inc, bbs, 2);
    return phi;
}

static void emit_atomic(Cg *cg, const IrOp *op)
{
    Type rt = op->results[0]->type;
    DType dt = rt.dt;
    if (dt == DT_I1 || dtype_bits(dt) < 16) {
        cg_error(cg, op->span, "atomics on %s are not supported (use 16, 32 or 64-bit dtypes)",
                 dtype_name(dt));
        return;
    }
    bool cas = op->kind == IR_ATOMIC_CAS;
    LLVMAtomicRMWBinOp rop = LLVMAtomicRMWBinOpAdd;
    if (!cas && !rmw_op(cg, op, dt, &rop))
        return;
    CgLayout l = cg_layout(cg, rt);
    CgVal p = cg_get(cg, op->operands[0]);
    CgVal c = cas ? cg_get(cg, op->operands[1]) : p;
    CgVal v = cg_get(cg, op->operands[cas ? 2 : 1]);
    bool has_mask = !cas && op->nops > 2 && op->operands[2];
    CgVal m = has_mask ? cg_get(cg, op->operands[2]) : p;
    bool repeated = l.nchunks < cg->T;
    LLVMValueRef owner = cg_owner(cg, &l);
    CgVal r = cg_val_new(cg, p.n);
    if (repeated)
        cg_smem_need(cg, l.numel * cg_mem_bytes(dt));
    for (int s = 0; s < p.n; s++) {
        LLVMValueRef pred = owner;
        if (has_mask)
            pred = LLVMBuildAnd(cg->b, pred, m.el[m.n == 1 ? 0 : s], "");
        LLVMValueRef slot = repeated ? cg_smem_addr(cg, 0, cg_elem_index(cg, &l, s), dt) : NULL;
        r.el[s] = guarded_atomic(cg, op, dt, pred, p.el[s], c.el[c.n == 1 ? 0 : s],
                                 v.el[v.n == 1 ? 0 : s], rop, slot);
    }
    if (repeated) { /* the copies learn the old value from the owner */
        cg_barrier(cg);
        for (int s = 0; s < p.n; s++)
            r.el[s] = LLVMBuildLoad2(cg->b, cg_type(cg, dt),
                                     cg_smem_addr(cg, 0, cg_elem_index(cg, &l, s), dt), "");
        cg_barrier(cg);
    }
    cg_set(cg, op->results[0], r);
}

bool cg_emit_memory(Cg *cg, const IrOp *op)
{
    switch (op->kind) {
    case IR_LOAD: emit_load(cg, op); return true;
    case IR_STORE: emit_store(cg, op); return true;
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: emit_atomic(cg, op); return true;
    default: return false;
    }
}
