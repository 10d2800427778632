"""Recipes: loading by name, path or text, and reading them back."""
import ctypes
import dataclasses
import os
from typing import Optional

from . import _lib
from ._errors import LowbitError, check

# Shipped recipes inside the package (pip install); absent in a source tree,
# where LOWBIT_RECIPE_PATH or the library's installed directory serve.
RECIPE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recipes")


@dataclasses.dataclass(frozen=True)
class RecipeInfo:
    """What a recipe says (lb_recipe_describe)."""
    name: str
    file: str
    bits: int
    is_signed: bool
    packing: str
    group: int             # k-values per scale; 0: one per output channel
    activations: str       # "f16", "bf16"
    scales: str            # dtype of the scales
    zeros: Optional[str]   # dtype of the zeros; None: no zeros
    dequant: str           # "(q - z) * s", "q * s + z" or "q * s"
    accumulator: str
    output: str            # dtype of y
    bias: bool


def _is_name(s):
    return "/" not in s and not s.endswith(".lua")


def find(name):
    """The file a bare recipe name stands for: NAME.lua in each directory of
    $LOWBIT_RECIPE_PATH, then in the package's recipes; None when neither
    has it (lb_recipe_load then tries the library's installed directory)."""
    dirs = [d for d in os.environ.get("LOWBIT_RECIPE_PATH", "").split(":") if d]
    for d in dirs + [RECIPE_DIR]:
        p = os.path.join(d, name + ".lua")
        if os.path.isfile(p):
            return p
    return None


def shipped():
    """Names of the recipes shipped in the package."""
    if not os.path.isdir(RECIPE_DIR):
        return []
    return sorted(f[:-4] for f in os.listdir(RECIPE_DIR) if f.endswith(".lua"))


def _s(b):
    return None if b is None else b.decode("utf-8", "replace")


class Recipe:
    """A loaded, validated recipe.

    Recipe("a16w4_g128") finds a shipped (or $LOWBIT_RECIPE_PATH) recipe by
    name; Recipe("path/to/my.lua") loads a file; Recipe.from_text(text)
    loads source text.  Errors raise LowbitError naming file and line.
    """

    def __init__(self, name_or_path):
        if isinstance(name_or_path, Recipe):
            name_or_path = name_or_path.path
        spec = os.fspath(name_or_path)
        path = find(spec) if _is_name(spec) else spec
        h = ctypes.c_void_p()
        try:
            check(_lib.lib.lb_recipe_load((path or spec).encode(), ctypes.byref(h)))
        except LowbitError as e:
            if path is None and os.path.isdir(RECIPE_DIR):
                e.message += f"; nor in the package's recipes ({RECIPE_DIR})"
            raise
        self._h = h
        self.path = os.path.abspath(path) if path else spec
        self.info = self._describe()

    @classmethod
    def from_text(cls, text, chunkname="recipe"):
        """A recipe from Lua source; chunkname names it in messages."""
        self = cls.__new__(cls)
        data = text.encode() if isinstance(text, str) else bytes(text)
        h = ctypes.c_void_p()
        check(_lib.lib.lb_recipe_load_text(chunkname.encode(), data, len(data),
                                           ctypes.byref(h)))
        self._h = h
        self.path = None
        self.info = self._describe()
        return self

    def _describe(self):
        ri = _lib.RecipeInfo()
        check(_lib.lib.lb_recipe_describe(self._h, ctypes.byref(ri)))
        return RecipeInfo(
            name=_s(ri.name), file=_s(ri.file), bits=ri.bits,
            is_signed=bool(ri.is_signed), packing=_s(ri.packing),
            group=ri.group, activations=_s(ri.activations),
            scales=_s(ri.scales), zeros=_s(ri.zeros), dequant=_s(ri.dequant),
            accumulator=_s(ri.accumulator), output=_s(ri.output),
            bias=bool(ri.bias))

    @property
    def name(self):
        return self.info.name

    @property
    def handle(self):
        """The lb_recipe pointer (ctypes c_void_p), valid while self lives."""
        return self._h

    def describe(self):
        """What the recipe says, as a dict (see RecipeInfo)."""
        return dataclasses.asdict(self.info)

    def __repr__(self):
        return f"Recipe({self.name!r}, path={self.path!r})"

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _lib is not None and _lib.lib is not None:
            _lib.lib.lb_recipe_free(h)


def as_recipe(r):
    """A Recipe from a Recipe, a name or a path."""
    return r if isinstance(r, Recipe) else Recipe(r)
