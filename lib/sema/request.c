/* request.c: the one constructor of a specialisation request. tk_compile
 * (and so tkc), AOT and the JIT (and so the tuner) build their requests
 * here, so the defaults and the check of the launch settings are the same
 * for all of them. */
#include "sema/spec.h"

#include <string.h>

bool spec_request_init(SpecRequest *req, const char *kernel, int num_warps, int num_stages,
                       const char *arch, char *why, size_t cap)
{
    memset(req, 0, sizeof *req);
    req->kernel = kernel;
    req->nargs = -1;
    req->arch = arch;
    req->num_warps = num_warps;
    req->num_stages = num_stages;
    return ir_launch_settings(&req->num_warps, &req->num_stages, NULL, why, cap);
}
