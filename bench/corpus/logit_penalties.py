"""vLLM-style sampling penalties applied to fp32 logits [rows, vocab] in
place. Each row carries a repetition, a frequency and a presence penalty;
a per-row table holds how often each token was generated so far (int32
counts) and a byte mask marks the prompt's tokens. The repetition penalty
divides positive logits (multiplies negative ones) of every token seen in
the prompt or the output; then the frequency penalty times the count and
the presence penalty (once for any count) are subtracted. Rows whose
penalties are all neutral leave at once; the others go over the vocabulary
a block per program."""
import triton
import triton.language as tl


@triton.jit
def apply_penalties_kernel(logits_ptr, logits_stride, output_counts_ptr, counts_stride,
                           prompt_mask_ptr, mask_stride, repetition_penalty_ptr,
                           frequency_penalty_ptr, presence_penalty_ptr, vocab_size,
                           BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    rep = tl.load(repetition_penalty_ptr + row)
    freq = tl.load(frequency_penalty_ptr + row)
    pres = tl.load(presence_penalty_ptr + row)
    if rep == 1.0 and freq == 0.0 and pres == 0.0:
        return
    block = tl.program_id(1)
    offs = block * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < vocab_size
    row64 = row.to(tl.int64)
    logits = tl.load(logits_ptr + row64 * logits_stride + offs, mask=mask, other=0.0)
    counts = tl.load(output_counts_ptr + row64 * counts_stride + offs, mask=mask, other=0)
    in_prompt = tl.load(prompt_mask_ptr + row64 * mask_stride + offs, mask=mask, other=0) != 0
    in_output = counts > 0
    seen = in_prompt | in_output
    penalised = tl.where(logits > 0, logits / rep, logits * rep)
    logits = tl.where(seen, penalised, logits)
    logits -= freq * counts.to(tl.float32)
    logits -= pres * in_output.to(tl.float32)
    tl.store(logits_ptr + row64 * logits_stride + offs, logits, mask=mask)


def apply_penalties(logits, prompt_mask, output_counts, repetition_penalties,
                    frequency_penalties, presence_penalties, BLOCK_SIZE=8192):
    rows, vocab = logits.shape
    grid = (rows, triton.cdiv(vocab, BLOCK_SIZE))
    apply_penalties_kernel[grid](logits, logits.stride(0), output_counts, output_counts.stride(0),
                                 prompt_mask, prompt_mask.stride(0), repetition_penalties,
                                 frequency_penalties, presence_penalties, vocab,
                                 BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    return logits
