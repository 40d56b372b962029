/* error.c: the per-thread message behind tk_last_error (api/api.c) (a fixed buffer:
 * reporting never allocates) and the checks of API arguments every stage's
 * public functions share. Below every stage, so the compiler and the
 * runtime report the same way. */
#include "support/support.h"

#include <stdio.h>
#include <stdarg.h>

static _Thread_local char err_message[4096];

const char *err_text(void) { return err_message; }

void err_clear(void) { err_message[0] = 0; }

tk_status err_set(tk_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_message, sizeof err_message, fmt, ap);
    va_end(ap);
    return s;
}

tk_status err_null_arg(const char *fn, const char *arg)
{
    return err_set(TK_ERR_INVALID, "%s: %s is NULL", fn, arg);
}

tk_status err_check_count(const char *fn, const char *ptr_name, const void *ptr,
                          const char *count_name, long count)
{
    if (count < 0)
        return err_set(TK_ERR_INVALID, "%s: %s is %ld", fn, count_name, count);
    if (!ptr && count > 0)
        return err_set(TK_ERR_INVALID, "%s: %s is NULL but %s is %ld", fn, ptr_name, count_name,
                       count);
    return TK_OK;
}
