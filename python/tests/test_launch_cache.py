"""Repeated launches that change one thing at a time between calls (an
element type, a scalar's specialisation, a constexpr by keyword, by default
or by heuristic, the grid's meta-parameters) each run the kernel their own
arguments ask for: a launch path that kept what the previous call bound or
compiled would give wrong results here. (A scalar's specialisation bits
change no result on the interpreter, so that case checks results only;
test/runtime/rt_lasthit.c checks that each launch runs its own variant.)"""
import importlib
import os

import numpy as np
import pytest

import tk
import kernels as K


def test_dtypes_alternate():
    n = 40
    rng = np.random.default_rng(1)
    arrays = {dt: [(rng.standard_normal(n) * 50).astype(dt) for _ in range(2)]
              for dt in (np.float32, np.int32, np.float16, np.int64)}
    for _ in range(3):
        for dt, (x, y) in arrays.items():
            out = np.zeros(n, dt)
            K.add[(tk.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
            np.testing.assert_array_equal(out, x + y, err_msg=str(dt))


def test_scalar_specialisations_alternate():
    x = np.arange(40, dtype=np.float32)
    y = np.ones(40, np.float32)
    for _ in range(3):
        for n in (1, 16, 17, 32, 1):  # == 1, divisible by 16, neither
            out = np.full(40, -1.0, np.float32)
            K.add[(tk.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
            np.testing.assert_array_equal(out[:n], x[:n] + 1)
            assert (out[n:] == -1).all(), n


def test_constexpr_by_keyword_and_default_alternate():
    n = 100
    x = np.arange(n, dtype=np.float32) - 50
    for _ in range(3):
        for kw, want in (({}, 2 * x), ({"SQUARE": True}, 2 * x * x), ({"BLOCK": 32}, 2 * x),
                         ({"BLOCK": 32, "SQUARE": True}, 2 * x * x)):
            out = np.zeros(n, np.float32)
            block = kw.get("BLOCK", 64)
            K.axpb[(tk.cdiv(n, block),)](x, out, n, 2.0, None, **kw)
            np.testing.assert_array_equal(out, want, err_msg=str(kw))


def test_heuristic_constexpr_alternates():
    for _ in range(3):
        for n in (5, 64, 33, 5):
            x = np.arange(n, dtype=np.float32)
            out = np.zeros(1, np.float32)
            K.total[(1,)](x, out, n)
            assert out[0] == x.sum(), n


def test_grid_callable_sees_each_launch_values():
    n = 200
    x, y = np.ones(n, np.float32), np.arange(n, dtype=np.float32)
    seen = []

    def grid(meta):
        seen.append((meta["n"], meta["BLOCK"]))
        return (tk.cdiv(meta["n"], meta["BLOCK"]),)
    for block, m in ((32, 200), (64, 100), (32, 150)):
        out = np.zeros(n, np.float32)
        K.add[grid](x, y, out, m, BLOCK=block)
        np.testing.assert_array_equal(out[:m], x[:m] + y[:m])
        assert (out[m:] == 0).all()
    assert seen == [(200, 32), (100, 64), (150, 32)]


def test_compiled_kernel_is_each_launch_own():
    """The compiled kernel a launch gives is the one of its own element
    type, scalar hints and constexprs, also right after launches of another
    (a launch first compares its specialisation with the last one's)."""
    n = 40
    arrays = {dt: [np.arange(n, dtype=dt) for _ in range(3)] for dt in (np.float32, np.int32)}
    cases = [(np.float32, 32, 16, "*fp32:16,*fp32:16,*fp32:16,i32:16"),
             (np.float32, 32, 16, "*fp32:16,*fp32:16,*fp32:16,i32:16"),
             (np.int32, 32, 16, "*i32:16,*i32:16,*i32:16,i32:16"),
             (np.float32, 17, 16, "*fp32:16,*fp32:16,*fp32:16,i32"),
             (np.float32, 1, 16, "*fp32:16,*fp32:16,*fp32:16,i32:1"),
             (np.float32, 32, 32, "*fp32:16,*fp32:16,*fp32:16,i32:16")]
    first = {}
    for _ in range(3):
        for dt, m, block, sig in cases:
            x, y, out = arrays[dt]
            out[:] = 0
            ck = K.add[(tk.cdiv(m, block),)](x, y, out, m, BLOCK=block)
            assert ck.signature == sig, (dt, m, block)
            assert ("BLOCK", str(block)) in ck.defines
            assert first.setdefault((dt, m, block), ck) is ck  # one object per specialisation
            np.testing.assert_array_equal(out[:m], 2 * x[:m])
            assert (out[m:] == 0).all()
    assert len({id(ck) for ck in first.values()}) == len(first)


def test_misaligned_view_after_aligned_launches():
    """Two views of one array are staged as one buffer, so y = x[1:] lies 4
    bytes past x there: its pointer is not 16-byte aligned and the launch
    specialises without :16, between launches where it is (x[4:])."""
    n = 32
    x = np.arange(n + 8, dtype=np.float32)
    for _ in range(3):
        for skew, sig in ((4, "*fp32:16,*fp32:16"), (4, "*fp32:16,*fp32:16"), (1, "*fp32:16,*fp32"),
                          (4, "*fp32:16,*fp32:16")):
            out = np.zeros(n, np.float32)
            ck = K.add[(2,)](x, x[skew:], out, n, BLOCK=16)
            assert ck.signature.startswith(sig + ","), (skew, ck.signature)
            np.testing.assert_array_equal(out, x[:n] + x[skew:skew + n])


def test_descriptor_probe_is_per_object():
    """Whether an argument is a host-built tensor descriptor is asked of
    each object at each launch: a torch-style tensor, then the same class
    with a block_shape of its own, then the tensor again."""
    from test_launch import TorchLike
    x, y = np.arange(16, dtype=np.float32), np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    K.add[(1,)](TorchLike(x), TorchLike(y), TorchLike(out), 16, BLOCK=16)
    odd = TorchLike(x)
    odd.block_shape = [16]
    with pytest.raises(ValueError, match="descriptor argument 'x_ptr'"):
        K.add[(1,)](odd, TorchLike(y), TorchLike(out), 16, BLOCK=16)
    out[:] = 0
    K.add[(1,)](TorchLike(x), TorchLike(y), TorchLike(out), 16, BLOCK=16)
    np.testing.assert_array_equal(out, x + y)


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_specialisations_of_a_large_module_keep_little(tmp_path, monkeypatch):
    """Each specialisation binds the module's globals while it compiles and
    drops the bindings after: a kept interpreter variant held them, about
    0.9 MB a specialisation of a kernel in a file of 2000 functions."""
    lines = ["import tk", "import tk.language as tl", ""]
    for i in range(2000):
        lines += ["@tk.jit", f"def helper{i}(x):", "    return x + 1", ""]
    lines += ["@tk.jit", "def add_c(x_ptr, o_ptr, C: tl.constexpr):",
              "    o = tl.arange(0, 16)", "    tl.store(o_ptr + o, tl.load(x_ptr + o) + C)", ""]
    (tmp_path / "many_helpers.py").write_text("\n".join(lines))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("many_helpers")
    x = np.arange(16, dtype=np.int32)
    out = np.zeros(16, np.int32)
    mod.add_c[(1,)](x, out, C=0)
    before = _rss_mb()
    for c in range(1, 201):
        mod.add_c[(1,)](x, out, C=c)
    np.testing.assert_array_equal(out, x + 200)
    assert _rss_mb() - before < 60, "memory grew by more than 60 MB over 200 specialisations"
