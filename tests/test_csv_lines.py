"""The one line rule of every CSV reader: a CSV line ends at ``\\n``, ``\\r\\n`` or a lone
``\\r`` (as the ``csv`` module, pandas and rocprof's and nsys's own readers end one), the same
bytes read the same through every route (a plain file, a ``.gz``, standard input), and a
CSV pasted into a page reads as the clean file.

Expected rows come from the standard ``csv`` module on the same bytes, or from the cells the
test wrote itself; never from the reader.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from tests.conftest import DATA
from traceconv import registry
from traceconv.formats.csv_rows import source_rows
from traceconv.formats.rocprof.csv_table import read_table
from traceconv.io import Source

ROOT = Path(__file__).resolve().parent.parent
KERNELS = DATA / "rocprof" / "ROCm__rocprofiler-sdk__docs_kernel_trace.csv"
API_SUM = DATA / "nsys_stats" / "cuda_api_sum.csv"
# the breaks str.splitlines knows besides "\r" and "\n": characters of a cell in a CSV
OTHER_BREAKS = ["\x1d", "\x1c", "\x1e", "\x85", "\u2028", "\u2029", "\x0c", "\x0b"]


def csv_module_rows(data: bytes) -> list[list[str]]:
    """The rows ``csv.reader`` reads from ``data`` opened as the csv module asks
    (``newline=""``), blank lines left out."""
    return [row for row in csv.reader(io.StringIO(data.decode(), newline="")) if row]


def with_kernel_named(name: str, quoted: bool) -> bytes:
    """The real kernel trace with its first kernel renamed ``name`` (quoted or not)."""
    text = KERNELS.read_text(encoding="utf-8")
    first = '"void addition_kernel<float>(float*, float const*, float const*, int, int)"'
    return text.replace(first, f'"{name}"' if quoted else name, 1).encode()


# -- 1. a break str.splitlines knows is a character of a cell --------------------------------

@pytest.mark.parametrize("quoted", [True, False], ids=["quoted", "unquoted"])
@pytest.mark.parametrize("other", OTHER_BREAKS, ids=[f"U+{ord(c):04X}" for c in OTHER_BREAKS])
def test_a_cell_holding_another_break_is_one_cell_of_its_row(other, quoted, tmp_path):
    data = with_kernel_named(f"void k{other}x(float*)", quoted)
    path = tmp_path / "kernel_trace.csv"
    path.write_bytes(data)
    expected = csv_module_rows(data)
    table = read_table(Source(path))
    assert [table.header, *table.rows] == expected
    assert table.left_out.cut == table.left_out.width_mismatch == 0
    name_at = expected[0].index("Kernel_Name")
    trace = traceconv.load(path)
    assert sorted(s.name for s in trace.iter_slices()) == sorted(
        row[name_at] for row in expected[1:])
    assert not trace.diagnostics.as_list()


def test_an_nsys_stats_name_holding_a_line_separator_is_one_row(tmp_path):
    text = API_SUM.read_text(encoding="utf-8")
    data = text.replace(",cuLaunchKernel", ',"cuLaunch\u2028Kernel"', 1).replace(
        ",cuMemAlloc_v2", ",cuMem\x85Alloc_v2", 1).encode()
    path = tmp_path / "cuda_api_sum.csv"
    path.write_bytes(data)
    expected = csv_module_rows(data)
    trace = traceconv.load(path)
    assert [s.name for s in trace.stats] == [row[-1] for row in expected[1:]]
    assert "cuLaunch\u2028Kernel" in {s.name for s in trace.stats}
    assert not trace.diagnostics.as_list()


def test_a_quoted_cell_holding_a_newline_is_one_row(tmp_path):
    data = with_kernel_named("void k(float*,\r\n  int)", quoted=True)
    path = tmp_path / "kernel_trace.csv"
    path.write_bytes(data)
    table = read_table(Source(path))
    assert [table.header, *table.rows] == csv_module_rows(data)
    assert len(table.rows) == len(csv_module_rows(KERNELS.read_bytes())) - 1


# -- 2. line ends left as the bytes hold them, the same through every route ------------------

def read_rows(path: Path, route: str, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The rows :func:`source_rows` reads from ``path``'s bytes given as a plain file, a
    gzip or standard input."""
    data = path.read_bytes()
    if route == "gzip":
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(data))
    elif route == "stdin":
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
        path = Path("-")
    return [row for row in source_rows(Source(path), written_by="a test") if row]


ROUTES = ["file", "gzip", "stdin"]
_CELL = st.text(st.sampled_from(["a", "7", " ", ",", '"', "\r", "\n", *OTHER_BREAKS]),
                max_size=6)


@settings(max_examples=80, derandomize=True, deadline=None)
@given(rows=st.lists(st.tuples(st.lists(_CELL, min_size=1, max_size=4),
                               st.sampled_from(["\n", "\r\n", "\r"]),
                               st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL])),
                     min_size=1, max_size=6))
def test_every_route_reads_the_rows_written(rows, tmp_path_factory):
    """Rows written by the csv module, each with its own line end (a lone CR, CRLF, LF)
    and its cells quoted only where they must be or always, read back as written and as
    ``csv.reader`` reads the bytes, through a plain file, a gzip and standard input alike."""
    text = ""
    for cells, end, quoting in rows:
        # (written with CRLF, so that a cell holding either is quoted: then given its own end)
        row = io.StringIO(newline="")
        csv.writer(row, lineterminator="\r\n", quoting=quoting).writerow(cells)
        text += row.getvalue().removesuffix("\r\n") + end
    data = text.encode()
    path = tmp_path_factory.mktemp("routes") / "t.csv"
    path.write_bytes(data)
    written = [cells for cells, _, _ in rows]
    assert csv_module_rows(data) == written
    with pytest.MonkeyPatch.context() as monkeypatch:
        for route in ROUTES:
            assert read_rows(path, route, monkeypatch) == written, route


def test_a_cr_only_file_keeps_a_quoted_cr_as_the_csv_module_does(tmp_path, monkeypatch):
    data = b'"Name","Calls"\r"a",1\r"b\rc",2\r'
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    for route in ROUTES:
        assert read_rows(path, route, monkeypatch) == [["Name", "Calls"], ["a", "1"],
                                                       ["b\rc", "2"]]


def test_crlf_after_a_head_of_lone_crs_is_one_line_end(tmp_path):
    """A file whose first 64 KiB end lines in a lone CR and whose rest in CRLF (two tools'
    output joined): every CRLF is one line end, as the csv module reads it, not a line
    and a blank one (which cost 1,500 bogus malformed rows here)."""
    header = ("Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,"
              "Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree")
    rows = [f"{i * 100},{i * 100 + 50},50,0,50,range_{i},1,1,0,0,{i + 1},,:{i + 1},range_{i}"
            for i in range(3000)]
    data = (header + "\r" + "\r".join(rows[:1500]) + "\r" + "\r\n".join(rows[1500:])
            + "\r\n").encode()
    assert b"\n" not in data[:1 << 16]
    path = tmp_path / "nvtx_pushpop_trace.csv"
    path.write_bytes(data)
    trace = traceconv.load(path)
    assert trace.counts()["slices"] == len(csv_module_rows(data)) - 1 == 3000
    assert not trace.diagnostics.as_list()


# -- 3. a CSV pasted into a page reads as the clean file -------------------------------------

CSV_FORMATS = sorted(info.name for info in registry.all_formats() if info.csv)
PASTES = {
    "quote": lambda text: "".join("> " + line for line in text.splitlines(True)),
    "fence": lambda text: f"```csv\n{text}```\n",
    "quoted fence": lambda text: "".join(
        "> " + line for line in f"```csv\n{text}```\n".splitlines(True)),
    "fenced nbsp": lambda text: "```\n" + text.replace(" ", "\u00a0") + "```\n",
    "quoted nbsp": lambda text: "".join(
        "> " + line for line in text.replace(" ", "\u00a0").splitlines(True)),
}


def csv_seeds() -> list[tuple[str, Path]]:
    return [(name, ROOT / seed.path) for name in CSV_FORMATS
            for seed in registry.seed_samples(name) if seed.syntax == "csv"]


def rows_of(path: Path) -> list[tuple]:
    """What a read holds, row by row: its statistics, its slices with their args."""
    trace = traceconv.load(path)
    return ([("stat", s.section, s.name, s.calls, s.total_ns) for s in trace.stats]
            + [("slice", s.name, s.start, s.dur, sorted(s.args.items()))
               for s in trace.iter_slices()])


def test_every_reader_of_csv_seeds_reads_csv_rows():
    """A reader whose seeds are CSV says so in the registry (its sniffer then sees the
    head as its rows are read, and the census below reads it)."""
    csv_seeded = {name for name, seeds in registry.SEED_SAMPLES.items()
                  if any(seed.syntax == "csv" for seed in seeds)}
    assert csv_seeded == set(CSV_FORMATS) == {"nsys-stats", "rocprof"}


@pytest.mark.parametrize("paste", PASTES)
@pytest.mark.parametrize(("name", "path"), csv_seeds(), ids=lambda v: getattr(v, "name", v))
def test_a_pasted_csv_reads_as_the_clean_file(name, path, paste, tmp_path):
    clean = path.read_text(encoding="utf-8")
    pasted = tmp_path / path.name
    pasted.write_text(PASTES[paste](clean), encoding="utf-8")
    assert registry.detect(Source(str(pasted))).name == name
    assert rows_of(pasted) == rows_of(path)
    assert traceconv.load(pasted).diagnostics.count("csv.pasted") == 1


def test_nbsp_on_every_line_is_a_paste(tmp_path):
    """No quote, no fence: every line holding an NBSP (each line of this report holds a
    space) is evidence enough; the rows are the clean file's."""
    clean = DATA / "nsys_stats" / "cuda_gpu_mem_time_sum.csv"
    text = clean.read_text(encoding="utf-8")
    assert all(" " in line for line in text.splitlines() if line.strip())
    pasted = tmp_path / clean.name
    pasted.write_text(text.replace(" ", "\u00a0"), encoding="utf-8")
    assert rows_of(pasted) == rows_of(clean)
    assert traceconv.load(pasted).diagnostics.count("csv.pasted") == 1


def test_nbsp_on_some_lines_only_is_data(tmp_path):
    """The kernel names hold NBSPs, the header none: no evident paste; the cells are read as
    the csv module reads them, NBSPs kept."""
    data = KERNELS.read_text(encoding="utf-8").replace(" ", "\u00a0").encode()
    path = tmp_path / KERNELS.name
    path.write_bytes(data)
    table = read_table(Source(path))
    assert [table.header, *table.rows] == csv_module_rows(data)
    assert all("\u00a0" in name for name in table.column("Kernel_Name"))
    assert traceconv.load(path).diagnostics.count("csv.pasted") == 0


@pytest.mark.parametrize("paste", ["quote", "quoted fence", "fenced nbsp"])
def test_a_paste_has_the_clean_files_cells_through_every_route(paste, tmp_path, monkeypatch):
    """Every cell, a quoted name spanning two lines included (each line quoted)."""
    clean = with_kernel_named("void k(float*,\n  int)", quoted=True)
    pasted = tmp_path / "kernel_trace.csv"
    pasted.write_text(PASTES[paste](clean.decode()), encoding="utf-8")
    for route in ROUTES:
        assert read_rows(pasted, route, monkeypatch) == csv_module_rows(clean), route


@pytest.mark.parametrize("rows", [1, 7], ids=["one row", "every row but the header"])
def test_a_cell_that_starts_like_a_quote_is_data(rows, tmp_path):
    """Lines that start with "> " among lines that do not: no paste, the cells as written."""
    data = KERNELS.read_bytes().replace(b'"KERNEL_DISPATCH"', b"> KERNEL_DISPATCH", rows)
    assert data.count(b"\n> ") == rows
    path = tmp_path / "kernel_trace.csv"
    path.write_bytes(data)
    expected = csv_module_rows(data)
    assert sum(row[0] == "> KERNEL_DISPATCH" for row in expected) == rows
    table = read_table(Source(path))
    assert [table.header, *table.rows] == expected
    assert traceconv.load(path).diagnostics.count("csv.pasted") == 0


def test_an_nbsp_in_a_cell_beside_plain_spaces_is_data(tmp_path):
    data = with_kernel_named("void k<float>(float*,\u00a0int)", quoted=True)
    path = tmp_path / "kernel_trace.csv"
    path.write_bytes(data)
    table = read_table(Source(path))
    assert [table.header, *table.rows] == csv_module_rows(data)
    assert "void k<float>(float*,\u00a0int)" in set(table.column("Kernel_Name"))


# -- 4. a double-spaced CSV reads as the clean file, its lines numbered as written ------------

SPACINGS = {   # a blank line after every line, as a chat, an export or CR CR LF ends give it
    "LF LF": lambda text: text.replace("\n", "\n\n"),
    "CRLF CRLF": lambda text: text.replace("\n", "\r\n\r\n"),
    "CR CR LF": lambda text: text.replace("\n", "\r\r\n"),
    "quoted": lambda text: "".join("> " + line + ">\n" for line in text.splitlines(True)),
}
DOUBLED_FILES = [*(path for _, path in csv_seeds()),
                 DATA / "nsys_stats" / "nvtx_sum_stdout.csv",
                 DATA / "rocprof" / "jimw567__rocprof-unified-viewer__decode_stall_counter_collection.csv",
                 DATA / "rocprof" / "dalg24__kokkos__results.stats.csv"]


def _findings(trace: traceconv.Trace) -> list[tuple]:
    """What a read found but the spacing and a page's marks (a quote's)."""
    return sorted((d["code"], d["count"]) for d in trace.diagnostics.as_list()
                  if d["code"] not in ("input.double_spaced", "csv.pasted"))


@pytest.mark.parametrize("spacing", SPACINGS)
@pytest.mark.parametrize("path", DOUBLED_FILES, ids=lambda p: p.name)
def test_a_double_spaced_csv_reads_as_the_clean_file(path, spacing, tmp_path):
    """Every CSV reader (nsys stats read no table of one: each blank line ended a table)."""
    clean = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
    doubled = tmp_path / path.name
    doubled.write_bytes(SPACINGS[spacing](clean).encode())
    assert rows_of(doubled) == rows_of(path)
    trace = traceconv.load(doubled)
    assert trace.diagnostics.count("input.double_spaced") == 1
    assert _findings(trace) == _findings(traceconv.load(path))


@pytest.mark.parametrize("spacing", ["LF LF", "CRLF CRLF", "CR CR LF"])
def test_a_double_spaced_csvs_places_are_its_lines_as_written(spacing, tmp_path):
    """Rows of another width are found at their line in the file as written (the csv
    module counts a row and the blank line after it as one line)."""
    clean = (DATA / "nsys_stats" / "nvtx_sum_stdout.csv").read_text(encoding="utf-8")
    doubled = SPACINGS[spacing](clean)
    path = tmp_path / "nvtx_sum.csv"
    path.write_text(doubled, encoding="utf-8", newline="")
    lines = doubled.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header = next(line for line in lines if line.startswith("Time (%)"))
    short = next(at for at, line in enumerate(lines, 1)
                 if line and line.count(",") < header.count(",") and line[0].isdigit())
    example = traceconv.load(path).diagnostics["csv.row_width_mismatch"].example
    assert example.startswith(f"line {short}:")
    rocprof = KERNELS.read_text(encoding="utf-8").replace("\r\n", "\n")
    third_row = rocprof.split("\n")[3]
    doubled = SPACINGS[spacing](rocprof.replace(third_row, third_row.rsplit(",", 1)[0]))
    short = 1 + doubled.replace("\r\n", "\n").replace("\r", "\n").split("\n").index(
        third_row.rsplit(",", 1)[0])
    path = tmp_path / "kernel_trace.csv"
    path.write_text(doubled, encoding="utf-8", newline="")
    example = traceconv.load(path).diagnostics["csv.row_width_mismatch"].example
    assert example.startswith(f"line {short}:")
