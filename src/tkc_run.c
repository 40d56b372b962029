/* tkc_run.c: `tkc -run file.tk -k KERNEL --grid X[,Y,Z] [options] ARGS...`.
 * Uses only the public API (a context with interpret = 1 unless --gpu),
 * so it runs kernels exactly as a host program would. Guarantees a clear
 * message and exit status 1 for any bad spec, count or failed launch. */
#define _POSIX_C_SOURCE 200809L
#include "tkc_run.h"
#include "tkc_dtype.h"
#include "tkc_values.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/support.h"
#include "tk/tk.h"

/* MAX_RUN: the arguments with the items of their tuples */
enum { MAX_ARGS = 256, MAX_DEFS = 64, MAX_RUN = 256 };

void tkc_run_usage(FILE *f)
{
    fprintf(f,
            "\n"
            "usage: tkc -run file.tk -k KERNEL --grid X[,Y[,Z]] [options] ARG...\n"
            "  compiles KERNEL and launches it on the reference interpreter (on the GPU\n"
            "  with --gpu), then prints every buffer argument.\n"
            "  -D NAME=VALUE       a constexpr value (None for any parameter)\n"
            "  -I DIR              a folder to search for imported package files\n"
            "  --num-warps N  --num-stages N  --num-ctas N\n"
            "  -o DIR              write each buffer to DIR/NAME.bin (raw, little-endian)\n"
            "                      instead of printing it\n"
            "  --seed N            seed of rand/randn buffers (default 0)\n"
            "  --gpu               run on the GPU instead of the interpreter\n"
            "  --debug             tl.device_assert and assert check (Triton's debug=True;\n"
            "                      also TRITON_DEBUG=1); without, they compile to nothing\n"
            "  --launch-pdl        programmatic dependent launch (Triton's launch_pdl=True):\n"
            "                      on sm_90 and later the kernel may start before the\n"
            "                      stream's previous kernel ends and waits in gdc_wait()\n"
            "  --max-steps N       stop an interpreter launch after N programs plus loop\n"
            "                      iterations (default: TK_INTERP_MAX_STEPS, else 2**30)\n"
            "  --bench             then time the launch with tk_bench (warm-up, L2 flush,\n"
            "                      CUDA events) and print median/min/max/p20/p80; on the\n"
            "                      interpreter the times are host wall-clock, labelled so\n"
            "  --bench-ms MS       the time budget of the timed runs (default 100)\n"
            "  ARG, one per runtime parameter in order, each optionally named NAME=ARG:\n"
            "    98432  -3         an integer scalar (i32; i64 when it does not fit)\n"
            "    1e-5  0.5         a float scalar (fp32)\n"
            "    TYPE:VALUE        a typed scalar: i64:5, u32:7, fp64:0.1, fp16:1.5, i1:1\n"
            "                      (i1:True and i1:False too)\n"
            "    zeros:TYPE:N      a buffer of N zeros\n"
            "    ones:TYPE:N       N ones\n"
            "    arange:TYPE:N     0, 1, ..., N-1\n"
            "    rand:TYPE:N       uniform in [0, 1) (integer types: 0..99), from --seed\n"
            "    randn:TYPE:N      standard normal (float types), from --seed\n"
            "    fill:TYPE:N:V     N copies of V\n"
            "    file:PATH:TYPE    the raw little-endian contents of PATH\n"
            "    (ARG,ARG,...)     a tuple (Triton's tuple arguments) of the specs here,\n"
            "                      nested tuples, None and constexprs (const:64, const:0.5,\n"
            "                      const:True); one item is (ARG,); items may be\n"
            "                      named (x=...), else NAME[i] (arg<N>[i]) names them; no\n"
            "                      item may hold ',', '(' or ')':\n"
            "                      ptrs=(x=rand:fp32:64,y=zeros:fp32:64)\n"
            "    desc:SHAPE:BLOCK[:STRIDES]:BUFFER\n"
            "                      a tensor descriptor (Triton's TensorDescriptor) over a\n"
            "                      new buffer made by BUFFER, a spec above: dims joined by\n"
            "                      x (at most 5), strides row-major by default and their\n"
            "                      last 1; desc:64x64:32x32:rand:fp16:4096\n"
            "  TYPE is fp16 bf16 fp32 fp64 fp8e4nv fp8e5 fp8e4b15 i1 i8 i16 i32 i64 u8 u16\n"
            "    u32 u64 (f32, float32, float8e4nv...)\n"
            "  example: tkc -run vector_add.tk -k vector_add --grid 4 -D BLOCK=256 \\\n"
            "             x=rand:f32:1000 y=rand:f32:1000 out=zeros:f32:1000 1000\n");
}

static int run_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tkc: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

/* ---- arguments ------------------------------------------------------------------------ */

typedef struct RunArg {
    const char *text; /* as given, for messages */
    int index;        /* 1-based position among the arguments */
    const char *name; /* NAME= or NULL */
    bool is_buf;
    tk_dtype dt;
    size_t n;
    void *host, *dev;
    tk_arg arg;
    bool is_desc;        /* a descriptor over the buffer (desc:...) */
    tk_tensor_desc desc; /* its base set when the buffer is made */
    bool is_tuple;       /* (...): arg is tk_tuple(n), its items the entries after it */
} RunArg;

/* The parsed arguments: each tuple followed by its items, as tk_launch
 * takes them. */
typedef struct RunArgs {
    RunArg a[MAX_RUN];
    int n;
} RunArgs;

/* ---- numbers that must fit their type ------------------------------------------------------ */

static int no_fit(const RunArg *a, const char *value, tk_dtype t)
{
    return run_fail("argument %d '%s': %s does not fit in %s", a->index, a->text, value,
                    dt_name(t));
}

/* The value of fill:TYPE:N:VALUE for every element: exact bits for an
 * integer type, a double for a float type. */
static int fill_value(const RunArg *a, const char *text, uint64_t *bits, double *x)
{
    bool fits, overflow;
    if (!is_float(a->dt) && parse_int_value(text, a->dt, bits, &fits))
        return fits ? 0 : no_fit(a, text, a->dt);
    if (!parse_double(text, x, &overflow))
        return run_fail("bad fill value '%s' in '%s'", text, a->text);
    if (overflow || !float_fits(*x, a->dt) || (!is_float(a->dt) && !double_to_int(*x, a->dt, bits)))
        return no_fit(a, text, a->dt);
    return 0;
}

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    *out = (size_t)v;
    return *s && *s != '-' && !*end && !errno;
}

static int read_file(const char *path, RunArg *a)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return run_fail("cannot open '%s': %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t es = dt_size(a->dt);
    if (len <= 0 || (size_t)len % es) {
        fclose(f);
        return run_fail("'%s' holds %ld bytes, not a whole number of %s elements", path, len,
                        dt_name(a->dt));
    }
    a->n = (size_t)len / es;
    a->host = malloc((size_t)len);
    size_t got = a->host ? fread(a->host, 1, (size_t)len, f) : 0;
    fclose(f);
    return got == (size_t)len ? 0 : run_fail("cannot read '%s'", path);
}

/* KIND:TYPE:N[:VALUE] or file:PATH:TYPE. */
/* Whether n elements of `size` bytes fit in the host's memory: a size
 * beyond it is refused before calloc, which may abort rather than fail
 * on such sizes under a sanitizer's allocator. */
static bool host_fits(size_t n, size_t size)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (n > SIZE_MAX / size)
        return false;
    return pages <= 0 || page <= 0 || n * size / (size_t)page <= (size_t)pages;
}

static int parse_buffer(char *spec, char **parts, int np, RunArg *a, uint64_t *seed)
{
    const char *kind = parts[0];
    a->is_buf = true;
    if (!strcmp(kind, "file")) {
        int d = np == 3 ? find_dtype(parts[2], strlen(parts[2])) : -1;
        if (d < 0)
            return run_fail("bad buffer spec '%s': expected file:PATH:TYPE", spec);
        a->dt = dtype_at(d);
        return read_file(parts[1], a);
    }
    bool fill = !strcmp(kind, "fill");
    int d = np >= 2 ? find_dtype(parts[1], strlen(parts[1])) : -1;
    if (np >= 2 && d < 0)
        return run_fail("unknown element type '%s' in '%s' (see tkc --help)", parts[1], spec);
    if (np != (fill ? 4 : 3) || d < 0 || !parse_size(parts[2], &a->n) || a->n == 0)
        return run_fail("bad buffer spec '%s': expected %s:TYPE:N%s with N > 0", spec, kind,
                        fill ? ":VALUE" : "");
    a->dt = dtype_at(d);
    double value = 0;
    uint64_t bits = 0;
    if (fill && fill_value(a, parts[3], &bits, &value))
        return 1;
    if (!strcmp(kind, "randn") && !is_float(a->dt))
        return run_fail("randn needs a float type, not %s, in '%s'", dt_name(a->dt), spec);
    if (!host_fits(a->n, dt_size(a->dt)))
        return run_fail("buffer '%s' is larger than this host's memory", spec);
    a->host = calloc(a->n, dt_size(a->dt));
    if (!a->host)
        return run_fail("out of memory for '%s'", spec);
    for (size_t i = 0; i < a->n; i++) {
        double x = 0;
        if (!strcmp(kind, "ones"))
            x = 1;
        else if (!strcmp(kind, "arange"))
            x = a->dt == TK_I1 ? (double)(i % 2) : (double)i;
        else if (!strcmp(kind, "rand"))
            x = is_float(a->dt) ? rng_uniform(seed) : (double)(rng_next(seed) % 100);
        else if (!strcmp(kind, "randn"))
            x = rng_normal(seed);
        else if (fill)
            x = value;
        if (fill && !is_float(a->dt))
            memcpy((unsigned char *)a->host + i * dt_size(a->dt), &bits, dt_size(a->dt));
        else
            set_elem(a->host, a->dt, i, x);
    }
    return 0;
}

static int parse_scalar(const char *text, RunArg *a)
{
    const char *colon = strchr(text, ':');
    tk_dtype dt;
    const char *v = text;
    if (colon) {
        int d = find_dtype(text, (size_t)(colon - text));
        if (d < 0)
            return run_fail("unknown type in scalar '%s'", text);
        dt = dtype_at(d);
        v = colon + 1;
    } else {
        dt = strpbrk(text, ".eEin") ? TK_F32 : TK_I32; /* 1e-5, 0.5, inf, nan */
    }
    a->dt = dt;
    bool overflow, fits;
    if (is_float(dt)) {
        double x;
        if (!parse_double(v, &x, &overflow))
            return run_fail("bad scalar '%s' (see tkc --help for argument specs)", text);
        if (overflow || !float_fits(x, dt))
            return no_fit(a, v, dt);
        a->arg = dt == TK_F64 ? tk_f64(x) : tk_f32((float)x);
        a->arg.dtype = dt;
        return 0;
    }
    uint64_t bits;
    if (dt == TK_I1 && (!strcmp(v, "True") || !strcmp(v, "False"))) /* a Python bool */
        v = v[0] == 'T' ? "1" : "0";
    if (!parse_int_value(v, dt, &bits, &fits))
        return run_fail("bad scalar '%s' (see tkc --help for argument specs)", text);
    if (!fits && !colon) /* an untyped integer is i32, or i64 when it needs it */
        parse_int_value(v, dt = TK_I64, &bits, &fits);
    if (!fits)
        return no_fit(a, v, dt);
    a->arg = tk_i64((int64_t)bits);
    a->arg.dtype = dt;
    return 0;
}

static bool is_buffer_kind(const char *k)
{
    static const char *kinds[] = {"zeros", "ones", "arange", "rand", "randn", "fill", "file"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(k, kinds[i]))
            return true;
    return false;
}

/* A buffer or scalar spec (what follows NAME=). */
static int parse_value(const char *text, RunArg *a, uint64_t *seed)
{
    char *copy = strdup(text);
    char *parts[6];
    int np = 0;
    for (char *s = copy; s && np < 6; np++) {
        parts[np] = s;
        s = strchr(s, ':');
        if (s)
            *s++ = 0;
    }
    int rc = np >= 2 && is_buffer_kind(parts[0]) ? parse_buffer((char *)text, parts, np, a, seed)
                                                 : parse_scalar(text, a);
    free(copy);
    return rc;
}

/* ---- descriptors: desc:SHAPE:BLOCK[:STRIDES]:BUFFER ---------------------------------- */

/* "64x32" (len bytes): 1 to TK_DESC_MAX_RANK dims, each min .. max. */
static bool parse_dims(const char *s, size_t len, int64_t min, int64_t max, int64_t *out, int *rank,
                       bool *too_many)
{
    *rank = 0;
    *too_many = false;
    const char *end = s + len;
    while (s < end) {
        if (*rank == TK_DESC_MAX_RANK)
            return *too_many = true, false;
        int64_t v = 0;
        const char *p = s;
        for (; p < end && *p >= '0' && *p <= '9' && v <= max; p++)
            v = v * 10 + (*p - '0');
        if (p == s || v < min || v > max || (p < end && *p != 'x') || (p + 1 == end))
            return false;
        out[(*rank)++] = v;
        s = p + (p < end);
    }
    return *rank > 0;
}

/* Part `what` of descriptor spec `whole`, into out; 1 with a message when bad. */
static int desc_dims(const char *whole, const char *what, const char *s, size_t len, int64_t min,
                     int64_t *out, int *rank)
{
    bool too_many;
    if (parse_dims(s, len, min, min ? INT32_MAX : INT64_MAX / 16, out, rank, &too_many))
        return 0;
    return run_fail("bad descriptor '%s': bad %s '%.*s' (%s)", whole, what, (int)len, s,
                    too_many  ? "at most 5 dims"
                        : min ? "dims such as 64x64, each 1 to "
                                "2147483647"
                              : "dims such as 64x1, each 0 or more");
}

/* The elements the descriptor reaches from its base, or -1 past int64. */
static int64_t desc_reach(const tk_tensor_desc *d)
{
    int64_t reach = 1, step;
    for (int i = 0; i < d->rank; i++)
        if (__builtin_mul_overflow(d->shape[i] - 1, d->strides[i], &step) ||
            __builtin_add_overflow(reach, step, &reach))
            return -1;
    return reach;
}

/* `text` follows "desc:"; `whole` is the argument as given. The dtype is the
 * buffer's; strides default to the shape's row-major order. */
static int parse_desc(const char *whole, const char *text, RunArg *a, uint64_t *seed)
{
    const char *f[3] = {0};
    int nf = 0;
    const char *p = text;
    while (nf < 3 && *p >= '0' && *p <= '9') {
        f[nf++] = p;
        p = strchr(p, ':');
        if (!p)
            break;
        p++;
    }
    if (nf < 2 || !p || !*p || !strchr(p, ':'))
        return run_fail("bad descriptor '%s': expected desc:SHAPE:BLOCK[:STRIDES]:BUFFER, e.g. "
                        "desc:64x64:32x32:rand:fp16:4096",
                        whole);
    int64_t shape[TK_DESC_MAX_RANK], strides[TK_DESC_MAX_RANK], block64[TK_DESC_MAX_RANK];
    int rank, brank, srank = 0;
    if (desc_dims(whole, "shape", f[0], (size_t)(f[1] - 1 - f[0]), 1, shape, &rank) ||
        desc_dims(whole, "block", f[1], (size_t)(strchr(f[1], ':') - f[1]), 1, block64, &brank) ||
        (nf == 3 && desc_dims(whole, "strides", f[2], (size_t)(p - 1 - f[2]), 0, strides, &srank)))
        return 1;
    if (brank != rank || (nf == 3 && srank != rank))
        return run_fail("bad descriptor '%s': the shape has %d dims but the %s %d", whole, rank,
                        brank != rank ? "block" : "strides", brank != rank ? brank : srank);
    for (int i = rank - 1; nf < 3 && i >= 0; i--) /* shape < 2^31, rank <= 4: no overflow */
        strides[i] = i == rank - 1 ? 1 : strides[i + 1] * shape[i + 1];
    int block[TK_DESC_MAX_RANK];
    for (int i = 0; i < rank; i++)
        block[i] = (int)block64[i];
    if (parse_value(p, a, seed))
        return 1;
    a->is_desc = true;
    a->desc = tk_tensor_desc_make(NULL, a->dt, rank, shape, strides, block);
    int64_t reach = desc_reach(&a->desc);
    if (reach < 0 || (uint64_t)reach > a->n)
        return run_fail("'%s': the descriptor reaches element %lld but the buffer holds %zu", whole,
                        (long long)reach, a->n);
    return 0;
}

static int parse_arg(const char *text, int index, const char *name, RunArgs *list, uint64_t *seed);

/* "(A,B,...)" (whole is the argument as given): the marker, then each item. */
static int parse_tuple(const char *whole, const char *text, RunArg *marker, RunArgs *list,
                       uint64_t *seed)
{
    size_t len = strlen(text);
    int depth = 0, deepest = 0;
    for (size_t i = 0; i < len && depth >= 0; i++) {
        depth += (text[i] == '(') - (text[i] == ')');
        deepest = depth > deepest ? depth : deepest;
    }
    if (depth != 0)
        return run_fail("bad tuple '%s': unbalanced parentheses", whole);
    if (deepest > 8) /* as deep as tk_launch takes them */
        return run_fail("bad tuple '%s': tuples nest more than 8 deep", whole);
    if (len < 2 || text[len - 1] != ')')
        return run_fail("bad tuple '%s': expected (ARG,ARG,...) with no text after ')'", whole);
    marker->is_tuple = true;
    const char *p = text + 1, *end = text + len - 1;
    int n = 0;
    while (p < end) {
        const char *e = p;
        for (int open = 0; e < end && (*e != ',' || open > 0); e++)
            open += (*e == '(') - (*e == ')');
        if (e == p)
            return run_fail("bad tuple '%s': an empty item", whole);
        char *item = strndup(p, (size_t)(e - p));
        char sub[256]; /* an unnamed tuple's items: arg<N>[i], as its buffer would be */
        if (marker->name)
            snprintf(sub, sizeof sub, "%s[%d]", marker->name, n);
        else
            snprintf(sub, sizeof sub, "arg%d[%d]", marker->index - 1, n);
        if (parse_arg(item, marker->index, sub, list, seed))
            return 1;
        n++;
        p = e + (e < end);
    }
    marker->arg = tk_tuple(n);
    return 0;
}

/* A tuple's constexpr item, const:VALUE: an integer, a float, True or
 * False (Triton's tuple of tl.constexpr values). */
static int parse_const_item(const char *whole, const char *v, RunArg *a)
{
    char *end;
    errno = 0;
    long long i = strtoll(v, &end, 0);
    if (*v && !*end && !errno) {
        a->arg = tk_const(NULL, i);
        return 0;
    }
    double f = strtod(v, &end);
    if (*v && !*end && isfinite(f)) {
        a->arg = tk_const_f(NULL, f);
        return 0;
    }
    if (!strcmp(v, "True") || !strcmp(v, "False")) {
        a->arg = tk_const_text(NULL, v[0] == 'T' ? "True" : "False");
        return 0;
    }
    return run_fail("bad tuple item '%s' in '%s': const: takes an integer, a float, True or False",
                    v, whole);
}

/* One argument (a tuple with its items) appended to list; `name` names it
 * unless the text does (NAME=...), and is given only to a tuple's items. */
static int parse_arg(const char *text, int index, const char *name, RunArgs *list, uint64_t *seed)
{
    if (list->n == MAX_RUN)
        return run_fail("too many arguments and tuple items (at most %d)", MAX_RUN);
    RunArg *a = &list->a[list->n++];
    a->text = text;
    a->index = index;
    a->name = name ? strdup(name) : NULL;
    const char *whole = text;
    const char *eq = strchr(text, '=');
    const char *colon = strchr(text, ':');
    const char *paren = strchr(text, '(');
    if (eq && (!colon || eq < colon) && (!paren || eq < paren)) {
        free((char *)a->name);
        a->name = strndup(text, (size_t)(eq - text));
        text = eq + 1;
    }
    if (text[0] == '(')
        return parse_tuple(whole, text, a, list, seed);
    if (!strcmp(text, "None") && name) { /* a tuple's item: a constexpr None */
        a->arg = tk_none(NULL);
        return 0;
    }
    if (!strncmp(text, "const:", 6) && name)
        return parse_const_item(whole, text + 6, a);
    if (!strncmp(text, "desc:", 5))
        return parse_desc(whole, text + 5, a, seed);
    return parse_value(text, a, seed);
}

/* ---- options ---------------------------------------------------------------------------- */

typedef struct RunOpts {
    const char *file, *kernel, *outdir;
    unsigned grid[3];
    bool have_grid, gpu, bench;
    double bench_ms;
    tk_arg defs[MAX_DEFS];
    int ndefs;
    tk_launch_options launch;
    uint64_t seed;
    uint64_t max_steps; /* 0: the context's default */
    const char *args[MAX_ARGS];
    int nargs;
    const char *search[MAX_DEFS + 1]; /* -I folders, NULL-terminated */
    int nsearch;
} RunOpts;

static int parse_grid(const char *s, unsigned g[3])
{
    g[0] = g[1] = g[2] = 1;
    char *end;
    for (int i = 0; i < 3; i++) {
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || errno || v == 0 || v > 0x7fffffff || *s == '-')
            break;
        g[i] = (unsigned)v;
        if (!*end)
            return 0;
        if (*end != ',')
            break;
        s = end + 1;
    }
    return run_fail("bad --grid '%s': expected X, X,Y or X,Y,Z with positive integers", s);
}

static bool looks_numeric(const char *a)
{
    return a[0] == '-' && (a[1] == '.' || (a[1] >= '0' && a[1] <= '9'));
}

static int parse_define(RunOpts *o, const char *text)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || o->ndefs == MAX_DEFS)
        return run_fail("bad -D '%s': expected NAME=VALUE", text);
    o->defs[o->ndefs++] = tk_const_text(strndup(text, (size_t)(eq - text)), eq + 1);
    return 0;
}

static int parse_opts(int argc, char **argv, RunOpts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "-k") || !strcmp(a, "--grid") || !strcmp(a, "-D") ||
            !strcmp(a, "--num-warps") || !strcmp(a, "--num-stages") || !strcmp(a, "--num-ctas") ||
            !strcmp(a, "-o") || !strcmp(a, "--seed") || !strcmp(a, "-I") ||
            !strcmp(a, "--bench-ms") || !strcmp(a, "--max-steps");
        if (takes && !next)
            return run_fail("%s needs a value", a);
        if (!strcmp(a, "-run"))
            continue;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return tkc_run_usage(stdout), 2;
        else if (!strcmp(a, "--gpu"))
            o->gpu = true;
        else if (!strcmp(a, "--bench"))
            o->bench = true;
        else if (!strcmp(a, "--launch-pdl"))
            o->launch.launch_pdl = 1;
        else if (!strcmp(a, "--debug"))
            o->launch.debug = 1; /* Triton's debug=True: asserts check */
        else if (!strcmp(a, "--bench-ms")) {
            char *end;
            o->bench_ms = strtod(argv[++i], &end);
            if (*end || !(o->bench_ms > 0))
                return run_fail("bad --bench-ms '%s': expected a positive number", argv[i]);
            o->bench = true;
        } else if (!strcmp(a, "--max-steps")) {
            size_t n = 0;
            if (!parse_size(argv[++i], &n) || n == 0)
                return run_fail("bad --max-steps '%s': expected a positive integer below 2**64",
                                argv[i]);
            o->max_steps = n;
        } else if (!strcmp(a, "-k"))
            o->kernel = argv[++i];
        else if (!strcmp(a, "--grid")) {
            if (parse_grid(argv[++i], o->grid))
                return 1;
            o->have_grid = true;
        } else if (!strcmp(a, "-D")) {
            if (parse_define(o, argv[++i]))
                return 1;
        } else if (!strncmp(a, "-D", 2) && a[2]) {
            if (parse_define(o, a + 2))
                return 1;
        } else if (!strcmp(a, "-I") || (!strncmp(a, "-I", 2) && a[2])) {
            if (o->nsearch == MAX_DEFS)
                return run_fail("too many -I options (at most %d)", MAX_DEFS);
            o->search[o->nsearch++] = a[2] ? a + 2 : argv[++i];
        } else if (!strcmp(a, "--num-warps") || !strcmp(a, "--num-stages")) {
            uint64_t v;
            bool fits;
            if (!parse_int_value(argv[++i], TK_I32, &v, &fits) || !fits || (int64_t)v < 1 ||
                (int64_t)v > 32)
                return run_fail("bad %s '%s'", a, argv[i]);
            *(a[6] == 'w' ? &o->launch.num_warps : &o->launch.num_stages) = (int)v;
        } else if (!strcmp(a, "--num-ctas")) {
            if (strcmp(argv[++i], "1") && strcmp(argv[i], "2"))
                return run_fail("bad --num-ctas '%s': expected 1 or 2", argv[i]);
            o->launch.num_ctas = argv[i][0] - '0';
        } else if (!strcmp(a, "-o"))
            o->outdir = argv[++i];
        else if (!strcmp(a, "--seed")) {
            bool fits;
            if (!parse_int_value(argv[++i], TK_U64, &o->seed, &fits) || !fits)
                return run_fail("bad --seed '%s': expected an integer from 0 to %llu", argv[i],
                                (unsigned long long)UINT64_MAX);
        } else if (a[0] == '-' && a[1] && !looks_numeric(a))
            return run_fail("unknown -run option '%s' (see tkc --help)", a);
        else if (!o->file)
            o->file = a;
        else if (o->nargs == MAX_ARGS)
            return run_fail("too many arguments (at most %d)", MAX_ARGS);
        else
            o->args[o->nargs++] = a;
    }
    if (!o->file)
        return run_fail("-run needs a .tk file (see tkc --help)");
    if (!o->kernel)
        return run_fail("-run needs -k KERNEL");
    if (!o->have_grid)
        return run_fail("-run needs --grid X[,Y[,Z]]");
    return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

static void print_buffer(const RunArg *a, int index)
{
    if (a->name)
        printf("%s: %s[%zu]\n", a->name, dt_name(a->dt), a->n);
    else
        printf("arg%d: %s[%zu]\n", index, dt_name(a->dt), a->n);
    for (size_t i = 0; i < a->n; i++) {
        double x = get_elem(a->host, a->dt, i);
        if (a->dt == TK_U64 || a->dt == TK_I64) {
            uint64_t v;
            memcpy(&v, (const unsigned char *)a->host + 8 * i, 8);
            if (a->dt == TK_I64)
                printf("%lld", (long long)(int64_t)v);
            else
                printf("%llu", (unsigned long long)v);
        } else {
            printf(is_float(a->dt) ? (a->dt == TK_F64 ? "%.17g" : "%.9g") : "%.0f", x);
        }
        putchar(i + 1 == a->n || i % 8 == 7 ? '\n' : ' ');
    }
}

static int write_buffer(const char *dir, const RunArg *a, int index)
{
    char path[4096];
    int n = a->name ? snprintf(path, sizeof path, "%s/%s.bin", dir, a->name)
                    : snprintf(path, sizeof path, "%s/arg%d.bin", dir, index);
    if (n < 0 || (size_t)n >= sizeof path)
        return run_fail("cannot write '%s/%s.bin': the path is too long", dir,
                        a->name ? a->name : "arg");
    size_t bytes = a->n * dt_size(a->dt);
    int err = file_write(path, a->host, bytes);
    if (err)
        return run_fail("cannot write '%s': %s", path, strerror(err));
    printf("wrote %s (%s, %zu elements)\n", path, dt_name(a->dt), a->n);
    return 0;
}

/* An argument for a message, control bytes shown as \xNN. */
static const char *shown(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 5 < cap; p++)
        n += (size_t)snprintf(buf + n, cap - n, *p < 0x20 || *p == 0x7f ? "\\x%02x" : "%c", *p);
    buf[n] = 0;
    return buf;
}

/* The file name buffer i is written to, less ".bin". */
static const char *file_stem(const RunArg *a, int i, char *buf, size_t cap)
{
    snprintf(buf, cap, "arg%d", i);
    return a->name ? a->name : buf;
}

/* -o DIR writes buffer NAME to DIR/NAME.bin (arg<N>.bin when unnamed): each
 * name must be a plain file name and no two buffers may share a file. Checked
 * before DIR is made, so a bad name writes nothing. */
static int check_out_names(const RunArgs *list)
{
    char b1[512], b2[512], s1[16], s2[16];
    const RunArg *args = list->a;
    for (int i = 0; i < list->n; i++) {
        if (!args[i].is_buf)
            continue;
        if (args[i].name && !file_name_ok(args[i].name))
            return run_fail("-o: the name of '%s' is not a plain file name (no '/', not . or "
                            "..)",
                            shown(args[i].text, b1, sizeof b1));
        const char *stem = file_stem(&args[i], args[i].index - 1, s1, sizeof s1);
        for (int j = 0; j < i; j++)
            if (args[j].is_buf &&
                strcmp(stem, file_stem(&args[j], args[j].index - 1, s2, sizeof s2)) == 0)
                return run_fail("-o: '%s' and '%s' would both write %s.bin",
                                shown(args[j].text, b1, sizeof b1),
                                shown(args[i].text, b2, sizeof b2), stem);
    }
    return 0;
}

/* ---- the run ---------------------------------------------------------------------------------- */

static int api_fail(const char *what) { return run_fail("%s: %s", what, tk_last_error()); }

/* One launch of the benchmarked kernel, as tk_bench calls it. */
typedef struct BenchLaunch {
    tk_kernel *k;
    tk_grid grid;
    const tk_arg *args;
    int nargs;
    const tk_launch_options *opts;
} BenchLaunch;

static tk_status bench_launch(void *user)
{
    BenchLaunch *b = user;
    return tk_launch(b->k, b->grid, b->args, b->nargs, b->opts);
}

/* --bench: times the launch and prints one line; the interpreter's times are
 * labelled as host wall-clock times. */
static int bench(RunOpts *o, tk_context *ctx, tk_kernel *k, const tk_arg *args, int n)
{
    BenchLaunch b = {k, {o->grid[0], o->grid[1], o->grid[2]}, args, n, &o->launch};
    tk_bench_options bo = {.rep_ms = o->bench_ms};
    tk_bench_result r;
    if (tk_bench(ctx, bench_launch, &b, &bo, &r) != TK_OK)
        return api_fail("bench");
    tk_device_props props;
    const char *where = "interpreter, host wall-clock time (not GPU time)";
    char gpu[300];
    if (!r.wall_clock && tk_device_properties(ctx, &props) == TK_OK) {
        snprintf(gpu, sizeof gpu, "GPU %s, CUDA events", props.name);
        where = gpu;
    }
    printf("bench %s: median %.4f ms  min %.4f  max %.4f  p20 %.4f  p80 %.4f  mean %.4f  "
           "(%d runs after %d warm-up; %s)\n",
           o->kernel, r.median_ms, r.min_ms, r.max_ms, r.p20_ms, r.p80_ms, r.mean_ms, r.runs,
           r.warmup_runs, where);
    return 0;
}

static int launch(RunOpts *o, RunArgs *list, tk_context *ctx)
{
    RunArg *args = list->a;
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    if (tk_module_load_file(ctx, o->file, &mod) != TK_OK)
        return api_fail(o->file);
    int rc = 0;
    if (tk_module_kernel(mod, o->kernel, &k) != TK_OK) {
        rc = api_fail(o->kernel);
        goto done;
    }
    tk_arg all[MAX_RUN + MAX_DEFS];
    int n = 0;
    for (int i = 0; i < list->n; i++) {
        RunArg *a = &args[i];
        if (a->is_buf) {
            size_t bytes = a->n * dt_size(a->dt);
            if (tk_alloc(ctx, bytes, &a->dev) != TK_OK ||
                tk_copy_to(ctx, a->dev, a->host, bytes) != TK_OK) {
                rc = api_fail("buffer");
                goto done;
            }
            a->arg = tk_ptr(a->dev, a->dt);
            if (a->is_desc) {
                a->desc.base = a->dev;
                a->arg = tk_desc(&a->desc);
            }
        }
        all[n++] = a->arg;
    }
    for (int i = 0; i < o->ndefs; i++)
        all[n++] = o->defs[i];
    if (tk_launch(k, (tk_grid){o->grid[0], o->grid[1], o->grid[2]}, all, n, &o->launch) != TK_OK ||
        tk_synchronize(ctx) != TK_OK) {
        rc = api_fail("launch");
        goto done;
    }
    for (int i = 0; i < list->n && !rc; i++) {
        RunArg *a = &args[i];
        if (!a->is_buf)
            continue;
        if (tk_copy_from(ctx, a->host, a->dev, a->n * dt_size(a->dt)) != TK_OK)
            rc = api_fail("reading back");
        else if (o->outdir)
            rc = write_buffer(o->outdir, a, a->index - 1);
        else
            print_buffer(a, a->index - 1);
    }
    if (!rc && o->bench)
        rc = bench(o, ctx, k, all, n);
done:
    for (int i = 0; i < list->n; i++)
        if (args[i].dev)
            tk_free(ctx, args[i].dev);
    tk_module_destroy(mod);
    return rc;
}

int tkc_run_main(int argc, char **argv)
{
    static RunOpts o;
    static RunArgs args;
    memset(&o, 0, sizeof o);
    memset(&args, 0, sizeof args);
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == 2 ? 0 : rc;
    for (int i = 0; i < o.nargs; i++)
        if (parse_arg(o.args[i], i + 1, NULL, &args, &o.seed))
            return 1;
    if (o.outdir && check_out_names(&args))
        return 1;
    if (o.outdir && mkdir(o.outdir, 0777) != 0 && errno != EEXIST)
        return run_fail("cannot create '%s': %s", o.outdir, strerror(errno));
    tk_context *ctx = NULL;
    tk_context_options co = {.device = 0,
                             .interpret = !o.gpu,
                             .search_paths = o.search,
                             .interp_max_steps = o.max_steps};
    if (tk_context_create(&ctx, &co) != TK_OK)
        return api_fail("context");
    rc = launch(&o, &args, ctx);
    tk_context_destroy(ctx);
    for (int i = 0; i < args.n; i++)
        free(args.a[i].host);
    return rc;
}
