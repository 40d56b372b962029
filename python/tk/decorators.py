"""The decorators: jit builds a tk._tk.Kernel for a function of a source file
(the file tk's front end compiles, the kernel found by name); autotune and
heuristics hand their configs and functions to that same object, whose
launch path (kernel[grid](...)) is C."""
import ast
import linecache
import os
import re

from . import _tk


def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n):
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _is_constexpr(ann):
    if isinstance(ann, str):
        return "constexpr" in ann
    return getattr(ann, "__name__", "") == "constexpr"


# Triton's spellings of the scalar types an annotation may declare, to the
# names libtk's Python layer reads (torch's); bool and float as Triton
# reads them (u1 and fp32). int stays unread: tk's compiler takes it as a
# hint, not a declared i32, so a launch may pass any int.
_SCALAR_TYPES = {
    "i1": "bool", "u1": "bool", "int1": "bool", "uint1": "bool", "bool": "bool",
    "i8": "int8", "int8": "int8", "i16": "int16", "int16": "int16",
    "i32": "int32", "int32": "int32", "i64": "int64", "int64": "int64",
    "u8": "uint8", "uint8": "uint8", "u16": "uint16", "uint16": "uint16",
    "u32": "uint32", "uint32": "uint32", "u64": "uint64", "uint64": "uint64",
    "fp16": "float16", "float16": "float16", "bf16": "bfloat16", "bfloat16": "bfloat16",
    "fp32": "float32", "float32": "float32", "float": "float32",
    "fp64": "float64", "float64": "float64",
}


def _scalar_type(ann):
    """The scalar type a runtime parameter's annotation declares (tl.int64,
    "tl.float32", "i64:16", float), which the launch converts its value to as
    Triton's launcher does; None for none (pointers, constexprs, no
    annotation)."""
    if ann is float or ann is bool:
        return _SCALAR_TYPES[ann.__name__]
    if isinstance(ann, str):  # "tl.int64", or tk's "i64:16"
        text = ann.strip().split(":")[0].strip()
        return None if text.startswith("*") else _SCALAR_TYPES.get(text.split(".")[-1])
    name = getattr(ann, "name", None)  # tl.int64 and the like: Triton's short names
    return _SCALAR_TYPES.get(name) if isinstance(name, str) else None


def _def_line(fn):
    """'file:line: def name(...)', the line messages point at."""
    code = fn.__code__
    path, line = code.co_filename, code.co_firstlineno
    for n in range(line, line + 50):
        text = linecache.getline(path, n)
        if text.lstrip().startswith("def "):
            return f"{path}:{n}: {text.strip()}"
        if not text:
            break
    return f"{path}:{line}: def {fn.__name__}(...)"


_TK_IMPORT = re.compile(r"^(\s*)(import tk(\.language)?( as \w+)?|from tk(\.language)? import [^#]*?)"
                        r"(\s*#.*)?$")
_sources = {}


def _tk_line(line):
    """An import of tk spelled as the import of triton it stands for."""
    m = _TK_IMPORT.match(line)
    if not m:
        return line
    indent, stmt, note = m.group(1), m.group(2), m.group(6) or ""
    if stmt.startswith("from "):
        return indent + stmt.replace("from tk", "from triton", 1) + note
    if stmt in ("import tk", "import tk.language"):
        return indent + ("import triton as tk" if stmt == "import tk" else
                         "import triton.language as tk_language_") + note
    return indent + stmt.replace("import tk", "import triton", 1) + note


_HOOKS = ("prune_configs_by", "pre_hook", "post_hook")


def _blank_hooks(lines):
    """Blanks the autotune options that run Python (prune_configs_by and the
    hooks) out of the text tk compiles: this package hands them to libtk
    as callbacks. Spaces replace them, so every position stays."""
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return lines
    raw = [line.encode() for line in lines]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not any(k.arg in _HOOKS for k in node.keywords):
            continue
        for kw in node.keywords:
            if kw.arg in _HOOKS and kw.lineno == kw.value.end_lineno:
                _blank(raw, kw.lineno - 1, kw.col_offset, kw.value.end_col_offset)
            elif kw.arg in _HOOKS:
                _blank(raw, kw.lineno - 1, kw.col_offset, len(raw[kw.lineno - 1]))
                for n in range(kw.lineno, kw.value.end_lineno - 1):
                    _blank(raw, n, 0, len(raw[n]))
                _blank(raw, kw.value.end_lineno - 1, 0, kw.value.end_col_offset)
    return [line.decode() for line in raw]


def _blank(raw, n, start, end):
    """Spaces over raw[n][start:end] and the comma that follows it."""
    line = raw[n]
    rest = line[end:]
    if rest.lstrip().startswith(b","):
        end += len(rest) - len(rest.lstrip()) + 1
    raw[n] = line[:start] + b" " * (end - start) + line[end:]


def _source_for(path):
    """The text tk compiles, where it differs from the file: tk imports read
    as the triton imports they stand for, and autotune's Python callbacks
    blanked (lines and positions kept). None: libtk reads the file."""
    if path not in _sources:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            text = ""
        lines = text.split("\n")
        new = [_tk_line(line) for line in lines]
        if any(h in text for h in _HOOKS):
            new = _blank_hooks(new)
        _sources[path] = "\n".join(new) if new != lines else None
    return _sources[path]


def const_text(v):
    """A constexpr value as the source would spell it: a tuple item by item,
    a @jit function by its name."""
    if isinstance(v, bool) or v is None:
        return repr(v)
    if type(v).__name__ == "constexpr" and hasattr(v, "value"):
        return const_text(v.value)
    if isinstance(v, tuple):
        items = [const_text(x) for x in v]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(v, _tk.Kernel):
        return v.__name__
    if hasattr(v, "_tk_text"):
        return v._tk_text
    return repr(v)


class CompiledKernel:
    """What warmup() gives: the compiled kernel's resources and, on demand,
    its text (asm['ptx'], asm['cubin'], asm['ir'], asm['llir'])."""

    def __init__(self, jitfn, info):
        regs, spills, shared, warps, threads, sig, defines, device, stages = info
        self.name, self.n_regs, self.n_spills, self.shared = jitfn.__name__, regs, spills, shared
        self.num_warps, self.num_stages, self.threads = warps, stages, threads
        self.signature, self.defines, self.device = sig, defines, device
        meta = dict(name=self.name, num_warps=warps, num_stages=stages, shared=shared)
        self.metadata = type("Metadata", (), meta)()
        self.asm = _Asm(jitfn, self)

    def _init_handles(self):
        pass


class _Asm(dict):
    _EMIT = {"ptx": "ptx", "cubin": "cubin", "ir": "ir", "ttgir": "ir", "ttir": "ir",
             "llir": "llvm"}

    def __init__(self, jitfn, ck):
        super().__init__()
        self._fn, self._ck = jitfn, ck

    def __missing__(self, what):
        if what not in self._EMIT:
            raise KeyError(what)
        ck, arch = self._ck, os.environ.get("TK_ARCH")
        if not arch and ck.device >= 0:
            p = _tk.device_properties(ck.device)
            arch = f"sm_{p['cc_major']}{p['cc_minor']}" + ("a" if p["cc_major"] == 9 else "")
        text = _tk.compile(self._fn._path, _source_for(self._fn._path), ck.name, ck.signature, list(ck.defines), ck.num_warps,
                           ck.num_stages, self._EMIT[what], arch)
        self[what] = text
        return text

    def keys(self):
        return self._EMIT.keys()


class KernelParam:
    """One parameter as Triton's JITFunction.params describes it (host code
    and harnesses read name and is_constexpr)."""

    def __init__(self, name, num, is_constexpr, do_not_specialize):
        self.name, self.num, self.is_constexpr = name, num, is_constexpr
        self.do_not_specialize = do_not_specialize

    def __repr__(self):
        return f"KernelParam({self.name!r}, constexpr={self.is_constexpr})"


class JITFunction(_tk.Kernel):
    """A @jit function: kernel[grid](*args, num_warps=, num_stages=, stream=,
    **constexprs) launches it; warmup(...) compiles it without launching."""

    def __init__(self, fn, do_not_specialize=(), debug=None, **options):
        code = fn.__code__
        params = code.co_varnames[:code.co_argcount]
        ann = getattr(fn, "__annotations__", {})
        consts = tuple(_is_constexpr(ann.get(p)) for p in params)
        types = [None if c else _scalar_type(ann.get(p)) for p, c in zip(params, consts)]
        defaults = {}
        if fn.__defaults__:
            defaults = dict(zip(params[len(params) - len(fn.__defaults__):], fn.__defaults__))
        self._path = os.path.abspath(code.co_filename)
        super().__init__(self._path, fn.__name__, params, consts, defaults, _def_line(fn),
                         _source_for(self._path), types)
        self.fn, self.arg_names = fn, list(params)
        self.params = [KernelParam(n, i, c, n in do_not_specialize or i in do_not_specialize)
                       for i, (n, c) in enumerate(zip(params, consts))]
        self.constexprs = [p.num for p in self.params if p.is_constexpr]  # as Triton's
        self.__name__, self.__qualname__, self.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        self.__module__ = fn.__module__
        self.do_not_specialize, self.debug, self.options = tuple(do_not_specialize), debug, options
        if self.do_not_specialize:
            self._set_no_specialize(list(self.do_not_specialize))
        self.configs, self.keys = None, None
        # heuristics above @autotune (run before tuning) and below it (run
        # for each config with its values, as Triton's autotuner calls them),
        # each outermost first
        self._heuristics, self._config_heuristics = [], []

    def warmup(self, *args, grid=None, **kw):
        return CompiledKernel(self, self._warmup(*args, **kw))

    def __call__(self, *args, **kw):
        raise RuntimeError(f"tk: {self.__name__} is a @jit kernel: launch it as "
                           f"{self.__name__}[grid](...)")

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"


def jit(fn=None, *, do_not_specialize=(), debug=None, **options):
    """@tk.jit or @tk.jit(do_not_specialize=[...], debug=True)."""
    if fn is None:
        return lambda f: JITFunction(f, do_not_specialize=do_not_specialize, debug=debug,
                                     **options)
    return JITFunction(fn, do_not_specialize=do_not_specialize, debug=debug, **options)


class ConstexprFunction:
    """@constexpr_function: Python a kernel calls at compile time on
    constexpr arguments. libtk reads its def from the source file when a
    kernel calls it; host code calls the function itself."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__, self.__qualname__, self.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        self.__module__ = fn.__module__

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"ConstexprFunction({self.__module__}:{self.__qualname__})"


def constexpr_function(fn):
    """@tk.constexpr_function, as Triton's: see ConstexprFunction."""
    return ConstexprFunction(fn)


class Config:
    """One autotuning config: constexpr values and launch options."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None,
                 pre_hook=None, **extra):
        self.kwargs, self.num_warps, self.num_stages = dict(kwargs), num_warps, num_stages
        self.num_ctas, self.maxnreg, self.pre_hook = num_ctas, maxnreg, pre_hook

    def all_kwargs(self):
        """The config's values and launch options, as Triton's all_kwargs."""
        opts = (("num_warps", self.num_warps), ("num_ctas", self.num_ctas),
                ("num_stages", self.num_stages), ("maxnreg", self.maxnreg))
        return dict(self.kwargs, **{k: v for k, v in opts if v is not None})

    def __repr__(self):
        kv = ", ".join(f"{k}: {v}" for k, v in self.kwargs.items())
        return f"{kv}, num_warps: {self.num_warps}, num_stages: {self.num_stages}"


def _kernel_of(fn):
    if not isinstance(fn, JITFunction):
        raise TypeError(f"tk: autotune and heuristics decorate a @jit function, not {fn!r}")
    return fn


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, **kw):
    """@tk.autotune: libtk times the configs at the first launch of each key
    (on the interpreter it takes the first config) and keeps the fastest.
    reset_to_zero and restore_value are read from the source's decorator."""
    def wrap(fn):
        k = _kernel_of(fn)
        prune = (prune_configs_by or {}).get("early_config_prune")
        table = [(c, [(n, const_text(v)) for n, v in c.kwargs.items()], c.num_warps or 0,
                  c.num_stages or 0) for c in configs]
        k._set_tuning(table, list(key), prune, float(warmup or 0), float(rep or 0))
        k.configs, k.keys = list(configs), list(key)
        k.reset_to_zero, k.restore_value = list(reset_to_zero or []), list(restore_value or [])
        return k
    return wrap


def heuristics(values):
    """@tk.heuristics({'NAME': lambda args: ...}): constexprs computed from
    the launch's named arguments before each launch; under @autotune, for
    each config with its values too, as in Triton."""
    def wrap(fn):
        k = _kernel_of(fn)
        if k.configs is None:  # no @autotune below: per config if one comes above
            k._config_heuristics = list(values.items()) + k._config_heuristics
        else:
            k._heuristics = list(values.items()) + k._heuristics
        k._set_heuristics(list(k._heuristics), list(k._config_heuristics))
        return k
    return wrap
