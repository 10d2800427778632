"""Host-side weight tensors: sizes, packing and unpacking (NumPy)."""
import ctypes
import dataclasses

import numpy as np

from . import _lib
from ._errors import check
from .recipe import as_recipe


@dataclasses.dataclass(frozen=True)
class Sizes:
    """lb_sizes_of: bytes of each device tensor of an N x K layer."""
    packed: int   # bytes of packed weights
    scales: int   # bytes of scales
    zeros: int    # bytes of zeros (0 when the recipe has none)
    groups: int   # groups per output channel
    kpad: int     # K rounded up to the packing tile


def _sizes(r, n, k):
    s = _lib.Sizes()
    check(_lib.lib.lb_sizes_of(r.handle, int(n), int(k), ctypes.byref(s)))
    return s


def sizes(recipe, n, k):
    s = _sizes(as_recipe(recipe), n, k)
    return Sizes(s.packed, s.scales, s.zeros, s.groups, s.kpad)


def _matrix(a, dtype, what):
    a = np.asarray(a)
    if a.ndim != 2:
        raise ValueError(f"{what} must be 2-D, got shape {a.shape}")
    if a.dtype != dtype:
        raise TypeError(f"{what} must be {np.dtype(dtype).name}, got {a.dtype}")
    return np.ascontiguousarray(a)


def pack(recipe, codes):
    """Packs codes (uint8 [N, K], each holding its low `bits` bits; signed
    codes in two's complement) into the recipe's layout: uint32
    [N, kpad * bits / 32], one row per output channel."""
    r = as_recipe(recipe)
    c = _matrix(codes, np.uint8, "codes")
    n, k = c.shape
    s = _sizes(r, n, k)
    out = np.empty((n, s.packed // 4 // n), dtype=np.uint32)
    check(_lib.lib.lb_pack(r.handle, n, k,
                           c.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
                           out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32))))
    return out


def unpack(recipe, packed, k):
    """The codes (uint8 [N, K]) of packed weights (uint32 [N, words])."""
    r = as_recipe(recipe)
    p = _matrix(packed, np.uint32, "packed")
    n = p.shape[0]
    s = _sizes(r, n, k)
    if p.size * 4 != s.packed:
        raise ValueError(f"packed has {p.size} words; {r.name} at n = {n}, "
                         f"k = {k} has {s.packed // 4}")
    out = np.empty((n, int(k)), dtype=np.uint8)
    check(_lib.lib.lb_unpack(r.handle, n, int(k),
                             p.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
                             out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))))
    return out
