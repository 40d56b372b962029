"""Helpers defined twice in the kernel's own file, under conditions only
host code decides (a host function's result, a name it binds)."""
import tk
import tk.language as tl


def _probe():
    return sorted([3, 1, 2])[0] == 1  # a call tk's compiler does not run


USE_DOUBLE = _probe()
LEVEL = _probe() + 2
NAME = "grün" if _probe() else "blau"

if USE_DOUBLE:
    @tk.jit
    def pick(x):
        return x * 2
else:
    @tk.jit
    def pick(x):
        return x + 100

if LEVEL > 5:
    @tk.jit
    def bump(x):
        return x + 1000
elif (not USE_DOUBLE
      or LEVEL == 3) and NAME == "grün":
    @tk.jit
    def bump(x):
        return x + 1
else:
    @tk.jit
    def bump(x):
        return x - 1


@tk.jit
def pick_bump(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, bump(pick(tl.load(x_ptr + offs))))
