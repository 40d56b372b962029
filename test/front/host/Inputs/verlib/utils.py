"""Version helpers as kernel libraries write them, in a file of their own."""
import importlib
import importlib.metadata
import operator
from typing import Callable

import triton
from packaging.version import Version


def compare_version(package: str, operator: Callable, target: str):
    try:
        pkg = importlib.import_module(package)
    except ImportError:
        return False
    pkg_version = Version(pkg.__version__)
    return operator(pkg_version, Version(target))


def installed_at_least(package, target):
    """Compares an installed distribution's version."""
    try:
        have = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return False
    return Version(have) >= Version(target)


def triton_major():
    if Version(triton.__version__).major >= 4:
        return 4
    elif Version(triton.__version__).major == 3:
        major = 3
    else:
        return 2
    return major


def torch_at_least(v):
    import torch
    return Version(torch.__version__) >= Version(v)


IS_TRITON_3 = Version(triton.__version__) >= Version("3.0.0")
