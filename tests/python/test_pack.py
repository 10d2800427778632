"""lowbit.pack / unpack against a NumPy packer written from the layout's
description (gen/lb_layout.h, docs/recipes.md "Packed layout"), not from
lb_layout.c: the two must agree bit for bit."""
import math

import numpy as np
import pytest

import lowbit
from conftest import SHIPPED, recipe_text


def ref_pack(codes, bits):
    n, k = codes.shape
    words = bits // math.gcd(bits, 32)      # words per lane in a tile
    per_lane = 32 * words // bits           # codes per lane in a tile
    tile = 32 * per_lane
    kpad = -(-k // tile) * tile
    c = np.zeros((n, kpad), dtype=np.uint64)
    c[:, :k] = codes
    tiles = kpad // tile
    # k-value 32 i + l of a tile is lane l's code i
    c = c.reshape(n, tiles, per_lane, 32).transpose(0, 1, 3, 2)
    # each lane's codes as one big-endian bit stream: code 0 on top
    shifts = np.arange(bits - 1, -1, -1, dtype=np.uint64)
    stream = (c[..., None] >> shifts) & 1
    stream = stream.reshape(n, tiles, 32, words, 32)
    w = (stream << np.arange(31, -1, -1, dtype=np.uint64)).sum(-1)
    # word p of lane l is word 32 p + l of the tile
    return w.transpose(0, 1, 3, 2).reshape(n, -1).astype(np.uint32)


@pytest.mark.parametrize("bits", range(1, 9))
@pytest.mark.parametrize("k", [32, 384, 2048 + 64])
def test_every_width(bits, k, rng):
    r = lowbit.Recipe.from_text(recipe_text(bits), f"w{bits}.lua")
    n = 5
    codes = rng.integers(0, 1 << bits, size=(n, k), dtype=np.uint8)
    packed = lowbit.pack(r, codes)
    s = lowbit.sizes(r, n, k)
    assert packed.dtype == np.uint32 and packed.nbytes == s.packed
    assert s.kpad == packed.shape[1] * 32 // bits
    np.testing.assert_array_equal(packed, ref_pack(codes, bits))
    np.testing.assert_array_equal(lowbit.unpack(r, packed, k), codes)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_round_trip(name, rng):
    r = lowbit.Recipe(name)
    info = r.info
    n, k = 24, 1024
    codes = rng.integers(0, 1 << info.bits, size=(n, k), dtype=np.uint8)
    packed = lowbit.pack(name, codes)
    np.testing.assert_array_equal(packed, ref_pack(codes, info.bits))
    np.testing.assert_array_equal(lowbit.unpack(r, packed, k), codes)
    s = lowbit.sizes(r, n, k)
    groups = k // info.group if info.group else 1
    assert s.groups == groups
    assert s.scales == n * groups * 2
    assert s.zeros == (n * groups * 2 if info.zeros else 0)


def test_signed_codes_are_low_bits(rng):
    r = lowbit.Recipe.from_text(recipe_text(3, signed=True), "s3.lua")
    q = rng.integers(-4, 4, size=(2, 64))
    codes = (q & 7).astype(np.uint8)
    np.testing.assert_array_equal(lowbit.unpack(r, lowbit.pack(r, codes), 64), codes)
    with pytest.raises(lowbit.LowbitError, match="does not fit in 3 bits"):
        lowbit.pack(r, q.astype(np.int8).view(np.uint8).reshape(2, 64))


def test_pack_refuses(rng):
    r = lowbit.Recipe("a16w4_g128")
    with pytest.raises(ValueError, match="2-D"):
        lowbit.pack(r, np.zeros(128, np.uint8))
    with pytest.raises(TypeError, match="uint8"):
        lowbit.pack(r, np.zeros((2, 128), np.int32))
    with pytest.raises(lowbit.LowbitError, match="multiple of 32") as e:
        lowbit.pack(r, np.zeros((2, 100), np.uint8))
    assert e.value.status == "LB_EARG"
    with pytest.raises(lowbit.LowbitError, match="group size 128"):
        lowbit.pack(r, np.zeros((2, 192), np.uint8))
    bad = np.zeros((2, 128), np.uint8)
    bad[1, 7] = 16
    with pytest.raises(lowbit.LowbitError, match=r"code 16 at \[1\]\[7\] does not fit in 4 bits"):
        lowbit.pack(r, bad)
    with pytest.raises(ValueError, match="words"):
        lowbit.unpack(r, np.zeros((2, 3), np.uint32), 128)
    with pytest.raises(lowbit.LowbitError, match="must be positive"):
        lowbit.sizes(r, 0, 128)


def test_pack_takes_views(rng):
    # a non-contiguous view is copied, not misread
    r = lowbit.Recipe("a16w8_channel")
    big = rng.integers(0, 256, size=(4, 256), dtype=np.uint8)
    view = big[:, ::2]
    np.testing.assert_array_equal(lowbit.pack(r, view), ref_pack(np.ascontiguousarray(view), 8))
