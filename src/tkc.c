/* tkc: the command line, a thin layer over libtk's tk_compile.
 * Parses options from one table, reads the file, writes the output only
 * when compilation succeeded (support/file.c: never over a FIFO or a device,
 * through a fresh temp file + rename for a regular file), prints the
 * diagnostics, and exits 0 on success or 1 on any error. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/support.h"
#include "tk/tk.h"
#include "tkc_run.h"

#define MAX_DEFINES 256
#define MAX_SEARCH  64
#define MAX_ARCHS   16

typedef struct Options {
    const char *input;
    const char *output;
    tk_compile_options c;
    tk_define defines[MAX_DEFINES];
    const char *search[MAX_SEARCH + 1]; /* -I folders, NULL-terminated */
    int nsearch;
    char *signatures; /* every -s, ';'-separated (heap) */
    int nsignatures;
    const char *cubin_archs[MAX_ARCHS + 1]; /* --cubin-arch, NULL-terminated */
    int narchs;
    const char *lang;   /* -x: "tk", "ir", or NULL (from the file name) */
    const char *passes; /* --passes: the passes to run on IR input */
} Options;

static const struct {
    const char *name;
    tk_emit emit;
    const char *ext; /* default output file extension; NULL: stdout */
} emit_kinds[] = {
    {"tokens", TK_EMIT_TOKENS, NULL}, {"ast", TK_EMIT_AST, NULL},
    {"ir", TK_EMIT_IR, NULL},         {"llvm", TK_EMIT_LLVM, ".ll"},
    {"ptx", TK_EMIT_PTX, ".ptx"},     {"cubin", TK_EMIT_CUBIN, ".cubin"},
    {"header", TK_EMIT_HEADER, ".h"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tkc [options] file.tk\n"
            "\n"
            "  -o FILE             write the output to FILE ('-' is stdout; default: file.ptx,\n"
            "                      file.ll, file.cubin, file.h; stdout for the others)\n"
            "  -k NAME             the kernel to compile (default: every kernel no other\n"
            "                      function calls)\n"
            "  -D NAME=VALUE       a constexpr value (1024, 1e-5, True, tl.float16, 'text',\n"
            "                      a tuple (1, (2.5, None)), a @jit function's name); None\n"
            "                      for any parameter makes it a constexpr None\n"
            "  -I DIR              a folder to search for the package files the module\n"
            "                      imports jit code from (after it, the file's own folder\n"
            "                      and its parents)\n"
            "  -s, --signature S   runtime parameter types in order, e.g. \"*fp32:16,*fp32,i32\";\n"
            "                      a tuple parameter in parentheses: \"(*fp32:16,*fp32),i32\"\n"
            "                      (:16 divisible by 16, :1 equal to 1); --emit=header takes\n"
            "                      one -s per specialisation\n"
            "  --arch ARCH         sm_80 (default), sm_86, sm_89, sm_90, sm_90a\n"
            "  --num-warps N       warps per program (default 4)\n"
            "  --num-stages N      software pipelining depth (default 3)\n"
            "  --tma               sm_90a: copy the tiles of strided tensors that feed\n"
            "                      tl.dot with TMA; the kernel takes a tensor map per\n"
            "                      tile after its parameters (the tk runtime's launch)\n"
            "  --num-ctas N        CTAs per cluster, 1 (default) or 2 (Triton's num_ctas):\n"
            "                      with --tma on sm_90a, neighbouring programs along the\n"
            "                      grid's x run as a cluster and load the TMA tiles they\n"
            "                      share once (multicast); elsewhere as 1\n"
            "  -O0 .. -O3          LLVM optimisation level (default -O3)\n"
            "  -g0, --no-line-info no line tables (.file/.loc) in the PTX; they are on by\n"
            "                      default unless TK_DISABLE_LINE_INFO=1 (--line-info:\n"
            "                      on whatever the environment says)\n"
            "  --no-fp-fusion      keep float multiplies and adds apart; by default they\n"
            "                      fuse into fma, as in Triton, unless\n"
            "                      TK_DEFAULT_FP_FUSION=0 (--fp-fusion: fuse regardless)\n"
            "  --debug             tl.device_assert and assert statements check at run\n"
            "                      time; without it they compile to nothing, as in\n"
            "                      Triton, unless TRITON_DEBUG=1 (or TK_DEBUG=1)\n"
            "  --emit=KIND         tokens, ast, ir, llvm, ptx (default), cubin (assembled by\n"
            "                      the CUDA driver, else ptxas from PATH) or header (a C\n"
            "                      header with typed launchers; see tkc(1))\n"
            "  --out-name NAME     header: the launcher's C name (default: the kernel's)\n"
            "  --cubin-arch ARCH   header: also embed a cubin for ARCH where one can be\n"
            "                      assembled (repeatable)\n"
            "  -x LANG             the input language: tk (source) or ir (the text of\n"
            "                      --emit=ir; the default for files ending in .tkir)\n"
            "  --passes=LIST       IR input: the passes to run, comma-separated, in order\n"
            "                      (fold, flatten, induction, squeeze, fresh, dce,\n"
            "                      layout, pipeline, tma_store, ...: an unknown name\n"
            "                      lists them);\n"
            "                      without it none runs, since IR from --emit=ir has been\n"
            "                      through them all already\n"
            "  -v, --version       print the version\n"
            "  -h, --help          print this help\n"
            "\n");
    tkc_run_usage(f);
}

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "tkc: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 1;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *s == 0 || *end || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

static int set_emit(Options *o, const char *kind)
{
    for (size_t i = 0; i < sizeof emit_kinds / sizeof emit_kinds[0]; i++)
        if (strcmp(kind, emit_kinds[i].name) == 0) {
            o->c.emit = emit_kinds[i].emit;
            return 0;
        }
    return fail("unknown --emit kind '%s' (tokens, ast, ir, llvm, ptx, cubin, header)", kind);
}

static int add_define(Options *o, const char *text)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return fail("-D expects NAME=VALUE, got '%s'", text);
    if (o->c.ndefines == MAX_DEFINES)
        return fail("too many -D options (at most %s)", "256");
    char *name = strndup(text, (size_t)(eq - text));
    if (!name)
        return fail("out of memory%s", "");
    o->defines[o->c.ndefines].name = name;
    o->defines[o->c.ndefines].value = eq + 1;
    o->c.ndefines++;
    return 0;
}

/* Every -s is kept; --emit=header gets them ';'-separated, one per
 * specialisation. */
static int add_signature(Options *o, const char *sig)
{
    if (strchr(sig, ';'))
        return fail("a signature has no ';' (give one -s per specialisation): '%s'", sig);
    size_t have = o->signatures ? strlen(o->signatures) : 0;
    char *all = realloc(o->signatures, have + strlen(sig) + 2);
    if (!all)
        return fail("out of memory%s", "");
    if (have)
        all[have++] = ';';
    strcpy(all + have, sig);
    o->signatures = all;
    o->nsignatures++;
    return 0;
}

/* Options that take a value accept "-k NAME", "-kNAME" and "--opt=VALUE". */
static const char *take_value(int argc, char **argv, int *i, const char *opt)
{
    const char *a = argv[*i];
    size_t n = strlen(opt);
    if (strncmp(a, opt, n) == 0 && a[n] == '=' && opt[1] == '-')
        return a + n + 1;
    if (strncmp(a, opt, n) == 0 && a[n] && opt[1] != '-')
        return a + n;
    if (strcmp(a, opt) == 0 && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static int is_opt(const char *a, const char *opt)
{
    size_t n = strlen(opt);
    return strncmp(a, opt, n) == 0 && (a[n] == 0 || a[n] == '=' || opt[1] != '-');
}

static int parse_args(int argc, char **argv, Options *o, int *done)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int n;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            *done = 1;
            return 0;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
            printf("tkc %s\n", tk_version());
            *done = 1;
            return 0;
        } else if (strncmp(a, "--emit=", 7) == 0) {
            if (set_emit(o, a + 7))
                return 1;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            o->c.opt_level = a[2] - '0';
        } else if (is_opt(a, "-o")) {
            if (!(v = take_value(argc, argv, &i, "-o")))
                return fail("%s needs a file name", a);
            o->output = v;
        } else if (is_opt(a, "-k")) {
            if (!(v = take_value(argc, argv, &i, "-k")))
                return fail("%s needs a kernel name", a);
            o->c.kernel = v;
        } else if (is_opt(a, "-D")) {
            if (!(v = take_value(argc, argv, &i, "-D")) || add_define(o, v))
                return v ? 1 : fail("%s needs NAME=VALUE", a);
        } else if (is_opt(a, "-I")) {
            if (!(v = take_value(argc, argv, &i, "-I")))
                return fail("%s needs a folder", a);
            if (o->nsearch == MAX_SEARCH)
                return fail("too many -I options (at most %s)", "64");
            o->search[o->nsearch++] = v;
            o->c.search_paths = o->search;
        } else if (is_opt(a, "--signature") || strcmp(a, "-s") == 0) {
            if (!(v = take_value(argc, argv, &i, a[1] == '-' ? "--signature" : "-s")))
                return fail("%s needs a signature", a);
            if (add_signature(o, v))
                return 1;
        } else if (is_opt(a, "--out-name")) {
            if (!(v = take_value(argc, argv, &i, "--out-name")))
                return fail("%s needs a name", a);
            o->c.out_name = v;
        } else if (is_opt(a, "--cubin-arch")) {
            if (!(v = take_value(argc, argv, &i, "--cubin-arch")))
                return fail("%s needs an architecture", a);
            if (o->narchs == MAX_ARCHS)
                return fail("too many --cubin-arch options (at most %s)", "16");
            o->cubin_archs[o->narchs++] = v;
            o->c.cubin_archs = o->cubin_archs;
        } else if (is_opt(a, "--arch")) {
            if (!(v = take_value(argc, argv, &i, "--arch")))
                return fail("%s needs an architecture", a);
            o->c.arch = v;
        } else if (is_opt(a, "--num-warps")) {
            /* a number here; libtk checks it as it checks every request */
            if (!(v = take_value(argc, argv, &i, "--num-warps")) || !parse_int(v, 1, 32, &n))
                return fail("--num-warps needs a number from 1 to 32, got '%s'", v ? v : "");
            o->c.num_warps = n;
        } else if (is_opt(a, "--num-stages")) {
            if (!(v = take_value(argc, argv, &i, "--num-stages")) || !parse_int(v, 1, 16, &n))
                return fail("--num-stages needs a number from 1 to 16, got '%s'", v ? v : "");
            o->c.num_stages = n;
        } else if (is_opt(a, "--num-ctas")) {
            if (!(v = take_value(argc, argv, &i, "--num-ctas")) || !parse_int(v, 1, 2, &n))
                return fail("--num-ctas needs 1 or 2, got '%s'", v ? v : "");
            o->c.num_ctas = n;
        } else if (strcmp(a, "--tma") == 0) {
            o->c.tma = 1;
        } else if (strcmp(a, "-g0") == 0 || strcmp(a, "--no-line-info") == 0) {
            o->c.line_info = -1;
        } else if (strcmp(a, "--line-info") == 0) {
            o->c.line_info = 1;
        } else if (strcmp(a, "--debug") == 0) {
            /* the environment's knob, which the compile and the runtime's
             * launches (tkc -run) both read */
            if (setenv("TK_DEBUG", "1", 1) != 0)
                return fail("--debug: cannot set TK_DEBUG: %s", strerror(errno));
        } else if (strcmp(a, "--no-fp-fusion") == 0) {
            o->c.fp_fusion = -1;
        } else if (strcmp(a, "--fp-fusion") == 0) {
            o->c.fp_fusion = 1;
        } else if (is_opt(a, "-x")) {
            if (!(v = take_value(argc, argv, &i, "-x")) || (strcmp(v, "tk") && strcmp(v, "ir")))
                return fail("-x needs tk or ir, got '%s'", v ? v : "");
            o->lang = v;
        } else if (strncmp(a, "--passes=", 9) == 0) {
            o->passes = a + 9;
        } else if (strncmp(a, "--print-ir-before=", 18) == 0) {
            o->c.print_ir_before = a + 18;
        } else if (strncmp(a, "--print-ir-after=", 17) == 0) {
            o->c.print_ir_after = a + 17;
        } else if (a[0] == '-' && a[1]) {
            return fail("unknown option '%s' (see tkc --help)", a);
        } else if (o->input) {
            return fail("more than one input file ('%s')", a);
        } else {
            o->input = a;
        }
    }
    if (!o->input)
        return fail("no input file%s (see tkc --help)", "");
    if (!o->lang) {
        size_t len = strlen(o->input);
        o->lang = len > 5 && strcmp(o->input + len - 5, ".tkir") == 0 ? "ir" : "tk";
    }
    if (o->passes && strcmp(o->lang, "ir") != 0)
        return fail("--passes goes with IR input (-x ir or a .tkir file)%s", "");
    if (o->nsignatures > 1 && o->c.emit != TK_EMIT_HEADER)
        return fail("several -s options make the specialisations of --emit=header%s; other "
                    "outputs take one",
                    "");
    if (o->c.tma && o->c.emit == TK_EMIT_HEADER)
        return fail("--tma does not go with --emit=header%s: its launchers pass no tensor maps",
                    "");
    if (o->c.num_ctas > 1 && o->c.emit == TK_EMIT_HEADER)
        return fail("--num-ctas 2 does not go with --emit=header%s: its launchers launch no "
                    "clusters",
                    "");
    if ((o->c.out_name || o->narchs) && o->c.emit != TK_EMIT_HEADER)
        return fail("--out-name and --cubin-arch are options of --emit=header%s", "");
    o->c.signature = o->signatures;
    return 0;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static char *default_output(const Options *o)
{
    const char *ext = NULL;
    for (size_t i = 0; i < sizeof emit_kinds / sizeof emit_kinds[0]; i++)
        if (emit_kinds[i].emit == o->c.emit)
            ext = emit_kinds[i].ext;
    if (!ext)
        return NULL;
    size_t n = strlen(o->input);
    if (n > 3 && strcmp(o->input + n - 3, ".tk") == 0)
        n -= 3;
    else if (n > 5 && strcmp(o->input + n - 5, ".tkir") == 0)
        n -= 5;
    char *path = malloc(n + strlen(ext) + 1);
    if (path) {
        memcpy(path, o->input, n);
        strcpy(path + n, ext);
    }
    return path;
}

/* Standard output for "-" or no path; otherwise file_write: a regular file
 * is replaced through a fresh temp file and a rename, so a failed write never
 * leaves a partial output behind; a FIFO or a device is written through. */
static int write_output(const char *path, const char *text, size_t len)
{
    if (!path || strcmp(path, "-") == 0) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout))
            return fail("cannot write to standard output%s", "");
        return 0;
    }
    int err = file_write(path, text, len);
    if (err) {
        fprintf(stderr, "tkc: error: cannot write '%s': %s\n", path, strerror(err));
        return 1;
    }
    return 0;
}

/* What parse_args allocated (the -D names, the -s list); freed on every
 * way out of main, the early ones included. */
static void options_free(Options *o)
{
    for (int i = 0; i < o->c.ndefines; i++)
        free((char *)o->defines[i].name);
    free(o->signatures);
}

int main(int argc, char **argv)
{
    Options o;
    memset(&o, 0, sizeof o);
    o.c.emit = TK_EMIT_PTX;
    o.c.opt_level = -1;
    o.c.defines = o.defines;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-run") == 0)
            return tkc_run_main(argc, argv);
    int done = 0;
    if (parse_args(argc, argv, &o, &done) || done) {
        options_free(&o);
        return done ? 0 : 1;
    }
    size_t len;
    char *src = read_file(o.input, &len);
    if (!src) {
        fprintf(stderr, "tkc: error: cannot read '%s': %s\n", o.input, strerror(errno));
        options_free(&o);
        return 1;
    }
    char *out = NULL, *diags = NULL;
    size_t out_len = 0;
    tk_status st = strcmp(o.lang, "ir") == 0
        ? tk_compile_ir(o.input, src, len, &o.c, o.passes, &out, &out_len, &diags)
        : tk_compile(o.input, src, len, &o.c, &out, &out_len, &diags);
    if (diags)
        fputs(diags, stderr);
    int rc = 1;
    if (st == TK_OK) {
        char *def = o.output ? NULL : default_output(&o);
        rc = write_output(o.output ? o.output : def, out, out_len);
        free(def);
    } else if (!diags) {
        fprintf(stderr, "tkc: error: compilation failed (%s): %s\n", tk_status_name(st),
                tk_last_error());
    }
    tk_free_text(out);
    tk_free_text(diags);
    options_free(&o);
    free(src);
    return rc;
}
