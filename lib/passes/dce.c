/* dce.c: dead code elimination. */
#include "compiler.h"

void pass_dce(IrFunc *f) { ir_renumber(f); }
