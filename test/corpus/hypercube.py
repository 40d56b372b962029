# A row of 2^k elements viewed as k dims of 2, the way Triton's own sort is
# written and bitonic top-k kernels copy it: each step meets every element
# with its partner along one dim (x ^ xor_sum(x, dim) on the bits) and
# keeps the minimum in the lower slot, the maximum in the upper.
import triton
import triton.language as tl


@triton.jit
def _partner(x, n_dims: tl.constexpr, i: tl.constexpr):
    bits = x.to(tl.int32, bitcast=True)
    other = bits ^ tl.xor_sum(bits, n_dims - 1 - i, True)
    return other.to(tl.float32, bitcast=True)


@triton.jit
def _upper(n_dims: tl.constexpr, i: tl.constexpr):
    return tl.reshape(tl.arange(0, 2), [1] * (n_dims - i - 1) + [2] + [1] * i)


@triton.jit
def hypercube_exchange_kernel(x_ptr, out_ptr, N: tl.constexpr, LOG_N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    h = tl.reshape(x, [2] * LOG_N)
    for i in tl.static_range(LOG_N):
        y = _partner(h, LOG_N, i)
        h = tl.where(_upper(LOG_N, i) == 1, tl.maximum(h, y), tl.minimum(h, y))
    tl.store(out_ptr + row * N + tl.arange(0, N), tl.reshape(h, [N]))
