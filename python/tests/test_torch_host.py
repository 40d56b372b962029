"""CPU PyTorch tensors on the interpreter, as Triton's interpreter takes
them: strided views read and written back into the base's storage, every
element type tk has, 0-d tensors, parameters and subclasses, aliasing,
autotuning's reset_to_zero, do_bench, against float64 references. Skipped
where torch is not installed."""
import pytest

torch = pytest.importorskip("torch")

import tk  # noqa: E402
import torch_kernels as T  # noqa: E402


def scale2d(x, y):
    M, N = x.shape
    T.scale2d[(tk.cdiv(M, 16), tk.cdiv(N, 16))](x, y, M, N, *x.stride(), *y.stride(), BM=16, BN=16)


def test_transposed_input_and_empty_like():
    x = torch.randn(37, 53, dtype=torch.float64).t()
    y = torch.empty_like(x)  # keeps the transpose's strides
    assert y.stride() == x.stride()
    scale2d(x, y)
    assert torch.equal(y, x * 2)


def test_output_views_land_in_the_base():
    """A stepped slice and a transpose of a base, written by the kernel:
    the values land at the view's offsets, the rest of the base stays."""
    base = torch.zeros(40, 120, dtype=torch.float64)
    x = torch.randn(20, 30, dtype=torch.float64)
    scale2d(x, base[::2, 5:95:3])
    want = torch.zeros(40, 120, dtype=torch.float64)
    want[::2, 5:95:3] = x * 2
    assert torch.equal(base, want)
    base = torch.zeros(30, 20, dtype=torch.float64)
    scale2d(x, base.t())
    assert torch.equal(base, (x * 2).t())


def test_expanded_input_with_stride_0():
    row = torch.randn(1, 64, dtype=torch.float64)
    y = torch.empty(33, 64, dtype=torch.float64)
    scale2d(row.expand(33, 64), y)
    assert torch.equal(y, (row * 2).expand(33, 64))


@pytest.mark.parametrize("dtype,tol", [("float16", 1e-3), ("bfloat16", 8e-3), ("float32", 1e-6),
                                       ("float64", 1e-6), ("float8_e4m3fn", 0.07),
                                       ("float8_e5m2", 0.13)])
def test_element_types_against_float64(dtype, tol):
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1000, generator=g).to(dt)
    y = torch.randn(1000, generator=g).to(dt)
    out = torch.empty(1000, dtype=dt)
    a = torch.tensor(1.5).item()
    T.axpy[(tk.cdiv(1000, 128),)](x, y, out, a, out.numel(), BLOCK=128)
    want = 1.5 * x.double() + y.double()
    assert ((out.double() - want).abs() / (want.abs() + 1)).max().item() <= tol


def test_int64_indices_and_bools():
    src = torch.randn(5000, dtype=torch.float64)
    idx = torch.randint(0, 5000, (777,), dtype=torch.int64)
    out = torch.empty(777, dtype=torch.float64)
    T.gather[(tk.cdiv(777, 64),)](src, idx, out, 777, BLOCK=64)
    assert torch.equal(out, src[idx])
    c, x = torch.rand(300) > 0.5, torch.randn(300)
    out, pos = torch.empty(300), torch.zeros(300, dtype=torch.bool)
    T.select_sign[(3,)](c, x, out, pos, 300, BLOCK=128)
    assert torch.equal(out, torch.where(c, x, -x)) and torch.equal(pos, x > 0)


def test_zero_dim_tensors_and_items():
    s, out = torch.tensor(2.5), torch.tensor(0.0)
    T.triple[(1,)](s, out)
    assert out.item() == 7.5
    x = torch.ones(10)
    out = torch.empty(10)
    T.axpy[(1,)](x, x, out, (x > 0).all().item(), torch.tensor(10).item(), BLOCK=16)
    assert torch.all(out == 2)


def test_meta_tensor_is_an_error():
    """A tensor on the 'meta' device has no data: a ValueError naming the
    argument and the device. Before, the launch copied from address 0 and
    the message was libtk's ('src_host is NULL')."""
    x = torch.ones(4)
    with pytest.raises(ValueError, match="'out' is on the 'meta' device"):
        T.axpy[(1,)](x, x, torch.empty(4, device="meta"), 1.0, 4, BLOCK=4)
    with pytest.raises(ValueError, match="'x' is on the 'meta' device"):
        T.axpy[(1,)](torch.empty(0, device="meta"), x, x, 1.0, 0, BLOCK=4)


class Sub(torch.Tensor):
    pass


def test_parameters_grad_and_subclasses():
    p = torch.nn.Parameter(torch.randn(200))
    q = torch.randn(200, requires_grad=True)
    out = torch.empty(200)
    T.axpy[(2,)](p, q, out, 2.0, 200, BLOCK=128)
    assert torch.allclose(out, 2 * p.detach() + q.detach())
    before = p.detach().clone()
    with torch.no_grad():
        T.axpy[(2,)](p, p, p, 2.0, 200, BLOCK=128)  # in place, the same tensor three times
    assert torch.allclose(p.detach(), 3 * before)
    x, out = torch.randn(200).as_subclass(Sub), torch.empty(200).as_subclass(Sub)
    T.axpy[(2,)](x, x, out, 1.0, 200, BLOCK=128)
    assert torch.allclose(out.as_subclass(torch.Tensor), 2 * x.as_subclass(torch.Tensor))


def test_overlapping_views_of_one_base():
    base = torch.arange(300, dtype=torch.float32)
    want = base.clone()
    T.axpy[(1,)](base[0:200], torch.zeros(200), base[100:300], 1.0, 200, BLOCK=256)
    want[100:300] = want[0:200].clone()
    assert torch.equal(base, want)


def test_reset_to_zero_buffers_are_tensors():
    for n in (500, 499):  # a new key each: zeroed before the first launch
        x = torch.randn(n)
        base = torch.full((10,), 100.0)
        acc = base[3:4] if n % 2 else base[:1]
        T.sum_into[lambda m: (tk.cdiv(n, m["BLOCK"]),)](x, acc, n)
        assert abs(acc.item() - x.double().sum().item()) < 1e-3
        assert (base != 100).sum().item() == 1


def test_do_bench_with_tensors():
    x = torch.randn(1000, requires_grad=True)
    out = torch.empty(1000)
    x.grad = torch.ones(1000)
    ms = tk.testing.do_bench(lambda: T.axpy[(8,)](x, x, out, 1.0, 1000, BLOCK=128),
                             warmup=1, rep=5, grad_to_none=[x])
    assert ms > 0 and x.grad is None
    assert torch.allclose(out, 2 * x.detach())


@pytest.mark.parametrize("dt, bump", [(torch.float16, 1), (torch.bfloat16, 2), (torch.float32, 0)])
def test_torch_dtype_constexpr(dt, bump):
    """A torch dtype given for a constexpr is the same tl dtype, as a
    kernel's `DT == torch.float16` reads it in Triton."""
    x = torch.arange(16, dtype=torch.int8)
    y = torch.full((16,), -1.0, dtype=dt)
    T.cast_by_dtype[(1,)](x, y, DT=dt)
    assert torch.equal(y, torch.arange(16, dtype=dt) + bump)
