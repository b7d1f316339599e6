"""The whole text file: driver chatter, program listings, perf reports, trace-eval records.

:func:`parse_document` classifies every line (most specific first), groups them into
:class:`Run` objects (one per driver invocation or pasted report) and records every line it
could not place, so the reader can count it in diagnostics instead of losing it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from ...numbers import NumberError
from ..migraphx_text.instructions import VAR
from ..migraphx_text.reflow import (
    _SEP,
    ENV_NAME,
    NUM,
    PERF_TAIL,
    SUMMARY_ROW,
    logical_lines,
    summary_group,
)
from ..pasted_text import PastedLines, is_markup
from ..stray_lines import ForeignLines, OtherReport, ended_inside, is_elision, stray_kind
from .columns import rows_as_lines
from .instruction import Instruction, parse_instruction
from .schema import Trailer

# "= @return(...)" with the next line glued to it (group 1 when glued). One that is not
# glued is consumed all the same: tried again from each "=" in it, it re-read the rest.
_RETURN_GLUE = re.compile(r"=\s*+@return\([^)]*+(\)(?=\S))?")


def _unglued(line: str) -> str:
    """``line`` with a line end after each ``@return(...)`` that the next line was glued to.

    >>> _unglued("@1 = @return(@0)@2 = x")
    '@1 = @return(@0)\\n@2 = x'
    """
    return _RETURN_GLUE.sub(lambda found: found[0] + "\n" if found[1] else found[0], line)

# The classes below hold what the parser found; their fields are those of the typed schema
# (:mod:`.schema`, which says what each field means), as slotted classes: a perf log has a
# few hundred thousand lines, and a validated model per line cost most of the memory.


@dataclass(slots=True)
class PerfLine:
    """A per-instruction line of a perf report: the instruction and its mean time."""

    instruction: Instruction
    ms: float | None
    percent: float | None
    ms_text: str | None


@dataclass(slots=True)
class SummaryRow:
    """One ``Summary:`` line: ``group: total ms[ / count = avg ms], pct%``."""

    group: str
    total_ms: float
    total_ms_text: str
    count: int | None
    avg_ms: float | None
    percent: float
    line: int


@dataclass(slots=True)
class PerfReport:
    """The output of ``program::perf_report``."""

    line: int
    lines: list[PerfLine] = field(default_factory=list)
    summary: list[SummaryRow] = field(default_factory=list)
    trailer: Trailer = field(default_factory=Trailer)


@dataclass(slots=True)
class EvalRecord:
    """One ``MIGRAPHX_TRACE_EVAL`` record: ``Run instruction:`` and what follows it."""

    instruction: Instruction | None
    text: str
    line: int
    host_ms: float | None = None
    device_ms: float | None = None
    output: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Listing:
    """A printed program: modules in print order (name None when the print had no header)."""

    line: int
    header: Literal["none", "Module main:", "module:"] = "none"
    modules: dict[str, list[Instruction]] = field(default_factory=dict)
    pass_name: str | None = None

    @property
    def instructions(self) -> list[Instruction]:
        return [i for body in self.modules.values() for i in body]


@dataclass(slots=True)
class Run:
    """One driver invocation (or one pasted report): what it printed, in order."""

    line: int
    version: str | None = None
    command: str | None = None
    model_file: str | None = None
    complete_s: float | None = None
    messages: list[str] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    listings: list[Listing] = field(default_factory=list)
    report: PerfReport | None = None
    eval_records: list[EvalRecord] = field(default_factory=list)
    closed: bool = False

    @property
    def empty(self) -> bool:
        return not (self.listings or self.report or self.eval_records)


@dataclass(slots=True)
class Document:
    """Everything :func:`parse_document` found in one file."""

    runs: list[Run] = field(default_factory=list)
    unparsed: list[tuple[int, str]] = field(default_factory=list)
    elided: list[int] = field(default_factory=list)
    first_elided: tuple[int, str] | None = None
    wrapped: list[int] = field(default_factory=list)
    untitled_summary: int = 0
    foreign: int = 0
    first_foreign: tuple[int, str] | None = None
    other_report: OtherReport | None = None
    table_cut: str | None = None   # where the input ended inside a block (stray_lines)


def _number(text: str, what: str) -> float:
    """``text`` as a number in MIGraphX's own spelling (``nan`` and ``inf`` included).

    >>> _number("1.5", "percentile")
    1.5
    >>> _number("1.5/x", "percentile")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: percentile is not a number: '1.5/x'
    """
    if not re.fullmatch(NUM, text):
        raise NumberError(f"{what} is not a number: {text!r}")
    return float(text)


def _set(trailer: Trailer, **fields: object) -> None:
    for name, value in fields.items():
        setattr(trailer, name, value)


_TRAILER: list[tuple[re.Pattern[str], Callable[[Trailer, re.Match[str]], object]]] = [
    (re.compile(r"Batch size:\s*(\d+)"), lambda t, m: setattr(t, "batch_size", int(m[1]))),
    (re.compile(rf"Rate:\s*({NUM})\s*(inferences/sec|/sec)"),
     lambda t, m: _set(t, rate=float(m[1]), rate_unit=m[2])),
    (re.compile(rf"Total time:\s*({NUM})ms(?: \(Min: ({NUM})ms, Max: ({NUM})ms, "
                rf"Mean: ({NUM})ms, Median: ({NUM})ms\))?"),
     lambda t, m: t.__dict__.update(
         {k: (float(v) if v is not None else None) for k, v in
          zip(("total_ms", "min_ms", "max_ms", "mean_ms", "median_ms"), m.groups(),
              strict=True)})),
    # anchored, though applied with match: searched, each "Percentiles (" re-read the line
    (re.compile(r"^Percentiles \(([^)]*)\):\s*\(([^)]*)\)"),
     lambda t, m: t.percentiles_ms.update(
         {k.strip(): _number(v.strip().removesuffix("ms"), "percentile") for k, v in
          zip(m[1].split(","), m[2].split(","), strict=False)})),
    (re.compile(rf"Total instructions time:\s*({NUM})ms"),
     lambda t, m: _set(t, instructions_ms=float(m[1]), instructions_ms_text=m[1])),
    (re.compile(rf"Overhead time:\s*({NUM})ms{_SEP}({NUM})ms"),
     lambda t, m: _set(t, overhead_ms=float(m[1]), overhead_calculated_ms=float(m[2]))),
    (re.compile(rf"Overhead:\s*({NUM})%{_SEP}({NUM})%"),
     lambda t, m: _set(t, overhead_percent=float(m[1]),
                       overhead_calculated_percent=float(m[2]))),
]
_RUNNING = re.compile(r"Running \[ MIGraphX Version: (\S+) \]: (.*)")
_COMPLETE = re.compile(rf"\[ MIGraphX Version: (\S+) \] Complete(?:\(({NUM})s\))?: (.*)")
_VERSION = re.compile(r"MIGraphX Version: (\S+)")
_ENV = re.compile(rf"({ENV_NAME})=(.*?)(?:\\ ?)?$")
_CHATTER = re.compile(
    r"(Compiling \.\.\.|Allocating params \.\.\.|Quantizing to .*|The program is already "
    r"compiled.*|Unused environment variable: .*|Compilation time: .*|\[\d{4}-\d\d-\d\d "
    r"\d\d:\d\d:\d\d\]|Validate \.\.\.|\w+: \d+(?:\.\d+)?ms)\s*$")
_TIME = re.compile(rf"Time:\s*({NUM})ms(?:{_SEP}({NUM})ms)?")
_OUTPUT = re.compile(r"(Output has |Output: |Ouput: |Min value: )")
_MODULE = re.compile(r'module: "([^"]*)"\s*$|Module (\S+):\s*$')
# What MIGraphX's own lines look like, read or not: an instruction, a timed line, a Summary
# row, a trailer line.
_OUTPUT_SHAPED = re.compile(rf"^[^\s=]+ = |:\s*{NUM}\s*ms\b|^(?:Batch size|Rate|Total time|"
                            r"Percentiles|Total instructions time|Overhead)\b")


class _Parser:
    """Line-by-line state machine behind :func:`parse_document`."""

    def __init__(self) -> None:
        self.doc = Document()
        self.foreign = ForeignLines("migraphx")   # (the lines foreign to the output)
        self.run: Run | None = None
        self.listing: Listing | None = None
        self.module: str | None = None
        self.in_summary = False
        self.after_blank = False
        self.in_output = False   # MIGraphX lines were read since the last markup line
        self.cut_lines: set[int] = set()   # the lines of the one the input stopped inside
        self.titled = False      # no line since the last block's title (a module, Summary:)
        self.whole_line = 0      # the last line read whole (no instruction cut short in it)
        self.truncated_line = 0  # the last line not whole by its grammar (printed_short)

    # -- run / block bookkeeping ---------------------------------------------------------

    def current_run(self, number: int, *, fresh: bool = False) -> Run:
        """The run that gets the next block; ``fresh`` starts a new one if this one is used."""
        run = self.run
        if run is None or run.closed or (fresh and (run.report or run.eval_records)):
            run = self.run = Run(line=number)
            self.doc.runs.append(run)
            self.end_blocks()
        return run

    def new_run(self, number: int) -> Run:
        """Start the next run: what follows belongs to another pasted report."""
        run = self.run = Run(line=number)
        self.doc.runs.append(run)
        self.end_blocks()
        return run

    def end_blocks(self) -> None:
        self.listing, self.module, self.in_summary = None, None, False

    # -- lines ---------------------------------------------------------------------------

    def feed_text(self, number: int, line: str) -> None:
        if not line.strip():
            self.after_blank = True
            if self.in_summary and self.run and self.run.report and self.run.report.summary:
                self.in_summary = False
            return
        for piece in _unglued(line).split("\n"):
            self.feed_line(number, piece)
        self.after_blank = False

    def feed_line(self, number: int, line: str) -> None:
        stripped = line.strip()
        self.titled = False
        if stripped.startswith((".", "…", "[")) and is_elision(stripped):
            self.elided(number, line)
        elif self.read_line(number, stripped):
            self.in_output = True
            # (a line of two glued pieces is whole when both are)
            self.whole_line = number if self.truncated_line != number else 0
        else:
            self.stray(number, line)

    def stray(self, number: int, line: str) -> None:
        """An unread line, by the rule of every text reader (:mod:`..stray_lines`)."""
        if is_markup(line):   # a pasted block ends: what follows is outside it
            self.in_output = False
        kind = stray_kind(line, in_table=self.in_output,
                          row_shaped=_OUTPUT_SHAPED.search(line.strip()) is not None,
                          cut=number in self.cut_lines, rows_over=self.rows_over())
        if kind == "row":
            self.doc.unparsed.append((number, line))
        elif kind == "elided":
            self.elided(number, line)
        else:
            self.foreign.add(number, line)

    def elided(self, number: int, line: str) -> None:
        self.doc.elided.append(number)
        self.doc.first_elided = self.doc.first_elided or (number, line)

    def rows_over(self) -> bool:
        """Whether the rows of the last block are over: a blank line followed them, no block
        is open (a run's ``Complete`` line closed it), or its last line was the one the
        format states a report ends with (``Overhead: a%, b%``)."""
        block = self.open_block()
        report = self.run.report if self.run is not None else None
        return self.after_blank or block is None or (
            block == "perf report" and report is not None
            and report.trailer.overhead_percent is not None)

    def open_block(self) -> str | None:
        """The title of the block the last line read belongs to, None outside the output."""
        run = self.run
        if run is None or run.closed or not self.in_output:
            return None
        return "Summary" if self.in_summary else "program listing" if self.listing else \
            "perf report" if run.report is not None else \
            "trace-eval records" if run.eval_records else None

    def read_line(self, number: int, stripped: str) -> bool:
        """Read one line of MIGraphX output; False when it is not one."""
        if (m := SUMMARY_ROW.match(stripped)) and (self.in_summary or summary_group(m[1])):
            report = self.summary_report(number)
            report.summary.append(SummaryRow(
                group=m[1], total_ms=float(m[2]), total_ms_text=m[2],
                count=int(m[3]) if m[3] else None,
                avg_ms=float(m[4]) if m[4] else None, percent=float(m[5]),
                line=number))
            return True
        self.in_summary = False
        # Instruction lines are nearly all of a big file and no other line has ' = ' here.
        if " = " in stripped and not stripped.startswith("Run instruction:") and \
                self.instruction(number, stripped):
            return True
        return any(handler(number, stripped) for handler in (
            self.driver, self.trailer, self.eval_line, self.header, self.instruction))

    def summary_report(self, number: int) -> PerfReport:
        """The report a Summary row belongs to; rows pasted without their ``Summary:``
        line open the summary of the current report, or of a new run when that one is
        complete."""
        if self.in_summary:
            report = self.current_run(number).report
            assert report is not None
            return report
        self.doc.untitled_summary += 1
        run = self.current_run(number)
        if run.report is not None and (run.report.summary or
                                       run.report.trailer.total_ms is not None):
            run = self.new_run(number)
        self.end_blocks()
        run.report = run.report or PerfReport(line=number)
        self.in_summary = True
        return run.report

    def driver(self, number: int, line: str) -> bool:
        if m := _RUNNING.match(line):
            run = self.current_run(number, fresh=True)
            if not run.empty or run.version:
                run = self.run = Run(line=number)
                self.doc.runs.append(run)
                self.end_blocks()
            run.version, run.command = m[1], m[2]
        elif m := _COMPLETE.match(line):
            run = self.current_run(number)
            run.version = run.version or m[1]
            run.command = run.command or m[3]
            run.complete_s = float(m[2]) if m[2] else None
            run.closed = True
        elif line.startswith("Reading: "):
            run = self.current_run(number, fresh=True)
            run.model_file = line[9:].strip()
            self.end_blocks()
        elif line.startswith("Running performance report"):
            run = self.current_run(number, fresh=True)
            run.report = PerfReport(line=number)
            self.end_blocks()
            self.titled = True
        elif line == "Summary:":
            run = self.current_run(number)
            if run.report is not None and (run.report.summary or run.report.trailer.total_ms
                                           is not None):
                run = self.new_run(number)   # a second report pasted after the first
            run.report = run.report or PerfReport(line=number)
            self.in_summary = self.titled = True
        elif m := _ENV.match(line):
            self.current_run(number).environment[m[1]] = m[2]
        elif _CHATTER.fullmatch(line) or (m := _VERSION.search(line)):
            run = self.current_run(number, fresh=line.startswith("Compiling"))
            if m := _VERSION.search(line):
                run.version = run.version or m[1]
            run.messages.append(line)
            self.end_blocks()
        elif line.startswith("Pass: "):
            self.new_listing(number).pass_name = line[6:].strip()
        else:
            return False
        return True

    def trailer(self, number: int, line: str) -> bool:
        for pattern, apply in _TRAILER:
            if m := pattern.match(line):
                run = self.current_run(number)
                probe = Trailer()
                try:
                    apply(probe, m)
                except NumberError:
                    return False   # a garbled trailer line: left unparsed, and counted
                printed = run.report.trailer.model_dump(exclude_none=True, exclude={
                    "percentiles_ms"}) if run.report is not None else {}
                if printed.keys() & probe.model_dump(exclude_none=True).keys():
                    run = self.new_run(number)   # the trailer of the next pasted report
                run.report = run.report or PerfReport(line=number)
                apply(run.report.trailer, m)
                self.end_blocks()
                return True
        return False

    def eval_line(self, number: int, line: str) -> bool:
        run = self.run
        if line.startswith("Run instruction:"):
            text = line[16:].strip()
            try:
                instruction: Instruction | None = parse_instruction(text, number)
            except ValueError:
                instruction = None
            if instruction is None or printed_short(instruction):
                self.truncated_line = number
            self.current_run(number).eval_records.append(
                EvalRecord(instruction=instruction, text=text, line=number))
            self.end_blocks()
            return True
        if run is None or not run.eval_records:
            return False
        record = run.eval_records[-1]
        if m := _TIME.fullmatch(line):
            record.host_ms = float(m[1])
            record.device_ms = float(m[2]) if m[2] else None
            return True
        if _OUTPUT.match(line) and not self.listing:
            record.output.append(line)
            self.truncated_line = number   # (a list of values: nothing tells it whole)
            return True
        return False

    def header(self, number: int, line: str) -> bool:
        m = _MODULE.fullmatch(line)
        if not m:
            return False
        name = m[1] if m[1] is not None else m[2]
        listing = self.listing
        if listing is None or name == "main" or name in listing.modules:
            listing = self.new_listing(number)
        listing.header = "module:" if m[1] is not None else "Module main:"
        self.module = name
        listing.modules.setdefault(name, [])
        self.titled = True
        return True

    def new_listing(self, number: int) -> Listing:
        run = self.current_run(number, fresh=True)
        self.listing = Listing(line=number)
        self.module = None
        run.listings.append(self.listing)
        return self.listing

    def instruction(self, number: int, line: str) -> bool:
        if not VAR.match(line):
            return False
        tail = PERF_TAIL.match(line)
        try:
            instruction = parse_instruction(tail[1].rstrip() if tail else line, number)
        except ValueError:
            return False
        run = self.current_run(number)
        report = run.report
        # (the timed lines of a report still open: its Summary and trailer not yet printed)
        timed = report.lines if report is not None and not report.summary and \
            report.trailer.total_ms is None else None
        untimed = timed is not None and (instruction.op == "@return" or (instruction.truncated
                                                                         and bool(timed)))
        # (among a report's timed lines, a line without its time is printed short too)
        if printed_short(instruction) or (bool(timed) and not tail
                                          and instruction.op != "@return"):
            self.truncated_line = number
        if tail or untimed:
            if report is None or report.summary or report.trailer.total_ms is not None:
                run = self.current_run(number, fresh=True)
                report = run.report = PerfReport(line=number)
            report.lines.append(PerfLine(instruction=instruction,
                                         ms=float(tail[2]) if tail else None,
                                         percent=float(tail[3]) if tail else None,
                                         ms_text=tail[2] if tail else None))
            return True
        listing = self.listing
        if listing is None or (self.after_blank and self.module is None):
            listing = self.new_listing(number)
        module = self.module or instruction.module_prefix or "main"
        listing.modules.setdefault(module, []).append(instruction)
        return True


def printed_short(instruction: Instruction) -> bool:
    """Whether an instruction's print may stop before its end (a cut file or paste): it is
    ``truncated``, its output shape does not close (a shape prints its strides' ``}``, a
    tuple its ``]`` after its last shape; only ``@return`` prints none, and its inputs
    instead), or it ends in debug symbols (a list of names: nothing tells it whole).

    >>> printed_short(parse_instruction("@4 = @literal{-1, 784} -> ")), printed_short(
    ...     parse_instruction("@5 = add(@1,@2) -> float_type, {1, 10}, {10, 1}"))
    (True, False)
    >>> printed_short(parse_instruction("@6 = topk(@5) -> [float_type, {2}, {1}, int64_type"))
    True
    """
    if instruction.truncated or instruction.shape is None:
        return instruction.truncated or instruction.op != "@return" or not instruction.inputs
    shape = instruction.shape.text.rstrip()
    return bool(instruction.debug_symbols) or \
        not shape.endswith("]" if shape.startswith("[") else ("}", "]"))


def parse_document(text: str | Iterable[str]) -> Document:
    """Parse a whole MIGraphX text output: a string, or its lines (a file read as it goes).

    >>> doc = parse_document("@0 = add(x,y) -> float_type, {2}, {1}: 0.5ms, 100%\\n")
    >>> doc.runs[0].report.lines[0].ms
    0.5
    """
    parser = _Parser()
    lines = text if isinstance(text, PastedLines) else PastedLines(text)
    cut_at = 0   # the (first) line number of the logical line the input stopped inside
    for number, line, wrapped in logical_lines(rows_as_lines(lines, parser.doc.unparsed)):
        parser.doc.wrapped.extend(wrapped)
        if lines.cut_line in (number, *wrapped):
            parser.cut_lines, cut_at = {number, *wrapped}, number
        parser.feed_text(number, line.rstrip())
    foreign = parser.foreign
    foreign.finish()
    parser.doc.foreign, parser.doc.first_foreign = foreign.count, foreign.first
    parser.doc.other_report = foreign.other
    parser.doc.table_cut = ended_inside(
        lines, table=parser.open_block(), expects_rows=parser.open_block() is not None,
        awaiting_rows=parser.titled, whole=cut_at != 0 and parser.whole_line == cut_at)
    return parser.doc
