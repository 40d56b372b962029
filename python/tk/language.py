"""tk's facade for triton.language on the host: constexpr (the annotation
that marks a compile-time parameter), the dtypes (passed as constexprs, each
carrying the text the source would use), and the builtins' names, which run
only inside @jit code that tk compiles. A name the facade lacks raises an
AttributeError naming tk and the name."""


class constexpr:
    """Marks a parameter as compile-time; on the host, constexpr(v) holds v
    in .value and passes to a launch as v."""

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    @property
    def _tk_text(self):
        v = self.value
        return v._tk_text if hasattr(v, "_tk_text") else repr(v)

    def __index__(self):
        return self.value.__index__()

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, constexpr) else other)

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"constexpr[{self.value!r}]"


class dtype:
    def __init__(self, name, tl_name, bits):
        self.name, self._tk_text, self.primitive_bitwidth = name, "tl." + tl_name, bits

    def __repr__(self):
        return self._tk_text

    def __str__(self):
        return self.name


float16, bfloat16, float32, float64 = (dtype("fp16", "float16", 16), dtype("bf16", "bfloat16", 16),
                                      dtype("fp32", "float32", 32), dtype("fp64", "float64", 64))
float8e4nv, float8e5 = dtype("fp8e4nv", "float8e4nv", 8), dtype("fp8e5", "float8e5", 8)
int1, int8, int16, int32, int64 = (dtype("i1", "int1", 1), dtype("i8", "int8", 8),
                                   dtype("i16", "int16", 16), dtype("i32", "int32", 32),
                                   dtype("i64", "int64", 64))
uint8, uint16, uint32, uint64 = (dtype("u8", "uint8", 8), dtype("u16", "uint16", 16),
                                 dtype("u32", "uint32", 32), dtype("u64", "uint64", 64))
float8e4b15 = dtype("fp8e4b15", "float8e4b15", 8)
pointer_type = dtype

_DEVICE_ONLY = """program_id num_programs arange zeros zeros_like full load store dot sum max min
argmax argmin reduce associative_scan cumsum cumprod where exp exp2 log log2 sqrt rsqrt abs
sigmoid softmax maximum minimum fma cdiv clamp broadcast_to reshape view trans permute expand_dims
atomic_add atomic_max atomic_min atomic_cas atomic_xchg atomic_and atomic_or atomic_xor
multiple_of max_contiguous debug_barrier static_range range static_assert static_print
device_print device_assert make_block_ptr advance rand randn randint philox cat join split
interleave sort flip floor ceil sin cos erf tensor block_type split histogram xor_sum
inline_asm_elementwise div_rn fdiv umulhi swizzle2d zeros_like ravel""".split()


def _device_only(name):
    def f(*args, **kw):
        raise RuntimeError(f"tk: tl.{name} runs only inside a @jit kernel")
    f.__name__ = name
    return f


for _n in _DEVICE_ONLY:
    globals()[_n] = _device_only(_n)
del _n


class _Namespace:
    """tl.math, tl.extra.cuda.libdevice and the like: device-only names."""

    def __init__(self, path):
        self._path = path

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Namespace(f"{self._path}.{name}") if name in ("cuda", "libdevice") \
            else _device_only(f"{self._path}.{name}")


math = _Namespace("math")
extra = _Namespace("extra")
libdevice = _Namespace("libdevice")


def __getattr__(name):
    raise AttributeError(f"tk's triton.language facade has no '{name}'")
