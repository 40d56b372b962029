/* fuzz_sema.c: libFuzzer target for specialisation and the IR passes. Each
 * input that parses has every @jit function specialised with plausible
 * constexprs and argument types, then verified, folded, cleaned and printed.
 * An "internal error" (the verifier's verdict on broken IR) is a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver.h"
#include "aot/aot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Choices come from a last line with no newline after it, a comment such
 * as "#aZ3" (the lexer takes no control bytes, even in comments); with none,
 * every choice is the default, so plain seeds specialise as tkc's tests do. */
typedef struct Picker {
    const uint8_t *p;
    size_t n, at;
} Picker;

static int pick(Picker *k, int nchoices)
{
    if (k->at >= k->n)
        return 0;
    return k->p[k->at++] % nchoices;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static ArgSpec fuzz_arg(const KernelSig *sig, int i, Picker *k)
{
    static const DType elems[] = {DT_F32, DT_F16, DT_I32, DT_BF16, DT_U8, DT_I64};
    static const DType scalars[] = {DT_I32, DT_I64, DT_F32, DT_F16, DT_I1, DT_U32};
    ArgSpec a = {type_scalar(DT_I32), 16, false};
    Type ann = sig->annotated[i];
    if (ann.dt != DT_VOID && pick(k, 4) != 3)
        a.type = ann;
    else if (ends_with(sig->param_names[i], "ptr") || ann.dt == DT_PTR)
        a.type = type_ptr(elems[pick(k, TK_ARRAY_LEN(elems))]);
    else
        a.type = type_scalar(scalars[pick(k, TK_ARRAY_LEN(scalars))]);
    if (pick(k, 4) == 1)
        a.divisibility = 1;
    a.equal_to_1 = dtype_is_int(a.type.dt) && a.type.dt != DT_PTR && pick(k, 8) == 1;
    return a;
}

/* True when d holds a diagnostic of kind "internal error": a line
 * "NAME:L:C: internal error: ..." or "NAME: internal error: ...". */
static bool has_internal_error(const Diag *d, const char *name)
{
    size_t nlen = strlen(name);
    const char *line = d->text.data;
    while (line && *line) {
        if (strncmp(line, name, nlen) == 0 && line[nlen] == ':') {
            const char *p = line + nlen + 1;
            while ((*p >= '0' && *p <= '9') || *p == ':')
                p++;
            if (strncmp(p, " internal error:", 16) == 0)
                return true;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return false;
}

static void fuzz_kernel(Compilation *c, const char *kernel, Picker *k)
{
    KernelSig sig;
    if (!sema_kernel_sig(c->module, kernel, &c->arena, &sig))
        return;
    static const int values[] = {16, 1, 2, 32, 64, 128};
    int np = sig.nparams;
    SpecDefine *defs = arena_alloc(&c->arena, sizeof *defs * (size_t)(np + 1));
    ArgSpec *args = arena_alloc(&c->arena, sizeof *args * (size_t)(np + 1));
    if (!defs || !args)
        return;
    int nd = 0, na = 0;
    for (int i = 0; i < np; i++) {
        if (!sig.is_constexpr[i]) {
            args[na++] = fuzz_arg(&sig, i, k);
        } else if (!sig.has_default[i]) {
            memset(&defs[nd], 0, sizeof defs[nd]);
            defs[nd].name = sig.param_names[i];
            defs[nd].value.kind = CV_INT;
            defs[nd].value.i = values[pick(k, TK_ARRAY_LEN(values))];
            nd++;
        }
    }
    SpecRequest req = {kernel, defs, nd, args, na, 4, 3, NULL, true}; /* asserts read too */

    diag_free(&c->diag);
    diag_init(&c->diag, &c->src);
    c->diag.max_errors = 1 << 30;
    Arena ir_arena;
    arena_init(&ir_arena);
    IrFunc *f = comp_specialize(c, &c->diag, &req, &ir_arena, NULL);
    if (f) {
        StrBuf out;
        sb_init(&out);
        ir_print(&out, f);
        if (getenv("TK_FUZZ_VERBOSE") && out.data)
            fputs(out.data, stderr);
        sb_free(&out);
        /* dead-code removal on whatever sema built, then a recheck */
        pass_dce(f);
        if (!ir_arena.oom)
            ir_verify(f, &c->diag);
    }
    if (getenv("TK_FUZZ_VERBOSE") && c->diag.text.data)
        fputs(c->diag.text.data, stderr);
    if (has_internal_error(&c->diag, c->src.name))
        __builtin_trap();
    arena_free(&ir_arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Compilation c;
    if (!comp_init(&c, "fuzz.tk", (const char *)data, size))
        return 0;
    if (comp_parse(&c)) {
        size_t tail = size;
        while (tail > 0 && data[tail - 1] != '\n')
            tail--;
        if (tail < size && data[tail] == '#')
            tail++;
        Picker k = {data + tail, size - tail, 0};
        const char **names;
        int n = sema_kernel_names(c.module, &names, &c.arena);
        for (int i = 0; i < n; i++) {
            /* a name defined again names the same kernel: specialising it
             * once per definition only multiplied the time (a timeout) */
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = strcmp(names[j], names[i]) == 0;
            if (!seen)
                fuzz_kernel(&c, names[i], &k);
        }
    }
    comp_free(&c);
    return 0;
}
