"""Weight-only int4 GEMM in the AWQ packing: each int32 of B holds eight
4-bit weights along N, and so do the packed zero points; one fp16 scale
per (group of K, column). A tile is unpacked with PTX's lop3 and the
fp16 magic-number trick (inline asm, two halves per 32-bit register),
the eight lanes interleaved back into columns with tl.join and a
reshape, then dequantised `(w - z) * s` and fed to the dot. The K step
is one quantisation group. USE_ASM=False takes the nibbles out with
shifts instead (the CPU interpreter runs no PTX)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _nibbles_to_f16(packed, high: tl.constexpr, USE_ASM: tl.constexpr):
    # (x & mask) | 0x6400 per half is 1024 + n (low nibbles) or 1024 + 16 n
    # (high nibbles) in fp16; the second step takes 1024 back out
    if not USE_ASM:
        sh: tl.constexpr = 4 if high else 0
        return ((packed >> sh) & 15).to(tl.float16), ((packed >> (sh + 16)) & 15).to(tl.float16)
    if high:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 t; lop3.b32 t, $2, 0x00f000f0, 0x64006400, 0xea;"
            " fma.rn.f16x2 t, t, $3, $4; mov.b32 {$0, $1}, t; }",
            "=h,=h,r,r,r", [packed, 0x2c002c00, 0xd400d400],
            dtype=(tl.float16, tl.float16), is_pure=True, pack=1)
    return tl.inline_asm_elementwise(
        "{ .reg .b32 t; lop3.b32 t, $2, 0x000f000f, 0x64006400, 0xea;"
        " sub.f16x2 t, t, $3; mov.b32 {$0, $1}, t; }",
        "=h,=h,r,r", [packed, 0x64006400], dtype=(tl.float16, tl.float16), is_pure=True,
        pack=1)


@triton.jit
def _unpack8(packed, USE_ASM: tl.constexpr):
    # nibbles come out as (0, 4), (1, 5), (2, 6), (3, 7); the joins put
    # them in the order 0 4 1 5 2 6 3 7 along each row
    # the nibbles of a pair sit 16 bits apart; shifting by 8 brings nibbles 2, 3, 6, 7
    # to where 0, 1, 4, 5 were
    n0, n4 = _nibbles_to_f16(packed, False, USE_ASM)
    n1, n5 = _nibbles_to_f16(packed, True, USE_ASM)
    up = packed >> 8
    n2, n6 = _nibbles_to_f16(up, False, USE_ASM)
    n3, n7 = _nibbles_to_f16(up, True, USE_ASM)
    # each join adds an innermost axis, so the first join is the slowest-varying one:
    # column 4a + 2b + c of a group of eight holds nibble 2a + b + 4c
    lo = tl.join(tl.join(n0, n2), tl.join(n1, n3))
    hi = tl.join(tl.join(n4, n6), tl.join(n5, n7))
    eight = tl.join(lo, hi)
    return tl.reshape(eight, (packed.shape[0], packed.shape[1] * 8))


@triton.jit
def w4a16_lop3_kernel(a_ptr, qw_ptr, scales_ptr, qzeros_ptr, c_ptr, M, N, K, stride_am, stride_qk,
                      stride_sg, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      GROUP: tl.constexpr, USE_ASM: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    PACKED_N: tl.constexpr = BLOCK_N // 8
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_pn = pid_n * PACKED_N + tl.arange(0, PACKED_N)
    offs_k = tl.arange(0, GROUP)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    qw_ptrs = qw_ptr + offs_k[:, None] * stride_qk + offs_pn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for g in range(0, K // GROUP):
        a = tl.load(a_ptrs)
        qw = tl.load(qw_ptrs)
        qz = tl.load(qzeros_ptr + g * stride_qk + offs_pn)
        s = tl.load(scales_ptr + g * stride_sg + offs_n)
        w = _unpack8(qw, USE_ASM)
        z = _unpack8(qz[None, :], USE_ASM)
        b = (w - z) * s[None, :]
        acc += tl.dot(a, b)
        a_ptrs += GROUP
        qw_ptrs += GROUP * stride_qk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_n[None, :] < N))


def w4a16_lop3(a, qweight, scales, qzeros, group):
    M, K = a.shape
    N = scales.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    w4a16_lop3_kernel[grid](a, qweight, scales, qzeros, c, M, N, K, a.stride(0),
                            qweight.stride(0), scales.stride(0), c.stride(0), BLOCK_M=128,
                            BLOCK_N=128, GROUP=group, USE_ASM=True)
    return c
