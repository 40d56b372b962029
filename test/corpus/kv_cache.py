"""Writing the new tokens' keys and values into a paged cache: each token
goes to the cache slot the allocator gave it, one head per program along
the second grid axis. Head dims that are not powers of two are padded."""
import torch
import triton
import triton.language as tl


class KVCache:
    def __init__(self, size, head_num, head_dim, dtype=torch.float16, device="cuda"):
        self.k = torch.empty((size, head_num, head_dim), dtype=dtype, device=device)
        self.v = torch.empty_like(self.k)
        self.free = list(range(size))

    def alloc(self, n):
        slots, self.free = self.free[:n], self.free[n:]
        return torch.tensor(slots, dtype=torch.int64, device=self.k.device)


@triton.jit
def _fwd_kernel_destindex_copy_kv(K, Dest_loc, Out, stride_k_bs, stride_k_h, stride_k_d,
                                  stride_o_bs, stride_o_h, stride_o_d, head_num, head_dim,
                                  BLOCK_DMODEL: tl.constexpr, BLOCK_HEAD: tl.constexpr):
    tok = tl.program_id(0)
    heads = tl.program_id(1) * BLOCK_HEAD + tl.arange(0, BLOCK_HEAD)
    dims = tl.arange(0, BLOCK_DMODEL)
    keep = (heads[:, None] < head_num) & (dims[None, :] < head_dim)
    slot = tl.load(Dest_loc + tok).to(tl.int64)
    src = K + tok * stride_k_bs + heads[:, None] * stride_k_h + dims[None, :] * stride_k_d
    tile = tl.load(src, mask=keep, other=0.0)
    dst = Out + slot * stride_o_bs + heads[:, None] * stride_o_h + dims[None, :] * stride_o_d
    tl.store(dst, tile, mask=keep)


@triton.jit
def _copy_kv_scaled(K, V, Dest_loc, K_out, V_out, K_scale, V_scale, head_num, head_dim,
                    BLOCK_D: tl.constexpr):
    """int8 cache: one scale per token and head, from the absmax of the head."""
    tok = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, BLOCK_D)
    mask = d < head_dim
    dest = tl.load(Dest_loc + tok)
    src = (tok * head_num + h) * head_dim + d
    dst = (dest * head_num + h) * head_dim + d
    for which in tl.static_range(2):
        if which == 0:
            x = tl.load(K + src, mask=mask, other=0.0).to(tl.float32)
        else:
            x = tl.load(V + src, mask=mask, other=0.0).to(tl.float32)
        scale = tl.max(tl.abs(x), axis=0) / 127.0
        q = (x / tl.where(scale == 0, 1.0, scale) + 0.5).to(tl.int32)
        q = tl.minimum(tl.maximum(q, -127), 127).to(tl.int8)
        if which == 0:
            tl.store(K_out + dst, q, mask=mask)
            tl.store(K_scale + dest * head_num + h, scale)
        else:
            tl.store(V_out + dst, q, mask=mask)
            tl.store(V_scale + dest * head_num + h, scale)


@torch.no_grad()
def destindex_copy_kv(k, dest_loc, out):
    seq_len = dest_loc.shape[0]
    head_num, head_dim = k.shape[1], k.shape[2]
    assert k.shape[1] == out.shape[1] and k.shape[2] == out.shape[2]
    _fwd_kernel_destindex_copy_kv[(seq_len,)](
        k, dest_loc, out, k.stride(0), k.stride(1), k.stride(2), out.stride(0), out.stride(1),
        out.stride(2), head_num, head_dim, BLOCK_DMODEL=triton.next_power_of_2(head_dim),
        BLOCK_HEAD=triton.next_power_of_2(head_num), num_warps=1, num_stages=1)


if __name__ == "__main__":
    cache = KVCache(64, 4, 96)
    k = torch.randn(5, 4, 96, device="cuda", dtype=torch.float16)
    loc = cache.alloc(5)
    destindex_copy_kv(k, loc, cache.k)
    assert torch.equal(cache.k[loc], k)
