/* sema_includes_below.c: the interfaces below sema and its own private map
 * compile in sema's library; the control for the two files that must not
 * (test/CMakeLists.txt: layers_allowed_include). */
#include "front/front.h"
#include "ir/ir.h"
#include "sema/spec.h"
#include "support/support.h"

int layers_probe(void);
int layers_probe(void) { return 0; }
