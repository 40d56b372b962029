"""Top-p (nucleus) filtering by sorting, as sampling helpers of serving
stacks write it after a top-k prefilter has cut every row of logits down to
its best candidates (n_cand of them, n_cand <= BLOCK, BLOCK a power of two):
one program per row loads the candidates scaled by 1 / temperature (the
lanes past n_cand read -inf), forms the softmax, sorts the probabilities in
descending order with tl.sort, and takes their running sum with tl.cumsum.
A sorted candidate is kept while the mass before it is below the row's
top_p, so the one that crosses top_p stays and at least one always does.
The smallest kept probability is the threshold: every candidate at or
above it keeps its probability divided by the kept mass, the others get 0,
written back in candidate order, together with the number kept per row.
The sorted and the unsorted probabilities share one softmax denominator, so
the threshold compares equal to the probabilities it came from."""
import torch
import triton
import triton.language as tl


@triton.jit
def top_p_sort_renorm_kernel(logits_ptr, top_p_ptr, probs_ptr, kept_ptr, n_cand, stride_l,
                             stride_p, inv_temperature, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cand
    x = tl.load(logits_ptr + row * stride_l + offs, mask=mask, other=float("-inf"))
    x = x.to(tl.float32) * inv_temperature
    top_p = tl.load(top_p_ptr + row)

    x_max = tl.max(x, axis=0)
    e = tl.exp(x - x_max)
    denom = tl.sum(e, axis=0)
    probs = e / denom

    sorted_probs = tl.sort(probs, descending=True)
    cum = tl.cumsum(sorted_probs, axis=0)
    keep_sorted = (cum - sorted_probs) < top_p
    threshold = tl.min(tl.where(keep_sorted, sorted_probs, float("inf")), axis=0)

    keep = (probs >= threshold) & mask
    kept_mass = tl.sum(tl.where(keep, probs, 0.0), axis=0)
    out = tl.where(keep, probs / kept_mass, 0.0)
    tl.store(probs_ptr + row * stride_p + offs, out, mask=mask)
    tl.store(kept_ptr + row, tl.sum(keep.to(tl.int32), axis=0))


def top_p_sort_renorm(cand_logits, top_p, temperature=1.0, num_warps=4):
    """cand_logits [rows, n_cand] (the top-k prefiltered logits), top_p [rows]
    -> (renormalised probabilities [rows, n_cand] fp32, kept count [rows] int32)."""
    rows, n_cand = cand_logits.shape
    block = triton.next_power_of_2(n_cand)
    probs = torch.empty((rows, n_cand), dtype=torch.float32, device=cand_logits.device)
    kept = torch.empty(rows, dtype=torch.int32, device=cand_logits.device)
    top_p_sort_renorm_kernel[(rows,)](cand_logits, top_p, probs, kept, n_cand,
                                      cand_logits.stride(0), probs.stride(0), 1.0 / temperature,
                                      BLOCK=block, num_warps=num_warps)
    return probs, kept
