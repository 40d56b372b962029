/* error.h: tk_last_error's per-thread message and the argument checks of
 * the public API (error.c). */
#ifndef TK_SUPPORT_ERROR_H
#define TK_SUPPORT_ERROR_H

#include "tk/tk.h"

/* Sets this thread's tk_last_error text and returns s. */
tk_status err_set(tk_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties this thread's tk_last_error text. */
void err_clear(void);
/* TK_ERR_INVALID for a NULL argument: "fn: arg is NULL". */
tk_status err_null_arg(const char *fn, const char *arg);
/* A pointer with its element count: TK_ERR_INVALID naming both when the
 * count is negative or the pointer is NULL with elements, else TK_OK. */
tk_status err_check_count(const char *fn, const char *ptr_name, const void *ptr,
                          const char *count_name, long count);

#endif
