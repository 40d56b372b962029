"""corpus_cases_compare.py: launches of compare_literals.py, whose
references compare as Triton does: the number at its literal type (fp32 for
a float, int32 for an int), the tile converted to the common type."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar

F = "compare_literals.py"
N = 300


def _near_tenth(rng, n):
    """fp16 values around 0.1 and 0.3 (0.1 in fp16 is 0.0999755859375,
    below 0.1 in fp32), and some random ones."""
    x = rng.standard_normal(n) * 0.5
    x[0::4] = 0.1
    x[1::4] = 0.3
    return x


def _tenths64(rng, n):
    x = rng.standard_normal(n) * 0.2
    x[0::3] = 0.1
    x[1::3] = float(np.float32(0.1))
    return x


def threshold_fp16(v, c, s):
    h = v["h_ptr"].astype(np.float16).astype(np.float32)
    return {"lt_ptr": (h < np.float32(0.1)).astype(np.int64),
            "eq_ptr": (h == np.float32(0.1)).astype(np.int64),
            "ge_ptr": (np.float32(0.3) <= h).astype(np.int64)}


def int_codes(v, c, s):
    a = v["a_ptr"].astype(np.int64)
    u = v["u_ptr"].astype(np.int64)
    bits = (a < 200).astype(np.int64) | ((u > -1).astype(np.int64) << 1)
    return {"out_ptr": bits | (1 << 3)}  # w > 0xFFFFFFFF never holds


def threshold_fp64(v, c, s):
    return {"lt_ptr": (v["d_ptr"] < float(np.float32(0.1))).astype(np.int64)}


def cases():
    return [
        Case("compare fp16 with 0.1 in fp32", F, "threshold_fp16_kernel", (3,),
             [Buf("h_ptr", "fp16", N, _near_tenth), Out("lt_ptr", "i32", N),
              Out("eq_ptr", "i32", N), Out("ge_ptr", "i32", N), Scalar("n", N)],
             {"BLOCK": 128}, ref=threshold_fp16),
        Case("compare int8 and unsigned codes with numbers out of their range", F,
             "int_codes_kernel", (3,),
             [Buf("a_ptr", "i8", N, ("randint", -128, 128)),
              Buf("u_ptr", "u8", N, ("randint", 0, 256)),
              Buf("w_ptr", "i32", N, ("randint", -2**31, 2**31)), Out("out_ptr", "i32", N),
              Scalar("n", N)], {"BLOCK": 128}, ref=int_codes),
        Case("compare fp64 with 0.1 typed fp32", F, "threshold_fp64_kernel", (3,),
             [Buf("d_ptr", "fp64", N, _tenths64), Out("lt_ptr", "i32", N), Scalar("n", N)],
             {"BLOCK": 128}, ref=threshold_fp64),
    ]
