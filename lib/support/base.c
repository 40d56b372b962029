/* base.c: arena, growable buffers, spans and diagnostics.
 * Assumes nothing; guarantees that no function here aborts: allocation
 * failure is recorded (Arena.oom, StrBuf.oom) and reported by the caller. */
#include "support/support.h"

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

void *tk_xrealloc(void *p, size_t size)
{
    return should_fail() ? NULL : realloc(p, size ? size : 1);
}

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

int namemap_get(const NameMap *m, const char *name) { return namemap_getn(m, name, strlen(name)); }

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
 * without the line end, or NULL when out of range. Lines end as the scanner
 * ends them: '\n', "\r\n" or a lone '\r'. */
static const char *source_line(const Source *src, int line, size_t *len)
{
    if (!src || !src->text || line < 1)
        return NULL;
    const char *p = src->text, *end = src->text + src->len;
    for (int l = 1; l < line; l++) {
        while (p < end && *p != '\n' && *p != '\r')
            p++;
        if (p == end)
            return NULL;
        p += p[0] == '\r' && p + 1 < end && p[1] == '\n' ? 2 : 1;
    }
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r')
        e++;
    *len = (size_t)(e - p);
    return p;
}

/* The length of the valid UTF-8 sequence at s[0..n) that is not a C1
 * control (U+0080..U+009F), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (len == 0 || len > n || (s[0] == 0xc2 && s[1] < 0xa0))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    uint32_t cp = len == 2 ? (s[0] & 0x1fu) : len == 3 ? (s[0] & 0x0fu) : (s[0] & 0x07u);
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3fu);
    bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* One character of source text as a terminal should see it: printable
 * ASCII, a tab and valid UTF-8 as they are, any other byte as \xNN. Returns
 * the bytes it takes; *width gets the columns it shows as. */
static size_t render_char(const char *s, size_t n, char out[8], size_t *out_len, int *width)
{
    unsigned char c = (unsigned char)s[0];
    size_t len = c >= 0x80 ? utf8_len((const unsigned char *)s, n) : 1;
    if ((c >= 0x20 && c < 0x7f) || c == '\t' || len > 1) {
        memcpy(out, s, len);
        *out_len = len;
        *width = 1;
        return len;
    }
    snprintf(out, 8, "\\x%02x", c);
    *out_len = 4;
    *width = 4;
    return 1;
}

/* Appends text escaped as render_char shows it; newlines stay. */
static void sb_put_escaped(StrBuf *sb, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        char buf[8];
        size_t len;
        int w;
        if (s[i] == '\n') {
            sb_putc(sb, '\n');
            i++;
            continue;
        }
        i += render_char(s + i, n - i, buf, &len, &w);
        sb_write(sb, buf, len);
    }
}

/* Source lines are shown whole up to this many columns; a longer one is
 * cut to a window around the caret with "..." on the cut sides. */
enum { CARET_WINDOW = 160, CARET_BEFORE = 80 };

/* The column (from 0, as rendered) where the byte at `at` starts, and the
 * rendered width of the whole line. */
static int render_col(const char *line, size_t len, size_t at, int *total)
{
    int col = 0, at_col = -1;
    char buf[8];
    size_t out, i = 0;
    int w;
    while (i < len) {
        if (at_col < 0 && i >= at)
            at_col = col;
        i += render_char(line + i, len - i, buf, &out, &w);
        col += w;
    }
    *total = col;
    return at_col < 0 ? col : at_col;
}

/* The source line, then a caret under the span's start and tildes to its
 * end (on the same line). Control bytes are escaped and long lines cut
 * (render_char, CARET_WINDOW); tabs are copied so the caret lines up. */
static void print_caret(Diag *d, Span at)
{
    size_t len;
    const char *line = source_line(d->src, at.line, &len);
    if (!line)
        return;
    size_t start = at.col < 1 ? 0 : (size_t)at.col - 1;
    size_t stop =
        at.end_line == at.line && at.end_col > at.col ? (size_t)at.end_col - 1 : start + 1;
    int total, c0 = render_col(line, len, start, &total);
    int c1 = render_col(line, len, stop < len ? stop : len, &total);
    int from = 0, to = total;
    if (total > CARET_WINDOW) {
        from = c0 > CARET_BEFORE ? c0 - CARET_BEFORE : 0;
        to = from + CARET_WINDOW < total ? from + CARET_WINDOW : total;
        from = to - CARET_WINDOW;
    }
    StrBuf caret;
    sb_init(&caret);
    sb_puts(&d->text, from > 0 ? "  ..." : "  ");
    sb_puts(&caret, from > 0 ? "     " : "  ");
    int col = 0;
    for (size_t i = 0; i < len && col < to;) {
        char buf[8];
        size_t out;
        int w;
        bool tab = line[i] == '\t';
        i += render_char(line + i, len - i, buf, &out, &w);
        if (col >= from) {
            sb_write(&d->text, buf, out);
            if (col < c0)
                for (int k = 0; k < (tab ? 1 : w); k++)
                    sb_putc(&caret, tab ? '\t' : ' ');
        }
        col += w;
    }
    sb_puts(&d->text, to < total ? "...\n" : "\n");
    sb_putc(&caret, '^');
    for (int k = c0 + 1; k < c1 && k < to; k++)
        sb_putc(&caret, '~');
    sb_putc(&caret, '\n');
    sb_write(&d->text, caret.data ? caret.data : "", caret.len);
    d->text.oom |= caret.oom;
    sb_free(&caret);
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
    StrBuf msg; /* escaped: it may quote source text */
    sb_init(&msg);
    sb_vprintf(&msg, fmt, ap);
    sb_put_escaped(&d->text, msg.data ? msg.data : "", msg.len);
    d->text.oom |= msg.oom;
    sb_free(&msg);
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
    Span none = {0};
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
