"""kernlib: a small package of fused kernels, laid out the way kernel
libraries are (shared helpers, a language extension module, ops)."""
from .utils import calculate_settings, ensure_contiguous

__all__ = ["calculate_settings", "ensure_contiguous"]
__version__ = "0.3.1"
