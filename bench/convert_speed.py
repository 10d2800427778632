"""Time to turn a GPTQ checkpoint's layers into lowbit layers on the GPU:
from_gptq on CUDA tensors then Linear.from_converted (packing with
lb_pack_device), against the host path (tensors to NumPy, from_gptq,
lb_pack on the host, packed words to the GPU), for the linear layers of
one Llama-3-8B decoder layer (4-bit, group 128), and that times 32 for the
model.

    python bench/convert_speed.py      # PYTHONPATH=python LOWBIT_LIB=... in a tree

Random words stand in for a checkpoint's (the work does not depend on
them); each path is run once to warm up (the packing kernel's compile),
then timed once per layer with a device sync at its end.
"""
import time

import torch

import lowbit
from lowbit.convert import from_gptq

# (name, K, N): QKV, O, gate+up, down
LAYERS = (("qkv", 4096, 6144), ("o", 4096, 4096), ("gate_up", 4096, 28672),
          ("down", 14336, 4096))
BITS, GROUP = 4, 128


def tensors(k, n, dev="cuda"):
    g = k // GROUP
    i32 = torch.iinfo(torch.int32)
    qw = torch.randint(i32.min, i32.max, (k * BITS // 32, n), dtype=torch.int32, device=dev)
    qz = torch.randint(i32.min, i32.max, (g, n * BITS // 32), dtype=torch.int32, device=dev)
    s = (torch.rand(g, n, device=dev) * 0.01 + 0.001).half()
    return qw, qz, s


def on_gpu(qw, qz, s):
    conv = from_gptq(qw, qz, s, bits=BITS, group_size=GROUP)
    lin = lowbit.Linear.from_converted(conv)
    torch.cuda.synchronize()
    return lin


def on_host(qw, qz, s):
    conv = from_gptq(qw.cpu().numpy(), qz.cpu().numpy(), s.cpu().numpy(),
                     bits=BITS, group_size=GROUP)
    lin = lowbit.Linear.from_converted(conv, device="cuda")
    torch.cuda.synchronize()
    return lin


def timed(fn, *a):
    t = time.perf_counter()
    lin = fn(*a)
    return time.perf_counter() - t, lin


def main():
    if not torch.cuda.is_available():
        print("convert_speed: no CUDA device visible to PyTorch; nothing timed")
        return
    on_gpu(*tensors(256, 256))
    on_host(*tensors(256, 256))
    tot_g = tot_h = 0.0
    print(f"GPTQ {BITS}-bit group {GROUP} -> lowbit.Linear, one Llama-3-8B layer's linears")
    for name, k, n in LAYERS:
        t = tensors(k, n)
        tg, lg = timed(on_gpu, *t)
        th, lh = timed(on_host, *t)
        if not torch.equal(lg.packed, lh.packed):
            raise SystemExit(f"{name}: the GPU and host paths packed different words")
        tot_g += tg
        tot_h += th
        print(f"  {name:8s} {k:6d} x {n:6d}: GPU {tg * 1e3:7.1f} ms   host {th * 1e3:7.1f} ms")
    print(f"  32 layers (model): GPU {tot_g * 32:.2f} s   host {tot_h * 32:.2f} s")


if __name__ == "__main__":
    main()
