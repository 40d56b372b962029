"""Token sampling helpers of a serving engine: repetition, frequency and
presence penalties applied to the logits of the tokens each request has
produced, temperature scaling with a greedy pick, and the probabilities of
a row after top-k filtering."""
import logging
from typing import List, Optional

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


@triton.jit
def _fwd_kernel_apply_penalty(
    Logits, presence_penalty, freqency_penalty, repetition_penalty,
    p_token_ids, p_token_counts, p_cumsum_seq_len,
    stride_logit_b, stride_logit_s,
    BLOCK_P: tl.constexpr,
):
    row = tl.program_id(0)
    pres = tl.load(presence_penalty + row)
    freq = tl.load(freqency_penalty + row)
    rep = tl.load(repetition_penalty + row)
    first = tl.load(p_cumsum_seq_len + row)
    last = tl.load(p_cumsum_seq_len + row + 1)
    lane = tl.arange(0, BLOCK_P)
    for j0 in range(first, last, BLOCK_P):
        j = j0 + lane
        live = j < last
        tok = tl.load(p_token_ids + j, mask=live, other=0)
        cnt = tl.load(p_token_counts + j, mask=live, other=0)
        where = Logits + row * stride_logit_b + tok * stride_logit_s
        x = tl.load(where, mask=live, other=0.0)
        x = tl.where(x > 0, x / rep, x * rep)
        x = x - cnt * freq - pres
        tl.store(where, x, mask=live)


@triton.jit
def _greedy_and_probs_kernel(logits_ptr, temperature_ptr, probs_ptr, next_token_ptr, vocab,
                             stride, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_V)
    mask = cols < vocab
    logits = tl.load(logits_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    logits = logits.to(tl.float32)
    t = tl.load(temperature_ptr + row)
    # greedy: the first index of the largest logit
    best, best_idx = tl.max(logits, axis=0, return_indices=True)
    tl.store(next_token_ptr + row, best_idx.to(next_token_ptr.dtype.element_ty))
    scaled = (logits - best) / t
    p = tl.exp(scaled)
    p = p / tl.sum(p, axis=0)
    tl.store(probs_ptr + row * stride + cols, p, mask=mask)


@triton.jit
def _top_k_probs_kernel(logits_ptr, probs_ptr, thresholds_ptr, vocab, stride, top_k,
                        BLOCK_V: tl.constexpr, NUM_ITERS: tl.constexpr):
    """Keeps the logits at or above the k-th largest, found by bisection on
    the value (no sort): NUM_ITERS halvings between the row's min and max."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_V)
    mask = cols < vocab
    x = tl.load(logits_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    hi = tl.max(x, axis=0)
    lo = tl.min(tl.where(mask, x, float("inf")), axis=0)
    for _ in tl.static_range(NUM_ITERS):
        mid = (lo + hi) * 0.5
        count = tl.sum((x >= mid).to(tl.int32), axis=0)
        take = count >= top_k
        lo = tl.where(take, mid, lo)
        hi = tl.where(take, hi, mid)
    tl.store(thresholds_ptr + row, lo)
    keep = x >= lo
    e = tl.where(keep, tl.exp(x - tl.max(x, axis=0)), 0.0)
    tl.store(probs_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@torch.no_grad()
def apply_penalty(logits, presence_penalty, freqency_penalty, repetition_penalty,
                  p_token_ids, p_token_counts, p_cumsum_seq_len, p_max_len_in_batch):
    assert logits.is_contiguous()
    BLOCK = triton.next_power_of_2(p_max_len_in_batch)
    num_warps = 8 if BLOCK > 1024 else 4
    _fwd_kernel_apply_penalty[(logits.shape[0],)](
        logits, presence_penalty, freqency_penalty, repetition_penalty, p_token_ids,
        p_token_counts, p_cumsum_seq_len, logits.stride(0), logits.stride(1), num_warps=num_warps,
        BLOCK_P=BLOCK)


def sample(logits: torch.Tensor, temperatures: torch.Tensor, top_ks: Optional[List[int]] = None):
    B, V = logits.shape
    probs = torch.empty_like(logits, dtype=torch.float32)
    next_tokens = torch.empty(B, dtype=torch.int64, device=logits.device)
    _greedy_and_probs_kernel[(B,)](logits, temperatures, probs, next_tokens, V, logits.stride(0),
                                   BLOCK_V=triton.next_power_of_2(V))
    if top_ks:
        logger.debug("top-k %s", top_ks)
        thresholds = torch.empty(B, dtype=torch.float32, device=logits.device)
        _top_k_probs_kernel[(B,)](logits, probs, thresholds, V, logits.stride(0), max(top_ks),
                                  BLOCK_V=triton.next_power_of_2(V), NUM_ITERS=24)
        sampled = torch.multinomial(probs, 1).squeeze(1)
        return sampled, probs
    return next_tokens, probs


if __name__ == "__main__":
    logits = torch.randn(4, 1000, device="cuda")
    tok, probs = sample(logits, torch.ones(4, device="cuda"))
    assert torch.equal(tok, logits.argmax(-1)), (tok, logits.argmax(-1))
    print(probs.sum(-1))
