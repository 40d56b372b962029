# Neural-network layer kernels written in the manner of attorch, kernl,
# DeepSpeed's inference Triton kernels and the code PyTorch Inductor
# generates.
#
# attorch side: element-wise activations and their derivatives chosen by a
# compile-time string, with fused dropout drawn from tl.rand (autotuned over
# host-built configs with warmup/rep); batch normalisation forward (block
# statistics merged across spatial blocks, running statistics updated in
# place, or used in evaluation) and backward; layer normalisation over a
# block of rows; softmax and log-softmax forward and backward; a 2-D
# convolution as an implicit GEMM (grouped, strided, padded); the negative
# log-likelihood with class weights, ignored targets
# and a reduction chosen by string. The block sizes come from
# @triton.heuristics lambdas and named functions.
#
# kernl side: a linear layer with bias, a fused activation epilogue (an
# empty string for none) and the pre-activation optionally saved, rows and
# columns wrapped with % instead of masks and the K loop counting down;
# attention with an additive bias broadcast over query rows (stride 0) and a
# causal flag; layer normalisation by per-lane Welford statistics merged by
# a tuple reduction, or by sums of x and x*x.
#
# DeepSpeed side: a matmul with split-K (atomics), a bias and an activation
# epilogue chosen by string; a per-head batched matmul with an optional
# causal mask that retires the programs above the diagonal early; a scaled
# softmax with an additive key mask and a causal mask; layer normalisation
# with residual and input bias that writes the normalised input; a dropout
# that draws four words per Philox call.
#
# Inductor side: generated-style pointwise, persistent and looped reduction
# kernels (xnumel/r0_numel, XBLOCK/R0_BLOCK, masks broadcast over
# [XBLOCK, R0_BLOCK], eviction policies, tl.full/tl.broadcast_to, inline
# Welford, a NaN-propagating max and a first-index argmax through tuple
# reductions, an embedding gather with wrapped negative indices and a
# device-side bounds assertion, a tiled permute over a 2-D grid, bit-level
# reinterpretation of floats, libdevice and tl.math calls, batch-norm
# statistics with int64 index math, seeded dropout from an int64 seed
# buffer, a row cumulative sum through a one-element tuple scan).
import math

import triton
import triton.language as tl
from triton.language import math as tl_math

try:
    from triton.language.extra import libdevice
except ImportError:  # older layouts
    from triton.language.extra.cuda import libdevice

# kernl-style constants: module-level constexprs a kernel may read
SQRT_2_INV = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
INV_SQRT_2PI = tl.constexpr(1.0 / math.sqrt(2.0 * math.pi))
IGNORE_INDEX = tl.constexpr(-100)


# ---- host-side tuning functions -------------------------------------------------------------


def _elementwise_configs():
    """Block sizes for one-dimensional element-wise kernels."""
    return [triton.Config({"BLOCK_SIZE": b}, num_warps=w) for b, w in ((64, 2), (128, 4), (1024, 4))]


def _warps_configs():
    """Kernels whose block sizes a heuristic picks: tune only the warps."""
    return [triton.Config({}, num_warps=w) for w in (1, 2, 4, 8)]


def _spatial_block(args):
    """Spatial block of batch norm: the whole extent, bounded so that the
    [batch, spatial] tile stays under 2**14 elements."""
    batch = triton.next_power_of_2(args["batch_dim"])
    return min(triton.next_power_of_2(args["spatial_dim"]), max(1, 2 ** 14 // batch))


def _batch_block(args):
    return min(triton.next_power_of_2(args["batch_dim"]), 64)


# ---- activations (attorch) ------------------------------------------------------------------


@triton.jit
def _att_sigmoid(x):
    return 1 / (1 + tl.exp(-x))


@triton.jit
def _att_gelu(x):
    cdf = 0.5 * (1 + tl.math.erf(SQRT_2_INV * x))
    return x * cdf


@triton.jit
def _att_gelu_grad(x):
    cdf = 0.5 * (1 + tl.math.erf(SQRT_2_INV * x))
    pdf = INV_SQRT_2PI * tl.exp(-0.5 * x * x)
    return cdf + x * pdf


@triton.jit
def _att_act(x, act_func: tl.constexpr):
    """The activation named by act_func; every one but ReLU in fp32."""
    if act_func != "relu":
        x = x.to(tl.float32)
    if act_func == "sigmoid":
        out = _att_sigmoid(x)
    elif act_func == "tanh":
        out = libdevice.tanh(x)
    elif act_func == "relu":
        out = tl.maximum(0, x)
    elif act_func == "gelu":
        out = _att_gelu(x)
    elif act_func == "silu":
        out = x * _att_sigmoid(x)
    elif act_func == "leaky_relu":
        out = tl.where(x <= 0, 0.01 * x, x)
    return out


@triton.jit
def _att_act_grad(x, act_func: tl.constexpr):
    """d act(x) / dx for the activation named by act_func."""
    if act_func != "relu":
        x = x.to(tl.float32)
    if act_func == "sigmoid":
        s = _att_sigmoid(x)
        out = s * (1 - s)
    elif act_func == "tanh":
        t = libdevice.tanh(x)
        out = 1 - t * t
    elif act_func == "relu":
        out = tl.where(x <= 0, 0, 1)
    elif act_func == "gelu":
        out = _att_gelu_grad(x)
    elif act_func == "silu":
        s = _att_sigmoid(x)
        out = s * (x * (1 - s) + 1)
    elif act_func == "leaky_relu":
        out = tl.where(x <= 0, 0.01, 1.0)
    return out


@triton.jit
def _att_dropout(x, drop_p, seed, offset):
    """Zeroes each element with probability drop_p and rescales the rest;
    the draw depends only on (seed, offset), so backward can replay it."""
    keep = tl.rand(seed, offset) >= drop_p
    return tl.where(keep, x / (1 - drop_p), 0)


@triton.autotune(configs=_elementwise_configs(), key=["size"], warmup=5, rep=20)
@triton.jit
def _att_act_fwd(input_pointer, output_pointer, size, drop_p, seed,
                 act_func: tl.constexpr, dropout: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offset < size
    x = tl.load(input_pointer + offset, mask=mask)
    out = _att_act(x, act_func)
    if dropout:
        out = _att_dropout(out, drop_p, seed, offset)
    tl.store(output_pointer + offset, out, mask=mask)


@triton.autotune(configs=_elementwise_configs(), key=["size"], warmup=5, rep=20)
@triton.jit
def _att_act_bwd(output_grad_pointer, input_pointer, input_grad_pointer, size, drop_p, seed,
                 act_func: tl.constexpr, dropout: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offset < size
    output_grad = tl.load(output_grad_pointer + offset, mask=mask)
    x = tl.load(input_pointer + offset, mask=mask)
    if dropout:
        output_grad = _att_dropout(output_grad, drop_p, seed, offset)
    tl.store(input_grad_pointer + offset, output_grad * _att_act_grad(x, act_func), mask=mask)


# ---- batch normalisation (attorch) ----------------------------------------------------------


@triton.autotune(configs=_warps_configs(), key=["batch_dim", "spatial_dim"],
                 restore_value=["running_mean_pointer", "running_var_pointer"])
@triton.heuristics({"BLOCK_SIZE_BATCH": lambda args: triton.next_power_of_2(args["batch_dim"]),
                    "BLOCK_SIZE_SPATIAL": _spatial_block})
@triton.jit
def _att_batch_norm_fwd(input_pointer, weight_pointer, bias_pointer, mean_pointer, inv_std_pointer,
                        output_pointer, running_mean_pointer, running_var_pointer,
                        batch_dim, spatial_dim, input_batch_stride, input_feat_stride,
                        output_batch_stride, output_feat_stride, momentum, eps,
                        affine: tl.constexpr, save_stats: tl.constexpr, track_running_stats: tl.constexpr,
                        is_train: tl.constexpr, BLOCK_SIZE_BATCH: tl.constexpr,
                        BLOCK_SIZE_SPATIAL: tl.constexpr):
    """One program per feature over a [batch, feature, spatial] input whose
    spatial stride is 1."""
    feat_pid = tl.program_id(axis=0)
    batch_offset = tl.arange(0, BLOCK_SIZE_BATCH)
    batch_mask = batch_offset < batch_dim

    if is_train or not track_running_stats:
        # statistics of each spatial block merged into the running ones
        # (count, mean, sum of squared deviations)
        count = 0.0
        mean = 0.0
        m2 = 0.0
        for block_ind in range(0, tl.cdiv(spatial_dim, BLOCK_SIZE_SPATIAL)):
            spatial_offset = block_ind * BLOCK_SIZE_SPATIAL + tl.arange(0, BLOCK_SIZE_SPATIAL)
            spatial_mask = spatial_offset < spatial_dim
            mask = batch_mask[:, None] & spatial_mask[None, :]
            x = tl.load(input_pointer + input_feat_stride * feat_pid + input_batch_stride * batch_offset[:, None]
                        + spatial_offset[None, :], mask=mask).to(tl.float32)
            block_count = min(BLOCK_SIZE_SPATIAL, spatial_dim - block_ind * BLOCK_SIZE_SPATIAL) * batch_dim
            block_mean = tl.sum(tl.where(mask, x, 0.0)) / block_count
            block_m2 = tl.sum(tl.where(mask, (x - block_mean) * (x - block_mean), 0.0))
            new_count = count + block_count
            delta = block_mean - mean
            mean += delta * block_count / new_count
            m2 += block_m2 + delta * delta * count * block_count / new_count
            count = new_count
        var = m2 / count
        inv_std = 1 / tl.sqrt(var + eps)

        if save_stats:
            tl.store(feat_pid + mean_pointer, mean)
            tl.store(feat_pid + inv_std_pointer, inv_std)

        if track_running_stats:
            running_mean_pointer += feat_pid
            running_var_pointer += feat_pid
            running_mean = tl.load(running_mean_pointer)
            running_var = tl.load(running_var_pointer)
            n = batch_dim * spatial_dim
            tl.store(running_mean_pointer, (1 - momentum) * running_mean + momentum * mean)
            tl.store(running_var_pointer, (1 - momentum) * running_var + momentum * var * n / (n - 1))
    else:
        mean = tl.load(feat_pid + running_mean_pointer)
        inv_std = 1 / tl.sqrt(tl.load(feat_pid + running_var_pointer) + eps)

    if affine:
        weight = tl.load(feat_pid + weight_pointer)
        bias = tl.load(feat_pid + bias_pointer)
    else:
        weight = 1.
        bias = 0.

    for block_ind in range(0, tl.cdiv(spatial_dim, BLOCK_SIZE_SPATIAL)):
        spatial_offset = block_ind * BLOCK_SIZE_SPATIAL + tl.arange(0, BLOCK_SIZE_SPATIAL)
        mask = batch_mask[:, None] & (spatial_offset < spatial_dim)[None, :]
        x = tl.load(input_pointer + input_feat_stride * feat_pid + input_batch_stride * batch_offset[:, None]
                    + spatial_offset[None, :], mask=mask).to(tl.float32)
        tl.store(output_pointer + output_feat_stride * feat_pid + output_batch_stride * batch_offset[:, None]
                 + spatial_offset[None, :], weight * (x - mean) * inv_std + bias, mask=mask)


@triton.autotune(configs=_warps_configs(), key=["batch_dim", "spatial_dim"])
@triton.heuristics({"BLOCK_SIZE_BATCH": lambda args: triton.next_power_of_2(args["batch_dim"]),
                    "BLOCK_SIZE_SPATIAL": _spatial_block})
@triton.jit
def _att_batch_norm_bwd(output_grad_pointer, input_pointer, mean_pointer, inv_std_pointer, weight_pointer,
                        input_grad_pointer, weight_grad_pointer, bias_grad_pointer,
                        batch_dim, spatial_dim, batch_stride, feat_stride,
                        affine: tl.constexpr, BLOCK_SIZE_BATCH: tl.constexpr,
                        BLOCK_SIZE_SPATIAL: tl.constexpr):
    feat_pid = tl.program_id(axis=0)
    batch_offset = tl.arange(0, BLOCK_SIZE_BATCH)
    batch_mask = batch_offset < batch_dim
    mean = tl.load(feat_pid + mean_pointer)
    inv_std = tl.load(feat_pid + inv_std_pointer)
    base = feat_stride * feat_pid + batch_stride * batch_offset[:, None]

    # sum(dy * x_hat) and sum(dy) over the feature's elements
    term1 = 0.0
    term2 = 0.0
    for block_ind in range(0, tl.cdiv(spatial_dim, BLOCK_SIZE_SPATIAL)):
        spatial_offset = block_ind * BLOCK_SIZE_SPATIAL + tl.arange(0, BLOCK_SIZE_SPATIAL)
        mask = batch_mask[:, None] & (spatial_offset < spatial_dim)[None, :]
        x = tl.load(input_pointer + base + spatial_offset[None, :], mask=mask).to(tl.float32)
        dy = tl.load(output_grad_pointer + base + spatial_offset[None, :], mask=mask).to(tl.float32)
        x_hat = (x - mean) * inv_std
        term1 += tl.sum(tl.where(mask, x_hat * dy, 0.0))
        term2 += tl.sum(tl.where(mask, dy, 0.0))

    if affine:
        weight = tl.load(feat_pid + weight_pointer)
        tl.store(feat_pid + weight_grad_pointer, term1)
        tl.store(feat_pid + bias_grad_pointer, term2)
    else:
        weight = 1.
    count = batch_dim * spatial_dim
    term1 *= weight / count
    term2 *= weight / count

    for block_ind in range(0, tl.cdiv(spatial_dim, BLOCK_SIZE_SPATIAL)):
        spatial_offset = block_ind * BLOCK_SIZE_SPATIAL + tl.arange(0, BLOCK_SIZE_SPATIAL)
        mask = batch_mask[:, None] & (spatial_offset < spatial_dim)[None, :]
        x = tl.load(input_pointer + base + spatial_offset[None, :], mask=mask).to(tl.float32)
        dy = tl.load(output_grad_pointer + base + spatial_offset[None, :], mask=mask).to(tl.float32)
        x_hat = (x - mean) * inv_std
        tl.store(input_grad_pointer + base + spatial_offset[None, :],
                 inv_std * (weight * dy - (term1 * x_hat + term2)), mask=mask)


# ---- layer norm, softmax (attorch) ----------------------------------------------------------


@triton.autotune(configs=_warps_configs(), key=["batch_dim", "feat_dim"])
@triton.heuristics({"BLOCK_SIZE_BATCH": _batch_block,
                    "BLOCK_SIZE_FEAT": lambda args: triton.next_power_of_2(args["feat_dim"])})
@triton.jit
def _att_layer_norm_fwd(input_pointer, weight_pointer, bias_pointer, inv_std_pointer, mean_pointer,
                        output_pointer, batch_dim, feat_dim, input_batch_stride, input_feat_stride,
                        output_batch_stride, output_feat_stride, eps,
                        scale_by_weight: tl.constexpr, add_bias: tl.constexpr, save_stats: tl.constexpr,
                        BLOCK_SIZE_BATCH: tl.constexpr, BLOCK_SIZE_FEAT: tl.constexpr):
    batch_pid = tl.program_id(axis=0)
    batch_offset = batch_pid * BLOCK_SIZE_BATCH + tl.arange(0, BLOCK_SIZE_BATCH)
    feat_offset = tl.arange(0, BLOCK_SIZE_FEAT)
    batch_mask = batch_offset < batch_dim
    feat_mask = feat_offset < feat_dim

    input_pointer += input_batch_stride * batch_offset[:, None] + input_feat_stride * feat_offset[None, :]
    output_pointer += output_batch_stride * batch_offset[:, None] + output_feat_stride * feat_offset[None, :]

    x = tl.load(input_pointer, mask=batch_mask[:, None] & feat_mask[None, :], other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / feat_dim
    diff = tl.where(feat_mask[None, :], x - mean[:, None], 0)
    inv_std = tl.rsqrt(tl.sum(diff * diff, axis=1) / feat_dim + eps)
    if save_stats:
        tl.store(mean_pointer + batch_offset, mean, mask=batch_mask)
        tl.store(inv_std_pointer + batch_offset, inv_std, mask=batch_mask)

    out = diff * inv_std[:, None]
    if scale_by_weight:
        weight = tl.load(weight_pointer + feat_offset, mask=feat_mask)
        out *= weight
        if add_bias:
            bias = tl.load(bias_pointer + feat_offset, mask=feat_mask)
            out += bias
    tl.store(output_pointer, out, mask=batch_mask[:, None] & feat_mask[None, :])


@triton.heuristics({"BLOCK_SIZE_BATCH": _batch_block,
                    "BLOCK_SIZE_FEAT": lambda args: triton.next_power_of_2(args["feat_dim"])})
@triton.jit
def _att_softmax_fwd(input_pointer, output_pointer, batch_dim, feat_dim, input_batch_stride,
                     output_batch_stride, log: tl.constexpr, BLOCK_SIZE_BATCH: tl.constexpr,
                     BLOCK_SIZE_FEAT: tl.constexpr):
    """Softmax (or log-softmax) of each row."""
    batch_pid = tl.program_id(axis=0)
    batch_offset = batch_pid * BLOCK_SIZE_BATCH + tl.arange(0, BLOCK_SIZE_BATCH)
    feat_offset = tl.arange(0, BLOCK_SIZE_FEAT)
    mask = (batch_offset < batch_dim)[:, None] & (feat_offset < feat_dim)[None, :]
    x = tl.load(input_pointer + input_batch_stride * batch_offset[:, None] + feat_offset[None, :], mask=mask,
                other=-float("inf")).to(tl.float32)
    x -= tl.max(x, axis=1)[:, None]
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=1)[:, None]
    if log:
        out = x - tl.log(denominator)
    else:
        out = numerator / denominator
    tl.store(output_pointer + output_batch_stride * batch_offset[:, None] + feat_offset[None, :], out, mask=mask)


@triton.heuristics({"BLOCK_SIZE_BATCH": _batch_block,
                    "BLOCK_SIZE_FEAT": lambda args: triton.next_power_of_2(args["feat_dim"])})
@triton.jit
def _att_softmax_bwd(output_grad_pointer, output_pointer, input_grad_pointer, batch_dim, feat_dim,
                     row_stride, log: tl.constexpr, BLOCK_SIZE_BATCH: tl.constexpr,
                     BLOCK_SIZE_FEAT: tl.constexpr):
    """Gradient of softmax (or log-softmax) from its output and output grad."""
    batch_pid = tl.program_id(axis=0)
    batch_offset = batch_pid * BLOCK_SIZE_BATCH + tl.arange(0, BLOCK_SIZE_BATCH)
    feat_offset = tl.arange(0, BLOCK_SIZE_FEAT)
    mask = (batch_offset < batch_dim)[:, None] & (feat_offset < feat_dim)[None, :]
    offs = row_stride * batch_offset[:, None] + feat_offset[None, :]
    dy = tl.load(output_grad_pointer + offs, mask=mask).to(tl.float32)
    y = tl.load(output_pointer + offs, mask=mask).to(tl.float32)
    if log:
        dx = dy - tl.exp(y) * tl.sum(tl.where(mask, dy, 0), axis=1)[:, None]
    else:
        dx = y * (dy - tl.sum(tl.where(mask, dy * y, 0), axis=1)[:, None])
    tl.store(input_grad_pointer + offs, dx, mask=mask)


# ---- convolution as an implicit GEMM (attorch) ----------------------------------------------


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE_BHW": 32, "BLOCK_SIZE_IN_FEAT": 16, "BLOCK_SIZE_OUT_FEAT": 16},
                                        num_warps=4, num_stages=2)],
                 key=["batch_dim", "in_feat_dim", "in_height", "in_width", "out_feat_dim", "out_height",
                      "out_width", "kernel_height", "kernel_width", "groups"])
@triton.jit
def _att_conv2d_fwd(input_pointer, weight_pointer, output_pointer, batch_dim, in_feat_dim, in_height, in_width,
                    out_feat_dim, out_height, out_width,
                    input_batch_stride, input_in_feat_stride, input_height_stride, input_width_stride,
                    weight_out_feat_stride, weight_in_feat_stride, weight_height_stride, weight_width_stride,
                    output_batch_stride, output_out_feat_stride, output_height_stride, output_width_stride,
                    kernel_height: tl.constexpr, kernel_width: tl.constexpr, stride_height: tl.constexpr,
                    stride_width: tl.constexpr, padding_height: tl.constexpr, padding_width: tl.constexpr,
                    groups: tl.constexpr, fp16: tl.constexpr, BLOCK_SIZE_BHW: tl.constexpr,
                    BLOCK_SIZE_IN_FEAT: tl.constexpr, BLOCK_SIZE_OUT_FEAT: tl.constexpr):
    """Rows of the GEMM are (batch, out_y, out_x) triples, columns output
    features of one group, the reduction runs over kernel taps and the
    group's input features."""
    bhw_pid = tl.program_id(0)
    out_feat_pid = tl.program_id(1)
    group_pid = tl.program_id(2)
    in_group_dim = in_feat_dim // groups
    out_group_dim = out_feat_dim // groups

    bhw_offset = bhw_pid * BLOCK_SIZE_BHW + tl.arange(0, BLOCK_SIZE_BHW)
    bh_offset = bhw_offset // out_width
    batch_offset = bh_offset // out_height
    out_y = bh_offset % out_height
    out_x = bhw_offset % out_width
    out_feat_offset = out_feat_pid * BLOCK_SIZE_OUT_FEAT + tl.arange(0, BLOCK_SIZE_OUT_FEAT)

    # both pointers become blocks: rows of the input, columns of the weight
    input_pointer += (input_batch_stride * batch_offset + input_in_feat_stride * group_pid * in_group_dim)[:, None]
    weight_pointer += (weight_out_feat_stride * out_feat_offset
                       + weight_out_feat_stride * group_pid * out_group_dim)[None, :]

    acc = tl.zeros((BLOCK_SIZE_BHW, BLOCK_SIZE_OUT_FEAT), dtype=tl.float32)
    for h in range(kernel_height):
        for w in range(kernel_width):
            in_y = h - padding_height + stride_height * out_y
            in_x = w - padding_width + stride_width * out_x
            for c in range(0, in_group_dim, BLOCK_SIZE_IN_FEAT):
                in_feat_offset = c + tl.arange(0, BLOCK_SIZE_IN_FEAT)
                cur_input = (input_pointer + (input_in_feat_stride * in_feat_offset)[None, :]
                             + (input_height_stride * in_y)[:, None] + (input_width_stride * in_x)[:, None])
                cur_weight = (weight_pointer + (weight_in_feat_stride * in_feat_offset)[:, None]
                              + weight_height_stride * h + weight_width_stride * w)
                input_mask = ((batch_offset < batch_dim)[:, None] & (in_feat_offset < in_group_dim)[None, :]
                              & (0 <= in_y)[:, None] & (in_y < in_height)[:, None]
                              & (0 <= in_x)[:, None] & (in_x < in_width)[:, None])
                weight_mask = (in_feat_offset < in_group_dim)[:, None] & (out_feat_offset < out_group_dim)[None, :]
                a = tl.load(cur_input, mask=input_mask, other=0.0)
                b = tl.load(cur_weight, mask=weight_mask, other=0.0)
                if fp16:
                    a = a.to(tl.float16)
                    b = b.to(tl.float16)
                acc += tl.dot(a, b)

    output_pointer += ((output_batch_stride * batch_offset)[:, None]
                       + (output_out_feat_stride * (group_pid * out_group_dim + out_feat_offset))[None, :]
                       + (output_height_stride * out_y)[:, None] + (output_width_stride * out_x)[:, None])
    out_mask = (batch_offset < batch_dim)[:, None] & (out_feat_offset < out_group_dim)[None, :]
    tl.store(output_pointer, acc, mask=out_mask)


# ---- losses (attorch) ---------------------------------------------------------------


@triton.heuristics({"BLOCK_SIZE_BATCH": _batch_block,
                    "BLOCK_SIZE_FEAT": lambda args: triton.next_power_of_2(args["feat_dim"])})
@triton.jit
def _att_nll_loss_fwd(input_pointer, target_pointer, weight_pointer, sum_weights_pointer, output_pointer,
                      batch_dim, feat_dim, input_batch_stride, reduction: tl.constexpr, weighted: tl.constexpr,
                      BLOCK_SIZE_BATCH: tl.constexpr, BLOCK_SIZE_FEAT: tl.constexpr):
    """Negative log-likelihood of the target class of each row of
    log-probabilities; rows whose target is IGNORE_INDEX count nothing."""
    batch_pid = tl.program_id(axis=0)
    batch_offset = batch_pid * BLOCK_SIZE_BATCH + tl.arange(0, BLOCK_SIZE_BATCH)
    batch_mask = batch_offset < batch_dim
    target = tl.load(target_pointer + batch_offset, mask=batch_mask, other=IGNORE_INDEX)
    live = batch_mask & (target != IGNORE_INDEX)
    safe_target = tl.where(live, target, 0)
    logp = tl.load(input_pointer + input_batch_stride * batch_offset + safe_target, mask=live).to(tl.float32)
    loss = -logp
    if weighted:
        w = tl.load(weight_pointer + safe_target, mask=live).to(tl.float32)
        loss *= w
    loss = tl.where(live, loss, 0.0)
    if reduction == "none":
        tl.store(output_pointer + batch_offset, loss, mask=batch_mask)
    else:
        tl.store(output_pointer + batch_pid, tl.sum(loss))
        if reduction == "mean":
            if weighted:
                tl.store(sum_weights_pointer + batch_pid, tl.sum(tl.where(live, w, 0.0)))
            else:
                tl.store(sum_weights_pointer + batch_pid, tl.sum(live.to(tl.float32)))


# ---- linear layer with fused epilogue, attention, layer norm (kernl) ------------------------


@triton.jit
def _kl_fast_gelu(x):
    return 0.5 * x * (1 + libdevice.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


@triton.autotune(configs=[triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}, num_stages=3, num_warps=4),
                          triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_stages=2, num_warps=2)],
                 key=["CACHE_KEY_M", "CACHE_KEY_N", "CACHE_KEY_K"])
@triton.heuristics({"K_LOAD_MASK_NEEDED": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _kl_linear_fwd(C, ACT_INPUTS, A, B, bias, M, N, K, CACHE_KEY_M, CACHE_KEY_N, CACHE_KEY_K,
                   output_m_stride, act_inputs_m_stride, a_m_stride, b_k_stride,
                   BLOCK_M: tl.constexpr, GROUP_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   K_LOAD_MASK_NEEDED: tl.constexpr, HAS_BIAS: tl.constexpr,
                   SHOULD_SAVE_ACT_INPUTS: tl.constexpr, ACTIVATION: tl.constexpr):
    """C = act(A @ B + bias); K_LOAD_MASK_NEEDED is True when K divides
    evenly (the name is kept from the heuristic's meaning: no mask needed)."""
    pid = tl.program_id(axis=0)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    width = GROUP_M * grid_n
    group_idx = pid // width
    group_size = min(grid_m - group_idx * GROUP_M, GROUP_M)
    block_m_idx = group_idx * GROUP_M + (pid % group_size)
    block_n_idx = (pid % width) // group_size

    # out-of-range rows and columns wrap around instead of being masked;
    # the store below drops them
    rm = block_m_idx * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = block_n_idx * BLOCK_N + tl.arange(0, BLOCK_N)
    m_offs = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    n_offs = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    k_offs = tl.arange(0, BLOCK_K)
    A = A + (m_offs[:, None] * a_m_stride + k_offs[None, :])
    B = B + (k_offs[:, None] * b_k_stride + n_offs[None, :])

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if HAS_BIAS:
        b = tl.load(bias + n_offs, mask=n_offs < N, other=0.0).to(tl.float32)
        acc += b[None, :]
    for k in range(K, 0, -BLOCK_K):
        if K_LOAD_MASK_NEEDED:
            a = tl.load(A)
            w = tl.load(B)
        else:
            a = tl.load(A, mask=k_offs[None, :] < k, other=0.0)
            w = tl.load(B, mask=k_offs[:, None] < k, other=0.0)
        acc += tl.dot(a, w)
        A += BLOCK_K
        B += BLOCK_K * b_k_stride

    if SHOULD_SAVE_ACT_INPUTS:
        tl.store(ACT_INPUTS + rm[:, None] * act_inputs_m_stride + rn[None, :], acc,
                 mask=(rm < M)[:, None] & (rn < N)[None, :])
    if ACTIVATION == "tanh":
        acc = libdevice.tanh(acc)
    if ACTIVATION == "gelu":
        acc = _att_gelu(acc)
    if ACTIVATION == "fast_gelu":
        acc = _kl_fast_gelu(acc)
    if ACTIVATION == "relu":
        acc = tl.maximum(0, acc)
    C = C + rm[:, None] * output_m_stride + rn[None, :]
    tl.store(C, acc, mask=(rm < M)[:, None] & (rn < N)[None, :])


@triton.heuristics({"NEED_LOAD_MASK_SIZE_N": lambda args: args["size_n"] % args["BLOCK_N"] != 0})
@triton.jit
def _kl_attention_fwd(Q, K, V, sm_scale, attention_mask, Out, stride_qz, stride_qh, stride_qm,
                      stride_maskz, stride_maskh, stride_maskm, n_heads, size_m, size_n,
                      BLOCK_DHEAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      IS_CAUSAL: tl.constexpr, NEED_LOAD_MASK_SIZE_N: tl.constexpr, HAS_MASK: tl.constexpr):
    """softmax(Q K^T * sm_scale + mask) V with an online softmax; Q, K, V and
    Out share the [z, h, m, d] strides, the mask may have stride 0 along
    the query rows (one row broadcast)."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // n_heads
    off_h = off_hz % n_heads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DHEAD)
    head = off_z * stride_qz + off_h * stride_qh
    q = tl.load(Q + head + offs_m[:, None] * stride_qm + offs_d[None, :], mask=(offs_m < size_m)[:, None],
                other=0.0)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.zeros((BLOCK_M,), dtype=tl.float32) - float("inf")
    acc = tl.zeros((BLOCK_M, BLOCK_DHEAD), dtype=tl.float32)
    n_end = size_n
    if IS_CAUSAL:
        n_end = tl.minimum((start_m + 1) * BLOCK_M, size_n)
    for start_n in range(0, n_end, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        if NEED_LOAD_MASK_SIZE_N:
            k = tl.load(K + head + cols[None, :] * stride_qm + offs_d[:, None], mask=(cols < size_n)[None, :],
                        other=0.0)
        else:
            k = tl.load(K + head + cols[None, :] * stride_qm + offs_d[:, None])
        qk = tl.dot(q, k) * sm_scale
        if NEED_LOAD_MASK_SIZE_N:
            qk = tl.where((cols < size_n)[None, :], qk, float("-inf"))
        if HAS_MASK:
            mask_ptrs = (attention_mask + off_z * stride_maskz + off_h * stride_maskh
                         + offs_m[:, None] * stride_maskm + cols[None, :])
            qk += tl.load(mask_ptrs, mask=(offs_m < size_m)[:, None] & (cols < size_n)[None, :], other=0.0)
        if IS_CAUSAL:
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + head + cols[:, None] * stride_qm + offs_d[None, :], mask=(cols < size_n)[:, None],
                    other=0.0)
        acc += tl.dot(p.to(V.dtype.element_ty), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(Out + head + offs_m[:, None] * stride_qm + offs_d[None, :], acc.to(Out.dtype.element_ty),
             mask=(offs_m < size_m)[:, None])


@triton.jit
def _kl_welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    delta = mean_b - mean_a
    frac = tl.where(n == 0, 0.0, n_b / tl.where(n == 0, 1.0, n))
    return mean_a + delta * frac, m2_a + m2_b + delta * delta * n_a * frac, n


@triton.jit
def _kl_layer_norm_fwd(Out, X, W, B, Mean, Rstd, stride_row, N, eps,
                       METHOD: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """One row per program in blocks of BLOCK_SIZE: "welford" keeps a
    running (mean, m2, count) per lane and merges the lanes with a tuple
    reduction, "sums" accumulates x and x*x."""
    row = tl.program_id(0)
    X += row * stride_row
    Out += row * stride_row
    cols = tl.arange(0, BLOCK_SIZE)
    if METHOD == "welford":
        mean_acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        m2_acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        n_acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for off in range(0, N, BLOCK_SIZE):
            live = off + cols < N
            x = tl.load(X + off + cols, mask=live, other=0.0).to(tl.float32)
            n_new = n_acc + 1
            delta = x - mean_acc
            mean_new = mean_acc + delta / n_new
            m2_new = m2_acc + delta * (x - mean_new)
            mean_acc = tl.where(live, mean_new, mean_acc)
            m2_acc = tl.where(live, m2_new, m2_acc)
            n_acc = tl.where(live, n_new, n_acc)
        mean, m2, count = tl.reduce((mean_acc, m2_acc, n_acc), 0, _kl_welford_combine)
        var = m2 / count
    else:
        sum_x = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        sum_xx = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
        for off in range(0, N, BLOCK_SIZE):
            x = tl.load(X + off + cols, mask=off + cols < N, other=0.0).to(tl.float32)
            sum_x += x
            sum_xx += x * x
        mean = tl.sum(sum_x, axis=0) / N
        var = tl.sum(sum_xx, axis=0) / N - mean * mean
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        mask = off + cols < N
        w = tl.load(W + off + cols, mask=mask)
        b = tl.load(B + off + cols, mask=mask)
        x = tl.load(X + off + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Out + off + cols, y.to(Out.dtype.element_ty), mask=mask)


# ---- DeepSpeed inference kernels --------------------------------------------------------------


@triton.jit
def _ds_gelu(x):
    # tanh approximation written through the sigmoid: 0.5 (1 + tanh(u)) = sigmoid(2u)
    return x * tl.sigmoid(1.5957691216057308 * (x + 0.044715 * x * x * x))


def _ds_prune(configs, named_args, **kwargs):
    return configs[:1]


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "SPLIT_K": 1}, num_stages=3,
                                        num_warps=4),
                          triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "SPLIT_K": 1}, num_stages=4,
                                        num_warps=2)],
                 key=["CACHE_M", "CACHE_N", "CACHE_K"],
                 prune_configs_by={"early_config_prune": _ds_prune, "perf_model": None, "top_k": 10})
@triton.heuristics({"EVEN_K": lambda args: args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0})
@triton.jit
def _ds_fp_matmul(A, B, C, M, N, K, bias, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  CACHE_M, CACHE_N, CACHE_K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr, BIAS_ADD: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    pid = tl.program_id(0)
    pid_z = tl.program_id(1)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // (group_size)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    A = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # each of the SPLIT_K programs along axis 1 takes every SPLIT_K-th K block
    for k in range(K, 0, -BLOCK_K * SPLIT_K):
        if EVEN_K:
            a = tl.load(A)
            b = tl.load(B)
        else:
            a = tl.load(A, mask=rk[None, :] < k, other=0.)
            b = tl.load(B, mask=rk[:, None] < k, other=0.)
        acc += tl.dot(a, b)
        A += BLOCK_K * SPLIT_K * stride_ak
        B += BLOCK_K * SPLIT_K * stride_bk
    if BIAS_ADD:
        bias_offset = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        bv = tl.load(bias + bias_offset, mask=bias_offset < N)
        if SPLIT_K > 1:
            # only the first split adds the bias
            bv = tl.where(pid_z == 0, bv, 0.0)
        acc = acc + bv[None, :]
    if ACTIVATION == "relu":
        acc = tl.where(acc >= 0, acc, 0)
    elif ACTIVATION == "leaky_relu":
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    elif ACTIVATION == "gelu":
        acc = _ds_gelu(acc)
    elif ACTIVATION == "sigmoid":
        acc = tl.sigmoid(acc)
    acc = acc.to(C.dtype.element_ty)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    C = C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    if SPLIT_K == 1:
        tl.store(C, acc, mask=mask)
    else:
        tl.atomic_add(C, acc, mask=mask)


@triton.jit
def _ds_matmul_4d(a_ptr, b_ptr, c_ptr, M, N, K, stride_ab, stride_ah, stride_am, stride_ak,
                  stride_bb, stride_bh, stride_bk, stride_bn, stride_cb, stride_ch, stride_cm, stride_cn, scale,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, MASK: tl.constexpr):
    """Per (batch, head) C = A @ B, scaled when scale > 0; with MASK the
    tiles wholly above the diagonal are filled with -inf and the program
    returns early, the others get -inf above the diagonal."""
    pid = tl.program_id(axis=0)
    head = tl.program_id(axis=1)
    batch = tl.program_id(axis=2)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + batch * stride_cb + head * stride_ch + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)

    if MASK:
        if (pid_m + 1) * BLOCK_SIZE_M - 1 < pid_n * BLOCK_SIZE_N:
            c = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=c_ptr.dtype.element_ty) - float("inf")
            tl.store(c_ptrs, c, mask=c_mask)
            return

    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + batch * stride_ab + head * stride_ah + (offs_cm[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + batch * stride_bb + head * stride_bh + (offs_k[:, None] * stride_bk + offs_cn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_SIZE_K):
        a = tl.load(a_ptrs, mask=(offs_cm[:, None] < M) & (offs_k[None, :] + k < K), other=0.)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_cn[None, :] < N), other=0.)
        accumulator += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    if scale > 0:
        c = c * scale.to(c_ptr.dtype.element_ty)
    if MASK:
        c += tl.where(offs_cm[:, None] >= offs_cn[None, :], 0, float("-inf"))
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def _ds_masked_softmax(output_ptr, input_ptr, mask_ptr, stride, mask_stride, n_cols, n_heads, scale,
                       BLOCK_SIZE: tl.constexpr, HAS_MASK: tl.constexpr, IS_CAUSAL: tl.constexpr):
    """softmax(scale * scores + key_mask) of each [batch, head, query] row;
    the mask has one row per batch; a causal row sees keys up to its query
    index."""
    row_idx = tl.program_id(0)
    query = row_idx % n_cols
    batch = row_idx // (n_heads * n_cols)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    live = col_offsets < n_cols
    row = tl.load(input_ptr + row_idx * stride + col_offsets, mask=live, other=-float("inf")).to(tl.float32)
    row = row * scale
    if HAS_MASK:
        row += tl.load(mask_ptr + batch * mask_stride + col_offsets, mask=live, other=0.0).to(tl.float32)
    if IS_CAUSAL:
        row = tl.where(col_offsets > query, -float("inf"), row)
    numerator = tl.exp(row - tl.max(row, axis=0))
    out = numerator / tl.sum(numerator, axis=0)
    tl.store(output_ptr + row_idx * stride + col_offsets, out, mask=live)


@triton.jit
def _ds_layer_norm_residual(Out, A, Residual, InputBias, ln_input, Weight, Bias, stride, N, eps,
                            BLOCK_SIZE: tl.constexpr, HAS_INPUT_BIAS: tl.constexpr):
    """ln_input = A (+ InputBias) + Residual is written out, then normalised."""
    row = tl.program_id(0)
    Out += row * stride
    A += row * stride
    Residual += row * stride
    ln_input += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(A + cols, mask=cols < N, other=0.0).to(tl.float32)
        res = tl.load(Residual + cols, mask=cols < N, other=0.0).to(tl.float32)
        if HAS_INPUT_BIAS:
            a = a + tl.load(InputBias + cols, mask=cols < N, other=0.0).to(tl.float32)
        a = a + res
        tl.store(ln_input + cols, a, mask=cols < N)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        # the row written above is read back: same program, same addresses
        a = tl.load(ln_input + cols, mask=cols < N, other=0.0).to(tl.float32)
        a = tl.where(cols < N, a - mean, 0.0)
        _var += a * a
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        weight = tl.load(Weight + cols, mask=mask)
        bias = tl.load(Bias + cols, mask=mask)
        a = tl.load(ln_input + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Out + cols, (a - mean) * rstd * weight + bias, mask=mask)


@triton.jit
def _ds_dropout_x4(x_ptr, out_ptr, seed_ptr, n_elements, p, BLOCK_SIZE: tl.constexpr):
    """Each Philox call gives four 32-bit words, so one program covers four
    blocks of BLOCK_SIZE elements; an element is kept when the top 24 bits
    of its word reach p * 2**24."""
    pid = tl.program_id(0)
    seed = tl.load(seed_ptr)
    base = pid * BLOCK_SIZE * 4
    counter = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    r0, r1, r2, r3 = tl.randint4x(seed, counter)
    threshold = (p * 16777216.0).to(tl.uint32)
    scale = 1.0 / (1.0 - p)
    offs = base + tl.arange(0, BLOCK_SIZE)
    for i in tl.static_range(4):
        if i == 0:
            r = r0
        elif i == 1:
            r = r1
        elif i == 2:
            r = r2
        else:
            r = r3
        o = offs + i * BLOCK_SIZE
        m = o < n_elements
        x = tl.load(x_ptr + o, mask=m)
        keep = (r >> 8) >= threshold
        tl.store(out_ptr + o, tl.where(keep, x * scale, 0.0), mask=m)


# ---- Inductor-generated style -----------------------------------------------------------------
# Self-contained stand-ins for the runtime functions the generated code calls.


@triton.jit
def _ind_maximum(a, b):
    # NaN wins, as torch.maximum
    mask = (a > b) | (a != a)
    return tl.where(mask, a, b)


@triton.jit
def _ind_max2(a, dim):
    return tl.reduce(a, dim, _ind_maximum)


@triton.jit
def _ind_max_with_index_combine(value1, index1, value2, index2):
    gt = (value1 > value2) | ((value1 != value1) & (value2 == value2))
    eq = (value1 == value2) | ((value1 != value1) & (value2 != value2))
    take1 = gt | (eq & (index1 < index2))
    return tl.where(take1, value1, value2), tl.where(take1, index1, index2)


@triton.jit
def _ind_max_with_index(value, index, dim):
    return tl.reduce((value, index), dim, _ind_max_with_index_combine)


@triton.jit
def _ind_welford_reduce(value, mean, m2, weight, first_iteration):
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight


@triton.jit
def _ind_welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight


@triton.jit
def _ind_welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, _ind_welford_combine)


@triton.jit
def _ind_promote_to_tensor(x):
    return x + tl.zeros((1,), tl.int1)


@triton.jit
def triton_poi_fused_add_mul_sigmoid_0(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # static shapes: 15 rows of 64, bias and scale broadcast along the rows
    xnumel = 960
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 64
    tmp0 = tl.load(in_ptr0 + (x2), xmask).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr2 + (0))
    tmp4 = tl.broadcast_to(tmp3, [XBLOCK])
    tmp2 = tmp0 + tmp1
    tmp5 = tl.sigmoid(tmp2)
    tmp6 = tmp2 * tmp5
    tmp7 = tmp6 * tmp4
    tl.store(out_ptr0 + (x2), tmp7, xmask)


@triton.jit
def triton_poi_fused_embedding_1(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # int64 indices into a [50, 32] table; negative ones count from the end
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:].to(tl.int64)
    xmask = xindex < xnumel
    x1 = xindex // 32
    x0 = xindex % 32
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (x1), xmask, eviction_policy='evict_last')
    tmp1 = tl.full([XBLOCK], 50, tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert(((0 <= tmp4) & (tmp4 < 50)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 50")
    tmp6 = tl.load(in_ptr1 + (x0 + 32 * tmp4), xmask)
    tl.store(out_ptr0 + (x2), tmp6, xmask)


@triton.jit
def triton_poi_fused_clone_permute_2(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr,
                                     XBLOCK: tl.constexpr):
    # [N, C, HW] -> [N, HW, C] with C = 6: y runs over (n, c), x over hw
    yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[None, :]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 6
    y1 = yindex // 6
    tmp0 = tl.load(in_ptr0 + (x2 + xnumel * y3), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 6 * x2 + 6 * xnumel * y1), tmp0, xmask & ymask)


@triton.jit
def triton_per_fused__softmax_add_3(in_ptr0, in_ptr1, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr):
    # rows of 50 fp16 scores plus an fp32 bias row, softmax in fp32
    xnumel = 24
    r0_numel = 50
    R0_BLOCK: tl.constexpr = 64
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, RBLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < rnumel
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 50 * x0), r0_mask & xmask, other=0.0).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp1 + tmp2
    tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])
    tmp6 = tl.where(r0_mask & xmask, tmp4, float("-inf"))
    tmp7 = _ind_max2(tmp6, 1)[:, None]
    tmp8 = tmp3 - tmp7
    tmp9 = tl_math.exp(tmp8)
    tmp10 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp12 = tl.where(r0_mask & xmask, tmp10, 0)
    tmp13 = tl.sum(tmp12, 1)[:, None]
    tmp14 = tmp9 / tmp13
    tmp15 = tmp14.to(tl.float32)
    tl.store(out_ptr2 + (r0_1 + 50 * x0), tmp15, r0_mask & xmask)


@triton.jit
def triton_red_fused_native_layer_norm_4(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1,
                                         xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    tmp2_mean = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_m2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_weight = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + r0_numel * x0), r0_mask & xmask, eviction_policy='evict_last',
                       other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp2_mean_next, tmp2_m2_next, tmp2_weight_next = _ind_welford_reduce(
            tmp1, tmp2_mean, tmp2_m2, tmp2_weight, r0_offset == 0)
        tmp2_mean = tl.where(r0_mask & xmask, tmp2_mean_next, tmp2_mean)
        tmp2_m2 = tl.where(r0_mask & xmask, tmp2_m2_next, tmp2_m2)
        tmp2_weight = tl.where(r0_mask & xmask, tmp2_weight_next, tmp2_weight)
    tmp5, tmp6, tmp7 = _ind_welford(tmp2_mean, tmp2_m2, tmp2_weight, 1)
    tmp2 = tmp5[:, None]
    tmp3 = tmp6[:, None]
    tl.store(out_ptr0 + (x0), tmp2, xmask)
    tmp9 = r0_numel.to(tl.float32)
    tmp10 = tmp3 / tmp9
    tmp11 = 1e-05
    tmp12 = tmp10 + tmp11
    tmp13 = libdevice.rsqrt(tmp12)
    tl.debug_barrier()
    tl.store(in_out_ptr0 + (x0), tmp13, xmask)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp14 = tl.load(in_ptr0 + (r0_1 + r0_numel * x0), r0_mask & xmask, eviction_policy='evict_first',
                        other=0.0)
        tmp18 = tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp20 = tl.load(in_ptr2 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp15 = tmp14 - tmp2
        tmp16 = tmp15 * tmp13
        tmp19 = tmp16 * tmp18
        tmp21 = tmp19 + tmp20
        tl.store(out_ptr1 + (r0_1 + r0_numel * x0), tmp21, r0_mask & xmask)


@triton.jit
def triton_red_fused_argmax_max_5(in_ptr0, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr,
                                  R0_BLOCK: tl.constexpr):
    # row max, its first index, and two int1 flags of them
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
    _tmp2_index = tl.full([XBLOCK, R0_BLOCK], 2147483647, tl.int32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + r0_numel * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        _tmp2_next, _tmp2_index_next = _ind_max_with_index_combine(_tmp2, _tmp2_index, tmp1, r0_index)
        _tmp2 = tl.where(r0_mask & xmask, _tmp2_next, _tmp2)
        _tmp2_index = tl.where(r0_mask & xmask, _tmp2_index_next, _tmp2_index)
    tmp2_val, tmp2_idx = _ind_max_with_index(_tmp2, _tmp2_index, 1)
    tmp2 = tmp2_val[:, None]
    tmp3 = tmp2_idx[:, None]
    tl.store(out_ptr0 + (x0), tmp2, xmask)
    tl.store(out_ptr1 + (x0), tmp3.to(tl.int64), xmask)
    tmp4 = tmp2.to(tl.int1)
    tmp5 = (tmp3 % 2).to(tl.int1)
    tmp6 = tmp4 & tmp5
    tl.store(out_ptr2 + (x0), tmp6.to(tl.int8), xmask)


@triton.jit
def triton_poi_fused_view_bits_6(in_ptr0, out_ptr0, out_ptr1, out_ptr2, out_ptr3, out_ptr4, xnumel,
                                 XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = tmp0.to(tl.int32, bitcast=True)
    tmp2 = (tmp1 >> 23) & 255
    tmp3 = tmp1 & 0x7FFFFFFF
    tmp4 = tmp3.to(tl.float32, bitcast=True)
    tmp5 = libdevice.nearbyint(tmp0 * 4.0) * 0.25
    tmp6 = tl_math.log2(tmp4 + 1.0)
    tmp7 = tl.math.exp2(tmp6) - 1.0
    tmp8 = tmp0.to(tl.float16).to(tl.int16, bitcast=True)
    tmp9 = (tmp1 < 0).to(tl.int8)
    tl.store(out_ptr0 + (x0), tmp2, xmask)
    tl.store(out_ptr1 + (x0), tmp4 + tmp7, xmask)
    tl.store(out_ptr2 + (x0), tmp5, xmask)
    tl.store(out_ptr3 + (x0), tmp8, xmask)
    tl.store(out_ptr4 + (x0), tmp9, xmask)


@triton.jit
def triton_per_fused__native_batch_norm_legit_functional_7(in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1,
                                                           out_ptr2, out_ptr3, xnumel, r0_numel,
                                                           XBLOCK: tl.constexpr):
    # per-channel statistics of a [4, C, 25] input (C = xnumel), int64 indices
    R0_BLOCK: tl.constexpr = 128
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None].to(tl.int64)
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :].to(tl.int64)
    r0_mask = r0_index < r0_numel
    r0_1 = r0_index % 25
    r0_2 = r0_index // 25
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 25 * x0 + 25 * xnumel * r0_2), r0_mask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(r0_mask & xmask, tmp1, 0)
    tmp4 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
    tmp6 = tl.where(r0_mask & xmask, tmp4, 0)
    tmp7 = tl.sum(tmp6, 1)[:, None]
    tmp8 = tl.full([XBLOCK, 1], 100, tl.int32)
    tmp9 = tmp8.to(tl.float32)
    tmp10 = tmp7 / tmp9
    tmp11 = tmp1 - tmp10
    tmp12 = tmp11 * tmp11
    tmp13 = tl.broadcast_to(tmp12, [XBLOCK, R0_BLOCK])
    tmp15 = tl.where(r0_mask & xmask, tmp13, 0)
    tmp16 = tl.sum(tmp15, 1)[:, None]
    tmp17 = tmp16 / tmp9
    tmp18 = 1e-05
    tmp19 = libdevice.rsqrt(tmp17 + tmp18)
    tmp20 = tl.load(in_ptr1 + (x0), xmask)
    tmp21 = tl.load(in_ptr2 + (x0), xmask)
    tmp22 = 0.1
    tmp23 = tmp10 * tmp22
    tmp24 = 0.9
    tmp25 = tmp20 * tmp24
    tmp26 = tmp23 + tmp25
    tmp27 = 1.0101010101010102
    tmp28 = tmp17 * tmp27
    tmp29 = tmp28 * tmp22 + tmp21 * tmp24
    tl.store(out_ptr0 + (x0), tmp10, xmask)
    tl.store(out_ptr1 + (x0), tmp19, xmask)
    tl.store(out_ptr2 + (x0), tmp26, xmask)
    tl.store(out_ptr3 + (x0), tmp29, xmask)


@triton.jit
def triton_poi_fused_native_dropout_8(in_ptr0, in_ptr1, out_ptr0, out_ptr1, load_seed_offset, xnumel,
                                      XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + load_seed_offset)
    tmp1 = x0
    tmp2 = tl.rand(tmp0, (tmp1).to(tl.uint32))
    tmp3 = 0.2
    tmp4 = tmp2 > tmp3
    tmp5 = tmp4.to(tl.float32)
    tmp6 = tl.load(in_ptr1 + (x0), xmask)
    tmp7 = tmp5 * tmp6
    tmp8 = 1.25
    tmp9 = tmp7 * tmp8
    tl.store(out_ptr0 + (x0), tmp4, xmask)
    tl.store(out_ptr1 + (x0), tmp9, xmask)


@triton.jit
def triton_poi_fused_index_where_9(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # floor-style wrap of signed index math done by hand: Triton's // and %
    # truncate toward zero, as C does
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask, other=0)
    tmp1 = tmp0 // 7
    tmp2 = tmp0 % 7
    tmp3 = tl.where((tmp2 != 0) & ((tmp2 < 0) != (7 < 0)), tmp2 + 7, tmp2)
    tmp4 = tl.where((tmp2 != 0) & ((tmp2 < 0) != (7 < 0)), tmp1 - 1, tmp1)
    tmp5 = _ind_promote_to_tensor(tmp3 * 100 + tmp4)
    tmp6 = tl.load(in_ptr1 + (x0), xmask, other=0.0)
    tmp7 = tl.where(tmp6 > 0, tmp5, -tmp5)
    tl.store(out_ptr0 + (x0), tmp7, xmask)


@triton.jit
def _ind_add_combine(a, b):
    return a + b


@triton.jit
def triton_per_fused_cumsum_10(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr):
    # cumulative sum along rows of at most 64; the scan takes and gives a
    # tuple of one tensor, unpacked with a trailing comma
    R0_BLOCK: tl.constexpr = 64
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + r0_numel * x0), r0_mask & xmask, other=0.0)
    tmp1 = tmp0.to(tl.float32)
    tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
    tmp3, = tl.associative_scan((tmp2,), 1, _ind_add_combine)
    tl.store(out_ptr0 + (r0_1 + r0_numel * x0), tmp3, r0_mask & xmask)
