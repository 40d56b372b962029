/* sema_includes_codegen.c: sema sits below codegen, so its include path
 * lacks codegen's header and this file must not compile there
 * (test/CMakeLists.txt: layers_upward_include). */
#include "codegen/codegen.h"

int layers_probe(void);
int layers_probe(void) { return 0; }
