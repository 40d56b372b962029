/* place.c: where a bound launch runs and what it is called: the device
 * its buffers agree on (a GPU, or the interpreter for host memory), host
 * buffers staged and written back, and the signature text the launch's
 * arguments spell, as the compiled kernel's metadata shows it. */
#include "tkpy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The device the buffers agree on: TKPY_INTERP for host memory (or none
 * with no GPU), else the GPU; -2 (and an exception) when they disagree. */
static int pick_device(const Launch *L, const char *where)
{
    int dev = -3, host = -1;
    for (int i = 0; i < L->n; i++) {
        const Slot *s = &L->slots[i];
        if (s->loc == SLOT_HOST && host < 0)
            host = i;
        if (s->loc == SLOT_DEVICE && dev == -3)
            dev = s->device;
        else if (s->loc == SLOT_DEVICE && dev != s->device)
            return PyErr_Format(PyExc_ValueError,
                                "tk: argument '%s' is on cuda:%d but an "
                                "earlier one is on cuda:%d\n%s",
                                s->param, s->device, dev, where),
                   -2;
    }
    if (dev != -3 && (host >= 0 || tkpy_interpret))
        return PyErr_Format(PyExc_ValueError,
                            "tk: argument '%s' is in host memory but the "
                            "launch runs on cuda:%d%s\n%s",
                            host >= 0 ? L->slots[host].param : "?", dev,
                            tkpy_interpret ? " (and TK_INTERPRET=1 asks for the CPU)" : "", where),
               -2;
    if (dev != -3)
        return dev;
    if (tkpy_interpret || !tkpy_have_gpu())
        return TKPY_INTERP;
    if (host >= 0)
        return PyErr_Format(PyExc_ValueError,
                            "tk: argument '%s' is in host memory; GPU "
                            "launches take CUDA tensors (TK_INTERPRET=1 runs on the CPU)\n%s",
                            L->slots[host].param, where),
               -2;
    return 0;
}

/* Whether the unions of two leads meet (a lead's union holds its group's
 * extents). */
static int meets(const Slot *s, const Slot *lead)
{
    return s->ubase + s->ulen > lead->ubase && s->ubase < lead->ubase + lead->ulen;
}

/* Widens lead's union by lead s's; the group is written back if any
 * member is writable. */
static void join(Slot *lead, const Slot *s)
{
    char *a = s->ubase < lead->ubase ? s->ubase : lead->ubase;
    char *b = s->ubase + s->ulen > lead->ubase + lead->ulen ? s->ubase + s->ulen
                                                            : lead->ubase + lead->ulen;
    lead->ubase = a;
    lead->ulen = (size_t)(b - a);
    lead->uwrite = lead->uwrite || s->uwrite;
}

/* Host slots whose extents overlap (views of one array, as the x and y
 * halves of one tensor a kernel reads through two pointers) share one
 * staged buffer over their union: staged apart, each copy back put its
 * stale copy of the other's part over what the kernel wrote there. */
static void group_slots(Launch *L)
{
    for (int i = 0; i < L->n; i++) {
        Slot *s = &L->slots[i];
        if (s->loc != SLOT_HOST)
            continue;
        s->lead = i;
        s->ubase = s->host + s->lo;
        s->ulen = (size_t)(s->hi - s->lo);
        s->uwrite = !s->readonly;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < L->n; i++) {
            Slot *s = &L->slots[i];
            for (int j = 0; s->loc == SLOT_HOST && s->lead == i && j < i; j++) {
                Slot *t = &L->slots[j];
                if (t->loc != SLOT_HOST || t->lead != j || !meets(s, t))
                    continue;
                join(t, s);
                for (int k = 0; k < L->n; k++) /* i's members follow it into j */
                    if (L->slots[k].loc == SLOT_HOST && L->slots[k].lead == i)
                        L->slots[k].lead = j;
                changed = 1;
                break;
            }
        }
    }
}

int tkpy_place(Launch *L, const char *where)
{
    L->device = pick_device(L, where);
    if (L->device == -2 || !(L->ctx = tkpy_context(L->device)))
        return -1;
    if (L->device != TKPY_INTERP)
        return 0; /* no host memory: pick_device refused it */
    group_slots(L);
    for (int i = 0; i < L->n; i++) {
        Slot *s = &L->slots[i];
        if (s->loc != SLOT_HOST || s->lead != i)
            continue;
        tk_status st = tk_alloc(L->ctx, s->ulen ? s->ulen : 1, &s->staged);
        if (st == TK_OK)
            st = tk_copy_to(L->ctx, s->staged, s->ubase, s->ulen);
        if (st != TK_OK) {
            tkpy_raise(st, where);
            return -1;
        }
    }
    for (int i = 0; i < L->n; i++) {
        Slot *s = &L->slots[i];
        if (s->loc != SLOT_HOST)
            continue;
        const Slot *lead = &L->slots[s->lead];
        s->arg.v.ptr = (char *)lead->staged + (s->host - lead->ubase);
    }
    return 0;
}

int tkpy_restage(Launch *L)
{
    for (int i = 0; i < L->n; i++) {
        Slot *s = &L->slots[i];
        if (s->loc != SLOT_HOST || s->lead != i || !s->staged)
            continue;
        tk_status st = tk_copy_to(L->ctx, s->staged, s->ubase, s->ulen);
        if (st != TK_OK)
            return tkpy_raise(st, NULL), -1;
    }
    return 0;
}

int tkpy_sync_host(Launch *L)
{
    for (int i = 0; i < L->n; i++) {
        Slot *s = &L->slots[i];
        if (s->loc != SLOT_HOST || s->lead != i || !s->staged || !s->uwrite)
            continue;
        tk_status st = tk_copy_from(L->ctx, s->ubase, s->staged, s->ulen);
        if (st != TK_OK)
            return tkpy_raise(st, NULL), -1;
    }
    return 0;
}

int tkpy_unstage(Launch *L, int ok)
{
    int r = 0;
    for (int i = 0; i < L->n; i++) {
        Slot *s = &L->slots[i];
        if (s->loc != SLOT_HOST || s->lead != i || !s->staged)
            continue;
        if (ok && r == 0 && s->uwrite) {
            tk_status st = tk_copy_from(L->ctx, s->ubase, s->staged, s->ulen);
            if (st != TK_OK)
                tkpy_raise(st, NULL), r = -1;
        }
        tk_free(L->ctx, s->staged);
        s->staged = NULL;
    }
    return r;
}

static const char *sig_name(tk_dtype dt)
{
    static const char *const n[] = {"void", "i1",   "i8",      "i16",   "i32",     "i64",
                                    "u8",   "u16",  "u32",     "u64",   "fp16",    "bf16",
                                    "fp32", "fp64", "fp8e4nv", "fp8e5", "fp8e4b15"};
    return (unsigned)dt < sizeof n / sizeof n[0] ? n[dt] : "void";
}

/* Appends formatted text at *len; false when out is full. */
static int put(char *out, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len)
        return 0;
    *len += (size_t)n;
    return 1;
}

int tkpy_slot_hint(const Slot *sl)
{
    const tk_arg *a = &sl->arg;
    /* as libtk specialises: pointers and ints, never bools or floats */
    int plain = a->dtype == TK_I1 || a->dtype == TK_F16 || a->dtype == TK_BF16 ||
        a->dtype == TK_F32 || a->dtype == TK_F64;
    if (sl->no_spec || a->kind == TK_ARG_CONST || a->kind == TK_ARG_TUPLE)
        return 0;
    if (a->kind == TK_ARG_PTR)
        return (uintptr_t)a->v.ptr % 16 == 0 ? 16 : 0;
    if (plain)
        return 0;
    return a->v.i % 16 == 0 ? 16 : a->kind == TK_ARG_SCALAR && a->v.i == 1 ? 1 : 0;
}

/* Appends slot i's signature entry (a tuple with its items) at *len;
 * the next slot, or -1 when out is full. */
static int sig_entry(const Launch *L, int i, char *out, size_t cap, size_t *len)
{
    const Slot *sl = &L->slots[i];
    const tk_arg *a = &sl->arg;
    if (a->kind == TK_ARG_TUPLE) {
        int next = put(out, cap, len, "(") ? i + 1 : -1;
        for (int64_t k = 0; k < a->v.i && next >= 0; k++)
            next = !k || put(out, cap, len, ",") ? sig_entry(L, next, out, cap, len) : -1;
        return next >= 0 && put(out, cap, len, a->v.i == 1 ? ",)" : ")") ? next : -1;
    }
    if (a->kind == TK_ARG_CONST) /* an item: Triton's None in a tuple */
        return put(out, cap, len, "%s", a->text ? a->text : "None") ? i + 1 : -1;
    int hint = tkpy_slot_hint(sl), div16 = hint == 16, eq1 = hint == 1;
    if (sl->is_desc) { /* tensordesc<fp16[64, 64]>:16 */
        const tk_tensor_desc *d = &sl->desc;
        char dims[64] = "";
        for (int r = 0, at = 0; r < d->rank && r < TK_DESC_MAX_RANK; r++)
            at += snprintf(dims + at, sizeof dims - (size_t)at, "%s%d", r ? ", " : "", d->block[r]);
        return put(out, cap, len, "tensordesc<%s[%s]>%s", sig_name(a->dtype), dims,
                   div16 ? ":16" : "")
            ? i + 1
            : -1;
    }
    return put(out, cap, len, "%s%s%s", a->kind == TK_ARG_PTR ? "*" : "", sig_name(a->dtype),
               div16     ? ":16"
                   : eq1 ? ":1"
                         : "")
        ? i + 1
        : -1;
}

int tkpy_signature(const Launch *L, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < L->n;) {
        if (L->slots[i].arg.kind == TK_ARG_CONST) {
            i++;
            continue;
        }
        if ((len && !put(out, cap, &len, ",")) || (i = sig_entry(L, i, out, cap, &len)) < 0)
            return -1;
    }
    return 0;
}
