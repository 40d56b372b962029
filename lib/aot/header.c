/* aot/header.c: writes the C header of --emit=header from the compiled
 * specialisations of one kernel. Assumes aot_check passed. Guarantees: the
 * text compiles as C11 and C++ with -Wall -Wextra -Werror; everything it
 * defines is static (a header per translation unit) and named after the
 * launcher; a parameter whose name C or C++ reserves gets a trailing '_'.
 * The launcher's name is checked before anything is compiled (aot_check_name). */
#include <stdio.h>
#include <string.h>

#include "aot/aot.h"
#include "tk/tk.h"

/* ---- names and types ------------------------------------------------------------------- */

/* Every name the header cannot give a launcher or a parameter, by why. A
 * launcher with such a name, or a parameter left with one, would not compile
 * (or would redefine what the header relies on). */
typedef struct TakenNames {
    const char *why;
    const char *const *names;
} TakenNames;

static const char *const c_keywords[] = {
    /* C11 to C23 */
    "alignas", "alignof", "auto", "bool", "break", "case", "char", "const", "constexpr", "continue",
    "default", "do", "double", "else", "enum", "extern", "false", "float", "for", "goto", "if",
    "inline", "int", "long", "nullptr", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "static_assert", "struct", "switch", "thread_local", "true", "typedef",
    "typeof", "typeof_unqual", "union", "unsigned", "void", "volatile", "while", "_Alignas",
    "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex", "_Decimal128", "_Decimal32",
    "_Decimal64", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
    /* C++ up to C++20, alternative tokens included */
    "asm", "catch", "char8_t", "char16_t", "char32_t", "class", "co_await", "co_return", "co_yield",
    "concept", "const_cast", "consteval", "constinit", "decltype", "delete", "dynamic_cast",
    "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "operator",
    "private", "protected", "public", "reinterpret_cast", "requires", "static_cast", "template",
    "this", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "and", "and_eq",
    "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor", "xor_eq", NULL};

static const char *const c_library_names[] = {
    /* macros: the standard's, the compilers' in GNU modes, the ones the prelude uses */
    "NULL", "EOF", "errno", "stdin", "stdout", "stderr", "assert", "offsetof", "noreturn",
    "complex", "imaginary", "I", "linux", "unix", "va_start", "va_end", "va_arg", "va_copy",
    "PTHREAD_MUTEX_INITIALIZER", "PTHREAD_ONCE_INIT", "RTLD_NOW", "RTLD_LOCAL",
    /* types and functions of the C library the prelude names */
    "va_list", "size_t", "uintptr_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
    "uint16_t", "uint32_t", "uint64_t", "dlopen", "dlsym", "dlerror", "pthread_once",
    "pthread_once_t", "pthread_mutex_t", "pthread_mutex_lock", "pthread_mutex_unlock", "snprintf",
    "vsnprintf", "getenv", "memcpy", NULL};

static const char *const header_names[] = {
    /* the prelude's names outside its tk_ and TK_ prefixes: the driver's struct tags */
    "CUctx_st", "CUmod_st", "CUfunc_st", "CUstream_st",
    /* the launchers' own parameters */
    "stream", "grid", NULL};

static const TakenNames taken[] = {
    {"is a C or C++ keyword", c_keywords},
    {"is a macro or a name of the C library that the header uses", c_library_names},
    {"is one of the header's own names", header_names},
};

/* Why `name` cannot stand in the header as it is, or NULL when it can. */
static const char *taken_why(const char *name)
{
    for (int t = 0; t < TK_ARRAY_LEN(taken); t++)
        for (const char *const *n = taken[t].names; *n; n++)
            if (strcmp(name, *n) == 0)
                return taken[t].why;
    if (strncmp(name, "tk_", 3) == 0 || strncmp(name, "TK_", 3) == 0 || strcmp(name, "tk") == 0 ||
        strcmp(name, "TK") == 0)
        return "starts with tk_ or TK_, the prefixes of the header's own names";
    if ((name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z') || strstr(name, "__"))
        return "is reserved in C and C++ (a leading underscore and a capital, or a double "
               "underscore)";
    return NULL;
}

/* The parameter's name in C: as in Python, with a trailing '_' where the
 * Python name cannot stand in the header. */
static void param_name(StrBuf *out, const AotParam *p)
{
    sb_puts(out, p->name);
    if (taken_why(p->name))
        sb_putc(out, '_');
}

/* Pointers are 64-bit device addresses; fp16 and bf16 travel as their bits. */
static const char *c_type(Type t)
{
    switch (t.dt) {
    case DT_PTR: return "tk_devptr";
    case DT_I1: return "int";
    case DT_I8: return "int8_t";
    case DT_I16: return "int16_t";
    case DT_I32: return "int32_t";
    case DT_I64: return "int64_t";
    case DT_U8: return "uint8_t";
    case DT_U16: return "uint16_t";
    case DT_U32: return "uint32_t";
    case DT_U64: return "uint64_t";
    case DT_F16: return "uint16_t";
    case DT_BF16: return "uint16_t";
    case DT_F8E4:
    case DT_F8E5:
    case DT_F8E4B15: return "uint8_t";
    case DT_F32: return "float";
    case DT_F64: return "double";
    default: return "void";
    }
}

/* Triton's suffix: each index, then 'd' (divisible by 16) or 'c' (== 1). */
static void spec_name(StrBuf *out, const AotHeader *h, const AotSpec *s)
{
    sb_printf(out, "%s_", h->name);
    for (int i = 0; i < s->nparams; i++)
        sb_printf(out, "%d%s", i,
                  s->params[i].hint == 16      ? "d"
                      : s->params[i].hint == 1 ? "c"
                                               : "");
    if (s->nparams == 0)
        sb_puts(out, "noargs");
}

static int hint_count(const AotSpec *s)
{
    int n = 0;
    for (int i = 0; i < s->nparams; i++)
        n += s->params[i].hint != 0;
    return n;
}

/* ---- checks ------------------------------------------------------------------------------ */

static bool c_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static bool same_hints(const AotSpec *a, const AotSpec *b)
{
    for (int i = 0; i < a->nparams; i++)
        if (a->params[i].hint != b->params[i].hint)
            return false;
    return true;
}

bool aot_check_name(const char *name, bool option, Diag *d)
{
    const char *why = c_identifier(name) ? taken_why(name) : "is not a C identifier";
    if (!why)
        return true;
    if (option)
        diag_plain(d, DIAG_ERROR, "--out-name '%s': the launcher name %s", name, why);
    else
        diag_plain(d, DIAG_ERROR,
                   "kernel '%s': the name %s, so it cannot name the header's "
                   "launcher; give another with --out-name",
                   name, why);
    return false;
}

bool aot_check(const AotHeader *h, Diag *d)
{
    int errors = d->errors;
    const AotSpec *first = &h->specs[0];
    for (int k = 1; k < h->nspecs; k++) {
        const AotSpec *s = &h->specs[k];
        bool same = s->nparams == first->nparams;
        for (int i = 0; same && i < s->nparams; i++)
            same = type_eq(s->params[i].type, first->params[i].type);
        if (!same)
            diag_plain(d, DIAG_ERROR,
                       "specialisation '%s' has other parameter types than '%s'; "
                       "the specialisations of one header differ only in :16 and :1 hints",
                       s->signature, first->signature);
        for (int j = 0; same && j < k; j++)
            if (same_hints(s, &h->specs[j]))
                diag_plain(d, DIAG_ERROR, "specialisations '%s' and '%s' have the same hints",
                           h->specs[j].signature, s->signature);
    }
    return d->errors == errors;
}

/* ---- pieces of text ------------------------------------------------------------------------ */

/* "tk_devptr x_ptr, int32_t n" (with types) or "x_ptr, n". */
static void param_list(StrBuf *out, const AotSpec *s, bool types)
{
    for (int i = 0; i < s->nparams; i++) {
        if (i)
            sb_puts(out, ", ");
        if (types)
            sb_printf(out, "%s ", c_type(s->params[i].type));
        param_name(out, &s->params[i]);
    }
}

static void c_bytes(StrBuf *out, const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++)
        sb_printf(out, "%s0x%02x,", i % 16 ? " " : "\n    ", (unsigned char)data[i]);
}

static void banner(StrBuf *out, const AotHeader *h)
{
    sb_printf(out, "/* %s: launchers of kernel '%s' of %s, written by tkc %s --emit=header.\n",
              h->name, h->kernel, h->source, TK_VERSION_STRING);
    sb_printf(out, " * num_warps=%d, num_stages=%d; PTX for %s", h->num_warps, h->num_stages,
              h->arch);
    for (int i = 0; i < h->ndefines; i++) {
        char value[64];
        const ConstValue *v = &h->defines[i].value;
        if (v->kind == CV_INT)
            snprintf(value, sizeof value, "%lld", (long long)v->i);
        else if (v->kind == CV_FLOAT)
            snprintf(value, sizeof value, "%g", v->f);
        else if (v->kind == CV_BOOL)
            snprintf(value, sizeof value, "%s", v->i ? "True" : "False");
        else
            snprintf(value, sizeof value, "(given)");
        sb_printf(out, "%s%s=%s", i ? ", " : "; constexprs ", h->defines[i].name, value);
    }
    sb_puts(out,
            ".\n *\n * Launchers (pointer arguments are device addresses, tk_devptr; fp16 and"
            " bf16\n * scalars their 16 bits; each returns a tk_status, the message in"
            " tk_aot_last_error()):\n");
    sb_printf(out, " *   %s  the dispatcher: the most specialised launcher the arguments fit\n",
              h->name);
    for (int k = 0; k < h->nspecs; k++) {
        sb_puts(out, " *   ");
        spec_name(out, h, &h->specs[k]);
        sb_printf(out, "  %s", h->specs[k].signature);
        for (int c = 0; c < h->specs[k].ncubins; c++)
            sb_printf(out, "%s%s", c ? ", " : "; cubins ", h->specs[k].cubins[c].arch);
        sb_puts(out, "\n");
    }
    sb_printf(out,
              " * and %s_load(stream), which loads every specialisation in the stream's"
              " context. */\n",
              h->name);
}

/* #define NAME_BLOCK 1024 for the integer and bool constexprs, for grids. */
static void constexpr_macros(StrBuf *out, const AotHeader *h)
{
    for (int i = 0; i < h->ndefines; i++) {
        const ConstValue *v = &h->defines[i].value;
        if (v->kind == CV_INT || v->kind == CV_BOOL)
            sb_printf(out, "#define %s_%s %lld\n", h->name, h->defines[i].name, (long long)v->i);
    }
    sb_printf(out, "#define %s_NUM_WARPS %d\n\n", h->name, h->num_warps);
}

/* "sm_90a" -> 9, 0, exact */
static void arch_numbers(const char *arch, int *major, int *minor, int *exact)
{
    int n = 0;
    sscanf(arch, "sm_%d", &n);
    *major = n / 10;
    *minor = n % 10;
    *exact = arch[strlen(arch) - 1] == 'a';
}

/* The code and the per-context state of one specialisation. */
static void spec_data(StrBuf *out, const AotHeader *h, const AotSpec *s, const char *name)
{
    /* as bytes, like the cubins: ISO C promises string literals of 4095 only */
    sb_printf(out, "static const char %s_ptx[] = { /* the PTX text, NUL-terminated */", name);
    c_bytes(out, s->ptx, strlen(s->ptx) + 1);
    sb_puts(out, "\n};\n");
    for (int c = 0; c < s->ncubins; c++) {
        sb_printf(out, "static const unsigned char %s_%s[] = {", name, s->cubins[c].arch);
        c_bytes(out, s->cubins[c].data, s->cubins[c].len);
        sb_puts(out, "\n};\n");
    }
    if (s->ncubins) {
        sb_printf(out, "static const tk_aot_image %s_images[] = {\n", name);
        for (int c = 0; c < s->ncubins; c++) {
            int major, minor, exact;
            arch_numbers(s->cubins[c].arch, &major, &minor, &exact);
            sb_printf(out, "    {\"%s\", %d, %d, %d, %s_%s, sizeof %s_%s},\n", s->cubins[c].arch,
                      major, minor, exact, name, s->cubins[c].arch, name, s->cubins[c].arch);
        }
        sb_puts(out, "};\n");
    }
    sb_printf(out, "static pthread_mutex_t %s_lock = PTHREAD_MUTEX_INITIALIZER;\n", name);
    sb_printf(out, "static tk_aot_loaded %s_loaded[TK_AOT_MAX_CONTEXTS];\n", name);
    sb_printf(out, "static int %s_nloaded;\n", name);
    sb_printf(out, "static const tk_aot_spec %s_spec = {\"%s\", \"%s\", %s_ptx, ", name, h->kernel,
              name, name);
    if (s->ncubins)
        sb_printf(out, "%s_images, %d, ", name, s->ncubins);
    else
        sb_puts(out, "NULL, 0, ");
    sb_printf(out, "%d, %d, %d,\n    &%s_lock, %s_loaded, &%s_nloaded};\n\n", h->num_warps,
              s->dynamic_shared, s->threads, name, name, name);
}

/* NAME_fits(...): 1 when the arguments meet the specialisation's hints. */
static void spec_fits(StrBuf *out, const AotSpec *s, const char *name)
{
    sb_printf(out, "/* 1 when the arguments meet the hints of %s. */\n", s->signature);
    sb_printf(out, "static inline int %s_fits(", name);
    param_list(out, s, true);
    if (!s->nparams)
        sb_puts(out, "void");
    sb_puts(out, ")\n{\n");
    for (int i = 0; i < s->nparams; i++)
        if (!s->params[i].hint) {
            sb_puts(out, "    (void)");
            param_name(out, &s->params[i]);
            sb_puts(out, ";\n");
        }
    sb_puts(out, "    return ");
    int n = 0;
    for (int i = 0; i < s->nparams; i++) {
        if (!s->params[i].hint)
            continue;
        sb_puts(out, n++ ? " &&\n           " : "");
        param_name(out, &s->params[i]);
        sb_puts(out, s->params[i].hint == 16 ? " % 16 == 0" : " == 1");
    }
    sb_puts(out, n ? ";\n}\n\n" : "1;\n}\n\n");
}

/* The typed launcher of one specialisation. */
static void spec_launcher(StrBuf *out, const AotSpec *s, const char *name)
{
    sb_printf(out, "/* Launches %s; TK_ERR_INVALID if the arguments do not meet its hints. */\n",
              s->signature);
    sb_printf(out, "static inline tk_status %s(tk_stream stream, tk_grid grid%s", name,
              s->nparams ? ", " : "");
    param_list(out, s, true);
    sb_puts(out, ")\n{\n");
    sb_printf(out, "    if (!%s_fits(", name);
    param_list(out, s, false);
    sb_printf(out,
              "))\n        return tk_aot_error(TK_ERR_INVALID, \"%s: the arguments do not "
              "meet its hints (%s)\");\n",
              name, s->signature);
    for (int i = 0; i < s->nparams; i++)
        if (s->params[i].type.dt == DT_I1) { /* i1 travels as one byte */
            sb_printf(out, "    unsigned char tk_aot_b%d = ", i);
            param_name(out, &s->params[i]);
            sb_puts(out, " != 0;\n");
        }
    if (s->nparams) {
        sb_puts(out, "    void *tk_aot_params[] = {");
        for (int i = 0; i < s->nparams; i++) {
            sb_puts(out, i ? ", " : "");
            if (s->params[i].type.dt == DT_I1)
                sb_printf(out, "&tk_aot_b%d", i);
            else {
                sb_putc(out, '&');
                param_name(out, &s->params[i]);
            }
        }
        sb_puts(out, "};\n");
    }
    sb_printf(out, "    return tk_aot_launch(&%s_spec, stream, grid, %s);\n}\n\n", name,
              s->nparams ? "tk_aot_params" : "NULL");
}

/* The dispatcher: the specialisations by hint count, most first, as link.py. */
static void dispatcher(StrBuf *out, const AotHeader *h)
{
    const AotSpec *first = &h->specs[0];
    sb_printf(out,
              "/* Launches the most specialised of the %d launchers above that the "
              "arguments fit. */\n",
              h->nspecs);
    sb_printf(out, "static inline tk_status %s(tk_stream stream, tk_grid grid%s", h->name,
              first->nparams ? ", " : "");
    param_list(out, first, true);
    sb_puts(out, ")\n{\n");
    StrBuf name;
    sb_init(&name);
    for (int want = first->nparams; want >= 0; want--)
        for (int k = 0; k < h->nspecs; k++) {
            if (hint_count(&h->specs[k]) != want)
                continue;
            name.len = 0;
            spec_name(&name, h, &h->specs[k]);
            sb_printf(out, "    if (%s_fits(", name.data);
            param_list(out, first, false);
            sb_printf(out, "))\n        return %s(stream, grid%s", name.data,
                      first->nparams ? ", " : "");
            param_list(out, first, false);
            sb_puts(out, ");\n");
        }
    sb_free(&name);
    sb_printf(out,
              "    return tk_aot_error(TK_ERR_INVALID, \"%s: the arguments fit none of its "
              "specialisations (",
              h->name);
    for (int k = 0; k < h->nspecs; k++)
        sb_printf(out, "%s%s", k ? "; " : "", h->specs[k].signature);
    sb_puts(out, ")\");\n}\n\n");
}

static void load_all(StrBuf *out, const AotHeader *h)
{
    sb_printf(out,
              "/* Loads every specialisation in the context of `stream` (the current one "
              "for NULL)\n * without launching: errors early, and no load time in a "
              "timed region. */\n");
    sb_printf(out, "static inline tk_status %s_load(tk_stream stream)\n{\n", h->name);
    sb_puts(out, "    tk_status st = TK_OK;\n");
    StrBuf name;
    sb_init(&name);
    for (int k = 0; k < h->nspecs; k++) {
        name.len = 0;
        spec_name(&name, h, &h->specs[k]);
        sb_printf(out, "    if (st == TK_OK)\n        st = tk_aot_preload(&%s_spec, stream);\n",
                  name.data);
    }
    sb_free(&name);
    sb_puts(out, "    return st;\n}\n\n");
}

void aot_write_header(StrBuf *out, const AotHeader *h)
{
    banner(out, h);
    sb_puts(out, "\n");
    sb_puts(out, aot_prelude);
    sb_printf(out, "\n/* ---- %s ---- */\n#ifndef TK_AOT_KERNEL_%s\n#define TK_AOT_KERNEL_%s\n\n",
              h->name, h->name, h->name);
    constexpr_macros(out, h);
    StrBuf name;
    sb_init(&name);
    for (int k = 0; k < h->nspecs; k++) {
        name.len = 0;
        spec_name(&name, h, &h->specs[k]);
        sb_printf(out, "/* ---- %s: %s ---- */\n", name.data, h->specs[k].signature);
        spec_data(out, h, &h->specs[k], name.data);
        spec_fits(out, &h->specs[k], name.data);
        spec_launcher(out, &h->specs[k], name.data);
    }
    sb_free(&name);
    dispatcher(out, h);
    load_all(out, h);
    sb_printf(out, "#endif /* TK_AOT_KERNEL_%s */\n", h->name);
}
