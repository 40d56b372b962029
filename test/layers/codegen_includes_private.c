/* codegen_includes_private.c: codegen may use sema's interface only, never
 * its private map (sema/spec.h), so this file must not compile in codegen's
 * library (test/CMakeLists.txt: layers_private_include). */
#include "sema/spec.h"

int layers_probe(void);
int layers_probe(void) { return 0; }
