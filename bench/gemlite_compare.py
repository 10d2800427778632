"""lowbit against GemLite's 8-bit kernel at 8192 x 8192, M = 1, 4, 8, under both
L2 flushes (a read of 256 MB; a memset of it, which leaves L2 full of dirty
lines, as Triton's do_bench and a model's previous layer do), with cuBLAS
fp16 and lowbit's a16w4_g128 in the same process.

    GEMLITE_PATH=/path/to/gemlite/checkout python bench/gemlite_compare.py

GemLite is not a dependency of lowbit: install it, or point GEMLITE_PATH at a
checkout (the directory that holds the gemlite package).  Each kernel is
captured in a CUDA graph and replayed, so that host launch costs (GemLite's
Python dispatch, the Triton launcher) are not timed; CUDA events around each
replay after the flush, median of 100.  Both 8-bit layers hold the same
codes, per-channel f16 scales and zero 128; each output is checked against
float32 x W^T of the dequantized weights.
"""
import os
import statistics
import sys

import torch

import lowbit
from lowbit.convert import Converted

N = K = 8192
W8 = '''name "w8_zero"
activations "f16"
weights { bits = 8, signed = false, packing = "gemlite32" }
scales { group = "channel", dtype = "f16" }
zeros { kind = "float", dtype = "f16" }
dequant "(q - z) * s"
accumulator "f32"
output "f16"
'''


def main():
    if os.environ.get("GEMLITE_PATH"):
        sys.path.insert(0, os.environ["GEMLITE_PATH"])
    try:
        import gemlite
        from gemlite import DType, GemLiteLinearTriton
    except ImportError as e:
        print(f"gemlite_compare: GemLite is not importable ({e}); set GEMLITE_PATH")
        return
    if not torch.cuda.is_available():
        print("gemlite_compare: no CUDA device visible to PyTorch")
        return
    cfg = os.path.join(os.path.dirname(gemlite.__file__), "configs", "h100.json")
    if os.path.exists(cfg):
        gemlite.load_config(cfg)
    torch.manual_seed(0)
    wq = torch.randint(0, 256, (N, K), dtype=torch.uint8, device="cuda")
    s = (torch.rand(N, 1, device="cuda") * 0.01 + 0.001).half()
    z = torch.full((N, 1), 128.0, device="cuda").half()
    g8 = GemLiteLinearTriton(W_nbits=8, group_size=K, in_features=K, out_features=N,
                             input_dtype=DType.FP16, output_dtype=DType.FP16)
    g8.pack(wq, s, z, None)
    lb = lowbit.Linear.from_converted(Converted(W8, 8, 0, wq, s, z, None, N, K))
    lb4 = lowbit.Linear.from_float(torch.nn.Linear(K, N, bias=False).half().cuda(),
                                   "a16w4_g128")
    wf = ((wq.float() - 128) * s.float()).half()
    cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")

    def graph(fn):
        fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        return g.replay

    def bench(fn, flush, iters=100):
        for _ in range(10):
            fn()
        ts = []
        for _ in range(iters):
            cache.zero_() if flush == "write" else cache.sum()
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3)
        return statistics.median(ts)

    print(f"{N} x {K}, us (median of 100, CUDA graph replay); GemLite {gemlite.__version__}")
    for m in (1, 4, 8):
        x = torch.randn(m, K, device="cuda", dtype=torch.float16)
        ref = x.float() @ wf.float().T
        for name, f in (("gemlite w8", g8), ("lowbit w8", lb)):
            err = float((f(x).float() - ref).abs().max() / ref.abs().max())
            if err > 4e-3:
                raise SystemExit(f"{name}: relative error {err:.1e}")
        fns = [graph(f) for f in (lambda: g8(x), lambda: lb(x),
                                  lambda: torch.nn.functional.linear(x, wf), lambda: lb4(x))]
        for flush in ("write", "read"):
            tg, tl, tc, t4 = (bench(f, flush) for f in fns)
            print(f"M={m} flush={flush:5s}: gemlite w8 {tg:6.1f}  lowbit w8 {tl:6.1f}  "
                  f"cuBLAS fp16 {tc:6.1f}  lowbit a16w4_g128 {t4:6.1f}")


if __name__ == "__main__":
    main()
