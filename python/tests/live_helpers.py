"""Host-decided values in a package file that a kernel file imports."""
import tk.language as tl


def _probe():
    return len("probe") == 5  # host code tk's compiler does not run


FACTOR = 3 if _probe() else 7
if _probe():
    fast_exp = tl.extra.cuda.libdevice.exp
else:
    fast_exp = tl.exp
