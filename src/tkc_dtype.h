/* tkc_dtype.h: element types of `tkc -run` buffers (tkc_dtype.c). */
#ifndef TKC_DTYPE_H
#define TKC_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "tk/tk.h"

/* The index of the type named s[0..len) ("fp16", "int32", ...), or -1. */
int find_dtype(const char *s, size_t len);
/* The type at an index find_dtype gave. */
tk_dtype dtype_at(int i);
bool is_float(tk_dtype t);
bool is_signed(tk_dtype t);
size_t dt_size(tk_dtype t);
const char *dt_name(tk_dtype t);
/* Element i of a host buffer of type t, as a double, and the reverse. */
double get_elem(const void *buf, tk_dtype t, size_t i);
void set_elem(void *buf, tk_dtype t, size_t i, double x);

#endif
