/* launch.c: the launch settings every kernel carries (num_warps and
 * num_stages): their defaults and their one check, with one message.
 * Every way a kernel is asked for goes through it: tk_compile's options,
 * the specialisation request (sema's spec_request_init), launch options,
 * autotune configs and IR read back from text. */
#include "ir/ir.h"

#include <stdio.h>

bool ir_launch_settings(int *num_warps, int *num_stages, const char *field, char *why, size_t cap)
{
    const char *pre = field ? field : "";
    int w = *num_warps, s = *num_stages;
    if (w < 0 || w > 32 || (w & (w - 1))) {
        snprintf(why, cap,
                 "%snum_warps is %d (a power of two from 1 to 32, or 0 for the "
                 "default %d)",
                 pre, w, TK_DEFAULT_NUM_WARPS);
        return false;
    }
    if (s < 0) {
        snprintf(why, cap, "%snum_stages is %d (1 or more, or 0 for the default %d)", pre, s,
                 TK_DEFAULT_NUM_STAGES);
        return false;
    }
    *num_warps = w ? w : TK_DEFAULT_NUM_WARPS;
    *num_stages = s ? s : TK_DEFAULT_NUM_STAGES;
    return true;
}

bool ir_launch_ctas(int *num_ctas, const char *field, char *why, size_t cap)
{
    int n = *num_ctas;
    if (n < 0 || n > 2) {
        snprintf(why, cap, "%snum_ctas is %d (1 or 2, or 0 for the default 1)", field ? field : "",
                 n);
        return false;
    }
    *num_ctas = n ? n : 1;
    return true;
}
