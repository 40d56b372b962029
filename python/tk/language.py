"""tk's facade for triton.language on the host: constexpr (the annotation
that marks a compile-time parameter), the dtypes (passed as constexprs, each
carrying the text the source would use), and the builtins' names, which run
only inside @jit code that tk compiles. A name the facade lacks raises an
AttributeError naming tk and the name."""
import operator as _operator
import sys as _sys


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


def _constexpr_op(name, op, reflected):
    """constexpr's arithmetic and comparisons on the host, as Triton's: on
    the values, the result a constexpr again (`BLOCK * 2` in a grid)."""
    def val(x):
        return x.value if isinstance(x, constexpr) else x
    setattr(constexpr, f"__{name}__", lambda self, *other: constexpr(op(self.value,
                                                                        *map(val, other))))
    if reflected:
        setattr(constexpr, f"__r{name}__", lambda self, other: constexpr(op(val(other), self.value)))


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lshift", "rshift"):
    _constexpr_op(_name, getattr(_operator, _name if _name not in ("and", "or") else _name + "_"),
                  True)
for _name in ("neg", "pos", "invert", "abs", "lt", "le", "gt", "ge", "ne"):
    _constexpr_op(_name, getattr(_operator, _name), False)


class dtype:
    """A scalar type: dtype("fp16") is tl.float16, as in Triton."""
    _named = {}
    _MANTISSA = {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52, "fp8e4nv": 3, "fp8e5": 2,
                 "fp8e4b15": 3, "fp8e4b8": 3, "fp8e5b16": 2}

    def __init__(self, name, tl_name=None, bits=None):
        if tl_name is None:  # by Triton's name, as dtype("fp16") is spelt
            known = dtype._named.get(name)
            if known is None:
                raise TypeError(f"tk: no dtype named {name!r}")
            tl_name, bits = known._tk_text[3:], known.primitive_bitwidth
        self.name, self._tk_text, self.primitive_bitwidth = name, "tl." + tl_name, bits
        dtype._named.setdefault(name, self)

    def __eq__(self, other):
        return isinstance(other, dtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    @property
    def scalar(self):
        return self

    @property
    def int_bitwidth(self):
        return self.primitive_bitwidth

    @property
    def fp_mantissa_width(self):
        return dtype._MANTISSA[self.name]

    def is_int_signed(self):
        return self.name[0] == "i"

    def is_int_unsigned(self):
        return self.name[0] == "u"

    def is_bool(self):
        return self.name == "i1"

    def is_ptr(self):
        return self.name.startswith("*")

    def is_block(self):
        return False

    def get_int_max_value(self):
        bits = self.primitive_bitwidth
        return 2**bits - 1 if self.is_int_unsigned() else 2**(bits - 1) - 1

    def get_int_min_value(self):
        return 0 if self.is_int_unsigned() else -2**(self.primitive_bitwidth - 1)

    def __repr__(self):
        return self._tk_text

    def __str__(self):
        return self.name

    # Triton's predicates, for host code that picks kernels or buffers by dtype
    def is_floating(self):
        return self.name.startswith(("fp", "bf"))

    def is_fp8(self):
        return self.name.startswith("fp8")

    def is_int(self):
        return self.name[0] in "iu"


# is_fp16(), is_fp8e4b15(), is_uint8(), ...: one exact predicate per dtype
for _name, _triton in (("fp16", "fp16"), ("bf16", "bf16"), ("fp32", "fp32"), ("fp64", "fp64"),
                       ("fp8e4nv", "fp8e4nv"), ("fp8e5", "fp8e5"), ("fp8e4b15", "fp8e4b15"),
                       ("i1", "int1"), ("i8", "int8"), ("i16", "int16"), ("i32", "int32"),
                       ("i64", "int64"), ("u8", "uint8"), ("u16", "uint16"), ("u32", "uint32"),
                       ("u64", "uint64")):
    setattr(dtype, "is_" + _triton, lambda self, _n=_name: self.name == _n)
del _name, _triton


float16, bfloat16, float32, float64 = (dtype("fp16", "float16", 16), dtype("bf16", "bfloat16", 16),
                                      dtype("fp32", "float32", 32), dtype("fp64", "float64", 64))
float8e4nv, float8e5 = dtype("fp8e4nv", "float8e4nv", 8), dtype("fp8e5", "float8e5", 8)
int1, int8, int16, int32, int64 = (dtype("i1", "int1", 1), dtype("i8", "int8", 8),
                                   dtype("i16", "int16", 16), dtype("i32", "int32", 32),
                                   dtype("i64", "int64", 64))
uint8, uint16, uint32, uint64 = (dtype("u8", "uint8", 8), dtype("u16", "uint16", 16),
                                 dtype("u32", "uint32", 32), dtype("u64", "uint64", 64))
float8e4b15 = dtype("fp8e4b15", "float8e4b15", 8)
float8e4b8, float8e5b16 = dtype("fp8e4b8", "float8e4b8", 8), dtype("fp8e5b16", "float8e5b16", 8)
void = dtype("void", "void", 0)
pi32_t = int32


class pointer_type(dtype):
    """tl.pointer_type(element, address_space=1): the type of a pointer to
    element, as annotations and host-built signatures spell it."""

    def __init__(self, element_ty, address_space=1, const=False):
        super().__init__(f"*{element_ty}", f"pointer_type({element_ty!r})", 64)
        self.element_ty, self.address_space, self.const = element_ty, address_space, const


class const:
    """The annotation of a read-only pointer parameter (`x_ptr: tl.const`)."""


class tensor:
    """The class of block values; on the host it serves only annotations."""


class _Annotation:
    """A type of Triton's language that host code only names (annotations,
    isinstance in helpers chosen by host code); it has no host behaviour."""


block_type = tuple_type = constexpr_type = tensor_descriptor = tensor_descriptor_type = _Annotation
TRITON_MAX_TENSOR_NUMEL = 1048576
CONSTEXPR_0 = constexpr(0)  # tl.core's zero, a default libraries give constexpr parameters


class PropagateNan:
    """tl.minimum/tl.maximum's propagate_nan= values."""
    NONE, ALL = 0, 0xFFFF


# Triton 3.6's language functions: names the host may pass around or
# import, which run only inside @jit code that tk compiles.
_DEVICE_ONLY = """abs add advance arange argmax argmin associative_scan assume atomic_add
atomic_and atomic_cas atomic_max atomic_min atomic_or atomic_xchg atomic_xor bitonic_merge
broadcast broadcast_to cast cat cdiv ceil clamp condition cos cumprod cumsum debug_barrier
device_assert device_print div_rn dot dot_scaled erf exp exp2 expand_dims fdiv flip floor fma
full gather histogram inline_asm_elementwise interleave join load load_tensor_descriptor log
log2 make_block_ptr make_tensor_descriptor map_elementwise max max_constancy max_contiguous
maximum min minimum mul multiple_of num_programs pair_uniform_to_normal permute philox
philox_impl program_id rand rand4x randint randint4x randn randn4x range ravel reduce reduce_or
reshape rsqrt sigmoid sin slice softmax sort split sqrt sqrt_rn static_assert static_print
static_range store store_tensor_descriptor str_to_ty sub sum swizzle2d topk trans tuple
uint_to_uniform_float umulhi view where xor_sum zeros zeros_like""".split()


def _device_only(name):
    def f(*args, **kw):
        raise RuntimeError(f"tk: tl.{name} runs only inside a @jit kernel")
    f.__name__ = name
    f._tk_path = name  # where triton.language has it, for tk/live.py
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
random = _Namespace("random")
# triton.language.core and .standard are the modules Triton's language is
# written in; kernel libraries import names from them (`core.reshape`,
# `from triton.language.standard import _log2`): here they are this module.
core = standard = _sys.modules[__name__]


def _log2(i):
    """triton.language.standard._log2: floor(log2(i)) of a constexpr."""
    n, r = int(i.value if isinstance(i, constexpr) else i), 0
    while n > 1:
        n >>= 1
        r += 1
    return constexpr(r)


def get_int_dtype(bitwidth, signed):
    """triton.language.core.get_int_dtype: the integer dtype of that width."""
    bits = int(bitwidth.value if isinstance(bitwidth, constexpr) else bitwidth)
    name = "int1" if bits == 1 else f"{'' if signed else 'u'}int{bits}"
    if name not in globals():
        raise ValueError(f"tk: get_int_dtype: unsupported bitwidth {bits}")
    return globals()[name]


def _is_power_of_two(i):
    """triton.language.standard._is_power_of_two of a constexpr."""
    n = int(i.value if isinstance(i, constexpr) else i)
    return constexpr(n != 0 and (n & (n - 1)) == 0)
target_info = _Namespace("target_info")


def __getattr__(name):
    raise AttributeError(f"tk's triton.language facade has no '{name}'")
