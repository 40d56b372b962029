"""cases_liger.py: Liger-Kernel's operators (liger_kernel.ops.*), forward and backward.
Run as libdiff.py says, with the library on PYTHONPATH."""
import torch
import torch.nn.functional as Fn  # noqa: F401

import libdiff
from libdiff import DEV as dev, bf, f32
CASES = case = libdiff.Cases()
R = libdiff.rand
@case
def rms_norm_llama():
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction as F
    X, W = R(4096, 4096), R(4096)
    return [X, W], lambda: F.apply(X, W, 1e-6, 0.0, "llama", False)
@case
def rms_norm_gemma_3d():
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction as F
    X, W = R(4, 1024, 2048), R(2048)
    return [X, W], lambda: F.apply(X, W, 1e-6, 1.0, "gemma", False)
@case
def rms_norm_none_odd():
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction as F
    X, W = R(3000, 1000), R(1000)
    return [X, W], lambda: F.apply(X, W, 1e-5, 0.0, "none", False)
@case
def layer_norm():
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction as F
    X, W, B = R(4096, 4096), R(4096), R(4096)
    return [X, W, B], lambda: F.apply(X, W, B, 1e-6)
@case
def fused_add_rms_norm():
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction as F
    X, Rr, W = R(4096, 4096), R(4096, 4096), R(4096)
    return [X, Rr, W], lambda: F.apply(X, Rr, W, 1e-6, 0.0, "llama", False)
@case
def geglu():
    from liger_kernel.ops.geglu import LigerGELUMulFunction as F
    a, b = R(4096, 11008), R(4096, 11008)
    return [a, b], lambda: F.apply(a, b)
@case
def swiglu():
    from liger_kernel.ops.swiglu import LigerSiLUMulFunction as F
    a, b = R(4096, 11008), R(4096, 11008)
    return [a, b], lambda: F.apply(a, b)
@case
def swiglu_fused_gate_up():
    from liger_kernel.ops.swiglu import LigerFusedGateUpSiLUMulFunction as F
    y = R(4096, 2 * 5504)
    return [y], lambda: F.apply(y)
@case
def cross_entropy():
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction as F
    x = R(4096, 32000, scale=2.0); t = torch.randint(0, 32000, (4096,), device=dev); t[::7] = -100
    return [x], lambda: F.apply(x, t, None, -100, 0.0, 0.0, "mean", None, False)
@case
def cross_entropy_smooth_softcap_zloss():
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction as F
    x = R(2048, 32000, dt=f32, scale=4.0); t = torch.randint(0, 32000, (2048,), device=dev)
    wt = torch.rand(32000, device=dev)
    return [x], lambda: F.apply(x, t, wt, -100, 1e-4, 0.1, "sum", 30.0, True)
@case
def rope():
    from liger_kernel.ops.rope import LigerRopeFunction as F
    q, k = R(2, 32, 1024, 128), R(2, 8, 1024, 128)
    pos = torch.arange(1024, device=dev, dtype=f32)[:, None] * torch.rand(64, device=dev)[None]
    emb = torch.cat([pos, pos], -1)[None]
    cos, sin = emb.cos().to(bf), emb.sin().to(bf)
    return [q, k], lambda: F.apply(q, k, cos, sin)
@case
def qwen2vl_mrope():
    from liger_kernel.ops.qwen2vl_mrope import LigerQwen2VLMRopeFunction as F
    q, k = R(2, 16, 512, 128), R(2, 2, 512, 128)
    pos = torch.rand(3, 2, 512, 64, device=dev) * 100
    emb = torch.cat([pos, pos], -1)
    cos, sin = emb.cos().to(bf), emb.sin().to(bf)
    return [q, k], lambda: F.apply(q, k, cos, sin, [16, 24, 24])
@case
def group_norm():
    from liger_kernel.ops.group_norm import LigerGroupNormFunction as F
    X, W, B = R(16, 64, 8192), R(64), R(64)
    return [X, W, B], lambda: F.apply(X, W, B, 64, 8, 1e-6)
@case
def jsd():
    from liger_kernel.ops.jsd import LigerJSDFunction as F
    a = torch.log_softmax(torch.randn(2048, 32000, device=dev), -1).requires_grad_(True)
    b = torch.log_softmax(torch.randn(2048, 32000, device=dev), -1)
    return [a], lambda: F.apply(a, b, None, 0.5, -100)
@case
def jsd_labels_beta0():
    from liger_kernel.ops.jsd import LigerJSDFunction as F
    a = torch.log_softmax(torch.randn(1024, 32000, device=dev), -1).requires_grad_(True)
    b = torch.log_softmax(torch.randn(1024, 32000, device=dev), -1)
    lab = torch.randint(0, 32000, (1024,), device=dev); lab[::5] = -100
    return [a], lambda: F.apply(a, b, lab, 0.0, -100)
@case
def kl_div():
    from liger_kernel.ops.kl_div import LigerKLDivLossFunction as F
    a = torch.log_softmax(torch.randn(2048, 32000, device=dev), -1).requires_grad_(True)
    b = torch.softmax(torch.randn(2048, 32000, device=dev), -1)
    return [a], lambda: F.apply(a, b, "batchmean", False, 1e-10)
@case
def tvd():
    from liger_kernel.ops.tvd import LigerTVDLossFunction as F
    a = torch.softmax(torch.randn(2048, 32000, device=dev), -1).requires_grad_(True)
    b = torch.softmax(torch.randn(2048, 32000, device=dev), -1)
    return [a], lambda: F.apply(a, b, None, "batchmean", -100)
@case
def dyt():
    from liger_kernel.ops.dyt import LigerDyTFunction as F
    x, al, g, b = R(4096, 4096), R(1, dt=bf), R(4096), R(4096)
    return [x, al, g, b], lambda: F.apply(x, al, g, b)
@case
def softmax():
    from liger_kernel.ops.softmax import LigerSoftmaxFunction as F
    x = R(4096, 4096)
    return [x], lambda: F.apply(x)
@case
def softmax_wide():
    from liger_kernel.ops.softmax import LigerSoftmaxFunction as F
    x = R(64, 60000, dt=f32)
    return [x], lambda: F.apply(x)
@case
def sparsemax():
    from liger_kernel.ops.sparsemax import LigerSparsemaxFunction as F
    x = R(1024, 1000, dt=f32)
    return [x], lambda: F.apply(x, -1)
@case
def poly_norm():
    from liger_kernel.ops.poly_norm import LigerPolyNormFunction as F
    X, W, B = R(4096, 4096), R(3, dt=f32), R((), dt=f32)
    return [X, W, B], lambda: F.apply(X, W, B, 1e-6, False)
@case
def relu_squared():
    from liger_kernel.ops.relu_squared import LigerReLUSquaredFunction as F
    X = R(4096, 8192)
    return [X], lambda: F.apply(X)
@case
def modulated_rms_norm():
    from liger_kernel.ops.modulated_rms_norm import LigerModulatedRMSNormFunction as F
    X, W = R(4, 1024, 2048), R(2048)
    scale, shift = R(4, 1, 2048, scale=0.1), R(4, 1, 2048, scale=0.1)
    return [X, W, scale, shift], lambda: F.apply(X, W, scale, shift, 1e-6, 0.0, "llama", False)
@case
def llama4_rope():
    from liger_kernel.ops.llama4_rope import LigerLlama4RopeFunction as F
    q, k = R(2, 1024, 32, 128), R(2, 1024, 8, 128)
    ang = torch.arange(1024, device=dev, dtype=f32)[:, None] * torch.rand(64, device=dev)[None]
    freqs = torch.polar(torch.ones_like(ang), ang)
    return [q, k], lambda: F.apply(q, k, freqs)
@case
def attn_res():
    from liger_kernel.ops.attn_res import LigerAttnResFunction as F
    V, wq, wn = R(6, 4, 512, 1024), R(1024), R(1024)
    return [V, wq, wn], lambda: F.apply(V, wq, wn, 1e-6)
@case
def mhc_coeffs():
    from liger_kernel.ops.mhc import LigerMHCCoeffsFunction as F
    hc, c = 4, 512
    x = R(8, 256, hc, c); phi = R(hc * c, hc * hc + 2 * hc, dt=f32, scale=0.02); b = R(hc * hc + 2 * hc, dt=f32)
    a1, a2, a3 = (R((), dt=f32) for _ in range(3))
    return [x, phi, b, a1, a2, a3], lambda: F.apply(x, phi, b, a1, a2, a3, False, 20, 1e-6, 0.0, 1e-6, 2.0)
@case
def mhc_pre_and_post_res():
    from liger_kernel.ops.mhc import LigerMHCPostResFunction as Post, LigerMHCPreFunction as Pre
    hc, c = 4, 512
    x = R(8, 256, hc, c); h_pre = R(8, 256, hc, dt=f32); f_out = R(8, 256, c)
    h_post, h_res = R(8, 256, hc, dt=f32), R(8, 256, hc, hc, dt=f32, scale=0.5)
    return [x, h_pre, f_out, h_post, h_res], lambda: (Pre.apply(x, h_pre), Post.apply(x, f_out, h_post, h_res))
@case
def embedding():
    from liger_kernel.ops.experimental.embedding import LigerEmbeddingFunction as F
    E = R(32000, 1024); idx = torch.randint(0, 32000, (8, 512), device=dev)
    return [E], lambda: F.apply(E, idx)
@case
def fused_linear_cross_entropy():
    from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction as F
    x, w = R(2048, 2048, scale=0.5), R(32000, 2048, scale=0.05); t = torch.randint(0, 32000, (2048,), device=dev)
    return [x, w], lambda: F.apply(x, w, t)
@case
def fused_linear_jsd():
    from liger_kernel.ops.fused_linear_jsd import LigerFusedLinearJSDFunction as F
    x, w = R(1024, 1024, scale=0.5), R(16000, 1024, scale=0.05)
    tx, tw = R(1024, 1024, g=False, scale=0.5), R(16000, 1024, g=False, scale=0.05)
    return [x, w], lambda: F.apply(x, w, tx, tw, None, 0.5, -100, 1.0)
@case
def multi_token_attention():
    from liger_kernel.ops.multi_token_attention import LigerMultiTokenAttentionFunction as F
    s = R(2, 8, 256, 256, dt=f32); w = R(8, 8, 3, 3, dt=f32, scale=0.3); b = R(8, dt=f32)
    return [s, w, b], lambda: F.apply(s, w, b, 1, 1)
@case
def fused_neighborhood_attention():
    from liger_kernel.ops.fused_neighborhood_attention import LigerFusedNeighborhoodAttentionFunction as F
    q, k, v = R(2, 8, 512, 64), R(2, 8, 512, 64), R(2, 8, 512, 64)
    return [q, k, v], lambda: F.apply(q, k, v, 7, 1, None)
@case
def fused_moe():
    from liger_kernel.ops.fused_moe import LigerFusedMoEFunction as F
    T, H, I, E, K = 1024, 1024, 512, 8, 2
    x, gu, dn = R(T, H, scale=0.5), R(E, 2 * I, H, scale=0.05), R(E, H, I, scale=0.05)
    idx = torch.stack([torch.randperm(E, device=dev)[:K] for _ in range(T)]).to(torch.int32)
    wt = torch.softmax(torch.randn(T, K, device=dev), -1).to(bf)
    return [x, gu, dn], lambda: F.apply(x, gu, dn, idx, wt)

if __name__ == "__main__":
    libdiff.main(CASES)
