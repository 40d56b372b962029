/* tkc_run.h: `tkc -run`: compile one kernel, make its buffers from specs on
 * the command line, launch it (on the interpreter unless --gpu) through the
 * public API, and print or write the buffers afterwards. */
#ifndef TKC_RUN_H
#define TKC_RUN_H

#include <stdio.h>

/* argv may include the program name and the "-run" word; both are skipped.
 * Returns the exit status: 0, or 1 after printing an error. */
int tkc_run_main(int argc, char **argv);
/* The -run part of `tkc --help`. */
void tkc_run_usage(FILE *f);

#endif
