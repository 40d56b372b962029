/* tkpy.h: the map of the `tk._tk` extension module, libtk's C API seen from
 * CPython through the stable ABI (Py_LIMITED_API 3.9, one abi3 module for
 * every CPython from 3.9 on).
 *
 *   module.c   the module, its exceptions, one tk context per device, errors
 *   args.c     Python values to tk_args: tensors, arrays, scalars, None
 *   place.c    where a launch runs, staged host buffers, the signature text
 *   kernel.c   binding, heuristics and the launch of kernel[grid](...)
 *   kernel_type.c  the Kernel type (tuning, warmup) and kernel[grid]
 *   compiled.c the compiled-kernel objects a launch and warmup give
 *   tools.c    compile to text, do_bench on tk_bench, device properties,
 *              the live texts of package files
 *
 * Every CPython call's result is checked; a failure leaves a Python
 * exception set and the caller returns NULL or -1. */
#ifndef TKPY_H
#define TKPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tk/tk.h>

#define TKPY_MAX_DEV   16   /* GPUs one process may use */
#define TKPY_MAX_ARGS  256  /* arguments of one launch */
#define TKPY_MAX_SLOTS 256  /* its tk_args: the arguments with their tuples' items */
#define TKPY_TEXT      4096 /* bytes of constexpr text one launch may hold */

/* Where a launch runs: the interpreter, or GPU n. */
enum { TKPY_INTERP = -1 };

/* ---- module.c ---- */
extern PyObject *tkpy_CompileError; /* a source error (subclass of Exception) */
extern PyObject *tkpy_Error;        /* any other failure of libtk (RuntimeError) */
extern int tkpy_interpret;          /* TK_INTERPRET=1 when the module was imported */
extern int tkpy_skip_launch;        /* _skip_launch(True): stop short of tk_launch (profiling) */

/* The context of a device (TKPY_INTERP: the interpreter), created on first
 * use; NULL with an exception set when it cannot be. */
tk_context *tkpy_context(int device);
/* Whether a GPU can be used (tries device 0 once; never raises). */
int tkpy_have_gpu(void);
/* Raises the exception for a failed tk call: its status picks the class,
 * tk_last_error() and `where` (the kernel's def line, or NULL) the text. */
void tkpy_raise(tk_status s, const char *where);
/* A UTF-8 copy of a str (PyMem_Free it); NULL with an exception set. */
char *tkpy_strdup(PyObject *str);
/* The CUstream torch has current on `device` (NULL: none or no torch). */
void *tkpy_torch_stream(int device);

/* ---- args.c ---- */
typedef enum { SLOT_VALUE, SLOT_HOST, SLOT_DEVICE } SlotLoc;

/* One launch argument: the tk_arg, and for a buffer where its memory lies.
 * A host buffer is staged: [host + lo, host + hi) is copied into interpreter
 * memory before the launch and back after it (unless read-only). */
typedef struct Slot {
    tk_arg arg;
    SlotLoc loc;
    int device;        /* SLOT_DEVICE: the GPU */
    char *host;        /* SLOT_HOST: the array's data pointer */
    Py_ssize_t lo, hi; /* byte extent around the data pointer */
    int readonly;
    int no_spec;       /* do_not_specialize: no :16 or :1 in the signature */
    void *staged;      /* interpreter memory holding the extent (the lead's) */
    const char *param; /* the parameter's name */
    int is_desc;       /* a host-built tensor descriptor over the buffer in arg */
    int lead;          /* SLOT_HOST: the slot whose staged memory holds this one's */
    char *ubase;       /* a lead's: the union of its group's extents */
    size_t ulen;
    int uwrite; /* a lead's: some slot of its group is writable */
    /* last: a launch clears a slot up to here (args.c) */
    tk_tensor_desc desc; /* its shape, strides and block (base and dtype: arg's) */
} Slot;

typedef struct Launch {
    Slot slots[TKPY_MAX_SLOTS];
    int n;
    char text[TKPY_TEXT]; /* constexpr names and texts */
    size_t used;
    int device;  /* TKPY_INTERP or a GPU */
    int extents; /* measure GPU buffers too (the tuner resets them) */
    tk_context *ctx;
    PyObject *owner; /* the Kernel launched (borrowed): its module names the @jit
                      * functions the constexprs hold */
} Launch;

/* Converts a runtime argument (param names the parameter) into slot `s`. */
int tkpy_runtime_arg(Launch *L, PyObject *v, const char *param, Slot *s);
/* Appends a runtime argument's slots to L: one, or a tuple's marker and
 * its items (Triton's tuple arguments), each with no_spec. */
int tkpy_runtime_args(Launch *L, PyObject *v, const char *param, int no_spec);
/* Converts the Python number a scalar slot was made from (v) to the type
 * its parameter's annotation declares, as Triton's launcher does: ints
 * that fit an int type, any number to a float type; 0, or -1 with
 * OverflowError or TypeError naming the parameter. */
int tkpy_typed_scalar(PyObject *v, const char *param, tk_dtype want, Slot *s);
/* The tk_dtype of a type name as torch spells it ("int64", "bfloat16",
 * "bool"); TK_VOID when there is none. */
tk_dtype tkpy_dtype_named(const char *name);
/* Converts a constexpr value into slot `s`. */
int tkpy_const_arg(Launch *L, PyObject *v, const char *param, Slot *s);
/* A host descriptor's block_shape read again from its object v into slot
 * s (a config's pre_hook sets it, as Triton's tutorial 06 does); 0 or -1. */
int tkpy_desc_reread(Slot *s, PyObject *v);
/* The tk_arg the launch takes for slot s (a descriptor slot's tk_desc). */
tk_arg tkpy_slot_arg(Slot *s);
/* Picks the context from the slots and stages host buffers into it. */
int tkpy_place(Launch *L, const char *where);
/* Copies staged buffers back (when ok) and frees them; 0 or -1. */
int tkpy_unstage(Launch *L, int ok);
/* Copies host memory into its staged buffers again (after host code such
 * as a config's pre_hook changed it). */
int tkpy_restage(Launch *L);
/* Copies the staged buffers a launch may write to their host memory, which
 * they stay staged over (before host code such as a hook reads them, or
 * writes part of them): 0 or -1. */
int tkpy_sync_host(Launch *L);
/* The hint libtk specialises a runtime slot on: 16 (a pointer aligned to
 * 16 bytes, an int divisible by 16), 1 (an int equal to 1), or 0. */
int tkpy_slot_hint(const Slot *s);
/* The signature text of the runtime slots ("*fp32:16,i32"). */
int tkpy_signature(const Launch *L, char *out, size_t cap);
/* Makes the attribute names args.c looks up; 0 or -1. */
int tkpy_args_init(void);
/* Releases the module's dtype caches. */
void tkpy_args_clear(void);

/* The text of a constexpr value as tk reads it ("64", "tl.float16",
 * "(0.5, (1, 'a'))", "_relu"): a new str; NULL with TypeError naming
 * param for a value no constexpr holds. owner: the Kernel launched, or NULL. */
PyObject *tkpy_const_text(PyObject *owner, PyObject *v, const char *param);

/* ---- kernel.c ---- */
int tkpy_kernel_init_types(PyObject *module);
/* Whether v is a @jit function (a tk._tk.Kernel). */
int tkpy_is_kernel(PyObject *v);
/* The name kernel owner's module gives @jit function f (its def name when
 * both are of one file, else the global bound to it), a new str; NULL with
 * TypeError naming param when that module binds it to no name. */
PyObject *tkpy_jit_name(PyObject *owner, PyObject *f, const char *param);

/* ---- tools.c ---- */
PyObject *tkpy_compile(PyObject *self, PyObject *args, PyObject *kw);
PyObject *tkpy_bench(PyObject *self, PyObject *args, PyObject *kw);
PyObject *tkpy_device_properties(PyObject *self, PyObject *args);
PyObject *tkpy_source_overlay(PyObject *self, PyObject *args);
PyObject *tkpy_source_search(PyObject *self, PyObject *args);

#endif
