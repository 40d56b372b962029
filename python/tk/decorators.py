"""The decorators: jit builds a tk._tk.Kernel for a function of a source file
(the file tk's front end compiles, the kernel found by name); autotune and
heuristics hand their configs and functions to that same object, whose
launch path (kernel[grid](...)) is C."""
import ast
import inspect
import linecache
import os
import re
import weakref

from . import _tk
from . import live as _live


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
_texts = {}  # the text tk compiles for a path, changed or not (what _source_for read)


_IMPORT_LIST = re.compile(r"^(\s*)import\s+([\w. ,]+?)(\s*#.*)?$")
_TK_ITEM = re.compile(r"^tk(\.language)?(\s+as\s+\w+)?$")


def _tk_line(line):
    """An import of tk spelled as the import of triton it stands for; in
    `import torch, tk, tk.language as tl`, each of tk's modules."""
    if "tk" not in line:  # most lines: no pattern below can match
        return line
    m = _TK_IMPORT.match(line)
    if not m:
        lm = _IMPORT_LIST.match(line)
        items = lm.group(2).split(",") if lm and "," in lm.group(2) else []
        if not any(_TK_ITEM.match(i.strip()) for i in items):
            return line
        spelled = [_tk_line("import " + i.strip())[len("import "):] if _TK_ITEM.match(i.strip())
                   else i.strip() for i in items]
        return lm.group(1) + "import " + ", ".join(spelled) + (lm.group(3) or "")
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
    hooks, the decorator's and each Config's) out of the text tk compiles:
    this package hands them to libtk as callbacks. Spaces replace them, so
    every position stays."""
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


def _compiled_source(path):
    """The text the launches of path's kernels compiled (with the live
    module's bindings, tk/live.py), where it differs from the file."""
    return _live._live.get(path, _source_for(path))


def _text_for(path):
    """The text tk compiles for path before the live values are taken ("" where
    it cannot be read)."""
    _source_for(path)
    return _texts[path]


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
        _texts[path] = "\n".join(new)
        _sources[path] = _texts[path] if new != lines else None
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
    """What warmup() and a launch give, as Triton's CompiledKernel: the
    compiled kernel's resources (n_regs, n_spills, shared, num_warps,
    metadata), its text on demand (asm['ptx'], asm['cubin'], asm['ir'],
    asm['llir']), and kernel[grid](*args, stream=None), a launch of this
    very specialisation (the constexprs it was compiled with stand)."""

    def __init__(self, jitfn, info):
        regs, spills, shared, warps, threads, sig, defines, device, stages, max_threads, \
            fp_fusion, debug = info
        self.name, self.n_regs, self.n_spills, self.shared = jitfn.__name__, regs, spills, shared
        self.num_warps, self.num_stages, self.threads = warps, stages, threads
        self.n_max_threads = max_threads
        self.signature, self.defines, self.device = sig, defines, device
        self._fp_fusion = fp_fusion  # 1 on, -1 off, 0 the default
        self._debug = debug  # the same: asserts checked or not, as compiled
        meta = dict(name=self.name, num_warps=warps, num_stages=stages, shared=shared, num_ctas=1)
        self.metadata = type("Metadata", (), meta)()
        self.asm = _Asm(jitfn._path, jitfn.__name__, self)
        self._owner = weakref.ref(jitfn)
        self.module = self.function = None  # no driver handles are kept here

    def _init_handles(self):
        pass

    def __getitem__(self, grid):
        def runner(*args, stream=None):
            self._launch(grid, args, stream)
        return runner

    def _launch(self, grid, args, stream):
        """A launch of this specialisation: args are every parameter's
        value, constexprs included (their compiled values stand, as in
        Triton's launcher), or the runtime parameters' alone."""
        owner = self._owner()
        if owner is None:
            raise RuntimeError(f"tk: the kernel '{self.name}' was compiled from is gone")
        params = owner.params
        runtime = [p.name for p in params if not p.is_constexpr]
        if len(args) == len(params):
            args = [a for a, p in zip(args, params) if not p.is_constexpr]
        elif len(args) != len(runtime):
            raise TypeError(f"tk: compiled kernel '{self.name}' takes {len(params)} arguments "
                            f"(or its {len(runtime)} runtime ones) but {len(args)} were given")
        kw = dict(zip(runtime, args))
        consts = {p.name for p in params if p.is_constexpr}
        kw.update((name, _Text(text)) for name, text in self.defines if name in consts)
        opts = {"num_warps": self.num_warps, "num_stages": self.num_stages, "stream": stream}
        if self._fp_fusion:
            opts["enable_fp_fusion"] = self._fp_fusion > 0
        if self._debug:
            opts["debug"] = self._debug > 0
        pos = []
        if any(p.name in opts for p in params):
            # a parameter named like an option (tutorial 02's num_stages
            # constexpr): the parameters go by position, so that the
            # option keeps its own compiled value
            names = [p.name for p in params]
            while names and names[-1] not in kw:
                names.pop()
            if any(n not in kw for n in names):
                raise TypeError(f"tk: compiled kernel '{self.name}' has no value for "
                                f"parameter '{next(n for n in names if n not in kw)}'")
            pos = [kw.pop(n) for n in names]
        owner._plain()[grid](*pos, **kw, **opts)

    def __repr__(self):
        return f"CompiledKernel({self.name}, {self.signature}, {self.defines})"


class _Text:
    """A constexpr value given as the text it compiled from ("64", "tl.float16")."""
    __slots__ = ("_tk_text",)

    def __init__(self, text):
        self._tk_text = text


class _Asm(dict):
    _EMIT = {"ptx": "ptx", "cubin": "cubin", "ir": "ir", "ttgir": "ir", "ttir": "ir",
             "llir": "llvm"}

    def __init__(self, path, name, ck):
        super().__init__()
        self._path, self._name, self._ck = path, name, ck

    def __missing__(self, what):
        if what not in self._EMIT:
            raise KeyError(what)
        ck, arch = self._ck, os.environ.get("TK_ARCH")
        if not arch and ck.device >= 0:
            p = _tk.device_properties(ck.device)
            arch = f"sm_{p['cc_major']}{p['cc_minor']}" + ("a" if p["cc_major"] == 9 else "")
        text = _tk.compile(self._path, _compiled_source(self._path), self._name, ck.signature,
                           list(ck.defines), ck.num_warps, ck.num_stages, self._EMIT[what], arch)
        self[what] = text
        return text

    def keys(self):
        return self._EMIT.keys()


def _annotation_text(a):
    """A parameter's annotation as Triton's KernelParam.annotation names it:
    "" for none, a dtype by its name ("fp32"), a pointer "*fp16", a class by
    its name ("constexpr"), text as written."""
    if a is None or a is inspect.Parameter.empty:
        return ""
    if isinstance(a, str):
        return a.strip().removeprefix("tl.")
    if getattr(a, "element_ty", None) is not None:
        return "*" + _annotation_text(a.element_ty)
    if hasattr(a, "primitive_bitwidth"):
        return a.name
    return a.__name__ if isinstance(a, type) else str(a)


class KernelParam:
    """One parameter as Triton's JITFunction.params describes it (host code
    and harnesses read name, is_constexpr and default: launch caches fill
    the parameters a call leaves out)."""

    def __init__(self, name, num, is_constexpr, do_not_specialize, default=inspect.Parameter.empty,
                 annotation=""):
        self.name, self.num, self.is_constexpr = name, num, is_constexpr
        self.do_not_specialize, self.default = do_not_specialize, default
        self.annotation = annotation  # the annotation's text, "" for none, as Triton's
        self.is_const = "const" in annotation and not is_constexpr

    @property
    def has_default(self):
        return self.default is not inspect.Parameter.empty

    def __repr__(self):
        return f"KernelParam({self.name!r}, constexpr={self.is_constexpr})"


def _call_prune(prune, configs, named, kw, grid):
    """prune(configs, named_args, **kwargs) as Triton calls it, the
    launch's keywords with grid and warmup; two arguments for a function
    without **kwargs (older Triton's form), as the launch does in C."""
    code = getattr(prune, "__code__", None)
    if code is None or not code.co_flags & inspect.CO_VARKEYWORDS:
        return prune(configs, named)
    return prune(configs, named, **dict(kw, grid=grid, warmup=False))


class KernelInterface:
    """Triton's base of launchable objects: kernel[grid](*args, **kw) calls
    kernel.run(*args, grid=grid, warmup=False, **kw). Host wrappers of
    kernels (a launch cache, a dispatch layer) subclass it and define run;
    tk's kernels are instances too, with their own kernel[grid]."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)


class JITFunction(_tk.Kernel, KernelInterface):
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
        self._pyfn, self.arg_names = fn, list(params)
        self.params = [KernelParam(n, i, c, n in do_not_specialize or i in do_not_specialize,
                                   defaults.get(n, inspect.Parameter.empty),
                                   _annotation_text(ann.get(n)))
                       for i, (n, c) in enumerate(zip(params, consts))]
        self.constexprs = [p.num for p in self.params if p.is_constexpr]  # as Triton's
        self.__name__, self.__qualname__, self.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        self.__module__ = fn.__module__
        self.do_not_specialize, self.debug, self.options = tuple(do_not_specialize), debug, options
        if debug is not None:  # else TRITON_DEBUG decides, as in Triton
            self._set_debug(bool(debug))
        # as Triton, a name that is no parameter (a stub kept for a
        # signature) or an index past them asks nothing
        known = [d for d in self.do_not_specialize
                 if d in params or (isinstance(d, int) and -len(params) <= d < len(params))]
        if known:
            self._set_no_specialize(known)
        self.configs, self.keys = None, None
        # heuristics above @autotune (run before tuning) and below it (run
        # for each config with its values, as Triton's autotuner calls them),
        # each outermost first
        self._heuristics, self._config_heuristics = [], []
        self._prune, self._autotune_args = None, None
        self._under, self._untuned = None, None  # made on first use: .fn and _plain()

    def _live_source(self):
        """Called by the first launch: the text to compile, with the live
        values of the names the module's host code binds and the conditions
        it decided (tk/live.py); None: the file. The package files the file
        imports from, which libtk reads itself, are handed their live texts."""
        qual = self._pyfn.__qualname__
        if qual != self._pyfn.__name__:
            where = qual[:-len(self._pyfn.__name__) - 1].replace(".<locals>", "()")
            raise _tk.TkError(f"tk compiles the @jit functions a file defines at module level; "
                              f"'{self._pyfn.__name__}' is defined inside {where}\n{_def_line(self._pyfn)}")
        base = _source_for(self._path)
        text = _texts[self._path]
        if not text:  # unreadable: libtk reads the file and says why
            return None
        glb = self._pyfn.__globals__
        new = _live.live_source(self._path, text, glb)
        _live.overlay_imports(self._path, glb, _text_for, _tk.source_overlay, _tk.source_search)
        return None if new is text and base is None else new

    # Triton's Autotuner attributes that host code (PyTorch's wrap_triton)
    # reads from a tuned kernel: its pruning, as prune_configs_by gave it
    perf_model, configs_top_k = None, 1.0

    @property
    def early_config_prune(self):
        return getattr(self, "_early", self._prune)

    @property
    def fn(self):
        """As in Triton: the Python function of a plain @jit kernel; under
        @autotune or @heuristics, the kernel under the outermost of them (an
        autotuned kernel's .fn launches without tuning, a heuristics
        kernel's without its heuristics)."""
        if not (self.configs is not None or self._heuristics or self._config_heuristics):
            return self._pyfn
        if self._under is None:
            self._under = self._layer(tuned=bool(self._heuristics),
                                      heuristics=self.configs is not None)
        return self._under

    @property
    def src(self):
        """As Triton's JITFunction.src: the function's source from its def
        line, dedented (decorators left out)."""
        import textwrap
        text = textwrap.dedent(inspect.getsource(self._pyfn))
        m = re.search(r"^def\s+\w+\s*\(", text, re.MULTILINE)
        return text[m.start():] if m else text

    @property
    def signature(self):
        """As Triton's JITFunction.signature: the Python function's
        inspect.Signature."""
        return inspect.signature(self._pyfn)

    @property
    def module(self):
        """As Triton's JITFunction.module: the defining module's name."""
        return self._pyfn.__module__

    @property
    def starting_line_number(self):
        """As Triton's: the line the function's source starts on (its first
        decorator's)."""
        return self._pyfn.__code__.co_firstlineno

    @property
    def noinline(self):
        """As Triton's: @jit(noinline=True) asked that calls to it not be
        inlined (tk inlines every call; the flag is kept as given)."""
        return bool(self.options.get("noinline", False))

    @property
    def base_fn(self):
        """As Triton's Autotuner.base_fn: the Python function under every
        decorator."""
        return self._pyfn

    # Triton's Autotuner keeps its warmup and rep as given
    @property
    def num_warmups(self):
        return (self._autotune_args or {}).get("warmup")

    @property
    def num_reps(self):
        return (self._autotune_args or {}).get("rep")

    @property
    def __globals__(self):
        """The module namespace the function's names resolve in (host code
        that generates kernel modules binds @jit helpers into it)."""
        return self._pyfn.__globals__

    @property
    def cache_key(self):
        """As Triton's JITFunction.cache_key: a hex digest that changes with
        the function's source (host code names generated files by it)."""
        import hashlib
        text = "%s\n%s\n%s" % (_tk.__name__, self._path, self.src)
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def values(self):
        """As Triton's Heuristics.values: the outermost @heuristics' names
        and functions (stacked ones together)."""
        if self._heuristics:
            return dict(self._heuristics)
        return dict(self._config_heuristics) if self.configs is None else {}

    def _bare(self):
        """A new kernel of the same function and options, with no
        decorator's settings."""
        return JITFunction(self._pyfn, do_not_specialize=self.do_not_specialize,
                           debug=self.debug, **self.options)

    def _layer(self, tuned, heuristics):
        """A kernel of the same function with this one's autotuning (tuned)
        and the heuristics under @autotune (heuristics) or neither."""
        k = self._bare()
        if heuristics and self._config_heuristics:
            k._config_heuristics = list(self._config_heuristics)
            k._set_heuristics([], k._config_heuristics)
        return autotune(**self._autotune_args)(k) if tuned else k

    def _plain(self):
        """This kernel without its decorators: what a compiled kernel's
        kernel[grid] launches, every constexpr given."""
        if self.configs is None and not self._heuristics and not self._config_heuristics:
            return self
        if self._untuned is None:
            self._untuned = self._layer(tuned=False, heuristics=False)
        return self._untuned

    def _compiled(self, info):
        """The compiled-kernel object of a specialisation (asked for by the
        launch path, once per specialisation)."""
        return CompiledKernel(self, info)

    def _named(self, args, kw):
        """The values a launch binds to the parameters by name (defaults
        included), and its other keywords, as heuristics and pruning see them."""
        defaults = self._pyfn.__defaults__ or ()
        named = dict(zip(self.arg_names[len(self.arg_names) - len(defaults):], defaults))
        named.update(zip(self.arg_names, args))
        named.update(kw)
        return named

    def warmup(self, *args, grid=None, **kw):
        """Compiles without launching and gives the compiled kernel. Under
        @autotune, as Triton's autotuner: a list, one for each config that
        pruning keeps (heuristics above @autotune run first)."""
        if self.configs is None:
            return self._warmup(*args, **kw)
        if self._heuristics:
            named = self._named(args, kw)
            for name, h in self._heuristics:
                kw[name] = named[name] = h(named)
            return self.fn.warmup(*args, grid=grid, **kw)
        configs = self.configs
        if self._prune is not None:
            configs = _call_prune(self._prune, self.configs, self._named(args, kw), kw, grid)
        return [self.fn.warmup(*args, grid=grid, **kw, **c.all_kwargs()) for c in configs]

    def run(self, *args, grid, warmup=False, **kw):
        """As Triton's JITFunction.run: a launch on grid, or with warmup=True
        a compile without one; either gives the compiled kernel."""
        if warmup:
            return self.warmup(*args, grid=grid, **kw)
        return self[grid](*args, **kw)

    def __call__(self, *args, **kw):
        raise RuntimeError(f"tk: {self.__name__} is a @jit kernel: launch it as "
                           f"{self.__name__}[grid](...)")

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"


def _outermost(k):
    """What a kernel's outermost decorator is, as Triton's object for it."""
    if k._heuristics:
        return "heuristics"
    if k.configs is not None:
        return "autotune"
    return "heuristics" if k._config_heuristics else "jit"


class _Kind(type):
    """tk has one class for every kernel; Triton has one per decorator
    (JITFunction, Autotuner, Heuristics), and host code walks a kernel's
    .fn chain asking isinstance() of them: each answers for the kernels
    whose outermost decorator it stands for. Calling one builds a kernel
    as @jit does."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, JITFunction) and _outermost(obj) == cls._kind

    def __call__(cls, *args, **kwargs):
        if cls._kind == "autotune":
            return _construct_autotuner(cls, *args, **kwargs)
        if cls._kind != "jit":
            raise TypeError("tk: triton.runtime.Heuristics' constructor is not supported yet; "
                            "decorate the kernel with @triton.heuristics instead")
        return JITFunction(*args, **kwargs)


def _construct_autotuner(cls, fn, arg_names, configs, key, reset_to_zero=None,
                         restore_value=None, pre_hook=None, post_hook=None,
                         prune_configs_by=None, warmup=None, rep=None, **ignored):
    """Triton's Autotuner(fn, arg_names, configs, key, ...) as a library's
    decorator calls it (often through a subclass that picks configs from a
    cache of its own, as flash-linear-attention's does): the kernel that
    @autotune with the same arguments makes. The subclass's own methods are
    not called; tk's tuner chooses. reset_to_zero and restore_value become
    Triton's default hooks, unless the caller gives its own."""
    default_pre, default_post = _default_hooks(list(reset_to_zero or []),
                                               list(restore_value or []))
    pre_hook = pre_hook or default_pre
    post_hook = post_hook or default_post
    return autotune(configs, key, prune_configs_by=prune_configs_by, pre_hook=pre_hook,
                    post_hook=post_hook, warmup=warmup, rep=rep)(fn)


def _default_hooks(zero, restore):
    """Triton's default hooks for reset_to_zero and restore_value: the
    first buffers zeroed before each timed run and once a config is chosen
    (reset_only), copies of the others taken before each timed run and put
    back after it. (None, None) where both lists are empty."""
    if not zero and not restore:
        return None, None
    saved = {}

    def pre(nargs, reset_only=False):
        for n in zero:
            if nargs.get(n) is not None:
                _zero(nargs[n])
        if not reset_only:
            saved.update({n: _copy(nargs[n]) for n in restore if nargs.get(n) is not None})

    def post(nargs, exception=None):
        for n, copy in saved.items():
            nargs[n][...] = copy
        saved.clear()
    return pre, post


def _zero(buf):
    if hasattr(buf, "zero_"):
        buf.zero_()
    else:
        buf[...] = 0


def _copy(buf):
    return buf.clone() if hasattr(buf, "clone") else buf.copy()


class JITKind(KernelInterface, metaclass=_Kind):
    """triton.runtime.JITFunction: a kernel with no @autotune or @heuristics."""
    _kind = "jit"


class Autotuner(KernelInterface, metaclass=_Kind):
    """triton.runtime.Autotuner: a kernel whose outermost decorator is @autotune."""
    _kind = "autotune"


class Heuristics(KernelInterface, metaclass=_Kind):
    """triton.runtime.Heuristics: a kernel whose outermost decorator is @heuristics."""
    _kind = "heuristics"


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
                 pre_hook=None, ir_override=None, **extra):
        # the dict given, as Triton keeps it (host code edits it in place)
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages
        self.num_ctas, self.maxnreg, self.pre_hook = num_ctas, maxnreg, pre_hook
        if ir_override is not None:
            raise NotImplementedError("tk: a triton.Config's ir_override (a file of IR to "
                                      "compile instead) is not supported")
        self.ir_override = None

    def all_kwargs(self):
        """The config's values and launch options, as Triton's all_kwargs."""
        opts = (("num_warps", self.num_warps), ("num_ctas", self.num_ctas),
                ("num_stages", self.num_stages), ("maxnreg", self.maxnreg))
        return dict(self.kwargs, **{k: v for k, v in opts if v is not None})

    def __str__(self):
        kv = [f"{k}: {v}" for k, v in self.kwargs.items()]
        return ", ".join(kv + [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}",
                               f"num_stages: {self.num_stages}", f"maxnreg: {self.maxnreg}"])

    __repr__ = __str__

    # equal values, options and hook are one config (a set of configs drops
    # repeats), as in Triton
    def __hash__(self):
        return hash((*self.all_kwargs().items(), self.pre_hook))

    def __eq__(self, other):
        return isinstance(other, Config) and \
            (*self.all_kwargs().items(), self.pre_hook) == (*other.all_kwargs().items(),
                                                            other.pre_hook)


def _kernel_of(fn):
    if not isinstance(fn, JITFunction):
        raise TypeError(f"tk: autotune and heuristics decorate a @jit function, not {fn!r}")
    return fn


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, **kw):
    """@tk.autotune: libtk times the configs at the first launch of each key
    (on the interpreter it takes the first config) and keeps the fastest.
    reset_to_zero and restore_value are read from the source's decorator.
    As in Triton, a config's pre_hook runs before each of its runs, timed
    or not, and pre_hook and post_hook here around each timed run."""
    def wrap(fn):
        k = _copy_kernel(_kernel_of(fn))
        by = prune_configs_by or {}
        early, perf_model, top_k = by.get("early_config_prune"), by.get("perf_model"), \
            by.get("top_k", 1.0)
        prune = _with_perf_model(early, perf_model, top_k) if perf_model else early
        table = [(c, [(n, const_text(v)) for n, v in c.kwargs.items()], c.num_warps or 0,
                  c.num_stages or 0) for c in configs]
        k._set_tuning(table, list(key), prune, float(warmup or 0), float(rep or 0), pre_hook,
                      post_hook)
        k.configs, k.keys, k._prune = list(configs), list(key), prune
        k.perf_model, k.configs_top_k, k._early = perf_model, top_k, early
        k.reset_to_zero, k.restore_value = list(reset_to_zero or []), list(restore_value or [])
        k._autotune_args = dict(configs=configs, key=key, prune_configs_by=prune_configs_by,
                                reset_to_zero=reset_to_zero, restore_value=restore_value,
                                pre_hook=pre_hook, post_hook=post_hook, warmup=warmup, rep=rep)
        k._under = k._untuned = None
        return k
    return wrap


def _with_perf_model(early, perf_model, top_k):
    """prune_configs_by with a perf_model, as Triton's Autotuner prunes:
    early_config_prune first, then, where more than top_k configs are left
    (a float up to 1.0 a share of all the configs), the top_k that
    perf_model(**named args, **launch keywords, **config.all_kwargs())
    estimates fastest."""
    def prune(configs, nargs, **kwargs):
        kept = configs
        if early is not None:  # with the launch's keywords where it takes them
            kept = _call_prune(early, configs, nargs, kwargs, kwargs.get("grid"))
        k = top_k
        if isinstance(k, float) and k <= 1.0:
            k = int(len(configs) * k)
        elif not isinstance(k, int):
            raise TypeError("tk: prune_configs_by's top_k must be a float up to 1.0 or an int")
        if len(kept) > k:
            est = {c: perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in kept}
            kept = sorted(est, key=est.get)[:k]
        return kept
    return prune


def _copy_kernel(k):
    """A new kernel of k's function, with its options and the heuristics
    below: @autotune wraps a kernel as Triton's Autotuner does, leaving the
    kernel it was given as it was (PyTorch's wrap_triton tunes a plain
    kernel it was handed this way, and launches both)."""
    n = k._bare()
    n._heuristics, n._config_heuristics = list(k._heuristics), list(k._config_heuristics)
    if n._heuristics or n._config_heuristics:
        n._set_heuristics(list(n._heuristics), list(n._config_heuristics))
    return n


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
        k._under = k._untuned = None
        return k
    return wrap
