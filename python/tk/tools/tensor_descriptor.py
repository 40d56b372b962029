"""TensorDescriptor: a tensor described on the host for a kernel parameter
that takes a descriptor (Triton's triton.tools.tensor_descriptor). The
launch passes its base, shape and strides, and specialises on its dtype,
block shape and the base's alignment; shapes and strides are in elements."""
from dataclasses import dataclass
from typing import Any, List


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    # what reads past the edge give: "zero" (tk's host descriptors read
    # zeros only; a launch with "nan" is refused with a message)
    padding: str = "zero"

    def __post_init__(self):
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"tk: a TensorDescriptor's padding must be 'zero' or 'nan', "
                             f"not {self.padding!r}")

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        """A descriptor over all of `tensor` (a torch tensor or a numpy
        array), read and written in blocks of `block_shape`."""
        shape = [int(d) for d in tensor.shape]
        if callable(getattr(tensor, "stride", None)):
            strides = [int(s) for s in tensor.stride()]  # torch: elements
        else:
            strides = [int(s) // tensor.itemsize for s in tensor.strides]  # numpy: bytes
        return TensorDescriptor(tensor, shape, strides, [int(b) for b in block_shape], padding)
