/* support.h: the interface of lib/support/, the layer every stage uses:
 * the arena, growable arrays, source spans, diagnostics, tk_last_error's
 * message and safe file writing. Nothing here knows about the language.
 * All compiler memory comes from an Arena and is released in one go. */
#ifndef TK_SUPPORT_H
#define TK_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tk/tk.h"

/* ---- allocation ------------------------------------------------------- */

/* The single allocation hook: every malloc/realloc/free in the library goes
 * through these so tests can inject out-of-memory. tk_xalloc returns NULL on
 * failure, never aborts. */
void *tk_xalloc(size_t size);
void *tk_xrealloc(void *p, size_t size);
void tk_xfree(void *p);
/* Make the n-th allocation from now on fail (0 disables); for tests. */
void tk_alloc_fail_after(long n);
/* Whether the failure asked for by tk_alloc_fail_after has happened. */
bool tk_alloc_failure_fired(void);

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;
    bool oom; /* set once an allocation failed; callers check it at stage ends */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
/* Zeroed memory. On out-of-memory returns a pointer to a static scratch
 * block of at least `size` bytes when small, and sets a->oom; callers that
 * allocate big buffers must check for NULL. */
void *arena_alloc(Arena *a, size_t size);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growable array of pointers living in an arena. */
typedef struct PtrVec {
    void **items;
    int len, cap;
} PtrVec;
void vec_push(Arena *a, PtrVec *v, void *item);

/* A set of names, each with an int, in an arena: open addressing, so
 * finding one costs the same however many there are. Keys are not copied. */
typedef struct NameMap {
    const char **keys;
    int *vals;
    int n, cap; /* cap: 0 or a power of two */
} NameMap;
/* The value of `name`, or -1 when it is absent. */
int namemap_get(const NameMap *m, const char *name);
int namemap_getn(const NameMap *m, const char *name, size_t len); /* name: len bytes */
/* Adds or replaces; false when the arena ran out (a->oom is set then). */
bool namemap_put(Arena *a, NameMap *m, const char *name, int val);

/* A growable byte buffer on the heap (for output text). */
typedef struct StrBuf {
    char *data;
    size_t len, cap;
    bool oom;
} StrBuf;
void sb_init(StrBuf *sb);
void sb_free(StrBuf *sb);
void sb_putc(StrBuf *sb, char c);
void sb_puts(StrBuf *sb, const char *s);
void sb_write(StrBuf *sb, const char *s, size_t n);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
/* Hands the NUL-terminated text to the caller (free with tk_xfree). */
char *sb_take(StrBuf *sb, size_t *len);

/* ---- source and spans ------------------------------------------------- */

typedef struct Source {
    const char *name; /* file name as given; "<string>" for in-memory code */
    const char *text; /* NUL-terminated copy owned by the compilation */
    size_t len;
} Source;

/* A region of source text. Lines and columns are 1-based; columns count
 * bytes. end_* point one past the last character. */
typedef struct Span {
    int line, col;
    int end_line, end_col;
    /* In IR ops: the inlined @jit call the op came from (an index into its
     * IrFunc's scopes; 0: the kernel's own code), so that line tables can
     * name the helper's file and line. The front end leaves it 0. */
    int scope;
} Span;

Span span_join(Span a, Span b);

/* ---- diagnostics ------------------------------------------------------ */

typedef enum {
    DIAG_ERROR,   /* user error: compilation fails */
    DIAG_WARNING, /* user warning */
    DIAG_NOTE,    /* attached to the previous error */
    DIAG_INTERNAL /* broken invariant inside the compiler */
} DiagKind;

/* Collects diagnostics as formatted text:
 *   file:line:col: error: message
 *     <source line>
 *     ^~~~
 * Stages report and carry on; the driver stops at stage boundaries once
 * `errors` is non-zero. */
typedef struct Diag {
    const Source *src;
    StrBuf text;
    int errors, warnings;
    int max_errors; /* stop recording after this many (0: 50) */
} Diag;

void diag_init(Diag *d, const Source *src);
void diag_free(Diag *d);
void diag_report(Diag *d, DiagKind kind, Span at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_vreport(Diag *d, DiagKind kind, Span at, const char *fmt, va_list ap);
/* An error with no source position (bad option, missing file). */
void diag_plain(Diag *d, DiagKind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- small helpers ---------------------------------------------------- */

#define TK_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define TK_UNUSED(x)    ((void)(x))

bool is_pow2(int64_t v);

/* Checked size arithmetic: false (and *out untouched) when a + b or a * b
 * does not fit in size_t. Sizes that come from callers or files go through
 * these before they reach an allocator or a copy. */
static inline bool size_add_ok(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_add_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}
static inline bool size_mul_ok(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}
uint64_t hash_bytes(uint64_t h, const void *p, size_t n); /* FNV-1a 64 */

/* ---- tk_last_error and the API argument checks (error.c) ---------------- */


/* Sets this thread's tk_last_error text and returns s. */
tk_status err_set(tk_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This thread's tk_last_error text (never NULL). */
const char *err_text(void);
/* Empties this thread's tk_last_error text. */
void err_clear(void);
/* TK_ERR_INVALID for a NULL argument: "fn: arg is NULL". */
tk_status err_null_arg(const char *fn, const char *arg);
/* A pointer with its element count: TK_ERR_INVALID naming both when the
 * count is negative or the pointer is NULL with elements, else TK_OK. */
tk_status err_check_count(const char *fn, const char *ptr_name, const void *ptr,
                          const char *count_name, long count);

/* ---- writing files (file.c) ------------------------------------------------ */

/* Writing files without trusting what is already on disk. Every file
 * tk writes (tkc's output, the kernel cache, tkc -run's buffers, dumps) goes
 * through here. Needs only libc, so tkc compiles it in beside libtk. */


/* One piece of a file written from several buffers. */
typedef struct FilePart {
    const void *data;
    size_t len;
} FilePart;

/* Replaces the name `path` atomically: the parts go to a new temp file in
 * path's folder (a fresh random name, opened O_CREAT|O_EXCL|O_NOFOLLOW, so no
 * planted file or link is ever opened), created with `mode` less the umask,
 * then renamed over path. Whatever was at path (a link included) is replaced,
 * never written through. Returns 0, or an errno value with nothing left. */
int file_replace(const char *path, const FilePart *parts, int nparts, unsigned mode);

/* Writes an output file the way cc -o does: a symlink is followed to its
 * target (a dangling one creates it); a regular or missing target is
 * replaced through file_replace with mode 0666 less the umask; anything else
 * (a FIFO, a device, /dev/stdout) is written through, never replaced.
 * Returns 0 or an errno value. */
int file_write(const char *path, const void *data, size_t len);

/* Whether `name` can be a file name of its own in a folder: not empty, not
 * "." or "..", no '/' and no control bytes. */
bool file_name_ok(const char *name);

#endif
