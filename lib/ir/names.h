/* names.h: the words the IR's text form gives op sub-kinds (predicates,
 * reductions, atomics, ...), one table each, shared by the printer
 * (print.c, which defines them) and the reader (parse_attr.c). */
#ifndef TK_IR_NAMES_H
#define TK_IR_NAMES_H

extern const char *const ir_cmp_names[6];
extern const char *const ir_reduce_names[7];
extern const char *const ir_scan_names[2];
extern const char *const ir_atomic_names[7];
extern const char *const ir_dot_names[3];
extern const char *const ir_rand_names[4];
extern const char *const ir_hint_names[3];
extern const char *const ir_gdc_names[2];

#endif
