"""A jit helper under a condition tk cannot decide (another package's
function)."""
from somewhere import mystery

if mystery():
    import triton

    @triton.jit
    def twice(x):
        return x * 2
