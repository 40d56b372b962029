"""cases_unsloth.py: unsloth's Triton kernels (unsloth.kernels.*), forward and backward.
Run as libdiff.py says, with the library on PYTHONPATH (its kernels import
unsloth_zoo and transformers at the top; a checkout with those installed, or
stand-ins for the few names they take, will do). moe.grouped_gemm asks the
CUDA driver for the device's capability when imported, so its cases need a GPU."""
import torch
import torch.nn.functional as Fn  # noqa: F401

import libdiff
from libdiff import DEV as dev, bf, f32
SMALL = libdiff.SHAPES != "full"
# tokens, hidden, intermediate, vocab; (batch, q heads, kv heads, seq, head dim)
T, H, I, V = {"cpu": (64, 256, 512, 1000), "mid": (256, 1024, 2048, 8000)}.get(libdiff.SHAPES, (4096, 4096, 11008, 32000))
B, HQ, HK, S, D = {"cpu": (1, 4, 2, 32, 64), "mid": (1, 8, 2, 128, 128)}.get(libdiff.SHAPES, (2, 32, 8, 1024, 128))
CASES = case = libdiff.Cases()
R = libdiff.rand
def labels(n, v):
    t = torch.randint(0, v, (n,), device=dev); t[::7] = -100
    return t
def cos_sin(s=S, d=D):
    ang = torch.arange(s, device=dev, dtype=f32)[:, None] * torch.rand(d // 2, device=dev)[None]
    emb = torch.cat([ang, ang], -1)
    return emb.cos().to(bf), emb.sin().to(bf)
def fp8_block(m, n, blk=128):
    """A (m, n) float8_e4m3fn weight and its (m/blk, n/blk) float32 block scales."""
    w = (torch.randn(m, n, device=dev) * 100).clamp(-448, 448).to(torch.float8_e4m3fn)
    return w, torch.rand(-(-m // blk), -(-n // blk), device=dev) * 0.01 + 1e-3

@case
def cross_entropy():
    from unsloth.kernels.cross_entropy_loss import fast_cross_entropy_loss as f
    x = R(2, T // 2, V, scale=2.0); t = labels(T, V).view(2, T // 2)
    return [x], lambda: f(x, t)
@case
def cross_entropy_softcap_scale():
    from unsloth.kernels.cross_entropy_loss import fast_cross_entropy_loss as f
    x = R(1, T, V, scale=4.0); t = labels(T, V).view(1, T)
    return [x], lambda: f(x, t, logit_softcapping=30.0, logit_scaling=0.5)
@case
def cross_entropy_chunked_vocab():  # vocab over 65536: the chunked forward kernel
    from unsloth.kernels.cross_entropy_loss import fast_cross_entropy_loss as f
    n, v = (4, 70000) if SMALL else (1024, 256000)
    x = R(1, n, v, scale=2.0); t = labels(n, v).view(1, n)
    return [x], lambda: f(x, t, logit_softcapping=30.0)
def gated(name, module, kernel, backward):
    """A case of one GeGLU/SwiGLU kernel: forward (e, g), or backward (dw,
    e, g), which works in place, so each call takes clones."""
    def make():
        import importlib
        f = getattr(importlib.import_module("unsloth.kernels." + module), kernel)
        if backward:
            dw, e, g = R(T, I, g=False), R(T, I, g=False), R(T, I, g=False)
            return [], lambda: f(dw.clone(), e.clone(), g.clone())
        e, g = R(2, T // 2, I, g=False), R(2, T // 2, I, g=False)
        return [], lambda: f(e, g)
    make.__name__ = name
    case(make)
for _args in [("geglu_exact_forward", "geglu", "geglu_exact_forward_kernel", False),
              ("geglu_exact_backward", "geglu", "geglu_exact_backward_kernel", True),
              ("geglu_approx_forward", "geglu", "geglu_approx_forward_kernel", False),
              ("geglu_approx_backward", "geglu", "geglu_approx_backward_kernel", True),
              ("swiglu_forward", "swiglu", "swiglu_fg_kernel", False),
              ("swiglu_backward", "swiglu", "swiglu_DWf_DW_dfg_kernel", True)]:
    gated(*_args)
def lora_mlp(fwd, bwd):
    """LoRA_MLP (bf16 base weights, rank-16 adapters): the activation's forward and backward kernels under autograd."""
    from unsloth.kernels.fast_lora import LoRA_MLP
    r, h, i = 16, H // 2, I // 2
    X = R(2, T // 4, h)
    gW, uW, dW = R(i, h, g=False, scale=0.05), R(i, h, g=False, scale=0.05), R(h, i, g=False, scale=0.05)
    gA, uA, dA = R(r, h, scale=0.1), R(r, h, scale=0.1), R(r, i, scale=0.1)
    gB, uB, dB = R(i, r, scale=0.1), R(i, r, scale=0.1), R(h, r, scale=0.1)
    ins = [X, gA, gB, uA, uB, dA, dB]
    return ins, lambda: LoRA_MLP.apply(X, gW, None, gA, gB, 2.0, uW, None, uA, uB, 2.0, dW, None, dA, dB, 2.0, fwd, bwd, False)
@case
def lora_mlp_swiglu():
    from unsloth.kernels.swiglu import swiglu_fg_kernel as f, swiglu_DWf_DW_dfg_kernel as b
    return lora_mlp(f, b)
@case
def lora_mlp_geglu_exact():
    from unsloth.kernels.geglu import geglu_exact_forward_kernel as f, geglu_exact_backward_kernel as b
    return lora_mlp(f, b)
@case
def lora_mlp_geglu_approx():
    from unsloth.kernels.geglu import geglu_approx_forward_kernel as f, geglu_approx_backward_kernel as b
    return lora_mlp(f, b)
@case
def rms_layernorm():
    from unsloth.kernels.rms_layernorm import Fast_RMS_Layernorm as F
    X, W = R(T, H), R(H, g=False)
    return [X], lambda: F.apply(X, W, 1e-6, False)
@case
def rms_layernorm_gemma_3d():
    from unsloth.kernels.rms_layernorm import Fast_RMS_Layernorm as F
    X, W = R(2, T // 2, H + 56), R(H + 56, g=False, scale=0.1)
    return [X], lambda: F.apply(X, W, 1e-6, True)
@case
def layernorm():
    from unsloth.kernels.layernorm import Fast_Layernorm as F
    X, W, b = R(2, T // 2, H), R(H, g=False), R(H, g=False)
    return [X], lambda: F.apply(X, W, b, 1e-5)
@case
def rope():
    from unsloth.kernels.rope_embedding import fast_rope_embedding as f
    q, k = R(B, HQ, S, D), R(B, HK, S, D); cos, sin = cos_sin()
    return [q, k], lambda: f(q, k, cos, sin)
@case
def rope_qk_indices():  # Fast_RoPE_Embedding_QK, rotating q and k in place at given positions
    from unsloth.kernels.rope_embedding import fast_rope_embedding as f
    q, k = R(B, HQ, S, D), R(B, HK, S, D); cos, sin = cos_sin(2 * S)
    pos = torch.randint(0, 2 * S, (B, S), device=dev, dtype=torch.int32)
    return [q, k], lambda: f(q.clone(), k.clone(), cos, sin, pos)
@case
def rope_qk_inplace():
    from unsloth.kernels.rope_embedding import Fast_RoPE_Embedding_QK as F
    q, k = R(B, HQ, S, D), R(B, HK, S, D); cos, sin = cos_sin()
    return [q, k], lambda: F.apply(q.clone(), k.clone(), cos, sin, None)
@case
def fp8_weight_dequant():
    from unsloth.kernels.fp8 import weight_dequant as f
    w, s = fp8_block(*((256, 384) if SMALL else (H, I)))
    return [], lambda: f(w, s, bf)
@case
def fp8_act_quant():
    from unsloth.kernels.fp8 import act_quant as f
    x = R(T, H, g=False)
    return [], lambda: f(x, 128)
@case
def fp8_w8a8_block_matmul():
    from unsloth.kernels.fp8 import act_quant, w8a8_block_fp8_matmul_triton as f
    x = R(T, H, g=False); w, s = fp8_block(I, H); xq, xs = act_quant(x, 128)
    return [], lambda: f(xq, w, xs, s, [128, 128], bf)
@case
def fp8_block_quant_linear():
    from unsloth.kernels.fp8 import FP8BlockQuantLinear as F
    x = R(T, H); w, s = fp8_block(I, H)
    return [x], lambda: F.apply(x, w, s)
def moe_routing(t, e, k):
    """m_sizes (int32 tokens per expert) and gather_indices (expert-order positions of the t*k routed rows)."""
    top = torch.stack([torch.randperm(e, device=dev)[:k] for _ in range(t)])
    return torch.bincount(top.view(-1), minlength=e).to(torch.int32), torch.argsort(top.view(-1), stable=True).to(torch.int32)
def grouped_gemm_case(first, autotune=False):
    from unsloth.kernels.moe.grouped_gemm.interface import grouped_gemm as f
    from unsloth.kernels.moe.grouped_gemm.kernels.tuning import (
        KernelConfigBackward_dW as CdW, KernelConfigBackward_dX as CdX, KernelConfigForward as Cf)
    t, e, k, h, i = (64, 4, 2, 128, 64) if SMALL else (1024, 16, 4, 2048, 768)
    m_sizes, gidx = moe_routing(t, e, k)
    X = R(t, h) if first else R(t * k, i)
    W = R(e, 2 * i, h, scale=0.05) if first else R(e, h, i, scale=0.05)
    blk = dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, num_warps=4, num_stages=3)
    cfg = {} if autotune else dict(kernel_config_fwd=Cf(**blk), kernel_config_bwd_dX=CdX(**blk), kernel_config_bwd_dW=CdW(**blk))
    perm = dict(permute_x=first, permute_y=not first, is_first_gemm=first)
    return [X, W], lambda: f(X, W, m_sizes, k, gidx, autotune=autotune, **perm, **cfg)
@case
def grouped_gemm_gate_up_permute_x():
    return grouped_gemm_case(True)
@case
def grouped_gemm_down_permute_y():
    return grouped_gemm_case(False)
@case
def grouped_gemm_autotune():
    return grouped_gemm_case(True, autotune=True)

if __name__ == "__main__":
    libdiff.main(CASES)
