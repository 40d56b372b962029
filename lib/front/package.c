/* package.c: reads the other files of a Python package that a module
 * imports jit code from (`from .utils import helper`, `from pkg.ops import
 * utils`, `import pkg.utils.ext as tle`, `import pkg.ext`). A relative import is found from
 * the importing file's folder; an absolute one in the search folders, then
 * the process's (tk_source_search_path: where an embedder's Python found a
 * package), then in the importing file's folder and its parents (where
 * Python would find the package root on sys.path). Assumes host.c kept each host import's
 * nodes in its N_HOST's list2. Guarantees: an import it cannot find is left
 * alone (its names stay host names); each file is read and parsed once per
 * compilation, import cycles included, as the text set for it where one is
 * (front/overlay.c); syntax errors of a file it reads are reported in that
 * file. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "front/front.h"
#include "front/host.h"

enum {
    PKG_MAX_FILES = 512, /* files one compilation reads at most (a library's whole package) */
    PKG_MAX_UP = 8,      /* parent folders tried for an absolute import */
};

typedef struct PkgFile {
    const char *path; /* normalised */
    Node *module;
} PkgFile;

typedef struct Pkg {
    Arena *a;
    Diag *d;
    const char *const *search;
    const char *const *roots; /* the process's search folders (front/overlay.c) */
    PkgFile files[PKG_MAX_FILES];
    int nfiles;
} Pkg;

/* Joins `dir` and `rel` and removes "." and "dir/.." parts lexically, so a
 * file reached two ways has one name (and diagnostics a readable one). */
static char *pkg_join(Arena *a, const char *dir, const char *rel)
{
    const char *whole = dir && *dir ? arena_printf(a, "%s/%s", dir, rel) : rel;
    size_t n = strlen(whole);
    char *out = arena_alloc(a, n + 2);
    if (!out)
        return NULL;
    bool abs = whole[0] == '/';
    size_t len = 0, ups = 0; /* ups: leading ".." parts, which stay */
    const char *p = whole;
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t k = (size_t)(e - p);
        if (k == 0 || (k == 1 && p[0] == '.')) {
            /* nothing */
        } else if (k == 2 && p[0] == '.' && p[1] == '.') {
            if (len > ups) {
                while (len > 0 && out[len - 1] != '/')
                    len--;
                if (len > 0)
                    len--;
            } else if (!abs) {
                if (len)
                    out[len++] = '/';
                memcpy(out + len, "..", 2);
                len += 2;
                ups = len;
            }
        } else {
            if (len || abs)
                out[len++] = '/';
            memcpy(out + len, p, k);
            len += k;
        }
        p = e;
    }
    if (len == 0)
        out[len++] = abs ? '/' : '.';
    out[len] = 0;
    return out;
}

/* Modules libtk carries as text, at a path no file has: Triton's
 * triton.tools.ragged_tma, whose device functions kernels import (the
 * Python facade's module, python/tk/tools/ragged_tma.py, embedded). */
extern const char front_ragged_tma[];
static const struct {
    const char *module, *path, *text;
} builtin[] = {
    {"triton.tools.ragged_tma", "<tk>/triton/tools/ragged_tma.py", front_ragged_tma},
};

static bool pkg_is_file(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The file a dotted module path names under `dir`: a/b.py or
 * a/b/__init__.py; an empty path is the folder's own __init__.py. */
static char *pkg_file_in(Pkg *p, const char *dir, const char *dotted)
{
    char *rel = arena_strdup(p->a, dotted);
    if (!rel)
        return NULL;
    for (char *c = rel; *c; c++)
        if (*c == '.')
            *c = '/';
    char *f = pkg_join(p->a, dir, arena_printf(p->a, "%s%s.py", rel, *rel ? "" : "__init__"));
    if (pkg_is_file(f))
        return f;
    if (!*rel)
        return NULL;
    f = pkg_join(p->a, dir, arena_printf(p->a, "%s/__init__.py", rel));
    return pkg_is_file(f) ? f : NULL;
}

static char *pkg_dirname(Arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return arena_strdup(a, ".");
    return slash == path ? arena_strdup(a, "/") : arena_strndup(a, path, (size_t)(slash - path));
}

/* Finds the file of a module path as written in `file` (leading dots for a
 * relative import), or NULL; *root is the folder an absolute path was
 * found under. */
static char *pkg_resolve_in(Pkg *p, const char *file, const char *module, const char **root)
{
    /* a module compiled from a string has no folder of its own */
    const char *dir = pkg_is_file(file) ? pkg_dirname(p->a, file) : NULL;
    if (module[0] == '.') {
        if (!dir)
            return NULL;
        while (module[1] == '.') {
            dir = pkg_join(p->a, dir, "..");
            module++;
        }
        return pkg_file_in(p, dir, module + 1);
    }
    if (!module[0])
        return NULL;
    for (int i = 0; i < TK_ARRAY_LEN(builtin); i++)
        if (strcmp(module, builtin[i].module) == 0) {
            *root = "<tk>";
            return arena_strdup(p->a, builtin[i].path);
        }
    for (int i = 0; p->search && p->search[i]; i++) {
        char *f = pkg_file_in(p, p->search[i], module);
        *root = p->search[i];
        if (f)
            return f;
    }
    for (int i = 0; p->roots && p->roots[i]; i++) {
        char *f = pkg_file_in(p, p->roots[i], module);
        *root = p->roots[i];
        if (f)
            return f;
    }
    for (int up = 0; up <= PKG_MAX_UP && dir; up++) {
        char *f = pkg_file_in(p, dir, module);
        *root = dir;
        if (f)
            return f;
        if (strcmp(dir, "/") == 0)
            break;
        dir = pkg_join(p->a, dir, "..");
    }
    return NULL;
}

static char *pkg_resolve(Pkg *p, const char *file, const char *module)
{
    const char *root = NULL;
    return pkg_resolve_in(p, file, module, &root);
}

/* Reads a whole file into the arena, or the text an embedder set for it
 * (front/overlay.c); NULL when it cannot. */
static char *pkg_read(Arena *a, const char *path, size_t *len)
{
    for (int i = 0; i < TK_ARRAY_LEN(builtin); i++)
        if (strcmp(path, builtin[i].path) == 0) {
            *len = strlen(builtin[i].text);
            return arena_strdup(a, builtin[i].text);
        }
    char *set = NULL;
    if (overlay_read(a, path, &set, len))
        return set;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    StrBuf sb;
    sb_init(&sb);
    char chunk[16384];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sb_write(&sb, chunk, n);
    bool bad = ferror(f) != 0 || sb.oom;
    fclose(f);
    char *text = bad ? NULL : arena_alloc(a, sb.len + 1);
    if (text) {
        if (sb.len)
            memcpy(text, sb.data, sb.len);
        text[sb.len] = 0;
        *len = sb.len;
    }
    sb_free(&sb);
    return text;
}

char *package_find(Arena *a, const char *file, const char *module)
{
    Pkg p = {.a = a};
    return file && module ? pkg_resolve(&p, file, module) : NULL;
}

char *package_read(Arena *a, const char *path, size_t *len) { return pkg_read(a, path, len); }

static void pkg_imports(Pkg *p, Node *module);

/* The parsed module of a package file, read on first use. */
static Node *pkg_module(Pkg *p, const char *path)
{
    for (int i = 0; i < p->nfiles; i++)
        if (strcmp(p->files[i].path, path) == 0)
            return p->files[i].module;
    if (p->nfiles == PKG_MAX_FILES)
        return NULL;
    size_t len = 0;
    char *text = pkg_read(p->a, path, &len);
    Source *src = arena_alloc(p->a, sizeof *src);
    if (!text || !src)
        return NULL;
    *src = (Source){.name = path, .text = text, .len = len};
    const Source *saved = p->d->src;
    p->d->src = src; /* its syntax errors are shown in its own text */
    Node *m = parse_python_module(src, p->a, p->d);
    p->d->src = saved;
    if (!m)
        return NULL;
    p->files[p->nfiles++] = (PkgFile){path, m};
    pkg_imports(p, m);
    return m;
}

/* The module of a package folder with no __init__.py (a namespace
 * package): empty, named after the folder. */
static Node *pkg_namespace(Pkg *p, const char *dir)
{
    for (int i = 0; i < p->nfiles; i++)
        if (strcmp(p->files[i].path, dir) == 0)
            return p->files[i].module;
    Node *m = arena_alloc(p->a, sizeof *m);
    Source *src = arena_alloc(p->a, sizeof *src);
    if (!m || !src || p->nfiles == PKG_MAX_FILES)
        return NULL;
    *src = (Source){.name = dir, .text = "", .len = 0};
    *m = (Node){.kind = N_MODULE, .span = {1, 1, 1, 1}, .src = src};
    p->files[p->nfiles++] = (PkgFile){dir, m};
    return m;
}

/* `import a.b.c` binds `a`, through which a.b and a.b.c are reached: the
 * modules of the packages on the way (a/__init__.py, a/b/__init__.py, or
 * a namespace module for a folder without one) become N_IMPORT nodes named
 * "a" and "a.b" in imp->list, found under the folder a.b.c was. */
static void pkg_import_chain(Pkg *p, Node *imp, const char *root)
{
    PtrVec chain = {0};
    const char *name = imp->name;
    for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
        char *prefix = arena_strndup(p->a, name, (size_t)(dot - name));
        char *f = prefix ? pkg_file_in(p, root, prefix) : NULL;
        Node *m = NULL;
        if (f) {
            m = pkg_module(p, f);
        } else if (prefix) {
            for (char *c = prefix; *c; c++)
                *c = *c == '.' ? '/' : *c;
            m = pkg_namespace(p, pkg_join(p->a, root, prefix));
        }
        Node *n = m ? arena_alloc(p->a, sizeof *n) : NULL;
        if (!n)
            return;
        *n = (Node){.kind = N_IMPORT,
                    .span = imp->span,
                    .target = m,
                    .name = arena_strndup(p->a, name, (size_t)(dot - name))};
        vec_push(p->a, &chain, n);
    }
    imp->list.items = (Node **)chain.items;
    imp->list.len = chain.len;
}

/* Points every host import of `module` at the package file it names. */
static void pkg_imports(Pkg *p, Node *module)
{
    const char *file = module->src && module->src->name ? module->src->name : "<string>";
    for (int i = 0; i < module->list.len; i++) {
        Node *h = module->list.items[i];
        if (h->kind != N_HOST)
            continue;
        for (int k = 0; k < h->list2.len; k++) {
            Node *imp = h->list2.items[k];
            if (!imp->name)
                continue;
            if (imp->kind == N_FROM_IMPORT && imp->str && strcmp(imp->str, "*") != 0) {
                size_t n = strlen(imp->name);
                const char *sep = n && imp->name[n - 1] == '.' ? "" : ".";
                char *sub =
                    pkg_resolve(p, file, arena_printf(p->a, "%s%s%s", imp->name, sep, imp->str));
                if (sub && (imp->target = pkg_module(p, sub))) {
                    imp->flags |= NF_SUBMODULE;
                    continue;
                }
            }
            const char *root = NULL;
            char *f = pkg_resolve_in(p, file, imp->name, &root);
            if (f)
                imp->target = pkg_module(p, f);
            if (imp->target && imp->kind == N_IMPORT && !imp->alias && root)
                pkg_import_chain(p, imp, root);
        }
    }
}

int package_load(Node *module, const char *const *search, Arena *a, Diag *d, const Source ***files)
{
    *files = NULL;
    if (!module || !module->src || !module->src->name)
        return 0;
    Pkg *p = arena_alloc(a, sizeof *p);
    if (!p)
        return 0;
    memset(p, 0, sizeof *p);
    p->a = a;
    p->d = d;
    p->search = search;
    p->roots = overlay_search(a);
    /* the file itself, so an import of its own module finds this tree */
    const char *self = pkg_join(a, NULL, module->src->name);
    if (self && pkg_is_file(self))
        p->files[p->nfiles++] = (PkgFile){self, module};
    int first = p->nfiles;
    pkg_imports(p, module);
    const Source **out = arena_alloc(a, sizeof *out * (size_t)(p->nfiles + 1));
    if (!out)
        return 0;
    for (int i = first; i < p->nfiles; i++)
        out[i - first] = p->files[i].module->src;
    *files = out;
    return p->nfiles - first;
}
