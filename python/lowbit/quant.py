"""Round-to-nearest quantization to a recipe's format, and the float64
dequantization that tests compare against (PyTorch, any device).

For each group of `group` k-values of an output channel (the whole row for
per-channel recipes), with codes in [qmin, qmax] (two's complement when the
recipe is signed):
  "(q - z) * s": s = (max - min) / (qmax - qmin), z = qmin - min / s, a
                 float zero in code units (not rounded to an integer);
  "q * s + z":   s as above, z = min - qmin * s, a float offset;
  "q * s":       symmetric: s = max|w| / qmax (unsigned codes: max(w) / qmax,
                 negative weights clip to 0).
s and z are rounded to the recipe's dtypes before the codes are chosen, so
the codes are the nearest for the values the kernel will use.
"""
import torch

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def code_range(info):
    b = info.bits
    if info.is_signed:
        return -(1 << (b - 1)), (1 << (b - 1)) - 1
    return 0, (1 << b) - 1


def _group(info, k):
    g = info.group or k
    if k % g != 0:
        raise ValueError(f"recipe {info.name}: K = {k} is not a multiple of "
                         f"its group size {g}")
    return g


def quantize(weight, info):
    """codes (uint8 [N, K], low `bits` bits), scales and zeros ([N, K/group]
    in the recipe's dtypes; zeros None when the recipe has none) of a float
    weight [N, K], computed on the weight's device."""
    if weight.dim() != 2:
        raise ValueError(f"weight must be [N, K], got shape {tuple(weight.shape)}")
    n, k = weight.shape
    g = _group(info, k)
    w = weight.detach().float().reshape(n, k // g, g)
    qmin, qmax = code_range(info)
    sdt = DTYPES[info.scales]

    def scale(x):
        # a constant (or underflowing) group: any nonzero scale is exact
        s = x.to(sdt)
        return torch.where(s == 0, torch.ones_like(s), s)

    z = None
    if info.dequant == "q * s":
        if info.is_signed:
            # 1-bit signed codes are {-1, 0}: divide by 1, not qmax = 0
            s = scale(w.abs().amax(-1) / max(qmax, 1))
        else:
            s = scale(w.clamp(min=0).amax(-1) / qmax)
        q = torch.round(w / s.float()[..., None])
    else:
        lo, hi = w.amin(-1), w.amax(-1)
        s = scale((hi - lo) / (qmax - qmin))
        sf = s.float()
        zdt = DTYPES[info.zeros]
        if info.dequant == "(q - z) * s":
            z = (qmin - lo / sf).to(zdt)
            q = torch.round(w / sf[..., None] + z.float()[..., None])
        elif info.dequant == "q * s + z":
            z = (lo - qmin * sf).to(zdt)
            q = torch.round((w - z.float()[..., None]) / sf[..., None])
        else:
            raise ValueError(f"recipe {info.name}: unknown dequant {info.dequant!r}")
    q = q.clamp(qmin, qmax).to(torch.int16).reshape(n, k)
    codes = (q & ((1 << info.bits) - 1)).to(torch.uint8)
    return codes, s.contiguous(), None if z is None else z.contiguous()


def dequantize(codes, scales, zeros, info):
    """W [N, K] in float64 from codes, scales and zeros, by the recipe's
    formula: the reference a kernel's output is checked against."""
    n, k = codes.shape
    g = _group(info, k)
    q = codes.to(torch.int16)
    if info.is_signed:
        half = 1 << (info.bits - 1)
        q = torch.where(q >= half, q - 2 * half, q)
    q = q.double().reshape(n, k // g, g)
    s = scales.double().reshape(n, k // g, 1)
    if info.dequant == "q * s":
        w = q * s
    else:
        z = zeros.double().reshape(n, k // g, 1)
        w = (q - z) * s if info.dequant == "(q - z) * s" else q * s + z
    return w.reshape(n, k)
