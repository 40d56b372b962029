"""two_devices.py: every test/corpus case through tk's Python package on
cuda:0 and cuda:1 at once, from two threads, each compared with the same
case run alone on cuda:0 (tensors on cuda:1 must launch on device 1, and
the two devices' contexts, modules and caches must not mix). Exit 77 (a
skip) with fewer than two GPUs.

    PYTHONPATH=PACK python3 -m tk python/tests/gpu/two_devices.py
"""
import sys
import threading

import corpus_worker as W  # noqa: E402  (puts test/corpus on sys.path)
import corpus_cases
from run_gpu import make_inputs, check


def main():
    import torch
    if torch.cuda.device_count() < 2:
        print("skipped: fewer than two GPUs")
        return 77
    cases = [c for c in corpus_cases.cases()]
    inputs = {c.name: make_inputs(c, 1) for c in cases}
    alone = {c.name: W.run_case(c, inputs[c.name], 0)[0] for c in cases}
    results, errors = {0: {}, 1: {}}, []

    def worker(dev):
        try:
            for rep in range(2):
                for c in cases:
                    results[dev][c.name] = W.run_case(c, inputs[c.name], dev)[0]
        except Exception as e:  # reported below
            errors.append(f"cuda:{dev}: {e!r}")
    threads = [threading.Thread(target=worker, args=(d,)) for d in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fails = len(errors)
    for e in errors:
        print("FAIL", e)
    for dev in (0, 1):
        for c in cases:
            if c.name not in results[dev]:
                continue
            ok, worst, details = check(c, results[dev][c.name], alone[c.name], False)
            fails += not ok
            print(f"{'PASS' if ok else 'FAIL'} cuda:{dev} {c.file} {c.kernel} [{c.name}]")
            for d in details:
                print("    " + d)
    print(f"{fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
