"""Split-KV attention for decoding (one new token per request) over a token
table: stage 1 gives each program one slice of a request's keys and writes a
partial output with its log-sum-exp; stage 2 merges the slices. Grouped
query heads share a key/value head."""
import torch

import triton
import triton.language as tl


class DecodeMeta:
    """What the serving loop knows about the current batch."""

    def __init__(self, b_req_idx, b_seq_len, req_to_token, max_len_in_batch):
        self.b_req_idx = b_req_idx
        self.b_seq_len = b_seq_len
        self.req_to_token = req_to_token
        self.max_len_in_batch = max_len_in_batch

    @property
    def batch(self):
        return self.b_seq_len.shape[0]


@triton.jit
def _fwd_kernel_flash_decode_stage1(
    Q, K, V, sm_scale, Req_to_tokens, B_req_idx, B_Seqlen,
    Mid_O,  # [batch, head, seq_block_num, head_dim]
    Mid_O_LogExpSum,  # [batch, head, seq_block_num]
    stride_req_to_tokens_b, stride_req_to_tokens_s,
    stride_qbs, stride_qh, stride_qd,
    stride_kbs, stride_kh, stride_kd,
    stride_vbs, stride_vh, stride_vd,
    stride_mid_ob, stride_mid_oh, stride_mid_os, stride_mid_od,
    stride_mid_o_eb, stride_mid_o_eh, stride_mid_o_es,
    gqa_group_size,
    BLOCK_SEQ: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
):
    b = tl.program_id(0)
    qh = tl.program_id(1)
    part = tl.program_id(2)
    kvh = qh // gqa_group_size
    n_tok = tl.load(B_Seqlen + b)
    req = tl.load(B_req_idx + b)
    lo = part * BLOCK_SEQ
    hi = tl.minimum(n_tok, lo + BLOCK_SEQ)
    if lo < hi:
        dims = tl.arange(0, BLOCK_DMODEL)
        offs_n = tl.arange(0, BLOCK_N)
        qv = tl.load(Q + b * stride_qbs + qh * stride_qh + dims * stride_qd).to(tl.float32)
        run_max = tl.full([], float("-inf"), tl.float32)
        run_sum = tl.full([], 0.0, tl.float32)
        acc = tl.zeros([BLOCK_DMODEL], dtype=tl.float32)
        for pos0 in range(lo, hi, BLOCK_N):
            pos = pos0 + offs_n
            valid = pos < hi
            slot = tl.load(Req_to_tokens + req * stride_req_to_tokens_b + pos * stride_req_to_tokens_s,
                           mask=valid, other=0).to(tl.int64)
            kt = tl.load(K + slot[:, None] * stride_kbs + kvh * stride_kh + dims[None, :] * stride_kd,
                         mask=valid[:, None], other=0.0).to(tl.float32)
            score = tl.sum(kt * qv[None, :], axis=1) * sm_scale
            score = tl.where(valid, score, float("-inf"))
            new_max = tl.maximum(run_max, tl.max(score, axis=0))
            alpha = tl.exp(run_max - new_max)
            w = tl.exp(score - new_max)
            vt = tl.load(V + slot[:, None] * stride_vbs + kvh * stride_vh + dims[None, :] * stride_vd,
                         mask=valid[:, None], other=0.0).to(tl.float32)
            acc = acc * alpha + tl.sum(w[:, None] * vt, axis=0)
            run_sum = run_sum * alpha + tl.sum(w, axis=0)
            run_max = new_max
        mid_base = b * stride_mid_ob + qh * stride_mid_oh + part * stride_mid_os
        tl.store(Mid_O + mid_base + dims * stride_mid_od, acc / run_sum)
        tl.store(Mid_O_LogExpSum + b * stride_mid_o_eb + qh * stride_mid_o_eh + part * stride_mid_o_es,
                 run_max + tl.log(run_sum))


@triton.jit
def _fwd_kernel_flash_decode_stage2(
    B_Seqlen, Mid_O, Mid_O_LogExpSum, Out,
    stride_mid_ob, stride_mid_oh, stride_mid_os, stride_mid_od,
    stride_mid_o_eb, stride_mid_o_eh, stride_mid_o_es,
    stride_obs, stride_oh, stride_od,
    BLOCK_SEQ: tl.constexpr, BLOCK_DMODEL: tl.constexpr,
):
    b = tl.program_id(0)
    qh = tl.program_id(1)
    dims = tl.arange(0, BLOCK_DMODEL)
    n_tok = tl.load(B_Seqlen + b)
    n_parts = tl.cdiv(n_tok, BLOCK_SEQ)
    o_base = Mid_O + b * stride_mid_ob + qh * stride_mid_oh
    e_base = Mid_O_LogExpSum + b * stride_mid_o_eb + qh * stride_mid_o_eh
    best = tl.full([], float("-inf"), tl.float32)
    denom = tl.full([], 0.0, tl.float32)
    acc = tl.zeros([BLOCK_DMODEL], dtype=tl.float32)
    for p in range(0, n_parts):
        lse = tl.load(e_base + p * stride_mid_o_es)
        part_out = tl.load(o_base + p * stride_mid_os + dims * stride_mid_od)
        top = tl.maximum(best, lse)
        shrink = tl.exp(best - top)
        wt = tl.exp(lse - top)
        acc = acc * shrink + wt * part_out
        denom = denom * shrink + wt
        best = top
    tl.store(Out + b * stride_obs + qh * stride_oh + dims * stride_od,
             (acc / denom).to(Out.dtype.element_ty))


@torch.no_grad()
def flash_decode_stage1(q, k, v, meta: DecodeMeta, mid_out, mid_out_logsumexp, block_seq):
    BLOCK_N = 16
    BLOCK_SEQ = block_seq
    Lq, Lk = q.shape[-1], k.shape[-1]
    assert Lq == Lk and Lk in {16, 32, 64, 128}
    sm_scale = 1.0 / (Lk ** 0.5)
    batch, head_num = meta.batch, q.shape[1]
    grid = (batch, head_num, triton.cdiv(meta.max_len_in_batch, BLOCK_SEQ))
    gqa_group_size = q.shape[1] // k.shape[1]
    _fwd_kernel_flash_decode_stage1[grid](
        q, k, v, sm_scale, meta.req_to_token, meta.b_req_idx, meta.b_seq_len,
        mid_out, mid_out_logsumexp,
        meta.req_to_token.stride(0), meta.req_to_token.stride(1),
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        mid_out.stride(0), mid_out.stride(1), mid_out.stride(2), mid_out.stride(3),
        mid_out_logsumexp.stride(0), mid_out_logsumexp.stride(1), mid_out_logsumexp.stride(2),
        gqa_group_size, BLOCK_SEQ=BLOCK_SEQ, BLOCK_DMODEL=Lk, BLOCK_N=BLOCK_N,
        num_warps=1, num_stages=2)


@torch.no_grad()
def flash_decode_stage2(mid_out, mid_out_logexpsum, b_seq_len, out, block_seq):
    Lk = mid_out.shape[-1]
    batch, head_num = mid_out.shape[0], mid_out.shape[1]
    _fwd_kernel_flash_decode_stage2[(batch, head_num)](
        b_seq_len, mid_out, mid_out_logexpsum, out,
        mid_out.stride(0), mid_out.stride(1), mid_out.stride(2), mid_out.stride(3),
        mid_out_logexpsum.stride(0), mid_out_logexpsum.stride(1), mid_out_logexpsum.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        BLOCK_SEQ=block_seq, BLOCK_DMODEL=Lk, num_warps=4, num_stages=2)


def token_decode_attention_flash_decoding(q, k, v, meta, block_seq=256, out=None):
    batch, q_head_num, head_dim = meta.batch, q.shape[1], q.shape[2]
    o = torch.empty_like(q) if out is None else out
    blocks = meta.max_len_in_batch // block_seq + 1
    mid_o = torch.empty([batch, q_head_num, blocks, head_dim], dtype=torch.float32, device="cuda")
    mid_o_logexpsum = torch.empty([batch, q_head_num, blocks], dtype=torch.float32, device="cuda")
    flash_decode_stage1(q, k, v, meta, mid_o, mid_o_logexpsum, block_seq)
    flash_decode_stage2(mid_o, mid_o_logexpsum, meta.b_seq_len, o, block_seq)
    return o


if __name__ == "__main__":
    torch.manual_seed(0)
    B, H, KVH, D, L = 4, 8, 2, 64, 700
    q = torch.randn(B, H, D, device="cuda", dtype=torch.float16)
    k = torch.randn(B * L, KVH, D, device="cuda", dtype=torch.float16)
    v = torch.randn_like(k)
    req_to_token = torch.arange(B * L, device="cuda", dtype=torch.int32).view(B, L)
    meta = DecodeMeta(torch.arange(B, device="cuda", dtype=torch.int32),
                      torch.full((B,), L, device="cuda", dtype=torch.int32), req_to_token, L)
    print(token_decode_attention_flash_decoding(q, k, v, meta).float().abs().mean())
