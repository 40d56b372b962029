"""Flags computed by host functions that tk's compiler does not run."""
import functools


@functools.cache
def _probe():
    return sorted([3, 1, 2])[0] == 1


FAST = _probe()
MODE = "fast" if _probe() else "slow"
