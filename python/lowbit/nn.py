"""lowbit.Linear, an nn.Module holding one quantized layer, and quantize_,
which swaps a model's nn.Linear layers for it.

    lin = lowbit.Linear.from_float(torch_linear, recipe="a16w4_g128")
    y = lin(x)                     # x: [..., K], the recipe's activation dtype

The weights live in buffers (packed int32 [N, words], scales, zeros, bias),
so .to(device), .cuda() and state_dict work as for nn.Linear.  Packing runs
where the codes are: on the GPU (lb_pack_device) for codes in CUDA memory,
so from_float of a CUDA layer never copies its weights to the host; on the
host (lb_pack) otherwise.
"""
import hashlib
import os
import tempfile

import numpy as np
import torch
from torch import nn

from . import ops, runtime  # ops registers torch.ops.lowbit.linear
from ._errors import LowbitError
from .packing import pack, sizes
from .quant import DTYPES, quantize
from .recipe import as_recipe


def _spec(r):
    if r.path is None:
        raise ValueError(f"recipe {r.name} was loaded from text; Linear needs a "
                         f"recipe file or a shipped name (write it to a .lua file)")
    return r.path


def _tensor(a, dtype, what):
    t = torch.as_tensor(a)
    if t.dtype != dtype:
        raise TypeError(f"{what} must be {dtype}, got {t.dtype}")
    return t.contiguous()


class Linear(nn.Module):
    """y = x W^T (+ bias) with W in a lowbit recipe's format.

    Linear(recipe, in_features, out_features, bias) makes an empty layer
    (for load_state_dict); from_float and from_quantized fill one.  perm=True
    gives it a column order (an act-order GPTQ layer, from_converted): it
    then computes y from x[..., perm]."""

    def __init__(self, recipe, in_features, out_features, bias=False,
                 device=None, perm=False):
        super().__init__()
        r = as_recipe(recipe)
        info = r.info
        self.recipe = _spec(r)   # resolved path: what the op is keyed by
        self.in_features, self.out_features = int(in_features), int(out_features)
        sz = ops.r_sizes(ops.recipe_of(self.recipe), self.out_features,
                         self.in_features)
        n, groups = self.out_features, sz.groups
        self._dtypes = {"scales": DTYPES[info.scales],
                        "zeros": DTYPES[info.zeros] if info.zeros else None,
                        "bias": DTYPES[info.output]}
        self.register_buffer("packed", torch.zeros(
            (n, sz.packed // 4 // n), dtype=torch.int32, device=device))
        self.register_buffer("scales", torch.ones(
            (n, groups), dtype=self._dtypes["scales"], device=device))
        self.register_buffer("zeros", None if info.zeros is None else torch.zeros(
            (n, groups), dtype=self._dtypes["zeros"], device=device))
        if bias and not info.bias:
            raise ValueError(f"recipe {info.name} has no bias epilogue")
        self.register_buffer("bias", torch.zeros(
            n, dtype=self._dtypes["bias"], device=device) if bias else None)
        # act-order layers: the weights' columns are x's in this order
        self.register_buffer("perm", torch.arange(
            self.in_features, device=device) if perm else None)
        self.info = info
        self._bound = None   # ops.eager's view of the buffers, made on first use

    @classmethod
    def from_quantized(cls, recipe, codes, scales, zeros=None, bias=None,
                       device=None):
        """A layer from codes a caller made: codes uint8 [N, K] (low `bits`
        bits, two's complement when signed), scales and zeros [N, K/group] in
        the recipe's dtypes, bias [N] in its output dtype or None.  torch
        tensors or NumPy arrays; the layer is put on `device`, else on the
        device of scales."""
        r = as_recipe(recipe)
        info = r.info
        on_gpu = torch.is_tensor(codes) and codes.is_cuda
        if on_gpu:   # packed where the codes are (lb_pack_device)
            c = codes.detach()
            if c.dtype != torch.uint8:
                raise TypeError(f"codes must be uint8, got {c.dtype}")
        else:
            c = codes.detach().cpu().numpy() if torch.is_tensor(codes) else np.asarray(codes)
        if c.ndim != 2:
            raise ValueError(f"codes must be [N, K], got shape {tuple(c.shape)}")
        n, k = c.shape
        if info.zeros is None and zeros is not None:
            raise ValueError(f"recipe {info.name} has no zeros, but zeros were given")
        if info.zeros is not None and zeros is None:
            raise ValueError(f"recipe {info.name} needs zeros ({info.dequant})")
        if bias is not None and not info.bias:
            raise ValueError(f"recipe {info.name} has no bias epilogue "
                             f"(epilogue {{ bias = true }}), but a bias was given")
        if device is None:
            device = scales.device if torch.is_tensor(scales) else "cpu"
        self = cls(r, k, n, bias=bias is not None, device="meta")
        if on_gpu:
            c = c.contiguous()
            sz = sizes(r, n, k)
            packed = torch.empty((n, sz.packed // 4 // n), dtype=torch.int32,
                                 device=c.device)
            with torch.cuda.device(c.device):
                runtime.context(c.device.index).pack(
                    r, n, k, c.data_ptr(), packed.data_ptr(),
                    torch.cuda.current_stream(c.device).cuda_stream)
        else:
            packed = torch.from_numpy(pack(r, c).view(np.int32))
        self.packed = packed.to(device)
        self.scales = _set(self.scales, scales, "scales", device)
        if zeros is not None:
            self.zeros = _set(self.zeros, zeros, "zeros", device)
        if bias is not None:
            b = _tensor(bias, DTYPES[info.output], "bias")
            if tuple(b.shape) != (n,):
                raise ValueError(f"bias must be [{n}], got {list(b.shape)}")
            self.bias = b.to(device)
        return self

    @classmethod
    def from_converted(cls, conv, device=None, recipe_dir=None):
        """A layer from a lowbit.convert.Converted (GPTQ, AWQ, HQQ): its
        recipe text is written once to recipe_dir (default: lowbit-recipes
        in the temporary directory; Linear keys its op by a recipe file),
        then from_quantized packs the codes where they are: on the GPU for a
        layer converted from CUDA tensors.  An act-order layer (conv.perm)
        keeps its column order and gathers x[..., perm] before each call (a
        copy of x; layers fed the same x with the same perm could share
        one, which this does not try)."""
        d = recipe_dir or os.path.join(tempfile.gettempdir(), f"lowbit-recipes-{os.getuid()}")
        os.makedirs(d, exist_ok=True)
        name = conv.recipe_text.split('"', 2)[1]
        h = hashlib.sha1(conv.recipe_text.encode()).hexdigest()[:12]
        path = os.path.join(d, f"{name}_{h}.lua")
        if not os.path.exists(path):
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(conv.recipe_text)
            os.replace(tmp, path)   # whole or absent, for other processes
        lin = cls.from_quantized(path, conv.codes, conv.scales, conv.zeros,
                                 conv.bias, device=device)
        if conv.perm is not None:
            p = torch.as_tensor(np.asarray(conv.perm), dtype=torch.int64)
            if tuple(p.shape) != (lin.in_features,):
                raise ValueError(f"perm must be [{lin.in_features}], got {list(p.shape)}")
            lin.perm = p.to(lin.packed.device)
        return lin

    @classmethod
    def from_float(cls, linear, recipe="a16w4_g128", device=None):
        """Quantizes an nn.Linear (round to nearest per group, lowbit.quant)
        on its weight's device, packs there (GPU or host), and returns the layer on
        `device` (default: where the weight is)."""
        r = as_recipe(recipe)
        info = r.info
        w = linear.weight
        if linear.bias is not None and not info.bias:
            raise ValueError(f"recipe {info.name} has no bias epilogue, and the "
                             f"layer has a bias: pick a recipe with "
                             f"epilogue {{ bias = true }}")
        codes, s, z = quantize(w, info)
        b = None
        if linear.bias is not None:
            b = linear.bias.detach().to(DTYPES[info.output])
        return cls.from_quantized(r, codes, s, z, b,
                                  device=w.device if device is None else device)

    def forward(self, x):
        if self.perm is not None:   # act-order: the weights' column order
            x = x.index_select(-1, self.perm)
        # eager calls skip the dispatcher (ops.eager); tracing, autograd
        # and anything the eager path cannot vouch for take the op
        y = ops.eager(self, x)
        if y is not None:
            return y
        return torch.ops.lowbit.linear(x, self.packed, self.scales, self.zeros,
                                       self.bias, self.recipe,
                                       self.out_features, self.in_features)

    def __getstate__(self):
        # ops.eager's Bound holds a compiled op: made again after unpickling
        d = dict(self.__dict__)
        d["_bound"] = None
        return d

    def _apply(self, fn, *args, **kwargs):
        # .half() or .to(dtype) converts every floating buffer; the recipe
        # fixes the dtypes of scales, zeros and bias, so they are put back.
        super()._apply(fn, *args, **kwargs)
        for name, dt in self._dtypes.items():
            t = getattr(self, name)
            if t is not None and t.dtype != dt:
                setattr(self, name, t.to(dt))
        return self

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features="
                f"{self.out_features}, recipe={self.info.name!r}, "
                f"bias={self.bias is not None}")


def _set(old, value, what, device):
    t = _tensor(value, old.dtype, what)
    if t.shape != old.shape:
        raise ValueError(f"{what} must be {list(old.shape)}, got {list(t.shape)}")
    return t.to(device)


def quantize_(model, recipe="a16w4_g128", filter=None):
    """Replaces, in place, every nn.Linear of model for which
    filter(module, name) is true (every one when filter is None) by
    lowbit.Linear.from_float(module, recipe).  A layer the recipe cannot take
    (K not a multiple of 32 and of its group, a bias the recipe has no
    epilogue for) raises, naming the layer: exclude it with filter.
    Returns model."""
    r = as_recipe(recipe)
    if isinstance(model, nn.Linear):
        raise ValueError("quantize_ replaces submodules in place: wrap a bare "
                         "nn.Linear in a module, or use Linear.from_float")
    _replace(model, "quantize_",
             lambda mod: Linear.from_float(mod, r) if isinstance(mod, nn.Linear) else None,
             filter)
    return model


def _replace(model, who, make, filter):
    """Puts make(module) in place of every submodule the filter accepts
    for which it is not None; an error names the layer.  The count."""
    todo = [(name, mod) for name, mod in model.named_modules()
            if name and (filter is None or filter(mod, name))]
    done = 0
    for name, mod in todo:
        try:
            new = make(mod)
        except LowbitError as e:
            e.message = f"{who}: layer {name!r}: {e.message}"
            raise
        except (ValueError, TypeError) as e:
            raise type(e)(f"{who}: layer {name!r}: {e}") from e
        if new is None:
            continue
        parent, _, leaf = name.rpartition(".")
        setattr(model.get_submodule(parent) if parent else model, leaf, new)
        done += 1
    return done


def _checkpoint_layer(mod, zero_offset, act_order):
    """The Converted of a GPTQ or AWQ quantized linear module, or None for
    any other module.  AutoAWQ's WQLinear_GEMM: qweight, qzeros, scales,
    bias, w_bit, group_size.  AutoGPTQ / GPTQModel QuantLinear: qweight,
    qzeros, scales, g_idx, bias, bits, group_size."""
    from . import convert

    if not isinstance(getattr(mod, "qweight", None), torch.Tensor):
        return None
    bias = getattr(mod, "bias", None)
    if hasattr(mod, "w_bit"):
        return convert.from_awq(mod.qweight, mod.qzeros, mod.scales, bias,
                                bits=int(mod.w_bit), group_size=int(mod.group_size))
    if hasattr(mod, "bits") and hasattr(mod, "g_idx"):
        return convert.from_gptq(mod.qweight, mod.qzeros, mod.scales, mod.g_idx,
                                 bias, bits=int(mod.bits),
                                 group_size=int(mod.group_size),
                                 zero_offset=zero_offset, act_order=act_order)
    return None


def from_checkpoint_(model, filter=None, zero_offset=1, act_order=True):
    """Replaces, in place, every GPTQ or AWQ quantized linear module of
    model (AutoGPTQ / GPTQModel QuantLinear, AutoAWQ WQLinear_GEMM: found by
    their tensors and attributes, not their classes) for which
    filter(module, name) is true by lowbit.Linear.from_converted of its
    tensors: converted and packed where they are (on the GPU for a model on
    one).  zero_offset: 1 for GPTQ checkpoint_format "gptq" (v1), 0 for
    "gptq_v2" (convert.from_gptq).  act_order: desc_act layers keep their
    column order and gather x (False: refuse them).  A layer lowbit cannot
    take raises, naming it.  Returns the number of layers replaced."""
    def make(mod):
        conv = _checkpoint_layer(mod, zero_offset, act_order)
        return None if conv is None else Linear.from_converted(conv)

    return _replace(model, "from_checkpoint_", make, filter)


def overlap_(model, on=True):
    """Lets the kernels of every lowbit.Linear in model (or of model, a
    lowbit.Linear) start while the kernel before them on the stream ends
    (lb_op_overlap: programmatic dependent launch, sm_90 and newer).  Each
    fetches its weights while the layer before finishes and reads x after;
    on an H100 this took 10 to 11% off a Llama-3-8B decode step's linear
    layers at M = 1..8 (bench/model.py).  The promise: the layers' packed,
    scales and zeros are complete before the stream's run of overlapping
    kernels begins (load or convert weights, synchronize, then run, as in
    inference).  The setting belongs to the compiled op of (recipe, N, K,
    device), shared by every layer of that shape in the process.  Raises
    LowbitError (LB_EUNSUP) before sm_90.  Returns model."""
    mods = ([model] if isinstance(model, Linear) else
            [m for m in model.modules() if isinstance(m, Linear)])
    for lin in mods:
        dev = lin.packed.device
        if dev.type != "cuda":
            raise ValueError(f"overlap_: a layer is on {dev}; move the model "
                             f"to a CUDA device first")
        runtime.op(ops.recipe_of(lin.recipe), lin.out_features,
                   lin.in_features, dev.index).overlap(on)
    return model
