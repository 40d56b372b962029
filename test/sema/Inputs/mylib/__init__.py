"""A small package of kernels, for the package import tests."""
from .utils import next_pow2
