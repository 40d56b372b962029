"""LayerNorm as the tutorials write it: a forward that loops over a row in
BLOCK_SIZE chunks (two passes: mean, then variance), storing mean and
rstd; a backward for dX that accumulates partial dW/dB in GROUP_SIZE_M
buffers guarded by spin locks (atomic_cas / atomic_xchg)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = X + row * stride
    y_row = Y + row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    # the statistics in one pass: per-lane sums of x and of x^2, both taken
    # about the row's first element so that the variance's subtraction
    # stays well conditioned when the mean is large against the spread
    pivot = tl.load(x_row).to(tl.float32)
    s1 = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    s2 = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        offs = start + cols
        inb = offs < N
        d = tl.where(inb, tl.load(x_row + offs, mask=inb, other=0.0).to(tl.float32) - pivot, 0.0)
        s1 += d
        s2 += d * d
    m1 = tl.sum(s1, axis=0) / N
    var = tl.maximum(tl.sum(s2, axis=0) / N - m1 * m1, 0.0)
    mu = pivot + m1
    inv_std = 1.0 / tl.sqrt(var + eps)
    tl.store(Mean + row, mu)
    tl.store(Rstd + row, inv_std)
    # then normalise, scale and shift each chunk
    for start in range(0, N, BLOCK_SIZE):
        offs = start + cols
        inb = offs < N
        v = tl.load(x_row + offs, mask=inb, other=0.0).to(tl.float32)
        g = tl.load(W + offs, mask=inb)
        h = tl.load(B + offs, mask=inb)
        out = (v - mu) * inv_std * g + h
        tl.store(y_row + offs, out.to(Y.dtype.element_ty), mask=inb)


@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE_N)
    inb = offs < N
    base = row * stride
    # the whole row fits in one block: load it and its statistics
    xv = tl.load(X + base + offs, mask=inb, other=0.0).to(tl.float32)
    gy = tl.load(DY + base + offs, mask=inb, other=0.0).to(tl.float32)
    g = tl.load(W + offs, mask=inb, other=0.0).to(tl.float32)
    mu = tl.load(Mean + row)
    inv_std = tl.load(Rstd + row)
    xn = tl.where(inb, (xv - mu) * inv_std, 0.0)
    gw = tl.where(inb, g * gy, 0.0)
    # dx = rstd * (w*dy - xhat * mean(xhat*w*dy) - mean(w*dy))
    proj = tl.sum(xn * gw, axis=0) / N
    shift = tl.sum(gw, axis=0) / N
    gx = (gw - (xn * proj + shift)) * inv_std
    tl.store(DX + base + offs, gx.to(DX.dtype.element_ty), mask=inb)
    # partial dw/db contributions of this row
    pw = (gy * xn).to(DW.dtype.element_ty)
    pb = gy.to(DB.dtype.element_ty)
    # rows share GROUP_SIZE_M accumulator rows; Lock[:G] are the spin locks,
    # Lock[G:] flag whether the accumulator row has been written yet
    slot = row % GROUP_SIZE_M
    mutex = Lock + slot
    written = Lock + GROUP_SIZE_M + slot
    dw_row = DW + slot * N + offs
    db_row = DB + slot * N + offs
    while tl.atomic_cas(mutex, 0, 1) == 1:
        pass
    seen = tl.load(written)
    if seen == 0:
        tl.atomic_xchg(written, 1)
    else:
        pw += tl.load(dw_row, mask=inb, other=0.0)
        pb += tl.load(db_row, mask=inb, other=0.0)
    tl.store(dw_row, pw, mask=inb)
    tl.store(db_row, pb, mask=inb)
    tl.atomic_xchg(mutex, 0)


def layer_norm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty((M,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
    BLOCK_SIZE = min(65536 // x.element_size(), triton.next_power_of_2(N))
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _layer_norm_fwd_fused[(M,)](x, y, weight, bias, mean, rstd, x.stride(0), N, eps,
                                BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return y, mean, rstd
