"""Ragged descriptors, as Triton's triton.tools.ragged_tma: one descriptor
over a tensor whose first dims hold batches of unequal lengths (the rows
of the experts of a MoE layer, one after another), read and written a
batch at a time with the bounds checked at the batch's edges, so that no
block reads or writes a neighbouring batch.

The descriptor has two more leading dims than the tensor, and its ragged
dim is 2**30 long. Row r of the batch [start, start + size) is at leading
coordinates (2**30, start + size) and ragged coordinate 2**30 - size + r:
through the leading dims' strides (2**34 - s and s, s the ragged dim's
stride) its address wraps, in 64-bit pointer arithmetic, to row start + r
of the tensor, and the ragged dim's bound falls at the batch's end. A
write-only descriptor keeps one leading dim and moves its base back by
2**30 rows instead.

This file is also the source the compiler reads for
`from triton.tools.ragged_tma import load_ragged, store_ragged` (libtk
carries it), so its kernels' part is written in the language tk reads."""
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

_BATCH_ROWS = 1 << 30  # the ragged dim's extent: a batch ends at it
_LEAD = 0x7FFF0000  # the leading dims' extent


class _ShiftedBase:
    """A tensor's data at an address moved by `shift` bytes (modulo 2**64),
    for the launch: what it reads of a tensor besides the address."""

    def __init__(self, tensor, shift):
        self._tensor = tensor
        self._ptr = (tensor.data_ptr() + shift) % (1 << 64)
        self.dtype = tensor.dtype
        self.device = tensor.device

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return self._tensor.get_device()


def _strides(T):
    """T's strides in elements (a torch tensor's or a numpy array's)."""
    if callable(getattr(T, "stride", None)):
        return [int(s) for s in T.stride()]
    return [int(s) // T.itemsize for s in T.strides]


def create_ragged_descriptor(T, block_shape, ragged_dim=0, write_only=False):
    """A descriptor over T (2 or 3 dims; up to 4 when write_only) whose dim
    `ragged_dim` (not the last) holds batches of unequal lengths, each read
    with load_ragged and written with store_ragged, in blocks of
    block_shape."""
    shape, block = [int(d) for d in T.shape], [int(b) for b in block_shape]
    rank = len(shape)
    ragged_dim = ragged_dim + rank if ragged_dim < 0 else ragged_dim
    if not 0 <= ragged_dim < rank - 1:
        raise ValueError("tk: a ragged descriptor's ragged dim must be one of the tensor's "
                         f"dims but the last, not {ragged_dim} of {rank}")
    # the descriptor has 1 (write-only) or 2 dims more than T, and at most 5
    if rank > (4 if write_only else 3):
        raise ValueError(f"tk: a {'write-only' if write_only else 'read-write'} ragged "
                         f"descriptor takes at most {4 if write_only else 3} dims (its "
                         f"descriptor has {1 if write_only else 2} more, and a descriptor at "
                         f"most 5), not {rank}")
    if len(block) != rank:
        raise ValueError(f"tk: block_shape has {len(block)} dims but the tensor {rank}")
    if shape[ragged_dim] > _BATCH_ROWS:
        raise ValueError(f"tk: a ragged dim holds at most 2**30 rows, not {shape[ragged_dim]}")
    strides = _strides(T)
    step = strides[ragged_dim]
    shape[ragged_dim] = _BATCH_ROWS
    if write_only:
        if not callable(getattr(T, "data_ptr", None)):
            raise ValueError("tk: a write-only ragged descriptor moves its base by an "
                             "address, which needs a tensor with data_ptr() (a GPU tensor)")
        base = _ShiftedBase(T, -_BATCH_ROWS * step * T.element_size())
        return TensorDescriptor(base, [_LEAD] + shape, [step] + strides, [1] + block)
    return TensorDescriptor(T, [_LEAD, _LEAD] + shape, [(1 << 34) - step, step] + strides,
                            [1, 1] + block)


@triton.jit
def to_ragged_indices(batch_offset, batch_size, row):
    """The two leading coordinates and the ragged one of row `row` of the
    batch at [batch_offset, batch_offset + batch_size)."""
    return 1073741824, batch_offset + batch_size, 1073741824 - batch_size + row  # 2**30


@triton.jit
def load_ragged(TMA, batch_offset, batch_size, coords, ragged_dim: tl.constexpr = 0):
    """The block at coords of the batch at [batch_offset, batch_offset +
    batch_size) of a read-write ragged descriptor; rows past the batch read
    zero."""
    tl.static_assert(len(TMA.shape) == len(coords) + 2,
                     "load_ragged needs a read-write ragged descriptor")
    lead, end, row = to_ragged_indices(batch_offset, batch_size, coords[ragged_dim])
    at = (lead, end) + tuple(coords[:ragged_dim]) + (row, ) + tuple(coords[ragged_dim + 1:])
    block = TMA.load(at)
    return tl.reshape(block, block.shape[2:])


@triton.jit
def _write_ragged(TMA, batch_offset, batch_size, coords, data, ragged_dim: tl.constexpr,
                  ADD: tl.constexpr):
    """Stores data (or adds it, ADD) at coords of a batch: both layouts."""
    lead, end, row = to_ragged_indices(batch_offset, batch_size, coords[ragged_dim])
    inner = tuple(coords[:ragged_dim]) + (row, ) + tuple(coords[ragged_dim + 1:])
    if len(TMA.shape) == len(coords) + 1:
        at = (end, ) + inner
        block = tl.reshape(data, (1, ) + tuple(data.shape))
    else:
        tl.static_assert(len(TMA.shape) == len(coords) + 2, "a ragged write needs a ragged descriptor")
        at = (lead, end) + inner
        block = tl.reshape(data, (1, 1) + tuple(data.shape))
    if ADD:
        TMA.atomic_add(at, block)
    else:
        TMA.store(at, block)


@triton.jit
def store_ragged(TMA, batch_offset, batch_size, coords, data, ragged_dim: tl.constexpr = 0):
    """Writes data at coords of the batch at [batch_offset, batch_offset +
    batch_size) through a ragged descriptor (read-write or write-only);
    rows past the batch are not written."""
    _write_ragged(TMA, batch_offset, batch_size, coords, data, ragged_dim, False)


@triton.jit
def atomic_add_ragged(TMA, batch_offset, batch_size, coords, data, ragged_dim: tl.constexpr = 0):
    """Adds data atomically at coords of the batch at [batch_offset,
    batch_offset + batch_size), as store_ragged writes; rows past the
    batch are left alone."""
    _write_ragged(TMA, batch_offset, batch_size, coords, data, ragged_dim, True)
