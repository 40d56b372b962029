"""cases_flaggems.py: FlagGems' operators (flag_gems.ops.*, flag_gems.fused.*),
forward, and backward where FlagGems gives one: its autograd Functions, or
its aten-style backward ops joined to their forward by Aten below.
Run as libdiff.py says, with the library (its src/ folder) on PYTHONPATH.
FlagGems writes the Triton files its code generators make (pointwise_dynamic,
gather, scatter, ...) under FLAGGEMS_CACHE_DIR, set here to a folder of /tmp
for each side, so that neither reuses the other's files or tuned configs."""
import os
import sys

import torch
import torch.nn.functional as Fn  # noqa: F401

import libdiff
from libdiff import DEV as dev, bf, f32
_side = "tk" if "tk" in sys.modules else "triton"
os.environ.setdefault("FLAGGEMS_CACHE_DIR", "/tmp/flaggems_cache_%s_%s" % (_side, dev))
if dev == "cpu":  # no GPU to find: name the vendor whose kernels and configs the GPU run uses
    os.environ.setdefault("GEMS_VENDOR", "nvidia")
CASES = case = libdiff.Cases()
R = libdiff.rand
def sz(gpu, cpu): return cpu if dev == "cpu" else gpu
def ints(hi, *shape): return torch.randint(0, hi, shape, device=dev)
def ops(): import flag_gems.ops as o; return o  # noqa: E702
def fused(): import flag_gems.fused as f; return f  # noqa: E702


class Aten(torch.autograd.Function):
    """FlagGems' aten-style pair as one autograd op: fwd(*xs) gives (output,
    what bwd needs); bwd(grad, *kept) gives one gradient per x."""
    @staticmethod
    def forward(ctx, fwd, bwd, *xs):
        out, ctx.kept = fwd(*xs)
        ctx.bwd = bwd
        return out

    @staticmethod
    def backward(ctx, g):
        return (None, None, *ctx.bwd(g.contiguous(), *ctx.kept))
aten = Aten.apply

# norms
@case
def softmax():
    o = ops(); x = R(sz(4096, 64), sz(4096, 200))
    def fwd(x): y = o.softmax(x, -1); return y, (y,)  # noqa: E702
    return [x], lambda: aten(fwd, lambda g, y: (o.softmax_backward(g, y, -1, bf),), x)
@case
def softmax_non_inner():
    o = ops(); x = R(sz(64, 4), sz(2048, 100), sz(128, 6), dt=f32)
    def fwd(x): y = o.softmax(x, 1); return y, (y,)  # noqa: E702
    return [x], lambda: aten(fwd, lambda g, y: (o.softmax_backward(g, y, 1, f32),), x)
@case
def log_softmax():
    o = ops(); x = R(sz(4096, 64), sz(32000, 1000), dt=f32, scale=2.0)
    def fwd(x): y = o.log_softmax(x, -1); return y, (y,)  # noqa: E702
    return [x], lambda: aten(fwd, lambda g, y: (o.log_softmax_backward(g, y, -1, f32),), x)
@case
def layer_norm():
    o = ops(); N = sz(4096, 256); x, w, b = R(sz(4096, 48), N), R(N), R(N)
    def fwd(x, w, b): y, m, r = o.layer_norm(x, [N], w, b, 1e-5); return y, (x, m, r, w, b)  # noqa: E702
    def bwd(g, x, m, r, w, b): return o.layer_norm_backward(g, x, [N], m, r, w, b, [True, True, True])
    return [x, w, b], lambda: aten(fwd, bwd, x, w, b)
@case
def layer_norm_wide_loop():
    o = ops(); N = sz(32768, 5000); x, w, b = R(sz(256, 4), N, dt=f32), R(N, dt=f32), R(N, dt=f32)
    def fwd(x, w, b): y, m, r = o.layer_norm(x, [N], w, b, 1e-5); return y, (x, m, r, w, b)  # noqa: E702
    def bwd(g, x, m, r, w, b): return o.layer_norm_backward(g, x, [N], m, r, w, b, [True, True, True])
    return [x, w, b], lambda: aten(fwd, bwd, x, w, b)
@case
def rms_norm():
    o = ops(); N = sz(4096, 256); x, w = R(sz(4096, 48), N), R(N)
    return [x, w], lambda: o.rms_norm(x, [N], w, 1e-6)
@case
def group_norm():
    o = ops(); Nb, C, HW, G = sz((16, 64, 4096, 8), (2, 8, 64, 4)); x, w, b = R(Nb, C, HW), R(C), R(C)
    def fwd(x, w, b): y, m, r = o.group_norm(x, w, b, Nb, C, HW, G, 1e-5); return y, (x, m, r, w)  # noqa: E702
    def bwd(g, x, m, r, w): return o.group_norm_backward(g, x, m, r, w, Nb, C, HW, G, [True, True, True])
    return [x, w, b], lambda: aten(fwd, bwd, x, w, b)
@case
def batch_norm_train():
    o = ops(); Nb, C, HW = sz((32, 256, 1024), (4, 8, 50))
    x, w, b = R(Nb, C, HW, dt=f32), R(C, dt=f32), R(C, dt=f32)
    rm, rv = torch.zeros(C, device=dev), torch.ones(C, device=dev)
    def fwd(x, w, b): y, m, s = o.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5); return y, (x, w, m, s)  # noqa: E702
    def bwd(g, x, w, m, s): return o.batch_norm_backward(g, x, w, rm, rv, m, s, True, 1e-5, [True, True, True])
    return [x, w, b], lambda: (aten(fwd, bwd, x, w, b), rm, rv)
@case
def instance_norm():
    f = fused(); Nb, C, HW = sz((16, 64, 4096), (2, 4, 100)); x, w, b = R(Nb, C, HW, dt=f32), R(C, dt=f32), R(C, dt=f32)
    return [x, w, b], lambda: f.instance_norm(x, w, b, None, None, True, 0.1, 1e-5)
@case
def weight_norm():
    f = fused(); v, g = R(sz(4096, 64), sz(1024, 48), dt=f32), R(sz(4096, 64), 1, dt=f32)
    return [v, g], lambda: f.weight_norm(v, g, 0)
@case
def vector_norm_and_var_mean():
    o = ops(); x = R(sz(1024, 16), sz(8192, 300), dt=f32, g=False)
    return [], lambda: [o.vector_norm(x, 2, [1]), o.vector_norm(x, float("inf"), [1]), o.vector_norm(x, 2),
                        *o.var_mean(x, [1], correction=1)]
# fused
@case
def skip_layer_norm():
    f = fused(); N, M = sz((4096, 4096), (256, 48))
    x, r, w, b = R(M, N, g=False), R(M, N, g=False), R(N, g=False), R(N, g=False)
    return [], lambda: f.skip_layer_norm(x, r, [N], w, b, 1e-5)
@case
def fused_add_rms_norm():
    f = fused(); N = sz(4096, 256); x, r, w = R(sz(4096, 48), N, g=False), R(sz(4096, 48), N, g=False), R(N, g=False)
    def run():
        xx, rr = x.clone(), r.clone()
        return list(f.fused_add_rms_norm(xx, rr, [N], w, 1e-6)) + [xx, rr]
    return [], run
@case
def silu_and_mul():
    f = fused(); a, b = R(sz(4096, 32), sz(11008, 300)), R(sz(4096, 32), sz(11008, 300))
    return [a, b], lambda: f.silu_and_mul(a, b)
@case
def gelu_and_mul_tanh():
    f = fused(); a, b = R(sz(4096, 32), sz(11008, 300)), R(sz(4096, 32), sz(11008, 300))
    return [a, b], lambda: f.gelu_and_mul(a, b, "tanh")
@case
def rotary_embedding():
    f = fused(); T, Hq, Hk, D = sz((4096, 32, 8, 128), (64, 4, 2, 64))
    q, k = R(T, Hq, D, g=False), R(T, Hk, D, g=False)
    ang = torch.arange(T, device=dev, dtype=f32)[:, None] * torch.rand(D // 2, device=dev)[None]
    pos = torch.randperm(T, device=dev)
    q4, k4 = q[None, :T // 2], k[None, :T // 2]  # (batch, seq, heads, dim): positions 0.. without ids
    return [], lambda: [*f.apply_rotary_pos_emb(q, k, ang.cos(), ang.sin(), pos),
                        *f.apply_rotary_pos_emb(q4, k4, ang.cos(), ang.sin(), None, rotary_interleaved=True)]
@case
def topk_softmax():
    f = fused(); T, E, K = sz((4096, 64, 8), (64, 16, 4)); gate = R(T, E, dt=f32, g=False)
    w = torch.empty(T, K, device=dev); i = torch.empty(T, K, device=dev, dtype=torch.int32)
    tei = torch.empty(T, K, device=dev, dtype=torch.int32)
    def run():
        f.topk_softmax(w, i, tei, gate)
        return [w, i, tei]
    return [], run
@case
def cross_entropy():  # FlagGems' kernel loads inp[target] before masking ignore_index (-100): out of bounds
    f = fused(); T, V = sz((4096, 32000), (64, 1000)); x = R(T, V, scale=2.0); t = ints(V, T); t[::7] = -100
    return [x], lambda: f.cross_entropy_loss(x, t, None, "mean", -100, 0.0)
@case
def cross_entropy_weight_smooth():
    f = fused(); T, V = sz((2048, 32000), (48, 1000)); x = R(T, V, dt=f32, scale=4.0); t = ints(V, T)
    wt = torch.rand(V, device=dev)
    return [x], lambda: f.cross_entropy_loss(x, t, wt, "sum", -100, 0.1)
@case
def cross_entropy_probs():
    f = fused(); T, V = sz((2048, 32000), (48, 1000)); x = R(T, V, dt=f32)
    p = torch.softmax(torch.randn(T, V, device=dev), -1)
    return [x], lambda: f.cross_entropy_loss(x, p, None, "mean", -100, 0.0)
@case
def outer():
    f = fused(); a, b = R(sz(4096, 100), dt=f32), R(sz(4096, 70), dt=f32)
    return [a, b], lambda: f.outer(a, b)
# GEMM
@case
def mm():
    o = ops(); a, b = R(sz(4096, 96), sz(4096, 128), g=False), R(sz(4096, 128), sz(4096, 80), g=False)
    return [], lambda: o.mm(a, b)
@case
def mm_f32_odd():
    o = ops(); a, b = R(sz(1000, 33), sz(3000, 70), dt=f32, g=False), R(sz(3000, 70), sz(500, 45), dt=f32, g=False)
    return [], lambda: o.mm(a, b.t().contiguous().t())
@case
def addmm():
    o = ops(); M, N, K = sz((4096, 4096, 4096), (64, 96, 128))
    bias, a, b = R(N, g=False), R(M, K, g=False), R(K, N, g=False)
    return [], lambda: o.addmm(bias, a, b, beta=0.5, alpha=2.0)
@case
def bmm():
    o = ops(); B, M, N, K = sz((16, 1024, 1024, 512), (3, 40, 48, 64))
    a, b = R(B, M, K, g=False), R(B, K, N, g=False)
    return [], lambda: o.bmm(a, b)
@case
def sdpa_causal():
    o = ops(); B, H, S, D = sz((2, 16, 2048, 128), (1, 2, 128, 64))  # its backward loads whole blocks of 128 rows
    q, k, v = R(B, H, S, D), R(B, H, S, D), R(B, H, S, D)
    return [q, k, v], lambda: o.scaled_dot_product_attention(q, k, v, is_causal=True)
# reductions
@case
def sum_mean():
    o = ops(); x = R(sz(4096, 64), sz(4096, 300), dt=f32, g=False)
    return [], lambda: [o.sum(x), o.sum_dim(x, [1]), o.sum_dim(x, [0], keepdim=True), o.mean(x), o.mean_dim(x, [1])]
@case
def max_argmax_min():
    o = ops(); x = R(sz(4096, 64), sz(4096, 300), g=False)
    return [], lambda: [o.max(x), *o.max_dim(x, 1), o.argmax(x, 1), o.argmax(x), *o.min_dim(x, 0), o.amax(x, [0])]
@case
def prod_any_all():
    o = ops(); x = (torch.rand(sz(1024, 16), sz(512, 40), device=dev) + 0.5)
    b = x > 1.3
    return [], lambda: [o.prod_dim(x, 1), o.any_dim(b, 1), o.all_dim(b, 0), o.count_nonzero(b)]
@case
def cumsum():
    o = ops(); x = R(sz(64, 8), sz(32768, 700), dt=f32, g=False); y = ints(10, sz(4096, 24), sz(1024, 50))
    return [], lambda: [o.cumsum(x, 1), o.cumsum(x, 0), o.cumsum(y, 1)]
# pointwise (pointwise_dynamic's generated kernels)
@case
def binary_broadcast():
    o = ops(); a, b = R(sz(4096, 32), sz(4096, 100), g=False), R(sz(4096, 100), g=False)
    return [], lambda: [o.add(a, b, alpha=0.5), o.mul(a, b), o.sub(a, 2.0), o.true_divide(a, b.abs() + 1), o.add(a.t(), 1.0)]
@case
def gelu():
    o = ops(); x = R(sz(4096, 32), sz(4096, 300))
    def fwd(x): return o.gelu(x, approximate="tanh"), (x,)
    return [x], lambda: aten(fwd, lambda g, x: (o.gelu_backward(g, x, approximate="tanh"),), x)
@case
def silu_sigmoid_tanh():
    o = ops(); x = R(sz(4096, 32), sz(4096, 300), dt=f32)
    def fwd(x): return o.silu(x), (x,)
    return [x], lambda: [aten(fwd, lambda g, x: (o.silu_backward(g, x),), x),
                         o.sigmoid(x.detach()), o.tanh(x.detach()), o.exp(x.detach()), o.rsqrt(x.detach().abs())]
@case
def clamp_masked_fill_pow():
    o = ops(); x, y = R(sz(4096, 32), sz(4096, 100), g=False), R(sz(4096, 32), sz(4096, 100), g=False)
    c = x > y
    return [], lambda: [o.clamp(x, -0.5, 0.5), o.clamp_tensor(x, y, None),
                        o.masked_fill(x, c, -1.0), o.pow_tensor_scalar(x, 2), o.maximum(x, y)]
@case
def where():  # FlagGems' where asserts that a tensor is on a GPU
    o = ops(); x, y = R(sz(4096, 32), sz(4096, 100), g=False), R(sz(4096, 100), g=False)
    return [], lambda: [o.where_self(x > 0, x, y), o.where_scalar_other(x > y, x, 0.0)]
@case
def pointwise_noncontig_int():
    o = ops(); x = ints(100, sz(1024, 16), sz(2048, 64)).permute(1, 0)[::2]
    y = ints(7, sz(1024, 16)) + 1
    return [], lambda: [o.add(x, y), o.bitwise_and_tensor(x, y), o.eq(x, y), o.floor_divide(x, y), o.neg(x)]
# index, gather, scatter
@case
def index_select():
    o = ops(); x = R(sz(32000, 1000), sz(1024, 64), g=False); i = ints(x.shape[0], sz(4096, 50))
    return [], lambda: [o.index_select(x, 0, i), o.index_select(x, 1, ints(x.shape[1], 17))]
@case
def embedding():
    o = ops(); V, N = sz((32000, 1024), (500, 64)); w = R(V, N); idx = ints(V, *sz((8, 512), (3, 20)))
    def fwd(w): return o.embedding(w, idx), ()
    return [w], lambda: aten(fwd, lambda g: (o.embedding_backward(g, idx, V, -1, False),), w)
@case
def gather():
    o = ops(); x = R(sz(1024, 32), sz(4096, 100), dt=f32); i = ints(x.shape[1], sz(1024, 32), sz(512, 40))
    def fwd(x): return o.gather(x, 1, i), (x,)
    return [x], lambda: aten(fwd, lambda g, x: (o.gather_backward(g, x, 1, i, False),), x)
@case
def scatter():
    o = ops(); x, src = R(sz(1024, 32), sz(4096, 100), dt=f32, g=False), R(sz(1024, 32), sz(512, 40), dt=f32, g=False)
    i = torch.argsort(torch.rand(x.shape[0], x.shape[1], device=dev), 1)[:, :src.shape[1]]
    j = ints(x.shape[1], *src.shape)
    return [], lambda: [o.scatter(x, 1, i, src), o.scatter(x, 1, j, src, reduce="add")]
@case
def index_add_put():
    o = ops(); x, src = R(sz(4096, 64), sz(512, 40), dt=f32, g=False), R(sz(1024, 20), sz(512, 40), dt=f32, g=False)
    i = ints(x.shape[0], src.shape[0])
    return [], lambda: [o.index_add(x, 0, i, src, alpha=2.0), o.index_put(x, [i], src, accumulate=True)]
# sort, topk
@case
def topk():
    o = ops(); x = R(sz(4096, 16), sz(32000, 500), dt=f32, g=False)
    return [], lambda: [*o.topk(x, 8, -1), *o.topk(x, 50, -1, largest=False)]
@case
def sort():
    o = ops(); x = R(sz(1024, 16), sz(4096, 300), dt=f32, g=False)
    return [], lambda: [*o.sort(x, -1), o.sort(x, -1, descending=True)[0]]
@case
def sort_stable_int64():  # radix sort
    o = ops(); x = ints(50, sz(1 << 20, 300))
    return [], lambda: [*o.sort_stable(x, stable=True), *o.sort_stable(x, stable=True, descending=True)]

if __name__ == "__main__":
    libdiff.main(CASES)
