"""A linear attention's intra-block step with a per-head decay: the
scores of a query block against each key block up to its own are scaled
by exp(-s (i - j)) where the query position i is at or after the key
position j (zero otherwise), then multiplied by the values; fp32 dots
(tf32), the decay made from the two blocks' index vectors."""
import triton
import triton.language as tl


@triton.jit
def decay_attn_kernel(q_ptr, k_ptr, v_ptr, s_ptr, o_ptr, C: tl.constexpr, D: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * C + tl.arange(0, C)
    d = tl.arange(0, D)
    s = tl.load(s_ptr)
    q = tl.load(q_ptr + rows[:, None] * D + d[None, :]).to(tl.float32)
    acc = tl.zeros([C, D], dtype=tl.float32)
    for j in range(pid + 1):
        cols = tl.arange(0, C) + j * C
        diff = rows[:, None] - cols[None, :]
        decay = tl.exp(tl.where(diff >= 0, -(s * diff), float("-inf")))
        kt = tl.load(k_ptr + cols[None, :] * D + d[:, None]).to(tl.float32)
        v = tl.load(v_ptr + cols[:, None] * D + d[None, :]).to(tl.float32)
        qk = tl.dot(q, kt) * decay
        acc += tl.dot(qk, v)
    tl.store(o_ptr + rows[:, None] * D + d[None, :], acc)
