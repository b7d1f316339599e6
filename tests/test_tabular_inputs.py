"""Hostile tabular inputs, for every CSV and SQLite reader at once: a CSV row of another
width than its header, a CSV cut inside its last row, a text cell of a database that is not
UTF-8. Each is made from a real file; every expected value is counted here from the file
with the standard ``csv`` and ``sqlite3`` modules."""

from __future__ import annotations

import csv
import io
import lzma
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

import traceconv
from tests.conftest import DATA, SAMPLES

DECODE = SAMPLES / "rocprof" / "jimw567__rocprof-unified-viewer__decode_"
NVTX_TRACE = SAMPLES / "nsys" / "pax_fsdp4_proc0.nvtx_pushpop_trace.csv.xz"

Key = tuple[object, ...]


def slice_keys(trace: traceconv.Trace) -> Counter[Key]:
    return Counter((s.name, s.start, s.start + s.dur) for s in trace.iter_slices())


def stat_keys(trace: traceconv.Trace) -> Counter[Key]:
    return Counter((s.name, s.calls) for s in trace.stats)


# each CSV reader's real file: (its text, how a row is keyed, how the trace is keyed)
CSV_CASES: dict[str, tuple[Callable[[], str], Callable[[dict[str, str]], Key],
                           Callable[[traceconv.Trace], Counter[Key]]]] = {
    "rocprofv3 hip api trace": (
        lambda: Path(f"{DECODE}hip_api_trace.csv").read_text(),
        lambda r: (r["Function"], int(r["Start_Timestamp"]), int(r["End_Timestamp"])),
        slice_keys),
    "rocprofv3 kernel trace": (
        lambda: Path(f"{DECODE}kernel_trace.csv").read_text(),
        lambda r: (r["Kernel_Name"], int(r["Start_Timestamp"]), int(r["End_Timestamp"])),
        slice_keys),
    "rocprof v1 results.csv": (
        lambda: (SAMPLES / "rocprof" / "llamacpp_results.csv").read_text(),
        lambda r: (r["KernelName"], int(r["BeginNs"]), int(r["EndNs"])), slice_keys),
    "rocprof v1 stats": (
        lambda: (SAMPLES / "rocprof" / "llamacpp_results.stats.csv").read_text(),
        lambda r: (r["Name"], int(r["Calls"])), stat_keys),
    "nsys stats nvtx trace": (
        lambda: "".join(io.StringIO(lzma.decompress(NVTX_TRACE.read_bytes()).decode())
                        .readlines()[:1001]),
        lambda r: (r["Name"], int(r["Start (ns)"]), int(r["End (ns)"])), slice_keys),
    "nsys stats summary": (
        lambda: (DATA / "nsys_stats" / "cuda_api_sum.csv").read_text(),
        lambda r: (r["Name"], int(r["Num Calls"])), stat_keys),
}


def expected(lines: list[str], key: Callable[[dict[str, str]], Key],
             leave_out: set[int]) -> Counter[Key]:
    """The rows of ``lines`` but the lines at ``leave_out``, keyed."""
    kept = [line for at, line in enumerate(lines) if at not in leave_out]
    return Counter(key(r) for r in csv.DictReader(kept))


def rewritten(line: str, change: Callable[[list[str]], list[str]]) -> str:
    """``line`` with its cells changed, every cell quoted (no name split by commas)."""
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(
        change(next(csv.reader([line]))))
    return out.getvalue()


def write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / f"{name.replace(' ', '_')}.csv"
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize("case", CSV_CASES)
def test_rows_of_another_width_are_left_out_and_counted(tmp_path: Path, case: str):
    """One row with a cell too many (after its first), one with a cell too few: neither is
    read with its cells in the wrong columns."""
    text, key, keys = CSV_CASES[case]
    lines = text().splitlines(keepends=True)
    header = next(csv.reader([lines[0]]))
    longer, shorter = 3, len(lines) - 3
    lines[longer] = rewritten(lines[longer], lambda cells: [cells[0], "7", *cells[1:]])
    lines[shorter] = rewritten(lines[shorter], lambda cells: [cells[0], *cells[2:]])
    trace = traceconv.load(write(tmp_path, case, lines))
    assert keys(trace) == expected(lines, key, {longer, shorter})
    left_out = trace.diagnostics["csv.row_width_mismatch"]
    assert left_out.count == 2
    assert left_out.example == f"line {longer + 1}: {len(header) + 1} cells, header {len(header)}"
    assert not trace.diagnostics.count("csv.row_cut")


@pytest.mark.parametrize("case", CSV_CASES)
@pytest.mark.parametrize("cut", ["after a cell", "inside a quoted field",
                                 "inside a quoted field, then a line end"])
def test_a_last_row_cut_is_left_out_and_counted(tmp_path: Path, case: str, cut: str):
    text, key, keys = CSV_CASES[case]
    lines = text().rstrip("\n").splitlines(keepends=True)
    last = len(lines) - 1
    if cut == "after a cell":   # (two cells and the start of the third: no line end)
        lines[last] = ",".join(lines[last].split(",")[:2]) + ",1"
    else:   # (the second cell opened, one character of it, never closed)
        quoted = rewritten(lines[last], lambda cells: cells)
        lines[last] = quoted[:quoted.index('","') + 4] + ("\n" if cut.endswith("end") else "")
    trace = traceconv.load(write(tmp_path, case, lines))
    assert keys(trace) == expected(lines, key, {last})
    assert trace.diagnostics.count("csv.row_cut") == 1
    assert trace.diagnostics["csv.row_cut"].example.startswith(f"line {last + 1}: ")
    assert not trace.diagnostics.count("csv.row_width_mismatch")


def last_column_is_a_number(lines: list[str]) -> bool:
    """Whether the last cell of the row before the last is a number (plain ``csv``)."""
    try:
        float(next(csv.reader([lines[-2]]))[-1])
    except ValueError:
        return False
    return True


NUMBER_LAST = [case for case, (text, _, _) in CSV_CASES.items()
               if last_column_is_a_number(text().rstrip("\n").splitlines(keepends=True))]


def test_the_cases_ending_in_a_number_column():
    """(the nsys reports end in a name: a cut after their last comma leaves a name empty)"""
    assert NUMBER_LAST == ["rocprofv3 hip api trace", "rocprofv3 kernel trace",
                           "rocprof v1 results.csv", "rocprof v1 stats"]


@pytest.mark.parametrize("case", NUMBER_LAST)
def test_a_last_row_cut_right_after_its_last_comma_is_left_out(tmp_path: Path, case: str):
    """Every cell but the last, which is empty where its column holds numbers, and no
    line end: the row was cut, not written with an empty number."""
    text, key, keys = CSV_CASES[case]
    lines = text().rstrip("\n").splitlines(keepends=True)
    last = len(lines) - 1
    lines[last] = lines[last][:lines[last].rindex(",") + 1]
    assert len(next(csv.reader([lines[last]]))) == len(next(csv.reader([lines[0]])))
    trace = traceconv.load(write(tmp_path, case, lines))
    assert keys(trace) == expected(lines, key, {last})
    assert trace.diagnostics.count("csv.row_cut") == 1
    assert trace.diagnostics["csv.row_cut"].example == (
        f"line {last + 1}: the last cell empty where its column holds numbers, no line end")


@pytest.mark.parametrize("case", NUMBER_LAST)
def test_an_empty_last_cell_with_its_line_end_is_a_row(tmp_path: Path, case: str):
    """The same row with its line end is whole as written (no cut to count)."""
    text, key, keys = CSV_CASES[case]
    lines = text().rstrip("\n").splitlines(keepends=True)
    lines[-1] = lines[-1][:lines[-1].rindex(",") + 1] + "\n"
    trace = traceconv.load(write(tmp_path, case, lines))
    assert not trace.diagnostics.count("csv.row_cut")


@pytest.mark.parametrize("case", [c for c in CSV_CASES if c.startswith("rocprof")])
def test_a_file_cut_inside_its_header_says_so_and_where(tmp_path: Path, case: str):
    """Cut inside the header's last quoted name (before its closing quote): not "an empty
    file", but where it stops (line 1, the column after the text left)."""
    header = CSV_CASES[case][0]().splitlines()[0]
    kept = header[:header.rindex('"')]
    path = write(tmp_path, case, [kept])
    with pytest.raises(traceconv.InputError) as error:
        traceconv.load(path, format="rocprof")
    assert str(error.value) == (f"{path}:line 1:{len(kept) + 1}: the file stops inside its "
                                "CSV header (a quoted field never closed): cut short, no "
                                "row to read")


@pytest.mark.parametrize("case", CSV_CASES)
def test_a_whole_last_row_without_its_line_end_is_read(tmp_path: Path, case: str):
    text, key, keys = CSV_CASES[case]
    lines = text().rstrip("\r\n").splitlines(keepends=True)
    trace = traceconv.load(write(tmp_path, case, lines))
    assert keys(trace) == expected(lines, key, set())
    assert not [d.code for d in trace.diagnostics if d.code.startswith("csv.")]


@pytest.mark.parametrize("name", ["ROCm__rocprofiler-sdk__docs_memory_copy_trace.csv",
                                  "ROCm__rocprofiler-sdk__docs_hip_api_stats.csv"])
def test_real_files_that_end_without_a_line_end_read_whole(name: str):
    path = DATA / "rocprof" / name
    assert not path.read_bytes().endswith(b"\n")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    trace = traceconv.load(path)
    assert len(trace.slices) + len(trace.stats) == len(rows)
    assert not [d.code for d in trace.diagnostics if d.code.startswith("csv.")]


def test_unquoted_kernel_names_with_commas_are_still_joined_back():
    """The one row of another width that is read on purpose (rocprof v1's unquoted
    names): the Kokkos statistics file reads whole, nothing left out."""
    path = DATA / "rocprof" / "dalg24__kokkos__results.stats.csv"
    with path.open(newline="") as f:
        header, *rows = list(csv.reader(f))
    split = [r for r in rows if len(r) != len(header)]
    trace = traceconv.load(path)
    assert len(trace.stats) == len(rows)
    assert trace.diagnostics.count("rocprof.name_rejoined") == len(split) == 5
    assert not trace.diagnostics.count("csv.row_width_mismatch")


# --- SQLite: a text cell that is not UTF-8 -------------------------------------------------

def damaged_copy(source: Path, tmp_path: Path, table: str, column: str, row: str) -> Path:
    """A copy of the database at ``source`` whose ``table.column`` at ``row`` (an SQL
    expression of a rowid) starts with the byte 0xff: text, not UTF-8."""
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with sqlite3.connect(path) as db:
        db.execute(f'update "{table}" set "{column}" = cast(x\'ff\' as text) || "{column}" '
                   f"where rowid = ({row})")
    return path


def replaced(path: Path, sql: str) -> list[str]:
    """The texts ``sql`` selects, their bytes decoded as UTF-8 with replacement."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        db.text_factory = lambda data: data.decode("utf-8", "replace")
        return [row[0] for row in db.execute(sql)]


def check_read_with_one_replaced(path: Path, damaged: str) -> traceconv.Trace:
    trace = traceconv.load(path)
    found = trace.diagnostics["sqlite.invalid_utf8"]
    assert found.count == 1 and found.example == damaged[:80]
    return trace


def test_a_rocprof_results_db_with_a_name_not_utf8(tmp_path: Path):
    path = damaged_copy(SAMPLES / "rocprof" / "llamacpp_results.db", tmp_path, "KERN",
                        "KernelName", "select min(rowid) + 2 from KERN")
    names = replaced(path, "select KernelName from KERN")
    damaged = next(n for n in names if "\ufffd" in n)
    trace = check_read_with_one_replaced(path, damaged)
    with sqlite3.connect(path) as db:
        assert len(trace.slices) == db.execute("select count(*) from KERN").fetchone()[0] == 64
    # (rocprof stored the names with the CSV's quotes: read without, this one's kept)
    assert Counter(s.name for s in trace.iter_slices()) == Counter(
        n if n == damaged else n.strip('"') for n in names)


def test_an_nsys_export_with_a_kernel_name_not_utf8(tmp_path: Path):
    source = SAMPLES / "nsys" / "mock_rtx3080_nsys2026.1.sqlite"
    name = "coalesce(demangledName, shortName)"   # (the name nsys gives a kernel)
    first_name = f"select {name} from CUPTI_ACTIVITY_KIND_KERNEL limit 1"
    path = damaged_copy(source, tmp_path, "StringIds", "value", first_name)
    damaged = replaced(path, f"select value from StringIds where id = ({first_name})")[0]
    trace = check_read_with_one_replaced(path, damaged)
    with sqlite3.connect(path) as db:
        kernels = db.execute(f"select count(*) from CUPTI_ACTIVITY_KIND_KERNEL where {name} = "
                             f"({first_name})").fetchone()[0]
    assert sum(1 for s in trace.iter_slices() if s.name == damaged) == kernels > 0
    assert trace.counts() == traceconv.load(source).counts()   # (nothing else changed)


def test_an_rpd_trace_with_an_api_name_not_utf8(tmp_path: Path):
    source = SAMPLES / "rpd" / "matmul_result.rpd"
    path = damaged_copy(source, tmp_path, "rocpd_string", "string",
                        "select apiName_id from rocpd_api limit 1")
    damaged = replaced(path, "select string from rocpd_string where id = "
                             "(select apiName_id from rocpd_api limit 1)")[0]
    trace = check_read_with_one_replaced(path, damaged)
    with sqlite3.connect(path) as db:
        calls = db.execute("select count(*) from rocpd_api where apiName_id = "
                           "(select apiName_id from rocpd_api limit 1)").fetchone()[0]
    assert sum(1 for s in trace.iter_slices() if s.name == damaged) == calls > 0
    assert trace.counts() == traceconv.load(source).counts()


def test_a_rocpd_database_with_a_region_name_not_utf8(tmp_path: Path):
    from tests.rocpd_database import UUID, build

    source = tmp_path / "built" / "1234_results.db"
    source.parent.mkdir()
    build(source, Path(f"{DECODE}kernel_trace.csv"), Path(f"{DECODE}hip_api_trace.csv"))
    first_name = f'select name_id from "rocpd_region{UUID}" limit 1'
    path = damaged_copy(source, tmp_path, f"rocpd_string{UUID}", "string", first_name)
    damaged = replaced(path, f'select string from "rocpd_string{UUID}" where id = '
                             f"({first_name})")[0]
    trace = check_read_with_one_replaced(path, damaged)
    with sqlite3.connect(path) as db:
        regions = db.execute(f'select count(*) from "rocpd_region{UUID}" where name_id = '
                             f"({first_name})").fetchone()[0]
    assert sum(1 for s in trace.iter_slices() if s.name == damaged) == regions > 0
    assert trace.counts() == traceconv.load(source).counts()
