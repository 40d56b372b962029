"""Cross-entropy forward over a very large vocabulary as unsloth writes it
for Gemma-2-style models: the vocabulary is cut into chunks of BLOCK_SIZE
and a (row, chunk) grid has every program take the logsumexp of its chunk
of logits after optional logit scaling and tanh soft-capping
(softcap * tanh(x / softcap)); the chunk-0 program of a row also stores
minus the capped logit of the label (0 for ignored rows). The per-chunk
logsumexps are combined on the host into the row loss."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _chunked_cross_entropy_forward(logits_ptr, logits_row_stride, loss_ptr, logsumexp_ptr,
                                   labels_ptr, VOCAB_SIZE, N_CHUNKS,
                                   BLOCK_SIZE: tl.constexpr, DO_SOFTCAPPING: tl.constexpr,
                                   SOFTCAP: tl.constexpr, DO_LOGIT_SCALING: tl.constexpr,
                                   LOGIT_SCALE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    row_logits = logits_ptr + row * logits_row_stride
    chunk_start = chunk * BLOCK_SIZE

    # The chunk is walked in sub-tiles with a running max and a rescaled
    # running sum, so a huge BLOCK_SIZE never has to sit in registers whole.
    SUB: tl.constexpr = 8192 if BLOCK_SIZE > 8192 else BLOCK_SIZE
    lanes = tl.arange(0, SUB)
    run_max = -float("inf")
    run_sum = 0.0
    for sub_start in range(0, BLOCK_SIZE, SUB):
        offs = chunk_start + sub_start + lanes
        inb = offs < VOCAB_SIZE
        z = tl.load(row_logits + offs, mask=inb, other=0.0).to(tl.float32)
        if DO_LOGIT_SCALING:
            z = LOGIT_SCALE * z
        if DO_SOFTCAPPING:
            z = SOFTCAP * libdevice.tanh(z / SOFTCAP)
        z = tl.where(inb, z, -float("inf"))
        new_max = tl.maximum(run_max, tl.max(z, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(z - new_max), axis=0)
        run_max = new_max
    tl.store(logsumexp_ptr + row * N_CHUNKS + chunk, run_max + tl.log(run_sum))

    # chunk 0 of each row stores minus the transformed label logit (0 if ignored)
    if chunk == 0:
        label = tl.load(labels_ptr + row)
        picked = 0.0
        if label != -100:
            zl = tl.load(row_logits + label).to(tl.float32)
            if DO_LOGIT_SCALING:
                zl = LOGIT_SCALE * zl
            if DO_SOFTCAPPING:
                zl = SOFTCAP * libdevice.tanh(zl / SOFTCAP)
            picked = -zl
        tl.store(loss_ptr + row, picked)

def chunked_cross_entropy_forward(logits, labels, softcap=30.0, logit_scale=0.0):
    n_rows, vocab = logits.shape
    BLOCK_SIZE = 65536
    n_chunks = triton.cdiv(vocab, BLOCK_SIZE)
    loss = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    lse = torch.empty(n_rows, n_chunks, dtype=torch.float32, device=logits.device)
    _chunked_cross_entropy_forward[(n_rows, n_chunks)](
        logits, logits.stride(0), loss, lse, labels, vocab, n_chunks, BLOCK_SIZE=BLOCK_SIZE,
        DO_SOFTCAPPING=softcap != 0, SOFTCAP=softcap, DO_LOGIT_SCALING=logit_scale != 0,
        LOGIT_SCALE=logit_scale, num_warps=32)
    lse = torch.logsumexp(lse, dim=1)
    return torch.where(labels != -100, loss + lse, 0.0)
