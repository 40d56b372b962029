/* host_lines.c: the text of a Python module as host.c sees it: logical
 * lines found by structure alone (indentation, brackets, strings of every
 * kind, line continuations), and the small scanners over them. Assumes
 * nothing of the text; guarantees every index it returns is within it. */
#include <string.h>

#include "front/host.h"

bool host_is_id(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Skips a string literal opening at text[i] (a quote); returns the index
 * after it, or n when it is never closed. Raw or not, a backslash always
 * skips the next byte, which is how Python finds the end of a literal. */
size_t host_skip_string(const char *t, size_t n, size_t i, int *line)
{
    char q = t[i];
    bool triple = i + 2 < n && t[i + 1] == q && t[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < n) {
        char c = t[i];
        if (c == '\\') {
            if (i + 1 < n && t[i + 1] == '\n')
                (*line)++;
            i += 2;
            continue;
        }
        if (c == '\n') {
            if (!triple)
                return i; /* unterminated: the scanner reports it if the code is kept */
            (*line)++;
        }
        if (c == q && (!triple || (i + 2 < n && t[i + 1] == q && t[i + 2] == q)))
            return i + (triple ? 3 : 1);
        i++;
    }
    return n;
}

/* Cuts the text into logical lines, skipping blank and comment-only ones. */
void host_lines(HostScan *h)
{
    const char *t = h->text;
    size_t n = h->n, i = 0;
    int line = 1;
    while (i < n) {
        size_t b = i;
        while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\f' || t[i] == '\r'))
            i++;
        if (i >= n)
            break;
        if (t[i] == '\n' || t[i] == '#') {
            while (i < n && t[i] != '\n')
                i++;
            i++;
            line++;
            continue;
        }
        HostLine L = {.start = i, .indent = (int)(i - b), .line = line};
        int depth = 0;
        size_t code_end =
            i; /* past the last character of code: a trailing comment is not the line's */
        while (i < n) {
            char c = t[i];
            if (c == '\'' || c == '"') {
                i = host_skip_string(t, n, i, &line);
                code_end = i;
                continue;
            }
            if (c == '#') {
                while (i < n && t[i] != '\n')
                    i++;
                continue;
            }
            if (c == '\\' && i + 1 < n && t[i + 1] == '\n') {
                i += 2;
                line++;
                continue;
            }
            if (c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\n')
                code_end = i + 1;
            if (c == '(' || c == '[' || c == '{')
                depth++;
            else if ((c == ')' || c == ']' || c == '}') && depth > 0)
                depth--;
            else if (c == '\n') {
                if (depth == 0)
                    break;
                line++;
            }
            i++;
        }
        L.end = code_end;
        L.end_line = line;
        if (h->nlines == h->cap) {
            int cap = h->cap ? h->cap * 2 : 64;
            HostLine *nl = arena_alloc(h->lx->arena, sizeof(HostLine) * (size_t)cap);
            if (!nl)
                return;
            if (h->nlines)
                memcpy(nl, h->lines, sizeof(HostLine) * (size_t)h->nlines);
            h->lines = nl;
            h->cap = cap;
        }
        h->lines[h->nlines++] = L;
        i++;
        line++;
    }
}

/* Does the logical line start with the keyword (a whole word)? */
bool host_starts(const HostScan *h, const HostLine *L, const char *kw)
{
    size_t k = strlen(kw);
    return L->end - L->start >= k && memcmp(h->text + L->start, kw, k) == 0 &&
        (L->start + k >= L->end || !host_is_id(h->text[L->start + k]));
}

/* Line and column of a byte, from the line's start. */
Span host_span_at(const HostScan *h, const HostLine *L, size_t at, size_t len)
{
    int line = L->line;
    size_t bol = L->start - (size_t)L->indent;
    for (size_t i = L->start; i < at; i++)
        if (h->text[i] == '\n') {
            line++;
            bol = i + 1;
        }
    int col = (int)(at - bol) + 1;
    return (Span){line, col, line, col + (int)len, 0};
}

/* The dotted module path after `import`/`from` at p; returns its end. */
size_t host_dotted(const char *t, size_t p, size_t end)
{
    while (p < end && (host_is_id(t[p]) || t[p] == '.'))
        p++;
    return p;
}

size_t host_skip_ws(const char *t, size_t p, size_t end)
{
    while (p < end &&
           (t[p] == ' ' || t[p] == '\t' || t[p] == '\\' || t[p] == '\n' || t[p] == '\r' ||
            t[p] == '(' || t[p] == ')' || t[p] == ','))
        p++;
    return p;
}

/* Blanks [from, to) of the scanner's copy, keeping newlines. */
void host_blank(HostScan *h, size_t from, size_t to)
{
    for (size_t i = from; i < to && i < h->n; i++)
        if (h->text[i] != '\n')
            h->text[i] = ' ';
}

/* The index of the bracket that closes the one at t[o], or `end`. */
size_t host_skip_comment(const char *t, size_t end, size_t i)
{
    while (i < end && t[i] != '\n')
        i++;
    return i;
}

size_t host_match(const char *t, size_t end, size_t o)
{
    int depth = 0, line = 0;
    for (size_t i = o; i < end;) {
        char c = t[i];
        if (c == '\'' || c == '"') {
            i = host_skip_string(t, end, i, &line);
            continue;
        }
        if (c == '#') { /* a comment's brackets and quotes are not code */
            i = host_skip_comment(t, end, i);
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == ']' || c == '}') && --depth == 0)
            return i;
        i++;
    }
    return end;
}

bool host_in(const PtrVec *v, const char *s, size_t len)
{
    for (int i = 0; i < v->len; i++) {
        const char *n = v->items[i];
        if (strlen(n) == len && memcmp(n, s, len) == 0)
            return true;
    }
    return false;
}

/* Spaces and tabs only (host_skip_ws also passes brackets and commas). */
size_t host_skip_blank(const char *t, size_t p, size_t end)
{
    while (p < end && (t[p] == ' ' || t[p] == '\t'))
        p++;
    return p;
}
