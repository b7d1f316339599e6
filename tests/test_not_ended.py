"""Slices whose end is not in the input: one rule for every reader, no time in any analysis.

A ``B`` never closed (Chrome JSON) and a TrackEvent BEGIN without its END (Perfetto) are
ended by the builder at the trace's last timestamp and marked ``args.unfinished``; the
analyses count them as calls and never time them. Checked on real cuts of Chromium traces
against the files read with plain ``json`` and against the real trace_processor, which keeps
``dur = -1`` for such slices.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import traceconv
from traceconv.analysis.activity import Timeline
from traceconv.analysis.critical_path import critical_path
from traceconv.analysis.diff import op_totals
from traceconv.presentation.summary import render, summary_data

DATA = Path(__file__).resolve().parent / "data"
CHROME_CUT = DATA / "chrome" / "chromium156_headless_startup_cut.json"
PERFETTO_CUT = DATA / "perfetto" / "chromium150_headless_startup_cut.pftrace"

# per slice name, from trace_processor: calls, time of the slices that ended, slices that
# never ended (dur = -1), zero-length ones (instants are slices there), and self time
# (the duration less the children's, for slices that ended on a thread's track: a slice of
# an async track, a range no thread runs, is no one's self time)
TP_BY_NAME = """
select s.name, count(*) calls, sum(case when s.dur > 0 then s.dur else 0 end) total,
       sum(s.dur = -1) open, sum(s.dur = 0) zero,
       sum(case when s.dur >= 0 and s.track_id in (select id from thread_track)
           then s.dur - coalesce(
           (select sum(c.dur) from slice c where c.parent_id = s.id and c.dur > 0), 0)
           else 0 end) self
from slice s group by s.name
"""


def _plain_chrome(path: Path) -> dict:
    """The cut read with plain json: per name calls, time of the slices that ended (X,
    B/E per thread, b/e per process, category, id and name) and those that never ended;
    the never-ended ones as (name, ts ns); the file's last timestamp (ns)."""
    events = json.loads(path.read_bytes())["traceEvents"]
    calls: Counter[str] = Counter()
    total: Counter[str] = Counter()
    open_by_name: Counter[str] = Counter()
    stacks: dict[tuple, list[dict]] = defaultdict(list)
    last = 0
    for e in sorted(events, key=lambda e: e.get("ts", 0)):   # (stable: file order on ties)
        ph, name = e["ph"], e.get("name", "")
        if ph == "M":
            continue
        last = max(last, e["ts"] + e.get("dur", 0))
        if ph == "X":
            calls[name] += 1
            total[name] += e["dur"] * 1000
        elif ph in "Bb":
            calls[name] += 1
        if ph in "BE":
            key: tuple = ("thread", e["pid"], e["tid"])
        elif ph in "be":
            key = ("async", e["pid"], e.get("cat"), json.dumps(e.get("id2") or e.get("id")),
                   name)
        else:
            continue
        if ph in "Bb":
            stacks[key].append(e)
        elif stacks[key]:
            begin = stacks[key].pop()
            total[begin["name"]] += (e["ts"] - begin["ts"]) * 1000
    never = sorted((b["name"], b["ts"] * 1000) for stack in stacks.values() for b in stack)
    open_by_name.update(name for name, _ in never)
    return {"calls": calls, "total": total, "open": open_by_name, "never": never,
            "last": last * 1000}


def _ops_by_name(trace: traceconv.Trace) -> dict[str, list[int]]:
    """summary --json's ops summed per name: calls, host total, not timed, self host."""
    out: dict[str, list[int]] = {}
    for op in summary_data(trace)["ops"]:
        row = out.setdefault(op["name"], [0, 0, 0, 0])
        for i, key in enumerate(("calls", "host_total_ns", "not_timed", "self_host_ns")):
            row[i] += op.get(key) or 0
    return out


def test_chrome_cut_summary_counts_calls_and_times_only_what_ended():
    plain = _plain_chrome(CHROME_CUT)
    trace = traceconv.load(CHROME_CUT)
    ops = _ops_by_name(trace)
    assert set(ops) == set(plain["calls"])
    assert {name: tuple(row[:3]) for name, row in ops.items()} == {
        name: (plain["calls"][name], plain["total"][name], plain["open"][name])
        for name in ops}
    assert sum(plain["open"].values()) == len(plain["never"]) == 8
    # the rows made only of slices that never ended take no time (the file: 91.7 % of the
    # critical path and 2.1 s of self time before)
    assert ops["Run Message Loop"][1:] == [0, 1, 0]
    assert ops["LayerTreeHostSize"][1:] == [0, 1, 0]
    assert "8 slices never ended in the input: counted as calls, not timed" in render(trace)
    assert summary_data(trace)["not_timed"] == 8


def test_chrome_cut_unended_slices_end_at_the_last_timestamp_marked():
    plain = _plain_chrome(CHROME_CUT)
    trace = traceconv.load(CHROME_CUT)
    marked = [s for s in trace.iter_slices() if (s.args or {}).get("unfinished") is True]
    assert sorted((s.name, s.start) for s in marked) == plain["never"]
    assert {s.end for s in marked} == {plain["last"]}
    assert trace.diagnostics.count("chrome.begin_without_end") == 8
    # the one place analyses read times from: no length for them, a call at their start
    timeline = Timeline(trace)
    rows = [s.index for s in marked]
    assert timeline.not_ended[rows].all() and not timeline.dur[rows].any()
    assert timeline.not_ended.sum() == 8


def test_chrome_cut_diff_totals_leave_out_the_made_up_lengths():
    plain = _plain_chrome(CHROME_CUT)
    totals = op_totals(traceconv.load(CHROME_CUT))
    assert {name: (t.calls, t.total_ns) for (_, name), t in totals.items()} == {
        name: (plain["calls"][name], plain["total"][name]) for name in plain["calls"]}


def test_the_mark_survives_chrome_output(tmp_path: Path):
    """The Chrome JSON output keeps the made-up end, marked: read back, the analyses still
    leave it untimed."""
    out = tmp_path / "cut.out.json"
    traceconv.convert(CHROME_CUT, out, to="chrome")
    events = json.loads(out.read_bytes())["traceEvents"]
    written = [e for e in events if (e.get("args") or {}).get("unfinished") is True]
    plain = _plain_chrome(CHROME_CUT)
    assert len(written) == len(plain["never"])
    ops = _ops_by_name(traceconv.load(out))
    assert {name: tuple(row[:3]) for name, row in ops.items()} == {
        name: (plain["calls"][name], plain["total"][name], plain["open"][name])
        for name in ops}


@pytest.mark.integration
def test_chrome_cut_equals_trace_processor(trace_processor):
    trace_processor.load(CHROME_CUT.read_bytes())
    never = sorted((r.name, r.ts) for r in trace_processor.query(
        "select name, ts from slice where dur = -1"))
    trace = traceconv.load(CHROME_CUT)
    assert sorted((s.name, s.start) for s in trace.iter_slices()
                  if (s.args or {}).get("unfinished")) == never
    want = {r.name: r for r in trace_processor.query(TP_BY_NAME)}
    for name, (calls, total, not_timed, self_ns) in _ops_by_name(trace).items():
        row = want[name]
        assert (total, not_timed) == (row.total, row.open), name
        if not row.zero:   # (instants are zero-length slices in trace_processor)
            assert calls == row.calls, name
        assert self_ns == row.self, name
    _not_on_the_path(trace, never, trace_processor)


@pytest.mark.integration
def test_perfetto_cut_equals_trace_processor(trace_processor):
    trace_processor.load(PERFETTO_CUT.read_bytes())
    never = sorted((r.name, r.ts) for r in trace_processor.query(
        "select name, ts from slice where dur = -1"))
    trace = traceconv.load(PERFETTO_CUT)
    ops = _ops_by_name(trace)
    want = {r.name: r for r in trace_processor.query(TP_BY_NAME)}
    for name, (calls, total, not_timed, self_ns) in ops.items():
        row = want[name]
        assert (total, not_timed, self_ns) == (row.total, row.open, row.self), name
        if not row.zero:
            assert calls == row.calls, name
    # (one of them a legacy async 'b': Chrome's GlobalMemoryDump)
    assert sorted((s.name, s.start) for s in trace.iter_slices()
                  if (s.args or {}).get("unfinished")) == never
    assert trace.diagnostics.count("perfetto.slice_not_ended") == len(never) == 13
    assert f"{len(never)} slices never ended in the input" in render(trace)
    _not_on_the_path(trace, never, trace_processor)


def _not_on_the_path(trace: traceconv.Trace, never: list[tuple[str, int]],
                     trace_processor) -> None:
    """No link of the critical path is a slice that trace_processor says never ended, nor
    one of its async tracks' (a range, no thread's work)."""
    ranges = {(r.name, r.ts) for r in trace_processor.query(
        "select name, ts from slice where track_id not in (select id from thread_track)")}
    path = critical_path(trace, "timeline")
    assert path.path and path.not_timed == len([s for s in trace.iter_slices()
                                                 if (s.name, s.start) in set(never)])
    on_path = {(s.name, s.start) for e in path.path if e.row is not None
               for s in [trace.slice(e.row)]}
    assert ranges and not on_path & (set(never) | ranges)
