"""The whole-model step's targets, judged from bench/model.py's rows.

A decode step of lowbit should be at least 3x faster than cuBLAS fp16 and
faster than tinygemm at every M measured, and at M = 1 move its weights at
85% or more of the copy bandwidth (README, "Targets not met").  Rows past
8 come with the work that makes one op serve every M (the GEMM kernel, and
the GEMV's two and four fragments, docs/architecture.md): they are judged
the same way and marked so, not left out.  No torch here, so that the
verdicts can be tested anywhere.
"""

TIMES_CUBLAS = 3.0   # lowbit's step at least this many times faster
COPY_PCT = 85.0      # % of the copy bandwidth at M = 1
GEMV_ROWS = 8        # M past this: the every-M work's rows


def verdicts(rows):
    """One verdict a measured M, from rows of dicts with keys name, m, us
    and pct_copy (bench/model.py's).  lowbit's best contender (with the
    overlap or without) is judged; a rival that was not measured is
    None and judges nothing.  Returns dicts with m, lowbit, us, cublas,
    tinygemm (µs or None), x_cublas, x_tinygemm, pct_copy, met (bool)
    and why (what was missed, in words; empty when met)."""
    out = []
    for m in sorted({r["m"] for r in rows}):
        at = [r for r in rows if r["m"] == m]
        lb = [r for r in at if r["name"].startswith("lowbit")]
        if not lb:
            continue
        best = min(lb, key=lambda r: r["us"])
        cub = next((r["us"] for r in at if r["name"].startswith("cuBLAS")),
                   None)
        tiny = next((r["us"] for r in at
                     if r["name"].startswith("tinygemm")), None)
        v = {"m": m, "lowbit": best["name"], "us": best["us"],
             "cublas": cub, "tinygemm": tiny,
             "x_cublas": cub / best["us"] if cub else None,
             "x_tinygemm": tiny / best["us"] if tiny else None,
             "pct_copy": best["pct_copy"]}
        why = []
        if v["x_cublas"] is None:
            why.append("no cuBLAS row to compare")
        elif v["x_cublas"] < TIMES_CUBLAS:
            why.append(f"{v['x_cublas']:.2f}x cuBLAS fp16, under "
                       f"{TIMES_CUBLAS:.0f}x")
        if v["x_tinygemm"] is not None and v["x_tinygemm"] <= 1.0:
            why.append(f"not faster than tinygemm ({v['x_tinygemm']:.2f}x)")
        if m == 1 and best["pct_copy"] < COPY_PCT:
            why.append(f"{best['pct_copy']:.1f}% of the copy bandwidth, "
                       f"under {COPY_PCT:.0f}%")
        if why and m > GEMV_ROWS:
            why.append(f"past {GEMV_ROWS} rows: pending with the GEMM work")
        v["met"] = not why
        v["why"] = "; ".join(why)
        out.append(v)
    return out


def lines(rows):
    """The verdicts as text, one line a measured M (each starts with
    "target", which tests/gpu/run.sh's summary picks up)."""
    head = (f"target: lowbit >= {TIMES_CUBLAS:.0f}x cuBLAS fp16 and faster "
            f"than tinygemm at every M, >= {COPY_PCT:.0f}% of the copy "
            f"bandwidth at M = 1")
    out = [head]
    for v in verdicts(rows):
        x = "-" if v["x_cublas"] is None else f"{v['x_cublas']:.2f}x"
        t = "-" if v["x_tinygemm"] is None else f"{v['x_tinygemm']:.2f}x"
        out.append(f"target M = {v['m']:>3}: {v['lowbit']} {v['us']:.1f} us, "
                   f"{x} cuBLAS, {t} tinygemm: "
                   + ("met" if v["met"] else "NOT MET (" + v["why"] + ")"))
    return out
