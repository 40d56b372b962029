/* check.h: the one assertion macro of the C unit tests: a failed check is
 * reported with its file and line and counted; main returns failures != 0. */
#ifndef TK_CHECK_H
#define TK_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif
