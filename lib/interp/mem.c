/* interp/mem.c: loads, stores and atomics checked element by element
 * against the host buffers of the launch, plus device_print and
 * device_assert. Assumes pointer values are host addresses. Guarantees that
 * a masked-off lane touches nothing and is never reported, and that an
 * unmasked lane outside every buffer (or misaligned) stops the program with
 * an error naming the kernel, program, element, address and nearest buffer. */
#include "interp/internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* The buffer holding [addr, addr + size), or NULL. bufs are sorted by base. */
static const InterpBuffer *find_buf(const InterpLaunch *L, uint64_t addr, size_t size)
{
    int lo = 0, hi = L->nbufs - 1, at = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if ((uint64_t)(uintptr_t)L->bufs[mid].base <= addr) {
            at = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (at < 0)
        return NULL;
    const InterpBuffer *b = &L->bufs[at];
    uint64_t base = (uint64_t)(uintptr_t)b->base;
    return addr - base <= b->bytes && addr - base + size <= b->bytes ? b : NULL;
}

static bool inside(const InterpBuffer *b, uint64_t addr, size_t size)
{
    uint64_t base = (uint64_t)(uintptr_t)b->base;
    return addr >= base && addr - base <= b->bytes && addr - base + size <= b->bytes;
}

static void buf_name(char *out, size_t n, const InterpLaunch *L, const InterpBuffer *b)
{
    if (b->name)
        snprintf(out, n, "'%s'", b->name);
    else
        snprintf(out, n, "#%d", (int)(b - L->bufs));
}

/* Where addr lies relative to the nearest buffer, as a phrase. */
static void describe(char *out, size_t n, const InterpLaunch *L, uint64_t addr, size_t size)
{
    const InterpBuffer *best = NULL;
    uint64_t dist = UINT64_MAX, stop;
    if (__builtin_add_overflow(addr, size, &stop)) /* an access at the top of memory */
        stop = UINT64_MAX;
    for (int i = 0; i < L->nbufs; i++) {
        uint64_t base = (uint64_t)(uintptr_t)L->bufs[i].base, end = base + L->bufs[i].bytes;
        uint64_t d = addr < base ? base - addr : stop > end ? stop - end : 0;
        if (d < dist) {
            dist = d;
            best = &L->bufs[i];
        }
    }
    if (!best) {
        snprintf(out, n, "is not inside any buffer (the launch has none)");
        return;
    }
    char name[96];
    buf_name(name, sizeof name, L, best);
    uint64_t base = (uint64_t)(uintptr_t)best->base, end = base + best->bytes;
    if (addr < base)
        snprintf(out, n,
                 "is %" PRIu64 " bytes before the start of buffer %s (%zu bytes at 0x%" PRIx64 ")",
                 base - addr, name, best->bytes, base);
    else if (addr >= end)
        snprintf(out, n,
                 "is %" PRIu64 " bytes after the end of buffer %s (%zu bytes at 0x%" PRIx64 ")",
                 addr - end, name, best->bytes, base);
    else
        snprintf(out, n,
                 "runs %" PRIu64 " bytes past the end of buffer %s (%zu bytes at 0x%" PRIx64 ")",
                 stop - end, name, best->bytes, base);
}

static bool bad_access(InterpProg *p, const IrOp *op, const char *what, Type t, int64_t elem,
                       uint64_t addr, size_t size, bool misaligned)
{
    char idx[96], where[256];
    interp_format_index(idx, sizeof idx, t, elem);
    const char *lead = t.rank ? "element " : "scalar ";
    if (misaligned)
        return interp_fail(
            p, op,
            "misaligned %s in kernel '%s', program (%u, %u, %u), %s%s: address 0x%" PRIx64
            " is not a multiple of %zu bytes",
            what, p->L->f->name, p->pid[0], p->pid[1], p->pid[2], lead, t.rank ? idx : "access",
            addr, size);
    describe(where, sizeof where, p->L, addr, size);
    return interp_fail(
        p, op,
        "out-of-bounds %s in kernel '%s', program (%u, %u, %u), %s%s: address 0x%" PRIx64 " %s",
        what, p->L->f->name, p->pid[0], p->pid[1], p->pid[2], lead, t.rank ? idx : "access", addr,
        where);
}

/* Checks one access, keeping the last buffer found in *cur as a fast path. */
static bool check(InterpProg *p, const IrOp *op, const char *what, Type t, int64_t elem,
                  uint64_t addr, size_t size, const InterpBuffer **cur)
{
    if (addr % size)
        return bad_access(p, op, what, t, elem, addr, size, true);
    if (*cur && inside(*cur, addr, size))
        return true;
    *cur = find_buf(p->L, addr, size);
    return *cur ? true : bad_access(p, op, what, t, elem, addr, size, false);
}

static uint64_t read_mem(uint64_t addr, size_t size)
{
    uint64_t v = 0;
    const void *src = (const void *)(uintptr_t)addr;
    switch (size) {
    case 1: v = *(const uint8_t *)src; break;
    case 2: {
        uint16_t x;
        memcpy(&x, src, 2);
        v = x;
        break;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, src, 4);
        v = x;
        break;
    }
    default: memcpy(&v, src, 8); break;
    }
    return v;
}

static void write_mem(uint64_t addr, size_t size, uint64_t v)
{
    void *dst = (void *)(uintptr_t)addr;
    switch (size) {
    case 1: *(uint8_t *)dst = (uint8_t)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(dst, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(dst, &x, 4);
        break;
    }
    default: memcpy(dst, &v, 8); break;
    }
}

static const int64_t *mask_of(InterpProg *p, const IrOp *op, int i)
{
    return op->nops > i && op->operands[i] ? interp_slot(p, op->operands[i]) : NULL;
}

/* Element i of an operand that is either a block of n elements or a scalar. */
static int64_t at(const IrValue *v, int64_t i) { return v->type.rank ? i : 0; }

bool interp_load(InterpProg *p, const IrOp *op)
{
    const IrValue *pv = op->operands[0], *r = op->results[0];
    const IrValue *mv = op->nops > 1 ? op->operands[1] : NULL;
    const IrValue *ov = op->nops > 2 ? op->operands[2] : NULL;
    DType mdt = pv->type.elem, rdt = r->type.dt;
    size_t ms = interp_memsize(mdt), es = interp_elsize(rdt);
    const int64_t *ptr = interp_slot(p, pv), *mask = mask_of(p, op, 1);
    const unsigned char *other = ov ? interp_slot(p, ov) : NULL;
    unsigned char *out = interp_slot(p, r);
    /* sema gives a load its pointee dtype; should it not, read into tmp and convert */
    bool conv = mdt != rdt;
    unsigned char *dst = conv ? p->tmp : out;
    const InterpBuffer *cur = NULL;
    int64_t n = type_numel(r->type);
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[at(mv, i)]) {
            memset(dst + (size_t)i * interp_elsize(mdt), 0, interp_elsize(mdt));
            continue;
        }
        uint64_t addr = (uint64_t)ptr[at(pv, i)];
        if (!check(p, op, "load", r->type, i, addr, ms, &cur))
            return false;
        interp_from_bits(mdt, dst, i, read_mem(addr, ms));
    }
    if (conv)
        interp_cast(mdt, dst, rdt, out, n);
    for (int64_t i = 0; mask && i < n; i++) {
        if (mask[at(mv, i)])
            continue;
        if (other)
            memcpy(out + (size_t)i * es, other + (size_t)at(ov, i) * es, es);
        else
            memset(out + (size_t)i * es, 0, es);
    }
    return true;
}

/* The value operand in the pointee dtype (Triton casts stored values). */
static const void *as_pointee(InterpProg *p, const IrValue *v, DType mdt)
{
    if (v->type.dt == mdt)
        return interp_slot(p, v);
    interp_cast(v->type.dt, interp_slot(p, v), mdt, p->tmp, type_numel(v->type));
    return p->tmp;
}

bool interp_store(InterpProg *p, const IrOp *op)
{
    const IrValue *pv = op->operands[0], *vv = op->operands[1];
    const IrValue *mv = op->nops > 2 ? op->operands[2] : NULL;
    DType mdt = pv->type.elem;
    size_t ms = interp_memsize(mdt);
    const int64_t *ptr = interp_slot(p, pv), *mask = mask_of(p, op, 2);
    const void *val = as_pointee(p, vv, mdt);
    const InterpBuffer *cur = NULL;
    Type t = pv->type.rank ? pv->type : vv->type;
    int64_t n = type_numel(t);
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[at(mv, i)])
            continue;
        uint64_t addr = (uint64_t)ptr[at(pv, i)];
        if (!check(p, op, "store", t, i, addr, ms, &cur))
            return false;
        write_mem(addr, ms, interp_to_bits(mdt, val, at(vv, i)));
    }
    return true;
}

/* new = old (kind) v, in the memory dtype. */
static void rmw(int kind, DType dt, void *old, void *v, void *out)
{
    if (interp_kind(dt) == ST_I) {
        int64_t a = *(int64_t *)old, b = *(int64_t *)v, r = b;
        bool u = dt == DT_U64 || dt == DT_PTR;
        bool lt = u ? (uint64_t)a < (uint64_t)b : a < b;
        switch (kind) {
        case ATOM_ADD: r = (int64_t)((uint64_t)a + (uint64_t)b); break;
        case ATOM_MAX: r = lt ? b : a; break;
        case ATOM_MIN: r = lt ? a : b; break;
        case ATOM_AND: r = a & b; break;
        case ATOM_OR: r = a | b; break;
        case ATOM_XOR: r = a ^ b; break;
        default: break;
        }
        *(int64_t *)out = interp_wrap(dt, r);
        return;
    }
    double a = interp_get_double(dt, old, 0), b = interp_get_double(dt, v, 0), r = b;
    if (kind == ATOM_ADD)
        r = a + b;
    else if (kind == ATOM_MAX)
        r = fmax(a, b);
    else if (kind == ATOM_MIN)
        r = fmin(a, b);
    interp_set_double(dt, out, 0, dt == DT_F64 ? r : interp_round_to(dt, r));
}

/* Atomics run one element after another in index order, programs in
 * order: the result is deterministic. Each element's read and write are one
 * step, in program order with every other access, which is at least as
 * strong as any sem= and scope= the op carries (interp.h). */
bool interp_atomic(InterpProg *p, const IrOp *op)
{
    bool cas = op->kind == IR_ATOMIC_CAS;
    const IrValue *pv = op->operands[0], *r = op->results[0];
    const IrValue *vv = op->operands[cas ? 2 : 1], *cv = cas ? op->operands[1] : NULL;
    const IrValue *mv = !cas && op->nops > 2 ? op->operands[2] : NULL;
    DType mdt = pv->type.elem;
    size_t ms = interp_memsize(mdt), es = interp_elsize(mdt);
    const int64_t *ptr = interp_slot(p, pv), *mask = cas ? NULL : mask_of(p, op, 2);
    const unsigned char *val = as_pointee(p, vv, mdt);
    const unsigned char *cmp = cv ? interp_slot(p, cv) : NULL;
    unsigned char *out = interp_slot(p, r);
    const InterpBuffer *cur = NULL;
    int64_t n = type_numel(r->type);
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[at(mv, i)]) {
            memset(out + (size_t)i * es, 0, es);
            continue;
        }
        uint64_t addr = (uint64_t)ptr[at(pv, i)];
        if (!check(p, op, "atomic", r->type, i, addr, ms, &cur))
            return false;
        uint64_t old_bits = read_mem(addr, ms);
        interp_from_bits(mdt, out, i, old_bits);
        unsigned char nv[8];
        if (cas) {
            if (old_bits !=
                (interp_to_bits(mdt, cmp, at(cv, i)) &
                 (ms == 8 ? UINT64_MAX : ((1ull << (8 * ms)) - 1))))
                continue;
            memcpy(nv, val + (size_t)at(vv, i) * es, es);
        } else {
            rmw(op->sub, mdt, out + (size_t)i * es, (void *)(val + (size_t)at(vv, i) * es), nv);
        }
        write_mem(addr, ms, interp_to_bits(mdt, nv, 0));
    }
    return true;
}

/* ---- device_print and device_assert ----------------------------------------------- */

static void format_value(char *buf, size_t n, DType dt, const void *arr, int64_t i, bool hex)
{
    if (hex || dt == DT_PTR) {
        int bits = dtype_bits(dt);
        uint64_t b = interp_to_bits(dt, arr, i);
        if (bits < 64)
            b &= (1ull << bits) - 1;
        int digits = dt == DT_PTR ? 1 : bits / 4 ? bits / 4 : 1; /* hex pads to the type */
        snprintf(buf, n, "0x%0*" PRIx64, digits, b);
    } else if (interp_kind(dt) != ST_I) {
        snprintf(buf, n, "%f", interp_get_double(dt, arr, i));
    } else if (dt == DT_U64) {
        snprintf(buf, n, "%" PRIu64, (uint64_t)((const int64_t *)arr)[i]);
    } else {
        snprintf(buf, n, "%" PRId64, ((const int64_t *)arr)[i]);
    }
}

/* Element flat of type t as "(  i,  j)": each index padded to the digits
 * of its dim's largest, as Triton's printf pads it. */
static void print_index(StrBuf *sb, Type t, int64_t flat)
{
    int64_t idx[TK_MAX_RANK] = {0};
    for (int d = t.rank - 1; d >= 0; d--) {
        idx[d] = t.shape[d] ? flat % t.shape[d] : 0;
        flat = t.shape[d] ? flat / t.shape[d] : 0;
    }
    sb_puts(sb, "(");
    for (int d = 0; d < t.rank; d++)
        sb_printf(sb, "%s%*lld", d ? ", " : "", ir_index_digits(t.shape[d]), (long long)idx[d]);
    sb_puts(sb, ")");
}

/* The GPU's printf lines (lib/codegen/debug.c), one per element, operand
 * after operand: "pid (x, y, z) idx (  i)" then the prefix (sema gives it
 * Triton's leading space and ": "), "(operand k) " when there are several
 * operands, and the value. */
bool interp_print(InterpProg *p, const IrOp *op)
{
    StrBuf local, *sb = p->L->out ? p->L->out : &local;
    if (!p->L->out)
        sb_init(&local);
    const char *prefix = op->str ? op->str : "";
    bool hex = op->flags & IRF_HEX;
    if (op->nops == 0)
        sb_printf(sb, "pid (%u, %u, %u)%s\n", p->pid[0], p->pid[1], p->pid[2], prefix);
    for (int k = 0; k < op->nops; k++) {
        const IrValue *v = op->operands[k];
        int64_t n = type_numel(v->type);
        for (int64_t i = 0; i < n; i++) {
            char val[64];
            format_value(val, sizeof val, v->type.dt, interp_slot(p, v), i, hex);
            sb_printf(sb, "pid (%u, %u, %u) idx ", p->pid[0], p->pid[1], p->pid[2]);
            print_index(sb, v->type, i);
            sb_puts(sb, prefix);
            if (op->nops > 1)
                sb_printf(sb, "(operand %d) ", k);
            sb_printf(sb, "%s\n", val);
        }
    }
    if (!p->L->out) {
        fwrite(local.data ? local.data : "", 1, local.len, stdout);
        fflush(stdout);
        sb_free(&local);
    }
    return true;
}

bool interp_assert(InterpProg *p, const IrOp *op)
{
    const IrValue *cv = op->operands[0];
    const int64_t *c = interp_slot(p, cv);
    int64_t n = type_numel(cv->type);
    for (int64_t i = 0; i < n; i++) {
        if (c[i])
            continue;
        char idx[96];
        interp_format_index(idx, sizeof idx, cv->type, i);
        const char *msg = op->str ? op->str : "";
        if (op->span.line <= 0 && op->str2)
            return interp_fail(p, op,
                               "device assertion failed at %s:%lld in kernel '%s', program (%u, "
                               "%u, %u), element %s: %s",
                               op->str2, (long long)op->ival, p->L->f->name, p->pid[0], p->pid[1],
                               p->pid[2], idx, msg);
        return interp_fail(
            p, op, "device assertion failed in kernel '%s', program (%u, %u, %u), element %s: %s",
            p->L->f->name, p->pid[0], p->pid[1], p->pid[2], idx, msg);
    }
    return true;
}
