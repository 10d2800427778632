"""Whole-model benchmark: the linear layers of a decoder, one decode step.

    python3 bench/model.py [--model llama3-8b] [--recipe a16w4_g128]
                           [--m 1,2,4,8,16,32] [--iters 20] [--out DIR]

Runs every linear layer of the model (random weights; for lowbit random
codes, scales and zeros in the recipe's own layout, which is what a
quantized checkpoint is to the kernel) back to back as one decode step of
M tokens, captured in a CUDA graph, and times graph replays with CUDA
events (median).  lowbit runs twice: as is, and with each op allowed to
start while the one before it ends (lb_op_overlap, sm_90).  Side by side,
in the same process: cuBLAS fp16
(torch.matmul on f16 weights) and, for 4-bit group-128 recipes, tinygemm
(torch._weight_int4pack_mm, bf16).  Weights of all layers together are far
larger than L2, so each layer reads its weights from memory, as in a model.
Reports time per step, tokens per second and weight bytes moved per second
against a device-to-device copy measured in the same run, then whether each
M meets the step's targets (bench/model_targets.py); writes model.json and
model.svg (tokens/s against M) into --out.

Needs PyTorch with CUDA and the lowbit package (or PYTHONPATH=python and
LOWBIT_LIB=build/liblowbit.so in the source tree).
"""
import argparse
import json
import math
import os
import statistics
import sys

import torch

import lowbit
from lowbit import runtime
from lowbit.quant import DTYPES

import model_targets

# (name, K, N) of one decoder layer's linear layers
MODELS = {
    "llama3-8b": (32, [("qkv", 4096, 6144), ("o", 4096, 4096),
                       ("gate_up", 4096, 28672), ("down", 14336, 4096)]),
}


def copy_bandwidth(dev):
    """Bytes read + written per second by a 1 GiB device-to-device copy,
    measured as `lowbit bench` does (the source written first, 3 copies
    of warm-up, the median of 20).  The median of 10 copies of a source
    never written read 4032 to 4219 GB/s in five processes on one H200
    (2026-11-28), where `lowbit bench` read 4222 and 4223 in two."""
    a = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
    a.fill_(1)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    t = []
    for _ in range(20):
        e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
        e0.record()
        b.copy_(a)
        e1.record()
        e1.synchronize()
        t.append(e0.elapsed_time(e1) * 1e-3)
    del a, b
    return 2 * (1 << 30) / statistics.median(t)


def graph_time(step, iters):
    """Median time of one replay of step() captured in a CUDA graph (us)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    for _ in range(3):
        g.replay()
    t = []
    for _ in range(iters):
        e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        t.append(e0.elapsed_time(e1) * 1e3)
    del g
    return statistics.median(t)


class Lowbit:
    """Every layer as a lowbit op on random packed codes."""

    def __init__(self, recipe, layers, shapes, dev, max_m):
        self.r = lowbit.Recipe(recipe)
        info = self.r.info
        self.act = DTYPES[info.activations]
        self.out = DTYPES[info.output]
        sdt, zdt = DTYPES[info.scales], DTYPES.get(info.zeros)
        self.name = f"lowbit {info.name}"
        self.bytes = 0
        self.ops, self.layers, self.ys, self.ws = {}, [], {}, {}
        g = torch.Generator(device=dev).manual_seed(1)
        for name, k, n in shapes:
            op = runtime.op(self.r, n, k, dev.index)
            op.prepare(1, max_m)   # no compile inside the capture
            self.ops[name] = op
            self.ys[name] = torch.empty(max_m, n, dtype=self.out, device=dev)
        for _ in range(layers):
            for name, k, n in shapes:
                sz = lowbit.sizes(self.r, n, k)
                packed = torch.randint(-2**31, 2**31 - 1, (sz.packed // 4,),
                                       dtype=torch.int32, device=dev,
                                       generator=g)
                # scales about 1 / (sqrt(K) * code range): outputs of order 1
                scales = (torch.rand(sz.scales // sdt.itemsize, device=dev,
                                     generator=g) * 0.01 / math.sqrt(k)
                          ).to(sdt)
                zeros = None
                if zdt is not None:
                    zeros = (torch.rand(sz.zeros // zdt.itemsize, device=dev,
                                        generator=g) * (1 << info.bits)
                             ).to(zdt)
                self.bytes += sz.packed + sz.scales + sz.zeros
                self.layers.append((name, k, packed, scales, zeros))
        self.xs = {k: torch.randn(max_m, k, device=dev, generator=g).to(self.act)
                   for k in {k for _, k, _ in shapes}}

    def prepare(self, m):
        for name, op in self.ops.items():
            op.overlap(False)
            b = op.workspace(m)
            self.ws[name] = (torch.empty(b, dtype=torch.uint8,
                                         device=self.ys[name].device)
                             if b else None, b)

    def step(self, m):
        stream = torch.cuda.current_stream().cuda_stream
        for name, k, packed, scales, zeros in self.layers:
            ws, wsb = self.ws[name]
            self.ops[name].run(m, self.xs[k].data_ptr(), packed.data_ptr(),
                               scales.data_ptr(),
                               zeros.data_ptr() if zeros is not None else None,
                               None, self.ys[name].data_ptr(), stream,
                               ws.data_ptr() if ws is not None else None, wsb)


class Overlapped:
    """The same lowbit layers, each op allowed to start while the one before
    it ends (lb_op_overlap, programmatic dependent launch: it fetches its
    weights while the previous layer finishes, and reads x after)."""

    def __init__(self, lb):
        self.lb, self.name, self.bytes = lb, lb.name + " overlap", lb.bytes

    def prepare(self, m):
        self.lb.prepare(m)
        for op in self.lb.ops.values():
            op.overlap(True)

    def step(self, m):
        self.lb.step(m)


class Cublas:
    """Every layer as torch.matmul on 16-bit weights (cuBLAS)."""

    def __init__(self, dtype, layers, shapes, dev, max_m):
        self.name = "cuBLAS " + ("fp16" if dtype == torch.float16 else "bf16")
        g = torch.Generator(device=dev).manual_seed(2)
        self.layers = [(name, k, torch.randn(n, k, device=dev, generator=g,
                                             dtype=dtype) * 0.02)
                       for _ in range(layers) for name, k, n in shapes]
        self.bytes = sum(w.numel() * w.element_size() for _, _, w in self.layers)
        self.xs = {k: torch.randn(max_m, k, device=dev, dtype=dtype)
                   for k in {k for _, k, _ in shapes}}
        self.ys = {name: torch.empty(max_m, n, device=dev, dtype=dtype)
                   for name, _, n in shapes}

    def prepare(self, m):
        pass

    def step(self, m):
        for name, k, w in self.layers:
            torch.matmul(self.xs[k][:m], w.t(), out=self.ys[name][:m])


class Tinygemm:
    """Every layer as torch._weight_int4pack_mm (bf16, 4-bit, group 128)."""

    def __init__(self, layers, shapes, dev, max_m):
        self.name = "tinygemm int4 g128"
        g = torch.Generator(device=dev).manual_seed(3)
        self.layers = []
        self.bytes = 0
        for _ in range(layers):
            for name, k, n in shapes:
                w8 = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8,
                                   device=dev, generator=g)
                wp = torch._convert_weight_to_int4pack(w8, 8)
                sz = (torch.rand(k // 128, n, 2, device=dev, generator=g) *
                      0.01).to(torch.bfloat16)
                self.bytes += wp.numel() * wp.element_size() + sz.numel() * 2
                self.layers.append((name, k, wp, sz))
        self.xs = {k: torch.randn(max_m, k, device=dev, dtype=torch.bfloat16)
                   for k in {k for _, k, _ in shapes}}

    def prepare(self, m):
        pass

    def step(self, m):
        for name, k, wp, sz in self.layers:
            torch._weight_int4pack_mm(self.xs[k][:m], wp, 128, sz)


def svg(rows, names, path, title):
    """Tokens per second against M (log axis), one line per contender."""
    ms = sorted({r["m"] for r in rows})
    top = max(r["tokens_s"] for r in rows) * 1.1
    W, H, L, B = 640, 400, 70, 50
    X = lambda m: L + (W - L - 20) * (math.log2(m) / max(1, math.log2(ms[-1])))
    Y = lambda v: H - B - (H - B - 30) * v / top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="{W / 2}" y="18" text-anchor="middle">{title}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - 20}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="30" x2="{L}" y2="{H - B}" stroke="black"/>',
           f'<text x="{W / 2}" y="{H - 10}" text-anchor="middle">M (tokens a '
           f'step, log scale)</text>',
           f'<text x="15" y="{H / 2}" transform="rotate(-90 15 {H / 2})" '
           f'text-anchor="middle">tokens / s</text>']
    for m in ms:
        out.append(f'<text x="{X(m)}" y="{H - B + 16}" text-anchor="middle">{m}</text>')
    for i in range(5):
        v = top * i / 4
        out.append(f'<text x="{L - 5}" y="{Y(v) + 4}" text-anchor="end">{v:.0f}</text>')
    colours = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]
    for i, name in enumerate(names):
        pts = [(X(r["m"]), Y(r["tokens_s"])) for r in rows if r["name"] == name]
        if not pts:
            continue
        c = colours[i % len(colours)]
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                   % (c, " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)))
        out.append(f'<text x="{L + 10}" y="{40 + 16 * i}" fill="{c}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="llama3-8b", choices=sorted(MODELS))
    ap.add_argument("--recipe", default="a16w4_g128")
    ap.add_argument("--m", default="1,2,4,8,16,32")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device visible to PyTorch")
        return 77
    ms = [int(v) for v in a.m.split(",")]
    dev = torch.device("cuda", torch.cuda.current_device())
    layers, shapes = MODELS[a.model]
    bw = copy_bandwidth(dev)
    lb = Lowbit(a.recipe, layers, shapes, dev, max(ms))
    rivals = [lb]
    try:
        next(iter(lb.ops.values())).overlap(True)
        rivals.append(Overlapped(lb))
    except lowbit.LowbitError as e:
        print(f"lowbit overlap skipped: {e}")
    rivals.append(Cublas(lb.act, layers, shapes, dev, max(ms)))
    info = lb.r.info
    if info.bits == 4 and info.group == 128:
        try:
            rivals.append(Tinygemm(layers, shapes, dev, max(ms)))
        except (RuntimeError, AttributeError) as e:
            print(f"tinygemm skipped: {e}")
    print(f"{torch.cuda.get_device_name(dev)}; {a.model}: {layers} layers x "
          f"{', '.join(f'{n} {k}->{nn}' for n, k, nn in shapes)}; copy "
          f"bandwidth {bw / 1e9:.0f} GB/s (read + write)")
    print(f"{'contender':<22} {'M':>3} {'us/step':>9} {'tokens/s':>9} "
          f"{'weights GB':>10} {'GB/s':>6} {'% copy':>6}")
    rows = []
    for m in ms:
        for c in rivals:
            c.prepare(m)
            us = graph_time(lambda: c.step(m), a.iters)
            row = {"name": c.name, "m": m, "us": us, "tokens_s": m / (us * 1e-6),
                   "weight_bytes": c.bytes,
                   "gbs": c.bytes / (us * 1e-6) / 1e9,
                   "pct_copy": 100 * c.bytes / (us * 1e-6) / bw}
            rows.append(row)
            print(f"{c.name:<22} {m:>3} {us:>9.1f} {row['tokens_s']:>9.0f} "
                  f"{c.bytes / 1e9:>10.2f} {row['gbs']:>6.0f} "
                  f"{row['pct_copy']:>6.1f}", flush=True)
    for line in model_targets.lines(rows):
        print(line)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "model.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(dev), "model": a.model,
                   "copy_bandwidth": bw, "rows": rows,
                   "targets": model_targets.verdicts(rows)}, f, indent=1)
    svg(rows, [c.name for c in rivals], os.path.join(a.out, "model.svg"),
        f"{a.model} linear layers, one decode step (CUDA graph), "
        f"{torch.cuda.get_device_name(dev)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
