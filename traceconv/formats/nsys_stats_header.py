"""What a header line of an ``nsys stats`` report says, from its column names alone (no
reader imported: the sniffer and the reader share it), in either of nsys's layouts:
``--format csv`` and the default ``column`` (:class:`ColumnRows` gives its rows as the CSV's).

``nsys stats`` writes one table per report, often after lines of prose (``Generating SQLite
file ...``, ``Processing [...] with [.../cuda_gpu_kern_sum.py]...``, ``NOTICE: ...``,
`` ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):``, ``SKIPPED: ... does not contain ...``).
A header is recognised by its columns: the NVTX trace report (``nvtx_pushpop_trace``) by its
start, end, PID and TID; a summary report by a ``Total Time`` column and the column that
names its rows:

======================================  ==========  ===============================
report (new name / before 2022)         kind        counted by, named by
======================================  ==========  ===============================
``cuda_gpu_kern_sum`` / ``gpukernsum``  ``kernels``  Instances, Name
``cuda_api_sum`` / ``cudaapisum``       ``api``      Num Calls, Name
``osrt_sum`` / ``osrtsum``              ``os_runtime``  Num Calls, Name (``cuda_api_sum``'s
                                                     header: told apart by the report's name)
``cuda_gpu_mem_time_sum`` /             ``memops``   Count (Operations), Operation
``gpumemtimesum``
``cuda_gpu_sum`` / ``gpusum``           ``gpu``      Instances, Operation, Category
``nvtx_sum`` / ``nvtxsum``              ``nvtx``     Instances, Range (and Style)
``cuda_gpu_mem_size_sum`` /             ``memory_sizes``  Count (Operations), Operation;
``gpumemsizesum``                                    sizes, no time (``Total (MB)``, or
                                                     ``Total`` in KiB)
======================================  ==========  ===============================

A report's name is stated by a line of prose: the script nsys ran (``Processing [...] with
[.../osrt_sum.py]``), a banner (`` ** OS Runtime Summary (osrt_sum):``), the progress line of
``nsys profile --stats=true`` (``[4/8] Executing 'osrt_sum' stats report``), or, before 2022,
a section title (``Operating System Runtime API Statistics:``); or by the file name.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .ruled_tables import Ruling, is_box_rule, ruling_under

if TYPE_CHECKING:
    from .stray_lines import ForeignLines  # (the sniffer imports no reader's rules)

TRACE = "trace"
_TRACE_COLUMNS = ("Start (ns)", "End (ns)", "Name", "PID", "TID")
_REPORTS = ("cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
            "cuda_gpu_sum", "cuda_api_sum", "osrt_sum", "nvtx_sum", "nvtx_pushpop_sum",
            "gpukernsum", "gpumemtimesum", "gpumemsizesum", "gpusum", "cudaapisum", "osrtsum",
            "nvtxsum", "nvtxppsum")
# a report's name as a script path ends ("/nvtx_sum.py]"), a banner closes ("(nvtx_sum):"), a
# progress line quotes it ("Executing 'nvtx_sum' stats report") or an output file of ``nsys
# stats -o BASE`` ends ("BASE_nvtx_sum.csv")
_REPORT_NAME = re.compile(rf"(?:^|[/(_'])({'|'.join(_REPORTS)})(?:\.py\]|\):|\.csv|')")
# the section titles nsys printed before 2022 in place of the banners, and their reports
_TITLES = {"Operating System Runtime API Statistics:": "osrtsum",
           "CUDA API Statistics:": "cudaapisum", "CUDA Kernel Statistics:": "gpukernsum",
           "CUDA Memory Operation Statistics (by time):": "gpumemtimesum",
           "CUDA Memory Operation Statistics (by size in KiB):": "gpumemsizesum",
           "NVTX Push-Pop Range Statistics:": "nvtxppsum"}
_PROSE = ("Generating ", "Processing ", "NOTICE:", "SKIPPED:", "**", "Exporting ", "Using ",
          "Running ", "WARNING:", "It is assumed", "Consider using")
# nsys's own framing: a progress line ("[6/8] Executing '...' stats report"), a section title
# of any report ("... Statistics:", "... Statistics (by size in KiB):")
_FRAMING = re.compile(r"\[\d+/\d+\] |[A-Z][\w -]* Statistics(?: \([\w ]+\))?:$")
# the reports whose header is another report's: their name says what their rows are
_KIND_OF_REPORT = {"osrt_sum": "os_runtime", "osrtsum": "os_runtime"}
# the total of a table of sizes (cuda_gpu_mem_size_sum: "Total (MB)"; before 2022 "Total", KiB)
_SIZE_TOTAL = re.compile(r"Total(?: \((?:B|KB|KiB|MB|MiB|GB|GiB)\))?")


def kind_of(cells: list[str]) -> str | None:
    """The report whose header ``cells`` are: ``trace``, a summary kind, or None.

    >>> kind_of("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
    ...         "StdDev (ns),Name".split(","))
    'kernels'
    >>> kind_of("Time(%),Total Time (ns),Operations,Average,Minimum,Maximum,Operation".split(","))
    'memops'
    >>> kind_of(["Start (ns)", "End (ns)", "Name", "PID", "TID"]), kind_of(["Name", "Calls"])
    ('trace', None)
    >>> kind_of("Total (MB),Count,Avg (MB),Operation".split(",")), kind_of(["Total", "Operation"])
    ('memory_sizes', 'memory_sizes')
    """
    columns = {cell.strip() for cell in cells}
    if all(c in columns for c in _TRACE_COLUMNS):
        return TRACE
    if "Operation" in columns and any(_SIZE_TOTAL.fullmatch(c) for c in columns):
        return "memory_sizes"
    if not any(c.startswith("Total Time") for c in columns):
        return None
    if "Range" in columns:
        return "nvtx"
    if "Category" in columns and "Operation" in columns:
        return "gpu"
    if "Operation" in columns:
        return "memops"
    if "Name" in columns and "Num Calls" in columns:
        return "api"
    if "Name" in columns and "Instances" in columns:
        return "kernels"
    return None


def kind_of_report(kind: str, report: str | None) -> str:
    """The kind of a summary whose header says ``kind``, given the report's name: an OS
    runtime summary has the CUDA API summary's header.

    >>> kind_of_report("api", "osrt_sum"), kind_of_report("api", "cuda_api_sum"), kind_of_report("api", None)
    ('os_runtime', 'api', 'api')
    """
    return _KIND_OF_REPORT.get(report or "", kind)


def is_prose(line: str) -> bool:
    """A line nsys writes around its tables (progress, notices, banners, section titles,
    blank).

    >>> is_prose(" ** CUDA API Summary (cuda_api_sum):"), is_prose("12.5,100,3,kernel")
    (True, False)
    >>> is_prose("[6/8] Executing 'cuda_gpu_kern_sum' stats report"), is_prose("CUDA API Statistics:")
    (True, True)
    """
    text = line.strip()
    return not text or text.startswith(_PROSE) or bool(_FRAMING.match(text))


# the report file of one run, as nsys's prose names it: the progress line of ``nsys profile
# --stats=true`` ("[1/8] [===100%] vector_add_v3.nsys-rep"), the export ("Generating SQLite
# file r.sqlite from r.nsys-rep"), each report's script ("Processing [r.sqlite] with ...")
_RUN_FILE = re.compile(r"^\s*(?:\[1/\d+\] \[[=\s\d%]*\] |Generating SQLite file |Processing \[)"
                       r"(?:.*[/\\])?([^/\\\]\s]+?)(?:\.nsys-rep|\.qdrep|\.sqlite)\b")


def run_named(line: str) -> str | None:
    """The report file (its name without folder or extension) whose run a line of nsys's
    prose starts or reads, or None.

    >>> run_named("[1/8] [========================100%] vector_add_profile_v3.nsys-rep")
    'vector_add_profile_v3'
    >>> run_named("Processing [/w/r1.sqlite] with [/opt/nsys/reports/osrt_sum.py]... ")
    'r1'
    >>> run_named("Generating SQLite file d-rep.sqlite from d-rep.nsys-rep"), run_named("[4/8] x")
    ('d-rep', None)
    """
    found = _RUN_FILE.match(line)
    return found.group(1) if found else None


# the progress lines of ``nsys profile --stats=true`` number the steps of one run ("[6/8]
# Executing 'cuda_gpu_kern_sum' stats report"), each once
_STEP = re.compile(r"^\s*\[(\d+)/\d+\] ")


def step_of(line: str) -> int | None:
    """The step a progress line of ``nsys profile --stats=true`` numbers, or None: within
    one run the steps only go up, so a step again is the next run's.

    >>> step_of("[6/8] Executing 'cuda_gpu_kern_sum' stats report"), step_of("CUDA API Statistics:")
    (6, None)
    """
    found = _STEP.match(line)
    return int(found.group(1)) if found else None


def report_named(text: str) -> str | None:
    """The report a line of prose or a file name names (``cuda_gpu_kern_sum``...).

    >>> report_named("Processing [r.sqlite] with [/opt/nsys/reports/cuda_api_sum.py]... ")
    'cuda_api_sum'
    >>> report_named("run_gpukernsum.csv"), report_named("cuda_api_sum.csv")
    ('gpukernsum', 'cuda_api_sum')
    >>> report_named(" ** NVTX Range Summary (nvtx_sum):"), report_named("Generating r.sqlite")
    ('nvtx_sum', None)
    >>> report_named("[4/8] Executing 'osrt_sum' stats report"), report_named("CUDA API Statistics:")
    ('osrt_sum', 'cudaapisum')
    """
    found = _REPORT_NAME.search(text)
    return found.group(1) if found else _TITLES.get(text.strip())


@dataclass
class UnreadTable:
    """A drawn table whose header names no report traceconv reads: a report it does not
    read (``nvtx_gpu_proj_trace``) or a header a paste damaged; its rows are not read."""

    line: int                  # the header's line number
    header: str
    report: str | None         # the report a line of prose before it named
    rows: int = 0


class ColumnRows:
    """``nsys stats``' drawn layouts, the default ``--format column`` (what ``nsys profile
    --stats=true`` prints) and ``--format table`` (boxed), as the rows its ``--format csv``
    gives: each table's header (the line over a rule, :mod:`..ruled_tables`) and rows cut
    at the rule's columns, nsys's prose lines as one cell each. A table whose header names
    no report (:func:`kind_of`) is kept out, in ``unread``; other lines (a shell prompt, a
    pasted command) are tallied in ``foreign`` (:class:`.stray_lines.ForeignLines`), and the
    remarks a paste wrote after rows (:meth:`.ruled_tables.Ruling.remark`) in ``remarks``
    (how many, and the first's line and text).

    >>> from traceconv.formats.stray_lines import ForeignLines
    >>> rows = ColumnRows(["$ nsys stats r.nsys-rep", " ** CUDA API Summary (cuda_api_sum):",
    ...     "", " Time (%)  Total Time (ns)  Num Calls  Name", " --------  ---------------  "
    ...     "---------  ----", "     90.0              900          3  cudaMalloc", ""],
    ...     ForeignLines("nsys_stats"))
    >>> list(rows), rows.foreign._block
    ([[' ** CUDA API Summary (cuda_api_sum):'], [''], ['Time (%)', 'Total Time (ns)', \
'Num Calls', 'Name'], ['90.0', '900', '3', 'cudaMalloc'], ['']], [(1, '$ nsys stats r.nsys-rep')])
    >>> rows = ColumnRows(["+-----+------+", "| Sum | Name |", "+-----+------+", "|   2 | x    |",
    ...     "+-----+------+", "+-----------------+-----------+------+",
    ...     "| Total Time (ns) | Num Calls | Name |", "+-----------------+-----------+------+",
    ...     "|             900 |         3 | gemm |", "+-----------------+-----------+------+"],
    ...     ForeignLines("nsys_stats"))
    >>> list(rows), rows.unread
    ([['Total Time (ns)', 'Num Calls', 'Name'], ['900', '3', 'gemm']], \
[UnreadTable(line=2, header='| Sum | Name |', report=None, rows=1)])
    """

    def __init__(self, lines: Iterable[str], foreign: ForeignLines) -> None:
        self.lines = lines
        self.width: int | None = None   # (set by the reader, as on CsvRows: cut at the
        # rule's columns, every row has its table's width)
        self.foreign = foreign
        self.line_num = 0
        self.unread: list[UnreadTable] = []
        self.remarks = 0
        self.first_remark: str | None = None
        # where the input ended, for the one cut rule (stray_lines.count_input_end), when
        # ``lines`` say which line the input stopped inside (their ``cut_line``)
        self.table: str | None = None   # the last table read that began
        self.in_rows = False            # the last line came while that table's rows ran
        self.awaiting_rows = False      # the last line was its rule: no row after it
        self.ended_whole = True         # the last line is no row cut short (see _whole)
        self._reaching = 0              # the table's lines that reach its rule's width,
        # less those that fall short (nsys pads every one; a trimmed paste only its longest)
        self._named: str | None = None   # the report the last line of prose named
        self._rows = self._read()

    def __iter__(self) -> Iterator[list[str]]:
        return self   # (one pass: the header search and the tables share it, as csv's)

    def __next__(self) -> list[str]:
        return next(self._rows)

    def _read(self) -> Iterator[list[str]]:
        ruling: Ruling | None = None
        unread: UnreadTable | None = None   # the table being passed over
        held: str | None = None   # a line that a rule may show to be a header
        for raw in self.lines:
            self.line_num += 1
            line = raw.rstrip("\r\n")
            cut = self.line_num == getattr(self.lines, "cut_line", 0)
            self.in_rows = ruling is not None and unread is None
            self.awaiting_rows, self.ended_whole = False, True
            if ruling is not None:
                cells = ruling.cells(line)
                if cells is not None:
                    if unread is None:
                        self.ended_whole = self._whole(ruling, line, cells)
                        if (remark := ruling.remark(line)) is not None:
                            self.remarks += 1
                            self.first_remark = self.first_remark or \
                                f"line {self.line_num}: {line[remark:].strip()}"[:120]
                        yield cells
                    else:
                        unread.rows += 1
                    continue
                ruling = unread = None
                if is_box_rule(line):
                    continue   # (the box's bottom)
                if cut and self.in_rows:
                    self.ended_whole = False   # (a box's row cut before its cells' bars)
                    continue
            found = ruling_under(held, line) if held is not None and held.strip() else None
            if held is not None and found is not None and len(found.starts) > 1:
                header = found.cells(held) or []
                ruling = found
                if kind_of(header) is None:
                    unread = UnreadTable(self.line_num - 1, held.strip(), self._named)
                    self.unread.append(unread)
                else:
                    self.table = f"{self._named} table" if self._named else \
                        f"table headed at line {self.line_num - 1}"
                    self.awaiting_rows = True
                    self._reaching = 1 if found.reaches(held) else -1
                    yield header
                held, self._named = None, None
                continue
            if held is not None:
                yield from self._outside(held, self.line_num - 1)
            held = line
        if held is not None:
            yield from self._outside(held, self.line_num)

    def _whole(self, ruling: Ruling, line: str, cells: list[str]) -> bool:
        """Whether a row is drawn to its end (:meth:`Ruling.reaches`); in a table most of
        whose lines so far fall short of the rule (a paste that trimmed the padding: only
        its longest names reach), one with a value in every cell."""
        if ruling.reaches(line):
            self._reaching += 1
            return True
        self._reaching -= 1
        return self._reaching < 0 and all(cells)

    def _outside(self, line: str, number: int) -> Iterator[list[str]]:
        if is_prose(line):
            self._named = report_named(line) or _any_report(line) or self._named
            yield [line]
        elif not is_box_rule(line):   # (a box's top rule is drawing, nothing of the report)
            self.foreign.add(number, line)


# any report's name, read or not, as a banner closes (" ** NVTX GPU Projection Trace
# (nvtx_gpu_proj_trace):") or the script nsys ran ends ("/nvtx_gpu_proj_trace.py]")
_ANY_REPORT = re.compile(r"\((\w+)\):\s*$|/(\w+)\.py\]")


def _any_report(line: str) -> str | None:
    """The name of the report, read here or not, a line of prose names.

    >>> _any_report(" ** NVTX GPU Projection Trace (nvtx_gpu_proj_trace):"), _any_report("x")
    ('nvtx_gpu_proj_trace', None)
    """
    found = _ANY_REPORT.search(line)
    return (found.group(1) or found.group(2)) if found else None


def is_column_layout(lines: list[str], *, known: bool = True) -> bool:
    """Whether ``lines`` hold a summary drawn in columns or boxes: a rule under a known
    header (or, not ``known``, under any line of two or more columns: the reader's test,
    so that a drawn table it cannot read is named as one).

    >>> is_column_layout([" Time (%)  Total Time (ns)  Instances  Name", " --------  ------"
    ...                   "---------  ---------  ----"])
    True
    >>> is_column_layout(["| Time (%) | Total Time (ns) | Instances | Name |",
    ...                   "+----------+-----------------+-----------+------+"])
    True
    """
    for header, rule in zip(lines, lines[1:], strict=False):
        ruling = ruling_under(header, rule) if header.strip() else None
        if ruling is None or len(ruling.starts) < 2:
            continue
        if not known or kind_of(ruling.cells(header) or []) not in (None, TRACE):
            return True
    return False


def sniff_text(head: bytes) -> float:
    """How sure it is that ``head`` (the input layer's head: its first bytes, wherever the
    tables start in them) is an nsys stats report: a drawn table under a known header
    anywhere, a CSV header after nothing but prose, or only prose that names an nsys
    report (a report nsys skipped).

    >>> sniff_text(b"Processing [r.sqlite] with [nvtx_sum.py]...\\nTime (%),Total Time (ns),"
    ...            b"Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\\n")
    0.95
    >>> sniff_text(b"Kernel_Name,Start_Timestamp\\n"), sniff_text(b"a,b\\nTime (%),Total Time\\n")
    (0.0, 0.0)
    >>> sniff_text(b"Processing [r.sqlite] with [/x/cuda_gpu_kern_sum.py]... \\nSKIPPED: r.sqlite "
    ...            b"does not contain CUDA kernel data.\\n")
    0.9
    >>> sniff_text(b"# notes\\n" * 200 + b" Time (%)  Total Time (ns)  Num Calls  Name\\n"
    ...            b" --------  ---------------  ---------  ----\\n")
    0.9
    """
    lines = head.lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace").splitlines()
    if is_column_layout(lines):
        return 0.9
    named = False
    for line in lines:
        if is_prose(line):
            named = named or (line.startswith("Processing ") and report_named(line) is not None)
            continue
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error:
            return 0.0
        return 0.95 if kind_of(cells) else 0.0
    return 0.9 if named else 0.0
