from .swiglu import SwiGLUFunction  # noqa: F401
from .gated_norm import gated_rms_norm  # noqa: F401
