"""Real ``nsys profile --stats=true`` / ``nsys stats`` console outputs (column layout):
grouped numbers, nsys's framing lines, OS runtime waits, tables of sizes, one table per
process. Expected values come from a plain split of the text (cells two spaces apart,
grouping commas taken out) and from totals worked out by hand, never from traceconv."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.cli import app

DATA = Path(__file__).parent / "data" / "nsys_stats"
GROUPED = DATA / "gpu_mvr_profile_stats_console.txt"            # 2024-25 layout, grouped
LEGACY = DATA / "cs533_profile_stats_console_legacy.txt"         # before 2022, grouped
PLAIN = DATA / "assignment2_stats_console_nsys2024.6.2.txt"      # 2024.6.2, not grouped


def tables(path: Path) -> list[tuple[list[str], list[list[str]]]]:
    """Every table of a console output as (header cells, row cells): a header is the line
    over a rule of dashes, rows run to the next blank line, cells are two spaces apart."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        if i and line.strip() and set(line.strip()) <= {"-", " "}:
            header = re.split(r"\s{2,}", lines[i - 1].strip())
            rows = []
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                rows.append(re.split(r"\s{2,}", row.strip()))
            assert all(len(r) == len(header) for r in rows)
            found.append((header, rows))
    return found


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


def column(table: tuple[list[str], list[list[str]]], *names: str) -> list[str]:
    header, rows = table
    at = next(header.index(n) for n in names if n in header)
    return [r[at] for r in rows]


def test_grouped_numbers_are_read_as_their_values():
    """nsys's default layout groups digits (``444,988,647``): every row of every table is
    read, with the numbers the text states (a 2024-25 output and one from before 2022)."""
    for path, rows in ((GROUPED, 2 + 31 + 29 + 22 + 4 + 4), (LEGACY, 51 + 53 + 51 + 7 + 1 + 2
                                                             + 2 + 53)):
        trace = traceconv.load(path)
        want = [(name, int(number(calls)))
                for table in tables(path)
                for name, calls in zip(column(table, "Name", "Range", "Operation"),
                                       column(table, "Instances", "Num Calls", "Count",
                                              "Operations"), strict=True)]
        assert [(s.name, s.calls) for s in trace.stats] == want and len(want) == rows
        assert trace.diagnostics.count("nsys_stats.malformed_row") == 0
    timed = [(s.name, s.total_ns) for s in traceconv.load(GROUPED).stats if s.total_ns]
    assert timed == [(name, int(number(total))) for table in tables(GROUPED)[:5]
                     for name, total in zip(column(table, "Name", "Range", "Operation"),
                                            column(table, "Total Time (ns)"), strict=True)]


def test_device_totals_of_grouped_outputs_match_the_hand_sums():
    """Kernels 10,278,282,158 ns over 82,069 instances and memory operations 6,379,684,723
    ns (the 2024-25 output); kernels and memory operations 12,817,118 ns (the legacy one)."""
    from traceconv.analysis.summary import summarize

    kernels = [s for s in traceconv.load(GROUPED).stats if s.section == "kernels"]
    assert sum(s.device_ns for s in kernels) == 10_278_282_158
    assert sum(s.calls for s in kernels) == 82_069
    assert summarize(traceconv.load(GROUPED)).total_device_time == pytest.approx(
        (10_278_282_158 + 6_379_684_723) / 1e9)
    assert summarize(traceconv.load(LEGACY)).total_device_time == pytest.approx(12_817_118 / 1e9)


def test_a_report_whose_every_row_is_malformed_is_nothing_read(tmp_path: Path):
    """Every number of the kernel table made no number: no output is written, and the one
    line names the file, the code and a row with its cells shown apart."""
    lines = GROUPED.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if "'cuda_gpu_kern_sum'" in line)
    end = next(i for i, line in enumerate(lines) if "'cuda_gpu_mem_time_sum'" in line)
    broken = tmp_path / "kernels.txt"
    broken.write_text("\n".join(re.sub(r"(?<=\s)[\d,.]+(?=\s)", lambda m: "x" * len(m[0]), line)
                                if line.startswith("     ") else line
                                for line in lines[start:end]) + "\n", encoding="utf-8")
    first_row = next(number for number, line in enumerate(
        broken.read_text(encoding="utf-8").splitlines(), 1) if line.lstrip().startswith("x"))
    out = tmp_path / "out.pftrace"
    for command in (["info"], ["convert", "-o", str(out)], ["report", "-o",
                                                          str(tmp_path / "r.html")]):
        result = CliRunner().invoke(app, [*command, str(broken)])
        assert result.exit_code == 1, result.output
        (line,) = result.output.strip().splitlines()
        assert line.startswith(f"traceconv: error: {broken}: nothing read:")
        assert (f"22 left out (nsys_stats.malformed_row), such as: line {first_row}: xxxx | "
                in line)
    assert not out.exists() and not (tmp_path / "r.html").exists()


def test_names_cut_are_counted_only_for_rows_read(tmp_path: Path):
    """18 kernel names end in … in the text; when the rows that hold them are malformed,
    none is counted as cut (they are counted as malformed instead)."""
    text = GROUPED.read_text(encoding="utf-8")
    cut = [line for line in text.splitlines() if line.rstrip().endswith("…")]
    assert traceconv.load(GROUPED).diagnostics.count("nsys_stats.name_cut") == len(cut) == 18
    spoiled = tmp_path / "spoiled.txt"
    spoiled.write_text("".join(line.replace("2,931", "x,xxx", 1) if line.rstrip().endswith("…")
                               else line for line in text.splitlines(keepends=True)),
                       encoding="utf-8")
    trace = traceconv.load(spoiled)
    malformed = sum("2,931" in line for line in cut)
    assert trace.diagnostics.count("nsys_stats.malformed_row") == malformed == 14
    assert trace.diagnostics.count("nsys_stats.name_cut") == 18 - malformed


def test_nsys_framing_lines_are_not_dropped():
    """``[6/8] Executing '...' stats report`` and the old section titles are nsys's own
    lines: nothing of the 2024-25 output is foreign to it, and of the legacy one only the
    program's 8 lines of output (``PROCESS 1 started``...) that come first."""
    assert traceconv.load(GROUPED).diagnostics.count("nsys_stats.foreign_lines") == 0
    program = [line for line in LEGACY.read_text().splitlines()
               if line.startswith(("PROCESS", "MAIN"))]
    assert traceconv.load(LEGACY).diagnostics.count("nsys_stats.foreign_lines") == len(
        program) == 8


def test_tables_of_sizes_are_read_in_bytes():
    """``cuda_gpu_mem_size_sum`` (MB = 10^6 bytes) and its legacy form (KiB): each row a
    statistic with its sizes in bytes and its count, and no time."""
    for path, unit in ((GROUPED, 10**6), (LEGACY, 1024), (PLAIN, 10**6)):
        sizes = tables(path)[-1] if path is not LEGACY else tables(path)[-2]
        got = [(s.name, s.calls, s.extra["total_bytes"], s.extra["max_bytes"])
               for s in traceconv.load(path).stats if s.section == "memory_sizes"]
        want = [(name, int(number(count)), round(number(total) * unit), round(number(big) * unit))
                for name, count, total, big in zip(
                    column(sizes, "Operation"), column(sizes, "Count", "Operations"),
                    column(sizes, "Total (MB)", "Total"), column(sizes, "Max (MB)", "Maximum"),
                    strict=True)]
        assert got == want and got
    # ([CUDA memset] 914,835.267 MB, by hand)
    assert next(s for s in traceconv.load(GROUPED).stats if s.section == "memory_sizes"
                ).extra["total_bytes"] == 914_835_267_000


# the OS runtime calls of these outputs in which a thread is blocked, listed by hand from
# their manual pages (read, ioctl, mmap, pthread_cond_signal... are calls that do work)
BLOCKING = {"futex", "sem_timedwait", "sem_wait", "poll", "epoll_wait", "clock_nanosleep",
            "nanosleep", "sleep", "usleep", "waitpid", "pthread_cond_wait",
            "pthread_cond_timedwait", "pthread_mutex_lock", "pthread_join", "select",
            "accept4", "pthread_rwlock_rdlock", "pthread_rwlock_wrlock"}


def test_os_runtime_waits_and_nvtx_ranges_are_not_host_time():
    """The OS runtime summary's waits add up threads blocked in futex, poll... (far longer
    than the run) and NVTX ranges enclose the API calls: the host time is the CUDA API
    summary's total plus the OS calls that do work (ioctl, read, mmap...), and the summary
    says what it left out. Expected values: a plain split of the text, summed by the hand
    list above (the API tables' totals: 10,794,695,126 ns; 18,016,239,561 ns)."""
    from traceconv.analysis.summary import summarize

    for path, api, osrt_at, enclosing in (
            (PLAIN, 10_794_695_126, 0, None),
            (GROUPED, 18_016_239_561, 1, (2, 444_988_647 + 105_720_847))):
        osrt = tables(path)[osrt_at]
        calls = list(zip(column(osrt, "Name"), map(number, column(osrt, "Total Time (ns)")),
                         strict=True))
        waits = [ns for name, ns in calls if name in BLOCKING]
        work = sum(ns for name, ns in calls if name not in BLOCKING)
        result = summarize(traceconv.load(path), top=0)
        assert result.total_host_time == pytest.approx((api + work) / 1e9)
        assert {row.type for row in result.host_rows} == {"api", "os_runtime"}
        assert result.not_work["waiting"][0] == len(waits)
        assert result.not_work["waiting"][1] == pytest.approx(sum(waits) / 1e9)
        if enclosing:
            assert result.not_work["enclosing"][0] == enclosing[0]
            assert result.not_work["enclosing"][1] == pytest.approx(enclosing[1] / 1e9)
    osrt_rows = [s for s in traceconv.load(PLAIN).stats if s.type == "os_runtime"]
    assert osrt_rows[0].name == "futex" and len(osrt_rows) == len(tables(PLAIN)[0][1]) == 54
    result = CliRunner().invoke(app, ["summary", "--json", str(PLAIN)])
    assert json.loads(result.output)["not_work_time"]["waiting"]["rows"] == len(
        [name for name in column(tables(PLAIN)[0], "Name") if name in BLOCKING])


def test_an_nvtx_summary_alone_prints_its_ranges():
    """An output holding only ``nvtx_sum`` has no row of work: its ranges are printed as
    what they are (enclosing, in no total) instead of an empty table; the expected rows are
    the CSV's own (plain csv read)."""
    import csv

    path = DATA / "nvtx_sum_stdout.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Time (%)"))
    # (its last line is cut mid-row: left out, counted as csv.row_cut)
    ranges = [r for r in csv.DictReader(lines[header:]) if r["Range"]]
    data = json.loads(CliRunner().invoke(app, ["summary", "--json", str(path)]).output)
    assert data["host_rows"] == []
    shown = {row["name"]: (row["time"], row["calls"], row["type"])
             for row in data["not_work_rows"]}
    assert shown == {r["Range"]: (pytest.approx(int(r["Total Time (ns)"]) / 1e9),
                                  int(r["Instances"]), "nvtx, enclosing") for r in ranges}
    text = CliRunner().invoke(app, ["summary", "-t", "0", str(path)],
                              env={"COLUMNS": "100"}).output
    assert "no row of work to show" in " ".join(text.split()) and ranges[0]["Range"] in text
    assert "none (the input's times are no work)" not in text


def test_more_rows_counts_the_tables_printed():
    """24 device rows (23 kernels, 1 memory operation) and 18 API rows: the device table
    of 20 rows leaves 4, and what the hint says prints or holds them does."""
    text = CliRunner().invoke(app, ["summary", str(PLAIN)]).output
    assert "... 4 more device rows (-t 0 prints them all; --json holds them all)" in text
    everything = CliRunner().invoke(app, ["summary", "-t", "0", str(PLAIN)]).output
    assert "more" not in everything and re.search(r"^23 ", everything, re.M)
    data = json.loads(CliRunner().invoke(app, ["summary", "--json", str(PLAIN)]).output)
    assert len(data["rows"]) == 24
    # 26 device rows and 29 API rows, both tables printed
    text = CliRunner().invoke(app, ["summary", "--show-host", "--wide",
                                    str(GROUPED)]).output
    assert "... 6 more device rows, 35 more host rows (-t 0 prints them all; --json " \
           "--show-host holds them all)" in text
    data = json.loads(CliRunner().invoke(app, ["summary", "--json", "--show-host",
                                               str(GROUPED)]).output)
    assert (len(data["rows"]), len(data["host_rows"])) == (26, 29 + 26)


def test_one_table_per_process_is_kept_apart():
    """The legacy output prints the OS runtime summary once per process (4 tables, 51, 53,
    51 and 53 rows, ``epoll_wait`` in each): each table keeps a section of its own."""
    trace = traceconv.load(LEGACY)
    osrt = [len(rows) for header, rows in tables(LEGACY) if "Num Calls" in header][:3] + \
        [len(tables(LEGACY)[-1][1])]
    sections = {}
    for stat in trace.stats:
        if stat.type == "os_runtime":
            sections[stat.section] = sections.get(stat.section, 0) + 1
    assert list(sections.values()) == osrt == [51, 53, 51, 53]
    assert list(sections) == ["os_runtime", "os_runtime #2", "os_runtime #3", "os_runtime #4"]
    assert trace.metadata.source_version == "osrtsum, cudaapisum, gpukernsum, gpumemtimesum, " \
        "gpumemsizesum"
