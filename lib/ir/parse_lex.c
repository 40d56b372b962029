/* ir/parse_lex.c: the character level of the IR reader: blanks, words,
 * numbers, strings with print.c's escapes, lines and their `// names`
 * comments. Assumes only that the text is `len` bytes (NULs included);
 * every number is range-checked and every word bounded. */
#include "ir/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void irp_advance(Parser *p)
{
    if (at_end(p))
        return;
    if (p->s[p->pos] == '\n') {
        p->line++;
        p->line_start = p->pos + 1;
    }
    p->pos++;
}

/* Reports the first problem only: what follows it is seldom worth reading. */
bool irp_fail_at(Parser *p, Span at, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        va_start(ap, fmt);
        diag_vreport(p->d, DIAG_ERROR, at, fmt, ap);
        va_end(ap);
    }
    p->failed = true;
    return false;
}

void irp_skip_blanks(Parser *p)
{
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\r')
        irp_advance(p);
}

bool irp_accept(Parser *p, const char *lit)
{
    irp_skip_blanks(p);
    size_t n = strlen(lit);
    if (p->pos + n > p->len || memcmp(p->s + p->pos, lit, n) != 0)
        return false;
    for (size_t i = 0; i < n; i++)
        irp_advance(p);
    return true;
}

bool irp_expect(Parser *p, const char *lit)
{
    if (irp_accept(p, lit))
        return true;
    return FAIL(p, "expected '%s'", lit);
}

/* A run of letters, digits, '_' and '.' (at most cap-1 of them); "" if none. */
const char *irp_word(Parser *p, char *buf, size_t cap)
{
    irp_skip_blanks(p);
    size_t n = 0;
    while (is_word_char(peek(p)) && n + 1 < cap) {
        buf[n++] = peek(p);
        irp_advance(p);
    }
    buf[n] = 0;
    return buf;
}

bool irp_accept_word(Parser *p, const char *w)
{
    irp_skip_blanks(p);
    size_t n = strlen(w);
    if (p->pos + n > p->len || memcmp(p->s + p->pos, w, n) != 0 || is_word_char(peek_at(p, n)))
        return false;
    for (size_t i = 0; i < n; i++)
        irp_advance(p);
    return true;
}

/* An integer in [lo, hi]. */
bool irp_int(Parser *p, int64_t lo, int64_t hi, int64_t *out)
{
    irp_skip_blanks(p);
    Span at = here(p);
    char buf[32];
    size_t n = 0;
    if (peek(p) == '-' || peek(p) == '+')
        buf[n++] = peek(p), irp_advance(p);
    while (is_digit(peek(p)) && n + 1 < sizeof buf)
        buf[n++] = peek(p), irp_advance(p);
    buf[n] = 0;
    if (n == 0 || !is_digit(buf[n - 1]))
        return irp_fail_at(p, at, "expected an integer");
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno || v < lo || v > hi)
        return irp_fail_at(p, at, "%s is outside %lld..%lld", buf, (long long)lo, (long long)hi);
    *out = v;
    return true;
}

bool irp_int32(Parser *p, int lo, int hi, int *out)
{
    int64_t v;
    if (!irp_int(p, lo, hi, &v))
        return false;
    *out = (int)v;
    return true;
}

/* "..." with print.c's escapes, copied into the arena. */
bool irp_string(Parser *p, const char **out)
{
    if (!irp_expect(p, "\""))
        return false;
    StrBuf sb;
    sb_init(&sb);
    while (!at_end(p) && peek(p) != '"' && peek(p) != '\n') {
        char c = peek(p);
        irp_advance(p);
        if (c == '\\' && peek(p) == 'x' && isxdigit((unsigned char)peek_at(p, 1)) &&
            isxdigit((unsigned char)peek_at(p, 2))) {
            char hex[3] = {peek_at(p, 1), peek_at(p, 2), 0};
            c = (char)strtol(hex, NULL, 16);
            irp_advance(p), irp_advance(p), irp_advance(p);
        } else if (c == '\\' && (peek(p) == '"' || peek(p) == '\\' || peek(p) == 'n')) {
            c = peek(p) == 'n' ? '\n' : peek(p);
            irp_advance(p);
        } else if (c == '\\') {
            sb_free(&sb);
            return FAIL(p, "unknown escape in a string");
        }
        sb_putc(&sb, c);
    }
    bool closed = peek(p) == '"';
    if (closed)
        irp_advance(p);
    *out = arena_strndup(p->a, sb.data ? sb.data : "", sb.len);
    sb_free(&sb);
    return closed || FAIL(p, "unterminated string");
}

/* ---- lines ------------------------------------------------------------------- */

/* Skips blank lines and `# ` comment lines up to the next line with content. */
void irp_skip_lines(Parser *p)
{
    for (;;) {
        irp_skip_blanks(p);
        char c = peek(p), next = peek_at(p, 1);
        bool comment = c == '#' && (next == ' ' || next == '\t' || next == '\n' || next == 0);
        if (comment)
            while (!at_end(p) && peek(p) != '\n')
                irp_advance(p);
        if (!at_end(p) && peek(p) == '\n')
            irp_advance(p);
        else if (!comment)
            return;
    }
}

bool irp_end_of_line(Parser *p)
{
    irp_skip_blanks(p);
    if (at_end(p) || peek(p) == '\n') {
        irp_skip_lines(p);
        return true;
    }
    return FAIL(p, "expected the end of the line");
}

/* "// a, _, c": n names, "_" kept as it reads (it prints the same). */
bool irp_names(Parser *p, IrValue *const *vs, int n)
{
    if (!irp_accept(p, "//"))
        return true;
    for (int i = 0; i < n; i++) {
        if (i && !irp_expect(p, ","))
            return false;
        irp_skip_blanks(p);
        size_t start = p->pos;
        while (!at_end(p) && peek(p) != ',' && peek(p) != '\n' && peek(p) != ' ')
            irp_advance(p);
        if (p->pos == start)
            return FAIL(p, "expected a name");
        if (vs[i])
            vs[i]->name = arena_strndup(p->a, p->s + start, p->pos - start);
    }
    irp_skip_blanks(p);
    return peek(p) != ',' || FAIL(p, "more names than values");
}

/* "key=N" with N in [lo, hi]. */
bool irp_keyed_int(Parser *p, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    if (!irp_accept_word(p, key))
        return FAIL(p, "expected '%s='", key);
    return irp_expect(p, "=") && irp_int(p, lo, hi, out);
}
