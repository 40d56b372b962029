/* base.c: arena, growable buffers, spans and diagnostics.
 * Assumes nothing; guarantees that no function here aborts: allocation
 * failure is recorded (Arena.oom, StrBuf.oom) and reported by the caller. */
#include "support/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the allocation hook ---------------------------------------------- */

static long fail_countdown; /* 0: never fail */
static bool fail_fired;

void tk_alloc_fail_after(long n)
{
    fail_countdown = n;
    fail_fired = false;
}

bool tk_alloc_failure_fired(void) { return fail_fired; }

static bool should_fail(void)
{
    if (fail_countdown <= 0 || --fail_countdown != 0)
        return false;
    fail_fired = true;
    return true;
}

void *tk_xalloc(size_t size) { return should_fail() ? NULL : malloc(size ? size : 1); }

void *tk_xrealloc(void *p, size_t size) { return should_fail() ? NULL : realloc(p, size ? size : 1); }

void tk_xfree(void *p) { free(p); }

/* ---- arena -------------------------------------------------------------- */

struct ArenaChunk {
    ArenaChunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

enum { CHUNK_MIN = 64 * 1024 };

void arena_init(Arena *a) { memset(a, 0, sizeof *a); }

void arena_free(Arena *a)
{
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        tk_xfree(c);
        c = next;
    }
    a->head = NULL;
}

/* Returned when the arena cannot grow, so small-object callers keep running
 * until the stage boundary sees a->oom; large requests get NULL instead. */
static _Alignas(16) unsigned char oom_scratch[4096];

void *arena_alloc(Arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    ArenaChunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > CHUNK_MIN ? size : CHUNK_MIN;
        ArenaChunk *n = tk_xalloc(sizeof *n + cap);
        if (!n) {
            a->oom = true;
            if (size > sizeof oom_scratch)
                return NULL;
            memset(oom_scratch, 0, size);
            return oom_scratch;
        }
        n->used = 0;
        n->cap = cap;
        n->next = a->head;
        a->head = n;
        c = n;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
    if (p && n >= 0)
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void vec_push(Arena *a, PtrVec *v, void *item)
{
    if (v->len == v->cap) {
        int cap = v->cap ? v->cap * 2 : 8;
        void **items = arena_alloc(a, sizeof(void *) * (size_t)cap);
        if (!items)
            return;
        if (v->len)
            memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = item;
}

/* ---- name maps ---------------------------------------------------------- */

static size_t namemap_find(const NameMap *m, const char *name, size_t len)
{
    size_t mask = (size_t)m->cap - 1;
    size_t h = (size_t)hash_bytes(0, name, len) & mask;
    while (m->keys[h] && !(strncmp(m->keys[h], name, len) == 0 && m->keys[h][len] == 0))
        h = (h + 1) & mask;
    return h;
}

int namemap_getn(const NameMap *m, const char *name, size_t len)
{
    if (m->cap == 0)
        return -1;
    size_t h = namemap_find(m, name, len);
    return m->keys[h] ? m->vals[h] : -1;
}

int namemap_get(const NameMap *m, const char *name)
{
    return namemap_getn(m, name, strlen(name));
}

/* Doubles the table, keeping it at most half full. */
static bool namemap_grow(Arena *a, NameMap *m)
{
    int cap = m->cap ? m->cap * 2 : 16;
    const char **keys = arena_alloc(a, sizeof *keys * (size_t)cap);
    int *vals = arena_alloc(a, sizeof *vals * (size_t)cap);
    if (!keys || !vals || a->oom)
        return false;
    NameMap bigger = {keys, vals, 0, cap};
    for (int i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t h = namemap_find(&bigger, m->keys[i], strlen(m->keys[i]));
            keys[h] = m->keys[i];
            vals[h] = m->vals[i];
            bigger.n++;
        }
    *m = bigger;
    return true;
}

bool namemap_put(Arena *a, NameMap *m, const char *name, int val)
{
    if ((m->n + 1) * 2 > m->cap && !namemap_grow(a, m))
        return false;
    size_t h = namemap_find(m, name, strlen(name));
    if (!m->keys[h]) {
        m->keys[h] = name;
        m->n++;
    }
    m->vals[h] = val;
    return true;
}

/* ---- string buffers ----------------------------------------------------- */

void sb_init(StrBuf *sb) { memset(sb, 0, sizeof *sb); }

void sb_free(StrBuf *sb)
{
    tk_xfree(sb->data);
    sb_init(sb);
}

static bool sb_reserve(StrBuf *sb, size_t extra)
{
    if (sb->oom)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *d = tk_xrealloc(sb->data, cap);
    if (!d) {
        sb->oom = true;
        return false;
    }
    sb->data = d;
    sb->cap = cap;
    return true;
}

void sb_write(StrBuf *sb, const char *s, size_t n)
{
    if (!sb_reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = 0;
}

void sb_putc(StrBuf *sb, char c) { sb_write(sb, &c, 1); }

void sb_puts(StrBuf *sb, const char *s) { sb_write(sb, s, strlen(s)); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n > 0 && sb_reserve(sb, (size_t)n)) {
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void sb_printf(StrBuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

char *sb_take(StrBuf *sb, size_t *len)
{
    if (!sb_reserve(sb, 0)) {
        sb_free(sb);
        return NULL;
    }
    char *d = sb->data;
    if (len)
        *len = sb->len;
    sb_init(sb);
    return d;
}

/* ---- spans and diagnostics ---------------------------------------------- */

Span span_join(Span a, Span b)
{
    Span s = a;
    if (b.end_line > s.end_line || (b.end_line == s.end_line && b.end_col > s.end_col)) {
        s.end_line = b.end_line;
        s.end_col = b.end_col;
    }
    return s;
}

void diag_init(Diag *d, const Source *src)
{
    memset(d, 0, sizeof *d);
    d->src = src;
    d->max_errors = 50;
}

void diag_free(Diag *d) { sb_free(&d->text); }

static const char *kind_word(DiagKind k)
{
    switch (k) {
    case DIAG_ERROR: return "error";
    case DIAG_WARNING: return "warning";
    case DIAG_NOTE: return "note";
    case DIAG_INTERNAL: return "internal error";
    }
    return "error";
}

/* Finds line `line` (1-based) of the source; returns its start and length
 * without the newline, or NULL when out of range. */
static const char *source_line(const Source *src, int line, size_t *len)
{
    if (!src || !src->text || line < 1)
        return NULL;
    const char *p = src->text, *end = src->text + src->len;
    for (int l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return NULL;
        p = nl + 1;
    }
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r')
        e++;
    *len = (size_t)(e - p);
    return p;
}

/* The source line, then a caret under the span's start and tildes to its
 * end (on the same line); tabs are copied so the caret lines up. */
static void print_caret(Diag *d, Span at)
{
    size_t len;
    const char *line = source_line(d->src, at.line, &len);
    if (!line)
        return;
    sb_puts(&d->text, "  ");
    for (size_t i = 0; i < len; i++)
        sb_putc(&d->text, line[i] == '\0' ? ' ' : line[i]);
    sb_puts(&d->text, "\n  ");
    int col = at.col < 1 ? 1 : at.col;
    for (int i = 1; i < col && (size_t)(i - 1) < len; i++)
        sb_putc(&d->text, line[i - 1] == '\t' ? '\t' : ' ');
    sb_putc(&d->text, '^');
    if (at.end_line == at.line)
        for (int i = col + 1; i < at.end_col && (size_t)(i - 1) < len; i++)
            sb_putc(&d->text, '~');
    sb_putc(&d->text, '\n');
}

void diag_vreport(Diag *d, DiagKind kind, Span at, const char *fmt, va_list ap)
{
    if (kind == DIAG_ERROR || kind == DIAG_INTERNAL) {
        d->errors++;
        if (d->errors > d->max_errors) {
            if (d->errors == d->max_errors + 1)
                sb_puts(&d->text, "too many errors; stopping\n");
            return;
        }
    } else if (kind == DIAG_WARNING) {
        d->warnings++;
    }
    const char *name = d->src && d->src->name ? d->src->name : "<input>";
    if (at.line > 0)
        sb_printf(&d->text, "%s:%d:%d: %s: ", name, at.line, at.col, kind_word(kind));
    else
        sb_printf(&d->text, "%s: %s: ", name, kind_word(kind));
    sb_vprintf(&d->text, fmt, ap);
    sb_putc(&d->text, '\n');
    if (at.line > 0)
        print_caret(d, at);
}

void diag_report(Diag *d, DiagKind kind, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(d, kind, at, fmt, ap);
    va_end(ap);
}

void diag_plain(Diag *d, DiagKind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    Span none = {0, 0, 0, 0};
    diag_vreport(d, kind, none, fmt, ap);
    va_end(ap);
}

/* ---- helpers ---------------------------------------------------------------- */

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    if (!h)
        h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}
