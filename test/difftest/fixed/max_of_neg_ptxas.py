# difftest: {"version":1,"seed":5548,"kernel":"k5548","grid":[1],"num_warps":4,"constexprs":{"BLOCK":1024},"signature":"i32,*fp32,*i1,*i32,*u32,*u32,*u8,*i32","args":[{"name":"n","kind":"scalar","dtype":"i32","value":980},{"name":"in2_ptr","kind":"buffer","dtype":"fp32","size":980,"init":{"kind":"uniform","lo":-4.0,"hi":4.0,"seed":825121057},"role":"in"},{"name":"in4_ptr","kind":"buffer","dtype":"i1","size":980,"init":{"kind":"randint","lo":0,"hi":1,"seed":904169547},"role":"in"},{"name":"at5_ptr","kind":"buffer","dtype":"i32","size":6,"init":{"kind":"randint","lo":-1000,"hi":1000,"seed":757433011},"role":"atomic"},{"name":"at7_ptr","kind":"buffer","dtype":"u32","size":8,"init":{"kind":"randint","lo":0,"hi":1000,"seed":41796686},"role":"atomic"},{"name":"out10_ptr","kind":"buffer","dtype":"u32","size":980,"init":{"kind":"fill","value":13},"role":"out","tol":{"class":"exact","rtol":0.0,"atol":0.0}},{"name":"out11_ptr","kind":"buffer","dtype":"u8","size":980,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"exact","rtol":0.0,"atol":0.0}},{"name":"out12_ptr","kind":"buffer","dtype":"i32","size":1,"init":{"kind":"fill","value":13},"role":"out","tol":{"class":"exact","rtol":0.0,"atol":0.0}}],"features":["atomic:add","broadcast_to","call_pick","cast","cast:f2i","compare","dims1","div","dtype:fp32","dtype:i1","if-else","join","load:hints","load:other","reduce:max:axis0","reduce:xor_sum:axis0","store:cond-mask","where"],"attempt":0}
import triton
import triton.language as tl


# Seed 5548. On an H100 the last store held 767 instead of 0: the assembler
# fused the chained max.s32 of the reduction into three-input maxima and lost
# the negation of each middle operand (thread 127 contributed offs | 0x280 =
# 767 where -(offs | 0x280) was meant). The interpreter and Triton give 0; so does tk, which
# writes integer negations as not + add (lib/target/ptx_rewrite.c).
@triton.jit
def _pick(a, b):
    return tl.where(a > b, a, b - a)


@triton.jit
def k5548(n, in2_ptr, in4_ptr, at5_ptr, at7_ptr, out10_ptr, out11_ptr, out12_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x1 = tl.load(in2_ptr + offs, mask=mask, other=1.0, eviction_policy='evict_last')
    x3 = tl.load(in4_ptr + offs, mask=mask, other=1)
    v6 = (-offs) - _pick(tl.broadcast_to(pid, (BLOCK,)), tl.broadcast_to(n, (BLOCK,)))
    if pid % 2 == 1:
        v8 = tl.broadcast_to(tl.xor_sum(tl.clamp(tl.where(v6 != x1, x1, v6), -1000000000.0, 1000000000.0).to(tl.int32), axis=0, keep_dims=True), (BLOCK,))
    else:
        v8 = tl.clamp(v6 * x1, -1000000000.0, 1000000000.0).to(tl.int32)
    v9 = ((-78) + tl.max(v6, axis=0)) / 6
    tl.store(out10_ptr + offs, v6, mask=mask & (v9 < (2.0)))
    tl.store(out11_ptr + offs, v8, mask=mask & (((-1) + v6) != v6))
    tl.store(out12_ptr + pid, tl.max(-offs, axis=0))
