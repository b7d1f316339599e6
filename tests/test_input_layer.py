"""The input layer's guarantees, class by class, for every registered reader where the class
applies (readers come from the registry, samples from ``samples/`` by detection).

- running out of memory or an OS error anywhere in reading: one line naming the input;
- compressed inputs (gzip, xz, bz2): read alike, bounded by ``--max-bytes``, zstd refused;
- special files: a FIFO with no writer is refused in bounded time by every reader;
- SQLite: a ``-wal`` beside the database is read (or said to be ignored), computed columns
  and views never run, a step budget;
- number text of thousands of digits: a counted repair or one line, never a crash;
- text lines of any length: cut and counted, memory bounded;
- the allocator snapshot's stack-text bomb: refused before the text exists.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import json
import lzma
import os
import pickle
import re
import shutil
import sqlite3
import tracemalloc
from functools import cache
from pathlib import Path

import pytest
from cli_errors import one_error_line, run
from hypothesis import given, settings
from hypothesis import strategies as st
from traced_peak import traced_peak

import traceconv
from traceconv import io as tio
from traceconv import registry, special_files, sqlite_access
from traceconv.errors import InputError, TraceconvError
from traceconv.formats import text_lines as text_lines_module
from traceconv.io import Source

SAMPLES = Path(__file__).parent.parent / "samples"
READERS = sorted(info.name for info in registry.all_formats() if info.reads)


@cache
def samples_by_reader() -> dict[str, list[Path]]:
    """Every bundled sample, under the reader that detection picks for it."""
    found: dict[str, list[Path]] = {}
    for path in sorted(SAMPLES.rglob("*")):
        if not path.is_file() or path.suffix == ".md":
            continue
        try:
            info = registry.detect(Source(path))
        except TraceconvError:
            continue
        if info.reads:
            found.setdefault(info.name, []).append(path)
    return found


@cache
def smallest_sample(reader: str) -> Path | None:
    """The smallest bundled sample of ``reader`` that it reads."""
    for path in sorted(samples_by_reader().get(reader, []), key=lambda p: p.stat().st_size):
        try:
            traceconv.load(path, format=reader)
        except TraceconvError:
            continue
        return path
    return None


def sqlite_samples(smallest: bool = False) -> list[Path]:
    """The bundled samples that are SQLite databases (plain or gzipped), any reader (the
    smallest of each reader's only, with ``smallest``)."""
    out = []
    for paths in samples_by_reader().values():
        found = sorted((p for p in paths if Source(p).head.startswith(b"SQLite format 3\0")),
                       key=lambda p: len(Source(p).read_bytes()))
        out += found[:1] if smallest else found
    return sorted(out)


def plain_copy(path: Path, folder: Path) -> Path:
    """``path`` decompressed into ``folder`` (as it is when not compressed)."""
    target = folder / path.name.removesuffix(".gz")
    target.write_bytes(Source(path).read_bytes())
    return target


# -- 1. running out of memory, OS errors ------------------------------------------------------

FAILURES = [
    (MemoryError(), "ran out of memory"),
    (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), os.strerror(errno.ENOSPC)),
    (OSError(errno.EIO, os.strerror(errno.EIO)), os.strerror(errno.EIO)),
    (PermissionError(errno.EACCES, os.strerror(errno.EACCES)), os.strerror(errno.EACCES)),
    (IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)), os.strerror(errno.EISDIR)),
    (ValueError("Exceeds the limit (4300 digits) for integer string conversion"),
     "4,300 digits"),
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("failure", FAILURES, ids=lambda f: type(f[0]).__name__ + str(
    getattr(f[0], "errno", "")))
def test_a_failure_inside_any_reader_is_one_line_naming_the_input(
        reader: str, failure: tuple[BaseException, str], tmp_path: Path, monkeypatch):
    exc, words = failure
    module = registry.get(reader).load()

    def fails(source, **options):
        raise exc

    monkeypatch.setattr(module, "read", fails)
    path = tmp_path / "input.bin"
    path.write_bytes(b"anything")
    with pytest.raises(InputError) as caught:
        traceconv.load(path, format=reader)
    assert str(caught.value).startswith(f"{path}: ") and words in str(caught.value)


@pytest.mark.parametrize("failure", FAILURES[:3], ids=["memory", "nospace", "io"])
def test_the_command_line_says_one_line_for_a_failure_while_reading(
        failure: tuple[BaseException, str], monkeypatch):
    exc, words = failure
    sample = smallest_sample("chrome")
    module = registry.get("chrome").load()

    def fails(source, **options):
        raise exc

    monkeypatch.setattr(module, "read", fails)
    one_error_line(run("info", str(sample)), f"{sample}: ", words)


def test_a_failure_outside_reading_is_one_line_too(capsys):
    from traceconv.cli.app import handled_errors

    for exc in (MemoryError(), OSError(errno.ENOSPC, "No space left on device", "out.json")):
        with pytest.raises(SystemExit) as done, handled_errors():
            raise exc
        assert done.value.code == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("traceconv: error: ")
        assert "internal error" not in err[0]


@pytest.mark.parametrize("command", [
    ("info",), ("info", "--format", "chrome"), ("summary",), ("advise",), ("memory",),
    ("check",), ("critical-path",), ("convert", "--to", "chrome"),
    ("report", "-o", "{out}/report.html"), ("memflow", "-o", "{out}/memory.svg")],
    ids=lambda c: " ".join(c[:1] + c[1:2]))
def test_a_folder_given_as_input_is_one_line_saying_which_files_to_give(
        command: tuple[str, ...], tmp_path: Path):
    """A run folder (rocprofv3 writes one) is not read, by any command: the line says so
    and names the files to give (docs/rocprof.md), not just the system's "Is a directory"."""
    run_folder = tmp_path / "host"
    run_folder.mkdir()
    (run_folder / "1_kernel_trace.csv").write_text("")
    options = [a.format(out=tmp_path) for a in command[1:]]
    line = one_error_line(run(command[0], *options, str(run_folder)), f"{run_folder}: ",
                          "a folder, which is not read", f"{run_folder}/*_trace.csv")
    assert "Is a directory" not in line


# -- 2. compressed inputs ---------------------------------------------------------------------

COMPRESSORS = {"gz": lambda d: gzip.compress(d, 1), "xz": lambda d: lzma.compress(d, preset=0),
               "bz2": lambda d: bz2.compress(d, 1)}


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_every_reader_reads_each_compression_as_the_plain_file(reader: str, kind: str,
                                                               tmp_path: Path):
    sample = smallest_sample(reader)
    if sample is None:
        pytest.skip(f"no bundled sample of {reader}")
    data = Source(sample).read_bytes()
    if len(data) > 8 << 20:
        pytest.skip(f"the smallest {reader} sample is {len(data):,} bytes")
    stem = sample.name.removesuffix(".gz").removesuffix(".xz")
    plain = tmp_path / stem
    plain.write_bytes(data)
    packed = tmp_path / "packed" / f"{stem}.{kind}"
    packed.parent.mkdir()
    packed.write_bytes(COMPRESSORS[kind](data))
    assert traceconv.load(packed, format=reader).counts() == traceconv.load(
        plain, format=reader).counts()


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
@pytest.mark.parametrize("reader", ["chrome", "nsys-stats", "migraphx", "torch-snapshot"])
def test_a_compression_bomb_stops_at_the_byte_limit(kind: str, reader: str, tmp_path: Path):
    path = tmp_path / f"bomb.{kind}"
    path.write_bytes(COMPRESSORS[kind](b"{" + b" " * (8 << 20)))
    assert path.stat().st_size < 1 << 20
    with pytest.raises(InputError, match="larger than the 1 MiB limit"):
        traceconv.load(path, format=reader, max_bytes=1 << 20)


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_a_cut_compressed_stream_is_one_line_for_every_reader(kind: str, reader: str,
                                                               tmp_path: Path):
    sample = smallest_sample(reader)
    if sample is None:
        pytest.skip(f"no bundled sample of {reader}")
    data = Source(sample).read_bytes()
    if len(data) > 8 << 20:
        pytest.skip(f"the smallest {reader} sample is {len(data):,} bytes")
    path = tmp_path / f"cut.{kind}"
    packed = COMPRESSORS[kind](data)
    path.write_bytes(packed[:len(packed) // 2])
    try:
        traceconv.load(path, format=reader)
    except TraceconvError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    # (or read up to the cut: a reader may count what it lost)


def test_zstd_is_refused_in_one_line(tmp_path: Path):
    path = tmp_path / "t.json.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(32))
    one_error_line(run("info", str(path)), str(path), "zstd")


# -- 3. special files -------------------------------------------------------------------------

@pytest.mark.parametrize("reader", READERS)
def test_a_fifo_without_writer_is_refused_by_every_reader(reader: str, tmp_path: Path,
                                                          monkeypatch):
    monkeypatch.setattr(special_files, "FIFO_WAIT_SECONDS", 0.05)
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        traceconv.load(fifo, format=reader)


@pytest.mark.parametrize("reader", READERS)
def test_an_endless_device_stops_at_the_byte_limit_for_every_reader(reader: str):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    # (read as far as the reader asks: one that refuses the first bytes stops there)
    with pytest.raises(InputError) as refused:
        traceconv.load("/dev/zero", format=reader, max_bytes=1 << 20)
    assert str(refused.value).startswith("/dev/zero:") and "\n" not in str(refused.value)


# -- 4. SQLite --------------------------------------------------------------------------------

def _largest_table(path: Path) -> str:
    with sqlite3.connect(path) as c:
        tables = [r[0] for r in c.execute("select name from sqlite_master where type='table' "
                                          "and name not like 'sqlite_%'")]
        return max(tables, key=lambda t: c.execute(f'select count(*) from "{t}"').fetchone()[0])


def _delete_half(c: sqlite3.Connection, table: str) -> None:
    c.execute(f'delete from "{table}" where rowid % 2 = 0')


@pytest.mark.slow
@pytest.mark.parametrize("sample", sqlite_samples(), ids=lambda p: p.name)
def test_a_write_ahead_log_beside_a_database_is_read(sample: Path, tmp_path: Path):
    # the truth: the same change committed into the file itself
    plain = plain_copy(sample, tmp_path)
    table = _largest_table(plain)
    truth = tmp_path / "truth" / plain.name
    truth.parent.mkdir()
    shutil.copy(plain, truth)
    with sqlite3.connect(truth) as c:
        _delete_half(c, table)
    # the same change left in a -wal, as a profiler killed before its checkpoint leaves it
    live = tmp_path / "live" / plain.name
    live.parent.mkdir()
    shutil.copy(plain, live)
    writer = sqlite3.connect(live, isolation_level=None)
    writer.execute("pragma journal_mode=wal")
    writer.execute("pragma wal_autocheckpoint=0")
    _delete_half(writer, table)
    crashed = tmp_path / "crashed" / plain.name
    crashed.parent.mkdir()
    for suffix in ("", "-wal"):
        shutil.copy(f"{live}{suffix}", f"{crashed}{suffix}")
    writer.close()
    before = sorted(os.listdir(crashed.parent))
    trace = traceconv.load(crashed)
    assert trace.counts() == traceconv.load(truth).counts()
    assert trace.diagnostics.count("sqlite.log_read") == 1
    assert sorted(os.listdir(crashed.parent)) == before   # nothing written beside it


def test_a_log_that_cannot_be_read_is_said_to_be_ignored(tmp_path: Path, monkeypatch):
    from traceconv.formats import _sqlite

    sample = plain_copy(sqlite_samples()[0], tmp_path)
    Path(f"{sample}-wal").write_bytes(b"\0" * 4096)

    def no_room(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(_sqlite, "with_log_replayed", no_room)
    trace = traceconv.load(sample)
    assert trace.diagnostics.count("sqlite.log_ignored") == 1


# (the table of names and its text column, per SQLite schema a reader reads)
_NAME_TABLES = (("rocpd_string", "string"), ("StringIds", "value"), ("KERN", "obj"))


def _string_table(path: Path) -> tuple[str, str]:
    """(a table of text, its text column) of an nsys, rpd or rocprof database."""
    with sqlite3.connect(path) as c:
        tables = {r[0] for r in c.execute("select name from sqlite_master")}
    return next(pair for pair in _NAME_TABLES if pair[0] in tables)


def _computing(path: Path, expression: str) -> None:
    """Make the text column of the names table a virtual generated ``expression`` (its
    other columns kept as they were)."""
    table, column = _string_table(path)
    with sqlite3.connect(path) as c:
        columns = [(r[1], r[2], r[5]) for r in c.execute(f'pragma table_info("{table}")')]
        defined = ", ".join(f'"{name}" {kind} as ({expression})' if name == column
                            else f'"{name}" {kind}{" primary key" if key else ""}'
                            for name, kind, key in columns)
        kept = ", ".join(f'"{name}"' for name, _, _ in columns if name != column)
        c.executescript(f"""
            alter table "{table}" rename to old_strings;
            create table "{table}" ({defined});
            insert into "{table}" ({kept}) select {kept} from old_strings;
            drop table old_strings;""")
    with sqlite3.connect(path) as c:
        c.execute("vacuum")


@pytest.mark.slow
@pytest.mark.parametrize("sample", sqlite_samples(smallest=True), ids=lambda p: p.name)
@pytest.mark.parametrize("expression", [
    "printf('%.*c', 50000000, 'x')",          # 50 MB per string: a memory bomb
    "hex(zeroblob(20000000))",                # 40 MB per string
    "replace(printf('%.*c', 4000000, 'x'), 'x', 'yy')",
])
def test_generated_columns_are_never_computed(sample: Path, expression: str, tmp_path: Path):
    path = plain_copy(sample, tmp_path)
    _computing(path, expression)
    trace, peak = traced_peak(lambda: traceconv.load(path))
    assert trace.diagnostics.count("sqlite.generated_column_ignored") == 1
    assert peak < 50 * path.stat().st_size + (64 << 20)


@pytest.mark.parametrize("sample", sqlite_samples(), ids=lambda p: p.name)
def test_a_view_in_place_of_a_table_is_never_run(sample: Path, tmp_path: Path):
    path = plain_copy(sample, tmp_path)
    table, _ = _string_table(path)
    with sqlite3.connect(path) as c:
        c.executescript(f"""
            alter table "{table}" rename to old_strings;
            create view "{table}" as with recursive r(x) as (select 1 union all
                select x + 1 from r where x < 1000000000000) select o.*
                from old_strings o, r;""")
    try:
        trace = traceconv.load(path)
    except TraceconvError as exc:   # (refused, or no longer a database traceconv knows)
        assert str(exc).startswith(f"{path}")
    else:   # read as if the table were missing
        assert trace.counts()["slices"] >= 0


@pytest.mark.slow
def test_a_query_past_the_step_budget_is_one_line(tmp_path: Path):
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as c:
        c.execute("create table t (a)")
    from traceconv.formats._sqlite import open_database

    with open_database(Source(path)) as db, pytest.raises(InputError, match="steps of work"):
        db.query("with recursive r(x) as (select 1 union all select x + 1 from r) "
                 "select count(*) from r", "t")
    assert sqlite_access.StepBudget(10**6).limit == sqlite_access.STEPS_PER_BYTE * 10**6


def test_a_value_longer_than_the_input_is_refused(tmp_path: Path):
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as c:
        c.execute("create table t (a)")
    from traceconv.formats._sqlite import open_database

    with open_database(Source(path)) as db:
        for expression in ("printf('%.*c', 5000000, 'x')", "hex(zeroblob(5000000))",
                           "replace(printf('%.*c', 600000, 'x'), 'x', 'yyyyyyyyyy')"):
            try:   # SQLite refuses, or makes NULL of, a value past the limit
                assert db.query(f"select {expression}", "t") == [(None,)]
            except InputError as exc:
                assert "too big" in str(exc)


# -- 5. number text ---------------------------------------------------------------------------

def _with_long_numbers(text: str, digits: int) -> str:
    """``text`` with every run of 2+ ASCII digits written as ``digits`` digits."""
    return re.sub(r"(?<![\d.])\d{2,}(?![\d.])", lambda m: "1" + "0" * (digits - 1), text)


def _text_samples() -> list[tuple[str, Path]]:
    out = []
    for reader, paths in sorted(samples_by_reader().items()):
        for path in paths:
            data = Source(path).read_bytes()[:1 << 20]
            if b"\0" not in data and len(Source(path).read_bytes()) < 4 << 20:
                out.append((reader, path))
                break
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("reader", "sample"), _text_samples(), ids=lambda v: str(v))
@pytest.mark.parametrize("digits", [20, 400, 5000])
def test_numbers_of_thousands_of_digits_read_or_end_in_one_line(
        reader: str, sample: Path, digits: int, tmp_path: Path):
    text = Source(sample).read_text()
    path = tmp_path / sample.name.removesuffix(".gz")
    path.write_text(_with_long_numbers(text, digits))
    try:
        traceconv.load(path, format=reader)
    except TraceconvError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)


@pytest.mark.parametrize("digits", [18, 19, 20, 400, 5000])
def test_split_step_and_rank_numbers_of_any_length(digits: int, tmp_path: Path):
    number = "1" + "0" * (digits - 1)
    fits = digits <= 19 and int(number) < 2**63
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": f"rank {number}: p"}}]
    for i, step in enumerate(["1", number, "3"]):
        events += [{"ph": "X", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                    "ts": i * 100, "dur": 90, "cat": "user_annotation"},
                   {"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": i * 100 + 5,
                    "dur": 10, "cat": "cpu_op"}]
    path = tmp_path / "steps.json"
    path.write_text(json.dumps({"traceEvents": events}))
    result = run("split", str(path), "--by", "step", "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["cuts"]["markers_out_of_range"] == (0 if fits else 2)
    assert len(manifest["pieces"]) == (3 if fits else 2)


@pytest.mark.parametrize("limit", ["9" * 400 + "%", "9" * 5000 + "%", "9" * 400 + "ms"])
def test_a_fail_if_limit_of_hundreds_of_digits_is_a_usage_error(limit: str):
    sample = str(smallest_sample("chrome"))
    result = run("diff", sample, sample, "--fail-if", f"total:+{limit}")
    assert result.exit_code == 2 and "internal error" not in result.output


def test_a_fail_if_limit_past_int64_is_shown_within_it():
    sample = str(SAMPLES / "torch" / "cnn_step5.pt.trace.json")
    result = run("diff", sample, sample, "--fail-if", "total:+1" + "0" * 300 + "%", "--json")
    assert result.exit_code == 0, result.output
    assert '"allowed_ns": 4611686018427387904' in result.stdout


# -- 6. text lines of any length --------------------------------------------------------------

@settings(max_examples=60, derandomize=True, deadline=None)
@given(lines=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["\n", "\r\n"])),
                      max_size=12))
def test_text_lines_are_cut_at_the_bound_and_counted(lines, tmp_path_factory):
    limit = 16
    text = "".join("x" * n + end for n, end in lines)
    path = tmp_path_factory.mktemp("lines") / "t.txt"
    path.write_bytes(text.encode())
    source = Source(path)
    saved = text_lines_module.MAX_LINE
    text_lines_module.MAX_LINE = limit
    try:
        got = list(text_lines_module.text_lines(source))
    finally:
        text_lines_module.MAX_LINE = saved
    assert got == ["x" * min(n, limit) for n, _ in lines]
    cut = sum(1 for code, _, _ in source.notes if code == "input.line_cut")
    assert cut == sum(1 for n, _ in lines if n > limit)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(lines=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(
           ["\n", "\r\n", "\r", "\u2028", "\x85", "\x0c", "\x1d", ""])), max_size=8),
       block=st.sampled_from([1, 2, 3, 5, 64]), csv=st.booleans())
def test_text_lines_split_as_the_whole_text_across_blocks(lines, block, csv, tmp_path_factory):
    """Lines cut by the read's blocks (a "\r\n" between two) are split as the whole text is.
    A CSV's, with their ends, where ``io`` splits a text opened with ``newline=""`` (as the
    csv module reads a file: "\n", "\r\n", "\r" alone); other text's, as str.splitlines but
    for a break right before a line end or at the text's end, which is part of it
    (pasted_text's rule, written out here). Over-long ones are cut at the bound and counted
    one each."""
    text = "".join("x" * n + end for n, end in lines)
    path = tmp_path_factory.mktemp("blocks") / "t.txt"
    path.write_bytes(text.encode())
    source = Source(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text_lines_module, "_BLOCK", block)
        patch.setattr(text_lines_module, "MAX_LINE", 12)
        read = text_lines_module.csv_lines if csv else text_lines_module.text_lines
        got = list(read(source))
    others = "\u2028\x85\x0c\x1d"
    if csv:
        breaks, expected = "\r\n", list(io.StringIO(text, newline=""))
    else:   # (an other break followed by a line end or the text's end is that line end)
        breaks = "\r\n" + others
        joined = re.sub(f"[{others}]+(?=\n)", "", re.sub("\r\n?", "\n", text))
        if joined and joined[-1] in others:
            joined = joined[:-1] + "\n"
        expected = joined.splitlines()
    assert [line.rstrip(breaks) for line in got] == [line.rstrip(breaks)[:12] for line in expected]
    assert [line[len(line.rstrip(breaks)):] for line in got] == [
        line[len(line.rstrip(breaks)):] for line in expected]
    notes = sum(1 for code, _, _ in source.notes if code == "input.line_cut")
    assert notes == sum(1 for line in expected if len(line.rstrip(breaks)) > 12)


@pytest.mark.slow
def test_a_line_of_200_mb_in_a_gzipped_report_is_cut_in_bounded_memory(tmp_path: Path):
    sample = smallest_sample("migraphx")
    lines = Source(sample).read_text().split("\n")
    lines.insert(len(lines) - 3, "x" * (64 << 20))
    path = tmp_path / "report.txt.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode(), 1))
    tracemalloc.start()
    try:
        trace = traceconv.load(path, format="migraphx")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert trace.diagnostics.count("input.line_cut") == 1
    assert peak < 32 << 20   # the line is 64 MB: never held whole


# -- 7. the allocator snapshot's stack-text bomb ----------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name_kib", [64, 1024])
@pytest.mark.parametrize("frames", [300, 8000])
@pytest.mark.parametrize("packed", [False, True])
def test_stack_text_that_would_expand_is_refused_before_it_exists(
        name_kib: int, frames: int, packed: bool, tmp_path: Path):
    name = "n" * (name_kib << 10)
    entries = [{"action": "alloc", "addr": i, "size": 8, "time_us": 1,
                "frames": [{"name": name, "filename": "/m/net.py", "line": 3}] * (frames + i)}
               for i in range(4)]
    data = pickle.dumps({"device_traces": [entries], "segments": []}, protocol=4)
    path = tmp_path / ("s.pickle.gz" if packed else "s.pickle")
    path.write_bytes(gzip.compress(data) if packed else data)
    expands = sum(len(e["frames"]) for e in entries) * (len(name) + 14)
    budget = max(64 * path.stat().st_size, 32 << 20)
    tracemalloc.start()
    try:
        if expands > budget:
            with pytest.raises(InputError, match="amplification bomb"):
                traceconv.load(path)
        else:
            traceconv.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * budget + 50 * len(data) + (32 << 20)


def test_a_snapshot_line_number_of_ten_thousand_digits_reads(tmp_path: Path):
    entry = {"action": "alloc", "addr": 1, "size": 8, "time_us": 1,
             "frames": [{"name": "f", "filename": "/m/net.py", "line": 10**10_000}]}
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps({"device_traces": [[entry]], "segments": []}, protocol=4))
    stack = traceconv.load(path).memory[0].args["stack"]
    assert "bits" in stack and len(stack) < 300


def test_the_input_layer_keeps_its_notes_per_source():
    source = tio.Source("a.rpd")
    source.note("sqlite.log_read", example="a.rpd-wal")
    assert source.notes == [("sqlite.log_read", 1, "a.rpd-wal")]


@pytest.mark.parametrize("sample", sqlite_samples(), ids=lambda p: p.name)
def test_the_byte_limit_holds_for_databases_and_their_logs(sample: Path, tmp_path: Path):
    plain = plain_copy(sample, tmp_path)
    size = plain.stat().st_size
    with pytest.raises(InputError, match="limit"):   # the database alone
        traceconv.load(plain, max_bytes=size - 1)
    with pytest.raises(InputError, match="limit"):   # gzipped: its decompressed bytes
        packed = tmp_path / "packed" / sample.name
        packed.parent.mkdir()
        packed.write_bytes(gzip.compress(plain.read_bytes(), 1))
        traceconv.load(packed, max_bytes=size - 1)
    Path(f"{plain}-wal").write_bytes(b"\0" * 4096)   # with its log: both count
    with pytest.raises(InputError, match="limit"):
        traceconv.load(plain, max_bytes=size + 100)


def test_split_names_its_input_when_memory_runs_out(tmp_path: Path, monkeypatch):
    from traceconv.formats.chrome import stream as chrome_stream

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(chrome_stream, "read_document", no_memory)
    sample = SAMPLES / "torch" / "cnn_step5.pt.trace.json"
    one_error_line(run("split", str(sample), "-o", str(tmp_path / "out")), str(sample),
                   "ran out of memory")


def _doubled(path: Path, table: str) -> None:
    """Every row of ``table`` once more (its primary key left to SQLite)."""
    with sqlite3.connect(path) as c:
        columns = [f'"{r[1]}"' for r in c.execute(f'pragma table_info("{table}")') if not r[5]]
        names = ", ".join(columns)
        c.execute(f'insert into "{table}" ({names}) select {names} from "{table}"')


@pytest.mark.parametrize("sample", sqlite_samples(smallest=True), ids=lambda p: p.name)
def test_database_reads_grow_linearly(sample: Path, tmp_path: Path):
    path = plain_copy(sample, tmp_path)
    table = _largest_table(path)
    traceconv.load(path)   # (imports, caches: not counted below)
    peaks = []
    for _ in range(3):   # 1x, 2x, 4x the rows of the largest table
        tracemalloc.start()
        try:
            traceconv.load(path)
            peaks.append(tracemalloc.get_traced_memory()[1])
        except TraceconvError as exc:
            pytest.skip(f"doubled {table} is not readable: {exc}")
        finally:
            tracemalloc.stop()
        try:
            _doubled(path, table)
        except sqlite3.Error as exc:
            pytest.skip(f"{table} cannot be doubled: {exc}")
    assert peaks[1] <= 2.3 * peaks[0] and peaks[2] <= 2.3 * peaks[1], peaks


@pytest.mark.slow
@pytest.mark.parametrize("digits", [20, 39, 400, 5000])
@pytest.mark.parametrize("option", ["--by time={}ms", "--window 0ms:{}us", "--window {}ms:",
                                    "--max-bytes {}", "--by time=0.{}ms"])
def test_command_line_values_of_any_length_are_usage_errors(digits: int, option: str,
                                                           tmp_path: Path):
    sample = str(SAMPLES / "torch" / "cnn_step5.pt.trace.json")
    words = option.format("9" * digits).split()
    if words[0].startswith("--by"):
        args = ["split", sample, *words, "-o", str(tmp_path / "out")]
    elif words[0] == "--window":
        args = [sample, "--to", "chrome", *words, "-o", str(tmp_path / "out.json")]
    else:
        args = ["info", sample, *words]
    result = run(*args)
    assert result.exit_code in (0, 2), result.output
    assert "internal error" not in result.output and len(result.output) < 2000


@pytest.mark.parametrize("sample", ["samples/torch/cnn_step5.pt.trace.json",
                                    "samples/perfetto/rocprofv3_hip_taylor.pftrace",
                                    "samples/rocprof/llamacpp_results.stats.csv"])
def test_damaged_gzip_is_one_line_naming_the_file(tmp_path, sample):
    """Bytes flipped inside a gzip stream (zlib's "invalid distance too far back", no
    OSError) end in one line naming the file, for any reader, as a cut gzip does."""
    import gzip as gz

    from click.testing import CliRunner

    from traceconv.cli import app

    data = bytearray(gz.compress(Path(sample).read_bytes()))
    data[200] ^= 0xFF
    data[201] ^= 0x55
    path = tmp_path / (Path(sample).name + ".gz")
    path.write_bytes(bytes(data))
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"traceconv: error: {path}")
    assert "cannot read:" in lines[0] and "internal error" not in lines[0]


@pytest.mark.parametrize("sample", ["tests/data/nsys_stats/cuda_gpu_kern_sum.csv",
                                    "tests/data/rocprof/ROCm__rocprofiler-sdk__docs_kernel_trace.csv",
                                    "samples/rocprof/llamacpp_results.stats.csv"])
def test_a_header_without_rows_is_nothing_read(tmp_path, sample):
    """A real report's header line alone: no row, nothing left out. An empty output would
    say the file was read; whatever the reader, it is one line naming the file, exit 1."""
    from click.testing import CliRunner

    from traceconv.cli import app

    path = tmp_path / Path(sample).name
    path.write_text(Path(sample).read_text().splitlines()[0] + "\n")
    for command in (["info"], ["convert", "-o", str(tmp_path / "out.json")]):
        result = CliRunner().invoke(app, [*command, str(path)])
        assert result.exit_code == 1
        (line,) = result.output.strip().splitlines()
        assert line.startswith(f"traceconv: error: {path}: nothing read:")
    assert not (tmp_path / "out.json").exists()
