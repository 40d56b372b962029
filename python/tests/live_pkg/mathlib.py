"""A math library host code picks by calling a function, under try/except,
used by kernels of other files (as FlagGems' tl_extra_shim)."""
import tk.language as tl


def _pick(backend):
    return getattr(tl.extra, backend).libdevice


try:
    shim = _pick("cuda")
except AttributeError:
    shim = tl.math
