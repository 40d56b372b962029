/* sema/builtins/importlib.c: importlib as host helpers use it to find a
 * module of triton's (xformers' libdevice lookup tries libdevice's
 * locations with importlib.util.find_spec, loads the first it finds and
 * takes a function from it with getattr), answered for the modules tk
 * reads: find_spec and import_module of such a module give it (a spec is
 * the module's namespace behind "importlib.spec:"), module_from_spec gives
 * the module back and its loader's exec_module does nothing; find_spec of
 * a module of triton's that tk does not have gives None. Another module is
 * an error that names it: tk runs no other Python. */
#include <string.h>

#include "sema/spec.h"

static const char spec_prefix[] = "importlib.spec:";

static SVal fn(const char *ns, const char *name)
{
    return (SVal){.k = SV_BUILTIN, .s = name, .ns = ns};
}

SVal sema_importlib_attr(Sema *s, const char *ns, const char *name, Span at)
{
    if (!strcmp(ns, "importlib") && !strcmp(name, "util"))
        return (SVal){.k = SV_NS, .s = "importlib.util"};
    if (!strcmp(ns, "importlib") && !strcmp(name, "import_module"))
        return fn(ns, name);
    if (!strcmp(ns, "importlib.util") &&
        (!strcmp(name, "find_spec") || !strcmp(name, "module_from_spec")))
        return fn(ns, name);
    if (!strncmp(ns, spec_prefix, sizeof spec_prefix - 1) && !strcmp(name, "loader"))
        return (SVal){.k = SV_NS, .s = "importlib.loader"};
    if (!strcmp(ns, "importlib.loader") && !strcmp(name, "exec_module"))
        return fn(ns, name);
    return sema_err(s, at,
                    "tk reads importlib only to find triton's modules: '%s' of %s is "
                    "not read",
                    name, ns);
}

/* The namespace of a module path tk reads, as a value. */
static SVal module_value(Sema *s, SVal path, Span at, bool spec)
{
    if (path.k != SV_STR)
        return sema_err(s, at, "a module path must be a string, got %s", sv_describe(s, path));
    const char *ns = sema_module_ns(path.s);
    if (!ns && spec && !strncmp(path.s, "triton.", 7))
        return sv_none(); /* a module of triton's that this Triton does not have */
    if (!ns)
        return sema_err(s, at, "tk reads importlib only to find triton's modules, not '%s'",
                        path.s);
    return (SVal){.k = SV_NS, .s = spec ? arena_printf(s->a, "%s%s", spec_prefix, ns) : ns};
}

SVal sema_importlib_call(Sema *s, const char *ns, const char *name, CallArgs *ca)
{
    if (ca->npos != 1 || ca->nkw)
        return sema_err(s, ca->at, "%s.%s takes one argument here", ns, name);
    SVal a = ca->pos[0];
    if (!strcmp(name, "exec_module"))
        return sv_none();
    if (!strcmp(name, "module_from_spec")) {
        if (a.k != SV_NS || strncmp(a.s, spec_prefix, sizeof spec_prefix - 1))
            return sema_err(s, ca->pos_at[0], "module_from_spec takes a spec from find_spec");
        return (SVal){.k = SV_NS, .s = a.s + sizeof spec_prefix - 1};
    }
    return module_value(s, a, ca->pos_at[0], !strcmp(name, "find_spec"));
}
