"""cases_sglang.py: SGLang's Triton operators, inference only (no backward):
attention (sglang.srt.layers.attention.triton_ops: merge_state, prefill,
decode for GQA and MLA, extend, the flashinfer KV-index builder), quantisation
(sglang.srt.layers.quantization: per-token-group fp8, per-token and
per-token-group int8, the block-int8 GEMM) and fused MoE
(sglang.srt.layers.moe.fused_moe_triton.fused_moe_triton_kernels: the expert
GEMM in bf16 and in int8 w8a8 with [128, 128] blocks, act_and_mul, the top-k
sum), each called through the host function SGLang's layers call, on
inference-server shapes (bf16; "cpu": small shapes for the interpreter).
Run as libdiff.py says, with SGLang's python/ folder on PYTHONPATH.
Only the library's call is timed: KV pools, index tables, routing and the
MoE kernels' sorted token ids (moe_align_block_size, a CUDA op in SGLang,
written below in torch) are made when the case is."""
import math

import torch

import libdiff
from libdiff import DEV as dev, bf, f32
CASES = case = libdiff.Cases()
i32 = torch.int32
def sz(gpu, cpu): return cpu if libdiff.SHAPES == "cpu" else gpu
def R(*shape, dt=bf, scale=1.0): return libdiff.rand(*shape, dt=dt, g=False, scale=scale)
seq_lens, offsets = libdiff.seq_lens, libdiff.offsets


# attention
@case
def merge_state():
    from sglang.srt.layers.attention.triton_ops.merge_state import merge_state as f
    T, H, D = sz((8192, 32, 128), (37, 4, 128))
    po, so = R(T, H, D), R(T, H, D)
    pl, sl = R(T, H, dt=f32, scale=2.0), R(T, H, dt=f32, scale=2.0)
    pl[::29, 0] = float("inf")  # an empty prefix: the kernel reads +inf as -inf
    return [], lambda: f(po, pl, so, sl)
@case
def context_attention_causal_gqa():
    from sglang.srt.layers.attention.triton_ops.prefill_attention import context_attention_fwd as f
    (Hq, Hk), D = sz((32, 8), (4, 1)), 128
    lens = sz([2048, 1024, 1536, 2048], [40, 200, 17])
    q, k, v = R(sum(lens), Hq, D), R(sum(lens), Hk, D), R(sum(lens), Hk, D)
    o = torch.empty_like(q)
    st = offsets(lens)[:-1].contiguous(); L = torch.tensor(lens, dtype=i32, device=dev)
    def run():
        f(q, k, v, o, st, L, max(lens), is_causal=True)
        return [o]
    return [], run

def decode(Hq, Hk, Dk, Dv, scale, sinks=False, splits=8):
    """decode_attention_fwd on a batch of one new token per request over a
    KV pool whose slots are scattered (kv_indices a permutation), every
    request split over `splits` chunks (SGLang's default max_kv_splits);
    where Dv < Dk (MLA) v is the first Dv channels of k, as SGLang keeps them."""
    from sglang.srt.layers.attention.triton_ops.decode_attention import decode_attention_fwd as f
    B, lo, hi = sz((64, 2048, 4096), (3, 100, 600))
    lens = seq_lens(B, lo, hi); P = sum(lens) + 256
    kb = R(P, Hk, Dk)
    vb = kb[..., :Dv] if Dv < Dk else R(P, Hk, Dv)
    q = R(B, Hq, Dk)
    indptr = offsets(lens); idx = torch.randperm(P, device=dev)[:sum(lens)].to(i32)
    nsp = torch.full((B,), splits, dtype=i32, device=dev)
    logits = torch.empty(B, Hq, splits, Dv, dtype=f32, device=dev)
    lse = torch.empty(B, Hq, splits, dtype=f32, device=dev)
    o = torch.empty(B, Hq, Dv, dtype=bf, device=dev)
    sk = R(Hq, dt=f32) if sinks else None
    def run():
        f(q, kb, vb, o, indptr, idx, logits, lse, nsp, splits, scale, 1.0, 1.0, sinks=sk)
        return [o]
    return [], run
@case
def decode_attention_gqa():
    Hq, Hk = sz((32, 8), (8, 2))
    return decode(Hq, Hk, 128, 128, 1 / math.sqrt(128))
@case
def decode_attention_gqa_sinks():  # gpt-oss's layout: 64 query heads, 8 kv heads, head dim 64, sinks
    Hq, Hk = sz((64, 8), (8, 1))
    return decode(Hq, Hk, 64, 64, 1 / math.sqrt(64), sinks=True)
@case
def decode_attention_mla():  # DeepSeek-V3 over 8 ranks: 16 heads, 512 latent + 64 rope channels
    return decode(16, 1, 576, 512, 1 / math.sqrt(192))
@case
def extend_attention_gqa():
    from sglang.srt.layers.attention.triton_ops.extend_attention import extend_attention_fwd as f
    (Hq, Hk), D = sz((32, 8), (4, 1)), 128
    pre, ext = sz(([2048, 1024, 1536], [1024, 2048, 1536]), ([30, 0, 150], [70, 130, 33]))
    B = len(ext); tot = [p + e for p, e in zip(pre, ext)]; P = sum(tot) + 512
    kb, vb = R(P, Hk, D), R(P, Hk, D)
    rows = B + 5
    req = torch.zeros(rows, max(tot) + 64, dtype=i32, device=dev)
    ridx = torch.randperm(rows, device=dev)[:B].to(i32)
    loc = torch.randperm(P, device=dev)[:sum(tot)].to(i32)  # each request's slots, request after request
    tt = torch.tensor(tot, device=dev)
    seq = torch.repeat_interleave(torch.arange(B, device=dev), tt)
    pos = torch.arange(sum(tot), device=dev) - torch.repeat_interleave(offsets(tot)[:-1].long(), tt)
    req[ridx.long()[seq], pos] = loc
    new = loc[pos >= torch.tensor(pre, device=dev)[seq]].long()  # the extend tokens, request after request
    ke, ve, qe = kb[new], vb[new], R(sum(ext), Hq, D)
    oe = torch.empty_like(qe)
    seq_len, ext_len = torch.tensor(tot, dtype=i32, device=dev), torch.tensor(ext, dtype=i32, device=dev)
    st = offsets(ext)[:-1].contiguous()
    def run():
        f(qe, ke, ve, oe, kb, vb, req, ridx, seq_len, ext_len, st, max(ext))
        return [oe]
    return [], run

def kv_indices(window):
    """create_flashinfer_kv_indices_triton over a batch of requests of a
    req_to_token table (rows in random order); with window, each request's
    tokens start at a per-request offset (kv_start_idx)."""
    from sglang.srt.layers.attention.triton_ops.kv_indices import create_flashinfer_kv_indices_triton as f
    B, lo, hi, rows, width = sz((256, 2048, 4096, 512, 8192), (5, 10, 1200, 8, 2600))
    r2t = torch.randint(0, 1 << 22, (rows, width), dtype=i32, device=dev)  # exact in the saved fp32 copy
    ridx = torch.randperm(rows, device=dev)[:B].to(i32)
    lens = seq_lens(B, lo, hi); L = torch.tensor(lens, dtype=i32, device=dev)
    start = torch.randint(0, width - hi, (B,), dtype=i32, device=dev) if window else None
    indptr = offsets(lens)
    out = torch.empty(sum(lens), dtype=i32, device=dev)
    def run():
        f[(B,)](r2t, ridx, L, indptr, start, out, r2t.stride(0))
        return [out]
    return [], run
@case
def create_flashinfer_kv_indices():
    return kv_indices(False)
@case
def create_flashinfer_kv_indices_start():
    return kv_indices(True)


# quantisation
QM, QK = sz((16384, 7168), (45, 640))
@case
def per_token_group_quant_fp8():
    from sglang.srt.layers.quantization.fp8_kernel import per_token_group_quant_fp8 as f
    x = R(QM, QK, scale=2.0)
    return [], lambda: f(x, 128)
@case
def per_token_group_quant_fp8_col_major_tma():
    from sglang.srt.layers.quantization.fp8_kernel import per_token_group_quant_fp8 as f
    x = R(QM, QK, scale=2.0)
    return [], lambda: f(x, 128, column_major_scales=True, scale_tma_aligned=True)
@case
def per_token_quant_int8():
    from sglang.srt.layers.quantization.int8_kernel import per_token_quant_int8 as f
    x = R(QM, QK, scale=2.0)
    return [], lambda: f(x)
@case
def per_token_group_quant_int8():
    from sglang.srt.layers.quantization.int8_kernel import per_token_group_quant_int8 as f
    x = R(QM, QK, scale=2.0)
    return [], lambda: f(x, 128)
@case
def w8a8_block_int8_matmul():
    from sglang.srt.layers.quantization.int8_kernel import w8a8_block_int8_matmul as f
    M, N, K = sz((2048, 4096, 7168), (48, 256, 384))
    A = torch.randint(-127, 128, (M, K), dtype=torch.int8, device=dev)
    B = torch.randint(-127, 128, (N, K), dtype=torch.int8, device=dev)
    As = torch.rand(M, K // 128, device=dev) * 0.02 + 0.005
    Bs = torch.rand(N // 128, K // 128, device=dev) * 0.002 + 0.0005
    return [], lambda: f(A, B, As, Bs, [128, 128], output_dtype=bf)


# fused MoE: DeepSeek-V2-Lite's experts (64, top 6, hidden 2048, intermediate 1408)
T, E, TOPK, H, I = sz((2048, 64, 6, 2048, 1408), (40, 8, 2, 256, 192))
# the expert GEMM's config: bf16, the 2048-token entry of vLLM's tuned H200
# table for a MoE of hidden size 2048 (E=128,N=384); block-int8, the one
# SGLang's get_default_config gives block-quantised weights
CFG = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1,
       "num_warps": 8, "num_stages": 4}
CFG_BLOCK = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 32,
             "num_warps": 4, "num_stages": 3}

routing, moe_align = libdiff.routing, libdiff.moe_align

def fused_moe(quant, down=False):
    """invoke_fused_moe_kernel as fused_experts calls it: the gate-up GEMM
    (hidden states times w13, one output row per (token, slot)), or with down
    the down GEMM (the (token, slot) rows times w2, scaled by the routing
    weight, top_k 1)."""
    import triton.language as tl
    from sglang.srt.layers.moe.fused_moe_triton.fused_moe_triton_kernels import invoke_fused_moe_kernel as f
    w, ids = routing(T, E, TOPK)
    cfg = CFG_BLOCK if quant else CFG
    sid, eid, ntp = moe_align(ids, E, cfg["BLOCK_SIZE_M"])
    N, K = (H, I) if down else (2 * I, H)
    A = R(T * TOPK, K) if down else R(T, K)
    if quant:
        B = torch.randint(-127, 128, (E, N, K), dtype=torch.int8, device=dev)
        Bs = torch.rand(E, N // 128, K // 128, device=dev) * 2e-4 + 1e-4
    else:
        B, Bs = R(E, N, K, scale=K ** -0.5), None
    C = torch.empty(T, TOPK, N, dtype=bf, device=dev)
    def run():
        f(A, B, None, C, None, Bs, None, w, ids, sid, eid, ntp, down, 1 if down else TOPK, cfg,
          tl.bfloat16, False, quant, False, False, False, block_shape=[128, 128] if quant else None)
        return [C]
    return [], run
@case
def fused_moe_bf16_gate_up():
    return fused_moe(False)
@case
def fused_moe_bf16_down():
    return fused_moe(False, down=True)
@case
def fused_moe_int8_w8a8_block():
    return fused_moe(True)

TE, KE = sz((4096, 8), (40, 2))  # the element-wise kernels: more tokens, top 8
@case
def act_and_mul_silu():
    from sglang.srt.layers.moe.fused_moe_triton.fused_moe_triton_kernels import act_and_mul_triton as f
    _, ids = routing(TE, E, KE)
    x = R(TE * KE, 2 * I); out = torch.empty(TE * KE, I, dtype=bf, device=dev)
    def run():
        f(x, out, CFG, topk_ids=ids, activation="silu")
        return [out]
    return [], run
@case
def moe_sum_reduce():
    from sglang.srt.layers.moe.fused_moe_triton.fused_moe_triton_kernels import moe_sum_reduce_triton as f
    x = R(TE, KE, H); out = torch.empty(TE, H, dtype=bf, device=dev)
    def run():
        f(x, out, 2.5)
        return [out]
    return [], run

if __name__ == "__main__":
    libdiff.main(CASES)
