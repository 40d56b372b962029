/* host_helpers.c: the host helpers and constants conditions read
 * (host_cond.c evaluates them): a `def` whose body tk can follow, read
 * from its lines before they are blanked, and the helpers and constants
 * of other files of the package that a module imports names from, each
 * file read once per compilation; and what the branches of an undecided
 * chain import. Assumes host_lines cut the text; never
 * reports an error: what it cannot read stays unknown. */
#include <string.h>

#include "front/host.h"

/* Where a line's code ends: at a comment outside strings, or its end. */
static size_t code_end(const HostScan *h, const HostLine *L)
{
    int line = 0;
    for (size_t q = L->start; q < L->end; q++) {
        if (h->text[q] == '\'' || h->text[q] == '"')
            q = host_skip_string(h->text, L->end, q, &line) - 1;
        else if (h->text[q] == '#')
            return q;
    }
    return L->end;
}

/* The parameters of `def NAME(a, b: str, c):` from p (its '('); false
 * for defaults, *args and anything else but plain, maybe annotated,
 * names. */
static bool helper_params(HostScan *h, const HostLine *L, size_t p, HostHelper *fn)
{
    const char *t = h->text;
    size_t close = host_match(t, L->end, p);
    if (close >= L->end)
        return false;
    for (p++; p < close;) {
        p = host_skip_ws(t, p, close);
        size_t a = p;
        while (p < close && host_is_id(t[p]))
            p++;
        if (p == a || fn->nparams == HELPER_MAX_PARAMS)
            return false; /* *args, a default, too many */
        fn->params[fn->nparams++] = arena_strndup(h->lx->arena, t + a, p - a);
        p = host_skip_blank(t, p, close);
        if (p < close && t[p] == ':') /* an annotation, to the next top-level ',' */
            for (int depth = 0; p < close && (depth > 0 || t[p] != ','); p++)
                depth += strchr("([{", t[p]) ? 1 : strchr(")]}", t[p]) ? -1 : 0;
        if (p < close && t[p] == ',')
            p++;
        else if (p < close)
            return false;
    }
    return true;
}

/* One line of a helper's body as a statement: false for a line the
 * helper reader does not take. */
static bool helper_stmt(HostScan *h, const HostLine *L, HostHelper *fn)
{
    const char *t = h->text;
    size_t end = code_end(h, L);
    while (end > L->start && strchr(" \t\r\n\\", t[end - 1]))
        end--;
    const char *kw[] = {"return", "if", "elif", "else"};
    HostStmtKind kinds[] = {HS_RETURN, HS_IF, HS_ELIF, HS_ELSE};
    HostStmt st = {.indent = L->indent};
    size_t from = L->start;
    int k = 0;
    while (k < TK_ARRAY_LEN(kw) && !host_starts(h, L, kw[k]))
        k++;
    if (k < TK_ARRAY_LEN(kw)) {
        st.k = kinds[k];
        from += strlen(kw[k]);
        if (st.k != HS_RETURN) { /* `if COND:` with its body on the lines below */
            if (end == L->start || t[end - 1] != ':')
                return false;
            end--;
        }
    } else {
        size_t p = L->start;
        while (p < end && host_is_id(t[p]))
            p++;
        size_t eq = host_skip_blank(t, p, end);
        if (p == L->start || eq >= end || t[eq] != '=' || (eq + 1 < end && t[eq + 1] == '='))
            return false;
        st.k = HS_ASSIGN;
        st.name = arena_strndup(h->lx->arena, t + L->start, p - L->start);
        from = eq + 1;
    }
    if (fn->nstmts == HELPER_MAX_STMTS)
        return false;
    from = host_skip_blank(t, from, end);
    st.expr = st.k == HS_ELSE ? "True"
        : from < end          ? arena_strndup(h->lx->arena, t + from, end - from)
                              : "None";
    if (!st.expr || (st.k == HS_ELSE && from != end))
        return false;
    fn->stmts[fn->nstmts++] = st;
    return true;
}

/* `def NAME(a, b):` and a body of assignments, returns, if/elif/else and
 * try/except (the `except` clauses dropped), maybe under decorators
 * (`@functools.lru_cache`) and a docstring: a helper conditions may call
 * (Liger's compare_version("triton", operator.ge, "3.0.0")). */
HostNote host_note_helper(HostScan *h, int first, int last)
{
    HostNote none = {0};
    int head = first;
    while (head < last && h->text[h->lines[head].start] == '@')
        head++;
    const HostLine *L = &h->lines[head];
    if (!host_starts(h, L, "def") || head == last)
        return none;
    const char *t = h->text;
    size_t p = host_skip_blank(t, L->start + 3, L->end), s = p;
    while (p < L->end && host_is_id(t[p]))
        p++;
    HostHelper *fn = arena_alloc(h->lx->arena, sizeof *fn);
    const char *name = arena_strndup(h->lx->arena, t + s, p - s);
    if (!fn || !name || p == s || t[p] != '(')
        return none;
    *fn = (HostHelper){0};
    if (!helper_params(h, L, p, fn))
        return none;
    int drop_below = -1; /* the indent of the `except` whose clause is being dropped */
    for (int k = head + 1; k <= last; k++) {
        const HostLine *B = &h->lines[k];
        if (drop_below >= 0 && B->indent > drop_below)
            continue;
        drop_below = -1;
        char c0 = t[B->start];
        if ((c0 == '"' || c0 == '\'') && k == head + 1) /* a docstring */
            continue;
        if (host_starts(h, B, "pass") || host_starts(h, B, "try"))
            continue;
        if (host_starts(h, B, "except")) {
            drop_below = B->indent;
            continue;
        }
        if (!helper_stmt(h, B, fn))
            return none;
    }
    return fn->nstmts ? (HostNote){name, NULL, fn} : none;
}

/* ---- helpers and values of other files of the package ---- */

enum { HOST_MAX_FILES = 16 }; /* other files one compilation reads for conditions */

void host_note_imports(HostScan *h)
{
    for (int i = 0; i < h->nlines; i++)
        if (h->lines[i].indent == 0 && host_starts(h, &h->lines[i], "from"))
            host_import(h, &h->lines[i], NULL, false, &h->imports);
}

typedef struct HostFile {
    const char *path;
    HostScan *scan;
} HostFile;

/* Reads the module-level helpers and values of another file of the
 * package, as the file's own conditions would see them. */
static void read_file_values(HostScan *sub)
{
    host_lines(sub);
    host_triton_names(sub);
    host_note_imports(sub);
    for (int i = 0; i < sub->nlines;) {
        int j = i + 1;
        while (j < sub->nlines && sub->lines[j].indent > 0)
            j++;
        if (sub->lines[i].indent == 0) {
            host_note_flag(sub, &sub->lines[i]); /* HAS_TRITON = find_spec("triton") ... */
            host_keep_value(sub, host_read_value(sub, i, j - 1));
        }
        i = j;
    }
}

/* The scan of the file `module` names in h's file, read once per
 * compilation; NULL when there is none. */
static HostScan *other_file(HostScan *h, const char *module)
{
    HostScan *root = h->root ? h->root : h;
    Arena *a = h->lx->arena;
    char *path = h->path ? package_find(a, h->path, module) : NULL;
    if (!path)
        return NULL;
    for (int i = 0; i < root->loaded.len; i++) {
        const HostFile *f = root->loaded.items[i];
        if (strcmp(f->path, path) == 0)
            return f->scan;
    }
    if (root->loaded.len >= HOST_MAX_FILES)
        return NULL;
    size_t len = 0;
    char *text = package_read(a, path, &len);
    HostScan *sub = arena_alloc(a, sizeof *sub);
    HostFile *f = arena_alloc(a, sizeof *f);
    if (!text || !sub || !f)
        return NULL;
    *sub = (HostScan){.lx = h->lx, .text = text, .n = len, .path = path, .root = root};
    *f = (HostFile){path, sub};
    vec_push(a, &root->loaded, f); /* before reading: an import cycle finds it */
    read_file_values(sub);
    return sub;
}

bool host_imported_from(const HostScan *h, const char *name, const char *module, const char *what)
{
    for (int i = h->imports.len - 1; i >= 0; i--) {
        const Node *n = h->imports.items[i];
        if (n->kind == N_FROM_IMPORT && strcmp(n->alias ? n->alias : n->str, name) == 0)
            return strcmp(n->name, module) == 0 && strcmp(n->str, what) == 0;
    }
    return false;
}

/* The file a name of h's module was imported from (`from .utils import
 * triton_ge`) and the name there; NULL when it was not. */
HostScan *host_imported(HostScan *h, const char *name, const char **there)
{
    for (int i = h->imports.len - 1; i >= 0; i--) {
        const Node *n = h->imports.items[i];
        if (n->kind != N_FROM_IMPORT || strcmp(n->alias ? n->alias : n->str, name) != 0)
            continue;
        *there = n->str;
        return strncmp(n->name, "triton", 6) == 0 ? NULL : other_file(h, n->name);
    }
    return NULL;
}

/* The builtin an import binds, as one string: the libdevice modules are
 * one namespace, and triton.language.math's functions that are not tl
 * builtins are libdevice's too (sema/builtins.c reads them so); NULL for
 * anything else. */
static const char *import_id(HostScan *h, const Node *n)
{
    static const char *const libdevice[] = {
        "triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
        "triton.language.math.libdevice", "triton.language.libdevice"};
    const char *full =
        n->kind == N_FROM_IMPORT ? arena_printf(h->lx->arena, "%s.%s", n->name, n->str) : n->name;
    for (int i = 0; full && i < TK_ARRAY_LEN(libdevice); i++) {
        if (strcmp(full, libdevice[i]) == 0)
            return "libdevice";
        if (n->kind == N_FROM_IMPORT && strcmp(n->name, libdevice[i]) == 0)
            return host_libdevice_known(n->str) ? arena_printf(h->lx->arena, "libdevice.%s", n->str)
                                                : NULL;
    }
    if (n->kind == N_FROM_IMPORT && strcmp(n->name, "triton.language.math") == 0)
        return host_libdevice_known(n->str) && !host_builtin_exists("tl", n->str)
            ? arena_printf(h->lx->arena, "libdevice.%s", n->str)
            : arena_printf(h->lx->arena, "tl.math.%s", n->str);
    return full;
}

/* The names one branch binds and what to: NULL when a line is no import
 * of a module tk reads. */
static bool branch_imports(HostScan *h, int first, int last, PtrVec *names, PtrVec *ids)
{
    for (int k = first; k <= last; k++) {
        const HostLine *L = &h->lines[k];
        PtrVec nodes = {0};
        if (!(host_starts(h, L, "import") || host_starts(h, L, "from")) ||
            !host_import(h, L, NULL, false, &nodes))
            return false;
        for (int i = 0; i < nodes.len; i++) {
            const Node *n = nodes.items[i];
            if (n->kind == N_IMPORT && !n->alias)
                return false; /* `import a.b` binds a: not one builtin */
            const char *id = import_id(h, n);
            if (!id)
                return false;
            vec_push(h->lx->arena, names, (void *)(n->alias ? n->alias : n->str));
            vec_push(h->lx->arena, ids, (void *)id);
        }
    }
    return true;
}

bool host_same_imports(HostScan *h, const int *first, const int *last, int n)
{
    PtrVec names0 = {0}, ids0 = {0};
    if (n < 2 || !branch_imports(h, first[0], last[0], &names0, &ids0) || names0.len == 0)
        return false;
    for (int b = 1; b < n; b++) {
        PtrVec names = {0}, ids = {0};
        if (!branch_imports(h, first[b], last[b], &names, &ids) || names.len != names0.len)
            return false;
        for (int i = 0; i < names.len; i++) {
            bool found = false;
            for (int k = 0; k < names0.len && !found; k++)
                found = strcmp(names.items[i], names0.items[k]) == 0 &&
                    strcmp(ids.items[i], ids0.items[k]) == 0;
            if (!found)
                return false;
        }
    }
    return true;
}
