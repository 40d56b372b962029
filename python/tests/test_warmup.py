"""warmup(): compiles without launching and reports what the compiled
kernel uses; asm gives the IR and PTX on demand."""
import numpy as np

import kernels as K


def test_warmup_metadata_and_asm():
    x = np.zeros(256, np.float32)
    k = K.add.warmup(x, x, x, 256, BLOCK=256, grid=(1,), num_warps=8)
    assert k.num_warps == 8 and k.metadata.num_warps == 8
    assert k.n_regs >= 0 and k.n_spills >= 0 and k.shared >= 0 and k.metadata.shared == k.shared
    assert k.signature == "*fp32:16,*fp32:16,*fp32:16,i32:16"
    assert ("BLOCK", "256") in k.defines
    assert "kernel @add" in k.asm["ir"]
    ptx = k.asm["ptx"]
    assert ".entry add" in ptx or ".visible .entry" in ptx
    k._init_handles()
    assert not x.any()  # nothing launched
