"""A vendor check whose answer needs another package: tk cannot run it."""


def is_npu_available():
    try:
        from transformers.utils import is_torch_npu_available

        return is_torch_npu_available()
    except ImportError:
        return False
