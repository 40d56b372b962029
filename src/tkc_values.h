/* tkc_values.h: random streams and checked numbers of `tkc -run`
 * arguments (tkc_values.c). */
#ifndef TKC_VALUES_H
#define TKC_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "tk/tk.h"

/* splitmix64 from state *s: uniform 64-bit words, [0, 1) doubles, and
 * standard normal doubles (Box-Muller). */
uint64_t rng_next(uint64_t *s);
double rng_uniform(uint64_t *s);
double rng_normal(uint64_t *s);
/* A float; *overflow when it is finite as written but beyond fp64. */
bool parse_double(const char *s, double *out, bool *overflow);
/* An integer written in s, exactly in *bits; *fits when type t holds it. */
bool parse_int_value(const char *s, tk_dtype t, uint64_t *bits, bool *fits);
/* x truncated toward zero into integer type t; false when it does not fit. */
bool double_to_int(double x, tk_dtype t, uint64_t *bits);
/* Whether x stays finite in float type t (or was not finite as written). */
bool float_fits(double x, tk_dtype t);

#endif
