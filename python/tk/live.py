"""Names and conditions a kernel file decides by running host code, read
from the live module.

tk's compiler reads a kernel file without running it, and decides the host
code it can (version checks, environment reads with literal defaults); a
name it cannot decide (a host function's result, a helper picked under such
a condition) is an error at its use. On the Python route the module has
run, and Triton reads such names from fn.__globals__ when it compiles: so
does tk, at a file's first launch, in two ways that keep every line and
column where it was:

- A module-level `if`/`elif` test (one nested in module-level if/else blocks
  too) that Python decided from plain values is written over, in place, by
  `1` or `0` padded with spaces: a test built from names, attribute chains
  of modules, constants, comparisons and not/and/or, whose names the file
  binds (an import, an assignment) only before the `if` and nowhere in a
  host function (`global`), each live value a bool, int, float, string,
  None or a tuple of these. The live values are then the ones the test
  read, and the front end takes the branch Python took (a helper defined
  twice, under `if FLAG:` and `else:`). Nothing is called to evaluate it.
- Each module-level name bound by host code whose live value the language
  can spell (a bool, int, float, string or None, a constexpr of one, a
  dtype, a @jit function of the file, a device function of triton.language,
  a tuple of these) is appended as `name = value`, after the last line, so
  that the live value is the last binding, as in the module.

The same text is made for each package file the kernel file imports from,
recursively (the modules in sys.modules whose file the front end would find
from the importing file), with that module's own globals; where it differs
from the file on disk, libtk is handed it (tk_source_overlay), and every
compilation that reads the file reads it instead. Each text is taken once
per file: it is part of the source, and so of the cache key. Bindings made
from outside the file (another module's setattr, globals()) are not seen."""
import ast
import builtins
import importlib.util
import math
import operator
import os
import sys

_LIVE_TL = "_tk_live_tl"
_live = {}
_trees = {}  # path -> the tree live_source parsed, for the import walk after it


def _targets(node, out):
    """The names an assignment target binds."""
    if isinstance(node, ast.Name):
        out.add(node.id)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            _targets(e, out)
    elif isinstance(node, ast.Starred):
        _targets(node.value, out)


def _literal(node):
    """Whether an expression is a literal the compiler reads as it is."""
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _bound_anywhere(stmts, out):
    """Every name a block binds (under a condition, a loop, a try, a with)."""
    for st in stmts:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            for a in st.names:
                out.add((a.asname or a.name).split(".")[0])
        elif isinstance(st, ast.Assign):
            for t in st.targets:
                _targets(t, out)
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
            _targets(st.target, out)
        for field in ("body", "orelse", "finalbody"):
            _bound_anywhere(getattr(st, field, []) or [], out)
        for h in getattr(st, "handlers", []) or []:
            _bound_anywhere(h.body, out)


def host_bound_names(tree):
    """Module-level names that host code binds: assigned from anything but a
    literal, bound inside a compound statement, or imported by name from
    another module (whose own host code may have chosen them)."""
    names = set()
    for st in tree.body:
        if isinstance(st, ast.Assign) and not _literal(st.value):
            for t in st.targets:
                _targets(t, names)
        elif isinstance(st, ast.AnnAssign) and st.value is not None and not _literal(st.value):
            _targets(st.target, names)
        elif isinstance(st, ast.AugAssign):
            _targets(st.target, names)
        elif isinstance(st, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            _bound_anywhere([st], names)
        elif isinstance(st, ast.ImportFrom):
            # the other file's host code may have chosen them
            names.update(a.asname or a.name for a in st.names if a.name != "*")
    return names


def _spell(value, glb, path, depth=0):
    """The source text of a live value, or None where the language cannot
    spell it (or it may not be what the compiler would see)."""
    if depth > 8:
        return None
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):  # float(): numpy's float64 prints as np.float64(...)
        return repr(float(value)) if math.isfinite(value) else None
    kind = type(value).__name__
    if kind == "constexpr" and hasattr(value, "value"):
        inner = _spell(value.value, glb, path, depth + 1)
        return f"{_LIVE_TL}.constexpr({inner})" if inner is not None else None
    if kind == "dtype" and str(getattr(value, "_tk_text", "")).startswith("tl."):
        return _LIVE_TL + value._tk_text[2:]
    if isinstance(value, tuple):
        items = [_spell(v, glb, path, depth + 1) for v in value]
        if any(i is None for i in items):
            return None
        return "(" + "".join(i + ", " for i in items) + ")"
    return _jit_name(value, glb, path) or _builtin_name(value)


def _builtin_name(value):
    """A device function of the facade (tl.exp, libdevice.exp, tl.math.rsqrt)
    or one of its namespaces (tl.math, libdevice: a math library host code
    picks) by its place in triton.language."""
    where = getattr(value, "_tk_path", None)
    if type(value).__name__ == "_Namespace" and type(value).__module__ == "tk.language":
        where = value._path
    if not isinstance(where, str):
        return None
    if where == "libdevice" or where.startswith("libdevice."):
        where = "extra.cuda." + where
    return f"{_LIVE_TL}.{where}"


def _pyfn_of(value):
    """The Python function of a @jit kernel or helper, else None. Read from
    the instance's own attributes: objects that answer every attribute
    (torch.classes, torch.ops) are never asked."""
    try:
        fn = vars(value).get("_pyfn")
    except TypeError:
        return None
    return fn if callable(fn) and hasattr(fn, "__code__") else None


def _jit_name(value, glb, path):
    """A @jit function of this file, by a module name bound to it alone."""
    fn = _pyfn_of(value)
    code = getattr(fn, "__code__", None)
    if code is None or code.co_filename != path:
        return None
    name = fn.__name__
    return name if glb.get(name) is value else None


# ---- module-level conditions decided in place ----

_PLAIN = (bool, int, float, str, type(None))
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Is: operator.is_, ast.IsNot: operator.is_not,
            ast.In: lambda a, b: operator.contains(b, a),
            ast.NotIn: lambda a, b: not operator.contains(b, a)}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_CAPTURES = (ast.ExceptHandler,) + tuple(
    getattr(ast, n) for n in ("MatchAs", "MatchStar", "MatchMapping") if hasattr(ast, n))


class _Undecided(Exception):
    """A test whose value is not exactly what Python saw."""


def _plain(value, depth=0):
    """Exact types only: comparing them runs no code of the module's."""
    if type(value) in _PLAIN:
        return True
    return type(value) is tuple and depth < 8 and all(_plain(v, depth + 1) for v in value)


def _binds(node):
    """The module names one node binds ("*" for a star import)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, _CAPTURES):  # except ... as name, a match pattern's capture
        name = getattr(node, "rest" if hasattr(node, "rest") else "name", None)
        return [name] if name else []
    return []


def _declared_global(tree, text):
    """The names a global (or nonlocal) statement names: a function may bind
    them at any time. Most files have none, and walking every body costs
    more than the rest of the work."""
    if "global" not in text and "nonlocal" not in text:
        return set()
    return {name for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal))
            for name in node.names}


def _bindings(tree):
    """The lines where the module's own statements bind each name (function
    and class bodies bind their own)."""
    where, stack = {}, [tree]
    while stack:
        node = stack.pop()
        for name in _binds(node):
            where.setdefault(name, []).append(node.lineno)
        scoped = isinstance(node, _SCOPES)
        for field, value in ast.iter_fields(node):
            if scoped and field == "body":
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    stack.append(child)
    return where


class _Values:
    """The live values a test at `line` may read: names the file binds only
    before it."""

    def __init__(self, where, declared, glb, line):
        self.where, self.declared, self.glb, self.line = where, declared, glb, line

    def name(self, name):
        lines = self.where.get(name)
        stars = self.where.get("*", ())
        if not lines or name in self.declared or name not in self.glb or \
                max(lines) >= self.line or any(s >= self.line for s in stars):
            raise _Undecided
        return self.glb[name]

    def attribute(self, node):
        """A chain of module attributes, read from the modules' dicts (no
        __getattr__ runs)."""
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if not isinstance(node, ast.Attribute):
            raise _Undecided
        owner = self.attribute(node.value)
        if not isinstance(owner, type(sys)) or node.attr not in vars(owner):
            raise _Undecided
        return vars(owner)[node.attr]


def _evaluate(node, values):
    """The value of a test as Python computed it (and/or giving an operand,
    short-circuiting); _Undecided for anything else."""
    if isinstance(node, ast.BoolOp):
        result = None
        for operand in node.values:
            result = _evaluate(operand, values)
            if bool(result) == isinstance(node.op, ast.Or):
                break
        return result
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _evaluate(node.operand, values)
    if isinstance(node, ast.Compare):
        return _compare(node, values)
    if isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        value = -node.operand.value
    elif isinstance(node, ast.Tuple):
        value = tuple(_evaluate(e, values) for e in node.elts)
    elif isinstance(node, (ast.Name, ast.Attribute)):
        value = values.attribute(node)
    else:
        raise _Undecided
    if not _plain(value):
        raise _Undecided
    return value


def _compare(node, values):
    left = _evaluate(node.left, values)
    for op, operand in zip(node.ops, node.comparators):
        right = _evaluate(operand, values)
        # identity is what Python saw only for the singletons
        if isinstance(op, (ast.Is, ast.IsNot)) and not any(
                v is None or type(v) is bool for v in (left, right)):
            raise _Undecided
        try:
            if not _COMPARE[type(op)](left, right):
                return False
        except TypeError:
            raise _Undecided from None
        left = right
    return True


def _tests(stmts, out):
    """The tests of module-level if/elif statements, in if/else blocks too."""
    for st in stmts:
        if isinstance(st, ast.If):
            out.append((st.test, st.lineno))
            _tests(st.body, out)
            _tests(st.orelse, out)


def _has_name(node):
    return any(isinstance(n, ast.Name) for n in ast.walk(node))


def _write_over(raw, test, truth):
    """Turns the test's text in raw (the lines as UTF-8 bytes: ast's
    columns count bytes) into 1 or 0 and spaces. A line the test goes on
    from ends in a backslash, so the lines stay one statement whether or
    not the test's brackets were its own. False (raw untouched) where a
    line has no room for them (the digit and a backslash on the first)."""
    first, last = test.lineno - 1, test.end_lineno - 1
    spans = []
    for n in range(first, last + 1):
        start = test.col_offset if n == first else 0
        end = test.end_col_offset if n == last else len(raw[n].rstrip(b"\r"))
        spans.append((n, start, end))
    if any(end - start < (2 if n == first else 1) for n, start, end in spans[:-1]):
        return False
    for n, start, end in spans:
        fill = (b"1" if truth else b"0") if n == first else b""
        cont = b"\\" if n != last else b""
        blank = b" " * (end - start - len(fill) - len(cont))
        raw[n] = raw[n][:start] + fill + blank + cont + raw[n][end:]
    return True


def decide_conditions(text, glb, tree=None):
    """text with each module-level if/elif test that Python decided from
    the live values glb holds written over by its result (see the module's
    note); text itself where there is none, or where the result would not
    parse. tree: text's, when parsed already."""
    try:
        tree = tree or ast.parse(text)
        found = []
        _tests(tree.body, found)
        found = [(test, line) for test, line in found if _has_name(test)]
        if not found:
            return text
        where, declared = _bindings(tree), _declared_global(tree, text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    raw = text.encode("utf-8").split(b"\n")
    changed = False
    for test, line in found:
        try:
            truth = bool(_evaluate(test, _Values(where, declared, glb, line)))
        except (_Undecided, RecursionError):
            continue
        changed = _write_over(raw, test, truth) or changed
    if not changed:
        return text
    new = b"\n".join(raw).decode("utf-8")
    try:
        ast.parse(new)
    except (SyntaxError, ValueError):
        return text
    return new


def live_source(path, text, glb, tree=None):
    """text (the source tk compiles for path) with the tests Python decided
    written over and the live bindings of the names host code binds
    appended; text itself where there are none. tree: text's, when parsed
    already."""
    if path in _live:
        return _live[path]
    try:
        tree = tree or ast.parse(text)
    except (SyntaxError, ValueError):
        _live[path] = text
        return text
    _trees[path] = tree
    lines = []
    for name in sorted(host_bound_names(tree)):
        if name.startswith("__") or name not in glb:
            continue
        spelt = _spell(glb[name], glb, path)
        if spelt is not None and spelt != name:
            lines.append(f"{name} = {spelt}")
    text = decide_conditions(text, glb, tree)
    imports = _injected(tree, glb)
    if lines or imports:
        tail = "" if text.endswith("\n") else "\n"
        head = [f"import triton.language as {_LIVE_TL}"] if lines else []
        text = text + tail + "\n".join(head + imports + lines) + "\n"
    _live[path] = text
    return text


def _injected(tree, glb):
    """An import for each name the file's code reads but never binds, which
    host code put into the module's namespace after the file ran (a code
    generator binding the @jit helper its generated kernel calls): `from M
    import f as name`, M the module Python defined the helper in."""
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    out = []
    for name in sorted(read - bound):
        fn = _pyfn_of(glb.get(name))
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
        file = getattr(module, "__file__", None)
        # defined at the module's top level (where a host decorator, such as
        # a generator's, rebinds the name, the front end still reads the def)
        if not isinstance(file, str) or fn.__code__.co_filename != file or \
                fn.__qualname__ != fn.__name__:
            continue
        root = _root_of(module.__name__, os.path.abspath(file))
        if root is None:
            continue
        if root not in _roots and root not in _searched:
            _roots.append(root)
        out.append(f"from {module.__name__} import {fn.__name__} as {name}")
    return out


# ---- the package files a kernel file imports from ----

_MAX_DEPTH = 8   # import levels followed from a kernel file
_MAX_FILES = 512  # files one kernel file's imports reach (the front end's bound)
_walked = set()  # kernel files whose imports have been handed to libtk
_handed = set()  # package files whose live text has been made
_imports = {}    # file -> (file, module name) of each package file its imports name


def _read_itself(name):
    """A module the front end reads itself, never as a file (triton's are
    the facade on this route)."""
    return name in ("triton", "math", "torch", "importlib", "importlib.util") or \
        name.startswith("triton.")


def _named_modules(st, package):
    """(module name, relative) of each module an import statement reads:
    `import a.b` reads a and a.b, `from m import x` m and m.x (x may be a
    submodule)."""
    if isinstance(st, ast.Import):
        parts = [a.name.split(".") for a in st.names if not _read_itself(a.name)]
        return [(".".join(p[:i]), False) for p in parts for i in range(1, len(p) + 1)]
    base = st.module or ""
    if st.level:
        try:
            base = importlib.util.resolve_name("." * st.level + base, package)
        except (ImportError, ValueError):
            return []
    if not base or _read_itself(base):
        return []
    return [(base, st.level > 0)] + [(f"{base}.{a.name}", st.level > 0)
                                     for a in st.names if a.name != "*"]


_roots = []  # folders Python found imported packages in, for libtk to search
_searched = set()  # the folders libtk was told of


def _root_of(name, file):
    """The folder module `name` (whose file is `file`) was found in, as
    Python found it on sys.path, or None where its name and file disagree."""
    rel = name.replace(".", os.sep)
    for tail in (rel + ".py", os.path.join(rel, "__init__.py")):
        if file.endswith(os.sep + tail):
            return os.path.realpath(file[:-len(tail)])
    return None


def _found_file(name, relative, importer):
    """The .py file of module `name` as Python found it from importer: a
    relative import, or an absolute one whose root folder is importer's
    folder or a parent of it (where the front end looks), else one libtk is
    told to search (a module a code generator wrote outside the package it
    imports from); None where the name and the file disagree."""
    file = getattr(sys.modules.get(name), "__file__", None)
    if not isinstance(file, str) or not file.endswith(".py"):
        return None
    file = os.path.abspath(file)
    if relative:
        return file
    root = _root_of(name, file)
    if root is None:
        return None
    here = os.path.realpath(os.path.dirname(importer))
    if (here + os.sep).startswith(root.rstrip(os.sep) + os.sep):
        return file
    if not _package_has_jit(name.split(".")[0]):
        return None  # a package of host code only (numpy): the front end need not read it
    if root not in _roots and root not in _searched:
        _roots.append(root)
    return file


_jit_packages = {}  # top-level package name -> whether a module of it defines @jit functions


def _package_has_jit(top):
    """Whether a loaded module of top-level package `top` defines @jit
    functions (its files then hold what kernels import, host choices too)."""
    if top not in _jit_packages:
        _jit_packages[top] = any(_has_jit(m) for n, m in list(sys.modules.items())
                                 if m is not None and (n == top or n.startswith(top + ".")))
    return _jit_packages[top]


def _has_jit(module):
    """Whether a module defines @jit functions (its own, by file)."""
    file = getattr(module, "__file__", None)
    for v in list(vars(module).values()):
        code = getattr(_pyfn_of(v), "__code__", None)
        if code is not None and code.co_filename == file:
            return True
    return False


def _parse(text):
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ast.Module(body=[], type_ignores=[])


def _module_files(path, tree, glb):
    """The package files path's module-level imports name (the imports the
    front end follows)."""
    if path not in _imports:
        package = glb.get("__package__") or ""
        files, found = [], set()
        for st in tree.body:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                for name, relative in _named_modules(st, package):
                    file = _found_file(name, relative, path)
                    if file and file not in found:
                        found.add(file)
                        files.append((file, name))
        _imports[path] = files
    return _imports[path]


def _hand(file, text, tree, glb, overlay):
    """Hands libtk the live text of one package file, once, where it
    differs from the file on disk."""
    if file in _handed:
        return
    _handed.add(file)
    try:
        with open(file, encoding="utf-8", newline="") as f:
            disk = f.read()
    except (OSError, UnicodeDecodeError):
        return
    try:
        new = live_source(file, text, glb, tree)
    except Exception:  # a value whose attributes raise: the file stays as on disk
        return
    finally:
        _trees.pop(file, None)  # the walk has this file's tree already
    if new != disk:
        overlay(file, new)


def overlay_imports(path, glb, text_of, overlay, search):
    """At a kernel file's first launch: the live text of each package file
    it imports from, recursively (breadth first, at most _MAX_DEPTH levels
    and _MAX_FILES files), goes to overlay(file, text) where it differs
    from the disk, and search(folder) names each folder Python found such a
    package in away from the importing file. text_of(file) is the text tk
    compiles for a file before the live values are taken ("" where it
    cannot be read)."""
    try:
        _walk(path, glb, text_of, overlay)
    finally:
        while _roots:
            _searched.add(_roots[0])
            search(_roots.pop(0))


def _walk(path, glb, text_of, overlay):
    if path in _walked:
        return
    _walked.add(path)
    seen = {path}
    tree = _trees.pop(path, None)
    tree = None if path in _imports else tree or _parse(text_of(path))
    todo = [(path, tree, glb, 0)]
    while todo:
        where, tree, g, depth = todo.pop(0)
        if depth == _MAX_DEPTH:
            continue
        for file, name in _module_files(where, tree, g):
            module = sys.modules.get(name)
            if file in seen or module is None or len(seen) >= _MAX_FILES:
                continue
            seen.add(file)
            try:
                text = text_of(file)
            except ValueError:  # not UTF-8: libtk reads the file as it is
                continue
            if not text:
                continue
            sub = None if file in _imports and file in _handed else _parse(text)
            _hand(file, text, sub, vars(module), overlay)
            todo.append((file, sub, vars(module), depth + 1))
