/* overlay.c: texts that stand for package files on disk
 * (tk_source_overlay), and folders to search for package files
 * (tk_source_search_path). An embedder that has run a file's host code (the
 * Python route, where the module was imported before its kernels compile)
 * hands in the text tk should compile for it, and package.c reads that
 * instead of the file. Assumes nothing of the callers' threads: one mutex
 * guards the process-wide table. Guarantees: paths are compared after
 * realpath(), so every spelling of a file finds its text; a reader gets its
 * own copy, in its arena; with no text set, a read costs no system call. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "front/front.h"

typedef struct Overlay {
    char *path; /* realpath()'s */
    char *text;
    size_t len;
} Overlay;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Overlay *table; /* the texts set, under lock */
static int count, cap;
static atomic_int set_any; /* count, for readers to skip realpath() when it is 0 */
static char **roots;       /* the search folders added, realpath()'s, under lock */
static int nroots, roots_cap;

static char *overlay_dup(const char *s, size_t len)
{
    char *out = tk_xalloc(len + 1);
    if (out)
        memcpy(out, s, len + 1);
    return out;
}

static int overlay_find(const char *real)
{
    for (int i = 0; i < count; i++)
        if (strcmp(table[i].path, real) == 0)
            return i;
    return -1;
}

static void overlay_remove(const char *real)
{
    int i = overlay_find(real);
    if (i < 0)
        return;
    tk_xfree(table[i].path);
    tk_xfree(table[i].text);
    table[i] = table[--count];
}

/* Puts the (already copied) entry in the table, replacing one of its path. */
static bool overlay_put(Overlay e)
{
    int i = overlay_find(e.path);
    if (i >= 0) {
        tk_xfree(e.path);
        tk_xfree(table[i].text);
        table[i].text = e.text;
        table[i].len = e.len;
        return true;
    }
    if (count == cap) {
        int n = cap ? cap * 2 : 16;
        Overlay *t = tk_xrealloc(table, sizeof *t * (size_t)n);
        if (!t)
            return false;
        table = t;
        cap = n;
    }
    table[count++] = e;
    return true;
}

tk_status overlay_set(const char *path, const char *text)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        if (text)
            return err_set(TK_ERR_NOT_FOUND, "tk_source_overlay: no file '%s': %s", path,
                           strerror(errno));
        /* removing the text of a file that has gone: its name as given */
        snprintf(real, sizeof real, "%s", path);
    }
    Overlay e = {0};
    if (text) {
        e.len = strlen(text);
        e.path = overlay_dup(real, strlen(real));
        e.text = e.path ? overlay_dup(text, e.len) : NULL;
        if (!e.text) {
            tk_xfree(e.path);
            return err_set(TK_ERR_NO_MEMORY, "tk_source_overlay: out of memory for %zu bytes",
                           e.len);
        }
    }
    pthread_mutex_lock(&lock);
    bool ok = true;
    if (text)
        ok = overlay_put(e);
    else
        overlay_remove(real);
    atomic_store(&set_any, count);
    pthread_mutex_unlock(&lock);
    if (!ok) {
        tk_xfree(e.path);
        tk_xfree(e.text);
        return err_set(TK_ERR_NO_MEMORY, "tk_source_overlay: out of memory");
    }
    return TK_OK;
}

bool overlay_read(Arena *a, const char *path, char **text, size_t *len)
{
    char real[PATH_MAX];
    if (atomic_load(&set_any) == 0 || !realpath(path, real))
        return false;
    pthread_mutex_lock(&lock);
    int i = overlay_find(real);
    if (i >= 0) {
        *text = arena_alloc(a, table[i].len + 1);
        if (*text) {
            memcpy(*text, table[i].text, table[i].len + 1);
            *len = table[i].len;
        }
    }
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

tk_status overlay_search_add(const char *dir)
{
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(dir, real) || stat(real, &st) != 0)
        return err_set(TK_ERR_NOT_FOUND, "tk_source_search_path: no folder '%s': %s", dir,
                       strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return err_set(TK_ERR_NOT_FOUND, "tk_source_search_path: '%s' is not a folder", dir);
    char *copy = overlay_dup(real, strlen(real));
    if (!copy)
        return err_set(TK_ERR_NO_MEMORY, "tk_source_search_path: out of memory");
    pthread_mutex_lock(&lock);
    bool have = false, ok = true;
    for (int i = 0; i < nroots && !have; i++)
        have = strcmp(roots[i], real) == 0;
    if (!have && nroots == roots_cap) {
        int n = roots_cap ? roots_cap * 2 : 8;
        char **t = tk_xrealloc(roots, sizeof *t * (size_t)n);
        ok = t != NULL;
        if (t) {
            roots = t;
            roots_cap = n;
        }
    }
    if (!have && ok)
        roots[nroots++] = copy;
    pthread_mutex_unlock(&lock);
    if (have || !ok)
        tk_xfree(copy);
    return ok ? TK_OK : err_set(TK_ERR_NO_MEMORY, "tk_source_search_path: out of memory");
}

const char *const *overlay_search(Arena *a)
{
    pthread_mutex_lock(&lock);
    const char **out = nroots ? arena_alloc(a, sizeof *out * (size_t)(nroots + 1)) : NULL;
    for (int i = 0; out && i < nroots; i++)
        out[i] = arena_strdup(a, roots[i]);
    if (out)
        out[nroots] = NULL;
    pthread_mutex_unlock(&lock);
    return out;
}
