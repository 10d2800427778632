import os
import pathlib
import re

import pytest

import lowbit
from conftest import ROOT, SHIPPED, recipe_text


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_by_name(name):
    r = lowbit.Recipe(name)
    assert r.name == name
    d = r.describe()
    assert d["name"] == name and d["packing"] == "gemlite32"
    assert os.path.basename(d["file"]) == name + ".lua"
    assert 1 <= d["bits"] <= 8
    assert d["dequant"] in ("(q - z) * s", "q * s + z", "q * s")
    # what describe says is what the file says
    text = pathlib.Path(r.path).read_text()
    assert re.search(rf"bits = {d['bits']}\b", text)
    assert (d["zeros"] is None) == ("zeros" not in text)
    assert d["bias"] == ("bias = true" in text)


def test_describe_a16w4():
    d = lowbit.Recipe("a16w4_g128").describe()
    assert d == {**d, "bits": 4, "is_signed": False, "group": 128,
                 "activations": "f16", "scales": "f16", "zeros": "f16",
                 "dequant": "(q - z) * s", "accumulator": "f32",
                 "output": "f16", "bias": True}
    d = lowbit.Recipe("a16w8_channel").describe()
    assert d["group"] == 0 and d["zeros"] is None and d["is_signed"]


def test_installed_package_ships_recipes():
    if not os.path.isdir(lowbit.RECIPE_DIR):
        pytest.skip("in-tree run: the package holds no recipes/ (pip install . puts them there)")
    assert lowbit.shipped() == sorted(SHIPPED)
    assert lowbit.Recipe("a16w2_g64").path.startswith(lowbit.RECIPE_DIR)


def test_by_path_and_search_path(tmp_path, monkeypatch):
    p = tmp_path / "mine.lua"
    p.write_text(recipe_text(4).replace('name "w4u_g32"', 'name "mine"'))
    assert lowbit.Recipe(str(p)).name == "mine"
    assert lowbit.Recipe(p).name == "mine"  # os.PathLike
    monkeypatch.setenv("LOWBIT_RECIPE_PATH", f"/nonexistent:{tmp_path}")
    r = lowbit.Recipe("mine")
    assert r.path == str(p)


def test_from_text():
    r = lowbit.Recipe.from_text(recipe_text(3, signed=True), "inline.lua")
    assert r.describe()["bits"] == 3 and r.describe()["is_signed"]
    assert r.path is None


def test_unknown_name():
    with pytest.raises(lowbit.LowbitError) as e:
        lowbit.Recipe("no_such_recipe")
    assert "no_such_recipe" in str(e.value)
    assert "LOWBIT_RECIPE_PATH" in str(e.value)


def test_bad_text_names_line():
    with pytest.raises(lowbit.LowbitError) as e:
        lowbit.Recipe.from_text('name "x"\nactivations "f16"\nweights { bits = 9 }\n',
                                "bad.lua")
    assert e.value.status == "LB_ERECIPE"
    assert e.value.message == "bad.lua:3: weights.bits must be in 1..8, got 9"
    assert str(e.value).startswith("bad.lua:3: ")
    assert "LB_ERECIPE" in str(e.value)


BAD = sorted((ROOT / "tests" / "bad").glob("*.lua"))


@pytest.mark.skipif(not BAD, reason="tests/bad not found beside tests/python")
@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_recipes(path):
    first = path.read_text().splitlines()[0]
    assert first.startswith("-- expect: ")
    want = first[len("-- expect: "):]
    with pytest.raises(lowbit.LowbitError) as e:
        lowbit.Recipe(str(path))
    assert e.value.status == "LB_ERECIPE"
    assert want.strip() in e.value.message, e.value.message
    assert re.match(rf"{re.escape(str(path))}:\d+: ", e.value.message)
