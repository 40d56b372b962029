/* sema/builtins/torch.c: the few names of torch that kernels and their
 * module constants read at compile time, as Triton's Python evaluates them
 * (tk runs no host code): torch's dtypes, torch.finfo(dt) and
 * torch.iinfo(dt) with their limits (`_MIN = tl.constexpr(
 * torch.finfo(torch.float32).min)`), and torch.version.hip, None since tk
 * runs on CUDA (`if tl.constexpr(torch.version.hip is not None):`).
 * Anything else of torch is an error that names it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sema/spec.h"

DType sema_torch_dtype(const char *name)
{
    static const struct {
        const char *name;
        DType dt;
    } extra[] = {
        {"half", DT_F16},        {"float", DT_F32}, {"double", DT_F64}, {"short", DT_I16},
        {"int", DT_I32},         {"long", DT_I64},  {"bool", DT_I1},    {"float8_e4m3fn", DT_F8E4},
        {"float8_e5m2", DT_F8E5}};
    for (int i = 0; i < TK_ARRAY_LEN(extra); i++)
        if (!strcmp(name, extra[i].name))
            return extra[i].dt;
    return strncmp(name, "float8", 6) ? sema_dtype_name(name) : DT_VOID;
}

/* finfo's fields of a float dtype: false when there is no such field. */
static bool finfo_field(DType dt, const char *field, double *out)
{
    static const struct {
        DType dt;
        double max, eps, tiny, resolution;
        int bits;
    } f[] = {
        {DT_F16, 65504.0, 0x1p-10, 0x1p-14, 1e-3, 16},
        {DT_BF16, 0x1.fep127, 0x1p-7, 0x1p-126, 1e-2, 16},
        {DT_F32, 0x1.fffffep127, 0x1p-23, 0x1p-126, 1e-6, 32},
        {DT_F64, 0x1.fffffffffffffp1023, 0x1p-52, 0x1p-1022, 1e-15, 64},
        {DT_F8E4, 448.0, 0x1p-3, 0x1p-6, 1.0, 8},
        {DT_F8E5, 57344.0, 0x1p-2, 0x1p-14, 1.0, 8},
    };
    for (int i = 0; i < TK_ARRAY_LEN(f); i++) {
        if (f[i].dt != dt)
            continue;
        double v = !strcmp(field, "max")                                  ? f[i].max
            : !strcmp(field, "min")                                       ? -f[i].max
            : !strcmp(field, "eps")                                       ? f[i].eps
            : !strcmp(field, "tiny") || !strcmp(field, "smallest_normal") ? f[i].tiny
            : !strcmp(field, "resolution")                                ? f[i].resolution
            : !strcmp(field, "bits")                                      ? f[i].bits
                                                                          : -1.0;
        *out = v;
        return v != -1.0;
    }
    return false;
}

static bool iinfo_field(DType dt, const char *field, int64_t *out)
{
    if (dtype_is_float(dt) || dt == DT_I1 || dt == DT_PTR)
        return false;
    int bits = dtype_bits(dt);
    bool sg = dtype_is_signed(dt);
    if (!strcmp(field, "bits"))
        *out = bits;
    else if (!strcmp(field, "max"))
        *out = sg ? (int64_t)((UINT64_MAX >> (65 - bits))) : (int64_t)(UINT64_MAX >> (64 - bits));
    else if (!strcmp(field, "min"))
        *out = sg ? -(int64_t)(UINT64_MAX >> (65 - bits)) - 1 : 0;
    else
        return false;
    return true;
}

/* torch.<name>, torch.version.<name>, torch.finfo(dt).<name>,
 * torch.iinfo(dt).<name>; finfo and iinfo are namespaces "torch.finfo.D"
 * with D the dtype's number. */
SVal sema_torch_attr(Sema *s, const char *ns, const char *name, Span at)
{
    if (!strcmp(ns, "torch")) {
        DType dt = sema_torch_dtype(name);
        if (dt != DT_VOID)
            return sv_dtype(type_scalar(dt));
        if (!strcmp(name, "version"))
            return (SVal){.k = SV_NS, .s = "torch.version"};
        if (!strcmp(name, "finfo") || !strcmp(name, "iinfo"))
            return (SVal){.k = SV_BUILTIN, .s = name, .ns = "torch"};
    } else if (!strcmp(ns, "torch.version")) {
        if (!strcmp(name, "hip"))
            return sv_none(); /* tk runs on CUDA */
    } else if (!strncmp(ns, "torch.finfo.", 12) || !strncmp(ns, "torch.iinfo.", 12)) {
        DType dt = (DType)atoi(ns + 12);
        double f;
        int64_t i;
        if (ns[6] == 'f' && finfo_field(dt, name, &f))
            return !strcmp(name, "bits") ? sv_int((int64_t)f) : sv_float(f);
        if (ns[6] == 'i' && dt == DT_U64 && !strcmp(name, "max"))
            return sema_err(s, at,
                            "torch.iinfo(uint64).max does not fit a 64-bit signed "
                            "constant, which tk's constexpr integers are");
        if (ns[6] == 'i' && iinfo_field(dt, name, &i))
            return sv_int(i);
        return sema_err(s, at, "tk knows torch.%.5s(%s).%s only as min, max, bits%s", ns + 6,
                        dtype_name(dt), name,
                        ns[6] == 'f' ? ", eps, tiny, smallest_normal and resolution" : "");
    }
    return sema_err(s, at,
                    "'%s.%s' is host code tk does not run (tk reads torch's dtypes, finfo, "
                    "iinfo and version.hip)",
                    ns, name);
}

/* torch.finfo(dt), torch.iinfo(dt). */
SVal sema_torch_call(Sema *s, const char *name, CallArgs *ca)
{
    bool f = !strcmp(name, "finfo");
    if (ca->npos != 1 || ca->nkw || ca->pos[0].k != SV_DTYPE)
        return sema_err(s, ca->at, "torch.%s() takes one dtype", name);
    DType dt = ca->pos[0].ty.dt;
    if (f != (dtype_is_float(dt) != 0) || dt == DT_I1)
        return sema_err(s, ca->pos_at[0], "torch.%s() takes %s dtype, got %s", name,
                        f ? "a floating-point" : "an integer", dtype_name(dt));
    return (SVal){.k = SV_NS, .s = arena_printf(s->a, "torch.%s.%d", name, (int)dt)};
}
