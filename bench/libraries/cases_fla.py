"""cases_fla.py: flash-linear-attention's operators (fla.ops.*, fla.modules.*), forward and backward.
Run as libdiff.py says, with the library on PYTHONPATH."""
import torch
import torch.nn.functional as Fn  # noqa: F401

import libdiff
from libdiff import DEV as dev, bf, f32
B, T, H, K, V = {"cpu": (1, 64, 2, 64, 64), "mid": (1, 192, 2, 128, 128)}.get(libdiff.SHAPES, (2, 1024, 8, 128, 128))
CASES = case = libdiff.Cases()
R = libdiff.rand
def leaf(t): return t.detach().requires_grad_(True)
def lowrank():
    """The a = -k, b = k * beta pair of the generalized delta rules."""
    kk = Fn.normalize(torch.randn(B, T, H, 64, device=dev), dim=-1)
    return leaf((-kk).to(bf)), leaf((kk * torch.rand(B, T, H, 1, device=dev)).to(bf))
def qkv(k=K, v=V, h=H, norm=False):
    q, kk, vv = R(B, T, h, k), R(B, T, h, k), R(B, T, h, v)
    if norm:
        kk = leaf(Fn.normalize(kk.float(), dim=-1).to(bf)); q = leaf(Fn.normalize(q.float(), dim=-1).to(bf))
    return q, kk, vv
def logg(*s, dt=f32):  # log-space decay gates in (-inf, 0)
    return leaf(Fn.logsigmoid(torch.randn(*s, device=dev, dtype=f32) + 2.0).to(dt))

@case
def chunk_gla():
    from fla.ops import chunk_gla as f
    q, k, v = qkv(); g = logg(B, T, H, K)
    return [q, k, v, g], lambda: f(q, k, v, g)[0]
@case
def fused_recurrent_gla():
    from fla.ops import fused_recurrent_gla as f
    q, k, v = qkv(64, 64); g = logg(B, T, H, 64)
    return [q, k, v, g], lambda: f(q, k, v, g)[0]
@case
def chunk_simple_gla():
    from fla.ops import chunk_simple_gla as f
    q, k, v = qkv(); g = logg(B, T, H)
    return [q, k, v, g], lambda: f(q, k, v, g)[0]
@case
def chunk_delta_rule():
    from fla.ops import chunk_delta_rule as f
    q, k, v = qkv(norm=True); beta = leaf(torch.rand(B, T, H, device=dev).to(bf))
    return [q, k, v, beta], lambda: f(q, k, v, beta)[0]
@case
def chunk_gated_delta_rule():
    from fla.ops import chunk_gated_delta_rule as f
    q, k, v = qkv(norm=True); beta = leaf(torch.rand(B, T, H, device=dev).to(bf)); g = logg(B, T, H)
    h0 = R(B, H, K, V, dt=f32, scale=0.1)
    return [q, k, v, g, beta, h0], lambda: f(q, k, v, g, beta, initial_state=h0, output_final_state=True)
@case
def fused_recurrent_gated_delta_rule():
    from fla.ops import fused_recurrent_gated_delta_rule as f
    q, k, v = qkv(norm=True); beta = leaf(torch.rand(B, T, H, device=dev).to(bf)); g = logg(B, T, H)
    q, k, v, g, beta = [t.detach() for t in (q, k, v, g, beta)]
    return [], lambda: f(q, k, v, g=g, beta=beta)[0]
@case
def chunk_kda():
    from fla.ops import chunk_kda as f
    q, k, v = qkv(norm=True); beta = leaf(torch.rand(B, T, H, device=dev).to(bf)); g = logg(B, T, H, K)
    return [q, k, v, g, beta], lambda: f(q, k, v, g, beta)[0]
@case
def chunk_retention():
    from fla.ops import chunk_retention as f
    q, k, v = qkv(scale=1.0) if False else qkv()
    return [q, k, v], lambda: f(q, k, v)[0]
@case
def chunk_linear_attn():
    from fla.ops import chunk_linear_attn as f
    q, k, v = qkv(64, 64)
    return [q, k, v], lambda: f(q, k, v)[0]
@case
def parallel_attn():
    from fla.ops import parallel_attn as f
    q, k, v = qkv()
    return [q, k, v], lambda: f(q, k, v)
@case
def parallel_forgetting_attn():
    from fla.ops import parallel_forgetting_attn as f
    q, k, v = qkv(); g = logg(B, T, H)
    return [q, k, v, g], lambda: f(q, k, v, g)
@case
def fused_recurrent_hgrn():
    from fla.ops import fused_recurrent_hgrn as f
    x = R(B, T, 512); g = logg(B, T, 512)
    return [x, g], lambda: f(x, g)[0]
@case
def chunk_rwkv7():
    from fla.ops import chunk_rwkv7 as f
    r, k, v = qkv(64, 64); w = logg(B, T, H, 64)
    a, b = lowrank()
    return [r, k, v, w, a, b], lambda: f(r, w, k, v, a, b)[0]
@case
def chunk_dplr_delta_rule():
    from fla.ops import chunk_dplr_delta_rule as f
    q, k, v = qkv(64, 64); gk = logg(B, T, H, 64)
    a, b = lowrank()
    return [q, k, v, a, b, gk], lambda: f(q, k, v, a, b, gk)[0]
@case
def chunk_iplr_delta_rule():
    from fla.ops import chunk_iplr_delta_rule as f
    q, k, v = qkv(64, 64); a, b = lowrank()  # forward only: fla has no backward
    q, k, v, a, b = [t.detach() for t in (q, k, v, a, b)]
    return [], lambda: f(q, k, v, a, b)[0]
@case
def chunk_comba():
    from fla.ops import chunk_comba as f
    q, k, v = qkv(norm=True); p = leaf(Fn.normalize(torch.randn(B, T, H, K, device=dev), dim=-1).to(bf))
    beta = leaf(torch.rand(B, T, H, device=dev).to(bf)); g = logg(B, T, H)
    return [q, k, v, p, g, beta], lambda: f(q, k, v, p, g, beta)[0]
@case
def chunk_rwkv6():
    from fla.ops import chunk_rwkv6 as f
    r, k, v = qkv(64, 64); w = logg(B, T, H, 64); u = R(H, 64, scale=0.1)
    return [r, k, v, w, u], lambda: f(r, k, v, w, u)[0]
@case
def fused_recurrent_rwkv6():
    from fla.ops import fused_recurrent_rwkv6 as f
    r, k, v = qkv(64, 64); w = logg(B, T, H, 64); u = R(H, 64, scale=0.1)
    return [r, k, v, w, u], lambda: f(r, k, v, w, u)[0]
@case
def chunk_abc():
    from fla.ops import chunk_abc as f
    q, k, v = qkv(64, 64); s = R(B, T, H, 32)
    return [q, k, v, s], lambda: f(q, k, v, s)[0]
@case
def chunk_hgrn():
    from fla.ops.hgrn import chunk_hgrn as f
    x = R(B, T, 512); g = logg(B, T, 512)
    return [x, g], lambda: f(x, g)[0]
@case
def parallel_path_attn():
    from fla.ops import parallel_path_attn as f
    q, k, v = qkv(64, 64); w = leaf(Fn.normalize(torch.randn(B, T, H, 64, device=dev), dim=-1))
    beta = leaf(torch.rand(B, T, H, device=dev)); g = logg(B, T, H)
    return [q, k, v, w, beta, g], lambda: f(q, k, v, w, beta, g)[0]
@case
def chunk_gated_oja_rule():
    from fla.ops.gated_oja_rule import chunk_gated_oja_rule as f
    q, k, v = qkv(64, 64, norm=True); gv = logg(B, T, H, 64); beta = leaf(torch.rand(B, T, H, device=dev).to(bf))
    return [q, k, v, gv, beta], lambda: f(q, k, v, gv, beta)[0]
@case
def parallel_parallax():
    from fla.ops import parallel_parallax as f
    q, k, v = qkv(64, 64); r = R(B, T, H, 64)
    return [q, r, k, v], lambda: f(q, r, k, v)
@case
def parallel_wall_attn():
    from fla.ops import parallel_wall_attn as f
    q, k, v = qkv(64, 64); g = logg(B, T, H, 64)
    return [q, k, v, g], lambda: f(q, k, v, g)
@case
def parallel_based():
    from fla.ops import parallel_based as f
    q, k, v = qkv(16, 64)
    return [q, k, v], lambda: f(q, k, v)
@case
def chunk_lightning_attn():
    from fla.ops import chunk_lightning_attn as f
    q, k, v = qkv(64, 64)
    return [q, k, v], lambda: f(q, k, v, layer_idx=3, num_layers=12)[0]
@case
def chunk_gsa():
    from fla.ops import chunk_gsa as f
    q, k, v = qkv(64, 64); s = R(B, T, H, 64); g = logg(B, T, H, 64)
    return [q, k, v, s, g], lambda: f(q, k, v, s, g)[0]
@case
def l2norm():
    from fla.modules.l2norm import l2norm as f
    x = R(8192, 1024)
    return [x], lambda: f(x)
@case
def rmsnorm_gated():
    from fla.modules.layernorm_gated import rmsnorm_fn as f
    x, z, w = R(8192, 1024), R(8192, 1024), R(1024)
    return [x, z, w], lambda: f(x, w, None, z=z, group_size=256)
@case
def group_norm_linear():
    from fla.modules import RMSNormLinear
    m = RMSNormLinear(1024).to(dev).to(bf)
    x = R(4096, 1024); lw = R(2048, 1024, scale=0.05); lb = R(2048)
    return [x, lw, lb], lambda: m(x, lw, lb)
@case
def layer_norm_residual():
    from fla.modules import LayerNorm
    m = LayerNorm(2048).to(dev).to(bf)
    x, r = R(4096, 2048), R(4096, 2048)
    return [x, r], lambda: m(x, residual=r, prenorm=True)
@case
def fused_kl_div():
    from fla.modules import FusedKLDivLoss
    m = FusedKLDivLoss()
    x, tx, w = R(1024, 1024, scale=0.5), R(1024, 1024, g=False, scale=0.5), R(16000, 1024, scale=0.05)
    tw = R(16000, 1024, g=False, scale=0.05)
    return [x, w], lambda: m(x, tx, w, tw)
@case
def fused_cross_entropy():
    from fla.modules import FusedCrossEntropyLoss
    m = FusedCrossEntropyLoss()
    x = R(4096, 32000, scale=2.0); t = torch.randint(0, 32000, (4096,), device=dev)
    return [x], lambda: m(x, t)
@case
def token_shift():
    from fla.modules.token_shift import token_shift as f
    x = R(4, 2048, 1024)
    return [x], lambda: f(x)
@case
def conv1d_short():
    from fla.modules.conv.causal_conv1d import causal_conv1d as f
    x = R(4, 2048, 1024); w = R(1024, 4, scale=0.5); b = R(1024)
    return [x, w, b], lambda: f(x, w, b, activation="silu")[0]

if __name__ == "__main__":
    libdiff.main(CASES)
