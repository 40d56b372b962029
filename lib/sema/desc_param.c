/* sema/desc_param.c: kernel parameters that receive a tensor descriptor
 * built on the host (Triton's TensorDescriptor). The signature spells one
 * as Triton does, `tensordesc<fp16[64, 64]>` (element type and block
 * shape). With no TMA descriptor to pass, the parameter expands, as Triton
 * lowers a descriptor argument without TMA, into the base pointer, the
 * shape (i32 each) and the strides (i64 each) but the last, which Triton
 * requires to be 1 and tk fixes to 1; in the kernel it is an SV_DESC. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sema/spec.h"

static const char *skip_ws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* "tensordesc<fp16[64, 64]>" (optionally ":16" after '>' for the base's
 * alignment). False, with *why, when text starts so but is malformed;
 * false with *why NULL when it is no descriptor at all. */
bool sema_parse_desc(const char *text, ArgSpec *out, const char **why)
{
    *why = NULL;
    const char *p = skip_ws(text);
    if (strncmp(p, "tensordesc<", 11) != 0)
        return false;
    p += 11;
    char name[32];
    int n = 0;
    while (*p && *p != '[' && !isspace((unsigned char)*p) && n < 31)
        name[n++] = *p++;
    name[n] = 0;
    DType dt = sema_dtype_name(!strncmp(name, "tl.", 3) ? name + 3 : name);
    p = skip_ws(p);
    if (dt == DT_VOID || dt == DT_I1 || *p != '[')
        return *why = "expected an element type and a block shape, e.g. tensordesc<fp16[64, 64]>",
               false;
    memset(out, 0, sizeof *out);
    p++;
    while (1) {
        char *end;
        long d = strtol(skip_ws(p), &end, 10);
        if (end == skip_ws(p) || d < 1 || d > SEMA_MAX_NUMEL || (d & (d - 1)))
            return *why = "each block dim must be a power of two", false;
        if (out->desc_rank == TK_MAX_RANK)
            return *why = "too many block dims", false;
        out->desc_block[out->desc_rank++] = (int)d;
        p = skip_ws(end);
        if (*p == ']')
            break;
        if (*p != ',')
            return *why = "expected ',' or ']' in the block shape", false;
        p++;
    }
    p = skip_ws(p + 1);
    if (*p != '>')
        return *why = "expected '>' after the block shape", false;
    p = skip_ws(p + 1);
    out->divisibility = 1;
    if (!strcmp(p, ":16")) {
        out->divisibility = 16;
        p += 3;
    }
    if (*skip_ws(p))
        return *why = "unexpected text after '>'", false;
    out->type = type_ptr(dt);
    return true;
}

/* Binds parameter `name` of the kernel to a descriptor whose parts are new
 * IR parameters: name (the base), name_shape<d>, name_stride<d>. */
void sema_bind_desc_param(Sema *s, const char *name, const ArgSpec *as, Span at)
{
    int r = as->desc_rank;
    SVal v = {.k = SV_DESC, .n = 1 + 2 * r};
    v.ty = type_block(as->type.elem, r, as->desc_block);
    v.items = arena_alloc(s->a, sizeof(SVal) * (size_t)v.n);
    v.items[0] = sv_tensor(ir_add_param(s->f, name, as->type, as->divisibility, at));
    for (int d = 0; d < r; d++)
        v.items[1 + d] = sv_tensor(ir_add_param(s->f, arena_printf(s->a, "%s_shape%d", name, d),
                                                type_scalar(DT_I32), 1, at));
    for (int d = 0; d < r; d++)
        v.items[1 + r + d] = d == r - 1
            ? sv_int(1)
            : sv_tensor(ir_add_param(s->f, arena_printf(s->a, "%s_stride%d", name, d),
                                     type_scalar(DT_I64), 1, at));
    env_set(s, s->env, name, v, at);
}
