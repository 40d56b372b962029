"""Host code that wraps kernels kept in another file: no @triton.jit here."""
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError("see kernels.py")


def scale(x):
    return Scale.apply(x)
