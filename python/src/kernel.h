/* kernel.h: the Kernel object shared by kernel.c (binding and launching),
 * kernel_type.c (the Python type, tuning, warmup, kernel[grid]) and
 * compiled.c (the compiled-kernel objects a launch and warmup give). */
#ifndef TKPY_KERNEL_H
#define TKPY_KERNEL_H
#include "tkpy.h"

typedef struct Kernel {
    PyObject_HEAD
    char *path, *name;
    char *where;  /* "file:line: def name(...)" for messages */
    char *source; /* the text to compile instead of the file, or NULL */
    int live;     /* whether source holds the live module's bindings yet */
    int nparams;
    char **pnames;
    PyObject **pobjs; /* the names as interned str, matched by identity first */
    unsigned char *is_const;
    unsigned char *no_spec;   /* do_not_specialize, per parameter */
    tk_dtype *types;          /* the scalar type an annotation declares, or TK_VOID */
    PyObject *defaults;       /* dict: parameter -> default value */
    PyObject *heuristics;     /* list of (name, fn) above @autotune, or NULL */
    PyObject *cfg_heuristics; /* those below it (run per config when tuned), or NULL */
    PyObject *configs;        /* list of Config objects (with .kwargs), or NULL */
    PyObject *prune;          /* early_config_prune(configs, named_args), or NULL */
    PyObject *pre_hook;       /* @autotune's pre_hook(nargs) around timed runs, or NULL */
    PyObject *post_hook;      /* its post_hook(nargs, exception=None), or NULL */
    int config_hooks;         /* some config has a pre_hook */
    int debug;                /* @jit(debug=): 1 on, -1 off, 0 the environment's (TRITON_DEBUG) */
    PyObject *tune_keep;      /* list of bytes the tuning strings live in */
    tk_config *cfgs;
    tk_define *defs;
    const char **key;
    int ncfgs, nkey;
    double warmup_ms, rep_ms;
    tk_kernel *k[TKPY_MAX_DEV + 1]; /* [0] the interpreter, [1 + d] GPU d */
    PyObject *compiled; /* dict: specialisation key -> compiled-kernel object, or NULL */
    PyObject *last_key; /* bytes: the key of the last compiled kernel looked up, or NULL */
    PyObject *last_ck;  /* that compiled kernel */
} Kernel;

/* The most extra defines (a config's, and its heuristics') one launch adds. */
enum { TKPY_MAX_EXTRA = 2 * TKPY_MAX_ARGS };

/* Binds, converts and places a launch's arguments and finds the tk_kernel;
 * *meta gets the named values when need_meta, heuristics or pruning want
 * them. With per_config non-NULL the launch may tune: *per_config tells
 * whether the heuristics below @autotune are left to the tuner, per config;
 * otherwise (NULL, or a launch that gives a config's constexprs) they run
 * here. NULL with an exception set on failure (L->ctx set once placed). */
tk_kernel *tkpy_prepare(Kernel *K, PyObject *args, PyObject *kw, Launch *L, PyObject **objs,
                        PyObject **meta, tk_launch_options *o, int need_meta, int *per_config);
/* kernel[grid](*args, **kw): the compiled kernel it ran (None when the
 * grid was empty), or NULL with an exception set. */
PyObject *tkpy_do_launch(Kernel *K, PyObject *grid, PyObject *args, PyObject *kw);
void tkpy_free_tuning(Kernel *K);
/* The compiled-kernel object of a launch's specialisation (compiled.c):
 * the arguments a (L's slots), the extra defines of a tuned launch's
 * config, and the options; the one made before when the specialisation is
 * known. A new reference, or NULL with an exception set. */
PyObject *tkpy_compiled(PyObject *self, tk_kernel *k, const Launch *L, const tk_arg *a,
                        const tk_define *extra, int nextra, const tk_launch_options *o);
/* Hands the do_not_specialize names to a tk_kernel; a tk status. */
tk_status tkpy_apply_no_spec(Kernel *K, tk_kernel *k);
void tkpy_kernel_dealloc(PyObject *self);
int tkpy_kernel_init(PyObject *self, PyObject *args, PyObject *kw);
#endif
