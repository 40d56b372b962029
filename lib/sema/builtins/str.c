/* sema/builtins/str.c: the methods of Python strings, and `%` formatting,
 * that module constants and constexpr functions use to build text at
 * compile time (the inline PTX of tl.inline_asm_elementwise made with
 * str.format, join and `%`), as Python evaluates them. Values print as
 * str() prints them (sema/fstring.c); a format spec or conversion this
 * file does not read is an error that names it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema/spec.h"

static const char *const str_methods[] = {"join",  "format",     "split",   "replace",
                                          "strip", "lstrip",     "rstrip",  "upper",
                                          "lower", "startswith", "endswith"};

bool sema_str_method_known(const char *name)
{
    for (int i = 0; i < TK_ARRAY_LEN(str_methods); i++)
        if (!strcmp(name, str_methods[i]))
            return true;
    return false;
}

static bool want_str(Sema *s, SVal v, Span at, const char *what)
{
    if (v.k == SV_STR)
        return true;
    if (v.k != SV_UNDEF)
        sema_err(s, at, "%s must be a string, got %s", what, sv_describe(s, v));
    return false;
}

/* Whether spec[0..n) is printf's [-][0][width][.precision], each number of
 * at most three digits (a text of a million spaces is no format). */
static bool spec_flags(const char *spec, size_t n)
{
    size_t i = 0;
    if (i < n && spec[i] == '-')
        i++;
    if (i < n && spec[i] == '0')
        i++;
    for (int part = 0; part < 2; part++) {
        size_t d = i;
        while (i < n && spec[i] >= '0' && spec[i] <= '9')
            i++;
        if (i - d > 3)
            return false;
        if (part == 0 && i < n && spec[i] == '.')
            i++;
        else
            break;
    }
    return i == n;
}

/* The text of v under a format spec: an optional width with fill 0, an
 * optional precision, and a type of d, x, X, o, f, e, g or s (Python's
 * mini-language beyond that is an error). */
static bool spec_text(Sema *s, StrBuf *out, SVal v, const char *spec, Span at)
{
    if (!*spec) {
        if (sema_value_text(s, out, v, 0))
            return true;
        sema_err(s, at, "%s has no text at compile time", sv_describe(s, v));
        return false;
    }
    size_t n = strspn(spec, "-0123456789.");
    char type = spec[n];
    if ((type && (spec[n + 1] || !strchr("dxXofeEgGs", type))) || !spec_flags(spec, n)) {
        sema_err(s, at, "format spec '%s' is not supported at compile time", spec);
        return false;
    }
    char fmt[24];
    if (v.k == SV_INT || v.k == SV_BOOL) {
        if (type && !strchr("dxXo", type)) {
            sema_err(s, at, "format spec '%s' does not take an int", spec);
            return false;
        }
        snprintf(fmt, sizeof fmt, "%%%.*sll%c", (int)n, spec, type ? type : 'd');
        sb_printf(out, fmt, (long long)v.i);
        return true;
    }
    if (v.k == SV_FLOAT && (!type || strchr("feEgG", type))) {
        snprintf(fmt, sizeof fmt, "%%%.*s%c", (int)n, spec, type ? type : 'g');
        sb_printf(out, fmt, v.f);
        return true;
    }
    if (v.k == SV_STR && (!type || type == 's')) {
        snprintf(fmt, sizeof fmt, "%%%.*ss", (int)n, spec);
        sb_printf(out, fmt, v.s);
        return true;
    }
    {
        sema_err(s, at, "format spec '%s' does not take %s", spec, sv_describe(s, v));
        return false;
    }
}

/* The argument a replacement field names: by keyword, by index, or next
 * (*next counts those; -1 once a field gave an index: Python refuses a
 * format string that does both). */
static bool field_arg(Sema *s, const char *name, size_t len, CallArgs *ca, int *next, SVal *out)
{
    bool index = len && name[0] >= '0' && name[0] <= '9';
    if ((len == 0 && *next < 0) || (index && *next > 0)) {
        sema_err(s, ca->at, "format: fields both numbered and not");
        return false;
    }
    if (index)
        *next = -1;
    if (len == 0) {
        if (*next >= ca->npos) {
            sema_err(s, ca->at, "format: too few arguments");
            return false;
        }
        *out = ca->pos[(*next)++];
        return true;
    }
    if (name[0] >= '0' && name[0] <= '9') {
        int i = atoi(name);
        if (i >= ca->npos) {
            sema_err(s, ca->at, "format: no argument %d", i);
            return false;
        }
        *out = ca->pos[i];
        return true;
    }
    for (int k = 0; k < ca->nkw; k++)
        if (strlen(ca->kw[k]) == len && !memcmp(ca->kw[k], name, len)) {
            *out = ca->kwv[k];
            return true;
        }
    {
        sema_err(s, ca->at, "format: no argument named '%.*s'", (int)len, name);
        return false;
    }
}

/* str.format: {} {0} {name}, each with an optional !r/!s and :spec; {{ and }}. */
static SVal format(Sema *s, const char *f, CallArgs *ca)
{
    StrBuf sb;
    sb_init(&sb);
    int next = 0;
    bool ok = true;
    for (const char *p = f; *p && ok; p++) {
        if ((*p == '{' || *p == '}') && p[1] == *p) {
            sb_putc(&sb, *p++);
            continue;
        }
        if (*p == '}') {
            sema_err(s, ca->at, "format: single '}' in the format string");
            ok = false;
            break;
        }
        if (*p != '{') {
            sb_putc(&sb, *p);
            continue;
        }
        const char *end = strchr(p, '}');
        if (!end) {
            sema_err(s, ca->at, "format: '{' without '}'");
            ok = false;
            break;
        }
        const char *name = p + 1, *colon = memchr(name, ':', (size_t)(end - name));
        const char *bang = memchr(name, '!', (size_t)((colon ? colon : end) - name));
        size_t len = (size_t)((bang ? bang : colon ? colon : end) - name);
        SVal v;
        char *spec =
            arena_strndup(s->a, colon ? colon + 1 : end, colon ? (size_t)(end - colon - 1) : 0);
        ok = field_arg(s, name, len, ca, &next, &v) &&
            (bang ? sema_value_text(s, &sb, v, bang[1]) : spec_text(s, &sb, v, spec, ca->at));
        p = end;
    }
    SVal r =
        ok ? sv_str(arena_strndup(s->a, sb.data ? sb.data : "", sb.len)) : (SVal){.k = SV_UNDEF};
    sb_free(&sb);
    return r;
}

static SVal join(Sema *s, const char *sep, CallArgs *ca)
{
    if (ca->npos != 1 || ca->nkw)
        return sema_err(s, ca->at, "str.join takes one iterable of strings");
    SVal it = ca->pos[0];
    if (it.k != SV_TUPLE)
        return sema_err(s, ca->pos_at[0], "str.join takes strings, got %s", sv_describe(s, it));
    StrBuf sb;
    sb_init(&sb);
    bool ok = true;
    for (int i = 0; i < it.n && ok; i++) {
        ok = want_str(s, it.items[i], ca->pos_at[0], "an item str.join joins");
        if (ok)
            sb_printf(&sb, "%s%s", i ? sep : "", it.items[i].s);
    }
    SVal r =
        ok ? sv_str(arena_strndup(s->a, sb.data ? sb.data : "", sb.len)) : (SVal){.k = SV_UNDEF};
    sb_free(&sb);
    return r;
}

/* str.split(sep=None): runs of whitespace without sep, as Python splits. */
static SVal split(Sema *s, const char *t, CallArgs *ca)
{
    const char *sep = NULL;
    if (ca->npos > 1 || ca->nkw)
        return sema_err(s, ca->at, "str.split takes at most a separator");
    if (ca->npos == 1 && ca->pos[0].k != SV_NONE) {
        if (!want_str(s, ca->pos[0], ca->pos_at[0], "str.split's separator"))
            return (SVal){.k = SV_UNDEF};
        sep = ca->pos[0].s;
        if (!*sep)
            return sema_err(s, ca->pos_at[0], "str.split: empty separator");
    }
    PtrVec parts = {0};
    const char *p = t;
    while (*p) {
        if (!sep) {
            p += strspn(p, " \t\n\r\f\v");
            if (!*p)
                break;
        }
        const char *e = sep ? strstr(p, sep) : p + strcspn(p, " \t\n\r\f\v");
        if (!e)
            e = p + strlen(p);
        vec_push(s->a, &parts, arena_strndup(s->a, p, (size_t)(e - p)));
        p = e;
        if (sep && *p) {
            p += strlen(sep);
            if (!*p)
                vec_push(s->a, &parts, (void *)"");
        }
    }
    if (sep && !*t)
        vec_push(s->a, &parts, (void *)"");
    SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(parts.len + 1));
    for (int i = 0; items && i < parts.len; i++)
        items[i] = sv_str(parts.items[i]);
    return items ? sv_tuple(s, items, parts.len) : (SVal){.k = SV_UNDEF};
}

static SVal replace(Sema *s, const char *t, CallArgs *ca)
{
    if (ca->npos != 2 || ca->nkw || !want_str(s, ca->pos[0], ca->pos_at[0], "str.replace's old") ||
        !want_str(s, ca->pos[1], ca->pos_at[1], "str.replace's new"))
        return ca->npos != 2 ? sema_err(s, ca->at, "str.replace takes old and new")
                             : (SVal){.k = SV_UNDEF};
    const char *old = ca->pos[0].s, *new = ca->pos[1].s;
    if (!*old)
        return sema_err(s, ca->pos_at[0], "str.replace: empty old string");
    StrBuf sb;
    sb_init(&sb);
    for (const char *p = t, *e; *p; p = e + strlen(old)) {
        if (!(e = strstr(p, old))) {
            sb_puts(&sb, p);
            break;
        }
        sb_printf(&sb, "%.*s%s", (int)(e - p), p, new);
        if (!e[strlen(old)])
            break;
    }
    SVal r = sv_str(arena_strndup(s->a, sb.data ? sb.data : "", sb.len));
    sb_free(&sb);
    return r;
}

static SVal strip(Sema *s, const char *t, const char *how, CallArgs *ca)
{
    if (ca->npos || ca->nkw)
        return sema_err(s, ca->at, "str.%s takes no arguments here", how);
    const char *ws = " \t\n\r\f\v";
    size_t b = how[0] == 'r' ? 0 : strspn(t, ws), e = strlen(t);
    while (how[0] != 'l' && e > b && strchr(ws, t[e - 1]))
        e--;
    return sv_str(arena_strndup(s->a, t + b, e - b));
}

SVal sema_str_call(Sema *s, SVal self, const char *name, CallArgs *ca)
{
    const char *t = self.s;
    if (!strcmp(name, "join"))
        return join(s, t, ca);
    if (!strcmp(name, "format"))
        return format(s, t, ca);
    if (!strcmp(name, "split"))
        return split(s, t, ca);
    if (!strcmp(name, "replace"))
        return replace(s, t, ca);
    if (strstr(name, "strip"))
        return strip(s, t, name, ca);
    if (!strcmp(name, "upper") || !strcmp(name, "lower")) {
        char *u = arena_strdup(s->a, t);
        for (char *p = u; *p; p++)
            *p = name[0] == 'u' ? (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p)
                                : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        return sv_str(u);
    }
    if (ca->npos != 1 || ca->nkw || !want_str(s, ca->pos[0], ca->pos_at[0], "the prefix"))
        return ca->npos != 1 ? sema_err(s, ca->at, "str.%s takes one string", name)
                             : (SVal){.k = SV_UNDEF};
    size_t n = strlen(ca->pos[0].s), len = strlen(t);
    if (name[0] == 's')
        return sv_bool(n <= len && !memcmp(t, ca->pos[0].s, n));
    return sv_bool(n <= len && !memcmp(t + len - n, ca->pos[0].s, n));
}

/* fmt % args: %d %i %s %r %x %X %o %f %e %g and %%, with flags 0 and -,
 * a width and a precision, as printf-style formatting in Python. */
SVal sema_str_percent(Sema *s, SVal fmt, SVal args, Span at)
{
    const SVal *a = args.k == SV_TUPLE ? args.items : &args;
    int n = args.k == SV_TUPLE ? args.n : 1, used = 0;
    StrBuf sb;
    sb_init(&sb);
    bool ok = true;
    for (const char *p = fmt.s; *p && ok; p++) {
        if (*p != '%') {
            sb_putc(&sb, *p);
            continue;
        }
        if (p[1] == '%') {
            sb_putc(&sb, '%');
            p++;
            continue;
        }
        size_t k = strspn(p + 1, "-0123456789.");
        char conv = p[1 + k];
        if (!conv || !strchr("disrxXofeEgG", conv) || !spec_flags(p + 1, k)) {
            sema_err(s, at, "'%%' format '%.*s' is not supported at compile time", (int)(k + 2), p);
            ok = false;
            break;
        }
        if (used == n) {
            sema_err(s, at, "not enough arguments for the format string");
            ok = false;
            break;
        }
        SVal v = a[used++];
        char spec[24];
        snprintf(spec, sizeof spec, "%.*s%c", (int)k, p + 1,
                 conv == 'i'       ? 'd'
                     : conv == 'r' ? 's'
                                   : conv);
        if (conv == 'r')
            ok = sema_value_text(s, &sb, v, 'r');
        else if (conv == 's' && v.k != SV_STR)
            ok = sema_value_text(s, &sb, v, 0);
        else
            ok = spec_text(s, &sb, v, spec, at);
        p += 1 + k;
    }
    if (ok && used < n) {
        sema_err(s, at, "not all arguments converted during string formatting");
        ok = false;
    }
    SVal r =
        ok ? sv_str(arena_strndup(s->a, sb.data ? sb.data : "", sb.len)) : (SVal){.k = SV_UNDEF};
    sb_free(&sb);
    return r;
}
