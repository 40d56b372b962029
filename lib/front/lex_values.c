/* lex_values.c: what the scanner's rules (grammar/tk.l) hand out besides
 * token kinds: errors at a span, bracket nesting, the values of names,
 * numbers and strings (escapes decoded), and the state of f-strings being
 * scanned. Everything works on the LexState alone, no flex internals; all
 * memory is the compilation's arena. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "front/lex.h"

void lex_error(LexState *lx, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(lx->diag, DIAG_ERROR, at, fmt, ap);
    va_end(ap);
    lx->error_line = at.line;
}

void lex_stray(LexState *lx, const char *text, Span at)
{
    unsigned char c = (unsigned char)text[0];
    if (c >= 0x20 && c < 0x7f)
        lex_error(lx, at, "unexpected character '%c'", c);
    else
        lex_error(lx, at, "unexpected control character '\\x%02x'", c);
}

int lex_open_bracket(LexState *lx, char c, Span at, int tok)
{
    if (lx->nbrackets >= LEX_MAX_BRACKETS) {
        lex_error(lx, at, "brackets nested too deeply (the limit is %d)", LEX_MAX_BRACKETS);
        lx->fatal = true;
        return END;
    }
    lx->bracket[lx->nbrackets] = c;
    lx->bracket_at[lx->nbrackets] = at;
    lx->nbrackets++;
    return tok;
}

/* A closing bracket that does not match the open one is reported and
 * replaced by the matching one, so the parser sees balanced brackets and
 * does not add errors of its own; one with nothing open is dropped. */
int lex_close_bracket(LexState *lx, char c, Span at)
{
    if (lx->nbrackets == 0) {
        lex_error(lx, at, "unmatched '%c'", c);
        return 0;
    }
    char open = lx->bracket[--lx->nbrackets];
    char want = open == '(' ? ')' : open == '[' ? ']' : '}';
    if (c != want)
        lex_error(lx, at, "closing '%c' does not match '%c' opened at line %d", c, open,
                  lx->bracket_at[lx->nbrackets].line);
    return want == ')' ? RPAR : want == ']' ? RSQB : RBRACE;
}

/* ---- token values ------------------------------------------------------ */

static Node *lex_node(LexState *lx, NodeKind k, Span at)
{
    Node *n = arena_alloc(lx->arena, sizeof *n);
    n->kind = k;
    n->span = at;
    return n;
}

Node *lex_name(LexState *lx, const char *text, size_t len, Span at)
{
    Node *n = lex_node(lx, N_NAME, at);
    n->name = arena_strndup(lx->arena, text, len);
    return n;
}

/* Integers up to 2**64-1; those above INT64_MAX are flagged NF_BIG_INT. */
Node *lex_int(LexState *lx, const char *text, size_t len, Span at)
{
    Node *n = lex_node(lx, N_INT, at);
    unsigned base = 10;
    size_t i = 0;
    if (len > 1 && text[0] == '0' && strchr("xXbBoO", text[1])) {
        base = strchr("xX", text[1]) ? 16 : strchr("bB", text[1]) ? 2 : 8;
        i = 2;
    }
    uint64_t v = 0;
    bool overflow = false;
    for (; i < len; i++) {
        char c = text[i];
        if (c == '_')
            continue;
        unsigned d = c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
        if (v > (UINT64_MAX - d) / base)
            overflow = true;
        v = v * base + d;
    }
    if (overflow) {
        lex_error(lx, at, "integer literal is too large (more than 64 bits)");
        v = 0;
    }
    n->uval = v;
    if (v > (uint64_t)INT64_MAX)
        n->flags |= NF_BIG_INT;
    else
        n->ival = (int64_t)v;
    return n;
}

Node *lex_float(LexState *lx, const char *text, size_t len, Span at)
{
    Node *n = lex_node(lx, N_FLOAT, at);
    char *buf = arena_alloc(lx->arena, len + 1);
    if (!buf)
        return n;
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] != '_')
            buf[k++] = text[i];
    buf[k] = 0;
    n->fval = strtod(buf, NULL);
    return n;
}

static int lex_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void lex_put_utf8(char *out, size_t *k, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*k)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*k)++] = (char)(0xc0 | (cp >> 6));
        out[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*k)++] = (char)(0xe0 | (cp >> 12));
        out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*k)++] = (char)(0xf0 | (cp >> 18));
        out[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*k)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* Decodes one escape after a backslash at s[0]; returns the bytes used. */
size_t lex_escape(LexState *lx, const char *s, size_t left, char *out, size_t *k, Span at)
{
    static const char simple[] = "n\nt\tr\r\\\\''\"\"a\ab\bf\fv\v0\0";
    for (int i = 0; simple[i]; i += 2)
        if (s[0] == simple[i] && !(s[0] == '0' && left > 1 && s[1] >= '0' && s[1] <= '7')) {
            out[(*k)++] = simple[i + 1];
            return 1;
        }
    if (s[0] == '\n')
        return 1;
    if (s[0] == '\r' && left > 1 && s[1] == '\n')
        return 2;
    if (s[0] >= '0' && s[0] <= '7') {
        size_t n = 0;
        unsigned v = 0;
        while (n < 3 && n < left && s[n] >= '0' && s[n] <= '7')
            v = v * 8 + (unsigned)(s[n++] - '0');
        out[(*k)++] = (char)(v & 0xff);
        return n;
    }
    int digits = s[0] == 'x' ? 2 : s[0] == 'u' ? 4 : s[0] == 'U' ? 8 : 0;
    if (digits) {
        uint32_t v = 0;
        int i = 1;
        for (; i <= digits && (size_t)i < left && lex_hex(s[i]) >= 0; i++)
            v = v * 16 + (uint32_t)lex_hex(s[i]);
        if (i <= digits || v > 0x10ffff) {
            lex_error(lx, at, "invalid '\\%c' escape in string literal", s[0]);
            return (size_t)i;
        }
        if (digits == 2)
            out[(*k)++] = (char)v;
        else
            lex_put_utf8(out, k, v);
        return (size_t)i;
    }
    /* Unknown escapes keep their backslash, as in Python. */
    out[(*k)++] = '\\';
    out[(*k)++] = s[0];
    return 1;
}

/* The value of a string literal: prefix and quotes removed, escapes decoded
 * unless the literal is raw. */
Node *lex_string(LexState *lx, const char *text, size_t len, Span at)
{
    Node *n = lex_node(lx, N_STR, at);
    bool raw = false;
    if (text[0] == 'r' || text[0] == 'R' || text[0] == 'u' || text[0] == 'U') {
        raw = text[0] == 'r' || text[0] == 'R';
        text++;
        len--;
    }
    size_t q = len >= 6 && text[0] == text[1] && text[1] == text[2] ? 3 : 1;
    const char *s = text + q;
    size_t slen = len - 2 * q;
    char *out = arena_alloc(lx->arena, slen * 2 + 1);
    if (!out)
        return n;
    size_t k = 0;
    for (size_t i = 0; i < slen;) {
        if (s[i] == '\\' && !raw && i + 1 < slen)
            i += 1 + lex_escape(lx, s + i + 1, slen - i - 1, out, &k, at);
        else
            out[k++] = s[i++];
    }
    out[k] = 0;
    n->str = out;
    n->slen = k;
    return n;
}

/* ---- f-strings ------------------------------------------------------------ */

/* After the prefix and opening quotes: a new f-string on the stack. */
bool lex_fstring_start(LexState *lx, const char *text, size_t len, Span at)
{
    if (lx->nfstr >= LEX_MAX_FSTRINGS) {
        lex_error(lx, at, "f-strings nested too deeply (the limit is %d)", LEX_MAX_FSTRINGS);
        lx->fatal = true;
        return false;
    }
    size_t q = len >= 3 && text[len - 1] == text[len - 2] && text[len - 2] == text[len - 3] ? 3 : 1;
    LexFString *f = &lx->fstr[lx->nfstr++];
    *f = (LexFString){.quote = text[len - 1], .triple = q == 3, .field = -1, .at = at};
    for (size_t i = 0; i + q < len; i++)
        f->raw |= text[i] == 'r' || text[i] == 'R';
    return true;
}

Node *lex_ftext(LexState *lx, const char *text, size_t len, Span at)
{
    Node *n = lex_node(lx, N_STR, at);
    n->str = arena_strndup(lx->arena, text, len);
    n->slen = n->str ? len : 0;
    return n;
}

/* At the bracket level of the innermost f-string's open replacement field,
 * where '}', ':', '!r' and '=' belong to the field. */
bool lex_at_field(const LexState *lx)
{
    if (lx->nfstr == 0)
        return false;
    int field = lx->fstr[lx->nfstr - 1].field;
    return field >= 0 && field == lx->nbrackets - 1;
}

int lex_field_open(LexState *lx, Span at)
{
    LexFString *f = &lx->fstr[lx->nfstr - 1];
    if (lex_open_bracket(lx, '{', at, FSTR_OPEN) != FSTR_OPEN)
        return END;
    f->field = lx->nbrackets - 1;
    f->field_at = lx->offset;
    f->spec = false;
    f->spec_depth = 0;
    return FSTR_OPEN;
}

/* {expr=}: the field's source text up to the '=' and the blanks after it. */
Node *lex_field_eq(LexState *lx, Span at)
{
    const LexFString *f = &lx->fstr[lx->nfstr - 1];
    const char *text = lx->src->text;
    size_t end = lx->offset;
    while (end < lx->src->len && (text[end] == ' ' || text[end] == '\t'))
        end++;
    return lex_ftext(lx, text + f->field_at, end - f->field_at, at);
}

/* The field's '}': returns whether it had a format spec. */
int lex_field_close(LexState *lx)
{
    LexFString *f = &lx->fstr[lx->nfstr - 1];
    lx->nbrackets = f->field;
    f->field = -1;
    return f->spec;
}

/* A line ends inside a one-line f-string: it is dropped, with its open
 * field's brackets. */
void lex_fstring_unterminated(LexState *lx)
{
    LexFString *f = &lx->fstr[--lx->nfstr];
    lex_error(lx, f->at, "unterminated f-string");
    if (f->field >= 0)
        lx->nbrackets = f->field;
}

/* Whether a newline ends a one-line f-string whose field is open. */
bool lex_fstring_cut(const LexState *lx)
{
    return lx->nfstr > 0 && !lx->fstr[lx->nfstr - 1].triple;
}
