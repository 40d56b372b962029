# Chunked state recurrences of the gated delta rule, in the manner of
# flash-linear-attention's chunked linear-attention kernels.
#
# Forward: the hidden state S [K, V] of each (sequence, head) is carried
# chunk by chunk through BT-token chunks. Each chunk first publishes the
# state it starts from, then corrects its values against it
# (v' = v - w @ S, optionally saved), decays both the corrected values and
# the state to the chunk's last token when log-gates are given, and folds
# the chunk in (S += k^T @ v'). The initial state is optional, as is the
# final one written out; sequences are either T tokens each or packed by
# cu_seqlens with the index of each sequence's first chunk in
# chunk_offsets. One program owns a BV-wide column strip of the state.
#
# Backward: the state gradient dS [BK, BV] runs the same chunks from last
# to first, publishing dS for each chunk before decaying it by the chunk's
# total gate and adding the chunk's gated, scaled q^T @ do; the gradient
# coming into the final state (and the one leaving the initial state) are
# optional pointers tested against None at compile time.
#
# Idioms: token-major [tokens, H, D] tensors read through
# tl.make_block_ptr with boundary_check (k read transposed through a
# column-major block pointer), block pointers stepped backwards with
# tl.advance, tl.dot with input_precision from a constexpr (the backward's
# fixed at "ieee"), constexpr flags and None pointers folding away whole
# branches, scalar gate loads at the chunk's last valid token, and
# do_not_specialize on the sequence length.
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_gdr_fwd_h(k, v, w, v_new, g, h, h0, ht, cu_seqlens, chunk_offsets, T,
                         H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
                         BV: tl.constexpr, DOT_PRECISION: tl.constexpr, USE_G: tl.constexpr,
                         USE_INITIAL_STATE: tl.constexpr, STORE_FINAL_STATE: tl.constexpr,
                         SAVE_NEW_VALUE: tl.constexpr, IS_VARLEN: tl.constexpr):
    pid_v = tl.program_id(0)
    pid_nh = tl.program_id(1)
    seq = pid_nh // H
    head = pid_nh % H

    # where this sequence's tokens and its per-chunk states live
    if IS_VARLEN:
        tok0 = tl.load(cu_seqlens + seq).to(tl.int32)
        seq_len = tl.load(cu_seqlens + seq + 1).to(tl.int32) - tok0
        chunk0 = tl.load(chunk_offsets + seq).to(tl.int32)
    else:
        tok0 = seq * T
        seq_len = T
        chunk0 = seq * tl.cdiv(T, BT)
    n_chunks = tl.cdiv(seq_len, BT)
    col0 = pid_v * BV

    # per-(sequence, head) bases; a token row of k / w is H * K apart, of v H * V
    k_seq = k + (tok0 * H + head).to(tl.int64) * K
    w_seq = w + (tok0 * H + head).to(tl.int64) * K
    v_seq = v + (tok0 * H + head).to(tl.int64) * V
    h_seq = h + (chunk0 * H + head).to(tl.int64) * K * V

    state = tl.zeros([K, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        p_h0 = tl.make_block_ptr(h0 + pid_nh.to(tl.int64) * K * V, (K, V), (V, 1), (0, col0), (K, BV), (1, 0))
        state += tl.load(p_h0, boundary_check=(0, 1), padding_option="zero").to(tl.float32)

    # chunk-local views, moved down the sequence one chunk per step
    p_w = tl.make_block_ptr(w_seq, (seq_len, K), (H * K, 1), (0, 0), (BT, K), (1, 0))
    p_kt = tl.make_block_ptr(k_seq, (K, seq_len), (1, H * K), (0, 0), (K, BT), (0, 1))
    p_v = tl.make_block_ptr(v_seq, (seq_len, V), (H * V, 1), (0, col0), (BT, BV), (1, 0))
    if SAVE_NEW_VALUE:
        p_vn = tl.make_block_ptr(v_new + (tok0 * H + head).to(tl.int64) * V, (seq_len, V), (H * V, 1),
                                 (0, col0), (BT, BV), (1, 0))

    for c in range(n_chunks):
        # the state this chunk starts from
        p_h = tl.make_block_ptr(h_seq + c * H * K * V, (K, V), (V, 1), (0, col0), (K, BV), (1, 0))
        tl.store(p_h, state.to(p_h.dtype.element_ty), boundary_check=(0, 1))

        # values corrected against the current state
        w_c = tl.load(p_w, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        v_c = tl.load(p_v, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        v_c -= tl.dot(w_c, state, input_precision=DOT_PRECISION)
        if SAVE_NEW_VALUE:
            tl.store(p_vn, v_c.to(p_vn.dtype.element_ty), boundary_check=(0, 1))
            p_vn = tl.advance(p_vn, (BT, 0))

        if USE_G:
            # decay everything to the chunk's last valid token
            rows = c * BT + tl.arange(0, BT)
            in_seq = rows < seq_len
            last = tl.minimum(c * BT + BT, seq_len) - 1
            g_seq = g + tok0 * H + head
            g_last = tl.load(g_seq + last * H).to(tl.float32)
            g_c = tl.load(g_seq + rows * H, mask=in_seq, other=0.0).to(tl.float32)
            v_c *= tl.where(in_seq, tl.exp(g_last - g_c), 0.0)[:, None]
            state *= tl.exp(g_last)

        # fold the chunk into the state (rows past the end load as zero)
        kt_c = tl.load(p_kt, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        state += tl.dot(kt_c, v_c, input_precision=DOT_PRECISION)

        p_w = tl.advance(p_w, (BT, 0))
        p_kt = tl.advance(p_kt, (0, BT))
        p_v = tl.advance(p_v, (BT, 0))

    if STORE_FINAL_STATE:
        p_ht = tl.make_block_ptr(ht + pid_nh.to(tl.int64) * K * V, (K, V), (V, 1), (0, col0), (K, BV), (1, 0))
        tl.store(p_ht, state.to(p_ht.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T"])
def _tkk_chunk_bwd_dh(q, g, do, dh, dh0, dht, scale, T, H: tl.constexpr, K: tl.constexpr,
                      V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    pid_k = tl.program_id(0)
    pid_v = tl.program_id(1)
    pid_bh = tl.program_id(2)
    batch = pid_bh // H
    head = pid_bh % H
    n_chunks = tl.cdiv(T, BT)
    row0 = pid_k * BK
    col0 = pid_v * BV

    grad = tl.zeros([BK, BV], dtype=tl.float32)
    if dht is not None:
        p_dht = tl.make_block_ptr(dht + pid_bh.to(tl.int64) * K * V, (K, V), (V, 1), (row0, col0), (BK, BV), (1, 0))
        grad += tl.load(p_dht, boundary_check=(0, 1), padding_option="zero").to(tl.float32)

    tok0 = batch * T
    q_seq = q + (tok0 * H + head).to(tl.int64) * K
    do_seq = do + (tok0 * H + head).to(tl.int64) * V
    g_seq = g + tok0 * H + head
    dh_seq = dh + (batch * n_chunks * H + head).to(tl.int64) * K * V

    # views of the last chunk, stepped back one chunk per iteration
    last_start = (n_chunks - 1) * BT
    p_qt = tl.make_block_ptr(q_seq, (K, T), (1, H * K), (row0, last_start), (BK, BT), (0, 1))
    p_do = tl.make_block_ptr(do_seq, (T, V), (H * V, 1), (last_start, col0), (BT, BV), (1, 0))
    p_g = tl.make_block_ptr(g_seq, (T,), (H,), (last_start,), (BT,), (0,))

    for c in range(n_chunks - 1, -1, -1):
        p_dh = tl.make_block_ptr(dh_seq + c * H * K * V, (K, V), (V, 1), (row0, col0), (BK, BV), (1, 0))
        tl.store(p_dh, grad.to(p_dh.dtype.element_ty), boundary_check=(0, 1))

        last = tl.minimum(c * BT + BT, T) - 1
        g_last = tl.load(g_seq + last * H).to(tl.float32)
        # padded tokens read a gate of 0 and a zero q, so they add nothing
        g_c = tl.load(p_g, boundary_check=(0,), padding_option="zero").to(tl.float32)
        qt_c = tl.load(p_qt, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        qt_c = qt_c * (tl.exp(g_c) * scale)[None, :]
        do_c = tl.load(p_do, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        grad = grad * tl.exp(g_last) + tl.dot(qt_c, do_c, input_precision="ieee")

        p_qt = tl.advance(p_qt, (0, -BT))
        p_do = tl.advance(p_do, (-BT, 0))
        p_g = tl.advance(p_g, (-BT,))

    if dh0 is not None:
        p_dh0 = tl.make_block_ptr(dh0 + pid_bh.to(tl.int64) * K * V, (K, V), (V, 1), (row0, col0), (BK, BV), (1, 0))
        tl.store(p_dh0, grad.to(p_dh0.dtype.element_ty), boundary_check=(0, 1))
