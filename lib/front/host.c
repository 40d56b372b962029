/* host.c: splits a Python module into the TK language and host code before
 * the scanner runs. Top-level statements are found by structure alone
 * (front/host_lines.c); the @jit functions, triton/math imports and simple
 * constants are kept (also inside a block front/host_branch.c lifts), every
 * other statement becomes an N_HOST node naming what it binds and is blanked
 * out of the scanner's copy (newlines kept, so every position stays exact).
 * Guarantees: never an error; a file with no jit decorator and no jit(...)
 * call is left as it is (the grammar's own tests), unless it is a package
 * file another module imports. */
#include <string.h>

#include "front/host.h"

static bool host_known(const HostScan *h, const char *s, size_t len)
{
    return namemap_getn(&h->known, s, len) >= 0;
}

bool host_bound_before(const HostScan *h, const char *name)
{
    if (host_known(h, name, strlen(name)) || namemap_get(&h->values, name) >= 0 ||
        namemap_get(&h->helpers, name) >= 0)
        return true;
    for (int i = 0; i < h->hosts.len; i++) {
        const Node *host = h->hosts.items[i];
        for (int k = 0; k < host->list.len; k++)
            if (strcmp(host->list.items[k]->name, name) == 0)
                return true;
    }
    return false;
}

static void host_know(HostScan *h, const char *s, size_t len)
{
    if (!host_known(h, s, len))
        namemap_put(h->lx->arena, &h->known, arena_strndup(h->lx->arena, s, len), 1);
}

static void host_bind(HostScan *h, const HostLine *L, size_t at, size_t len)
{
    Node *name = parse_node(h->lx, N_NAME, host_span_at(h, L, at, len));
    if (!name)
        return;
    name->name = arena_strndup(h->lx->arena, h->text + at, len);
    vec_push(h->lx->arena, &h->bound, name);
}


/* A module tk reads itself: triton's language and math. */
static bool host_tk_module(const char *s, size_t len)
{
    static const char *const mods[] = {"triton", "triton.language", "math"};
    for (int i = 0; i < TK_ARRAY_LEN(mods); i++)
        if (strlen(mods[i]) == len && memcmp(mods[i], s, len) == 0)
            return true;
    return len > 16 && memcmp(s, "triton.language.", 16) == 0;
}

/* `import torch` and `import importlib[.util]`: sema reads torch's dtypes,
 * finfo, iinfo and version.hip, and importlib as helpers use it to find
 * triton's modules (not `from torch import ...`, whose names are host's). */
static bool host_read_module(const char *s, size_t len)
{
    static const char *const mods[] = {"torch", "importlib", "importlib.util"};
    for (int i = 0; i < TK_ARRAY_LEN(mods); i++)
        if (strlen(mods[i]) == len && memcmp(mods[i], s, len) == 0)
            return true;
    return false;
}

/* `from m import *` as the node sema binds m's public names from. */
static Node *star_import(HostScan *h, const HostLine *L, const char *module, size_t at)
{
    Node *n = parse_node(h->lx, N_FROM_IMPORT, host_span_at(h, L, at, 1));
    n->name = module;
    n->str = "*";
    return n;
}

/* The names an import binds: `import a.b` binds a, `as x` binds x,
 * `from m import a, b as c` binds a and c; they go to the host statement
 * `bind`, or with `know` to the names kept code may use. Returns whether
 * every module is one tk reads. */
bool host_import(HostScan *h, const HostLine *L, Node *bind, bool know, PtrVec *nodes)
{
    const char *t = h->text;
    size_t p = L->start, end = L->end;
    for (size_t c = p; c < end; c++)
        if (t[c] == '#') { /* an import holds no string: a comment ends it */
            end = c;
            break;
        }
    bool from = host_starts(h, L, "from");
    p += from ? 4 : 6;
    p = host_skip_ws(t, p, end);
    bool ok = true;
    const char *module = NULL;
    if (from) {
        size_t m = p;
        p = host_dotted(t, p, end);
        module = arena_strndup(h->lx->arena, t + m, p - m);
        ok = p > m && t[m] != '.' && host_tk_module(t + m, p - m);
        p = host_skip_ws(t, p, end);
        if (p + 6 <= end && memcmp(t + p, "import", 6) == 0)
            p += 6;
    }
    while (p < end) {
        p = host_skip_ws(t, p, end);
        size_t m = p;
        p = host_dotted(t, p, end);
        if (p == m) {
            if (p < end && t[p] != '*')
                ok = false;                    /* ';' or anything else: not a plain import */
            else if (p < end && from && nodes) /* a package file's names, all of them */
                vec_push(h->lx->arena, nodes, star_import(h, L, module, p));
            p++;
            continue;
        }
        /* `import torch` too: sema reads its dtypes, finfo, iinfo and
         * version.hip (not `from torch import ...`, whose names are host's) */
        if (!from && !host_tk_module(t + m, p - m) && !host_read_module(t + m, p - m))
            ok = false;
        size_t bs = m, bl = p - m;
        if (!from) {
            bl = 0;
            while (bl < p - m && t[m + bl] != '.')
                bl++;
        }
        size_t q = host_skip_ws(t, p, end);
        if (q + 2 <= end && memcmp(t + q, "as", 2) == 0 &&
            (q + 2 == end || !host_is_id(t[q + 2]))) {
            q = host_skip_ws(t, q + 2, end);
            bs = q;
            while (q < end && host_is_id(t[q]))
                q++;
            bl = q - bs;
            p = q;
        }
        if (bl == 0)
            continue;
        if (nodes) {
            Node *n = parse_node(h->lx, from ? N_FROM_IMPORT : N_IMPORT,
                                 know ? host_span_at(h, L, L->start, (size_t)(p - L->start))
                                      : host_span_at(h, L, m, (size_t)(p - m)));
            n->span.end_line = n->span.line;
            const char *what =
                arena_strndup(h->lx->arena, t + m, (size_t)(host_dotted(t, m, end) - m));
            n->name = from ? module : what;
            n->str = from ? what : NULL;
            if (bs != m)
                n->alias = arena_strndup(h->lx->arena, t + bs, bl);
            vec_push(h->lx->arena, nodes, n);
        }
        if (bind)
            host_bind(h, L, bs, bl);
        else if (know)
            host_know(h, t + bs, bl);
    }
    return ok;
}

/* Where the first top-level '=' of an assignment is (not '==', '<=', ...,
 * not inside brackets), or 0 when the line is no assignment. */
static size_t host_assign_eq(const HostScan *h, const HostLine *L, size_t from)
{
    const char *t = h->text;
    int depth = 0;
    int line = 0;
    for (size_t i = from; i < L->end; i++) {
        char c = t[i];
        if (c == '\'' || c == '"') {
            i = host_skip_string(t, L->end, i, &line) - 1;
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if (c == ')' || c == ']' || c == '}')
            depth--;
        else if (c == '=' && depth == 0) {
            char prev = i > from ? t[i - 1] : ' ';
            if (strchr("=!<>+-*/%&|^@:", prev) || (i + 1 < L->end && t[i + 1] == '='))
                return 0;
            return i;
        }
    }
    return 0;
}

/* Binds the plain names among assignment targets in [p, end): `a, (b, *c)`
 * binds a, b and c; `x.y` and `x[i]` bind nothing; `: annotation` ends. */
static void host_bind_targets(HostScan *h, Node *host, const HostLine *L, size_t p, size_t end)
{
    const char *t = h->text;
    int line = 0;
    while (p < end) {
        char c = t[p];
        if (c == ':')
            return;
        if (c == '\'' || c == '"') {
            p = host_skip_string(t, end, p, &line);
            continue;
        }
        if (host_is_id(c) && !(c >= '0' && c <= '9')) {
            size_t s = p;
            while (p < end && host_is_id(t[p]))
                p++;
            size_t q = p;
            while (q < end && (t[q] == ' ' || t[q] == '\t'))
                q++;
            bool before_dot = s > 0 && t[s - 1] == '.';
            if (!before_dot &&
                (q >= end || t[q] == ',' || t[q] == ')' || t[q] == ']' || t[q] == ':'))
                host_bind(h, L, s, p - s);
            continue;
        }
        p++;
    }
}

/* Binds the names of every top-level '=' target of one line. */
static void host_bind_assign(HostScan *h, Node *host, const HostLine *L, size_t from)
{
    size_t p = from;
    for (;;) {
        size_t eq = host_assign_eq(h, L, p);
        if (!eq) {
            /* `x: int` with no value binds x too */
            if (p == from && host_is_id(h->text[p])) {
                size_t q = p;
                while (q < L->end && host_is_id(h->text[q]))
                    q++;
                while (q < L->end && h->text[q] == ' ')
                    q++;
                if (q < L->end && h->text[q] == ':')
                    host_bind(h, L, p, q - p);
            }
            return;
        }
        host_bind_targets(h, host, L, p, eq);
        p = eq + 1;
    }
}

/* Whether `name` is bound by a top-level `from M import ...` (another file
 * of the package, whose names sema finds when it binds the import). */
static bool host_from_imported(const HostScan *h, const char *s, size_t len)
{
    for (int i = 0; i < h->imports.len; i++) {
        const Node *n = h->imports.items[i];
        const char *b = n->alias ? n->alias : n->str;
        if (b && strlen(b) == len && memcmp(b, s, len) == 0)
            return true;
    }
    return false;
}

/* Is the right-hand side of a module constant something tk can evaluate:
 * literals, operators and calls on names the kept code binds, and nothing
 * only Python can run (comprehensions, lambdas, f-strings, walrus)? */
static bool host_tk_value(HostScan *h, const HostLine *L, size_t p)
{
    const char *t = h->text;
    static const char *const ok_words[] = {"True", "False", "None",  "and", "or",  "not",
                                           "if",   "else",  "in",    "is",  "min", "max",
                                           "abs",  "int",   "float", "bool"};
    int line = 0;
    size_t v = p;
    while (v < L->end && (t[v] == ' ' || t[v] == '\t'))
        v++;
    if (v < L->end && t[v] == '{')
        return false; /* a dict: only decorators take those */
    while (p < L->end) {
        char c = t[p];
        if (c == '\'' || c == '"') {
            p = host_skip_string(t, L->end, p, &line);
            continue;
        }
        if (c == ':' && p + 1 < L->end && t[p + 1] == '=')
            return false;
        if (host_is_id(c) && !(c >= '0' && c <= '9') && !(p > 0 && t[p - 1] == '.')) {
            size_t s = p;
            while (p < L->end && host_is_id(t[p]))
                p++;
            if (p < L->end && (t[p] == '\'' || t[p] == '"'))
                return false; /* f"", b"", rb"": host strings */
            size_t q = p;
            while (q < L->end && t[q] == ' ')
                q++;
            if (q < L->end && t[q] == '=' && (q + 1 >= L->end || t[q + 1] != '='))
                continue; /* keyword argument */
            bool ok = host_known(h, t + s, p - s) ||
                namemap_getn(&h->host_fns, t + s, p - s) >= 0 ||
                host_from_imported(h, t + s, p - s);
            for (int i = 0; !ok && i < TK_ARRAY_LEN(ok_words); i++)
                ok = strlen(ok_words[i]) == p - s && memcmp(ok_words[i], t + s, p - s) == 0;
            if (!ok)
                return false;
            continue;
        }
        if (host_is_id(c)) {
            while (p < L->end && (host_is_id(t[p]) || t[p] == '.'))
                p++;
            continue;
        }
        p++;
    }
    return true;
}

/* Does a line call triton.jit (`f = triton.jit(f)`)? */
static bool host_mentions_jit(const HostScan *h, const HostLine *L)
{
    for (size_t p = L->start; p + 4 <= L->end; p++)
        if (memcmp(h->text + p, "jit(", 4) == 0 && (p == L->start || !host_is_id(h->text[p - 1])))
            return true;
    return false;
}

/* The name after `def`/`class` on a line. */
static size_t host_def_name(const HostScan *h, const HostLine *L, size_t *len)
{
    const char *t = h->text;
    size_t p = L->start;
    if (host_starts(h, L, "async"))
        p += 5;
    while (p < L->end && (t[p] == ' ' || t[p] == '\t'))
        p++;
    while (p < L->end && host_is_id(t[p]))
        p++;
    while (p < L->end && (t[p] == ' ' || t[p] == '\t'))
        p++;
    size_t s = p;
    while (p < L->end && host_is_id(t[p]))
        p++;
    *len = p - s;
    return s;
}

/* The name a wrapping call wraps, the last one of the line when only
 * closing parentheses follow it (`kern = triton.jit(_impl)` gives _impl);
 * NULL for none. */
static const char *host_wrapped_name(const HostScan *h, const HostLine *L, size_t *len)
{
    const char *t = h->text;
    size_t e = L->end;
    while (e > L->start && (t[e - 1] == ')' || t[e - 1] == ' ' || t[e - 1] == '\t'))
        e--;
    size_t s = e;
    while (s > L->start && host_is_id(t[s - 1]))
        s--;
    *len = e - s;
    return e > s && memchr(t + e, ')', L->end - e) ? t + s : NULL;
}

/* `f = triton.jit(f)`, `f = triton.heuristics({...})(f)`, `kern =
 * triton.jit(_impl)`: a line that wraps the function named `name` in a jit
 * decorator (under its own name, or bound to another). */
static bool host_wraps(const HostScan *h, const HostLine *L, const char *name, size_t nlen,
                       int indent)
{
    const char *t = h->text;
    size_t eq = L->indent == indent ? host_assign_eq(h, L, L->start) : 0;
    if (!eq)
        return false;
    bool own = L->end - L->start > nlen && memcmp(t + L->start, name, nlen) == 0 &&
        !host_is_id(t[L->start + nlen]);
    bool jit = false, self = false, called = false;
    for (size_t p = eq + 1; p < L->end;) {
        if (!host_is_id(t[p])) {
            p++;
            continue;
        }
        size_t s = p;
        while (p < L->end && host_is_id(t[p]))
            p++;
        if (p - s == nlen && memcmp(t + s, name, nlen) == 0)
            self = true;
        bool word = (p - s == 3 && !memcmp(t + s, "jit", 3)) ||
            (p - s == 8 && !memcmp(t + s, "autotune", 8)) ||
            (p - s == 10 && !memcmp(t + s, "heuristics", 10));
        jit |= word;
        /* triton's own: `jit(`, `triton.jit(`, not `torch.jit.script(` */
        size_t q = s;
        while (q > eq + 1 && (host_is_id(t[q - 1]) || t[q - 1] == '.'))
            q--;
        called |= word && p < L->end && t[p] == '(' &&
            (q == s || (t[s - 1] == '.' && host_in(&h->prefixes, t + q, s - 1 - q)));
    }
    size_t wlen;
    const char *wrapped = host_wrapped_name(h, L, &wlen);
    /* under another name only as the innermost argument of triton's call:
     * `kern = triton.jit(_impl)` */
    bool inner = called && wrapped && wlen == nlen && memcmp(wrapped, name, nlen) == 0;
    return own ? jit && self : inner;
}


/* Binds what the statements inside a host compound statement bind at
 * module level (imports, defs, classes, assignments), skipping the bodies
 * of nested defs and classes. */
void host_bind_block(HostScan *h, Node *host, int first, int last)
{
    int skip_deeper = -1;
    for (int k = first; k <= last; k++) {
        const HostLine *L = &h->lines[k];
        if (skip_deeper >= 0 && L->indent > skip_deeper)
            continue;
        skip_deeper = -1;
        if (host_starts(h, L, "import") || host_starts(h, L, "from")) {
            host_import(h, L, host, false, NULL);
        } else if (host_starts(h, L, "def") || host_starts(h, L, "class") ||
                   host_starts(h, L, "async")) {
            size_t len, s = host_def_name(h, L, &len);
            if (len)
                host_bind(h, L, s, len);
            skip_deeper = L->indent;
        } else if (host_starts(h, L, "for")) {
            size_t in = L->start + 3;
            while (in + 2 < L->end &&
                   !(h->text[in] == ' ' && h->text[in + 1] == 'i' && h->text[in + 2] == 'n' &&
                     h->text[in + 3] == ' '))
                in++;
            host_bind_targets(h, host, L, L->start + 3, in);
        } else if (L->line == h->lines[first].line || host_starts(h, L, "if") ||
                   host_starts(h, L, "elif") || host_starts(h, L, "else") ||
                   host_starts(h, L, "try") || host_starts(h, L, "except") ||
                   host_starts(h, L, "finally") || host_starts(h, L, "with") ||
                   host_starts(h, L, "while") || host_starts(h, L, "return") ||
                   h->text[L->start] == '@') {
            if (k == first && !host_starts(h, L, "if") && !host_starts(h, L, "try") &&
                !host_starts(h, L, "with") && !host_starts(h, L, "while") &&
                h->text[L->start] != '@')
                host_bind_assign(h, host, L, L->start);
        } else {
            host_bind_assign(h, host, L, L->start);
        }
    }
}


typedef enum { HOST_KEEP, HOST_SKIP } HostWhat;

/* The host statement just made depends on a condition tk could not
 * decide: its node keeps the condition (an N_NAME spelling it, at its
 * place), which the error of a kernel using one of its names shows. */
void host_note_undecided(HostScan *h, const HostUndecided *u)
{
    Node *host = h->hosts.len ? h->hosts.items[h->hosts.len - 1] : NULL;
    Node *cond =
        u->line ? parse_node(h->lx, N_NAME, host_span_at(h, u->line, u->at, u->len)) : NULL;
    if (!host || !cond)
        return;
    cond->name = u->text;
    host->a = cond;
}

/* The statement starting at line i of a block whose statements sit at
 * indentation `base`: its decorators, the line with its keyword (*head),
 * then every deeper line or else/elif/except/finally that continues it.
 * Returns its last line. */
static int host_extent(const HostScan *h, int i, int last, int base, int *head)
{
    int k = i;
    while (k < last && h->text[h->lines[k].start] == '@' && h->lines[k].indent == base)
        k++;
    *head = k;
    while (k + 1 <= last) {
        const HostLine *N = &h->lines[k + 1];
        if (N->indent <= base && !host_starts(h, N, "else") && !host_starts(h, N, "elif") &&
            !host_starts(h, N, "except") && !host_starts(h, N, "finally"))
            break;
        k++;
    }
    return k;
}

/* Is the value an attribute of a name such an import binds (`rsqrt =
 * shim.rsqrt`, shim imported from the package's utilities)? Kept as a
 * constant: sema reads the attribute where the import leads, and where
 * that is host code says so where a kernel uses the name. */
static bool host_import_attr(const HostScan *h, const HostLine *L, size_t p)
{
    const char *t = h->text;
    p = host_skip_ws(t, p, L->end);
    size_t s = p;
    while (p < L->end && host_is_id(t[p]))
        p++;
    if (p == s || (t[s] >= '0' && t[s] <= '9') || !host_from_imported(h, t + s, p - s))
        return false;
    int parts = 0;
    while (p < L->end && t[p] == '.') {
        size_t q = ++p;
        while (p < L->end && host_is_id(t[p]))
            p++;
        if (p == q)
            return false;
        parts++;
    }
    p = host_skip_ws(t, p, L->end);
    return parts > 0 && (p == L->end || t[p] == '#');
}

/* A one-line module constant `NAME = value` (or `NAME: annot = value`)
 * whose value tk can evaluate, or that wraps a def in triton.jit. */
static bool host_constant(HostScan *h, const HostLine *L)
{
    size_t eq = host_assign_eq(h, L, L->start);
    size_t p = L->start;
    while (p < L->end && host_is_id(h->text[p]))
        p++;
    size_t name_end = p;
    while (p < L->end && (h->text[p] == ' ' || h->text[p] == '\t'))
        p++;
    bool simple = eq && (p == eq || h->text[p] == ':');
    size_t wlen;
    const char *wrapped = simple ? host_wrapped_name(h, L, &wlen) : NULL;
    if (!simple ||
        !(host_tk_value(h, L, eq + 1) || host_import_attr(h, L, eq + 1) ||
          host_wraps(h, L, h->text + L->start, name_end - L->start, L->indent) ||
          (wrapped && host_known(h, wrapped, wlen) && host_wraps(h, L, wrapped, wlen, L->indent))))
        return false;
    host_know(h, h->text + L->start, name_end - L->start);
    return true;
}

/* Whether the statement [first, last] (its keyword on line `head`) is kept
 * for the scanner; notes the names kept code binds. */
static HostWhat host_sort(HostScan *h, int first, int head, int last, int base)
{
    const HostLine *L = &h->lines[head];
    bool jit = false;
    for (int k = first; k < head; k++)
        jit |= host_jit_decorator(h, &h->lines[k]);
    if (h->lines[first].indent != base || (jit && !host_starts(h, L, "def")))
        return HOST_KEEP; /* the scanner reports the indentation or the decorator */
    if (host_starts(h, L, "def")) {
        size_t len, s = host_def_name(h, L, &len);
        for (int k = 0; !jit && k < h->wraps.len; k++)
            jit = ((HostLine *)h->wraps.items[k])->line > L->line &&
                host_wraps(h, h->wraps.items[k], h->text + s, len, L->indent);
        if (!jit) {
            if (first == head && base == 0 && h->depth == 0)
                namemap_put(h->lx->arena, &h->host_fns,
                            arena_strndup(h->lx->arena, h->text + s, len), 1);
            return HOST_SKIP;
        }
        host_know(h, h->text + s, len);
        return HOST_KEEP;
    }
    if (host_starts(h, L, "import") || host_starts(h, L, "from")) {
        if (first != last || !host_import(h, L, NULL, false, NULL))
            return HOST_SKIP;
        host_import(h, L, NULL, true, NULL);
        return HOST_KEEP;
    }
    static const char *const host_words[] = {"class", "global", "del", "assert", "raise", "print",
                                             "if",    "try",    "for", "while",  "with",  "async"};
    if (first != last || !host_is_id(h->text[L->start]))
        return HOST_SKIP;
    for (int i = 0; i < TK_ARRAY_LEN(host_words); i++)
        if (host_starts(h, L, host_words[i]))
            return HOST_SKIP;
    host_note_flag(h, L);
    return host_constant(h, L) ? HOST_KEEP : HOST_SKIP;
}

void host_statement(HostScan *h, int first, int last, int bind_first, const PtrVec *except)
{
    LexState *lx = h->lx;
    Node *host =
        parse_node(lx, N_HOST, (Span){h->lines[first].line, 1, h->lines[last].end_line, 1, 0});
    if (!host)
        return;
    h->bound = (PtrVec){0};
    if (bind_first <= last)
        host_bind_block(h, host, bind_first, last);
    int kept = 0;
    for (int i = 0; i < h->bound.len; i++) {
        const Node *b = h->bound.items[i];
        bool drop = false;
        for (int k = 0; except && k < except->len && !drop; k++)
            drop = strcmp(((const Node *)except->items[k])->name, b->name) == 0;
        if (!drop)
            h->bound.items[kept++] = h->bound.items[i];
    }
    h->bound.len = kept;
    for (int i = 0; i < kept; i++)
        host_forget(h, ((const Node *)h->bound.items[i])->name);
    host->list = parse_list(lx, h->bound);
    if (host_constexpr_fn(h, first, last) && kept == 1)
        host->flags |= NF_CONSTEXPR_FN;
    else if (kept == 1 && host_starts(h, &h->lines[first], "def") &&
             namemap_get(&h->host_fns, ((const Node *)h->bound.items[0])->name) >= 0)
        host->flags |= NF_HOST_FN;
    const HostLine *L = &h->lines[first];
    if (first == last && (host_starts(h, L, "import") || host_starts(h, L, "from"))) {
        /* kept as nodes too: the import may name another file of the
         * package, which front/package.c reads */
        PtrVec imports = {0};
        host_import(h, L, NULL, false, &imports);
        host->list2 = parse_list(lx, imports);
    }
    host_blank(h, h->lines[first].start, h->lines[last].end);
    vec_push(lx->arena, &h->hosts, host);
}

void host_block(HostScan *h, int first, int last, int base)
{
    for (int i = first; i <= last;) {
        int head, end = host_extent(h, i, last, base, &head);
        int from = i;
        i = end + 1;
        if (host_sort(h, from, head, end, base) == HOST_KEEP) {
            if (from == end) /* a constant tk keeps may decide a condition too */
                host_keep_value(h, host_read_value(h, from, end));
            for (int k = from; k < head; k++)
                host_decorator(h, &h->lines[k]);
            continue;
        }
        const HostLine *L = &h->lines[head];
        h->undecided.line = NULL;
        if (from == head && (host_starts(h, L, "try") || host_starts(h, L, "if")) &&
            host_branch(h, from, end))
            continue;
        HostNote note = host_read_value(h, from, end);
        host_statement(h, from, end, from, NULL);
        if (h->undecided.line)
            host_note_undecided(h, &h->undecided);
        else
            host_keep_value(h, note);
    }
}

/* Does the file hold a kernel: a triton decorator at module level or in a
 * top-level `if`/`try` block, or a jit(...) call at module level? */
static bool host_has_kernels(HostScan *h)
{
    bool kernels = false, in_block = false;
    for (int i = 0; i < h->nlines; i++) {
        const HostLine *L = &h->lines[i];
        if (L->indent == 0)
            in_block = host_starts(h, L, "if") || host_starts(h, L, "try") ||
                host_starts(h, L, "else") || host_starts(h, L, "elif") ||
                host_starts(h, L, "except");
        if (L->indent != 0 && !in_block)
            continue;
        if (h->text[L->start] == '@') {
            kernels |= host_jit_decorator(h, L);
        } else if (host_mentions_jit(h, L)) {
            kernels = true;
            vec_push(h->lx->arena, &h->wraps, (void *)L);
        }
    }
    return kernels;
}

void host_split(LexState *lx, char *text, size_t n)
{
    HostScan h = {.lx = lx, .text = text, .n = n, .path = lx->src ? lx->src->name : NULL};
    host_lines(&h);
    host_triton_names(&h);
    host_note_imports(&h);
    host_jit_aliases(&h);
    lx->jit_names = h.jit_names;
    /* A file with no kernel is no Python module with kernels in it (the
     * grammar's own tests): it is read whole, as before. */
    if (!host_has_kernels(&h) && !lx->python)
        return;
    host_know(&h, "tl", 2);
    host_know(&h, "triton", 6);
    host_know(&h, "math", 4);
    sb_init(&h.env_reads);
    host_block(&h, 0, h.nlines - 1, 0);
    lx->hosts = h.hosts;
    if (h.env_reads.len)
        lx->env_reads = arena_strndup(lx->arena, h.env_reads.data, h.env_reads.len);
    sb_free(&h.env_reads);
}

/* The decorators a wrapping call spells, outermost first, and the name it
 * wraps: `triton.autotune(...)(triton.jit(f))` gives autotune(...),
 * triton.jit and f. */
static Node *host_wrap_chain(LexState *lx, Node *v, PtrVec *decs)
{
    if (v->kind == N_NAME)
        return v;
    if (v->kind != N_CALL || v->list.len != 1 || v->list2.len != 0)
        return NULL;
    vec_push(lx->arena, decs, v->a);
    return host_wrap_chain(lx, v->list.items[0], decs);
}

/* `f = triton.jit(f)` decorates def f; `kern = triton.jit(_impl)` decorates
 * def _impl too (Triton names the kernel after the function, _impl) and
 * becomes `kern = _impl`, so kern names the kernel as in Python. */
void host_attach_wrappers(LexState *lx, Node *module)
{
    PtrVec kept = {0};
    bool changed = false;
    for (int i = 0; i < module->list.len; i++) {
        Node *n = module->list.items[i];
        PtrVec decs = {0};
        Node *fn = NULL;
        Node *inner = n->kind == N_ASSIGN && n->list.len == 1 && n->list.items[0]->kind == N_NAME &&
                n->a->kind == N_CALL
            ? host_wrap_chain(lx, n->a, &decs)
            : NULL;
        for (int k = 0; inner && k < i && !fn; k++) {
            Node *f = module->list.items[k];
            if (f->kind == N_FUNC && strcmp(f->name, inner->name) == 0)
                fn = f;
        }
        if (fn) {
            /* the wrappers are outside the decorators the def already has */
            for (int k = 0; k < fn->list2.len; k++)
                vec_push(lx->arena, &decs, fn->list2.items[k]);
            fn->list2 = parse_list(lx, decs);
            changed = true;
        }
        if (fn && strcmp(inner->name, n->list.items[0]->name) != 0)
            n->a = inner; /* an alias of the kernel */
        if (!fn || n->a == inner)
            vec_push(lx->arena, &kept, n);
    }
    if (changed)
        module->list = parse_list(lx, kept);
}
