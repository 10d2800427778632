"""bench/model_targets.py: the whole-model step's verdicts (no torch)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import model_targets as mt  # noqa: E402


def row(name, m, us, pct=70.0):
    return {"name": name, "m": m, "us": us, "pct_copy": pct}


def test_met_and_missed():
    # H200, 2026-11-30 (f5f5376's run): M = 1 misses only the bandwidth,
    # M = 4 the 3x, M = 16 is the GEMM's
    rows = [row("lowbit a16w4_g128", 1, 1361.1, 65.3),
            row("lowbit a16w4_g128 overlap", 1, 1216.2, 73.1),
            row("cuBLAS fp16", 1, 3890.4), row("tinygemm int4 g128", 1, 2188.8),
            row("lowbit a16w4_g128 overlap", 2, 1252.9),
            row("cuBLAS fp16", 2, 3910.7), row("tinygemm int4 g128", 2, 2338.1),
            row("lowbit a16w4_g128 overlap", 4, 1335.0),
            row("cuBLAS fp16", 4, 3914.5),
            row("lowbit a16w4_g128 overlap", 16, 2129.4),
            row("cuBLAS fp16", 16, 3930.3)]
    v = {x["m"]: x for x in mt.verdicts(rows)}
    assert v[1]["lowbit"] == "lowbit a16w4_g128 overlap"   # the faster one
    assert not v[1]["met"] and "73.1% of the copy bandwidth" in v[1]["why"]
    assert "cuBLAS" not in v[1]["why"]                    # 3.20x
    assert v[2]["met"] and v[2]["why"] == ""
    assert abs(v[2]["x_tinygemm"] - 2338.1 / 1252.9) < 1e-9
    assert not v[4]["met"] and "2.93x cuBLAS fp16, under 3x" in v[4]["why"]
    assert v[4]["tinygemm"] is None                        # not measured
    assert "pending with the GEMM work" in v[16]["why"]
    assert "GEMM" not in v[4]["why"]
    text = mt.lines(rows)
    assert all(t.startswith("target") for t in text)
    assert len(text) == 1 + 4
    assert text[2].endswith(": met")


def test_tinygemm_and_missing_rivals():
    rows = [row("lowbit x", 8, 100.0), row("cuBLAS fp16", 8, 400.0),
            row("tinygemm int4 g128", 8, 90.0),
            row("lowbit x", 32, 10.0)]                     # no cuBLAS row
    v = {x["m"]: x for x in mt.verdicts(rows)}
    assert not v[8]["met"] and "not faster than tinygemm" in v[8]["why"]
    assert not v[32]["met"] and "no cuBLAS row" in v[32]["why"]
    # an M with no lowbit row is not judged
    assert mt.verdicts([row("cuBLAS fp16", 1, 5.0)]) == []
