"""tkbind: libtk's C API (include/tk/tk.h) through ctypes, for Python benchmarks.
Structs are laid out field for field as tk.h declares them; tk.h's tk_ptr/tk_i32/...
helpers are static inline there, so they are rebuilt here. Assumes an LP64 host
(the layout ctypes computes is the C compiler's); every failed call raises TkError
with tk_last_error()'s message.
"""
import ctypes
import os

TK_OK, TK_ERR_COMPILE, TK_ERR_LAUNCH = 0, 1, 4
ARG_PTR, ARG_SCALAR, ARG_CONST, ARG_DESC = 0, 1, 2, 3
DESC_MAX_RANK = 5
TK_DTYPE = {"i1": 1, "i8": 2, "i16": 3, "i32": 4, "i64": 5, "u8": 6, "u16": 7, "u32": 8,
            "u64": 9, "f16": 10, "bf16": 11, "f32": 12, "f64": 13, "f8e4": 14, "f8e5": 15}


class TkArgValue(ctypes.Union):
    _fields_ = [("ptr", ctypes.c_void_p), ("i", ctypes.c_int64), ("u", ctypes.c_uint64),
                ("f", ctypes.c_double)]


class TkArg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("name", ctypes.c_char_p),
                ("v", TkArgValue), ("text", ctypes.c_char_p)]


class TkTensorDesc(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * DESC_MAX_RANK),
                ("strides", ctypes.c_int64 * DESC_MAX_RANK),
                ("block", ctypes.c_int * DESC_MAX_RANK)]


class TkGrid(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class TkContextOptions(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int), ("interpret", ctypes.c_int),
                ("cu_context", ctypes.c_void_p), ("search_paths", ctypes.c_void_p),
                ("interp_max_steps", ctypes.c_uint64),
                ("reserved", ctypes.c_uint64 * 2)]


class TkLaunchOptions(ctypes.Structure):
    _fields_ = [("num_warps", ctypes.c_int), ("num_stages", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("launch_pdl", ctypes.c_int),
                ("fp_fusion", ctypes.c_int), ("num_ctas", ctypes.c_int),
                ("as_given", ctypes.c_int), ("debug", ctypes.c_int), ("unused", ctypes.c_int),
                ("reserved", ctypes.c_uint64 * 1)]


class TkKernelInfo(ctypes.Structure):
    _fields_ = [("registers", ctypes.c_int), ("spill_bytes", ctypes.c_int),
                ("shared_bytes", ctypes.c_int), ("max_threads", ctypes.c_int),
                ("num_warps", ctypes.c_int), ("dynamic_shared_bytes", ctypes.c_int),
                ("function", ctypes.c_void_p), ("threads", ctypes.c_int),
                ("reserved_int", ctypes.c_int), ("reserved", ctypes.c_uint64 * 3)]


class TkDeviceProps(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 256), ("sm_count", ctypes.c_int),
                ("cc_major", ctypes.c_int), ("cc_minor", ctypes.c_int),
                ("warp_size", ctypes.c_int), ("regs_per_sm", ctypes.c_int),
                ("shared_per_sm", ctypes.c_int), ("shared_per_block", ctypes.c_int),
                ("max_threads_per_sm", ctypes.c_int), ("max_threads_per_block", ctypes.c_int),
                ("max_grid", ctypes.c_int * 3), ("sm_clock_khz", ctypes.c_int),
                ("mem_clock_khz", ctypes.c_int), ("mem_bus_width_bits", ctypes.c_int),
                ("unused", ctypes.c_int), ("reserved", ctypes.c_uint64 * 2)]


class TkError(Exception):
    def __init__(self, status, name, message):
        super().__init__(f"{name}: {message}")
        self.status, self.name, self.message = status, name, message


def tk_ptr(addr, dtype):
    a = TkArg(ARG_PTR, TK_DTYPE[dtype], None, TkArgValue(), None)
    a.v.ptr = addr
    return a


def tk_i32(x):
    a = TkArg(ARG_SCALAR, TK_DTYPE["i32"], None, TkArgValue(), None)
    a.v.i = x
    return a


def tk_i64(x):
    a = TkArg(ARG_SCALAR, TK_DTYPE["i64"], None, TkArgValue(), None)
    a.v.i = x
    return a


def tk_f32(x):
    a = TkArg(ARG_SCALAR, TK_DTYPE["f32"], None, TkArgValue(), None)
    a.v.f = x
    return a


def tk_const(name, x):
    is_int = isinstance(x, int)
    a = TkArg(ARG_CONST, TK_DTYPE["i64" if is_int else "f64"], name.encode(), TkArgValue(), None)
    if is_int:
        a.v.i = x
    else:
        a.v.f = x
    return a


def tk_const_text(name, text):
    """A constexpr given as source text: a dtype ("tl.float16") or a string
    literal ('"gelu"')."""
    return TkArg(ARG_CONST, 0, name.encode(), TkArgValue(), text.encode())


class Tk:
    """One libtk context (the GPU's primary context, or the interpreter) with
    modules and kernel handles kept for the whole run, so every launch after
    a kernel's first is a hit in tk's in-memory JIT cache."""

    def __init__(self, path, interpret=False, device=0):
        self.lib = lib = ctypes.CDLL(path)
        P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
        sigs = {
            "tk_last_error": (ctypes.c_char_p, []),
            "tk_status_name": (ctypes.c_char_p, [I]),
            "tk_version": (ctypes.c_char_p, []),
            "tk_context_create": (I, [ctypes.POINTER(P), ctypes.POINTER(TkContextOptions)]),
            "tk_context_destroy": (None, [P]),
            "tk_alloc": (I, [P, S, ctypes.POINTER(P)]),
            "tk_free": (I, [P, P]),
            "tk_copy_to": (I, [P, P, P, S]),
            "tk_copy_from": (I, [P, P, P, S]),
            "tk_synchronize": (I, [P]),
            "tk_module_load_file": (I, [P, ctypes.c_char_p, ctypes.POINTER(P)]),
            "tk_module_load_string": (I, [P, ctypes.c_char_p, ctypes.c_char_p,
                                          ctypes.POINTER(P)]),
            "tk_module_destroy": (None, [P]),
            "tk_module_kernel": (I, [P, ctypes.c_char_p, ctypes.POINTER(P)]),
            "tk_launch": (I, [P, TkGrid, ctypes.POINTER(TkArg), I,
                              ctypes.POINTER(TkLaunchOptions)]),
            "tk_kernel_prepare": (I, [P, ctypes.POINTER(TkArg), I,
                                      ctypes.POINTER(TkLaunchOptions),
                                      ctypes.POINTER(TkKernelInfo)]),
            "tk_device_properties": (I, [P, ctypes.POINTER(TkDeviceProps)]),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        self.ctx = P()
        opts = TkContextOptions(device, 1 if interpret else 0, None)
        self.check(lib.tk_context_create(ctypes.byref(self.ctx), ctypes.byref(opts)),
                   "tk_context_create")
        self.modules, self.kernels = {}, {}

    def check(self, status, what):
        if status != TK_OK:
            name = self.lib.tk_status_name(status).decode()
            raise TkError(status, name, f"{what}: {self.lib.tk_last_error().decode()}")

    def version(self):
        return self.lib.tk_version().decode()

    def device(self):
        p = TkDeviceProps()
        self.check(self.lib.tk_device_properties(self.ctx, ctypes.byref(p)), "tk_device_properties")
        return p

    def kernel(self, path, name):
        key = (os.path.abspath(path), name)
        if key not in self.kernels:
            if key[0] not in self.modules:
                m = ctypes.c_void_p()
                self.check(self.lib.tk_module_load_file(self.ctx, key[0].encode(), ctypes.byref(m)),
                           f"loading {path}")
                self.modules[key[0]] = m
            k = ctypes.c_void_p()
            self.check(self.lib.tk_module_kernel(self.modules[key[0]], name.encode(),
                                                 ctypes.byref(k)), f"kernel {name}")
            self.kernels[key] = k
        return self.kernels[key]

    def alloc(self, nbytes):
        p = ctypes.c_void_p()
        self.check(self.lib.tk_alloc(self.ctx, nbytes, ctypes.byref(p)), "tk_alloc")
        return p.value

    def copy_to(self, dptr, host_addr, nbytes):
        self.check(self.lib.tk_copy_to(self.ctx, dptr, host_addr, nbytes), "tk_copy_to")

    def copy_from(self, host_addr, dptr, nbytes):
        self.check(self.lib.tk_copy_from(self.ctx, host_addr, dptr, nbytes), "tk_copy_from")

    def free(self, dptr):
        self.check(self.lib.tk_free(self.ctx, dptr), "tk_free")


class TkLaunch:
    """A launch with its argument array, grid and options built once; calling
    it costs one ctypes call into tk_launch."""

    def __init__(self, tk, kernel, grid, args, num_warps, stream=None):
        self.tk, self.kernel, self.n = tk, kernel, len(args)
        self.keep = args  # the constexpr names the array points at
        self.args = (TkArg * self.n)(*args)
        g = tuple(grid) + (1,) * (3 - len(grid))
        self.grid = TkGrid(*g)
        self.opts = TkLaunchOptions(num_warps, 0, stream)
        self.opts_p = ctypes.pointer(self.opts)
        self.launch_fn = tk.lib.tk_launch

    def prepare(self):
        """Compiles (or finds in the cache) without launching; returns the info."""
        info = TkKernelInfo()
        self.tk.check(self.tk.lib.tk_kernel_prepare(self.kernel, self.args, self.n, self.opts_p,
                                                    ctypes.byref(info)), "tk_kernel_prepare")
        return info

    def __call__(self):
        s = self.launch_fn(self.kernel, self.grid, self.args, self.n, self.opts_p)
        if s != TK_OK:
            self.tk.check(s, "tk_launch")


def matmul_launch(tk, kernel, a, b, c, cfg):
    """A launch of examples/matmul.tk's kernel for torch matrices c = a @ b;
    cfg is (BM, BN, BK, GROUP, num_warps, num_stages)."""
    BM, BN, BK, G, warps, stages = cfg
    M, K = a.shape
    N = b.shape[1]
    dt = {"torch.float16": "f16", "torch.bfloat16": "bf16"}[str(a.dtype)]
    args = [tk_ptr(a.data_ptr(), dt), tk_ptr(b.data_ptr(), dt), tk_ptr(c.data_ptr(), dt),
            tk_i32(M), tk_i32(N), tk_i32(K), tk_i32(a.stride(0)), tk_i32(a.stride(1)),
            tk_i32(b.stride(0)), tk_i32(b.stride(1)), tk_i32(c.stride(0)), tk_i32(c.stride(1)),
            tk_const("BM", BM), tk_const("BN", BN), tk_const("BK", BK), tk_const("GROUP", G)]
    grid = (max(1, ((M + BM - 1) // BM) * ((N + BN - 1) // BN)),)
    launch = TkLaunch(tk, kernel, grid, args, warps)
    launch.opts.num_stages = stages
    return launch


# The C side of every struct above, for layout_check: (C name, ctypes class, fields).
_LAYOUTS = [("tk_arg", TkArg), ("tk_grid", TkGrid), ("tk_context_options", TkContextOptions),
            ("tk_launch_options", TkLaunchOptions), ("tk_kernel_info", TkKernelInfo),
            ("tk_device_props", TkDeviceProps), ("tk_tensor_desc", TkTensorDesc)]


def layout_check(include_dir, cc=None):
    """Compiles a probe against tk.h and compares every struct's size and field
    offsets with the ctypes mirrors here. Returns the mismatches (empty when all
    agree), or None when no C compiler is at hand."""
    import shutil
    import subprocess
    import tempfile
    cc = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "tk/tk.h"', "int main(void) {"]
    want = []
    for cname, cls in _LAYOUTS:
        lines.append(f'printf("%zu\\n", sizeof({cname}));')
        want.append((f"sizeof({cname})", ctypes.sizeof(cls)))
        for fname, _ in cls._fields_:
            lines.append(f'printf("%zu\\n", offsetof({cname}, {fname}));')
            want.append((f"{cname}.{fname}", getattr(cls, fname).offset))
    lines += ["return 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "probe.c"), os.path.join(d, "probe")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([cc, "-I", include_dir, src, "-o", exe], check=True)
        got = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split()
    return [f"{what}: C {g}, ctypes {w}" for (what, w), g in zip(want, got) if int(g) != w]
