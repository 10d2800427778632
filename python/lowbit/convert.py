"""Converters from quantized checkpoint tensors to lowbit's inputs.

Each converter takes the tensors a checkpoint stores for one linear layer
(as NumPy arrays; for torch tensors pass ``t.cpu().numpy()``) and returns a
:class:`Converted`: a recipe text plus the codes, scales, zeros and bias that
``lb_pack`` and ``lb_op_run`` take.  Layers whose ``qweight`` (``W_q`` for
HQQ) is a torch CUDA tensor are converted on that GPU instead (torch ops, the
same bits), and ``lowbit.Linear.from_converted`` packs them there
(``lb_pack_device``): a layer never visits the host.  The layer is y = x . W^T (+ bias) with W
[N][K]; every converter gives W in lowbit's form

    W[n, k] = (codes[n, k] - zeros[n, g]) * scales[n, g],  g = k // group

with unsigned codes, f16 scales and f16 float zeros.  Integer zero-points
become float zeros; they are small integers, so f16 holds them exactly.

NumPy by default: it runs where the checkpoint is read, with or without
torch, a GPU or the C library; torch is imported only when a tensor is
given.  docs/checkpoints.md describes each format.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Optional

import numpy as np

__all__ = [
    "Converted",
    "from_gptq",
    "from_awq",
    "from_hqq",
    "dequantize",
    "make_recipe_text",
]

# AutoAWQ's GEMM packing puts column ORDER[i] of each run of 8 output
# channels in nibble i (bits 4i..4i+3) of the int32 word.
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)
_AWQ_REVERSE = tuple(int(i) for i in np.argsort(AWQ_ORDER))  # (0, 4, 1, 5, 2, 6, 3, 7)

# lowbit's shape limits (docs/recipes.md, "Tensors the caller provides"),
# checked here so that a bad layer fails at conversion, with its name.
_MAX_NK = 2**31
_MAX_K = 2**26
_MAX_GROUP = 1048576


@dataclasses.dataclass
class Converted:
    """One layer in lowbit's form.

    recipe_text: Lua recipe describing the format (``lb_recipe_load_text``).
    bits: code width.  group: k-values per scale, 0 for one per channel.
    codes: uint8 [N][K], unsigned, the input of ``lb_pack``.
    scales: float16 [N][G].  zeros: float16 [N][G] or None.
    bias: float16 [N] or None.
    perm: None, or int64 [K] for an act-order GPTQ layer converted with
    ``act_order=True``: codes are W's columns in this order, so the layer
    must be run on ``x[..., perm]`` (y = x[..., perm] . W'^T equals x . W^T).
    """

    recipe_text: str
    bits: int
    group: int
    codes: np.ndarray
    scales: np.ndarray
    zeros: Optional[np.ndarray]
    bias: Optional[np.ndarray]
    n: int
    k: int
    perm: Optional[np.ndarray] = None


# ---- recipe text -----------------------------------------------------------


def make_recipe_text(name: str, bits: int, group: int, bias: bool) -> str:
    """A recipe for unsigned codes, f16 scales and zeros, (q - z) * s.

    group 0 means one scale per output channel.  The epilogue asks for a
    bias only when the layer has one: with bias = false lowbit refuses a
    bias pointer, with bias = true it accepts NULL, so either works, but the
    recipe then says what the layer is.
    """
    grp = '"channel"' if group == 0 else str(group)
    lines = [
        f'name "{name}"',
        'activations "f16"',
        f'weights {{ bits = {bits}, signed = false, packing = "gemlite32" }}',
        f'scales {{ group = {grp}, dtype = "f16" }}',
        'zeros { kind = "float", dtype = "f16" }',
        'dequant "(q - z) * s"',
        'accumulator "f32"',
        'output "f16"',
    ]
    if bias:
        lines.append("epilogue { bias = true }")
    return "\n".join(lines) + "\n"


def _recipe_name(fmt: str, bits: int, group: int) -> str:
    return f"{fmt}_w{bits}_" + ("channel" if group == 0 else f"g{group}")


# ---- checks shared by the converters ----------------------------------------


# ---- where the arrays live: NumPy on the host, or torch on a GPU -------------
#
# The converters are written once against these few operations.  A layer is
# converted where its packed tensor is: on its GPU with torch ops when that
# is a CUDA tensor (the other tensors are moved there), else with NumPy.  The
# bits are the same: torch has no unsigned 32-bit shifts, so words stay
# int32 there and every right shift is masked back to the bits it moved
# down (a no-op on NumPy's uint32 words).


class _Host:
    """NumPy arrays."""

    def put(self, a):
        return np.asarray(a)

    def words(self, a, what: str) -> np.ndarray:
        """int32/uint32 array, reinterpreted as uint32."""
        a = np.asarray(a)
        if a.dtype.kind not in "iu" or a.dtype.itemsize != 4:
            raise ValueError(f"{what} must be int32 (packed 32-bit words), got dtype {a.dtype}")
        return np.ascontiguousarray(a).view(np.uint32)

    def f16(self, a, shape: tuple, what: str) -> np.ndarray:
        """float16 copy; refuses values that f16 cannot hold (inf, NaN)."""
        a = np.asarray(a)
        if a.dtype.kind != "f" and a.dtype.kind not in "iu":
            raise ValueError(f"{what} must be a float array, got dtype {a.dtype}")
        _check_shape(a, shape, what, "see docs/checkpoints.md")
        with np.errstate(over="ignore", invalid="ignore"):
            h = a.astype(np.float16)
        if not np.all(np.isfinite(h)):
            raise ValueError(f"{what} has values that are not finite in float16 (|v| > 65504, inf or NaN)")
        return np.ascontiguousarray(h)

    def as_(self, a, dtype: str):   # dtype: "uint8", "int32", "float16"
        return a.astype(dtype)

    def cat(self, parts, axis: int):
        return np.concatenate(parts, axis=axis)

    def contiguous(self, a):
        return np.ascontiguousarray(a)

    def is_float(self, a) -> bool:
        return a.dtype.kind == "f"

    def storage(self, a, dtype: str, what: str):
        """HQQ's packed W_q in its storage dtype (a float view viewed back)."""
        if a.dtype.kind == "f":
            a = np.ascontiguousarray(a).view(dtype)
        if a.dtype.kind not in "iu" or a.dtype.itemsize != np.dtype(dtype).itemsize:
            raise ValueError(f"{what} must be {dtype}, got {a.dtype}")
        return a.view(np.uint32 if dtype == "int32" else np.uint8)


class _Device:
    """torch tensors on one CUDA device."""

    def __init__(self, dev):
        import torch

        self.torch, self.dev = torch, dev

    def put(self, a):
        t = self.torch
        return (a if isinstance(a, t.Tensor) else t.as_tensor(np.asarray(a))).to(self.dev)

    def words(self, a, what: str):
        t = self.torch
        a = self.put(a)
        if a.dtype not in (t.int32, getattr(t, "uint32", t.int32)):
            raise ValueError(f"{what} must be int32 (packed 32-bit words), got dtype {a.dtype}")
        return a.contiguous().view(t.int32)

    def f16(self, a, shape: tuple, what: str):
        t = self.torch
        a = self.put(a)
        if not a.dtype.is_floating_point and a.dtype not in (t.int16, t.int32, t.int64, t.uint8):
            raise ValueError(f"{what} must be a float array, got dtype {a.dtype}")
        _check_shape(a, shape, what, "see docs/checkpoints.md")
        h = a.to(t.float16)
        if not bool(t.isfinite(h).all()):
            raise ValueError(f"{what} has values that are not finite in float16 (|v| > 65504, inf or NaN)")
        return h.contiguous()

    def as_(self, a, dtype: str):
        return a.to(getattr(self.torch, dtype))

    def cat(self, parts, axis: int):
        return self.torch.cat(parts, dim=axis)

    def contiguous(self, a):
        return a.contiguous()

    def is_float(self, a) -> bool:
        return a.dtype.is_floating_point

    def storage(self, a, dtype: str, what: str):
        want = getattr(self.torch, dtype)
        if a.dtype.is_floating_point:
            a = a.contiguous().view(want)
        if a.dtype != want:
            raise ValueError(f"{what} must be {dtype}, got {a.dtype}")
        return a


_HOST = _Host()


def _host(a) -> np.ndarray:
    """A NumPy view or copy of an array or tensor (for checks and messages)."""
    return a.cpu().numpy() if hasattr(a, "cpu") else np.asarray(a)


def _where(a):
    """The backend of the layer whose packed tensor is a."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor) and a.is_cuda:
        return _Device(a.device)
    return _HOST


def _check_shape(a: np.ndarray, shape: tuple, what: str, why: str) -> None:
    if tuple(a.shape) != tuple(shape):
        raise ValueError(f"{what} has shape {tuple(a.shape)}, expected {tuple(shape)} ({why})")


def _check_lowbit_layer(n: int, k: int, group: int, fmt: str) -> None:
    """What lowbit itself accepts, said in the checkpoint's terms."""
    if n <= 0 or k <= 0:
        raise ValueError(f"{fmt}: empty layer ({n} x {k})")
    if k % 32 != 0:
        raise ValueError(f"{fmt}: K = {k} is not a multiple of 32, which lowbit requires")
    if group != 0:
        if group % 32 != 0 or group > _MAX_GROUP:
            raise ValueError(
                f"{fmt}: group size {group} cannot be a lowbit recipe: groups must be "
                f"a multiple of 32 from 32 to {_MAX_GROUP} (or per channel)"
            )
        if k % group != 0:
            raise ValueError(f"{fmt}: K = {k} is not a multiple of the group size {group}")
    if n * k >= _MAX_NK or k > _MAX_K:
        raise ValueError(f"{fmt}: layer {n} x {k} is too large for lowbit (N*K < 2^31, K <= 2^26)")


def _bias(bias, n: int, xp) -> Optional[np.ndarray]:
    if bias is None:
        return None
    return xp.f16(xp.put(bias).reshape(-1), (n,), "bias [N]")


def _converted(fmt: str, bits: int, group: int, codes, scales, zeros, bias,
               n: int, k: int, xp, perm=None) -> Converted:
    """The converters' common last step: contiguous arrays (where the
    layer is converted), the recipe text named after the format, the bias
    checked."""
    return Converted(
        recipe_text=make_recipe_text(_recipe_name(fmt, bits, group), bits, group, bias is not None),
        bits=bits,
        group=group,
        codes=xp.contiguous(codes),
        scales=xp.contiguous(scales),
        zeros=xp.contiguous(zeros),
        bias=_bias(bias, n, xp),
        n=n,
        k=k,
        perm=perm,
    )



def _group_of(group_size) -> int:
    """Checkpoints say -1 (GPTQ, AWQ) or None (HQQ) for one scale per channel."""
    if group_size is None or int(group_size) <= 0:
        return 0
    return int(group_size)


# ---- bit streams --------------------------------------------------------------


def _unpack_lsb(words, bits: int, xp=_HOST):
    """uint32 [..., W] (int32 on a GPU) -> uint8 codes [..., 32 * W // bits].

    The codes along the last axis form one bit stream that starts at bit 0
    of the first word: code j takes stream bits [j*bits, (j+1)*bits), stream
    bit b is bit b % 32 of word b // 32.  This is GPTQ's packing, its 3-bit
    case included (code 10 is bits 30-31 of word 0 plus bit 0 of word 1),
    and AWQ's before its column reorder.  The stream repeats every
    bits / gcd(bits, 32) words (32 codes when bits does not divide 32).
    """
    per = bits // math.gcd(bits, 32)  # words per block
    codes_per = 32 * per // bits
    if words.shape[-1] % per:
        raise ValueError(f"{words.shape[-1]} words cannot hold whole {bits}-bit blocks of {per} words")
    blocks = words.reshape(*words.shape[:-1], -1, per)
    mask = (1 << bits) - 1
    parts = []
    for j in range(codes_per):
        p, s = divmod(j * bits, 32)
        v = blocks[..., p]
        if s:  # a logical shift, also of int32 words (_Device)
            v = (v >> s) & ((1 << (32 - s)) - 1)
        if s + bits > 32:  # the code's high bits start the next word
            v = v | (blocks[..., p + 1] << (32 - s))
        parts.append(xp.as_(v & mask, "uint8")[..., None])
    return xp.cat(parts, -1).reshape(*words.shape[:-1], -1)


# ---- GPTQ ---------------------------------------------------------------------


def from_gptq(
    qweight,
    qzeros,
    scales,
    g_idx=None,
    bias=None,
    *,
    bits: int,
    group_size: int,
    sym: Optional[bool] = None,
    zero_offset: int = 1,
    act_order: bool = False,
) -> Converted:
    """AutoGPTQ / GPTQ-for-LLaMa tensors of one layer.

    qweight int32 [K*bits/32, N], packed along K; qzeros int32
    [G, N*bits/32], packed along N; scales [G, N]; g_idx int32 [K] or None.
    The checkpoint's weight is

        W[n, k] = (q[k, n] - (zs[g, n] + zero_offset)) * scales[g, n],  g = g_idx[k]

    where zs is the stored zero field.  zero_offset = 1 for the original
    format ("gptq", v1: the packer stored z - 1); 0 for GPTQModel's
    checkpoint_format "gptq_v2".  The converted zeros are zs + zero_offset,
    exactly; a v1 field of 2^bits - 1 becomes 2^bits, as AutoGPTQ's CUDA
    path reads it.

    group_size -1 (or 0, None): one scale per channel.  sym=True allows
    qzeros=None (the zero is then 2^(bits-1), GPTQ's symmetric zero) and
    checks that given zeros are that value, which catches a wrong
    zero_offset.

    Act-order (desc_act) layers, where g_idx is not k // group_size, are
    refused unless act_order=True: lowbit groups consecutive k-values, so
    the columns are reordered by group and the caller must run the layer on
    x[..., perm] (returned as Converted.perm).
    """
    if bits not in (2, 3, 4, 8):
        raise ValueError(f"gptq: bits must be 2, 3, 4 or 8, got {bits}")
    if zero_offset not in (0, 1):
        raise ValueError(f"gptq: zero_offset must be 1 (format gptq, v1) or 0 (gptq_v2), got {zero_offset}")
    xp = _where(qweight)
    qw = xp.words(qweight, "gptq qweight")
    if qw.ndim != 2:
        raise ValueError(f"gptq qweight must be 2-D [K*bits/32, N], got shape {tuple(qw.shape)}")
    per = bits // math.gcd(bits, 32)
    if qw.shape[0] % per:
        raise ValueError(
            f"gptq qweight has {qw.shape[0]} rows; {bits}-bit rows come in blocks of {per} (32 k-values each)"
        )
    k = qw.shape[0] * 32 // bits
    n = qw.shape[1]
    group = _group_of(group_size)
    _check_lowbit_layer(n, k, group, "gptq")
    g = 1 if group == 0 else k // group

    s = xp.f16(scales, (g, n), "gptq scales [G, N]").T

    if qzeros is None:
        if not sym:
            raise ValueError("gptq: qzeros is required unless sym=True")
        z = xp.put(np.full((n, g), 2 ** (bits - 1), dtype=np.float16))
    else:
        qz = xp.words(qzeros, "gptq qzeros")
        if n % (32 // math.gcd(bits, 32)):
            raise ValueError(f"gptq: N = {n} cannot be packed into whole {bits}-bit qzeros words")
        _check_shape(qz, (g, n * bits // 32), "gptq qzeros", "[G, N*bits/32], packed along N")
        zi = xp.as_(_unpack_lsb(qz, bits, xp), "int32") + zero_offset  # [G, N]
        if sym and bool((zi != 2 ** (bits - 1)).any()):
            raise ValueError(
                f"gptq: sym=True but the zeros are not {2 ** (bits - 1)} "
                f"(found {np.unique(_host(zi))[:4].tolist()}): is zero_offset right? "
                "1 for checkpoint_format gptq (v1), 0 for gptq_v2"
            )
        z = xp.as_(zi.T, "float16")  # integers <= 256: exact in f16

    codes = _unpack_lsb(xp.contiguous(qw.T), bits, xp)  # [N, K]

    perm = None
    if g_idx is not None:
        perm = _gptq_perm(_host(g_idx), k, group, g, act_order)
        if perm is not None:
            codes = codes[:, xp.put(perm)]

    return _converted("gptq", bits, group, codes, s, z, bias, n, k, xp, perm)


def _gptq_perm(g_idx, k: int, group: int, g: int, act_order: bool) -> Optional[np.ndarray]:
    """None when g_idx is k // group; else the column order that makes groups contiguous."""
    gi = np.asarray(g_idx)
    if gi.dtype.kind not in "iu":
        raise ValueError(f"gptq g_idx must be integers, got dtype {gi.dtype}")
    _check_shape(gi, (k,), "gptq g_idx", "one group index per input channel")
    gi = gi.astype(np.int64)
    trivial = np.zeros(k, np.int64) if group == 0 else np.arange(k) // group
    if np.array_equal(gi, trivial):
        return None
    size = k if group == 0 else group
    if gi.min() < 0 or gi.max() >= g or np.any(np.bincount(gi, minlength=g) != size):
        raise ValueError(
            f"gptq g_idx does not put exactly {size} input channels in each of the {g} groups, "
            "so no column order gives lowbit's equal, consecutive groups"
        )
    if not act_order:
        raise ValueError(
            "gptq: act-order (desc_act) checkpoint: g_idx is not k // group_size. lowbit "
            "groups consecutive k-values, so its weights must have their input channels "
            "reordered by group, and the activations reordered the same way (x[..., perm]). "
            "Pass act_order=True to get Converted.perm and apply it to x before every call"
        )
    # Stable, so that within a group the checkpoint's own k order is kept.
    return np.argsort(gi, kind="stable")


# ---- AWQ ------------------------------------------------------------------------


def from_awq(qweight, qzeros, scales, bias=None, *, bits: int = 4, group_size: int = 128) -> Converted:
    """AutoAWQ GEMM tensors of one layer.

    qweight int32 [K, N/8] and qzeros int32 [G, N/8], both packed along N
    with 8 nibbles per word in AWQ's order (nibble i holds column
    AWQ_ORDER[i] of each run of 8); scales [G, N].  The weight is
    W[n, k] = (q[k, n] - z[g, n]) * scales[g, n], g = k // group_size; the
    zero is stored as is (no +1).  Only AutoAWQ's GEMM layout (version
    "gemm") is read; GEMV, Marlin and exllama layouts have other shapes and
    are refused by the shape checks.
    """
    if bits != 4:
        raise ValueError(f"awq: only 4-bit GEMM checkpoints are supported (AWQ's nibble order), got bits={bits}")
    xp = _where(qweight)
    qw = xp.words(qweight, "awq qweight")
    if qw.ndim != 2:
        raise ValueError(f"awq qweight must be 2-D [K, N/8], got shape {tuple(qw.shape)}")
    k, n = qw.shape[0], qw.shape[1] * 8
    group = _group_of(group_size)
    _check_lowbit_layer(n, k, group, "awq")
    g = 1 if group == 0 else k // group

    s = xp.f16(scales, (g, n), "awq scales [G, N]").T
    qz = xp.words(qzeros, "awq qzeros")
    _check_shape(qz, (g, n // 8), "awq qzeros", "[G, N/8], packed along N")

    def unorder(words):  # [R, N/8] words -> [R, N] codes in channel order
        nib = _unpack_lsb(words, 4, xp).reshape(words.shape[0], -1, 8)
        return nib[:, :, list(_AWQ_REVERSE)].reshape(words.shape[0], -1)

    codes = unorder(qw).T  # [N, K]
    z = xp.as_(unorder(qz).T, "float16")

    return _converted("awq", bits, group, codes, s, z, bias, n, k, xp)


# ---- HQQ / GemLite ------------------------------------------------------------------

# HQQ's BitPack: the tensor to pack, of R rows, is cut into `slices` row
# blocks of R / slices rows; packed row r holds row r of every block, the
# first block in the top bits.  3 bits pack 10 slices in the low 30 bits of an
# int32, after padding R to a multiple of 10.  (hqq/core/bitpack.py)
_HQQ_PACKING = {  # bits -> (storage dtype, slices, top shift)
    8: (np.uint8, 1, 0),
    4: (np.uint8, 2, 4),
    3: (np.int32, 10, 27),
    2: (np.uint8, 4, 6),
    1: (np.uint8, 8, 7),
}


def from_hqq(W_q, scale, zero, nbits, group_size, shape, bias=None, *, axis: int = 1) -> Converted:
    """HQQ (HQQLinear.W_q and its meta) or GemLite-style tensors of one layer.

    W = ((W_q - zero) * scale).reshape(shape), shape = (N, K), with HQQ's
    grouping: axis=1 and group_size g view W as [N*K/g, g], one scale and
    zero per row, i.e. per g consecutive k-values of a channel (lowbit's
    groups); group_size None is one per channel.

    W_q may be HQQ's packed tensor (packing 8bit_u8, 4bit_u8, 3bit_32,
    2bit_u8, 1bit_u8, chosen by nbits as HQQ does; a view_as_float tensor
    is viewed back), or unpacked codes with N*K elements in W order, as
    GemLite takes them ([N, K] uint8).  scale and zero have N*K/g elements
    ([N*K/g, 1] in HQQ, [N, K/g] in GemLite), floats.

    axis=0 is refused: HQQ then groups along N (W viewed as [g, N*K/g]),
    which lowbit's per-(channel, k-group) scales cannot express.
    """
    if axis != 1:
        raise ValueError(
            f"hqq: axis={axis} is not supported: with axis=0 HQQ's groups run along the output "
            "channels (W viewed as [group_size, N*K/group_size]), while lowbit's groups are "
            "consecutive k-values of one channel; quantize with axis=1 (as GemLite requires)"
        )
    if nbits == 1.58:  # HQQ's ternary codes 0..2, stored as 2 bits
        bits = 2
    elif isinstance(nbits, (int, float, np.integer, np.floating)) and nbits in range(1, 9):
        bits = int(nbits)
    else:
        raise ValueError(f"hqq: nbits must be 1..8 (or 1.58), got {nbits!r}")
    if len(tuple(shape)) != 2:
        raise ValueError(f"hqq: shape must be (N, K), got {tuple(shape)}")
    n, k = (int(d) for d in shape)
    group = _group_of(group_size)
    _check_lowbit_layer(n, k, group, "hqq")
    g = 1 if group == 0 else k // group
    rows, cols = (n, k) if group == 0 else (n * k // group, group)

    xp = _where(W_q)
    codes = _hqq_codes(xp.put(W_q), bits, n, k, rows, cols, xp)
    s = xp.f16(xp.put(scale).reshape(-1), (n * g,), f"hqq scale (N*K/group_size = {n * g} values)")
    z = xp.f16(xp.put(zero).reshape(-1), (n * g,), f"hqq zero (N*K/group_size = {n * g} values)")

    return _converted("hqq", bits, group, codes, s.reshape(n, g), z.reshape(n, g), bias, n, k, xp)


def _hqq_codes(wq, bits: int, n: int, k: int, rows: int, cols: int, xp):
    """uint8 [N, K] codes from HQQ's packed W_q or from unpacked codes."""
    if math.prod(wq.shape) == n * k:
        # Unpacked: GemLite; HQQ's bitpack=False, which stores the codes as
        # floats; and 8bit_u8, whose packing is the identity.  No packed
        # tensor has N*K elements, a float-viewed one included.
        if xp.is_float(wq) and bool((wq != wq.round()).any()):
            raise ValueError("hqq W_q holds non-integer values; expected codes")
        v = wq.reshape(n, k)
        c = v if xp.is_float(v) else xp.as_(v, "int32")  # 2^8 is past uint8
        if bool((c < 0).any()) or bool((c >= 2**bits).any()):
            raise ValueError(f"hqq W_q has codes outside 0..{2**bits - 1} for nbits={bits}")
        return xp.contiguous(xp.as_(v, "uint8"))

    if bits not in _HQQ_PACKING:
        raise ValueError(
            f"hqq W_q has {math.prod(wq.shape)} elements; {bits}-bit codes must come unpacked, "
            f"N*K = {n * k} elements"
        )
    store, slices, top = _HQQ_PACKING[bits]
    step = -(-rows // slices)  # 3 bits pad rows to a multiple of 10
    if bits != 3 and rows % slices:
        raise ValueError(f"hqq: {rows} rows cannot be packed {slices} to a byte")
    # a view_as_float tensor (the packed bytes viewed as floats) is viewed back
    w = xp.storage(wq, np.dtype(store).name, f"hqq packed W_q for {bits} bits")
    if w.ndim != 2 or tuple(w.shape) != (step, cols):
        raise ValueError(
            f"hqq packed W_q has shape {tuple(w.shape)}, expected {(step, cols)} "
            f"({bits}-bit packing of the [{rows}, {cols}] grouped codes), or {n * k} unpacked codes"
        )
    mask = (1 << bits) - 1   # (the top shift leaves an int32's sign bit out)
    parts = [(w >> (top - bits * j)) & mask for j in range(slices)]
    unpacked = xp.cat(parts, 0)[:rows]
    return xp.contiguous(xp.as_(unpacked, "uint8").reshape(n, k))


# ---- reference ------------------------------------------------------------------------


def dequantize(conv: Converted) -> np.ndarray:
    """float64 W [N][K] as lowbit computes it: (codes - zeros) * scales.

    For a layer with conv.perm, this is W in lowbit's column order:
    W_lowbit = W_checkpoint[:, conv.perm].
    """
    per = conv.k if conv.group == 0 else conv.group
    s = np.repeat(_host(conv.scales).astype(np.float64), per, axis=1)
    q = _host(conv.codes).astype(np.float64)
    if conv.zeros is None:
        return q * s
    z = np.repeat(_host(conv.zeros).astype(np.float64), per, axis=1)
    return (q - z) * s
