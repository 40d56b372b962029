/* sema/builtins/target.c: triton.language.target_info, the questions a
 * kernel or a constexpr function asks about the target it is compiled for
 * (`cuda_capability_geq(10, 0)` choosing a Blackwell path), answered from
 * the arch of the compilation as Triton answers them from the device:
 * tk compiles for NVIDIA GPUs, so is_cuda() holds and is_hip() does not.
 * The interpreter answers as host code's device checks do there. */
#include <stdlib.h>
#include <string.h>

#include "sema/spec.h"

static const char *const target_fns[] = {"is_cuda", "cuda_capability_geq", "is_hip", "is_hip_cdna3",
                                         "is_hip_cdna4"};

bool sema_target_known(const char *name)
{
    for (int i = 0; i < TK_ARRAY_LEN(target_fns); i++)
        if (!strcmp(name, target_fns[i]))
            return true;
    return false;
}

SVal sema_target_attr(Sema *s, const char *name, Span at)
{
    if (sema_target_known(name))
        return (SVal){.k = SV_BUILTIN, .s = name, .ns = "target_info"};
    if (!strcmp(name, "current_target"))
        return sema_err(s, at,
                        "target_info.current_target() is an object of the host, which tk does "
                        "not build; ask cuda_capability_geq(major, minor) or is_cuda()");
    return sema_err(s, at, "module 'triton.language.target_info' has no attribute '%s'", name);
}

/* The capability of the target as major * 10 + minor (90 for sm_90a); the
 * interpreter answers for the arch host code's device checks see (TK_ARCH,
 * else sm_80), -1 where there is none. */
static long target_capability(const Sema *s)
{
    const char *arch = s->f && s->f->arch ? s->f->arch : front_target();
    return arch && !strncmp(arch, "sm_", 3) ? strtol(arch + 3, NULL, 10) : -1;
}

SVal sema_target_call(Sema *s, const char *name, CallArgs *ca)
{
    if (strcmp(name, "cuda_capability_geq") != 0) {
        if (ca->npos || ca->nkw)
            return sema_err(s, ca->at, "target_info.%s() takes no arguments", name);
        return sv_bool(!strcmp(name, "is_cuda"));
    }
    int64_t v[2] = {0, 0};
    if (ca->npos < 1 || ca->npos > 2 || ca->nkw)
        return sema_err(s, ca->at, "cuda_capability_geq takes a major and a minor version");
    for (int i = 0; i < ca->npos; i++)
        if (!sema_const_int(s, ca->pos[i], ca->pos_at[i], "a capability", &v[i]))
            return (SVal){.k = SV_UNDEF};
    long cap = target_capability(s);
    return sv_bool(cap >= 0 && cap >= v[0] * 10 + v[1]);
}
