"""What the fuzz campaigns found once they ran the analyses too, one minimised input per class.

The fuzzer's worker runs every analysis the command line offers over each model a mutant
reads into (summary, advice, critical path, idle time, stragglers, memory, a diff of the
trace with itself, the HTML report) and the transformations, whose results must be valid
models (``benchmarks/fuzz/worker.py``, ``_analyses``). Each input here goes through that
same contract: an analysis answers or refuses with a ``TraceconvError``; nothing else.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

import traceconv
from benchmarks.fuzz import worker
from traceconv import analysis
from traceconv.report import render_report

FOUND = Path(__file__).parent / "data" / "hostile" / "fuzz_analyses"
INPUTS = sorted(FOUND.glob("*.input"))


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_a_fuzz_finding_keeps_the_contract(path: Path, tmp_path: Path):
    outcome = worker.replay(path, str(tmp_path))
    assert outcome.status in ("ok", "error"), (outcome.signature, outcome.detail)


def test_steps_of_no_length_leave_the_walk_on_the_busy_host_thread():
    """The one step left was moved to the time edge with no length: the main thread is then
    the host thread with work (four ops on one thread), not the step's empty track."""
    trace = traceconv.load(FOUND / "chrome__keyerror_critical_walk_start.input",
                           format="chrome")
    path = analysis.critical_path(trace)
    names = {entry.name for entry in path.path}
    assert {"aten::mm", "aten::transpose"} <= names


def test_a_deep_envelope_copies(tmp_path: Path):
    """Found by trim: the envelope (kept in the metadata's attributes) nested 800 deep (the
    reader takes 900 levels) was copied by recursion, which runs out before that."""
    depth = 800
    path = tmp_path / "deep.json"
    path.write_text('{"deep": ' + "[" * depth + "]" * depth + ', "traceEvents": ['
                    '{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]}')
    trace = traceconv.load(path)
    copied = trace.copy()
    value, levels = copied.metadata.attributes["deep"], 1
    while value:
        value, levels = value[0], levels + 1
    assert levels == depth
    copied.metadata.attributes["added"] = 1   # the copy's mapping is its own
    assert "added" not in trace.metadata.attributes


def test_trim_leaves_no_op_naming_only_its_kernels():
    """An XLA op's slices are its own slice and the kernels it ran; a window that keeps a
    kernel but not the op's slice leaves the op no slices (a valid model), and the kernel
    slice stays in the trace."""
    trace = traceconv.load(FOUND / "xplane__trim_op_slices.input", format="xplane")
    op = trace.graph.nodes["op/2"]
    own = {op["name"], op["type"]}
    names = [trace.strings.strings[trace.slices.name[row]] for row in op["slices"]]
    assert own & set(names)
    bounds = trace.time_range
    quarter = (bounds[1] - bounds[0]) // 4
    window = (bounds[0] + quarter, bounds[1] - quarter)
    starts = {row: int(trace.slices.start[row]) for row in op["slices"]}
    inside = [row for row in op["slices"] if window[0] <= starts[row] < window[1]]
    assert inside and all(trace.strings.strings[trace.slices.name[row]] not in own
                          for row in inside)
    out = analysis.trim(trace, window=window)
    assert traceconv.validate(out) == []
    assert out.graph.nodes["op/2"]["slices"] == []
    kept = {trace.strings.strings[trace.slices.name[row]] for row in inside}
    assert kept <= {s.name for s in out.iter_slices()}


def test_device_numbers_past_int64_or_negative_are_not_known(tmp_path: Path):
    """Found by the HTML report, which printed a device's memory of 10^400 bytes: the builder
    takes a device's sizes as counts (int64, not negative), once for every reader."""
    path = tmp_path / "devices.json"
    path.write_text('{"deviceProperties": [{"id": 0, "name": "A100", "totalGlobalMem": 1'
                    + "0" * 400 + ', "computeMajor": -8, "computeMinor": 0}], "traceEvents": ['
                    '{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]}')
    trace = traceconv.load(path)
    (device,) = trace.metadata.devices
    assert (device.name, device.memory_bytes, device.compute_major, device.compute_minor) == (
        "A100", None, None, 0)
    assert trace.diagnostics.count("model.device_number_beyond") == 2
    assert "A100" in render_report(trace)


def test_a_begin_end_pair_longer_than_int64_is_the_builders_to_keep():
    """Found by seed 4247 (a reader class, not an analysis one): a B at -9.2e18 ns and its
    E at 4 ms are both within int64, their difference is not. The pair is an interval for
    the builder, whose time rule moves the B to -1e18 (counted)."""
    trace = traceconv.load(FOUND / "chrome__overflow_begin_end_length.input", format="chrome")
    (pair,) = [s for s in trace.iter_slices() if s.name == "get_execution_strategy"]
    assert (pair.start, pair.start + pair.dur) == (-10**18, 4_173_586)
    assert trace.diagnostics.count("model.time_beyond_range") == 1


def test_a_rocprof_cell_of_digits_and_a_control_character_is_no_number(tmp_path):
    """Found by seed 4248: the integer pattern's ``\\s`` took "\\x1d" (a character Python
    calls space) after the digits, and ``int()`` refused it. The row is malformed, counted.
    (The file as found ends inside that row, a cell short: a cut row, left out as such.
    Made whole, it is one row, as ``csv.reader`` reads it: a CSV line ends at "\n" or "\r"
    alone, and the cell keeps its "\x1d". Either way it is the input's only row: nothing is
    read, and the line says why.)"""
    found = FOUND / "rocprof__control_character_after_digits.input"
    with pytest.raises(traceconv.InputError, match=r"1 left out \(csv.row_cut\)"):
        traceconv.load(found, format="rocprof")
    whole = tmp_path / found.name
    whole.write_bytes(found.read_bytes() + b',"4"')
    rows = list(csv.reader(io.StringIO(whole.read_bytes().decode(), newline="")))
    assert len(rows) == 2 and "\x1d" in "".join(rows[1])   # (the header, one row)
    with pytest.raises(traceconv.InputError, match=r"1 left out \(rocprof.malformed_row\)"):
        traceconv.load(whole, format="rocprof")


@pytest.mark.parametrize("name", ["rocprof__stats_total_beyond_int64",
                                  "rocprof__stats_total_past_a_double"])
def test_a_statistic_past_int64_is_drawn_within_the_time_range(name: str, tmp_path):
    """A rocprof statistic of 10^20 ns, and one of 10^400: its breakdown slice (drawn when
    written) ends at the model's time edge, its args hold the clamped numbers, and the
    statistic is clamped by the builder, counted."""
    from traceconv.model.repairs import STAT_LIMIT, TIME_MAX

    # (the file as found ends inside its row, a cell short of its header: made whole)
    whole = tmp_path / f"{name}.input"
    whole.write_bytes((FOUND / f"{name}.input").read_bytes() + b",\n")
    trace = traceconv.load(whole, format="rocprof")
    traceconv.save(trace, tmp_path / "drawn.pftrace")
    drawn = list(traceconv.load(tmp_path / "drawn.pftrace").iter_slices())
    assert [(s.start, s.dur) for s in drawn] == [(0, TIME_MAX)]
    assert drawn[0].args["total_ms"] == STAT_LIMIT / 1e6 == trace.stats[0].total_ns / 1e6
    assert trace.diagnostics.count("model.statistic_beyond_range") >= 1


def test_reserved_ranges_summing_past_int64_are_drawn():
    """Found by seed 4257: a snapshot's segment of 2^63 - 2^31 bytes beside others, all
    alive at once: the memory-flow legend's "most reserved at once" summed past int64 and
    its clip cast the levels back to int64. The peak is the plain sum of the seven ranges."""
    import io
    import re

    from traceconv.formats.memflow_svg import write
    from traceconv.units import format_bytes

    trace = traceconv.load(FOUND / "torch-snapshot__reserved_sizes_past_int64.input",
                           format="torch-snapshot")
    assert all(r.free_ns is None for r in trace.reservations)   # (all alive at the end)
    peak = sum(r.size for r in trace.reservations)
    assert peak > 2**63 - 1
    out = io.BytesIO()
    write(trace, out)
    assert re.findall(r"7 ranges · ([^<]*) at the peak", out.getvalue().decode()) == [
        format_bytes(peak)]
