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
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    seq_start_block = tl.program_id(2)
    cur_kv_head = cur_head // gqa_group_size

    offs_d = tl.arange(0, BLOCK_DMODEL)
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    cur_batch_req_idx = tl.load(B_req_idx + cur_batch)
    cur_batch_start_index = seq_start_block * BLOCK_SEQ
    cur_batch_end_index = tl.minimum(cur_batch_seq_len, cur_batch_start_index + BLOCK_SEQ)

    off_q = cur_batch * stride_qbs + cur_head * stride_qh + offs_d
    block_n_size = tl.where(cur_batch_end_index - cur_batch_start_index <= 0, 0,
                            cur_batch_end_index - cur_batch_start_index + BLOCK_N - 1) // BLOCK_N
    offs_n = cur_batch_start_index + tl.arange(0, BLOCK_N)
    q = tl.load(Q + off_q)

    sum_exp = 0.0
    max_logic = -float("inf")
    acc = tl.zeros([BLOCK_DMODEL], dtype=tl.float32)

    for start_n in range(0, block_n_size, 1):
        offs_n_new = start_n * BLOCK_N + offs_n
        k_loc = tl.load(Req_to_tokens + stride_req_to_tokens_b * cur_batch_req_idx + offs_n_new,
                        mask=offs_n_new < cur_batch_end_index, other=0)
        off_k = k_loc[:, None] * stride_kbs + cur_kv_head * stride_kh + offs_d[None, :]
        k = tl.load(K + off_k, mask=offs_n_new[:, None] < cur_batch_end_index, other=0.0)
        att_value = tl.sum(q[None, :] * k, 1)
        att_value *= sm_scale
        att_value = tl.where(offs_n_new < cur_batch_end_index, att_value, float("-inf"))
        v = tl.load(V + off_k, mask=offs_n_new[:, None] < cur_batch_end_index, other=0.0)

        cur_max_logic = tl.max(att_value, axis=0)
        new_max_logic = tl.maximum(cur_max_logic, max_logic)
        exp_logic = tl.exp(att_value - new_max_logic)
        logic_scale = tl.exp(max_logic - new_max_logic)
        acc *= logic_scale
        acc += tl.sum(exp_logic[:, None] * v, axis=0)
        sum_exp = sum_exp * logic_scale + tl.sum(exp_logic, axis=0)
        max_logic = new_max_logic

    need_store = tl.where(block_n_size == 0, 0, 1)
    for _ in range(0, need_store, 1):
        off_mid_o = (cur_batch * stride_mid_ob + cur_head * stride_mid_oh
                     + seq_start_block * stride_mid_os + offs_d)
        off_mid_o_logexpsum = (cur_batch * stride_mid_o_eb + cur_head * stride_mid_o_eh
                               + seq_start_block)
        tl.store(Mid_O + off_mid_o, acc / sum_exp)
        tl.store(Mid_O_LogExpSum + off_mid_o_logexpsum, max_logic + tl.log(sum_exp))


@triton.jit
def _fwd_kernel_flash_decode_stage2(
    B_Seqlen, Mid_O, Mid_O_LogExpSum, Out,
    stride_mid_ob, stride_mid_oh, stride_mid_os, stride_mid_od,
    stride_mid_o_eb, stride_mid_o_eh, stride_mid_o_es,
    stride_obs, stride_oh, stride_od,
    BLOCK_SEQ: tl.constexpr, BLOCK_DMODEL: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    block_n_size = tl.where(cur_batch_seq_len <= 0, 0, cur_batch_seq_len + BLOCK_SEQ - 1) // BLOCK_SEQ

    sum_exp = 0.0
    max_logic = -float("inf")
    acc = tl.zeros([BLOCK_DMODEL], dtype=tl.float32)

    offs_v = cur_batch * stride_mid_ob + cur_head * stride_mid_oh + offs_d
    offs_logic = cur_batch * stride_mid_o_eb + cur_head * stride_mid_o_eh
    for block_seq_n in range(0, block_n_size, 1):
        tv = tl.load(Mid_O + offs_v + block_seq_n * stride_mid_os)
        tlogic = tl.load(Mid_O_LogExpSum + offs_logic + block_seq_n)
        new_max_logic = tl.maximum(tlogic, max_logic)
        old_scale = tl.exp(max_logic - new_max_logic)
        acc *= old_scale
        exp_logic = tl.exp(tlogic - new_max_logic)
        acc += exp_logic * tv
        sum_exp = sum_exp * old_scale + exp_logic
        max_logic = new_max_logic

    tl.store(Out + cur_batch * stride_obs + cur_head * stride_oh + offs_d,
             (acc / sum_exp).to(Out.dtype.element_ty))


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
