/* api.c: the public C API of the compiler (include/tk/tk.h), in one place:
 * the version, freeing text, the last error, status names, the host number
 * conversions, tk_compile / tk_compile_ir and the texts set for package
 * files (tk_source_overlay). It sits above the driver
 * and aot/: --emit=header is dispatched here to aot_lower, so the driver
 * never calls up into aot/. The runtime's tk_* functions (kernels,
 * launches, buffers) are in runtime/. */
#include "aot/aot.h"
#include "interp/interp.h"

const char *tk_version(void) { return TK_VERSION_STRING; }

void tk_free_text(char *text) { tk_xfree(text); }

const char *tk_last_error(void) { return err_text(); }

const char *tk_status_name(tk_status s)
{
    switch (s) {
    case TK_OK: return "TK_OK";
    case TK_ERR_COMPILE: return "TK_ERR_COMPILE";
    case TK_ERR_INVALID: return "TK_ERR_INVALID";
    case TK_ERR_NOT_FOUND: return "TK_ERR_NOT_FOUND";
    case TK_ERR_LAUNCH: return "TK_ERR_LAUNCH";
    case TK_ERR_NO_DEVICE: return "TK_ERR_NO_DEVICE";
    case TK_ERR_DRIVER: return "TK_ERR_DRIVER";
    case TK_ERR_KERNEL_FAULT: return "TK_ERR_KERNEL_FAULT";
    case TK_ERR_NO_MEMORY: return "TK_ERR_NO_MEMORY";
    case TK_ERR_IO: return "TK_ERR_IO";
    case TK_ERR_INTERNAL: return "TK_ERR_INTERNAL";
    }
    return "TK_ERR_UNKNOWN";
}

/* ---- host number conversions (the interpreter's, which round as the GPU does) ---- */

uint16_t tk_f32_to_f16(float x) { return interp_float_to_f16(x); }
float tk_f16_to_f32(uint16_t h) { return interp_f16_to_float(h); }
uint16_t tk_f32_to_bf16(float x) { return interp_float_to_bf16(x); }
float tk_bf16_to_f32(uint16_t h) { return interp_bf16_to_float(h); }
uint8_t tk_f32_to_fp8e4nv(float x) { return fp8_encode(DT_F8E4, x); }
float tk_fp8e4nv_to_f32(uint8_t b) { return (float)fp8_decode(DT_F8E4, b); }
uint8_t tk_f32_to_fp8e5(float x) { return fp8_encode(DT_F8E5, x); }
float tk_fp8e5_to_f32(uint8_t b) { return (float)fp8_decode(DT_F8E5, b); }
uint8_t tk_f32_to_fp8e4b15(float x) { return fp8_encode(DT_F8E4B15, x); }
float tk_fp8e4b15_to_f32(uint8_t b) { return (float)fp8_decode(DT_F8E4B15, b); }

/* ---- tk_compile ------------------------------------------------------------------ */

/* Source -> tokens | AST | per kernel IR, LLVM IR, PTX, a cubin | a header. */
static bool run_stages(Compilation *c, const tk_compile_options *o, StrBuf *out)
{
    if (o->emit == TK_EMIT_TOKENS)
        return lex_dump_tokens(&c->src, &c->diag, out) && c->diag.errors == 0;
    c->arch = o->arch ? o->arch : "sm_80";
    if (!comp_parse(c))
        return false;
    if (o->emit == TK_EMIT_AST) {
        ast_print(out, c->module);
        return true;
    }
    const char **kernels;
    int n = comp_choose_kernels(c, o, &kernels);
    if (n == 0)
        return false;
    if (o->emit == TK_EMIT_HEADER)
        return aot_lower(c, o, kernels[0], out);
    return comp_lower_kernels(c, o, kernels, n, out);
}

tk_status tk_compile(const char *filename, const char *src, size_t len,
                     const tk_compile_options *opts, char **out, size_t *out_len, char **diags)
{
    if (out)
        *out = NULL;
    if (diags)
        *diags = NULL;
    if (!src || !opts || !out)
        return err_null_arg("tk_compile", !src ? "src" : !opts ? "opts" : "out");
    tk_status s = comp_check_options("tk_compile", opts);
    if (s != TK_OK)
        return s;
    Compilation c;
    if (!comp_init(&c, filename, src, len))
        return err_set(TK_ERR_NO_MEMORY, "tk_compile: out of memory for a %zu-byte source", len);
    c.search_paths = opts->search_paths;
    StrBuf text;
    sb_init(&text);
    bool ok = run_stages(&c, opts, &text);
    return comp_finish(&c, ok, &text, out, out_len, diags);
}

tk_status tk_compile_ir(const char *filename, const char *text, size_t len,
                        const tk_compile_options *opts, const char *passes, char **out,
                        size_t *out_len, char **diags)
{
    if (out)
        *out = NULL;
    if (diags)
        *diags = NULL;
    if (!text || !opts || !out)
        return err_null_arg("tk_compile_ir", !text ? "text" : !opts ? "opts" : "out");
    tk_status s = comp_check_options("tk_compile_ir", opts);
    if (s != TK_OK)
        return s;
    Compilation c;
    if (!comp_init(&c, filename, text, len))
        return err_set(TK_ERR_NO_MEMORY, "tk_compile_ir: out of memory for %zu bytes of IR", len);
    StrBuf res;
    sb_init(&res);
    bool ok = comp_run_ir(&c, opts, passes, &res);
    return comp_finish(&c, ok, &res, out, out_len, diags);
}

/* ---- texts that stand for package files ------------------------------------------ */

tk_status tk_source_overlay(const char *path, const char *text)
{
    if (!path)
        return err_null_arg("tk_source_overlay", "path");
    if (!*path)
        return err_set(TK_ERR_INVALID, "tk_source_overlay: path is empty");
    return overlay_set(path, text);
}

tk_status tk_source_search_path(const char *dir)
{
    if (!dir)
        return err_null_arg("tk_source_search_path", "dir");
    if (!*dir)
        return err_set(TK_ERR_INVALID, "tk_source_search_path: dir is empty");
    return overlay_search_add(dir);
}
