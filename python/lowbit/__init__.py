"""lowbit: fused low-bit matmul kernels generated from Lua recipes.

Torch-free: Recipe, generate, compile_offline, sizes, pack, unpack, and the
runtime (Context, Op) on raw device pointers.  With PyTorch: Linear,
quantize_, from_checkpoint_, overlap_ and the torch.library op lowbit::linear,
imported on first use,
so `import lowbit` never imports torch.
"""
import importlib

from ._errors import LowbitError
from ._lib import library_path
from .generate import (Compiled, Kernel, compile_offline, describe_kernel,
                       generate, plan_candidates, workspace_for)
from .packing import Sizes, pack, sizes, unpack
from .recipe import RECIPE_DIR, Recipe, RecipeInfo, shipped
from . import _lib

__version__ = _lib.lib.lb_version().decode()

__all__ = ["LowbitError", "Recipe", "RecipeInfo", "RECIPE_DIR", "shipped",
           "generate", "plan_candidates", "describe_kernel", "Kernel",
           "workspace_for",
           "compile_offline",
           "Compiled", "sizes", "Sizes", "pack",
           "unpack", "library_path", "Linear", "quantize_", "overlap_", "from_checkpoint_",
           "convert"]

# name -> (module, attribute or None for the module itself)
_LAZY = {
    "Linear": (".nn", "Linear"),
    "quantize_": (".nn", "quantize_"),
    "overlap_": (".nn", "overlap_"),
    "from_checkpoint_": (".nn", "from_checkpoint_"),
    "nn": (".nn", None),
    "ops": (".ops", None),
    "quant": (".quant", None),
    "runtime": (".runtime", None),
    # checkpoint converters (NumPy; torch only for torch tensors), imported
    # on first use like the modules above.
    "convert": (".convert", None),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'lowbit' has no attribute {name!r}")
    mod, attr = _LAZY[name]
    try:
        m = importlib.import_module(mod, __name__)
    except ModuleNotFoundError as e:
        if e.name != __name__ + mod:
            raise  # e.g. torch missing: say that, not "no attribute"
        raise AttributeError(f"module 'lowbit' has no attribute {name!r} "
                             f"({e})") from e
    value = m if attr is None else getattr(m, attr)
    globals()[name] = value
    return value
