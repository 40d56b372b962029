/* host_branch.c: blocks of a module that run or not depending on whether
 * triton is there: `try: import triton ... except ImportError:`, `if
 * HAS_TRITON:`, `if triton is not None:` and their else branches, with the
 * kernels defined inside them as real libraries do. tk stands for triton,
 * so the branch that runs when the import succeeds is the one tk reads: its
 * statements are sorted as if they were at module level (front/host.c), its
 * lines are lifted (the scanner drops the block's indentation, LexLift),
 * and the other branches are host code whose names never hide the taken
 * branch's. An if chain is judged arm by arm: one that never runs (its
 * condition false, or past a true one) hides no name the module bound, and
 * one that a condition tk cannot decide may take is host code under that
 * condition. Assumes front/host_lines.c cut the text; guarantees a block
 * whose every branch is undecided is left to host.c whole. */
#include <string.h>

#include "front/host.h"

enum { HOST_MAX_ARMS = 64 }; /* branches of one if/elif chain or try */

/* Whether a branch runs, as far as tk can tell without running Python. */
typedef enum {
    ARM_MAYBE, /* a condition tk cannot decide takes it or not (a try's other arms too) */
    ARM_RUNS,  /* surely taken */
    ARM_NEVER, /* its own condition is false, or an arm before it surely ran */
} ArmRun;

/* One branch: its header line (`try:`, `except ...:`, `elif ...:`) and
 * its body, lines [first, last]; for an ARM_MAYBE arm of an if chain, the
 * undecided condition it depends on. */
typedef struct HostArm {
    int head, first, last;
    ArmRun run;
    HostUndecided why;
} HostArm;


static void host_name(HostScan *h, PtrVec *v, const char *s)
{
    if (s && !host_in(v, s, strlen(s)))
        vec_push(h->lx->arena, v, (void *)s);
}

static const char *host_assigned(HostScan *h, const HostLine *L, size_t *value);

/* `J = triton.jit`, or `J = triton.jit if HAS_TRITON else stand_in` (a
 * library that runs without triton): J decorates kernels. */
static void host_jit_assignment(HostScan *h, const HostLine *L)
{
    size_t v;
    const char *name = host_assigned(h, L, &v);
    if (!name)
        return;
    const char *t = h->text;
    size_t end = host_dotted(t, v, L->end), q = host_skip_blank(t, end, L->end);
    bool alone = q == L->end || t[q] == '#' ||
        (L->end - q > 2 && memcmp(t + q, "if", 2) == 0 && !host_is_id(t[q + 2]));
    if (alone && end - v > 4 && memcmp(t + end - 4, ".jit", 4) == 0 &&
        host_in(&h->prefixes, t + v, end - 4 - v))
        host_name(h, &h->jit_names, name);
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
            else if (n->kind == N_FROM_IMPORT && strcmp(n->name, "triton.language") == 0 &&
                     n->str && (!strcmp(n->str, "core") || !strcmp(n->str, "standard")))
                bind = n->alias ? n->alias : n->str; /* the modules tl is written in */
            host_name(h, &h->prefixes, bind);
            if (n->kind == N_FROM_IMPORT && strncmp(n->name, "triton", 6) == 0 && n->str &&
                strcmp(n->str, "jit") == 0 && n->alias)
                host_name(h, &h->jit_names, n->alias); /* from triton import jit as J */
        }
    }
    for (int i = 0; i < h->nlines; i++)
        host_jit_assignment(h, &h->lines[i]);
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
    if (end == L->start || p >= L->end || h->text[p] != '=' ||
        (p + 1 < L->end && h->text[p + 1] == '='))
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

/* The value of an `if`/`elif` condition (front/host_cond.c); an unknown
 * one is noted for the error of a kernel that uses a name it binds. */
static HostCond host_cond(HostScan *h, const HostLine *L)
{
    const char *t = h->text;
    size_t from = L->start + (host_starts(h, L, "elif") ? 4 : 2), to = 0;
    int depth = 0, line = 0;
    for (size_t p = from; p < L->end && !to; p++) {
        if (t[p] == '\'' || t[p] == '"')
            p = host_skip_string(t, L->end, p, &line) - 1;
        else if (strchr("([{", t[p]))
            depth++;
        else if (strchr(")]}", t[p]))
            depth--;
        else if (t[p] == ':' && depth == 0 && (p + 1 >= L->end || t[p + 1] != '='))
            to = p;
    }
    if (!to)
        return COND_UNKNOWN;
    size_t after = to + 1;
    while (after < L->end && (t[after] == ' ' || t[after] == '\t'))
        after++;
    if (after < L->end && t[after] != '#' && t[after] != '\r')
        return COND_UNKNOWN;
    HostCond c = host_cond_value(h, from, to);
    if (c == COND_UNKNOWN) {
        while (from < to && (t[from] == ' ' || t[from] == '\t'))
            from++;
        while (to > from && strchr(" \t\\", t[to - 1]))
            to--;
        h->undecided =
            (HostUndecided){L, from, to - from, arena_strndup(h->lx->arena, t + from, to - from)};
    }
    return c;
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
        arms[n++] = (HostArm){k, k + 1, last, ARM_MAYBE, {0}};
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

/* The end of the dotted name at v of line L (v where there is none). */
static size_t dotted_end(const HostScan *h, const HostLine *L, size_t v)
{
    size_t e = v;
    while (e < L->end && (host_is_id(h->text[e]) || h->text[e] == '.'))
        e++;
    return e;
}

/* The dotted path a try line aliases: `dotted.path`, or the same wrapped in
 * triton's constexpr_function (in call form: Triton 3.6 asks for it around
 * tl.core's helpers that kernels call, and returns the helper). NULL for
 * anything else. */
static const char *aliased_path(HostScan *h, const HostLine *L, size_t v)
{
    const char *t = h->text;
    size_t e = dotted_end(h, L, v);
    if (e == v)
        return NULL;
    static const char wrap[] = "constexpr_function";
    size_t w = sizeof wrap - 1;
    if (e < L->end && t[e] == '(' && e - v >= w && !memcmp(t + e - w, wrap, w) &&
        (e - v == w || t[e - w - 1] == '.')) {
        /* host_skip_ws passes parentheses too: the path is what lies between */
        size_t in = host_skip_ws(t, e + 1, L->end), ie = dotted_end(h, L, in);
        size_t close = ie;
        while (close < L->end && (t[close] == ' ' || t[close] == '\t'))
            close++;
        if (ie == in || close >= L->end || t[close] != ')' ||
            host_skip_ws(t, close + 1, L->end) < L->end)
            return NULL;
        return arena_strndup(h->lx->arena, t + in, ie - in);
    }
    if (host_skip_ws(t, e, L->end) < L->end)
        return NULL;
    return arena_strndup(h->lx->arena, t + v, e - v);
}

/* Whether a try's body only aliases triton's builtins (`uniform =
 * tl.uint_to_uniform_float`, each line `NAME = dotted.path`, or the path in
 * constexpr_function(...)): 1 when tk has every one, 0 when it lacks one
 * (Python would raise AttributeError), -1 when the body is anything else. */
static int host_try_aliases(HostScan *h, const HostArm *a)
{
    int indent = h->lines[a->first].indent, all = 1;
    for (int k = a->first; k <= a->last; k++) {
        const HostLine *L = &h->lines[k];
        size_t v;
        if (L->indent != indent || !host_assigned(h, L, &v))
            return -1;
        const char *path = aliased_path(h, L, v);
        if (!path)
            return -1;
        int has = host_attr_exists(h, path);
        if (has < 0)
            return -1;
        all &= has;
    }
    return all;
}

/* Whether an except arm catches AttributeError (bare, Exception too). */
static bool host_catches_attr(HostScan *h, const HostArm *a)
{
    const HostLine *L = &h->lines[a->head];
    size_t p = host_skip_ws(h->text, L->start + 6, L->end);
    return host_starts(h, L, "except") &&
        (h->text[p] == ':' || host_line_has(h, L, "AttributeError") ||
         host_line_has(h, L, "Exception"));
}

/* Whether each arm after a try's body is an `except` that only raises:
 * the module was imported, so the body ran without raising. */
static bool excepts_raise(HostScan *h, const HostArm *arms, int n)
{
    for (int i = 1; i < n; i++)
        if (!host_starts(h, &h->lines[arms[i].head], "except") || arms[i].first != arms[i].last ||
            !host_starts(h, &h->lines[arms[i].first], "raise"))
            return false;
    return n > 1;
}

/* The try arm that runs when triton is there, or -1 when that is not
 * known: the body when it defines kernels or imports triton or its
 * excepts only raise (else the first except branch that imports it), or
 * when it aliases builtins tk has (else the first except branch that
 * catches the AttributeError). */
static int host_try_taken(HostScan *h, const HostArm *arms, int n)
{
    if (host_has_jit(h, &arms[0]) || host_imports_tk(h, &arms[0]) || excepts_raise(h, arms, n))
        return 0;
    int aliases = host_try_aliases(h, &arms[0]);
    if (aliases == 1)
        return 0;
    for (int i = 1; aliases == 0 && i < n; i++)
        if (host_catches_attr(h, &arms[i]))
            return i;
    for (int i = 1; i < n; i++)
        if (host_starts(h, &h->lines[arms[i].head], "except") && host_imports_tk(h, &arms[i]))
            return i;
    return -1;
}

/* Judges each arm of an if/elif/else chain on its own: an arm whose
 * condition is false never runs; the first true one (or the else) past
 * arms that never run surely runs; past an undecided condition an arm
 * may run unless its own condition is false; past a true condition no
 * arm runs (`if not HAVE_TRITON: tl = None` / `elif USE_TMA:` rebinds
 * nothing whatever USE_TMA is). Returns whether some arm surely runs. */
static bool host_if_runs(HostScan *h, HostArm *arms, int n)
{
    bool undecided = false, ended = false;
    HostUndecided why = {0};
    for (int i = 0; i < n; i++) {
        const HostLine *L = &h->lines[arms[i].head];
        h->undecided.line = NULL;
        HostCond c = ended ? COND_FALSE : host_starts(h, L, "else") ? COND_TRUE : host_cond(h, L);
        if (c == COND_UNKNOWN) {
            undecided = true;
            why = h->undecided;
        }
        arms[i].run = c == COND_FALSE ? ARM_NEVER : undecided ? ARM_MAYBE : ARM_RUNS;
        arms[i].why = why;
        ended |= c == COND_TRUE;
    }
    return ended;
}

/* The if arm whose statements tk reads at module level, or -1 for none:
 * the one that surely runs; past an undecided condition, one of those
 * that may run when one of them surely does and all bind the same
 * builtins (then any may stand for all). */
static int host_if_taken(HostScan *h, HostArm *arms, int n)
{
    bool sure = host_if_runs(h, arms, n);
    int firsts[HOST_MAX_ARMS], lasts[HOST_MAX_ARMS], m = 0, last_maybe = -1;
    for (int i = 0; i < n; i++) {
        if (arms[i].run == ARM_RUNS)
            return i;
        if (arms[i].run != ARM_MAYBE)
            continue;
        firsts[m] = arms[i].first;
        lasts[m++] = arms[i].last;
        last_maybe = i;
    }
    return sure && host_same_imports(h, firsts, lasts, m) ? last_maybe : -1;
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

/* The names (N_NAME nodes) the statements of an arm bind. */
static PtrVec host_arm_names(HostScan *h, const HostArm *a)
{
    PtrVec saved = h->bound;
    h->bound = (PtrVec){0};
    Node *names = parse_node(h->lx, N_HOST, (Span){0});
    if (names)
        host_bind_block(h, names, a->first, a->last);
    PtrVec bound = h->bound;
    h->bound = saved;
    return bound;
}

/* An arm that never runs is host code that hides nothing: of its names,
 * those the module bound before (tl from the try that imported triton)
 * keep their meaning, and the others say where host code set them. */
static void host_never_runs(HostScan *h, const HostArm *a, const PtrVec *taken_names)
{
    PtrVec keep = {0}, names = host_arm_names(h, a);
    for (int i = 0; taken_names && i < taken_names->len; i++)
        vec_push(h->lx->arena, &keep, taken_names->items[i]);
    for (int i = 0; i < names.len; i++)
        if (host_bound_before(h, ((const Node *)names.items[i])->name))
            vec_push(h->lx->arena, &keep, names.items[i]);
    host_statement(h, a->head, a->last, a->first, &keep);
}

/* Lifts the taken arm: the scanner reads its statements at module level. */
static void host_take(HostScan *h, const HostArm *a)
{
    host_blank(h, h->lines[a->head].start, h->lines[a->head].end);
    host_lift(h, a);
    h->depth++;
    host_block(h, a->first, a->last, h->lines[a->first].indent);
    h->depth--;
}

bool host_branch(HostScan *h, int first, int last)
{
    HostArm arms[HOST_MAX_ARMS];
    if (h->depth >= LEX_MAX_INDENT)
        return false; /* deeper than the scanner reads; host code, no deep recursion */
    int n = host_arms(h, first, last, arms);
    if (n <= 0)
        return false;
    bool is_try = host_starts(h, &h->lines[arms[0].head], "try");
    int taken = is_try ? host_try_taken(h, arms, n) : host_if_taken(h, arms, n);
    int never = 0;
    for (int i = 0; i < n; i++)
        never += arms[i].run == ARM_NEVER;
    if (taken < 0 && (is_try || never == 0)) {
        /* host code whole, under the first condition tk could not decide */
        h->undecided = is_try ? (HostUndecided){0} : arms[0].why;
        return false;
    }
    PtrVec taken_names = taken >= 0 ? host_arm_names(h, &arms[taken]) : (PtrVec){0};
    if (is_try && taken == 0)
        host_note_true_flags(h, &arms[0]);
    for (int i = 0; i < n; i++) {
        const HostArm *a = &arms[i];
        if (i == taken) {
            host_take(h, a);
        } else if (a->run == ARM_NEVER) {
            host_never_runs(h, a, taken >= 0 ? &taken_names : NULL);
        } else {
            host_statement(h, a->head, a->last, a->first, taken >= 0 ? &taken_names : NULL);
            host_note_undecided(h, &a->why);
        }
    }
    return true;
}
