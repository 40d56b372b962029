"""One process per GPU under torchrun: each rank launches tk kernels on its
own device (y = a * x + rank, then a row softmax), and the ranks all-reduce
the results with torch.distributed (NCCL); every rank checks the sum. The
processes share one tk disk cache.

    PYTHONPATH=PACK torchrun --nproc_per_node=2 examples/python/allreduce_torchrun.py
"""
import os

import torch
import torch.distributed as dist

import tk
import tk.language as tl


@tk.jit
def axpr(x_ptr, y_ptr, n, a, r, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * a + r, mask=mask)


@tk.jit
def softmax_rows(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=offs < cols)


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = f"cuda:{local}"
    n, rows, cols = 10000, 64, 300
    x = torch.arange(n, device=dev, dtype=torch.float32)
    y = torch.empty_like(x)
    axpr[(tk.cdiv(n, 1024),)](x, y, n, 2.0, float(rank), BLOCK=1024)
    m = torch.randn(rows, cols, device=dev, generator=torch.Generator(dev).manual_seed(0))
    s = torch.empty_like(m)
    softmax_rows[(rows,)](m, s, cols, BLOCK=tk.next_power_of_2(cols))
    dist.all_reduce(y)
    dist.all_reduce(s)
    want_y = 2.0 * world * torch.arange(n, device=dev) + sum(range(world))
    torch.testing.assert_close(y, want_y)
    torch.testing.assert_close(s, world * torch.softmax(m, dim=1))
    print(f"rank {rank}/{world} on {dev}: all-reduced tk results match")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
