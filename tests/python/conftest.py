"""Shared fixtures.  The tests run against the in-tree library (ctest sets
PYTHONPATH=python and LOWBIT_LIB=<build>/liblowbit.so) or an installed
package (.ci/run: pip install . and plain pytest)."""
import os
import pathlib
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Run by hand (python -m pytest tests/python) the in-tree package is used,
# unless the installed one is under test.
if not os.environ.get("LOWBIT_TEST_INSTALLED"):
    sys.path.insert(0, str(ROOT / "python"))
# The recipes the repository ships (README).
SHIPPED = ["a16w1_g64", "a16w2_g64", "a16w3_g128", "a16w4_g128",
           "a16w8_channel", "bf16w4_g128"]

# Never the user's ~/.cache/lowbit: ctest names one under the build
# directory; elsewhere a fresh one per run.
if not os.environ.get("LOWBIT_CACHE_DIR"):
    os.environ["LOWBIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="lowbit-pytest-cache-")
os.environ["LOWBIT_DUMP_DIR"] = ""


def recipe_text(bits, signed=False, group=32, dequant="q * s", zeros=False,
                act="f16", bias=False):
    """Lua source of a recipe; the layout tests need every width."""
    lines = [f'name "w{bits}{"s" if signed else "u"}_g{group}"',
             f'activations "{act}"',
             f'weights {{ bits = {bits}, signed = {str(signed).lower()}, packing = "gemlite32" }}',
             f'scales {{ group = {group}, dtype = "{act}" }}']
    if zeros:
        lines.append(f'zeros {{ dtype = "{act}" }}')
    lines.append(f'dequant "{dequant}"')
    if bias:
        lines.append("epilogue { bias = true }")
    return "\n".join(lines) + "\n"


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(12345)
