/* host_branch.c: blocks of a module that run or not depending on whether
 * triton is there: `try: import triton ... except ImportError:`, `if
 * HAS_TRITON:`, `if triton is not None:` and their else branches, with the
 * kernels defined inside them as real libraries do. tk stands for triton,
 * so the branch that runs when the import succeeds is the one tk reads: its
 * statements are sorted as if they were at module level (front/host.c), its
 * lines are lifted (the scanner drops the block's indentation, LexLift),
 * and the other branches are host code whose names never hide the taken
 * branch's. Assumes front/host_lines.c cut the text; guarantees a block
 * whose branch is not known (any other condition) is left to host.c whole. */
#include <string.h>

#include "front/host.h"

enum { HOST_MAX_ARMS = 64 }; /* branches of one if/elif chain or try */

/* One branch: its header line (`try:`, `except ...:`, `elif ...:`) and
 * its body, lines [first, last]. */
typedef struct HostArm {
    int head, first, last;
} HostArm;

typedef enum { COND_UNKNOWN, COND_TRUE, COND_FALSE } HostCond;

static void host_name(HostScan *h, PtrVec *v, const char *s)
{
    if (s && !host_in(v, s, strlen(s)))
        vec_push(h->lx->arena, v, (void *)s);
}

void host_triton_names(HostScan *h)
{
    host_name(h, &h->prefixes, "triton");
    host_name(h, &h->prefixes, "tl");
    for (int i = 0; i < h->nlines; i++) {
        const HostLine *L = &h->lines[i];
        if (!host_starts(h, L, "import") && !host_starts(h, L, "from"))
            continue;
        PtrVec nodes = {0};
        host_import(h, L, NULL, false, &nodes);
        for (int k = 0; k < nodes.len; k++) {
            const Node *n = nodes.items[k];
            const char *bind = NULL;
            if (n->kind == N_IMPORT && strcmp(n->name, "triton") == 0)
                bind = n->alias ? n->alias : "triton";
            else if (n->kind == N_IMPORT && strcmp(n->name, "triton.language") == 0)
                bind = n->alias;
            else if (n->kind == N_FROM_IMPORT && strcmp(n->name, "triton") == 0 && n->str &&
                     strcmp(n->str, "language") == 0)
                bind = n->alias ? n->alias : "language";
            host_name(h, &h->prefixes, bind);
        }
    }
}

/* Does [s, s+len) occur in the line? */
static bool host_line_has(const HostScan *h, const HostLine *L, const char *s)
{
    size_t len = strlen(s);
    for (size_t p = L->start; p + len <= L->end; p++)
        if (memcmp(h->text + p, s, len) == 0)
            return true;
    return false;
}

/* The name a one-line `NAME = ...` assigns, or NULL. */
static const char *host_assigned(HostScan *h, const HostLine *L, size_t *value)
{
    size_t p = L->start;
    while (p < L->end && host_is_id(h->text[p]))
        p++;
    size_t end = p;
    while (p < L->end && (h->text[p] == ' ' || h->text[p] == '\t'))
        p++;
    if (end == L->start || p >= L->end || h->text[p] != '=' || (p + 1 < L->end && h->text[p + 1] == '='))
        return NULL;
    *value = host_skip_ws(h->text, p + 1, L->end);
    return arena_strndup(h->lx->arena, h->text + L->start, end - L->start);
}

void host_note_flag(HostScan *h, const HostLine *L)
{
    size_t v;
    const char *name = host_assigned(h, L, &v);
    if (name && host_line_has(h, L, "find_spec(") && host_line_has(h, L, "is not None") &&
        (host_line_has(h, L, "\"triton\"") || host_line_has(h, L, "'triton'")))
        host_name(h, &h->flags, name);
}

/* The words of an `if`/`elif` condition, up to its ':' (-1 when the
 * condition holds anything but names, `==`, `!=` and brackets, or when a
 * body follows the ':' on the same line). */
static int host_cond_words(const HostScan *h, const HostLine *L, size_t *at, size_t *len, int max)
{
    const char *t = h->text;
    size_t p = L->start + (host_starts(h, L, "elif") ? 4 : 2);
    int n = 0;
    while (p < L->end) {
        char c = t[p];
        if (c == ' ' || c == '\t' || c == '(' || c == ')' || c == '\\' || c == '\n' || c == '\r') {
            p++;
        } else if (c == ':') {
            p++;
            while (p < L->end && (t[p] == ' ' || t[p] == '\t' || t[p] == '\r'))
                p++;
            return p >= L->end || t[p] == '#' ? n : -1;
        } else if (n == max) {
            return -1;
        } else if (host_is_id(c)) {
            at[n] = p;
            while (p < L->end && host_is_id(t[p]))
                p++;
            len[n] = p - at[n];
            n++;
        } else if ((c == '=' || c == '!') && p + 1 < L->end && t[p + 1] == '=') {
            at[n] = p;
            len[n++] = 2;
            p += 2;
        } else {
            return -1;
        }
    }
    return -1;
}

static bool host_word(const HostScan *h, size_t at, size_t len, const char *w)
{
    return strlen(w) == len && memcmp(h->text + at, w, len) == 0;
}

/* One term, words [i, n): `[not] NAME [is [not] | == | != None|True|False]`
 * where NAME says that triton is there (a flag, or triton itself under any
 * of its names). */
static HostCond host_cond_term(const HostScan *h, const size_t *at, const size_t *len, int i, int n)
{
    bool neg = false;
    while (i < n && host_word(h, at[i], len[i], "not")) {
        neg = !neg;
        i++;
    }
    if (i >= n || !(host_in(&h->flags, h->text + at[i], len[i]) ||
                    host_in(&h->prefixes, h->text + at[i], len[i])))
        return COND_UNKNOWN;
    bool value = true;
    if (++i < n) {
        bool is = host_word(h, at[i], len[i], "is") || host_word(h, at[i], len[i], "==");
        if (!is && !host_word(h, at[i], len[i], "!="))
            return COND_UNKNOWN;
        neg ^= !is;
        if (host_word(h, at[i], len[i], "is") && i + 1 < n && host_word(h, at[i + 1], len[i + 1], "not")) {
            neg = !neg;
            i++;
        }
        if (++i != n - 1)
            return COND_UNKNOWN;
        if (host_word(h, at[i], len[i], "None") || host_word(h, at[i], len[i], "False"))
            value = false;
        else if (!host_word(h, at[i], len[i], "True"))
            return COND_UNKNOWN;
    }
    return value != neg ? COND_TRUE : COND_FALSE;
}

/* Terms joined by `and` in words [i, n), three-valued: one false term
 * makes it false whatever the unknown ones are. */
static HostCond host_cond_and(const HostScan *h, const size_t *at, const size_t *len, int i, int n)
{
    bool unknown = false;
    for (int s = i; s <= n; s++) {
        if (s < n && !host_word(h, at[s], len[s], "and"))
            continue;
        HostCond c = host_cond_term(h, at, len, i, s);
        if (c == COND_FALSE)
            return COND_FALSE;
        unknown |= c == COND_UNKNOWN;
        i = s + 1;
    }
    return unknown ? COND_UNKNOWN : COND_TRUE;
}

/* `and` groups joined by `or`: one true group makes it true. */
static HostCond host_cond_or(const HostScan *h, const size_t *at, const size_t *len, int n)
{
    bool unknown = false;
    for (int s = 0, i = 0; s <= n; s++) {
        if (s < n && !host_word(h, at[s], len[s], "or"))
            continue;
        HostCond c = host_cond_and(h, at, len, i, s);
        if (c == COND_TRUE)
            return COND_TRUE;
        unknown |= c == COND_UNKNOWN;
        i = s + 1;
    }
    return unknown ? COND_UNKNOWN : COND_FALSE;
}

/* The value of an `if`/`elif` condition that only asks whether triton is
 * there: `HAS_TRITON`, `not HAS_TRITON`, `triton is not None`, `tl is None`,
 * `HAS_TRITON is True`, and those joined by `and`/`or`; anything else is
 * unknown. */
static HostCond host_cond(const HostScan *h, const HostLine *L)
{
    size_t at[16], len[16];
    int n = host_cond_words(h, L, at, len, 16);
    return n > 0 ? host_cond_or(h, at, len, n) : COND_UNKNOWN;
}

/* The branches of the statement [first, last]; -1 when one has its body
 * on its header line or there are too many. */
static int host_arms(const HostScan *h, int first, int last, HostArm *arms)
{
    int base = h->lines[first].indent, n = 0;
    for (int k = first; k <= last; k++) {
        if (h->lines[k].indent != base)
            continue;
        if (n == HOST_MAX_ARMS)
            return -1;
        arms[n++] = (HostArm){k, k + 1, last};
        if (n > 1)
            arms[n - 2].last = k - 1;
    }
    for (int i = 0; i < n; i++)
        if (arms[i].first > arms[i].last)
            return -1;
    return n;
}

static bool host_has_jit(const HostScan *h, const HostArm *a)
{
    for (int k = a->first; k <= a->last; k++)
        if (h->text[h->lines[k].start] == '@' && host_jit_decorator(h, &h->lines[k]))
            return true;
    return false;
}

/* Does the branch import something tk reads (triton, its language, math)? */
static bool host_imports_tk(HostScan *h, const HostArm *a)
{
    for (int k = a->first; k <= a->last; k++) {
        const HostLine *L = &h->lines[k];
        if ((host_starts(h, L, "import") || host_starts(h, L, "from")) &&
            host_import(h, L, NULL, false, NULL))
            return true;
    }
    return false;
}

/* The branch that runs when triton is there, or -1 when that is not known:
 * a try's body when it defines kernels or imports triton (else the first
 * except branch that imports it); the first if/elif whose condition is
 * true, past false ones, or the else. */
static int host_taken(HostScan *h, const HostArm *arms, int n)
{
    if (host_starts(h, &h->lines[arms[0].head], "try")) {
        if (host_has_jit(h, &arms[0]) || host_imports_tk(h, &arms[0]))
            return 0;
        for (int i = 1; i < n; i++)
            if (host_starts(h, &h->lines[arms[i].head], "except") && host_imports_tk(h, &arms[i]))
                return i;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const HostLine *L = &h->lines[arms[i].head];
        if (host_starts(h, L, "else"))
            return i;
        HostCond c = host_cond(h, L);
        if (c == COND_TRUE)
            return i;
        if (c == COND_UNKNOWN)
            return -1;
    }
    return -1;
}

/* `HAS_TRITON = True` in a try body that runs: a flag `if` may test. */
static void host_note_true_flags(HostScan *h, const HostArm *a)
{
    int indent = h->lines[a->first].indent;
    for (int k = a->first; k <= a->last; k++) {
        size_t v;
        const HostLine *L = &h->lines[k];
        const char *name = L->indent == indent ? host_assigned(h, L, &v) : NULL;
        if (name && L->end - v >= 4 && memcmp(h->text + v, "True", 4) == 0 &&
            (L->end - v == 4 || !host_is_id(h->text[v + 4])))
            host_name(h, &h->flags, name);
    }
}

/* The scanner reads the branch's lines as module-level ones. */
static void host_lift(HostScan *h, const HostArm *a)
{
    const HostLine *F = &h->lines[a->first];
    LexLift *r = arena_alloc(h->lx->arena, sizeof *r);
    const char *ws = arena_strndup(h->lx->arena, h->text + F->start - F->indent, (size_t)F->indent);
    if (!r || !ws)
        return;
    *r = (LexLift){F->line, h->lines[a->last].end_line, ws, F->indent};
    vec_push(h->lx->arena, &h->lx->lifts, r);
}

bool host_branch(HostScan *h, int first, int last)
{
    HostArm arms[HOST_MAX_ARMS];
    if (h->depth >= LEX_MAX_INDENT)
        return false; /* deeper than the scanner reads; host code, no deep recursion */
    int n = host_arms(h, first, last, arms);
    int taken = n > 0 ? host_taken(h, arms, n) : -1;
    if (taken < 0)
        return false;
    const HostArm *t = &arms[taken];
    PtrVec saved = h->bound;
    h->bound = (PtrVec){0};
    Node *names = parse_node(h->lx, N_HOST, (Span){0});
    if (!names)
        return false;
    host_bind_block(h, names, t->first, t->last);
    PtrVec taken_names = h->bound;
    h->bound = saved;
    if (host_starts(h, &h->lines[arms[0].head], "try") && taken == 0)
        host_note_true_flags(h, t);
    for (int i = 0; i < n; i++) {
        if (i != taken) {
            host_statement(h, arms[i].head, arms[i].last, arms[i].first, &taken_names);
            continue;
        }
        host_blank(h, h->lines[t->head].start, h->lines[t->head].end);
        host_lift(h, t);
        h->depth++;
        host_block(h, t->first, t->last, h->lines[t->first].indent);
        h->depth--;
    }
    return true;
}
