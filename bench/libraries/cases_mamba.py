"""cases_mamba.py: mamba_ssm's Triton operators (mamba_ssm.ops.triton.*), forward and backward.
Run as libdiff.py says, with the library on PYTHONPATH."""
import torch
import torch.nn.functional as Fn  # noqa: F401

import libdiff
from libdiff import DEV as dev, bf, f32
CASES = case = libdiff.Cases()
R = libdiff.rand
def leaf(t): return t.detach().requires_grad_(True)

def ssd_inputs(b=2, l=1024, h=16, p=64, g=1, n=128):
    x = R(b, l, h, p); dt = leaf(Fn.softplus(torch.randn(b, l, h, device=dev) - 2.0))
    A = leaf(-torch.rand(h, device=dev) - 0.5); Bm = R(b, l, g, n, scale=0.5); C = R(b, l, g, n, scale=0.5)
    return x, dt, A, Bm, C
@case
def ssd_chunk_scan_combined():
    from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined as f
    x, dt, A, Bm, C = ssd_inputs(); D = R(16, dt=f32); z = R(2, 1024, 16, 64)
    return [x, dt, A, Bm, C, D, z], lambda: f(x, dt, A, Bm, C, 256, D=D, z=z)
@case
def ssd_chunk_scan_dt_softplus_states():
    from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined as f
    x, dt, A, Bm, C = ssd_inputs(g=2); db = R(16, dt=f32, scale=0.1)
    h0 = R(2, 16, 64, 128, dt=f32, scale=0.1)
    return [x, dt, A, Bm, C, db, h0], lambda: f(x, dt, A, Bm, C, 128, dt_bias=db, initial_states=h0, dt_softplus=True, return_final_states=True)
@case
def selective_state_update():
    from mamba_ssm.ops.triton.selective_state_update import selective_state_update as f
    st = torch.randn(64, 32, 64, 128, device=dev) * 0.1
    x, dt = R(64, 32, 64, g=False), R(64, 32, 64, g=False, scale=0.1)
    A = -torch.rand(32, 64, 128, device=dev); Bm, C = R(64, 1, 128, g=False), R(64, 1, 128, g=False)
    D = torch.randn(32, 64, device=dev); z = R(64, 32, 64, g=False); db = torch.randn(32, 64, device=dev) * 0.1
    def run():
        s = st.clone()
        y = f(s, x, dt, A, Bm, C, D=D, z=z, dt_bias=db, dt_softplus=True)
        return [y, s]
    return [], run
@case
def layer_norm_fn_residual():
    from mamba_ssm.ops.triton.layer_norm import layer_norm_fn as f
    x, r, w, b = R(4096, 2048), R(4096, 2048), R(2048), R(2048)
    return [x, r, w, b], lambda: f(x, w, b, residual=r, prenorm=True, residual_in_fp32=True)
@case
def rms_norm_fn_dropout_free():
    from mamba_ssm.ops.triton.layer_norm import rms_norm_fn as f
    x, w = R(4096, 2560), R(2560)
    return [x, w], lambda: f(x, w, None, eps=1e-5)
@case
def rmsnorm_gated():
    from mamba_ssm.ops.triton.layernorm_gated import rmsnorm_fn as f
    x, z, w = R(8192, 2048), R(8192, 2048), R(2048)
    return [x, z, w], lambda: f(x, w, None, z=z, group_size=512, norm_before_gate=False)
@case
def mamba3_siso():
    from mamba_ssm.ops.triton.mamba3.mamba3_siso_combined import mamba3_siso_combined as f
    b, l, h, dqk, dv, da = 2, 1024, 8, 128, 64, 32
    Q, Kk, V = R(b, l, h, dqk, scale=0.3), R(b, l, h, dqk, scale=0.3), R(b, l, h, dv)
    DT = leaf(Fn.softplus(torch.randn(b, h, l, device=dev) - 2.0)); ADT = leaf(-DT.detach() * 0.5)
    Trap = leaf(torch.rand(b, h, l, device=dev)); qb, kb = R(h, dqk, dt=f32, scale=0.1), R(h, dqk, dt=f32, scale=0.1)
    Ang = R(b, l, h, da, dt=f32); D = R(h, dt=f32); Z = R(b, l, h, dv)
    return [Q, Kk, V, ADT, DT, Trap, qb, kb, Ang, D, Z], lambda: f(Q, Kk, V, ADT, DT, Trap, qb, kb, Ang, D, Z)

if __name__ == "__main__":
    libdiff.main(CASES)
