"""Row statistics in the styles model code uses: mean and variance of each
row by two passes over column chunks (mean first, then centred squares)
and by one pass with Welford's update merged across lanes through a tuple
reduction; a row-wise logsumexp with an online max; and greedy sampling:
the argmax of logits / temperature over a vocabulary walked in chunks,
with the winning token's probability."""
import torch
import triton
import triton.language as tl


@triton.jit
def _row_var_mean_two_pass(x_ptr, mean_ptr, var_ptr, stride_row, n_cols,
                           BLOCK_N: tl.constexpr, CORRECTION: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row.to(tl.int64) * stride_row
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        d = tl.where(cols < n_cols, x - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / (n_cols - CORRECTION)
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, var)


@triton.jit
def welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    # fraction of the merged weight that comes from b; zero when both are empty
    frac_b = tl.where(n > 0, n_b / tl.where(n > 0, n, 1.0), 0.0)
    shift = mean_b - mean_a
    mean = mean_a + shift * frac_b
    m2 = m2_a + m2_b + shift * shift * (n_a * frac_b)
    return mean, m2, n


@triton.jit
def _row_var_mean_welford(x_ptr, mean_ptr, var_ptr, stride_row, n_cols,
                          BLOCK_N: tl.constexpr, CORRECTION: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row.to(tl.int64) * stride_row
    mean = tl.zeros([BLOCK_N], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    count = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        live = cols < n_cols
        x = tl.load(x_ptr + cols, mask=live, other=0.0).to(tl.float32)
        count_new = count + live.to(tl.float32)
        delta = x - mean
        mean = tl.where(live, mean + delta / tl.maximum(count_new, 1.0), mean)
        m2 = tl.where(live, m2 + delta * (x - mean), m2)
        count = count_new
    mean_r, m2_r, n_r = tl.reduce((mean, m2, count), 0, welford_combine)
    tl.store(mean_ptr + row, mean_r)
    tl.store(var_ptr + row, m2_r / (n_r - CORRECTION))


@triton.jit
def _logsumexp_rows(x_ptr, out_ptr, stride_row, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row.to(tl.int64) * stride_row
    m = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in tl.range(0, n_cols, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have seen only padding stay at -inf with a zero sum
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    m_row = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - m_row), axis=0)
    tl.store(out_ptr + row, m_row + tl.log(total))


@triton.jit
def _greedy_sample_temperature(logits_ptr, temperature_ptr, token_ptr, prob_ptr, stride_row,
                               vocab_size, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    logits_ptr += row.to(tl.int64) * stride_row
    inv_t = 1.0 / tl.load(temperature_ptr + row)
    best_val = tl.full([BLOCK_V], float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros([BLOCK_V], dtype=tl.int32)
    run_max = tl.full([BLOCK_V], float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros([BLOCK_V], dtype=tl.float32)
    for off in range(0, vocab_size, BLOCK_V):
        offs = off + tl.arange(0, BLOCK_V)
        z = tl.load(logits_ptr + offs, mask=offs < vocab_size,
                    other=float("-inf")).to(tl.float32) * inv_t
        better = z > best_val
        best_idx = tl.where(better, offs, best_idx)
        best_val = tl.where(better, z, best_val)
        m_new = tl.maximum(run_max, z)
        safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        run_sum = run_sum * tl.exp(run_max - safe) + tl.exp(z - safe)
        run_max = m_new
    top = tl.max(best_val, axis=0)
    idx = tl.min(tl.where(best_val == top, best_idx, vocab_size), axis=0)
    m_row = tl.max(run_max, axis=0)
    denom = tl.sum(run_sum * tl.exp(run_max - m_row), axis=0)
    tl.store(token_ptr + row, idx)
    tl.store(prob_ptr + row, tl.exp(top - m_row) / denom)
