"""The one table renderer (traceconv.presentation.tables.fitted_table): within the width,
numbers whole, names elided in the middle and still distinct, hidden columns named."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from traceconv.presentation.tables import Column, fitted_table

NAME_CHARACTERS = st.characters(min_codepoint=0x21, max_codepoint=0x7e)   # printable, no space


def draw(table, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(table)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def body(lines: list[str], rows: int) -> list[list[str]]:
    """The cells of the first ``rows`` lines under the header rule, box lines left out."""
    rule = next(i for i, line in enumerate(lines) if set(line) <= set("─━┡╇┩"))
    return [line.replace("│", " ").split() for line in lines[rule + 1:rule + 1 + rows]]


def test_kernel_names_that_differ_in_the_middle_stay_distinct_at_80_columns():
    # the four rows that all read "sm80_xmma_gemm_f32..." when cut at the end
    names = [f"sm80_xmma_gemm_f32f32_f32f32_f32_{layout}_n_tilesize{tile}_stage3_warpsize2x2x1"
             f"_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
             for layout in ("nn", "nt", "tn", "tt") for tile in ("128x128x8", "64x64x8")]
    rows = [[name, f"{i * 1.5:.3f}ms", str(i)] for i, name in enumerate(names)]
    columns = [Column("Name"), Column("Self device", True), Column("Calls", True, drop=1)]
    lines = draw(fitted_table(columns, rows, 80), 80)
    cells = body(lines, len(rows))
    assert len({c[0] for c in cells}) == len(names) and all("…" in c[0] for c in cells)
    assert max(map(len, lines)) <= 80 and "..." not in "".join(lines)
    assert [c[1] for c in cells] == [r[1] for r in rows]


def test_the_columns_hidden_are_named_with_the_way_to_see_them():
    columns = [Column("op"), Column("total ms", True), Column("calls", True, drop=2),
               Column("input shapes", drop=3)]
    rows = [["aten::convolution_backward", "12.500", "6", "[[32, 64, 56, 56], [64, 64, 3, 3]]"]]
    lines = draw(fitted_table(columns, rows, 30), 30)
    said = " ".join(lines)
    assert "2 columns hidden at 30 columns: --wide shows them (calls, input shapes)" in said
    assert body(lines, 1) == [["aten::conv…on_backward", "12.500"]]


def test_a_table_that_fits_is_drawn_whole():
    table = fitted_table([Column("op"), Column("ms", True)], [["aten::mm", "1.000"]], 80)
    assert "aten::mm" in " ".join(draw(table, 80)) and table.caption is None


@settings(max_examples=25, derandomize=True, deadline=None)
@given(names=st.lists(st.text(NAME_CHARACTERS, min_size=1, max_size=70), min_size=1,
                      max_size=8, unique=True),
       numbers=st.lists(st.floats(0, 1e12, allow_nan=False), min_size=8, max_size=8),
       width=st.integers(40, 120))
def test_any_names_fit_any_width_with_numbers_whole(names, numbers, width):
    rows = [[name, f"{number:,.3f}", f"{number:.3e}"]
            for name, number in zip(names, numbers[:len(names)], strict=True)]
    columns = [Column("name"), Column("time ms", True), Column("flops", True, drop=1)]
    lines = draw(fitted_table(columns, rows, width), width)
    assert max(map(len, lines)) <= width
    cells = body(lines, len(rows))
    assert len({c[0] for c in cells}) == len(names)   # distinct names stay distinct
    for shown, row in zip(cells, rows, strict=True):
        assert row[1] in shown   # the number whole, never cut or wrapped


def test_names_far_longer_than_the_terminal_take_steps_bounded_by_its_width(monkeypatch):
    """A fuzzed XPlane file (seed 8484) named its ops with tens of thousands of nested
    brackets: the table narrowed them one character a step from their full length, each
    step trying every cut (19 s for 72 ops). Narrowing now starts at the table's width."""
    from traceconv.presentation import tables

    calls = []
    real_head = tables._head
    monkeypatch.setattr(tables, "_head", lambda lines, width: calls.append(width)
                        or real_head(lines, width))
    names = ["(" * depth + "op" + ")" * depth for depth in range(20_000, 20_020)]
    names += [f"{'x' * 30_000}_{i}" for i in range(5)]   # distinct only at their ends
    rows = [[name, f"{i}.000", str(i)] for i, name in enumerate(names)]
    columns = [Column("Name"), Column("Self ms", True), Column("Calls", True, drop=1)]
    lines = draw(fitted_table(columns, rows, 80), 80)
    assert max(map(len, lines)) <= 80
    cells = body(lines, len(rows))
    # numbers whole; Calls kept: hiding it would not tell the bracketed names apart
    assert [c[-2:] for c in cells] == [r[1:] for r in rows]
    assert len({c[0] for c in cells[-5:]}) == 5   # the names that a cut tells apart, apart
    assert len(calls) <= 4 * 80   # (it was one per character of the longest name: 40,000)


def test_an_empty_column_goes_before_a_name_is_cut():
    """A real rocprof statistics row (tests/data/rocprof/shashankparsi__...results.stats.csv)
    has no FLOPs: its all-N/A columns are hidden rather than eliding the kernel's name."""
    name = "vector_add(float*, float*, float*, int)"
    columns = [Column("#", True, drop=2), Column("device self time", True),
               Column("cumulative", True, drop=3), Column("operator"),
               Column("calls", True, drop=1), Column("computation", True, drop=5),
               Column("FLOPS", True, drop=4)]
    rows = [["0", "0.00343", "0.00343", name, "1", "N/A", "N/A"]]
    lines = draw(fitted_table(columns, rows, 80), 80)
    assert max(map(len, lines)) <= 80
    assert any(name in line for line in lines)
    assert lines[-1] == "hidden, N/A on every row: computation, FLOPS"


def test_columns_stay_when_hiding_them_would_not_tell_the_names_apart():
    """Names that differ only past any width the terminal allows: hiding Calls would not
    make them distinct, so it stays."""
    names = [f"{'k' * 200}_{i}{'t' * 200}" for i in range(3)]
    rows = [[name, f"{i}.000", str(i + 1)] for i, name in enumerate(names)]
    columns = [Column("Name"), Column("Self ms", True), Column("Calls", True, drop=1)]
    lines = draw(fitted_table(columns, rows, 80), 80)
    assert [c[-2:] for c in body(lines, len(rows))] == [r[1:] for r in rows]
    assert "hidden" not in " ".join(lines)


def test_an_empty_column_is_hidden_even_when_the_table_fits():
    """One rule at any width, for a kept column (drop 0) too: a column with no value in
    any row is not drawn, and the caption names it."""
    columns = [Column("Name"), Column("Self host", True), Column("Self device", True),
               Column("Host total", True, drop=4)]
    rows = [["gpuHello()", "", "105.280us", "N/A"], ["copy", "N/A", "2.000us", ""]]
    lines = draw(fitted_table(columns, rows, 80), 80)
    assert lines[0].split() == ["Name", "Self", "device"]
    assert body(lines, 2) == [["gpuHello()", "105.280us"], ["copy", "2.000us"]]
    # (the caption wraps at the table's width)
    assert " ".join(lines[4:]) == "hidden, N/A on every row: Self host, Host total"


def test_a_device_only_summary_shows_no_host_columns():
    """A rocprofv3 kernel trace holds no host time (tests/data/rocprof/csc-training__...):
    both host columns are hidden and named, at 80 columns and with --wide alike."""
    from click.testing import CliRunner

    from traceconv.cli import app

    trace = "tests/data/rocprof/csc-training__hip-programming__kernel_trace.csv"
    for wide in ([], ["--wide"]):
        lines = CliRunner().invoke(app, ["summary", trace, *wide]).output.splitlines()
        assert lines[0].split()[:3] == ["Name", "Kind", "Self"] and "host" not in lines[0]
        assert "hidden, N/A on every row: Self host, Host total" in [
            line.strip() for line in lines]


def test_a_diff_of_a_report_with_itself_names_its_hidden_changes_as_none():
    """A change column's empty cell is no change (or no figure to change), not N/A: a
    Paddle report against itself hides every Δ column under those words."""
    from click.testing import CliRunner

    from traceconv.cli import app

    report = "samples/paddle/report_gpu_before.txt"
    result = CliRunner().invoke(app, ["diff", report, report, "--section", "memcpy"])
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines()]
    assert "hidden, no change or N/A on every row: Δ calls, Δ total ms, Δ CPU ms, " \
        "Δ GPU ms" in lines
    assert not any(line.startswith("hidden, N/A") for line in lines)
