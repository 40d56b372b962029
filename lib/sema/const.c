/* sema/const.c: compile-time values. Parses -D values and dtype names,
 * and folds arithmetic and comparisons on constexprs with Python's rules
 * (floor division, modulo with the divisor's sign, true division to float),
 * since constexpr expressions in Triton are plain Python. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema/spec.h"

/* ---- dtype names ----------------------------------------------------------- */

static const struct {
    const char *name;
    DType dt;
} dtype_names[] = {
    {"float16", DT_F16}, {"fp16", DT_F16},    {"half", DT_F16},   {"bfloat16", DT_BF16},
    {"bf16", DT_BF16},   {"float32", DT_F32}, {"fp32", DT_F32},   {"float", DT_F32},
    {"float64", DT_F64}, {"fp64", DT_F64},    {"double", DT_F64}, {"int1", DT_I1},
    {"i1", DT_I1},       {"bool", DT_I1},     {"int8", DT_I8},    {"i8", DT_I8},
    {"int16", DT_I16},   {"i16", DT_I16},     {"int32", DT_I32},  {"i32", DT_I32},
    {"int64", DT_I64},   {"i64", DT_I64},     {"uint8", DT_U8},   {"u8", DT_U8},
    {"uint16", DT_U16},  {"u16", DT_U16},     {"uint32", DT_U32}, {"u32", DT_U32},
    {"uint64", DT_U64},  {"u64", DT_U64},
};

DType sema_dtype_name(const char *name)
{
    for (int i = 0; i < TK_ARRAY_LEN(dtype_names); i++)
        if (strcmp(dtype_names[i].name, name) == 0)
            return dtype_names[i].dt;
    /* float8e4nv, fp8e4nv, ...: as the IR reads them (without its tl. prefix) */
    DType fp8 = strncmp(name, "tl.", 3) ? dtype_parse(name) : DT_VOID;
    return dtype_is_fp8(fp8) ? fp8 : DT_VOID;
}

/* "*fp32:16", "i32", "i32:1", "fp16" (an optional "tl." prefix is allowed).
 * *div is the ":N" suffix, 0 when there is none. */
bool sema_parse_type(const char *text, Type *t, int *div)
{
    while (isspace((unsigned char)*text))
        text++;
    bool ptr = *text == '*';
    if (ptr)
        text++;
    if (strncmp(text, "tl.", 3) == 0)
        text += 3;
    char name[32];
    int n = 0;
    while (text[n] && text[n] != ':' && !isspace((unsigned char)text[n]) && n < 31) {
        name[n] = text[n];
        n++;
    }
    name[n] = 0;
    const char *rest = text + n;
    *div = 0;
    if (*rest == ':') {
        char *end;
        long v = strtol(rest + 1, &end, 10);
        if (end == rest + 1 || (v != 1 && v != 16))
            return false;
        *div = (int)v;
        rest = end;
    }
    while (isspace((unsigned char)*rest))
        rest++;
    if (*rest)
        return false;
    DType dt = sema_dtype_name(name);
    if (dt == DT_VOID)
        return false;
    *t = ptr ? type_ptr(dt) : type_scalar(dt);
    return true;
}

/* ---- -D values ------------------------------------------------------------------ */

/* The next item of a tuple's text t[0..len) (inside its parentheses) from
 * *pos: its start and length, spaces around it dropped, up to a comma
 * outside quotes and brackets (*comma: one ended it). false at the end,
 * and with *bad set for an empty item or unbalanced brackets or quotes. */
static bool next_item(const char *t, size_t len, size_t *pos, size_t *start, size_t *ilen,
                      bool *comma, bool *bad)
{
    size_t i = *pos;
    while (i < len && isspace((unsigned char)t[i]))
        i++;
    if (i == len)
        return false;
    *start = i;
    int depth = 0;
    char quote = 0;
    for (; i < len; i++) {
        char c = t[i];
        if (quote)
            quote = c == quote ? 0 : quote;
        else if (c == '\'' || c == '"')
            quote = c;
        else if (c == '(' || c == '[')
            depth++;
        else if ((c == ')' || c == ']') && --depth < 0)
            break;
        else if (c == ',' && depth == 0)
            break;
    }
    size_t end = i;
    while (end > *start && isspace((unsigned char)t[end - 1]))
        end--;
    *comma = i < len && t[i] == ',';
    *bad = quote || depth != 0 || end == *start;
    *ilen = end - *start;
    *pos = *comma ? i + 1 : i;
    return !*bad;
}

/* A float's text that reads back as the same float (and as a float: "1.0",
 * not "1"). */
static void float_text(StrBuf *sb, double f)
{
    size_t at = sb->len;
    sb_printf(sb, "%.17g", f);
    if (!sb->oom && !strpbrk(sb->data + at, ".eni"))
        sb_puts(sb, ".0");
}

/* "(a, b)" as -D gives it: a tuple of values, its text kept with single
 * spaces after the commas ("(1,)" for one item), so equal spellings key
 * one cache entry. "(a)" is a, as in Python. */
static bool parse_tuple(const char *t, size_t len, ConstValue *out, const char **why)
{
    StrBuf canon;
    sb_init(&canon);
    sb_putc(&canon, '(');
    size_t pos = 0, start, ilen;
    bool comma = false, bad = false;
    int n = 0;
    while (next_item(t, len, &pos, &start, &ilen, &comma, &bad)) {
        char *item = tk_xalloc(ilen + 1);
        ConstValue v;
        bool ok = item != NULL;
        if (ok) {
            memcpy(item, t + start, ilen);
            item[ilen] = 0;
            ok = sema_parse_const(item, &v, why);
        }
        if (ok && n == 0 && !comma && pos >= len) { /* "(a)": a parenthesised value */
            tk_xfree(item);
            sb_free(&canon);
            *out = v;
            return true;
        }
        if (ok)
            sb_printf(&canon, "%s%s", n ? ", " : "", v.kind == CV_TUPLE ? v.s : item);
        if (ok && cv_has_text(&v))
            tk_xfree((char *)v.s);
        tk_xfree(item);
        if (!ok) {
            sb_free(&canon);
            return false;
        }
        n++;
    }
    if (bad) {
        sb_free(&canon);
        return false;
    }
    sb_puts(&canon, n == 1 ? ",)" : ")");
    if (canon.oom) {
        sb_free(&canon);
        return false;
    }
    out->kind = CV_TUPLE;
    out->s = sb_take(&canon, NULL);
    return true;
}

/* A Python identifier: the name of a function of the module. */
static bool is_identifier(const char *t)
{
    if (!isalpha((unsigned char)*t) && *t != '_')
        return false;
    for (t++; *t; t++)
        if (!isalnum((unsigned char)*t) && *t != '_')
            return false;
    return true;
}

bool sema_parse_const(const char *text, ConstValue *out, const char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    while (isspace((unsigned char)*text))
        text++;
    size_t len = strlen(text);
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    if (len == 0)
        return false;
    if (len >= 2 && text[0] == '(' && text[len - 1] == ')')
        return parse_tuple(text + 1, len - 2, out, why);
    char buf[128];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, text, len);
    buf[len] = 0;
    if (!strcmp(buf, "True") || !strcmp(buf, "true")) {
        out->kind = CV_BOOL;
        out->i = 1;
        return true;
    }
    if (!strcmp(buf, "False") || !strcmp(buf, "false")) {
        out->kind = CV_BOOL;
        return true;
    }
    if (!strcmp(buf, "None")) {
        out->kind = CV_NONE;
        return true;
    }
    if ((buf[0] == '\'' || buf[0] == '"') && len >= 2 && buf[len - 1] == buf[0]) {
        /* long-lived: the request outlives the text it was parsed from */
        char *str = tk_xalloc(len - 1);
        if (!str)
            return false;
        memcpy(str, buf + 1, len - 2);
        str[len - 2] = 0;
        out->kind = CV_STR;
        out->s = str;
        return true;
    }
    const char *name = buf;
    if (!strncmp(name, "tl.", 3))
        name += 3;
    else if (!strncmp(name, "triton.language.", 16))
        name += 16;
    Type t;
    int div;
    if (!strncmp(buf, "torch.", 6) && sema_torch_dtype(buf + 6) != DT_VOID) {
        out->kind = CV_DTYPE; /* a torch dtype given for a constexpr: the same type */
        out->type = type_scalar(sema_torch_dtype(buf + 6));
        return true;
    }
    if (sema_parse_type(name, &t, &div) && div == 0) {
        out->kind = CV_DTYPE;
        out->type = t;
        return true;
    }
    char clean[128];
    int k = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] != '_')
            clean[k++] = buf[i];
    clean[k] = 0;
    char *end;
    errno = 0;
    long long iv = strtoll(clean, &end, 0);
    if (*end == 0 && end != clean && errno == ERANGE) {
        *why = "value does not fit in int64"; /* as the same literal in source */
        return false;
    }
    if (*end == 0 && end != clean) {
        out->kind = CV_INT;
        out->i = iv;
        return true;
    }
    errno = 0;
    double fv = strtod(clean, &end);
    if (*end == 0 && end != clean && errno == ERANGE && isinf(fv)) {
        *why = "value does not fit in float64"; /* "inf" itself is no overflow */
        return false;
    }
    if (*end == 0 && end != clean) {
        out->kind = CV_FLOAT;
        out->f = fv;
        return true;
    }
    if (name != buf || !strncmp(buf, "torch.", 6)) {
        *why = "not a dtype tk has (tl.float16, tl.bfloat16, tl.float8e4nv, tl.int32, ...)";
        return false;
    }
    if (is_identifier(buf)) {
        char *fn = tk_xalloc(len + 1); /* long-lived, as a string's */
        if (!fn)
            return false;
        memcpy(fn, buf, len + 1);
        out->kind = CV_FUNC;
        out->s = fn;
        return true;
    }
    return false;
}

static SVal undef_because(Sema *s, const char *fmt, const char *a1)
{
    return (SVal){.k = SV_UNDEF, .s = arena_printf(s->a, fmt, a1)};
}

/* The items of a CV_TUPLE's text, each read as -D text again. */
static SVal tuple_from_text(Sema *s, const char *text)
{
    size_t len = strlen(text), pos = 0, start, ilen;
    bool comma, bad = false;
    PtrVec items = {0};
    while (next_item(text + 1, len - 2, &pos, &start, &ilen, &comma, &bad)) {
        const char *item = arena_strndup(s->a, text + 1 + start, ilen);
        ConstValue c;
        const char *why;
        if (!sema_parse_const(item, &c, &why))
            return undef_because(s, "cannot read tuple item '%s'", item);
        if (cv_has_text(&c)) { /* from the heap to the arena, which the SVal may keep */
            const char *kept = arena_strdup(s->a, c.s);
            tk_xfree((char *)c.s);
            c.s = kept;
        }
        SVal *v = arena_alloc(s->a, sizeof *v);
        *v = sema_from_const(s, c);
        if (v->k == SV_UNDEF)
            return *v;
        vec_push(s->a, &items, v);
    }
    SVal *vals = arena_alloc(s->a, sizeof(SVal) * (size_t)(items.len + 1));
    for (int i = 0; i < items.len; i++)
        vals[i] = *(SVal *)items.items[i];
    return sv_tuple(s, vals, items.len);
}

SVal sema_from_const(Sema *s, ConstValue c)
{
    switch (c.kind) {
    case CV_INT: return sv_int(c.i);
    case CV_FLOAT: return sv_float(c.f);
    case CV_BOOL: return sv_bool(c.i != 0);
    case CV_DTYPE: return sv_dtype(c.type);
    case CV_STR: return sv_str(c.s ? c.s : "");
    case CV_TUPLE: return tuple_from_text(s, c.s);
    case CV_FUNC: {
        SVal *v = env_lookup(s->globals, c.s, NULL);
        if (v && v->k == SV_UNDEF && v->s)
            return *v; /* a host name: why tk cannot read it */
        const char *refused = v ? sema_host_fn_refused(s, *v, c.s) : NULL;
        if (refused)
            return (SVal){.k = SV_UNDEF, .s = refused};
        if (!v || v->k != SV_FUNC || !sema_func_is_jit(v->fn))
            return undef_because(s, "'%s' names no @triton.jit function of the module", c.s);
        return *v;
    }
    default: return sv_none();
    }
}

/* The name the module binds @jit function v to, as a CV_FUNC spells it:
 * its def's, when that name is its own there; else NULL. */
static const char *func_name(Sema *s, SVal v)
{
    SVal *bound = env_lookup(s->globals, v.fn->name, NULL);
    return bound && bound->k == SV_FUNC && bound->fn == v.fn && sema_func_is_jit(v.fn) ? v.fn->name
                                                                                       : NULL;
}

/* Text for a CV_TUPLE: each item as -D would spell it. */
static bool tuple_text(Sema *s, StrBuf *sb, SVal v)
{
    switch (v.k) {
    case SV_FUNC:
        if (!func_name(s, v))
            return false;
        sb_puts(sb, v.fn->name);
        return true;
    case SV_INT:
        if (v.big)
            sb_printf(sb, "%llu", (unsigned long long)(uint64_t)v.i);
        else
            sb_printf(sb, "%lld", (long long)v.i);
        return true;
    case SV_FLOAT: float_text(sb, v.f); return true;
    case SV_BOOL: sb_puts(sb, v.i ? "True" : "False"); return true;
    case SV_NONE: sb_puts(sb, "None"); return true;
    case SV_DTYPE:
        if (v.ty.dt == DT_PTR || v.ty.rank)
            return false;
        sb_printf(sb, "tl.%s", dtype_name(v.ty.dt));
        return true;
    case SV_STR: {
        char q = strchr(v.s, '\'') ? '"' : '\'';
        if (strchr(v.s, q))
            return false; /* -D text has no escapes */
        sb_printf(sb, "%c%s%c", q, v.s, q);
        return true;
    }
    case SV_TUPLE:
        sb_putc(sb, '(');
        for (int i = 0; i < v.n; i++) {
            if (i)
                sb_puts(sb, ", ");
            if (!tuple_text(s, sb, v.items[i]))
                return false;
        }
        sb_puts(sb, v.n == 1 ? ",)" : ")");
        return true;
    default: return false;
    }
}

bool sema_to_constvalue(Sema *s, SVal v, ConstValue *out)
{
    memset(out, 0, sizeof *out);
    switch (v.k) {
    case SV_TUPLE: {
        StrBuf sb;
        sb_init(&sb);
        bool ok = tuple_text(s, &sb, v) && !sb.oom;
        if (ok) {
            out->kind = CV_TUPLE;
            out->s = arena_strdup(s->a, sb.data);
        }
        sb_free(&sb);
        return ok;
    }
    case SV_FUNC:
        out->kind = CV_FUNC;
        out->s = func_name(s, v);
        return out->s != NULL;
    case SV_INT:
        out->kind = CV_INT;
        out->i = v.i;
        return true;
    case SV_FLOAT:
        out->kind = CV_FLOAT;
        out->f = v.f;
        return true;
    case SV_BOOL:
        out->kind = CV_BOOL;
        out->i = v.i;
        return true;
    case SV_DTYPE:
        out->kind = CV_DTYPE;
        out->type = v.ty;
        return true;
    case SV_STR:
        out->kind = CV_STR;
        out->s = v.s;
        return true;
    case SV_NONE: out->kind = CV_NONE; return true;
    default: return false;
    }
}

/* ---- folding ---------------------------------------------------------------------- */

static double num_f(SVal v)
{
    return v.k == SV_FLOAT ? v.f : v.big ? (double)(uint64_t)v.i : (double)v.i;
}

/* Integers fold as Python's do, in 128 bits: a result must fit int64 or,
 * above it, uint64 (a sign-bit mask, 1 << 63, a value `big` marks); only
 * a value past those is an overflow. */
typedef __int128 Wide;

static Wide wide(SVal v) { return v.big ? (Wide)(uint64_t)v.i : (Wide)v.i; }

static bool narrow(Wide r, SVal *out)
{
    if (r < INT64_MIN || r > (Wide)UINT64_MAX)
        return false;
    *out = sv_int(r > INT64_MAX ? (int64_t)(uint64_t)r : (int64_t)r);
    out->big = r > INT64_MAX;
    return true;
}

/* x ** y for y >= 0, by squaring (a loop of y steps hangs on 1 ** (1 <<
 * 62)); false past 128 bits. */
static bool wide_pow(Wide x, Wide y, Wide *out)
{
    Wide acc = 1, base = x;
    for (; y; y >>= 1) {
        if ((y & 1) && __builtin_mul_overflow(acc, base, &acc))
            return false;
        if (y > 1 && __builtin_mul_overflow(base, base, &base))
            return false;
    }
    *out = acc;
    return true;
}

static SVal fold_int(Sema *s, int op, SVal a, SVal b, Span at)
{
    Wide x = wide(a), y = wide(b), r = 0;
    bool ok = true;
    switch (op) {
    case OP_ADD: ok = !__builtin_add_overflow(x, y, &r); break;
    case OP_SUB: ok = !__builtin_sub_overflow(x, y, &r); break;
    case OP_MUL: ok = !__builtin_mul_overflow(x, y, &r); break;
    case OP_DIV:
        if (y == 0)
            return sema_err(s, at, "division by zero in a constant expression");
        return sv_float((double)x / (double)y);
    case OP_FLOORDIV:
    case OP_MOD: {
        if (y == 0)
            return sema_err(s, at, "division by zero in a constant expression");
        Wide q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
            q -= 1;
            m += y;
        }
        r = op == OP_MOD ? m : q;
        break;
    }
    case OP_POW:
        if (y < 0)
            return sv_float(pow((double)x, (double)y));
        ok = wide_pow(x, y, &r);
        break;
    case OP_LSHIFT:
        if (y < 0)
            return sema_err(s, at, "negative shift count in a constant expression");
        ok = x == 0 || (y < 64 && !__builtin_mul_overflow(x, (Wide)1 << y, &r));
        break;
    case OP_RSHIFT:
        if (y < 0)
            return sema_err(s, at, "negative shift count in a constant expression");
        r = y > 126 ? (x < 0 ? -1 : 0) : x >> y;
        break;
    case OP_BITAND: r = x & y; break;
    case OP_BITOR: r = x | y; break;
    case OP_BITXOR: r = x ^ y; break;
    default:
        return sema_err(s, at, "operator '%s' is not supported on constexpr integers",
                        ast_op_spelling((OpKind)op));
    }
    SVal v;
    if (ok && narrow(r, &v))
        return v;
    return sema_err(s, at,
                    "constexpr integer overflow in '%s' (values must fit in 64 bits, "
                    "signed or unsigned)",
                    ast_op_spelling((OpKind)op));
}

static SVal fold_float(Sema *s, int op, double x, double y, Span at)
{
    switch (op) {
    case OP_ADD: return sv_float(x + y);
    case OP_SUB: return sv_float(x - y);
    case OP_MUL: return sv_float(x * y);
    case OP_DIV:
        if (y == 0)
            return sema_err(s, at, "division by zero in a constant expression");
        return sv_float(x / y);
    case OP_FLOORDIV:
        if (y == 0)
            return sema_err(s, at, "division by zero in a constant expression");
        return sv_float(floor(x / y));
    case OP_MOD: {
        if (y == 0)
            return sema_err(s, at, "division by zero in a constant expression");
        double m = fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0)))
            m += y;
        return sv_float(m);
    }
    case OP_POW: return sv_float(pow(x, y));
    default: break;
    }
    return sema_err(s, at, "operator '%s' is not supported on constexpr floats",
                    ast_op_spelling((OpKind)op));
}

SVal sema_fold_binary(Sema *s, int op, SVal a, SVal b, Span at)
{
    if (a.k == SV_STR && b.k == SV_STR && op == OP_ADD)
        return sv_str(arena_printf(s->a, "%s%s", a.s, b.s));
    if (a.k == SV_TUPLE && b.k == SV_TUPLE && op == OP_ADD) {
        SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(a.n + b.n + 1));
        for (int i = 0; i < a.n; i++)
            items[i] = a.items[i];
        for (int i = 0; i < b.n; i++)
            items[a.n + i] = b.items[i];
        return sv_tuple(s, items, a.n + b.n);
    }
    if (!sv_is_num(a) || !sv_is_num(b))
        return sema_err(s, at, "unsupported operand types for '%s': %s and %s",
                        ast_op_spelling((OpKind)op), sv_describe(s, a), sv_describe(s, b));
    if (a.k != SV_FLOAT && b.k != SV_FLOAT) {
        SVal r = fold_int(s, op, a, b, at);
        /* bool op bool stays bool for the bitwise operators, as in Python */
        if (a.k == SV_BOOL && b.k == SV_BOOL && r.k == SV_INT &&
            (op == OP_BITAND || op == OP_BITOR || op == OP_BITXOR))
            return sv_bool(r.i != 0);
        return r;
    }
    return fold_float(s, op, num_f(a), num_f(b), at);
}

static bool fold_equal(SVal a, SVal b)
{
    if (sv_is_num(a) && sv_is_num(b))
        return num_f(a) == num_f(b) && (a.k == SV_FLOAT || b.k == SV_FLOAT || a.i == b.i);
    if (a.k != b.k)
        return false;
    switch (a.k) {
    case SV_NONE: return true;
    case SV_DTYPE: return type_eq(a.ty, b.ty) && a.i == b.i;
    case SV_STR: return strcmp(a.s, b.s) == 0;
    case SV_TUPLE:
        if (a.n != b.n)
            return false;
        for (int i = 0; i < a.n; i++)
            if (!fold_equal(a.items[i], b.items[i]))
                return false;
        return true;
    case SV_FUNC:
    case SV_MODULE: return a.fn == b.fn;
    default: return false;
    }
}

/* *ok = false when the operands are not both compile-time values. */
SVal sema_fold_compare(Sema *s, int op, SVal a, SVal b, Span at, bool *ok)
{
    *ok = true;
    switch (op) {
    case OP_EQ: return sv_bool(fold_equal(a, b));
    case OP_NE: return sv_bool(!fold_equal(a, b));
    case OP_IS: return sv_bool(fold_equal(a, b));
    case OP_IS_NOT: return sv_bool(!fold_equal(a, b));
    case OP_IN:
    case OP_NOT_IN: {
        if (b.k != SV_TUPLE)
            return sema_err(s, at, "'in' needs a constexpr tuple on the right, got %s",
                            sv_describe(s, b));
        bool found = false;
        for (int i = 0; i < b.n && !found; i++)
            found = fold_equal(a, b.items[i]);
        return sv_bool(op == OP_IN ? found : !found);
    }
    default: break;
    }
    if (!sv_is_num(a) || !sv_is_num(b)) {
        *ok = false;
        return sema_err(s, at, "cannot compare %s and %s with '%s'", sv_describe(s, a),
                        sv_describe(s, b), ast_op_spelling((OpKind)op));
    }
    double x = num_f(a), y = num_f(b);
    bool r;
    if (a.k != SV_FLOAT && b.k != SV_FLOAT) {
        Wide p = wide(a), q = wide(b);
        r = op == OP_LT ? p < q : op == OP_LE ? p <= q : op == OP_GT ? p > q : p >= q;
    } else {
        r = op == OP_LT ? x < y : op == OP_LE ? x <= y : op == OP_GT ? x > y : x >= y;
    }
    return sv_bool(r);
}
