"""Whether Triton is installed, found once for the whole package; stand-ins
for its modules where it is not."""
from importlib.util import find_spec

HAS_TRITON = find_spec("triton") is not None


class Placeholder:
    def __getattr__(self, name):
        raise ImportError(f"triton is not installed: {name}")
