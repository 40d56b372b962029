"""The backward of the gated RMSNorm that mamba2 and flash-linear-attention
put after their mixers, y = rmsnorm(x) * w * silu(z) per group of N
channels (norm before gate). Nothing but the forward's 1/rms is kept: each
program recomputes x_hat and the gate for its run of rows and writes dx and
dz, and accumulates its own partial dw row in fp32 (summed over the
programs afterwards). Grid: (row blocks, groups)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gated_rmsnorm_bwd_kernel(X, W, Z, DY, DX, DZ, DW, Rstd, stride_x_row, stride_z_row,
                              stride_dy_row, stride_dx_row, stride_dz_row, stride_dw_row, M, N,
                              rows_per_program, BLOCK_N: tl.constexpr,
                              NORM_BEFORE_GATE: tl.constexpr):
    row_block_id = tl.program_id(0)
    group = tl.program_id(1)
    row_start = row_block_id * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, M)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    X += row_start * stride_x_row + group * N
    Z += row_start * stride_z_row + group * N
    DY += row_start * stride_dy_row + group * N
    DX += row_start * stride_dx_row + group * N
    DZ += row_start * stride_dz_row + group * N
    Rstd += group * M
    w = tl.load(W + group * N + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for row in range(row_start, row_end):
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        z = tl.load(Z + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + cols, mask=mask, other=0.0).to(tl.float32)
        if not NORM_BEFORE_GATE:
            x_og = x
            x *= z * tl.sigmoid(z)
        rstd = tl.load(Rstd + row)
        xhat = tl.where(mask, x * rstd, 0.0)
        if NORM_BEFORE_GATE:
            z_sig = tl.sigmoid(z)
            y = xhat * w
            # d silu(z) / dz = sig(z) * (1 + z * (1 - sig(z)))
            dz = dy * y * z_sig * (1 + z * (1 - z_sig))
            tl.store(DZ + cols, dz.to(DZ.dtype.element_ty), mask=mask)
            dy *= z * z_sig
        wdy = w * dy
        dw += dy * xhat
        c1 = tl.sum(xhat * wdy, axis=0) / N
        dx = (wdy - xhat * c1) * rstd
        if not NORM_BEFORE_GATE:
            z_sig = tl.sigmoid(z)
            dz = dx * x_og * z_sig * (1 + z * (1 - z_sig))
            tl.store(DZ + cols, dz.to(DZ.dtype.element_ty), mask=mask)
            dx *= z * z_sig
        tl.store(DX + cols, dx.to(DX.dtype.element_ty), mask=mask)
        X += stride_x_row
        Z += stride_z_row
        DY += stride_dy_row
        DX += stride_dx_row
        DZ += stride_dz_row
    tl.store(DW + row_block_id * stride_dw_row + group * N + cols, dw, mask=mask)


def gated_rmsnorm_bwd(dy, x, w, z, rstd, group_size, norm_before_gate=True):
    M, D = x.shape
    ngroups = D // group_size
    sm_count = torch.cuda.get_device_properties(x.device).multi_processor_count
    nprog = 2 * sm_count
    dx, dz = torch.empty_like(x), torch.empty_like(z)
    dw_part = torch.empty(nprog, D, dtype=torch.float32, device=x.device)
    rows_per_program = triton.cdiv(M, nprog)
    BLOCK_N = triton.next_power_of_2(group_size)
    _gated_rmsnorm_bwd_kernel[(nprog, ngroups)](
        x, w, z, dy, dx, dz, dw_part, rstd, x.stride(0), z.stride(0), dy.stride(0), dx.stride(0),
        dz.stride(0), dw_part.stride(0), M, group_size, rows_per_program, BLOCK_N=BLOCK_N,
        NORM_BEFORE_GATE=norm_before_gate, num_warps=min(max(BLOCK_N // 256, 1), 8))
    return dx, dz, dw_part.sum(0).to(w.dtype)
