/* fstring.c: f-strings in kernels, as Triton folds them: every replacement
 * field must be a compile-time value, formatted as Python's str() or
 * repr() formats it (the conversion !r, !s, !a); a format spec is ignored,
 * as Triton ignores it. The result is a constexpr string. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema/spec.h"

/* Python's repr of a float: the fewest digits that read back as the same
 * double, positional for decimal exponents -4..15, else scientific with a
 * two-digit exponent at least; positional values keep a ".0". */
static void float_repr(StrBuf *out, double f)
{
    if (isnan(f)) {
        sb_puts(out, "nan");
        return;
    }
    if (isinf(f)) {
        sb_puts(out, f < 0 ? "-inf" : "inf");
        return;
    }
    char buf[40];
    int prec = 0;
    for (; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    snprintf(buf, sizeof buf, "%.*e", prec, f);
    char *e = strchr(buf, 'e');
    int exp = atoi(e + 1);
    *e = 0;
    const char *m = buf;
    if (*m == '-') {
        sb_putc(out, '-');
        m++;
    }
    char digits[24];
    int nd = 0;
    for (const char *p = m; *p && nd < 23; p++)
        if (*p != '.')
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    if (exp < -4 || exp >= 16) {
        sb_putc(out, digits[0]);
        if (nd > 1)
            sb_printf(out, ".%s", digits + 1);
        sb_printf(out, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        sb_puts(out, "0.");
        for (int i = 0; i < -exp - 1; i++)
            sb_putc(out, '0');
        sb_puts(out, digits);
    } else {
        for (int i = 0; i <= exp; i++)
            sb_putc(out, i < nd ? digits[i] : '0');
        sb_putc(out, '.');
        sb_puts(out, nd > exp + 1 ? digits + exp + 1 : "0");
    }
}

/* Reads one UTF-8 sequence at s (n bytes left); a broken one reads as its
 * first byte. Returns the bytes used. */
static int utf8_next(const unsigned char *s, size_t n, unsigned *cp)
{
    int len = s[0] < 0x80       ? 1
        : (s[0] & 0xe0) == 0xc0 ? 2
        : (s[0] & 0xf0) == 0xe0 ? 3
        : (s[0] & 0xf8) == 0xf0 ? 4
                                : 0;
    if (len == 0 || (size_t)len > n) {
        *cp = s[0];
        return 1;
    }
    unsigned v = len == 1 ? s[0] : s[0] & (0x7f >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *cp = s[0];
            return 1;
        }
        v = v << 6 | (s[i] & 0x3f);
    }
    *cp = v;
    return len;
}

/* Python's repr (ascii: with every non-ASCII character escaped) of a str:
 * single quotes unless the text has one and no double quote. */
static void str_repr(StrBuf *out, const char *s, bool ascii)
{
    char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    sb_putc(out, q);
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned cp;
        int len = utf8_next((const unsigned char *)s + i, n - i, &cp);
        if (cp == (unsigned char)q || cp == '\\')
            sb_printf(out, "\\%c", (char)cp);
        else if (cp == '\n')
            sb_puts(out, "\\n");
        else if (cp == '\t')
            sb_puts(out, "\\t");
        else if (cp == '\r')
            sb_puts(out, "\\r");
        else if (cp < 0x20 || cp == 0x7f || (ascii && cp >= 0x80 && cp < 0x100))
            sb_printf(out, "\\x%02x", cp);
        else if (ascii && cp >= 0x100)
            sb_printf(out, cp < 0x10000 ? "\\u%04x" : "\\U%08x", cp);
        else
            sb_printf(out, "%.*s", len, s + i);
        i += (size_t)len;
    }
    sb_putc(out, q);
}

/* A scalar dtype as Triton names it: int32 and uint8 where tk's IR says
 * i32 and u8, the float names alike (fp16, bf16, fp8e4nv). */
static void triton_dtype(StrBuf *out, DType dt)
{
    if (dtype_is_int(dt))
        sb_printf(out, "%sint%d", dtype_is_signed(dt) || dt == DT_I1 ? "" : "u", dtype_bits(dt));
    else
        sb_puts(out, dtype_name(dt));
}

/* Triton's dtype text: str() is the short name (fp16, int32), repr() the
 * module path of its long name (triton.language.float16); pointers and
 * blocks print alike either way. A block type prints as its elements' dtype
 * and its shape (fp16[16, 16], pointer<fp32>[64] for a block of pointers). */
static void dtype_text(StrBuf *out, Type t, bool ptr_block, bool repr)
{
    if (t.dt == DT_PTR) { /* pointer<fp16>, a block pointer's pointer<fp16[16, 16]> */
        sb_puts(out, "pointer<");
        triton_dtype(out, t.elem);
        for (int i = 0; !ptr_block && i < t.rank; i++)
            sb_printf(out, i ? ", %d" : "[%d", t.shape[i]);
        sb_puts(out, t.rank && !ptr_block ? "]>" : ">");
        if (!ptr_block)
            return;
    } else if (!repr) {
        triton_dtype(out, t.dt);
    } else {
        StrBuf name;
        sb_init(&name);
        triton_dtype(&name, t.dt);
        const char *n = name.data ? name.data : "";
        bool fp = !strncmp(n, "fp", 2), bf = !strncmp(n, "bf", 2);
        sb_printf(out, "triton.language.%s%s",
                  fp       ? "float"
                      : bf ? "bfloat"
                           : "",
                  fp || bf ? n + 2 : n);
        sb_free(&name);
    }
    if (t.rank > 0) {
        sb_putc(out, '[');
        for (int i = 0; i < t.rank; i++)
            sb_printf(out, i ? ", %d" : "%d", t.shape[i]);
        sb_putc(out, ']');
    }
}

bool sema_value_text(Sema *s, StrBuf *out, SVal v, int conv)
{
    bool repr = conv == 'r' || conv == 'a';
    switch (v.k) {
    case SV_INT:
        if (v.big)
            sb_printf(out, "%llu", (unsigned long long)v.i);
        else
            sb_printf(out, "%lld", (long long)v.i);
        return true;
    case SV_BOOL: sb_puts(out, v.i ? "True" : "False"); return true;
    case SV_FLOAT: float_repr(out, v.f); return true;
    case SV_NONE: sb_puts(out, "None"); return true;
    case SV_DTYPE: dtype_text(out, v.ty, v.i != 0, repr); return true;
    case SV_STR:
        if (repr)
            str_repr(out, v.s, conv == 'a');
        else
            sb_puts(out, v.s);
        return true;
    case SV_TUPLE: /* Python writes a tuple's items by repr() */
        sb_putc(out, '(');
        for (int i = 0; i < v.n; i++) {
            if (i)
                sb_puts(out, ", ");
            if (!sema_value_text(s, out, v.items[i], 'r'))
                return false;
        }
        sb_puts(out, v.n == 1 ? ",)" : ")");
        return true;
    default: return false;
    }
}

SVal sema_fstring(Sema *s, const Node *n)
{
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < n->list.len; i++) {
        const Node *p = n->list.items[i];
        if (p->kind == N_STR) {
            sb_write(&sb, p->str ? p->str : "", p->str ? p->slen : 0);
            continue;
        }
        SVal v = sema_eval(s, p->a);
        if (v.k == SV_UNDEF) {
            sb_free(&sb);
            return v;
        }
        if (!sema_value_text(s, &sb, v, p->op)) {
            sb_free(&sb);
            return sema_err(s, p->a->span,
                            "an f-string in a kernel can only format compile-time values "
                            "(constexprs, dtypes, strings, tuples of them), not %s",
                            sv_describe(s, v));
        }
    }
    SVal r = sv_str(arena_strndup(s->a, sb.data ? sb.data : "", sb.len));
    sb_free(&sb);
    return r;
}
