"""Checkpoint converters against each format's own packing and dequantisation.

Every packer and reference formula below is written out from the format's
source, independently of python/lowbit/convert.py:
  GPTQ: AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda.py (pack, and the
        torch dequant of forward: zeros = field + 1, scales[g_idx] * (q - zeros[g_idx]))
  AWQ:  AutoAWQ awq/modules/linear/gemm.py (pack with order_map
        [0, 2, 4, 6, 1, 3, 5, 7]) and awq/utils/packing_utils.py (dequantize_gemm)
  HQQ:  hqq/core/bitpack.py (BitPack) and hqq/core/quantize.py
        (Quantizer.dequantize: ((W_q - zero) * scale).reshape(shape))
A test builds random codes, zeros and scales, packs them the format's way,
converts, and compares codes exactly and the float64 weights of the converted
layer with the format's formula applied to the values it started from.

Tolerance: scales and zeros given as float16 reach lowbit unchanged (f16 ->
f16), and GPTQ/AWQ integer zeros (<= 256) are exact in f16, so both sides
compute (q - z) * s from the same float64 numbers and must agree exactly.
Where a checkpoint has float32 scales or zeros (tested for HQQ) they are
rounded to f16, a relative error of at most u = 2^-11 each for normal
numbers, so |W' - W| <= u * (|q - z| * |s| + |z| * |s'|) per weight.
"""

import os
import shutil
import subprocess

import numpy as np
import pytest

from lowbit.convert import dequantize, from_awq, from_gptq, from_hqq

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def rand_scales(rng, shape):
    # f16, well inside the normal range (>= 2^-14), as real scales are
    return rng.uniform(1e-3, 5e-2, size=shape).astype(np.float16)


# ---- GPTQ ---------------------------------------------------------------------


def gptq_pack(intweight, bits):
    """AutoGPTQ's pack loop: [K, N] codes -> int32 [K*bits/32, N], along K."""
    intweight = intweight.astype(np.uint32)
    q = np.zeros((intweight.shape[0] // 32 * bits, intweight.shape[1]), dtype=np.uint32)
    i = row = 0
    while row < q.shape[0]:
        if bits in (2, 4, 8):
            for j in range(i, i + 32 // bits):
                q[row] |= intweight[j] << (bits * (j - i))
            i += 32 // bits
            row += 1
        else:  # 3 bits: 32 codes in 3 words; codes 10 and 21 cross words
            for j in range(i, i + 10):
                q[row] |= intweight[j] << (3 * (j - i))
            i += 10
            q[row] |= intweight[i] << 30
            row += 1
            q[row] |= (intweight[i] >> 2) & 1
            i += 1
            for j in range(i, i + 10):
                q[row] |= intweight[j] << (3 * (j - i) + 1)
            i += 10
            q[row] |= intweight[i] << 31
            row += 1
            q[row] |= (intweight[i] >> 1) & 0x3
            i += 1
            for j in range(i, i + 10):
                q[row] |= intweight[j] << (3 * (j - i) + 2)
            i += 10
            row += 1
    return q.view(np.int32)


def gptq_layer(rng, bits, group_size, k=256, n=64, zero_offset=1, g_idx=None):
    """Random GPTQ tensors, and the format's own dequantisation of them."""
    g = 1 if group_size == -1 else k // group_size
    q = rng.integers(0, 2**bits, size=(k, n))
    zstored = rng.integers(0, 2**bits, size=(g, n))  # the field, 2^bits - 1 included
    scales = rand_scales(rng, (g, n))
    if g_idx is None:
        g_idx = np.zeros(k, np.int32) if group_size == -1 else (np.arange(k) // group_size).astype(np.int32)
    qweight = gptq_pack(q, bits)
    # qzeros are packed the same way along N (AutoGPTQ's column loop).
    qzeros = np.ascontiguousarray(gptq_pack(zstored.T, bits).T)
    zeros = zstored + zero_offset
    w_ref = (scales[g_idx].astype(np.float64) * (q - zeros[g_idx])).T  # [N, K]
    return dict(qweight=qweight, qzeros=qzeros, scales=scales, g_idx=g_idx), q, w_ref


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("group_size", [32, 128, -1])
@pytest.mark.parametrize("zero_offset", [1, 0])
def test_gptq(bits, group_size, zero_offset):
    rng = np.random.default_rng(1000 * bits + group_size + zero_offset)
    t, q, w_ref = gptq_layer(rng, bits, group_size, zero_offset=zero_offset)
    c = from_gptq(**t, bits=bits, group_size=group_size, zero_offset=zero_offset)
    assert (c.n, c.k, c.bits) == (64, 256, bits)
    assert c.group == (0 if group_size == -1 else group_size)
    assert c.codes.dtype == np.uint8 and c.codes.shape == (64, 256)
    assert c.scales.dtype == np.float16 and c.zeros.dtype == np.float16
    assert c.perm is None and c.bias is None
    np.testing.assert_array_equal(c.codes, q.T)
    np.testing.assert_array_equal(dequantize(c), w_ref)  # exact: see the module docstring
    assert f"bits = {bits}," in c.recipe_text
    assert "epilogue" not in c.recipe_text


def test_gptq_3bit_crossing_codes():
    # Written by hand from GPTQ's 3-bit scheme: code 0 = 7 in bits 0-2 of
    # word 0; code 10 = 0b101: its low bits 01 in bits 30-31 of word 0, its
    # top bit in bit 0 of word 1; code 21 = 0b110: bit 31 of word 1 holds its
    # low bit (0), bits 0-1 of word 2 its top bits (11).
    words = np.array([7 | (0b01 << 30), 1 | (0 << 31), 0b11], dtype=np.uint32)
    qweight = np.repeat(words[:, None], 32, axis=1).view(np.int32)
    c = from_gptq(qweight, None, np.ones((1, 32), np.float16), bits=3, group_size=-1, sym=True)
    expect = np.zeros(32, np.uint8)
    expect[[0, 10, 21]] = [7, 5, 6]
    np.testing.assert_array_equal(c.codes[0], expect)


def test_gptq_v1_top_field_is_2_pow_bits():
    # A v1 zero field of 2^bits - 1 reads as 2^bits (qlinear_cuda: mask, then + 1).
    rng = np.random.default_rng(7)
    t, _, _ = gptq_layer(rng, 4, 128)
    t["qzeros"] = np.full_like(t["qzeros"], -1)  # every field 0xF
    c = from_gptq(**t, bits=4, group_size=128)
    assert np.all(c.zeros == 16)


def test_gptq_bias_and_sym():
    rng = np.random.default_rng(11)
    t, q, _ = gptq_layer(rng, 4, 128)
    bias = rng.standard_normal(64).astype(np.float16)
    # Symmetric checkpoint: every stored field is 2^(bits-1) - 1.
    t["qzeros"] = np.ascontiguousarray(gptq_pack(np.full((64, 2), 7), 4).T)
    c = from_gptq(**t, bias=bias, bits=4, group_size=128, sym=True)
    assert np.all(c.zeros == 8)
    np.testing.assert_array_equal(c.bias, bias)
    assert "epilogue { bias = true }" in c.recipe_text
    c2 = from_gptq(t["qweight"], None, t["scales"], bits=4, group_size=128, sym=True)
    np.testing.assert_array_equal(dequantize(c2), dequantize(c))
    with pytest.raises(ValueError, match="zero_offset"):
        from_gptq(**t, bits=4, group_size=128, sym=True, zero_offset=0)
    with pytest.raises(ValueError, match="qzeros is required"):
        from_gptq(t["qweight"], None, t["scales"], bits=4, group_size=128)


@pytest.mark.parametrize("bits", [3, 4])
def test_gptq_act_order(bits):
    rng = np.random.default_rng(21 + bits)
    k, group = 256, 64
    # desc_act: GPTQ quantizes columns in a permuted order, g_idx = (i // group)[invperm]
    g_idx = (np.arange(k) // group)[rng.permutation(k)].astype(np.int32)
    t, q, w_ref = gptq_layer(rng, bits, group, k=k, g_idx=g_idx)
    with pytest.raises(ValueError, match="act-order.*x\\[\\.\\.\\., perm\\].*act_order=True"):
        from_gptq(**t, bits=bits, group_size=group)
    c = from_gptq(**t, bits=bits, group_size=group, act_order=True)
    assert np.all(np.diff(g_idx[c.perm]) >= 0)  # groups made consecutive
    np.testing.assert_array_equal(c.codes, q.T[:, c.perm])
    np.testing.assert_array_equal(dequantize(c), w_ref[:, c.perm])
    # The layer lowbit runs, on permuted activations, is the checkpoint's layer.
    x = rng.standard_normal((3, k))
    np.testing.assert_allclose(x[:, c.perm] @ dequantize(c).T, x @ w_ref.T, rtol=1e-12, atol=1e-12)


def test_gptq_refusals():
    rng = np.random.default_rng(31)
    t, _, _ = gptq_layer(rng, 4, 128)
    with pytest.raises(ValueError, match="bits must be 2, 3, 4 or 8, got 5"):
        from_gptq(**t, bits=5, group_size=128)
    with pytest.raises(ValueError, match="multiple of 32"):
        from_gptq(**t, bits=4, group_size=16)
    with pytest.raises(ValueError, match="not a multiple of the group size 96"):
        from_gptq(**t, bits=4, group_size=96)
    with pytest.raises(ValueError, match="scales.*shape \\(1, 64\\), expected \\(2, 64\\)"):
        from_gptq(**dict(t, scales=t["scales"][:1]), bits=4, group_size=128)
    with pytest.raises(ValueError, match="qzeros.*expected \\(2, 8\\)"):
        from_gptq(**dict(t, qzeros=t["qzeros"][:, :4]), bits=4, group_size=128)
    with pytest.raises(ValueError, match="qweight must be int32"):
        from_gptq(**dict(t, qweight=t["qweight"].astype(np.float32)), bits=4, group_size=128)
    with pytest.raises(ValueError, match="g_idx.*expected \\(256,\\)"):
        from_gptq(**dict(t, g_idx=t["g_idx"][:128]), bits=4, group_size=128)
    # Unequal groups: no column order gives lowbit's groups.
    bad = t["g_idx"].copy()
    bad[0] = 1
    with pytest.raises(ValueError, match="exactly 128 input channels"):
        from_gptq(**dict(t, g_idx=bad), bits=4, group_size=128, act_order=True)
    with pytest.raises(ValueError, match="blocks of 3"):
        from_gptq(np.zeros((4, 32), np.int32), None, np.ones((1, 32), np.float16), bits=3, group_size=-1, sym=True)


# ---- AWQ ----------------------------------------------------------------------

AWQ_ORDER_MAP = [0, 2, 4, 6, 1, 3, 5, 7]


def awq_pack(intweight):
    """AutoAWQ's WQLinear_GEMM pack: [R, N] 4-bit codes -> int32 [R, N/8]."""
    intweight = intweight.astype(np.uint32)
    q = np.zeros((intweight.shape[0], intweight.shape[1] // 8), dtype=np.uint32)
    for col in range(intweight.shape[1] // 8):
        for i in range(8):
            q[:, col] |= intweight[:, col * 8 + AWQ_ORDER_MAP[i]] << (i * 4)
    return q.view(np.int32)


@pytest.mark.parametrize("group_size", [32, 64, 128])
def test_awq(group_size):
    rng = np.random.default_rng(500 + group_size)
    k, n = 256, 48
    g = k // group_size
    q = rng.integers(0, 16, size=(k, n))
    z = rng.integers(0, 16, size=(g, n))
    scales = rand_scales(rng, (g, n))
    bias = rng.standard_normal(n).astype(np.float16)
    c = from_awq(awq_pack(q), awq_pack(z), scales, bias, bits=4, group_size=group_size)
    # dequantize_gemm: (iweight - izeros) * scales, repeated over each group's rows
    w_ref = ((q - np.repeat(z, group_size, axis=0)) * np.repeat(scales.astype(np.float64), group_size, axis=0)).T
    assert (c.n, c.k, c.group) == (n, k, group_size)
    np.testing.assert_array_equal(c.codes, q.T)
    np.testing.assert_array_equal(dequantize(c), w_ref)
    np.testing.assert_array_equal(c.bias, bias)
    assert 'name "awq_w4_g%d"' % group_size in c.recipe_text


def test_awq_order_by_hand():
    # Column c of a run of 8 sits in nibble AWQ_ORDER_MAP.index(c): column 1 in
    # nibble 4 (bits 16-19), column 4 in nibble 2 (bits 8-11).
    words = np.array([[(1 << 16) | (4 << 8)]], dtype=np.uint32).view(np.int32)
    c = from_awq(
        np.repeat(words, 32, axis=0), np.zeros((1, 1), np.int32), np.ones((1, 8), np.float16), group_size=32
    )
    np.testing.assert_array_equal(c.codes[:, 0], [0, 1, 0, 0, 4, 0, 0, 0])


def test_awq_refusals():
    rng = np.random.default_rng(41)
    qw, qz = awq_pack(rng.integers(0, 16, (256, 64))), awq_pack(rng.integers(0, 16, (2, 64)))
    s = rand_scales(rng, (2, 64))
    with pytest.raises(ValueError, match="only 4-bit"):
        from_awq(qw, qz, s, bits=3)
    # A GEMV-layout qweight ([N, K/8]) does not match the scales.
    with pytest.raises(ValueError, match="scales.*expected"):
        from_awq(np.zeros((64, 32), np.int32), qz, s, group_size=32)
    with pytest.raises(ValueError, match="qzeros.*expected \\(2, 8\\)"):
        from_awq(qw, qz[:, :4], s)
    with pytest.raises(ValueError, match="multiple of 32"):
        from_awq(qw, qz, s, group_size=8)


# ---- HQQ / GemLite ----------------------------------------------------------------


def hqq_pack(w_q, bits):
    """HQQ's BitPack for [R, C] codes: row blocks, the first in the top bits."""
    if bits == 8:
        return w_q.astype(np.uint8)
    if bits == 3:  # pack_3bit_32: rows padded to a multiple of 10, int32
        padded = np.zeros((int(10 * np.ceil(w_q.shape[0] / 10.0)), w_q.shape[1]), np.int32)
        padded[: len(w_q)] = w_q
        step = len(padded) // 10
        out = np.zeros((step, w_q.shape[1]), np.int32)
        for j in range(10):
            out |= padded[j * step : (j + 1) * step] << (27 - 3 * j)
        return out
    w_q = w_q.astype(np.uint8)
    per = 8 // bits
    step = len(w_q) // per
    out = np.zeros((step, w_q.shape[1]), np.uint8)
    for j in range(per):  # pack_4bit_u8: W[:step] << 4 | W[step:], and so on
        out |= w_q[j * step : (j + 1) * step] << (8 - bits * (j + 1))
    return out


def hqq_layer(rng, bits, group_size, n=48, k=256, dtype=np.float16):
    """HQQ axis=1 tensors (W_q [N*K/g, g], scale/zero [N*K/g, 1]) and HQQ's dequant."""
    rows, cols = (n, k) if group_size is None else (n * k // group_size, group_size)
    w_q = rng.integers(0, 2**bits, size=(rows, cols))
    scale = rng.uniform(1e-3, 5e-2, size=(rows, 1)).astype(dtype)
    zero = rng.uniform(0, 2**bits - 1, size=(rows, 1)).astype(dtype)
    w_ref = ((w_q - zero.astype(np.float64)) * scale.astype(np.float64)).reshape(n, k)
    return w_q, scale, zero, w_ref


@pytest.mark.parametrize("bits", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("group_size", [64, 256, None])
def test_hqq_packed(bits, group_size):
    rng = np.random.default_rng(700 + 10 * bits + (group_size or 0))
    n, k = 48, 256
    w_q, scale, zero, w_ref = hqq_layer(rng, bits, group_size)
    packed = hqq_pack(w_q, bits)
    assert packed.size < w_q.size or bits == 8
    c = from_hqq(packed, scale, zero, bits, group_size, (n, k))
    assert (c.n, c.k, c.bits, c.group) == (n, k, bits, group_size or 0)
    np.testing.assert_array_equal(c.codes, w_q.reshape(n, k))
    np.testing.assert_array_equal(dequantize(c), w_ref)
    # HQQ's view_as_float: the same bytes, viewed as the compute dtype
    c2 = from_hqq(packed.view(np.float16), scale, zero, bits, group_size, (n, k))
    np.testing.assert_array_equal(c2.codes, c.codes)


@pytest.mark.parametrize("bits", [1, 2, 3, 4, 5, 6, 7, 8])
def test_gemlite_unpacked(bits):
    # GemLite takes W_q unpacked, [N, K] uint8, and scale/zero as [N, K/g].
    rng = np.random.default_rng(900 + bits)
    n, k, group = 40, 512, 128
    w_q, scale, zero, w_ref = hqq_layer(rng, bits, group, n=n, k=k)
    c = from_hqq(
        w_q.reshape(n, k).astype(np.uint8), scale.reshape(n, -1), zero.reshape(n, -1), bits, group, (n, k)
    )
    np.testing.assert_array_equal(c.codes, w_q.reshape(n, k))
    np.testing.assert_array_equal(dequantize(c), w_ref)
    # HQQ with bitpack=False keeps the codes as floats.
    c2 = from_hqq(w_q.astype(np.float16), scale, zero, bits, group, (n, k))
    np.testing.assert_array_equal(c2.codes, c.codes)


def test_hqq_f32_meta_rounds_to_f16():
    rng = np.random.default_rng(77)
    n, k, group = 48, 256, 64
    w_q, scale, zero, w_ref = hqq_layer(rng, 4, group, dtype=np.float32)
    c = from_hqq(hqq_pack(w_q, 4), scale, zero, 4, group, (n, k))
    s = np.repeat(scale.astype(np.float64).reshape(n, -1), group, axis=1)
    z = np.repeat(zero.astype(np.float64).reshape(n, -1), group, axis=1)
    q = w_q.reshape(n, k).astype(np.float64)
    u = 2.0**-11  # f16 unit roundoff, round to nearest, normal numbers
    bound = u * (np.abs(q - z) * s + np.abs(z) * s * (1 + u)) + 1e-15
    err = np.abs(dequantize(c) - w_ref)
    assert np.all(err <= bound)
    assert err.max() > 0  # the rounding did happen: the bound is what is tested


def test_hqq_ternary_and_bias():
    rng = np.random.default_rng(5)
    n, k = 32, 128
    w_q = rng.integers(0, 3, size=(n * k // 64, 64))
    scale, zero = np.ones((n * 2, 1), np.float16), np.ones((n * 2, 1), np.float16)
    bias = np.arange(n, dtype=np.float32)
    c = from_hqq(hqq_pack(w_q, 2), scale, zero, 1.58, 64, (n, k), bias=bias)
    assert c.bits == 2 and 'name "hqq_w2_g64"' in c.recipe_text
    np.testing.assert_array_equal(dequantize(c), (w_q - 1.0).reshape(n, k))
    assert c.bias.dtype == np.float16 and "epilogue { bias = true }" in c.recipe_text


def test_hqq_refusals():
    rng = np.random.default_rng(51)
    n, k = 48, 256
    w_q, scale, zero, _ = hqq_layer(rng, 4, 64)
    packed = hqq_pack(w_q, 4)
    with pytest.raises(ValueError, match="axis=0 is not supported.*output channels"):
        from_hqq(packed, scale, zero, 4, 64, (n, k), axis=0)
    with pytest.raises(ValueError, match="nbits must be 1..8"):
        from_hqq(packed, scale, zero, 9, 64, (n, k))
    with pytest.raises(ValueError, match="packed W_q has shape"):
        from_hqq(packed[:-1], scale, zero, 4, 64, (n, k))
    with pytest.raises(ValueError, match="must come unpacked"):
        from_hqq(packed, scale, zero, 5, 64, (n, k))
    with pytest.raises(ValueError, match="hqq scale"):
        from_hqq(packed, scale[:-1], zero, 4, 64, (n, k))
    with pytest.raises(ValueError, match="codes outside 0..3"):
        from_hqq(w_q.astype(np.uint8), scale, zero, 2, 64, (n, k))
    with pytest.raises(ValueError, match="not finite in float16"):
        from_hqq(packed, scale.astype(np.float32) * 1e7, zero, 4, 64, (n, k))
    with pytest.raises(ValueError, match="multiple of 32"):
        from_hqq(w_q.astype(np.uint8), np.ones(n * k // 16), np.ones(n * k // 16), 4, 16, (n, k))


# ---- the recipes load in lowbit ---------------------------------------------------


def _lowbit_cli():
    for p in (os.environ.get("LOWBIT_CLI"), os.path.join(REPO, "build", "lowbit"), shutil.which("lowbit")):
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def test_recipes_load():
    cli = _lowbit_cli()
    if cli is None:
        pytest.skip("no lowbit tool (build/lowbit, $LOWBIT_CLI or PATH)")
    rng = np.random.default_rng(3)
    convs = []
    for bits in (2, 3, 4, 8):
        for gs in (32, -1):
            t, _, _ = gptq_layer(rng, bits, gs)
            convs.append(from_gptq(**t, bits=bits, group_size=gs, bias=np.zeros(64)))
    w_q, scale, zero, _ = hqq_layer(rng, 3, None)
    convs.append(from_hqq(w_q, scale, zero, 3, None, (48, 256)))
    for c in convs:
        r = subprocess.run([cli, "check", "-"], input=c.recipe_text, capture_output=True, text=True)
        assert r.returncode == 0, c.recipe_text + r.stderr
