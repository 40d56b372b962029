/* fold.c: constant folding. */
#include "compiler.h"

void pass_fold(IrFunc *f) { ir_renumber(f); }
