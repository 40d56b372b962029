"""FlagGems-style instance norm forward on NCHW fp16: every (batch,
channel) plane is normalised by its own mean and variance over H*W. A
program takes BLOCK_M planes at once and walks their pixels BLOCK_N at a
time, keeping a Welford mean / M2 / count per lane in fp32; the lanes are
merged along the row with tl.reduce and a Welford combine function, then a
second walk writes (x - mean) * rstd * weight[c] + bias[c] in fp16. The
mean and rstd of each plane are stored for the backward."""
import torch
import triton
import triton.language as tl


@triton.jit
def welford_merge(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    # Pooled state of two partial groups; the weight of b is its share of the
    # total count, taken as 0 when both groups are empty.
    n = n_a + n_b
    w_b = n_b / tl.maximum(n, 1.0)
    diff = mean_b - mean_a
    mean = mean_a + diff * w_b
    m2 = m2_a + m2_b + diff * diff * n_a * w_b
    return mean, m2, n


@triton.jit
def instance_norm_fwd_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, n_planes, C, HW,
                             eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    planes = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    plane_ok = planes < n_planes
    base = planes.to(tl.int64)[:, None] * HW
    offs = tl.arange(0, BLOCK_N)

    mean = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    m2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    count = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, HW, BLOCK_N):
        cols = start + offs
        mask = plane_ok[:, None] & (cols < HW)[None, :]
        x = tl.load(x_ptr + base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        new_count = count + mask.to(tl.float32)
        delta = x - mean
        new_mean = mean + delta / tl.maximum(new_count, 1.0)
        m2 = tl.where(mask, m2 + delta * (x - new_mean), m2)
        mean = tl.where(mask, new_mean, mean)
        count = new_count
    mean, m2, count = tl.reduce((mean, m2, count), 1, welford_merge)
    var = m2 / tl.maximum(count, 1.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + planes, mean, mask=plane_ok)
    tl.store(rstd_ptr + planes, rstd, mask=plane_ok)

    ch = planes % C
    w = tl.load(w_ptr + ch, mask=plane_ok, other=1.0).to(tl.float32)
    b = tl.load(b_ptr + ch, mask=plane_ok, other=0.0).to(tl.float32)
    scale = (rstd * w)[:, None]
    shift = (b - mean * rstd * w)[:, None]
    for start in range(0, HW, BLOCK_N):
        cols = start + offs
        mask = plane_ok[:, None] & (cols < HW)[None, :]
        x = tl.load(x_ptr + base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        y = x * scale + shift
        tl.store(y_ptr + base + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def instance_norm(x, weight, bias, eps=1e-5, BLOCK_M=4, BLOCK_N=1024):
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(n * c, device=x.device, dtype=torch.float32)
    rstd = torch.empty(n * c, device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(n * c, BLOCK_M),)
    instance_norm_fwd_kernel[grid](x, y, weight, bias, mean, rstd, n * c, c, h * w, eps,
                                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8)
    return y, mean, rstd
