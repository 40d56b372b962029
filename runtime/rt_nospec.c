/* rt_nospec.c: tk_kernel_set_no_specialize, Triton's do_not_specialize.
 * The named runtime parameters get no specialisation bits in the launch key
 * (rt_launch.c) nor in the signature compiled (rt_jit.c), so one variant
 * serves every value. The set is one word per kernel, read atomically by
 * launches; changing it only changes which variant later launches key to. */
#include <string.h>

#include "rt.h"

/* The runtime index of `name` in k, or -1 (constexprs have none). */
static int runtime_index(const tk_kernel *k, const char *name, bool *is_const)
{
    *is_const = false;
    for (int j = 0; j < k->nruntime; j++)
        if (strcmp(k->sig.param_names[k->runtime_idx[j]], name) == 0)
            return j;
    for (int p = 0; p < k->sig.nparams; p++)
        if (strcmp(k->sig.param_names[p], name) == 0)
            *is_const = true;
    return -1;
}

tk_status tk_kernel_set_no_specialize(tk_kernel *k, const char *const *names, int n)
{
    if (!k)
        return err_null_arg("tk_kernel_set_no_specialize", "k");
    tk_status s = err_check_count("tk_kernel_set_no_specialize", "names", names, "n", n);
    if (s != TK_OK)
        return s;
    uint64_t mask[RT_MAX_PARAMS / 64] = {0};
    for (int i = 0; i < n; i++) {
        bool is_const;
        if (!names[i])
            return err_set(TK_ERR_INVALID, "tk_kernel_set_no_specialize: names[%d] is NULL", i);
        int j = runtime_index(k, names[i], &is_const);
        if (j < 0 && is_const)
            return err_set(TK_ERR_INVALID,
                           "'%s' is a constexpr of kernel '%s'; only runtime "
                           "parameters are specialised",
                           names[i], k->name);
        if (j < 0)
            return err_set(TK_ERR_INVALID, "kernel '%s' has no runtime parameter '%s'", k->name,
                           names[i]);
        mask[j / 64] |= (uint64_t)1 << (j % 64);
    }
    for (int w = 0; w < RT_MAX_PARAMS / 64; w++)
        atomic_store_explicit(&k->no_spec[w], mask[w], memory_order_relaxed);
    return TK_OK;
}
