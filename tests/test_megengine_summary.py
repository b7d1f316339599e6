"""`traceconv summary` equals MegEngine's profile_analyze on every reference run that worked.

The reference outputs (``tests/data/megengine/analyze``, listed in ``manifest.json``) were
printed by ``megengine.tools.profile_analyze`` 1.13.0; each is compared number by number
(rows, order, times, ratios, cumulative, FLOPs, FLOPS, memory, bandwidth, shapes) with
``traceconv summary --json`` on the same profile and options.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from megengine_golden import Golden, parse, read_text

from traceconv.cli import app
from traceconv.presentation.summary import number_with_unit

ANALYZE = "megengine/analyze"
STYLE_ONLY = {"--confluence", "--dump-only-opr"}  # output styles; the numbers are the same


def runs(data_dir):
    manifest = json.loads((data_dir / ANALYZE / "manifest.json").read_text())
    return manifest["runs"]


def _manifest():
    from conftest import DATA
    return [r for r in runs(DATA) if r["rc"] == 0]


def summary_json(data_dir, profile: str, args: list[str]) -> dict:
    cli_args = [a for a in args if a not in STYLE_ONLY]
    path = data_dir / "megengine" / f"{profile}.gz"
    result = CliRunner().invoke(app, ["summary", str(path), "--format", "megengine", "--json", "--show-host",
                                 *cli_args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _num(value) -> float | None:
    return float(value) if isinstance(value, str) else value


def _unit_cell(lines: list[str]) -> str:
    value, unit = lines
    return "N/A" if value == "N/A" else f"{value} {unit.replace('byte', 'B')}"


def _compact(text: str) -> str:
    return "".join(text.replace("-  ", "").split())


def check_fancy_rows(golden_rows, rows, key: str, total: float) -> None:
    assert len(rows) == len(golden_rows)
    for i, (g, r) in enumerate(zip(golden_rows, rows, strict=True)):
        time, cum = r[key], r["cumulative"]
        assert g[0] == [f"#{i}", f"{time:.3}", f"{time / total * 100:.1f}%"]
        assert g[1] == [f"{cum:.3}", f"{cum / total * 100:.1f}%"]
        info = [r["name"], str(r.get("count")), "N/A"] if r["id"] is None else \
            [r["name"], r["type"], r["id"]]
        if r["id"] is None:
            info[0] = r["type"]
        assert _compact("".join(g[2])) == _compact("".join(info))
        for col, field, unit, base, binary in ((3, "computation", "FLO", 1000, False),
                                               (4, "flops", "FLOPS", 1000, False),
                                               (5, "memory", "B", 1024, True),
                                               (6, "bandwidth", "B/s", 1024, True)):
            mine = number_with_unit(_num(r[field]), unit, base, binary)
            assert _unit_cell(g[col]) == mine, (i, field)
        for col, field in ((7, "in_shapes"), (8, "out_shapes")):
            if r[field] is None:
                assert g[col] == ["None"]
            else:
                shapes = ["{" + ",".join(map(str, s)) + "}" for s in r[field]]
                assert [x for x in g[col] if not x.startswith("-[")] == shapes


def check_confluence_rows(table, rows, key: str, total: float) -> None:
    header = table.header
    assert len(table.rows) == len(rows)
    for g, r in zip(table.rows, rows, strict=True):
        cell = {h: c[0] for h, c in zip(header, g, strict=True)}
        assert cell["time"] == f"{r[key]:.3}"
        assert cell["ratio"] == f"{r[key] / total * 100:.1f}%"
        if "opr name" in cell:
            assert (cell["opr name"], cell["opr id"]) == (r["name"], r["id"])
        else:
            assert (cell["opr type"], int(cell["opr count"])) == (r["type"], r["count"])


@pytest.mark.slow
@pytest.mark.parametrize("run", _manifest(), ids=lambda r: r["file"].split("/")[-1][:-4])
def test_summary_equals_profile_analyze(data, run):
    golden: Golden = parse(read_text(data / "megengine" / run["file"]))
    ours = summary_json(data, run["profile"], run["args"])
    args = run["args"]
    totals = {"total device time": ours["total_device_time"],
              "total host time": ours["total_host_time"]}
    for label, value in golden.totals.items():
        assert math.isclose(float(value), totals[label], rel_tol=1e-6), label
    only = args[args.index("--print-only") + 1] if "--print-only" in args else None
    places = [only] if only in ("device", "host") else [] if only else \
        ["device"] + (["host"] if "--show-host" in args else [])
    blocks = {"device": ("rows", "device_self_time"), "host": ("host_rows", "host_self_time")}
    if "--dump-only-opr" in args:
        rows = ours["rows"]
        assert golden.dump_lines == [f"{r['name']} {r['type']} {r['id']}" for r in rows]
        return
    assert len(golden.tables) == len(places)
    for table, place in zip(golden.tables, places, strict=True):
        rows_key, key = blocks[place]
        total = ours[f"total_{place}_time"]
        if "--confluence" in args:
            check_confluence_rows(table, ours[rows_key], key, total)
        else:
            assert table.header[0] == f"{place} self time"
            check_fancy_rows(table.rows, ours[rows_key], key, total)


def test_every_reference_run_is_covered(data):
    all_runs = runs(data)
    assert len(all_runs) == 86
    assert sum(r["rc"] == 0 for r in all_runs) == 70
