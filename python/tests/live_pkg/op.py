"""Helpers defined twice, each under a condition only host code decides
(as flash-linear-attention's safe_dot is under IS_NVIDIA_BLACKWELL)."""
import tk
import tk.language as tl

from live_pkg.flags import FAST, MODE

if FAST:
    @tk.jit
    def scale(x):
        return x * 2
else:
    @tk.jit
    def scale(x):
        return x + 100

if MODE == "slow":
    @tk.jit
    def shift(x):
        return x - 1000
else:
    if FAST and MODE in ("fast", "fastest"):
        @tk.jit
        def shift(x):
            return x + tl.full(x.shape, 10, tl.float32)
    else:
        @tk.jit
        def shift(x):
            return x - 7
