"""Names a kernel file binds by running host code, read from the live module.

tk's compiler reads a kernel file without running it, and decides the host
code it can (version checks, environment reads with literal defaults); a
name it cannot decide (a host function's result, a helper picked under such
a condition) is an error at its use. On the Python route the module has
run, and Triton reads such names from fn.__globals__ when it compiles: so
does tk. At a file's first launch, each module-level name bound by host
code whose live value the language can spell (a bool, int, float, string or
None, a constexpr of one, a dtype, a @jit function of the file, a device
function of triton.language, a tuple of these) is appended to the text tk compiles as `name = value`, after the
last line, so that lines and columns stay where they were and the live
value is the last binding, as in the module. The text is taken once per
file: the bindings are part of the source, and so of the cache key."""
import ast
import math

_LIVE_TL = "_tk_live_tl"
_live = {}


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
    by its place in triton.language."""
    where = getattr(value, "_tk_path", None)
    if not isinstance(where, str):
        return None
    if where.startswith("libdevice."):
        where = "extra.cuda." + where
    return f"{_LIVE_TL}.{where}"


def _jit_name(value, glb, path):
    """A @jit function of this file, by a module name bound to it alone."""
    fn = getattr(value, "_pyfn", None)
    code = getattr(fn, "__code__", None)
    if code is None or code.co_filename != path:
        return None
    name = fn.__name__
    return name if glb.get(name) is value else None


def live_source(path, text, glb):
    """text (the source tk compiles for path) with the live bindings of the
    names host code binds appended; text itself where there are none."""
    if path in _live:
        return _live[path]
    try:
        tree = ast.parse(text)
    except SyntaxError:
        _live[path] = text
        return text
    lines = []
    for name in sorted(host_bound_names(tree)):
        if name.startswith("__") or name not in glb:
            continue
        spelt = _spell(glb[name], glb, path)
        if spelt is not None and spelt != name:
            lines.append(f"{name} = {spelt}")
    if lines:
        tail = "" if text.endswith("\n") else "\n"
        text = text + tail + f"import triton.language as {_LIVE_TL}\n" + "\n".join(lines) + "\n"
    _live[path] = text
    return text
