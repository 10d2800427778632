"""The PyTorch op torch.ops.lowbit.linear: a torch.library custom op with a
fake (meta) implementation, so torch.compile traces it without a graph
break, and a CUDA implementation that enqueues lb_op_run on PyTorch's
current stream (capturable in a CUDA graph: it allocates only y, through
PyTorch's allocator, and never synchronises).

    y = torch.ops.lowbit.linear(x, packed, scales, zeros, bias, recipe, n, k)

x: [..., K] contiguous, the recipe's activation dtype, on a CUDA device;
packed: int32 [N, words] (lowbit.pack's uint32 words, reinterpreted);
scales, zeros: [N, K / group] in the recipe's dtypes (zeros None when the
recipe has none); bias: [N] in the output dtype, or None; recipe: a
shipped name or a path (Linear passes the resolved path); y: [..., N].
"""
from typing import Optional

import torch

from . import runtime
from .quant import DTYPES
from .packing import sizes
from .recipe import Recipe

_recipes = {}


def recipe_of(spec):
    """The Recipe of a name or path, loaded once per process."""
    r = _recipes.get(spec)
    if r is None:
        r = _recipes[spec] = Recipe(spec)
    return r


_sizes = {}

# The current stream's handle.  torch.cuda.current_stream() builds a Stream
# object per call (about a microsecond); Inductor's generated code reads the
# raw handle through this private function, so it is used where it exists.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
    lambda index: torch.cuda.current_stream(index).cuda_stream)


def r_sizes(r, n, k):
    """lowbit.sizes of (r, n, k), computed once (r lives in _recipes)."""
    key = (id(r), n, k)
    s = _sizes.get(key)
    if s is None:
        s = _sizes[key] = sizes(r, n, k)
    return s


def _expect(t, what, shape, dtype, name):
    if t.dtype != dtype:
        raise TypeError(f"lowbit.linear ({name}): {what} must be {dtype}, got {t.dtype}")
    if tuple(t.shape) != shape:
        raise ValueError(f"lowbit.linear ({name}): {what} must have shape "
                         f"{list(shape)}, got {list(t.shape)}")
    if not t.is_contiguous():
        raise ValueError(f"lowbit.linear ({name}): {what} must be contiguous")


def check(x, packed, scales, zeros, bias, r, n, k):
    """Refuses what the kernel cannot take, with a message that says what is
    wrong; shared by the real and the fake implementation, so torch.compile
    reports it at trace time.  Returns the output dtype."""
    info, name = r.info, r.name
    act = DTYPES[info.activations]
    if x.dtype != act:
        raise TypeError(f"lowbit.linear ({name}): x must be {act} (the recipe's "
                        f"activations), got {x.dtype}")
    if x.dim() < 1 or x.shape[-1] != k:
        raise ValueError(f"lowbit.linear ({name}): x must be [..., {k}], got "
                         f"{list(x.shape)}")
    if not x.is_contiguous():
        raise ValueError(f"lowbit.linear ({name}): x must be contiguous "
                         f"(call .contiguous())")
    return check_weights(packed, scales, zeros, bias, r, n, k)


def check_weights(packed, scales, zeros, bias, r, n, k):
    """check() for the weights alone.  Returns the output dtype."""
    info, name = r.info, r.name
    groups = k // info.group if info.group else 1
    words = r_sizes(r, n, k).packed // 4 // n
    _expect(packed, "packed", (n, words), torch.int32, name)
    _expect(scales, "scales", (n, groups), DTYPES[info.scales], name)
    if info.zeros is None:
        if zeros is not None:
            raise ValueError(f"lowbit.linear ({name}): the recipe has no zeros, "
                             f"but zeros were given")
    elif zeros is None:
        raise ValueError(f"lowbit.linear ({name}): the recipe needs zeros")
    else:
        _expect(zeros, "zeros", (n, groups), DTYPES[info.zeros], name)
    out = DTYPES[info.output]
    if bias is not None:
        if not info.bias:
            raise ValueError(f"lowbit.linear ({name}): the recipe has no bias "
                             f"epilogue, but a bias was given")
        _expect(bias, "bias", (n,), out, name)
    return out


def check_devices(dev, packed, scales, zeros, bias, r):
    if dev.type != "cuda":
        raise ValueError(f"lowbit.linear ({r.name}): x is on {dev}; lowbit "
                         f"runs on CUDA devices")
    for what, t in (("packed", packed), ("scales", scales), ("zeros", zeros),
                    ("bias", bias)):
        if t is not None and t.device != dev:
            raise ValueError(f"lowbit.linear ({r.name}): {what} is on "
                             f"{t.device}, x on {dev}")


@torch.library.custom_op("lowbit::linear", mutates_args=())
def linear(x: torch.Tensor, packed: torch.Tensor, scales: torch.Tensor,
           zeros: Optional[torch.Tensor], bias: Optional[torch.Tensor],
           recipe: str, n: int, k: int) -> torch.Tensor:
    r = recipe_of(recipe)
    out = check(x, packed, scales, zeros, bias, r, n, k)
    dev = x.device
    check_devices(dev, packed, scales, zeros, bias, r)
    return launch(x, runtime.op(r, n, k, dev.index), dev.index, n, out,
                  packed.data_ptr(), scales.data_ptr(),
                  zeros.data_ptr() if zeros is not None else None,
                  bias.data_ptr() if bias is not None else None)


def launch(x, op, idx, n, out, pp, sp, zp, bp):
    """y = x W^T (+ bias) for checked arguments: the weights' addresses pp,
    sp, zp, bp (None: absent) on device idx."""
    # y is made in its final shape: an op's output must be no view
    y = torch.empty((*x.shape[:-1], n), dtype=out, device=x.device)
    m = x.numel() // x.shape[-1]
    if m == 0:
        return y
    # One launch for every M: the GEMV up to its reach (8 to 32 rows by
    # recipe and shape: lb_rows_at), more a GEMM bucket
    # (its first use in a process compiles it; Op.prepare does it ahead).
    # Split-K's work space comes from PyTorch's allocator, on this stream
    # (so it is safe across streams and inside CUDA graphs).
    wsb = op.workspace(m)
    ws = torch.empty(wsb, dtype=torch.uint8, device=x.device) if wsb else None
    op.run(m, x.data_ptr(), pp, sp, zp, bp, y.data_ptr(), _raw_stream(idx),
           ws.data_ptr() if ws is not None else None, wsb)
    return y


@linear.register_fake
def _(x, packed, scales, zeros, bias, recipe, n, k):
    out = check(x, packed, scales, zeros, bias, recipe_of(recipe), n, k)
    return x.new_empty((*x.shape[:-1], n), dtype=out)


# ---- lowbit.Linear's eager path ----
# The custom op goes through PyTorch's dispatcher and checks every tensor on
# every call: measured on an H100 machine's host (bench/python_overhead.py,
# 4096 x 4096, M = 1) lowbit.Linear cost 71.4 us a call against 32.7 for
# F.linear.  A layer's weights change rarely, so what a call needs of them
# (the op, their pointers, the output dtype, the device) is checked once and
# kept with the layer (Bound); a call then checks x and launches.  Whatever
# the eager path cannot vouch for (tracing, autograd, tensor subclasses,
# dispatch modes, a bad x) goes through the op, which says what is wrong.

_modes = getattr(torch._C, "_len_torch_dispatch_stack", None)
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (
    lambda: torch._dynamo.is_compiling())


class Bound:
    """One layer's weights as a call needs them, for as long as the layer
    holds the same tensors at the same addresses."""
    __slots__ = ("key", "op", "pp", "sp", "zp", "bp", "act", "out", "idx", "n", "k")

    def __init__(self, key, r, packed, scales, zeros, bias, n, k):
        self.key = key
        self.out = check_weights(packed, scales, zeros, bias, r, n, k)
        dev = packed.device
        check_devices(dev, packed, scales, zeros, bias, r)
        self.idx = dev.index
        self.op = runtime.op(r, n, k, self.idx)
        self.act = DTYPES[r.info.activations]
        self.pp, self.sp = packed.data_ptr(), scales.data_ptr()
        self.zp = zeros.data_ptr() if zeros is not None else None
        self.bp = bias.data_ptr() if bias is not None else None
        self.n, self.k = n, k


def _key(t):
    return (None, 0) if t is None else (t, t.data_ptr())


def _same(key, packed, scales, zeros, bias):
    """The layer holds the tensors b was made from, at the same addresses
    (load_state_dict copies into them; .to() and `.data =` do not)."""
    for (t0, p0), t in zip(key, (packed, scales, zeros, bias)):
        if t0 is not t or (t is not None and t.data_ptr() != p0):
            return False
    return True


def eager(lin, x):
    """lin(x) for a lowbit.Linear: the op's result, by the shortest path
    where nothing needs the dispatcher."""
    if _compiling() or type(x) is not torch.Tensor or not x.is_cuda or \
            x.requires_grad or (_modes is not None and _modes()):
        return None
    packed, scales, zeros, bias = lin.packed, lin.scales, lin.zeros, lin.bias
    b = lin.__dict__.get("_bound")
    if b is None or not _same(b.key, packed, scales, zeros, bias):
        if not packed.is_cuda:
            return None
        key = (_key(packed), _key(scales), _key(zeros), _key(bias))
        try:
            b = Bound(key, recipe_of(lin.recipe), packed, scales, zeros, bias,
                      lin.out_features, lin.in_features)
        except (TypeError, ValueError):
            return None   # the op says what is wrong, naming x's device
        lin.__dict__["_bound"] = b
    if (x.dtype != b.act or x.get_device() != b.idx or x.dim() < 1
            or x.shape[-1] != b.k or not x.is_contiguous()):
        return None   # the op refuses it, saying why
    return launch(x, b.op, b.idx, b.n, b.out, b.pp, b.sp, b.zp, b.bp)
