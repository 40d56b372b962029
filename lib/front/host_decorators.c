/* host_decorators.c: the decorator lines above a def the front end keeps.
 * Triton's own (@triton.jit, @triton.autotune, @triton.heuristics, under
 * any name that stands for triton) and another module's autotune that
 * passes configs keep their arguments for sema to read, less what the
 * grammar does not read (comprehensions, `**kwargs` spreads) and the arms
 * of conditionals tk decides; any other decorator's arguments are host
 * Python, blanked. Assumes front/host_lines.c cut the text; never an
 * error. */
#include <string.h>

#include "front/host.h"

/* The last word of a decorator line's name (`jit` in `@triton.jit(...)`):
 * its start, and its length in *len. */
static size_t decorator_word(const HostScan *h, const HostLine *L, size_t *len)
{
    const char *t = h->text;
    size_t p = L->start + 1, last = p;
    *len = 0;
    while (p < L->end && t[p] != '(') {
        if (host_is_id(t[p])) {
            size_t s = p;
            while (p < L->end && host_is_id(t[p]))
                p++;
            last = s;
            *len = p - s;
            continue;
        }
        p++;
    }
    return last;
}

/* The bare name of a decorator line (`@J`, `@J(...)`), or 0 length. */
static size_t decorator_bare(const HostScan *h, const HostLine *L, size_t *len)
{
    size_t last = decorator_word(h, L, len);
    size_t from = host_skip_blank(h->text, L->start + 1, last);
    if (from != last)
        *len = 0;
    return last;
}

/* Is a decorator line triton's `kw` (`@triton.kw(...)`, `@kw`), for one
 * of the n words kw? A bare name bound to triton.jit is `jit`. */
static bool host_triton_decorator(const HostScan *h, const HostLine *L, const char *const *kw,
                                  int n)
{
    const char *t = h->text;
    size_t len, last = decorator_word(h, L, &len);
    /* the prefix: none (`from triton import jit`) or a name that stands for
     * triton or its language (`triton.`, `tl.`, `tt.` after `import triton
     * as tt`); `@numba.jit` or `@torch.jit.script` is someone else's */
    size_t from = L->start + 1;
    while (from < last && (t[from] == ' ' || t[from] == '\t'))
        from++;
    size_t plen = last - from;
    bool ours =
        plen == 0 || (plen >= 2 && t[last - 1] == '.' && host_in(&h->prefixes, t + from, plen - 1));
    for (int i = 0; ours && i < n; i++)
        if ((strlen(kw[i]) == len && memcmp(t + last, kw[i], len) == 0) ||
            (plen == 0 && strcmp(kw[i], "jit") == 0 && host_in(&h->jit_names, t + last, len)))
            return true;
    return false;
}

/* Does the bare name stand for triton.jit in h's file, or in the package
 * file it is imported from (`from .utils import jit_decorator`), a few
 * imports deep? */
static bool jit_alias(HostScan *h, const char *name, int depth)
{
    if (host_in(&h->jit_names, name, strlen(name)))
        return true;
    const char *there = NULL;
    HostScan *from = depth < 4 ? host_imported(h, name, &there) : NULL;
    return from && jit_alias(from, there, depth + 1);
}

void host_jit_aliases(HostScan *h)
{
    static const char *const ours[] = {"jit", "autotune", "heuristics"};
    for (int i = 0; i < h->nlines; i++) {
        const HostLine *L = &h->lines[i];
        size_t len, at = h->text[L->start] == '@' ? decorator_bare(h, L, &len) : 0;
        if (!at || len == 0)
            continue;
        bool known = false;
        for (int k = 0; k < TK_ARRAY_LEN(ours) && !known; k++)
            known = strlen(ours[k]) == len && memcmp(h->text + at, ours[k], len) == 0;
        const char *name = arena_strndup(h->lx->arena, h->text + at, len);
        if (!known && !host_in(&h->jit_names, name, len) && jit_alias(h, name, 0))
            vec_push(h->lx->arena, &h->jit_names, (void *)name);
    }
}

/* Is a decorator line one of triton's: `@triton.jit(...)`, `@jit`,
 * `@triton.autotune(...)`, `@triton.heuristics(...)`? */
bool host_jit_decorator(const HostScan *h, const HostLine *L)
{
    static const char *const kw[] = {"jit", "autotune", "heuristics"};
    return host_triton_decorator(h, L, kw, TK_ARRAY_LEN(kw));
}

/* Does the statement from line `first` open with decorators of which one
 * is @triton.constexpr_function or @tl.constexpr (Python a kernel may call
 * at compile time, which sema reads from the statement's lines; Triton's
 * constexpr calls the function it wraps on the unwrapped arguments)? */
bool host_constexpr_fn(const HostScan *h, int first, int last)
{
    static const char *const kw[] = {"constexpr_function", "constexpr"};
    for (int k = first; k <= last && h->text[h->lines[k].start] == '@'; k++)
        if (host_triton_decorator(h, &h->lines[k], kw, TK_ARRAY_LEN(kw)))
            return true;
    return false;
}

/* In a kernel's decorators, a comprehension (`configs=[triton.Config(...)
 * for w in (4, 8)]`) is host Python the grammar does not read: its
 * brackets' content becomes the name __host__, which the autotuner reads
 * as "configs given by the host". */
static void host_comprehensions(HostScan *h, const HostLine *L)
{
    char *t = h->text;
    size_t open[LEX_MAX_BRACKETS];
    int depth = 0, line = 0;
    for (size_t i = L->start; i < L->end;) {
        char c = t[i];
        if (c == '\'' || c == '"') {
            i = host_skip_string(t, L->end, i, &line);
            continue;
        }
        if (c == '#') { /* `# ... for unit tests`: a comment, not a comprehension */
            i = host_skip_comment(t, L->end, i);
            continue;
        }
        if ((c == '(' || c == '[' || c == '{') && depth < LEX_MAX_BRACKETS)
            open[depth++] = i;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            depth--;
        else if (host_is_id(c)) {
            size_t s = i;
            while (i < L->end && host_is_id(t[i]))
                i++;
            if (depth > 0 && i - s == 3 && memcmp(t + s, "for", 3) == 0 && t[s - 1] != '.') {
                size_t o = open[--depth];
                size_t close = host_match(t, L->end, o);
                host_blank(h, o + 1, close);
                if (close - o - 1 >= 8)
                    memcpy(t + o + 1, "__host__", 8);
                i = close + 1;
            }
            continue;
        }
        i++;
    }
}

/* A decorator tk does not know (`@libentry()`, `@torch.compile(...)`) is
 * ignored with a warning; its arguments are host Python, blanked so the
 * grammar never sees them. */
static void host_blank_args(HostScan *h, const HostLine *L)
{
    const char *t = h->text;
    for (size_t p = L->start; p < L->end; p++)
        if (t[p] == '(') {
            host_blank(h, p + 1, host_match(t, L->end, p));
            return;
        }
}

/* `**kwargs` and `*args` spread into @triton.autotune(...) carry the
 * autotuner's own options (cache_results, warmup, rep, restore_value, ...),
 * which cannot change what a config compiles to: they are blanked, with
 * the comma that joins them, so the grammar reads the rest of the call. */
static void host_blank_spreads(HostScan *h, const HostLine *L)
{
    char *t = h->text;
    size_t open = L->start;
    while (open < L->end && t[open] != '(')
        open++;
    if (open < L->start + 9 || memcmp(t + open - 8, "autotune", 8) != 0)
        return;
    size_t close = host_match(t, L->end, open);
    int depth = 0, line = 0;
    size_t arg = open + 1; /* where the current top-level argument starts */
    for (size_t i = open + 1; i < close; i++) {
        char c = t[i];
        if (c == '\'' || c == '"') {
            i = host_skip_string(t, close, i, &line) - 1;
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            depth--;
        } else if (c == ',' && depth == 0) {
            arg = i + 1;
        } else if (c == '*' && depth == 0 && host_skip_ws(t, arg, i) == i) {
            size_t e = i;
            while (e < close && t[e] != ',')
                e++; /* a spread's value holds no top-level comma here */
            host_blank(h, i, e < close ? e + 1 : e);
            i = e;
            arg = e + 1;
        }
    }
}

/* Spaces, line breaks and comments from t[p]; the index after them. */
static size_t skip_space(const char *t, size_t p, size_t end)
{
    while (p < end) {
        if (t[p] == '#')
            p = host_skip_comment(t, end, p);
        else if (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r' || t[p] == '\\')
            p++;
        else
            break;
    }
    return p;
}

/* The first `word` (a whole word) at the level of t[p] in [p, end), past
 * strings, comments and brackets; `end` for none. */
static size_t top_word(const char *t, size_t p, size_t end, const char *word)
{
    size_t n = strlen(word);
    int depth = 0, line = 0;
    while (p < end) {
        char c = t[p];
        if (c == '\'' || c == '"') {
            p = host_skip_string(t, end, p, &line);
        } else if (c == '#') {
            p = host_skip_comment(t, end, p);
        } else if (c == '(' || c == '[' || c == '{' || c == ')' || c == ']' || c == '}') {
            depth += c == '(' || c == '[' || c == '{' ? 1 : -1;
            p++;
        } else if (host_is_id(c)) {
            size_t s = p;
            while (p < end && host_is_id(t[p]))
                p++;
            if (depth == 0 && p - s == n && memcmp(t + s, word, n) == 0)
                return s;
        } else {
            p++;
        }
    }
    return end;
}

/* The end of the call argument starting at t[p]: the comma that ends it
 * at the call's level, or `close`. */
static size_t arg_end(const char *t, size_t p, size_t close)
{
    int depth = 0, line = 0;
    while (p < close) {
        char c = t[p];
        if (c == '\'' || c == '"') {
            p = host_skip_string(t, close, p, &line);
            continue;
        }
        if (c == '#') {
            p = host_skip_comment(t, close, p);
            continue;
        }
        if (c == ',' && depth == 0)
            return p;
        depth += c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
        p++;
    }
    return close;
}

/* Where the value of the argument at t[p] starts: after `name=` for a
 * keyword argument (*name and *len say which), else at p (*len = 0). */
static size_t arg_value(const char *t, size_t p, size_t end, size_t *name, size_t *len)
{
    p = skip_space(t, p, end);
    size_t s = p;
    while (p < end && host_is_id(t[p]))
        p++;
    size_t e = p;
    p = skip_space(t, p, end);
    *name = s;
    *len = 0;
    if (e == s || p + 1 >= end || t[p] != '=' || t[p + 1] == '=')
        return s;
    *len = e - s;
    return p + 1;
}

/* The parenthesis that opens the decorator's call, or L->end. */
static size_t call_open(const HostScan *h, const HostLine *L)
{
    size_t p = L->start;
    while (p < L->end && h->text[p] != '(')
        p++;
    return p;
}

/* Another library's autotune wraps triton.autotune with the same
 * arguments (`@my_autotune.autotune(configs=[triton.Config(...)],
 * key=[...])`, `@autotune(...)` imported from it): a call whose callee is
 * named autotune, under whatever module, that passes configs (by keyword,
 * or first) is read as triton's. One that does not is another
 * decorator's host Python. */
static bool host_tune_decorator(const HostScan *h, const HostLine *L)
{
    const char *t = h->text;
    size_t open = call_open(h, L), e = open;
    while (e > L->start && (t[e - 1] == ' ' || t[e - 1] == '\t'))
        e--;
    if (open == L->end || e < L->start + 9 || memcmp(t + e - 8, "autotune", 8) != 0 ||
        host_is_id(t[e - 9]))
        return false;
    size_t close = host_match(t, L->end, open);
    for (size_t p = open + 1; p < close; p = arg_end(t, p, close) + 1) {
        size_t name, len;
        arg_value(t, p, close, &name, &len);
        if ((len == 0 && p == open + 1 && skip_space(t, p, close) < close) ||
            (len == 7 && memcmp(t + name, "configs", 7) == 0))
            return true;
    }
    return false;
}

/* A conditional expression in [v, e) (`_A if IS_HOPPER else _B`, maybe in
 * parentheses, maybe chained): where front/host_cond.c decides the
 * condition, the arm not taken is blanked with the condition, so sema
 * reads the value Python passes. An undecided condition stays for sema,
 * which says so. */
static void host_pick_arm(HostScan *h, size_t v, size_t e)
{
    const char *t = h->text;
    v = skip_space(t, v, e);
    while (e > v && (t[e - 1] == ' ' || t[e - 1] == '\t' || t[e - 1] == '\n' || t[e - 1] == '\r'))
        e--;
    if (v < e && t[v] == '(' && host_match(t, e, v) == e - 1) {
        host_pick_arm(h, v + 1, e - 1);
        return;
    }
    size_t kif = top_word(t, v, e, "if");
    size_t kelse = kif < e ? top_word(t, kif + 2, e, "else") : e;
    if (kelse == e || top_word(t, v, kif, "lambda") < kif || top_word(t, v, e, "for") < e)
        return; /* no conditional, or one inside a lambda or a comprehension */
    HostCond c = host_cond_value(h, kif + 2, kelse);
    if (c == COND_TRUE) {
        host_blank(h, kif, e);
    } else if (c == COND_FALSE) {
        host_blank(h, v, kelse + 4);
        host_pick_arm(h, kelse + 4, e);
    }
}

/* Each argument of the decorator's call picks the arm of a conditional
 * tk decides. */
static void host_pick_arms(HostScan *h, const HostLine *L)
{
    const char *t = h->text;
    size_t open = call_open(h, L);
    if (open == L->end)
        return;
    size_t close = host_match(t, L->end, open);
    for (size_t p = open + 1; p < close;) {
        size_t e = arg_end(t, p, close), name, len;
        host_pick_arm(h, arg_value(t, p, e, &name, &len), e);
        p = e + 1;
    }
}

void host_decorator(HostScan *h, const HostLine *L)
{
    if (!host_jit_decorator(h, L) && !host_tune_decorator(h, L)) {
        host_blank_args(h, L);
    } else {
        host_blank_spreads(h, L);
        host_pick_arms(h, L);
    }
    host_comprehensions(h, L);
}
