/* rt_error.c: the per-thread error message behind tk_last_error, status
 * names and once-only warnings. Assumes nothing; every message is kept in
 * a fixed thread-local buffer, so reporting an error never allocates. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "rt.h"

static _Thread_local char rt_message[4096];

const char *tk_last_error(void) { return rt_message; }

void rt_clear_error(void) { rt_message[0] = 0; }

tk_status rt_error(tk_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rt_message, sizeof rt_message, fmt, ap);
    va_end(ap);
    return s;
}

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

/* Warnings go to stderr, not to tk_last_error: the call still succeeds. */
void rt_warn_once(int *flag, const char *fmt, ...)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int seen = *flag;
    *flag = 1;
    pthread_mutex_unlock(&lock);
    if (seen)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("tk: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
