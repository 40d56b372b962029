# Chunk-level pieces of the (gated) delta rule over token-major tensors
# ([tokens, H, ...]), one program per BT-token chunk and head, on batches
# of equal-length sequences or on packed variable-length sequences
# (cu_seqlens holds the sequence boundaries, chunk_indices one
# (sequence, chunk within the sequence) pair per program).
#
# - the WY recomputation: u = A @ (v * beta) and w = A @ (k * beta *
#   exp(g)) for each chunk, the chunk's BT x BT matrix A read as a masked
#   2-D tile and the key and value columns walked in BK and BV blocks
#   through block pointers; the decay g optional (None: no decay);
# - the beta-scaled gated K K^T: the strictly lower triangle of
#   (k k^T) * exp(g_i - g_j) * beta_i, with the key tiles read and the
#   result written through tensor descriptors made in the kernel, the
#   decay chosen by a constexpr flag;
# - the chunk output: scale * (q @ h * exp(g) + causal(q k^T * exp(g_i -
#   g_j)) @ v) from the per-chunk states h, k read transposed through a
#   column-major block pointer, the decay optional (None).
#
# Every product is a full-precision fp32 tl.dot (input_precision="ieee").
import triton
import triton.language as tl


@triton.jit
def _tkk_locate_chunk(i_t, i_b, cu_seqlens, chunk_indices, T, IS_VARLEN: tl.constexpr):
    # the first token of the program's sequence, the sequence's length and
    # the chunk's index within it; packed sequences take both from the
    # (sequence, chunk) pair of this program
    if IS_VARLEN:
        i_seq = tl.load(chunk_indices + i_t * 2).to(tl.int32)
        i_c = tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos = tl.load(cu_seqlens + i_seq).to(tl.int32)
        eos = tl.load(cu_seqlens + i_seq + 1).to(tl.int32)
    else:
        i_c = i_t
        bos = i_b * T
        eos = bos + T
    return bos, eos - bos, i_c


@triton.jit(do_not_specialize=["T"])
def _tkk_recompute_w_u(k, v, beta, w, u, A, g, cu_seqlens, chunk_indices, T,
                       H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                       BK: tl.constexpr, BV: tl.constexpr, IS_VARLEN: tl.constexpr):
    pid_t = tl.program_id(0)
    pid_bh = tl.program_id(1)
    i_b = pid_bh // H
    i_h = pid_bh % H
    bos, seq_len, i_c = _tkk_locate_chunk(pid_t, i_b, cu_seqlens, chunk_indices, T, IS_VARLEN)
    row0 = i_c * BT
    n_rows = seq_len - row0  # rows of this chunk that belong to the sequence

    # per-token scalars of the chunk: beta, and beta * exp(g) for the keys
    r = tl.arange(0, BT)
    live = r < n_rows
    tok = bos + row0 + r
    b_beta = tl.load(beta + tok * H + i_h, mask=live, other=0.0).to(tl.float32)
    b_kscale = b_beta
    if g is not None:
        b_g = tl.load(g + tok * H + i_h, mask=live, other=0.0).to(tl.float32)
        b_kscale = b_beta * tl.exp(b_g)

    # the chunk's BT x BT matrix, columns past the chunk's end dropped
    a_mask = live[:, None] & live[None, :]
    b_A = tl.load(A + (tok[:, None] * H + i_h) * BT + r[None, :], mask=a_mask, other=0.0).to(tl.float32)

    # u = A @ (v * beta), BV columns at a time
    for i_v in range(tl.cdiv(V, BV)):
        p_v = tl.make_block_ptr(v + (bos * H + i_h) * V, (seq_len, V), (H * V, 1),
                                (row0, i_v * BV), (BT, BV), (1, 0))
        p_u = tl.make_block_ptr(u + (bos * H + i_h) * V, (seq_len, V), (H * V, 1),
                                (row0, i_v * BV), (BT, BV), (1, 0))
        b_v = tl.load(p_v, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        b_u = tl.dot(b_A, b_v * b_beta[:, None], input_precision="ieee")
        tl.store(p_u, b_u.to(p_u.dtype.element_ty), boundary_check=(0, 1))

    # w = A @ (k * beta * exp(g)), BK columns at a time
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (seq_len, K), (H * K, 1),
                                (row0, i_k * BK), (BT, BK), (1, 0))
        p_w = tl.make_block_ptr(w + (bos * H + i_h) * K, (seq_len, K), (H * K, 1),
                                (row0, i_k * BK), (BT, BK), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        b_w = tl.dot(b_A, b_k * b_kscale[:, None], input_precision="ieee")
        tl.store(p_w, b_w.to(p_w.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_scaled_dot_kkt(k, g, beta, A, cu_seqlens, chunk_indices, T,
                              H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                              USE_G: tl.constexpr, IS_VARLEN: tl.constexpr):
    pid_t = tl.program_id(0)
    pid_bh = tl.program_id(1)
    i_b = pid_bh // H
    i_h = pid_bh % H
    bos, seq_len, i_c = _tkk_locate_chunk(pid_t, i_b, cu_seqlens, chunk_indices, T, IS_VARLEN)
    row0 = i_c * BT

    # this head's keys of the sequence as a [seq_len, K] view; rows past
    # the sequence's end read as zero
    k_desc = tl.make_tensor_descriptor(k + (bos * H + i_h) * K, shape=[seq_len, K], strides=[H * K, 1],
                                       block_shape=[BT, BK])
    gram = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        b_k = k_desc.load([row0, i_k * BK]).to(tl.float32)
        gram += tl.dot(b_k, tl.trans(b_k), input_precision="ieee")

    r = tl.arange(0, BT)
    live = r < seq_len - row0
    tok = bos + row0 + r
    b_beta = tl.load(beta + tok * H + i_h, mask=live, other=0.0).to(tl.float32)
    b_A = gram * b_beta[:, None]
    if USE_G:
        b_g = tl.load(g + tok * H + i_h, mask=live, other=0.0).to(tl.float32)
        b_A = b_A * tl.exp(b_g[:, None] - b_g[None, :])
    # strictly below the diagonal only; columns past the chunk's end lie
    # above the diagonal of every live row, so they come out zero too
    b_A = tl.where(r[:, None] > r[None, :], b_A, 0.0)

    a_desc = tl.make_tensor_descriptor(A + (bos * H + i_h) * BT, shape=[seq_len, BT], strides=[H * BT, 1],
                                       block_shape=[BT, BT])
    a_desc.store([row0, 0], b_A.to(a_desc.dtype))


@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_fwd_o(q, k, v, h, g, o, cu_seqlens, chunk_indices, scale, T,
                     H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                     BK: tl.constexpr, BV: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_v = tl.program_id(0)
    pid_t = tl.program_id(1)
    pid_bh = tl.program_id(2)
    i_b = pid_bh // H
    i_h = pid_bh % H
    bos, seq_len, i_c = _tkk_locate_chunk(pid_t, i_b, cu_seqlens, chunk_indices, T, IS_VARLEN)
    row0 = i_c * BT
    # the state h is stored per chunk of all sequences in order: packed
    # sequences number their chunks by the program's place in the grid,
    # equal-length ones by batch and chunk
    if IS_VARLEN:
        i_state = pid_t
    else:
        i_state = i_b * tl.cdiv(T, BT) + i_c

    qk_base = (bos * H + i_h) * K
    h_base = h + (i_state * H + i_h).to(tl.int64) * K * V
    inter = tl.zeros([BT, BV], dtype=tl.float32)  # q @ h: the earlier chunks' contribution
    scores = tl.zeros([BT, BT], dtype=tl.float32)  # q k^T within the chunk
    for i_k in range(tl.cdiv(K, BK)):
        p_q = tl.make_block_ptr(q + qk_base, (seq_len, K), (H * K, 1), (row0, i_k * BK), (BT, BK), (1, 0))
        # k^T: a [K, seq_len] view whose first dim is the contiguous one
        p_kt = tl.make_block_ptr(k + qk_base, (K, seq_len), (1, H * K), (i_k * BK, row0), (BK, BT), (0, 1))
        p_h = tl.make_block_ptr(h_base, (K, V), (V, 1), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        b_q = tl.load(p_q, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        b_kt = tl.load(p_kt, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        b_h = tl.load(p_h, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        inter += tl.dot(b_q, b_h, input_precision="ieee")
        scores += tl.dot(b_q, b_kt, input_precision="ieee")

    r = tl.arange(0, BT)
    if g is not None:
        live = r < seq_len - row0
        b_g = tl.load(g + (bos + row0 + r) * H + i_h, mask=live, other=0.0).to(tl.float32)
        inter = inter * tl.exp(b_g)[:, None]
        scores = scores * tl.exp(b_g[:, None] - b_g[None, :])
    # causal within the chunk, the diagonal included
    scores = tl.where(r[:, None] >= r[None, :], scores, 0.0)

    p_v = tl.make_block_ptr(v + (bos * H + i_h) * V, (seq_len, V), (H * V, 1), (row0, i_v * BV), (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    b_o = (inter + tl.dot(scores, b_v, input_precision="ieee")) * scale
    p_o = tl.make_block_ptr(o + (bos * H + i_h) * V, (seq_len, V), (H * V, 1), (row0, i_v * BV), (BT, BV), (1, 0))
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))
