"""Host cost of one call from Python: lb_op_run through ctypes (no GPU
needed), and, where PyTorch sees a GPU, lowbit.Linear's forward against
torch.nn.functional.linear (cuBLAS) in the same process.

    python bench/python_overhead.py          # PYTHONPATH=python LOWBIT_LIB=... in a tree

Host time is the time to enqueue `calls` launches back to back (no sync
inside; the launch queue holds them), divided by `calls`: what the caller's
thread spends, not what the GPU does.
"""
import time
import timeit

import lowbit
from lowbit import _lib


def ctypes_cost(n=200000):
    run = _lib.lib.lb_op_run
    # a NULL op returns LB_EARG at once: the call's own cost, plus a message
    t = timeit.timeit(lambda: run(None, 1, 16, _lib.Weights(16, 16, None, None), 16, 0),
                      number=n)
    return t / n * 1e6


def torch_costs(n=4096, k=4096, m=1, calls=200, reps=20):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    lin = torch.nn.Linear(k, n, dtype=torch.float16, device="cuda")
    q = lowbit.Linear.from_float(lin, recipe="a16w4_g128")
    x = torch.randn(m, k, dtype=torch.float16, device="cuda")
    f = torch.nn.functional.linear
    out = {}
    lop = torch.ops.lowbit.linear
    for name, fn in (("lowbit.Linear", lambda: q(x)),
                     ("torch.ops.lowbit.linear", lambda: lop(
                         x, q.packed, q.scales, q.zeros, q.bias, q.recipe, n, k)),
                     ("F.linear (cuBLAS)", lambda: f(x, lin.weight, lin.bias))):
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            best = min(best, time.perf_counter() - t0)
            torch.cuda.synchronize()
        out[name] = best / calls * 1e6
    return out


if __name__ == "__main__":
    print(f"lb_op_run through ctypes: {ctypes_cost():.2f} us per call")
    costs = torch_costs()
    if costs is None:
        print("no PyTorch, or no GPU visible to it: the torch costs are not measured")
    else:
        for name, us in costs.items():
            print(f"{name}: {us:.2f} us per call (host, 4096 x 4096, M = 1)")
