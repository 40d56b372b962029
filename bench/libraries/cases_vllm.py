"""cases_vllm.py: vLLM's Triton operators, inference only (no backward):
attention (vllm.attention.ops: merge_attn_states, decode_attention_fwd for
MHA, GQA and MLA over a paged cache, unified_attention on a prefill batch, a
decode batch (its 3d, segmented path) and a mixed chunked-prefill batch,
prefix_prefill's context_attention_fwd), fused MoE
(vllm.model_executor.layers.fused_moe.fused_moe.invoke_fused_moe_kernel: the
gate-up and down GEMMs in bf16, int8_w8a16 with per-channel scales, and the
gptq/awq kernel with int4 weights in groups of 128) and Mamba
(vllm.model_executor.layers.mamba.ops: rms_norm_gated, selective_state_update
in Mamba2's tied-head layout and in Mamba1's, ssd_bmm._bmm_chunk_fwd), each
called through the host function vLLM's layers call, on inference-server
shapes (bf16; "cpu": small shapes for the interpreter).
Run as libdiff.py says, with vLLM (its folder holding vllm/) on PYTHONPATH.
Only the library's call is timed: KV caches, block tables, routing and the
MoE kernels' sorted token ids (moe_align_block_size, a CUDA op in vLLM,
written below in torch) are made when the case is."""
import torch

import libdiff
from libdiff import DEV as dev, bf, f32
if dev == "cpu":  # host code that asks the GPU: the current device, the capability
    import contextlib
    torch.cuda.device = lambda *a, **k: contextlib.nullcontext()
    torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
CASES = case = libdiff.Cases()
i32 = torch.int32
def sz(gpu, cpu): return cpu if libdiff.SHAPES == "cpu" else gpu
def R(*shape, dt=bf, scale=1.0): return libdiff.rand(*shape, dt=dt, g=False, scale=scale)
seq_lens, offsets = libdiff.seq_lens, libdiff.offsets
MAX_LEN = sz(16384, 1024)  # the server's longest sequence: the block tables' width
def block_table(n, width, page, extra=16):
    """A pool of n * width + extra cache blocks and each sequence's width
    blocks, drawn at random from it: an int32 table [n, MAX_LEN / page] as
    vLLM sizes it, its columns past width 0 (unified_attention reads the
    entry after a sequence's last block)."""
    pool = n * width + extra
    table = torch.zeros(n, max(width, -(-MAX_LEN // page)), dtype=i32, device=dev)
    table[:, :width] = torch.randperm(pool, device=dev)[:n * width].view(n, width).to(i32)
    return pool, table


# attention
@case
def merge_attn_states():
    from vllm.attention.ops.triton_merge_attn_states import merge_attn_states as f
    T, H, D = sz((8192, 32, 128), (37, 4, 128))
    po, so = R(T, H, D), R(T, H, D)
    pl, sl = R(H, T, dt=f32, scale=2.0), R(H, T, dt=f32, scale=2.0)
    pl[0, ::29] = float("inf")  # an empty prefix as FA2 gives it: the kernel reads +inf as -inf
    out = torch.empty(T, H, D, dtype=bf, device=dev)
    olse = torch.empty(H, T, dtype=f32, device=dev)
    def run():
        f(out, po, pl, so, sl, olse)
        return [out, olse]
    return [], run

def decode(Hq, Hk, Dk, Dv, page, splits, B, lo, hi, scale):
    """decode_attention_fwd on one new token per request over a paged cache
    [pages, page, Hk, D] whose pages are scattered (the block table a draw
    from the pool); where Dv < Dk (MLA) v is the first Dv channels of k, as
    vLLM's Triton MLA backend keeps them."""
    from vllm.attention.ops.triton_decode_attention import decode_attention_fwd as f
    lens = seq_lens(B, lo, hi)
    P, table = block_table(B, -(-max(lens) // page), page)
    kb = R(P, page, Hk, Dk)
    vb = kb[..., :Dv] if Dv < Dk else R(P, page, Hk, Dv)
    q = R(B, Hq, Dk)
    L = torch.tensor(lens, dtype=i32, device=dev)
    logits = torch.empty(B, Hq, splits, Dv + 1, dtype=f32, device=dev)
    o = torch.empty(B, Hq, Dv, dtype=bf, device=dev)
    def run():
        f(q, kb, vb, o, table, L, logits, splits, scale, page)
        return [o]
    return [], run
@case
def decode_attention_gqa_page16():
    B, Hq, Hk, lo, hi = sz((64, 32, 8, 2048, 4096), (3, 8, 2, 20, 300))
    return decode(Hq, Hk, 128, 128, 16, 8, B, lo, hi, 128 ** -0.5)
@case
def decode_attention_mha_page16():
    B, H, lo, hi = sz((32, 32, 1024, 2048), (3, 4, 20, 300))
    return decode(H, H, 128, 128, 16, 8, B, lo, hi, 128 ** -0.5)
@case
def decode_attention_mla_page64():  # DeepSeek over 8 ranks: 16 heads, 512 latent + 64 rope channels
    B, lo, hi = sz((64, 2048, 4096), (3, 20, 300))
    return decode(16, 1, 576, 512, 64, 4, B, lo, hi, 192 ** -0.5)

def unified(qlens, ctx, Hq, Hk, D=128, bs=16):
    """unified_attention on a batch of sequences with qlens new tokens after
    ctx cached ones, over vLLM's Triton-backend cache [blocks, 2, bs, Hk, D]
    (k and v its two halves), the blocks scattered."""
    from vllm.attention.ops.triton_unified_attention import unified_attention as f
    kvlens = [q + c for q, c in zip(qlens, ctx)]
    P, table = block_table(len(qlens), -(-max(kvlens) // bs), bs)
    k, v = R(P, 2, bs, Hk, D).unbind(1)
    q = R(sum(qlens), Hq, D)
    out = torch.empty_like(q)
    cu = offsets(qlens); used = torch.tensor(kvlens, dtype=i32, device=dev)
    one = torch.ones(1, dtype=f32, device=dev)  # k and v descales (read for an fp8 cache only)
    def run():
        f(q, k, v, out, cu, max(qlens), used, max(kvlens), D ** -0.5, True, (-1, -1), table,
          0.0, None, one, one)
        return [out]
    return [], run
@case
def unified_attention_prefill():
    Hq, Hk = sz((32, 8), (8, 2))
    qlens, ctx = sz(([1536, 1024, 2048, 512], [0, 512, 0, 1024]), ([40, 17, 130], [0, 30, 70]))
    return unified(qlens, ctx, Hq, Hk)
@case
def unified_attention_decode_segments():
    # few enough sequences that a decode batch takes the 3d kernel (16 segments) and reduce_segments
    B, Hq, Hk, lo, hi = sz((12, 32, 8, 4096, 8192), (4, 8, 2, 50, 400))
    return unified([1] * B, [c - 1 for c in seq_lens(B, lo, hi)], Hq, Hk)
@case
def unified_attention_mixed():  # a chunked-prefill step: many decodes and two prefill chunks
    B, Hq, Hk, lo, hi, chunks, cctx = sz((62, 32, 8, 1024, 4096, [512, 1024], [1024, 0]),
                                         (5, 8, 2, 20, 300, [24, 40], [33, 0]))
    return unified([1] * B + chunks, [c - 1 for c in seq_lens(B, lo, hi)] + cctx, Hq, Hk)

@case
def context_attention_prefix_gqa():
    """prefix_prefill.context_attention_fwd: new tokens' q, k, v
    ([tokens, heads, D]) after each sequence's cached context, read from the
    paged cache in vLLM's layouts, k [blocks, Hk, D / 8, bs, 8] and
    v [blocks, Hk, D, bs]."""
    from vllm.attention.ops.prefix_prefill import context_attention_fwd as f
    Hq, Hk, D, bs = *sz((32, 8), (8, 2)), 128, 16
    qlens, ctx = sz(([512, 1024, 768, 256], [1024, 512, 1536, 2048]), ([20, 150], [37, 300]))
    B, T = len(qlens), sum(qlens)
    P, table = block_table(B, -(-max(ctx) // bs), bs)
    kc, vc = R(P, Hk, D // 8, bs, 8), R(P, Hk, D, bs)
    q, k, v = R(T, Hq, D), R(T, Hk, D), R(T, Hk, D)
    o = torch.empty_like(q)
    start = offsets(qlens)[:B].contiguous()
    seq = torch.tensor([a + c for a, c in zip(qlens, ctx)], dtype=i32, device=dev)
    C = torch.tensor(ctx, dtype=i32, device=dev)
    def run():
        f(q, k, v, o, kc, vc, table, start, seq, C, max(qlens))
        return [o]
    return [], run


# fused MoE: DeepSeek-V2-Lite's experts (64, top 6, hidden 2048, intermediate 1408)
T, E, TOPK, H, I = sz((2048, 64, 6, 2048, 1408), (40, 8, 2, 256, 192))
# the kernels' configs: bf16, the 2048-token entry of vLLM's tuned H100 file
# for 64 experts (E=64,N=1280); int8_w8a16, that of a tuned H100 int8_w8a16
# file; int4 (the gptq/awq kernel), vLLM's default, whose BLOCK_SIZE_N and
# BLOCK_SIZE_K the host function fills in
CFG = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 8, "num_stages": 4}
CFG_INT8 = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 64, "num_warps": 4, "num_stages": 3}
CFG_INT4 = {"BLOCK_SIZE_M": 64, "GROUP_SIZE_M": 1}

routing, moe_align = libdiff.routing, libdiff.moe_align

def fused_moe(quant="", down=False):
    """invoke_fused_moe_kernel as fused_experts calls it: the gate-up GEMM
    (hidden states times w13, one output row per (token, slot)), or with down
    the down GEMM (the (token, slot) rows times w2, scaled by the routing
    weight, top_k 1). quant "int8": int8 weights, a float32 scale per output
    channel; "int4": int4 weights packed two a byte along K (zero point 8),
    a bf16 scale per 128 of K."""
    import triton.language as tl
    from vllm.model_executor.layers.fused_moe.fused_moe import invoke_fused_moe_kernel as f
    w, ids = routing(T, E, TOPK)
    cfg = {"": CFG, "int8": CFG_INT8, "int4": CFG_INT4}[quant]
    sid, eid, ntp = moe_align(ids, E, cfg["BLOCK_SIZE_M"])
    N, K = (H, I) if down else (2 * I, H)
    A = R(T * TOPK, K) if down else R(T, K)
    Bs, shape = None, None
    if quant == "int8":
        B = torch.randint(-128, 128, (E, N, K), dtype=torch.int8, device=dev)
        Bs = torch.rand(E, N, device=dev) * (2 / K ** 0.5 / 128) + 1e-4
    elif quant == "int4":
        B = torch.randint(0, 256, (E, N, K // 2), dtype=torch.uint8, device=dev)
        Bs, shape = (torch.rand(E, N, K // 128, device=dev) * (2 / K ** 0.5 / 8) + 1e-4).to(bf), [0, 128]
    else:
        B = R(E, N, K, scale=K ** -0.5)
    C = torch.empty(T, TOPK, N, dtype=bf, device=dev)
    def run():
        f(A, B, C, None, Bs, None, w, sid, eid, ntp, down, 1 if down else TOPK, cfg, tl.bfloat16,
          False, False, quant == "int8", quant == "int4", False, shape)
        return [C]
    return [], run
@case
def fused_moe_bf16_gate_up():
    return fused_moe()
@case
def fused_moe_bf16_down():
    return fused_moe(down=True)
@case
def fused_moe_int8_w8a16():
    return fused_moe("int8")
@case
def fused_moe_gptq_int4_g128():
    return fused_moe("int4")


# Mamba
@case
def rms_norm_gated():  # Mamba2's gated norm (Codestral Mamba: 8192 channels, 8 groups)
    from vllm.model_executor.layers.mamba.ops.layernorm_gated import rms_norm_gated as f
    M, N, G = sz((4096, 8192, 8), (24, 512, 4))
    x, z, w = R(M, N), R(M, N), R(N)
    return [], lambda: f(x, w, None, z=z, eps=1e-5, group_size=N // G, norm_before_gate=False)
@case
def selective_state_update_mamba2():
    """Mamba2's decode step as vLLM's mixer calls it: x, B and C views of one
    projection, dt, dt_bias, A and D one value a head expanded over the head
    dim (the TIE_HDIM path), a bf16 state pool read and written at the
    requests' slots, the last slots padding."""
    from vllm.model_executor.layers.mamba.ops.mamba_ssm import selective_state_update as f
    B, nh, hd, ds, ng, pad = sz((64, 128, 64, 128, 8, 2), (5, 8, 16, 64, 2, 1))
    st = R(B + 16, nh, hd, ds, scale=0.1)
    idx = torch.randperm(B + 16, device=dev)[:B].to(i32)
    idx[B - pad:] = -1
    xbc = R(B, nh * hd + 2 * ng * ds)
    x = xbc[:, :nh * hd].view(B, nh, hd)
    Bm = xbc[:, nh * hd:nh * hd + ng * ds].view(B, ng, ds)
    C = xbc[:, nh * hd + ng * ds:].view(B, ng, ds)
    dt = R(B, nh)[:, :, None].expand(B, nh, hd)
    db = R(nh, scale=0.5)[:, None].expand(nh, hd)
    A = (-torch.rand(nh, device=dev) * 4 - 0.5)[:, None, None].expand(nh, hd, ds)
    D = R(nh)[:, None].expand(nh, hd)
    out = torch.empty(B, nh, hd, dtype=bf, device=dev)
    def run():
        s = st.clone()
        f(s, x, dt, A, Bm, C, D=D, dt_bias=db, dt_softplus=True, state_batch_indices=idx, out=out)
        return [out, s]
    return [], run
@case
def selective_state_update_mamba1():
    """Mamba1's decode step (Falcon-Mamba-7B: 8192 channels, state 16): a
    float32 state pool [slots, dim, dstate], A, D and dt_bias float32 per
    channel, B and C views of the x projection, the gate z."""
    from vllm.model_executor.layers.mamba.ops.mamba_ssm import selective_state_update as f
    B, dim, ds, r = sz((128, 8192, 16, 256), (3, 48, 16, 8))
    st = torch.randn(B + 16, dim, ds, device=dev) * 0.1
    idx = torch.randperm(B + 16, device=dev)[:B].to(i32)
    x, z, dt = R(B, dim), R(B, dim), R(B, dim, scale=0.5)
    p = R(B, r + 2 * ds)
    Bm, C = p[:, r:r + ds], p[:, r + ds:]
    A = -torch.rand(dim, ds, device=dev) * 4 - 0.5
    D, db = torch.randn(dim, device=dev), torch.randn(dim, device=dev) * 0.5
    out = torch.empty(B, dim, dtype=bf, device=dev)
    def run():
        s = st.clone()
        f(s, x, dt, A, Bm, C, D=D, z=z, dt_bias=db, dt_softplus=True, state_batch_indices=idx, out=out)
        return [out, s]
    return [], run
@case
def ssd_bmm_chunk_fwd():
    """ssd_bmm._bmm_chunk_fwd as Mamba2's chunked scan calls it on a prefill
    batch packed into one row: C times B within each chunk, per group, zero
    across sequence boundaries (seq_idx), float32 out."""
    from vllm.model_executor.layers.mamba.ops.ssd_bmm import _bmm_chunk_fwd as f
    L, G, N, cs, nseq = sz((16384, 8, 128, 256, 8), (100, 2, 64, 32, 3))
    Cm, Bm = R(1, L, G, N), R(1, L, G, N)
    cuts = torch.sort(torch.randperm(L - 1, device=dev)[:nseq - 1] + 1).values
    seq_idx = torch.searchsorted(cuts, torch.arange(L, device=dev), right=True).to(i32)[None]
    return [], lambda: f(Cm, Bm, cs, seq_idx=seq_idx, output_dtype=f32)

if __name__ == "__main__":
    libdiff.main(CASES)
