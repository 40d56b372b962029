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
    row_idx = tl.program_id(0)
    chunk_idx = tl.program_id(1)
    logits_ptr += row_idx * logits_row_stride.to(tl.int64)
    loss_ptr += row_idx
    logsumexp_ptr += row_idx * N_CHUNKS + chunk_idx
    labels_ptr += row_idx

    col_offsets = chunk_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < VOCAB_SIZE

    label_idx = tl.load(labels_ptr).to(tl.int32)
    logits = tl.load(logits_ptr + col_offsets, mask=mask, other=float("-inf")).to(tl.float32)
    if DO_LOGIT_SCALING:
        logits = LOGIT_SCALE * logits
    if DO_SOFTCAPPING:
        logits = SOFTCAP * libdevice.tanh(logits / SOFTCAP)
        # tanh maps the -inf padding to -1: put it back so it adds nothing
        logits = tl.where(mask, logits, float("-inf"))

    c = tl.max(logits, 0)
    logsumexp = c + tl.log(tl.sum(tl.exp(logits - c), 0))

    if chunk_idx == 0:
        if label_idx != -100:
            x = tl.load(logits_ptr + label_idx).to(tl.float32)
            if DO_LOGIT_SCALING:
                x = LOGIT_SCALE * x
            if DO_SOFTCAPPING:
                x = SOFTCAP * libdevice.tanh(x / SOFTCAP)
            loss = -1.0 * x
        else:
            loss = 0.0
        tl.store(loss_ptr, loss)
    tl.store(logsumexp_ptr, logsumexp)


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
