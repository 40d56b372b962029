/* codegen/memory.c: global loads, stores and atomics. Masked or cache-hinted
 * accesses go through inline PTX so that the mask becomes a predicate
 * (`@%p ld.global`): masked-off lanes never touch memory and take `other`.
 * Atomics run once per element (repeated copies of small blocks are
 * skipped) with Triton's memory semantics (inline PTX: ordered atom forms,
 * predicated by the mask and vectorised like stores, red when nothing reads
 * the result and the ordering allows it, fences around compare-and-swap
 * loops) and give the old value to every thread holding the element. */
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

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
            cg_error(cg, op->span,
                     "unknown eviction policy '%s' (expected evict_first, "
                     "evict_last or evict_normal)",
                     ev);
    }
    return buf;
}

static LLVMValueRef inline_asm(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np, const char *text,
                               const char *cons, LLVMValueRef *args)
{
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, (unsigned)np, 0);
    LLVMValueRef ia = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 1, 0,
                                       LLVMInlineAsmDialectATT, 0);
    return cg_returns(cg, LLVMBuildCall2(cg->b, ft, ia, args, (unsigned)np, ""));
}

/* "{ $i, $i+1, ... }" or "$i" for a vector of n registers starting at operand i. */
static void reg_list(char *buf, size_t cap, int first, int n)
{
    if (n == 1) {
        snprintf(buf, cap, "$%d", first);
        return;
    }
    size_t len = (size_t)snprintf(buf, cap, "{ ");
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, i ? ", $%d" : "$%d", first + i);
    if (len < cap)
        snprintf(buf + len, cap - len, " }");
}

/* One predicated load of vw consecutive elements; `other` where the predicate
 * is false. Results go to out[0..vw). */
static void asm_load(Cg *cg, const IrOp *op, DType dt, int vw, LLVMValueRef ptr, LLVMValueRef pred,
                     const LLVMValueRef *other, const char *cache, LLVMValueRef *out)
{
    int bits = elem_bits(dt), rb = bits <= 16 ? 16 : bits;
    bool vol = op->flags & IRF_VOLATILE;
    char text[512], cons[160], regs[96], vec[8];
    size_t len = 0;
    for (int i = 0; i < vw; i++)
        len +=
            (size_t)snprintf(text + len, sizeof text - len, "mov.b%d $%d, $%d;\n\t", rb, i, vw + i);
    reg_list(regs, sizeof regs, 0, vw);
    snprintf(vec, sizeof vec, vw > 1 ? ".v%d" : "", vw);
    snprintf(text + len, sizeof text - len, "@$%d ld%s.global%s%s.b%d %s, [ $%d + 0 ];", 2 * vw,
             vol ? ".volatile" : "", vol ? "" : cache, vec, bits, regs, 2 * vw + 1);
    const char *rc = reg_cons(bits);
    len = 0;
    for (int i = 0; i < vw; i++)
        len += (size_t)snprintf(cons + len, sizeof cons - len, "=%s,", rc);
    for (int i = 0; i < vw; i++)
        len += (size_t)snprintf(cons + len, sizeof cons - len, "%s,", rc);
    snprintf(cons + len, sizeof cons - len, "b,l");
    LLVMTypeRef rt = reg_type(cg, bits), pt[10], fields[4];
    LLVMValueRef args[10];
    for (int i = 0; i < vw; i++) {
        pt[i] = rt;
        args[i] = to_reg(cg, other[i], dt);
        fields[i] = rt;
    }
    pt[vw] = LLVMInt1TypeInContext(cg->ctx);
    pt[vw + 1] = cg_type(cg, DT_PTR);
    args[vw] = pred;
    args[vw + 1] = ptr;
    LLVMTypeRef ret = vw == 1 ? rt : LLVMStructTypeInContext(cg->ctx, fields, (unsigned)vw, 0);
    LLVMValueRef r = inline_asm(cg, ret, pt, vw + 2, text, cons, args);
    for (int i = 0; i < vw; i++)
        out[i] = from_reg(cg, vw == 1 ? r : LLVMBuildExtractValue(cg->b, r, (unsigned)i, ""), dt);
}

static void asm_store(Cg *cg, const IrOp *op, DType dt, int vw, LLVMValueRef ptr, LLVMValueRef pred,
                      const LLVMValueRef *val, const char *cache)
{
    int bits = elem_bits(dt);
    bool vol = op->flags & IRF_VOLATILE;
    char text[256], cons[96], regs[96], vec[8];
    reg_list(regs, sizeof regs, 2, vw);
    snprintf(vec, sizeof vec, vw > 1 ? ".v%d" : "", vw);
    snprintf(text, sizeof text, "@$0 st%s.global%s%s.b%d [ $1 + 0 ], %s;", vol ? ".volatile" : "",
             vol ? "" : cache, vec, bits, regs);
    size_t len = (size_t)snprintf(cons, sizeof cons, "b,l");
    for (int i = 0; i < vw; i++)
        len += (size_t)snprintf(cons + len, sizeof cons - len, ",%s", reg_cons(bits));
    LLVMTypeRef pt[6] = {LLVMInt1TypeInContext(cg->ctx), cg_type(cg, DT_PTR)};
    LLVMValueRef args[6] = {pred, ptr};
    for (int i = 0; i < vw; i++) {
        pt[2 + i] = reg_type(cg, bits);
        args[2 + i] = to_reg(cg, val[i], dt);
    }
    inline_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 2 + vw, text, cons, args);
}

/* Elements per access: what axis analysis proves, within one chunk of the
 * layout. More than 4 (bytes, halves) travel packed in 32-bit words. */
static int vector_width(Cg *cg, const IrValue *ptr, const IrValue *mask, DType dt)
{
    if (!cg->axis || ptr->type.rank == 0)
        return 1;
    CgLayout l = cg_layout(cg, ptr);
    int dim, v = lin_run(&l.lin, ptr->type.rank, ptr->type.shape, &dim);
    int w = axis_vector_width_along(cg->axis, ptr, mask, cg_mem_bytes(dt), dim);
    if (w > v)
        w = v;
    if (w < 1 || !is_pow2(w) || w * elem_bits(dt) > 128)
        return 1;
    return w;
}

/* The raw bits of an element (i1 as a byte) and back. */
static LLVMValueRef to_bits(Cg *cg, LLVMValueRef v, DType dt)
{
    if (dt == DT_I1)
        return LLVMBuildZExt(cg->b, v, LLVMInt8TypeInContext(cg->ctx), "");
    if (dtype_is_float(dt))
        return LLVMBuildBitCast(cg->b, v, LLVMIntTypeInContext(cg->ctx, (unsigned)dtype_bits(dt)),
                                "");
    return v;
}

static LLVMValueRef from_bits(Cg *cg, LLVMValueRef x, DType dt)
{
    if (dt == DT_I1)
        return LLVMBuildICmp(cg->b, LLVMIntNE, x, LLVMConstInt(LLVMTypeOf(x), 0, 0), "");
    if (dtype_is_float(dt))
        return LLVMBuildBitCast(cg->b, x, cg_type(cg, dt), "");
    return x;
}

/* vw small elements -> vw * bits / 32 words, element 0 in the low bits. */
static void pack_words(Cg *cg, DType dt, int vw, const LLVMValueRef *el, LLVMValueRef *words)
{
    int bits = elem_bits(dt), per = 32 / bits;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    for (int w = 0; w < vw / per; w++) {
        LLVMValueRef acc = LLVMConstInt(i32, 0, 0);
        for (int i = 0; i < per; i++) {
            LLVMValueRef x = LLVMBuildZExt(cg->b, to_bits(cg, el[w * per + i], dt), i32, "");
            x = LLVMBuildShl(cg->b, x, LLVMConstInt(i32, (unsigned)(i * bits), 0), "");
            acc = LLVMBuildOr(cg->b, acc, x, "");
        }
        words[w] = acc;
    }
}

void cg_unpack_words(Cg *cg, DType dt, int vw, const LLVMValueRef *words, LLVMValueRef *el)
{
    int bits = elem_bits(dt), per = 32 / bits;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMTypeRef it = LLVMIntTypeInContext(cg->ctx, (unsigned)bits);
    for (int i = 0; i < vw; i++) {
        LLVMValueRef x = LLVMBuildLShr(cg->b, words[i / per],
                                       LLVMConstInt(i32, (unsigned)(i % per * bits), 0), "");
        el[i] = from_bits(cg, LLVMBuildTrunc(cg->b, x, it, ""), dt);
    }
}

static LLVMValueRef plain_load(Cg *cg, DType dt, int vw, LLVMValueRef ptr, LLVMValueRef *out)
{
    LLVMTypeRef et = cg_mem_type(cg, dt);
    LLVMTypeRef t = vw == 1 ? et : LLVMVectorType(et, (unsigned)vw);
    LLVMValueRef v = LLVMBuildLoad2(cg->b, t, ptr, "");
    LLVMSetAlignment(v, (unsigned)(vw * cg_mem_bytes(dt)));
    for (int i = 0; i < vw; i++) {
        LLVMValueRef x = vw == 1 ? v : LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), "");
        out[i] = dt == DT_I1 ? LLVMBuildICmp(cg->b, LLVMIntNE, x, LLVMConstInt(et, 0, 0), "") : x;
    }
    return v;
}

static void plain_store(Cg *cg, DType dt, int vw, LLVMValueRef ptr, const LLVMValueRef *val)
{
    LLVMTypeRef et = cg_mem_type(cg, dt);
    LLVMValueRef v = vw == 1 ? NULL : LLVMGetUndef(LLVMVectorType(et, (unsigned)vw));
    for (int i = 0; i < vw; i++) {
        LLVMValueRef x = val[i];
        if (dt == DT_I1)
            x = LLVMBuildZExt(cg->b, x, et, "");
        v = vw == 1 ? x : LLVMBuildInsertElement(cg->b, v, x, cg_i32(cg, i), "");
    }
    LLVMValueRef st = LLVMBuildStore(cg->b, v, ptr);
    LLVMSetAlignment(st, (unsigned)(vw * cg_mem_bytes(dt)));
}

/* Whether op runs in a loop's body (any depth). */
bool cg_in_loop(const IrOp *op)
{
    for (const IrBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        if (b->parent->kind == IR_FOR || b->parent->kind == IR_WHILE)
            return true;
    return false;
}

/* By chunk of vw slots: the first chunk holding the same elements (a
 * slice layout repeats a thread's elements along the dim it dropped), read
 * from memory once and copied. */
static int *same_chunks(Cg *cg, const IrOp *op, int n, int vw)
{
    CgLayout l = cg_layout(cg, op->results[0]);
    int nch = n / vw, *first = cg_alloc(cg, sizeof(int) * (size_t)nch);
    bool same_layout = l.per_thread == n; /* the slots are the layout's */
    for (int c = 0; c < nch; c++) {
        first[c] = c;
        for (int e = 0; e < c && first[c] == c && same_layout; e++) {
            bool same = first[e] == e;
            for (int i = 0; i < vw && same; i++)
                same = cg_slot_index(&l, e * vw + i) == cg_slot_index(&l, c * vw + i);
            if (same)
                first[c] = e;
        }
    }
    return first;
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
    int vw = vector_width(cg, op->operands[0], has_mask ? op->operands[1] : NULL, dt);
    CgVal r = cg_val_new(cg, p.n);
    LLVMValueRef zero = cg_const_elem(cg, dt, 0, 0.0);
    bool packed = vw > 4; /* 8 or 16 small elements in 2 or 4 words */
    /* Small elements of a plain load come as words too: LLVM splits a load
     * of a vector of 16-bit floats read element by element into scalar
     * loads and merges them back only in pairs (two 4-byte loads for an
     * 8-byte bf16 vector). */
    bool words_in = packed || (plain && elem_bits(dt) < 32 && vw * elem_bits(dt) >= 32);
    int nw = words_in ? vw * elem_bits(dt) / 32 : vw;
    DType wt = words_in ? DT_U32 : dt;
    /* A thread's loads are issued before any word is unpacked, and the last
     * first where they must overlap: packed loads, and up to four vector
     * loads in a loop (eight took a layer norm from 64 to 74 registers and
     * made it 1% slower). The elements are used first to last, and ptxas keeps the loads
     * together only when the first used comes last; otherwise it sinks each
     * later load below the uses of the one before, and each iteration waits
     * for memory once per load. Other loads keep their order: a GEMM
     * epilogue's scale vectors, reversed, hold more registers while the
     * accumulators are live (one CTA per SM fewer). */
    LLVMValueRef *words = words_in ? cg_alloc(cg, sizeof *words * (size_t)(p.n / vw * nw)) : NULL;
    bool last_first = packed || (vw > 1 && p.n / vw <= 4 && cg_in_loop(op));
    int first = last_first ? p.n - vw : 0, step = last_first ? -vw : vw;
    int *same = same_chunks(cg, op, p.n, vw);
    for (int s = first; s >= 0 && s < p.n; s += step) {
        LLVMValueRef other[16];
        if (same[s / vw] != s / vw)
            continue; /* copied below */
        LLVMValueRef *dst = words_in ? words + s / vw * nw : r.el + s;
        if (plain) {
            plain_load(cg, wt, nw, p.el[s], dst);
        } else {
            LLVMValueRef pred = has_mask ? m.el[m.n == 1 ? 0 : s]
                                         : LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
            for (int i = 0; i < vw; i++)
                other[i] = has_other ? o.el[o.n == 1 ? 0 : s + i] : zero;
            if (words_in)
                pack_words(cg, dt, vw, other, other);
            asm_load(cg, op, wt, nw, p.el[s], pred, other, cache, dst);
        }
    }
    for (int s = 0; words_in && s < p.n; s += vw)
        if (same[s / vw] == s / vw)
            cg_unpack_words(cg, dt, vw, words + s / vw * nw, r.el + s);
    for (int s = 0; s < p.n; s++)
        r.el[s] = r.el[same[s / vw] * vw + s % vw];
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
    /* only the first copy of a repeated (small or scalar) block writes */
    CgLayout l = cg_layout(cg, op->operands[0]);
    bool repeated = l.copies != 0;
    LLVMValueRef owner = repeated ? cg_owner(cg, &l) : NULL;
    bool plain = !has_mask && !repeated && !*cache && !(op->flags & IRF_VOLATILE);
    int vw = vector_width(cg, op->operands[0], has_mask ? op->operands[2] : NULL, dt);
    bool packed = vw > 4;
    int nw = packed ? vw * elem_bits(dt) / 32 : vw;
    DType wt = packed ? DT_U32 : dt;
    int64_t dup = lin_reg_copies(&l.lin); /* registers repeating others write nothing */
    for (int s = 0; s < p.n; s += vw) {
        LLVMValueRef val[16];
        if (s & dup)
            continue;
        for (int i = 0; i < vw; i++)
            val[i] = v.el[v.n == 1 ? 0 : s + i];
        if (packed)
            pack_words(cg, dt, vw, val, val);
        if (plain) {
            plain_store(cg, wt, nw, p.el[s], val);
            continue;
        }
        LLVMValueRef pred =
            has_mask ? m.el[m.n == 1 ? 0 : s] : LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
        if (owner)
            pred = LLVMBuildAnd(cg->b, pred, owner, "");
        asm_store(cg, op, wt, nw, p.el[s], pred, val, cache);
    }
}

/* ---- atomics ---------------------------------------------------------------------- */

/* Triton's memory semantics in PTX. An op and dtype that PTX has as one
 * atom instruction is that instruction with its ordering and scope,
 * atom.global.<sem>.<scope>.<op>.<type>; the rest (float max/min, 16-bit
 * exchange, bf16 add before sm_90) are a loop of relaxed compare-and-swaps
 * at the scope, after a fence.acq_rel.<scope> when the atomic releases and
 * before one when it acquires. Inline PTX because LLVM 19's NVPTX backend
 * drops the ordering and scope of atomicrmw and cmpxchg. */

static MemSem sem_of(const IrOp *op)
{
    int m = mem_sem_parse(op->str);
    return m < 0 ? SEM_ACQ_REL : (MemSem)m;
}

static MemScope scope_of(const IrOp *op)
{
    int m = mem_scope_parse(op->str2);
    return m < 0 ? SCOPE_GPU : (MemScope)m;
}

static bool releases(MemSem m) { return m == SEM_RELEASE || m == SEM_ACQ_REL; }
static bool acquires(MemSem m) { return m == SEM_ACQUIRE || m == SEM_ACQ_REL; }

/* "op.type" of the single atom instruction for this atomic and dtype; false
 * where PTX has none on this sm. vw > 1: the vector form of a float add
 * ("add.v4.f32", "add.noftz.v8.f16"), which only atomic_width asks for. */
static bool atom_form(Cg *cg, const IrOp *op, DType dt, int vw, char *buf, size_t cap)
{
    char vec[16] = "";
    if (vw > 1)
        snprintf(vec, sizeof vec, ".v%d", vw);
    int bits = dtype_bits(dt);
    bool fl = dtype_is_float(dt);
    if (op->kind == IR_ATOMIC_CAS) {
        snprintf(buf, cap, "cas.b%d", bits);
        return true;
    }
    const char *name = NULL;
    char ty = 'b';
    switch ((AtomicKind)op->sub) {
    case ATOM_ADD:
        if (dt == DT_F16 || (dt == DT_BF16 && cg->sm >= 90)) {
            snprintf(buf, cap, "add.noftz%s.%s", vec, dt == DT_F16 ? "f16" : "bf16");
            return true;
        }
        name = "add";
        ty = fl ? 'f' : 'u';
        break;
    case ATOM_MAX:
    case ATOM_MIN:
        name = op->sub == ATOM_MAX ? "max" : "min";
        ty = dtype_is_signed(dt) ? 's' : 'u';
        break;
    case ATOM_XCHG: name = "exch"; break;
    case ATOM_AND: name = "and"; break;
    case ATOM_OR: name = "or"; break;
    case ATOM_XOR: name = "xor"; break;
    }
    if (!name || bits < 32 || (fl && op->sub != ATOM_ADD && op->sub != ATOM_XCHG))
        return false;
    snprintf(buf, cap, "%s%s.%c%d", name, vec, ty, bits);
    return true;
}

static void asm_fence(Cg *cg, MemScope scope)
{
    char text[48];
    snprintf(text, sizeof text, "fence.acq_rel.%s;", mem_scope_name(scope));
    inline_asm(cg, LLVMVoidTypeInContext(cg->ctx), NULL, 0, text, "~{memory}", NULL);
}

/* One PTX instruction "<head> $0, [ $1 + 0 ], $2[, $3];" on registers of the
 * element's width: ptr and one or two values in, one value out. */
static LLVMValueRef asm_atom(Cg *cg, DType dt, const char *head, LLVMValueRef ptr, LLVMValueRef a,
                             LLVMValueRef b)
{
    int bits = dtype_bits(dt);
    const char *rc = reg_cons(bits);
    char text[128], cons[48];
    snprintf(text, sizeof text, "%s $0, [ $1 + 0 ], $2%s;", head, b ? ", $3" : "");
    snprintf(cons, sizeof cons, "=%s,l,%s%s%s,~{memory}", rc, rc, b ? "," : "", b ? rc : "");
    LLVMTypeRef rt = reg_type(cg, bits);
    LLVMTypeRef pt[3] = {cg_type(cg, DT_PTR), rt, rt};
    LLVMValueRef args[3] = {ptr, a, b};
    return inline_asm(cg, rt, pt, b ? 3 : 2, text, cons, args);
}

/* old (kind) val for the compare-and-swap loop, in the element's dtype;
 * float max/min skip NaN (as fmax), like the interpreter. */
static LLVMValueRef combine(Cg *cg, const IrOp *op, DType dt, LLVMValueRef old, LLVMValueRef val)
{
    switch ((AtomicKind)op->sub) {
    case ATOM_ADD: return cg_binop(cg, IR_ADD, 0, dt, old, val);
    case ATOM_MAX: return cg_binop(cg, IR_MAX, 0, dt, old, val);
    case ATOM_MIN: return cg_binop(cg, IR_MIN, 0, dt, old, val);
    case ATOM_AND: return cg_binop(cg, IR_AND, 0, dt, old, val);
    case ATOM_OR: return cg_binop(cg, IR_OR, 0, dt, old, val);
    case ATOM_XOR: return cg_binop(cg, IR_XOR, 0, dt, old, val);
    case ATOM_XCHG: break;
    }
    return val;
}

/* An atomic PTX has no instruction for: relaxed loads and compare-and-swaps
 * at the scope until the swap lands; returns the old value. */
static LLVMValueRef cas_loop(Cg *cg, const IrOp *op, DType dt, LLVMValueRef ptr, LLVMValueRef val)
{
    int bits = dtype_bits(dt);
    const char *scope = mem_scope_name(scope_of(op));
    char head[64];
    snprintf(head, sizeof head, "ld.relaxed.%s.global.b%d", scope, bits);
    LLVMTypeRef rt = reg_type(cg, bits), pt = cg_type(cg, DT_PTR);
    char cons[32];
    snprintf(cons, sizeof cons, "=%s,l,~{memory}", reg_cons(bits));
    char text[96];
    snprintf(text, sizeof text, "%s $0, [ $1 + 0 ];", head);
    LLVMValueRef first = inline_asm(cg, rt, &pt, 1, text, cons, &ptr);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef loop = cg_new_bb(cg, "atomic.cas");
    LLVMBasicBlockRef done = cg_new_bb(cg, "atomic.cas.done");
    LLVMBuildBr(cg->b, loop);
    LLVMPositionBuilderAtEnd(cg->b, loop);
    LLVMValueRef cur = LLVMBuildPhi(cg->b, rt, "");
    LLVMValueRef want = to_reg(cg, combine(cg, op, dt, from_reg(cg, cur, dt), val), dt);
    snprintf(head, sizeof head, "atom.global.relaxed.%s.cas.b%d", scope, bits);
    LLVMValueRef got = asm_atom(cg, dt, head, ptr, cur, want);
    LLVMValueRef in[2] = {first, got};
    LLVMBasicBlockRef bbs[2] = {from, LLVMGetInsertBlock(cg->b)};
    LLVMAddIncoming(cur, in, bbs, 2);
    LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, got, cur, ""), done, loop);
    LLVMPositionBuilderAtEnd(cg->b, done);
    return from_reg(cg, cur, dt);
}

/* One atomic on one element. */
static LLVMValueRef one_atomic(Cg *cg, const IrOp *op, DType dt, LLVMValueRef ptr,
                               LLVMValueRef cmpv, LLVMValueRef val)
{
    MemSem sem = sem_of(op);
    MemScope scope = scope_of(op);
    char form[32], head[96];
    if (!atom_form(cg, op, dt, 1, form, sizeof form)) {
        if (releases(sem))
            asm_fence(cg, scope);
        LLVMValueRef old = cas_loop(cg, op, dt, ptr, val);
        if (acquires(sem))
            asm_fence(cg, scope);
        return old;
    }
    snprintf(head, sizeof head, "atom.global.%s.%s.%s", mem_sem_name(sem), mem_scope_name(scope),
             form);
    if (op->kind == IR_ATOMIC_CAS)
        return from_reg(cg, asm_atom(cg, dt, head, ptr, to_reg(cg, cmpv, dt), to_reg(cg, val, dt)),
                        dt);
    return from_reg(cg, asm_atom(cg, dt, head, ptr, to_reg(cg, val, dt), NULL), dt);
}

/* One atomic, run only where pred holds; returns the old value (undef elsewhere). */
static LLVMValueRef guarded_atomic(Cg *cg, const IrOp *op, DType dt, LLVMValueRef pred,
                                   LLVMValueRef ptr, LLVMValueRef cmpv, LLVMValueRef val,
                                   LLVMValueRef smem_slot)
{
    LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef doit = cg_new_bb(cg, "atomic");
    LLVMBasicBlockRef cont = cg_new_bb(cg, "atomic.cont");
    LLVMBuildCondBr(cg->b, pred, doit, cont);
    LLVMPositionBuilderAtEnd(cg->b, doit);
    LLVMValueRef old = one_atomic(cg, op, dt, ptr, cmpv, val);
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

/* Whether any op reads v (the old values of an atomic). */
typedef struct UseFind {
    const IrValue *v;
    bool found;
} UseFind;

static bool find_use(IrOp *op, void *ctx)
{
    UseFind *u = ctx;
    for (int i = 0; i < op->nops && !u->found; i++)
        u->found = op->operands[i] == u->v;
    return !u->found;
}

static bool value_used(Cg *cg, const IrValue *v)
{
    UseFind u = {v, false};
    ir_walk(cg->f->body, find_use, &u);
    return u.found;
}

/* Elements per atom instruction. sm_90 has vector forms of float add (.v2
 * and .v4 of f32, .v2 to .v8 of f16 and bf16; PTX ISA 8.1): as many
 * consecutive elements as the pointers and the mask allow, up to 16 bytes,
 * as for loads and stores. cg_vector_atomics picks the PTX ISA to match. */
static int atomic_width(Cg *cg, const IrOp *op, DType dt)
{
    if (!ir_atomic_vectorizes(op, dt, cg->sm))
        return 1;
    bool has_mask = op->nops > 2 && op->operands[2];
    return vector_width(cg, op->operands[0], has_mask ? op->operands[2] : NULL, dt);
}

typedef struct VecFind {
    int sm;
    bool found;
} VecFind;

static bool find_vector_atomic(IrOp *op, void *ctx)
{
    VecFind *v = ctx;
    v->found = op->nres && op->results[0]->type.rank > 0 &&
        ir_atomic_vectorizes(op, op->results[0]->type.dt, v->sm);
    return !v->found;
}

bool cg_vector_atomics(const IrFunc *f, int sm)
{
    VecFind v = {sm, false};
    ir_walk(f->body, find_vector_atomic, &v);
    return v.found;
}

/* One predicated instruction on vw consecutive elements,
 * "@$p <head> <old>, [ $ptr + 0 ], <val>[, <val2>];", the old values out
 * (a struct of vw registers, or one); red (no result) when !ret. */
static LLVMValueRef asm_atom_pred(Cg *cg, DType dt, const char *head, int vw, bool ret,
                                  LLVMValueRef pred, LLVMValueRef ptr, const LLVMValueRef *val,
                                  LLVMValueRef val2)
{
    int bits = dtype_bits(dt), o = ret ? vw : 0;
    const char *rc = reg_cons(bits);
    char text[384], cons[128], outs[64], ins[64], extra[16] = "";
    reg_list(outs, sizeof outs, 0, vw);
    reg_list(ins, sizeof ins, o + 2, vw);
    if (val2)
        snprintf(extra, sizeof extra, ", $%d", o + 2 + vw);
    snprintf(text, sizeof text, "@$%d %s %s%s[ $%d + 0 ], %s%s;", o, head, ret ? outs : "",
             ret ? ", " : "", o + 1, ins, extra);
    size_t len = 0;
    for (int i = 0; i < o; i++)
        len += (size_t)snprintf(cons + len, sizeof cons - len, "=%s,", rc);
    len += (size_t)snprintf(cons + len, sizeof cons - len, "b,l");
    for (int i = 0; i < vw + (val2 != NULL); i++)
        len += (size_t)snprintf(cons + len, sizeof cons - len, ",%s", rc);
    snprintf(cons + len, sizeof cons - len, ",~{memory}");
    LLVMTypeRef rt = reg_type(cg, bits), pt[12], fields[8];
    LLVMValueRef args[12];
    int np = 0;
    pt[np] = LLVMInt1TypeInContext(cg->ctx);
    args[np++] = pred;
    pt[np] = cg_type(cg, DT_PTR);
    args[np++] = ptr;
    for (int i = 0; i < vw; i++) {
        pt[np] = rt;
        args[np++] = to_reg(cg, val[i], dt);
        fields[i] = rt;
    }
    if (val2) {
        pt[np] = rt;
        args[np++] = to_reg(cg, val2, dt);
    }
    LLVMTypeRef out = !ret ? LLVMVoidTypeInContext(cg->ctx)
        : vw == 1          ? rt
                           : LLVMStructTypeInContext(cg->ctx, fields, (unsigned)vw, 0);
    return inline_asm(cg, out, pt, np, text, cons, args);
}

/* An atomic that is one PTX instruction, as Triton lowers it: predicated by
 * the mask (no branch), vw elements at once, a red when the old value is
 * not wanted and the ordering allows (red has no acquire). Old values go
 * to old[0..vw) when ret. */
static void direct_atomic(Cg *cg, const IrOp *op, DType dt, int vw, bool ret, LLVMValueRef pred,
                          LLVMValueRef ptr, LLVMValueRef cmpv, const LLVMValueRef *val,
                          LLVMValueRef *old)
{
    MemSem sem = sem_of(op);
    bool red = !ret && !acquires(sem) && op->kind == IR_ATOMIC_RMW && op->sub != ATOM_XCHG;
    char form[32], head[96];
    atom_form(cg, op, dt, vw, form, sizeof form);
    snprintf(head, sizeof head, "%s.global.%s.%s.%s", red ? "red" : "atom", mem_sem_name(sem),
             mem_scope_name(scope_of(op)), form);
    bool cas = op->kind == IR_ATOMIC_CAS;
    LLVMValueRef r =
        asm_atom_pred(cg, dt, head, vw, !red, pred, ptr, cas ? &cmpv : val, cas ? val[0] : NULL);
    for (int i = 0; ret && i < vw; i++)
        old[i] = from_reg(cg, vw == 1 ? r : LLVMBuildExtractValue(cg->b, r, (unsigned)i, ""), dt);
}

/* Each element's atomic runs in the one thread that owns it. Where other
 * threads hold copies (a scalar atomic: once per program, as in Triton), a
 * barrier before a releasing atomic puts every thread's earlier accesses
 * before the release; when the old value is read, it reaches the copies
 * through shared memory after a barrier, which also orders their later
 * accesses after an acquire. An atomic PTX has as one instruction is
 * direct_atomic (when no copy waits for its value); the others branch
 * around a compare-and-swap loop. */
static void emit_atomic(Cg *cg, const IrOp *op)
{
    Type rt = op->results[0]->type;
    DType dt = rt.dt;
    if (dt == DT_I1 || dtype_bits(dt) < 16 ||
        (op->kind == IR_ATOMIC_RMW && (op->sub < ATOM_ADD || op->sub > ATOM_XOR))) {
        cg_error(cg, op->span, "atomics on %s are not supported (use 16, 32 or 64-bit dtypes)",
                 dtype_name(dt));
        return;
    }
    if (op->kind == IR_ATOMIC_RMW && dtype_is_float(dt) &&
        (op->sub == ATOM_AND || op->sub == ATOM_OR || op->sub == ATOM_XOR)) {
        cg_error(cg, op->span, "atomic and/or/xor need an integer dtype, not %s", dtype_name(dt));
        return;
    }
    bool cas = op->kind == IR_ATOMIC_CAS;
    CgLayout l = cg_layout(cg, op->results[0]);
    CgVal p = cg_get(cg, op->operands[0]);
    CgVal c = cas ? cg_get(cg, op->operands[1]) : p;
    CgVal v = cg_get(cg, op->operands[cas ? 2 : 1]);
    bool has_mask = !cas && op->nops > 2 && op->operands[2];
    CgVal m = has_mask ? cg_get(cg, op->operands[2]) : p;
    bool used = value_used(cg, op->results[0]);
    bool repeated = l.copies != 0, share = repeated && used;
    char form[32];
    bool direct = !share && atom_form(cg, op, dt, 1, form, sizeof form);
    int vw = direct ? atomic_width(cg, op, dt) : 1;
    LLVMValueRef owner = cg_owner(cg, &l);
    CgVal r = cg_val_new(cg, p.n);
    if (share)
        cg_smem_need(cg, l.numel * cg_mem_bytes(dt));
    if (repeated && releases(sem_of(op)))
        cg_barrier(cg);
    int64_t dup = lin_reg_copies(&l.lin);
    for (int s = 0; s < p.n; s += vw) {
        LLVMValueRef pred = owner, val[16];
        if (s & dup) /* a register repeating another: one atomic per element */
            continue;
        if (has_mask)
            pred = LLVMBuildAnd(cg->b, pred, m.el[m.n == 1 ? 0 : s], "");
        for (int i = 0; i < vw; i++)
            val[i] = v.el[v.n == 1 ? 0 : s + i];
        LLVMValueRef cmpv = c.el[c.n == 1 ? 0 : s];
        if (direct) {
            direct_atomic(cg, op, dt, vw, used, pred, p.el[s], cmpv, val, r.el + s);
            continue;
        }
        LLVMValueRef slot = NULL;
        if (share)
            slot = cg_smem_in_reg(cg, cg_smem_addr(cg, 0, cg_elem_index(cg, &l, s), dt));
        r.el[s] = guarded_atomic(cg, op, dt, pred, p.el[s], cmpv, val[0], slot);
    }
    if (share) { /* the copies learn the old value from the owner */
        cg_barrier(cg);
        for (int s = 0; s < p.n; s++)
            r.el[s] = LLVMBuildLoad2(cg->b, cg_type(cg, dt),
                                     cg_smem_addr(cg, 0, cg_elem_index(cg, &l, s), dt), "");
        cg_barrier(cg);
    }
    for (int s = 0; !share && s < p.n; s++)
        r.el[s] = !used ? LLVMGetUndef(cg_type(cg, dt)) : r.el[s & ~dup];
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
