"""A package file with a @jit helper beside an object that answers every
attribute with one whose attributes raise (as torch.classes does)."""
import tk
import tk.language as tl


class _Raises:
    def __getattr__(self, name):
        raise RuntimeError(f"no class '{name}' is registered")


class _AnswersAll:
    def __getattr__(self, name):
        return _Raises()


classes = _AnswersAll()


@tk.jit
def triple(x):
    return x * 3 + tl.zeros_like(x)
