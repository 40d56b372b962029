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
    # program (row block, group): walks its run of rows one at a time, each row a BLOCK_N vector
    pid_m = tl.program_id(0)
    group = tl.program_id(1)
    row_start = pid_m * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, M)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    col_off = group * N
    # shift every base pointer to this group's channels and the first row of the run
    X += row_start * stride_x_row + col_off
    Z += row_start * stride_z_row + col_off
    DY += row_start * stride_dy_row + col_off
    DX += row_start * stride_dx_row + col_off
    DZ += row_start * stride_dz_row + col_off
    Rstd += group * M
    w = tl.load(W + col_off + cols, mask=cmask, other=0.0).to(tl.float32)
    dw_acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for row in range(row_start, row_end):
        x = tl.load(X + cols, mask=cmask, other=0.0).to(tl.float32)
        z = tl.load(Z + cols, mask=cmask, other=0.0).to(tl.float32)
        dy = tl.load(DY + cols, mask=cmask, other=0.0).to(tl.float32)
        rstd = tl.load(Rstd + row)
        sig = tl.sigmoid(z)
        gate = z * sig
        # derivative of silu(z) = z * sigmoid(z)
        dgate = sig * (1.0 + z * (1.0 - sig))
        if NORM_BEFORE_GATE:
            xhat = x * rstd
            xhat = tl.where(cmask, xhat, 0.0)
            dz = dy * xhat * w * dgate
            gdy = dy * gate
            wdy = w * gdy
            dw_acc += gdy * xhat
            c1 = tl.sum(xhat * wdy, axis=0) / N
            dx = (wdy - xhat * c1) * rstd
        else:
            # the norm sees x * silu(z): differentiate through it, then split onto x and z
            xg = x * gate
            xhat = xg * rstd
            xhat = tl.where(cmask, xhat, 0.0)
            wdy = w * dy
            dw_acc += dy * xhat
            c1 = tl.sum(xhat * wdy, axis=0) / N
            dxg = (wdy - xhat * c1) * rstd
            dx = dxg * gate
            dz = dxg * x * dgate
        tl.store(DX + cols, dx.to(DX.dtype.element_ty), mask=cmask)
        tl.store(DZ + cols, dz.to(DZ.dtype.element_ty), mask=cmask)
        X += stride_x_row
        Z += stride_z_row
        DY += stride_dy_row
        DX += stride_dx_row
        DZ += stride_dz_row
    # a program whose run is empty still writes its (zero) partial row
    tl.store(DW + pid_m * stride_dw_row + col_off + cols, dw_acc, mask=cmask)


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
