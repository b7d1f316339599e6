"""``check`` on hostile Chrome JSON against the importer it stands for (trace_processor v52).

Hostile variants of the bundled Chrome traces (``benchmarks.fuzz.layers``, layer
``check``: wrong types, edge numbers, colliding ids, B/E halves, deep stacks, tiny events)
found four classes where ``check`` said otherwise than the importer does:

- a time field (``ts``, ``dur``, ``tts``, ``tdur``) that is neither a number nor a string
  spelling one in JSON's grammar makes the importer refuse the whole file, where ``check``
  said one event was dropped; a numeric string is read, where ``check`` dropped it; a
  negative time is dropped, an X with no ``dur`` too, an X with a negative one kept;
  integers multiply in int64 (wrapping); only the first character of ``ph`` counts; a
  pid or tid ``true`` is 0, not 1;
- v1 flows never close: every ``f`` draws an arrow from the flow's last start or step, a
  start while its id is open is ignored (ids that collide across processes);
- a flow point and a B (or an instant, or an X of no length) at one time bind in file
  order;
- slices past depth 512 are rows at depth 0, not dropped.

The tables below are what trace_processor v52 showed for each input (the integration test
loads each into it again); the property test compares ``check``'s counts with its tables on
the seeded variants.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.fuzz import layers
from traceconv.errors import InputError
from traceconv.formats.chrome.checker import check_chrome, check_chrome_events
from traceconv.io import Source


def X(ts, dur, name="a", tid=1, **extra):
    return {"ph": "X", "ts": ts, "dur": dur, "name": name, "pid": 1, "tid": tid, **extra}


OUTER = X(9, 20, "outer")
# (events, what the importer does: "refused", or its number of slice rows)
TIME_FIELDS = [
    ([OUTER, X(10, 5) | {"ts": "x"}], "refused"),
    ([OUTER, X(10, 5) | {"ts": None}], "refused"),
    ([OUTER, X(10, True)], "refused"),
    ([OUTER, X(10, [1])], "refused"),
    ([OUTER, X(10, 5) | {"ts": " 7"}], "refused"),
    ([OUTER, X(10, 5) | {"ts": "1e400"}], "refused"),
    ([OUTER, X(10, 5) | {"tts": "x"}], "refused"),
    ([OUTER, {"ph": "M", "ts": "x", "pid": 1, "name": "process_name",
              "args": {"name": "p"}}], "refused"),
    ([OUTER, X(10, "12")], 2),
    ([OUTER, X(10, 5) | {"ts": "1.5e1"}], 2),
    ([OUTER, X(10, 5) | {"ts": -3}], 1),        # a negative time: dropped by the sorter
    ([OUTER, {"ph": "X", "ts": 10, "pid": 1, "tid": 1, "name": "a"}], 1),   # no dur
    ([OUTER, X(10, -3)], 2),             # a negative dur: kept, of negative length
    ([OUTER, X(10, 4611686018427387904)], 2),   # 2**62 µs: 0 ns in int64
    ([OUTER, X(10, 5) | {"ts": 9300000000000000}], 1),   # wraps to a negative time
    ([OUTER, X(10, 5) | {"ph": "Xyz"}], 2),    # the first character is the phase
    # ids: true is pid 0, not 1 (an overlap across the two is no overlap); 1.0 is 1
    ([X(10, 5), X(12, 5) | {"pid": True}], 2),
    ([X(10, 5) | {"pid": 0}, X(12, 5) | {"pid": False}], 1),
    ([X(10, 5), X(12, 5) | {"pid": 1.0}], 1),
]
# one flow id's points, one X slice each, in time order: the arrows the importer draws
FLOW_CHAINS = {"sff": 2, "sft": 2, "stff": 3, "sfs": 1, "ssf": 1, "sfsf": 2, "ftf": 0,
               "stt": 2, "sfff": 3, "fsf": 1, "tsf": 1}


def _chain(phases: str) -> list[dict]:
    events = []
    for k, phase in enumerate(phases):
        events.append(X(10 * k, 5, chr(65 + k)))
        events.append({"ph": phase, "id": 1, "cat": "c", "name": "n", "pid": 1, "tid": 1,
                       "ts": 10 * k + 1, **({"bp": "e"} if phase == "f" else {})})
    return events


def _same_time(first: str, kind: str) -> list[dict]:
    """A flow step and a B, an instant or an X of no length at one time on thread 1, in
    the order ``first`` ("flow" or "slice"), the flow begun on thread 2."""
    point = {"ph": "t", "id": 1, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 10}
    slice_ = {"B": {"ph": "B", "ts": 10, "pid": 1, "tid": 1, "name": "dst"},
              "i": {"ph": "i", "s": "t", "ts": 10, "pid": 1, "tid": 1, "name": "dst"},
              "X0": X(10, 0, "dst")}[kind]
    pair = [point, slice_] if first == "flow" else [slice_, point]
    return [X(4, 3, "src", tid=2), {"ph": "s", "id": 1, "cat": "c", "name": "n", "pid": 1,
                                    "tid": 2, "ts": 5}, *pair, X(30, 5, "later")]


SAME_TIME = [(first, kind, 1 if first == "slice" else 0)
             for first in ("flow", "slice") for kind in ("B", "i", "X0")]
DEEP = [X(i, 10_000 - 2 * i) for i in range(600)]


REFUSING = {"time_not_a_number", "event_not_object"}   # the importer refuses the file


def _rows(report) -> int | str:
    if any(e["code"] in REFUSING for e in report.errors):
        return "refused"
    return report.counts["slices"] + report.counts["instants"]


@pytest.mark.parametrize(("events", "expected"), TIME_FIELDS)
def test_time_fields_as_the_importer_reads_them(events, expected):
    assert _rows(check_chrome_events(events)) == expected


@pytest.mark.parametrize(("phases", "arrows"), FLOW_CHAINS.items())
def test_flows_never_close_and_a_repeated_start_is_ignored(phases, arrows):
    report = check_chrome_events(_chain(phases))
    assert report.counts["flows"] == arrows
    repeated = {w["code"]: w["count"] for w in report.warnings}.get("flow_duplicate_start", 0)
    assert repeated == sum(phases[:k].count("s") > 0 for k, p in enumerate(phases) if p == "s")


@pytest.mark.parametrize(("first", "kind", "arrows"), SAME_TIME)
def test_a_flow_point_and_a_slice_at_one_time_bind_in_file_order(first, kind, arrows):
    assert check_chrome_events(_same_time(first, kind)).counts["flows"] == arrows


def test_slices_past_depth_512_are_rows():
    report = check_chrome_events(DEEP)
    assert report.counts["slices"] == 600
    assert {e["code"]: e["count"] for e in report.errors} == {"slice_depth_over_512": 88}


# -- the same inputs in the real trace_processor ---------------------------------------------

def _tp_rows(trace_processor, events: list) -> int | str:
    try:
        trace_processor.load(json.dumps({"traceEvents": events}).encode())
    except RuntimeError:
        return "refused"
    return trace_processor.query("select count(*) n from slice")[0].n


def test_the_tables_are_what_trace_processor_does(trace_processor):
    for events, expected in TIME_FIELDS:
        assert _tp_rows(trace_processor, events) == expected, events[-1]
    for phases, arrows in FLOW_CHAINS.items():
        trace_processor.load(json.dumps({"traceEvents": _chain(phases)}).encode())
        assert trace_processor.query("select count(*) n from flow")[0].n == arrows, phases
    for first, kind, arrows in SAME_TIME:
        trace_processor.load(json.dumps({"traceEvents": _same_time(first, kind)}).encode())
        assert trace_processor.query("select count(*) n from flow")[0].n == arrows
    trace_processor.load(json.dumps({"traceEvents": DEEP}).encode())
    assert trace_processor.query("select count(*) n, max(depth) d from slice")[0].n == 600


def _left_alone(events: list) -> bool:
    """The two classes ``check`` still reads otherwise (see the report of this round): a
    time that is an integer beyond int64 (the importer draws it at a time that is no
    function of it alone), and a flow start at the time of an E on its thread."""
    stamps: dict[tuple, set[str]] = {}
    for e in events:
        if not isinstance(e, dict):
            continue
        if any(type(e.get(k)) is int and not -2**63 <= e[k] < 2**63 for k in ("ts", "dur")):
            return True
        if isinstance(e.get("ph"), str) and e["ph"][:1] in ("s", "E"):
            key = (str(e.get("pid")), str(e.get("tid")), str(e.get("ts")))
            stamps.setdefault(key, set()).add(e["ph"][:1])
    return any(len(phases) == 2 for phases in stamps.values())


def test_check_counts_what_trace_processor_shows_on_hostile_variants(trace_processor,
                                                                     tmp_path):
    """Seeded variants of the bundled Chrome traces: the importer refuses the file exactly
    when ``check`` says it would; otherwise its thread slices and instants (and instants
    of no thread) and its arrows are ``check``'s counts."""
    compared, disagree = 0, []
    for seed, variant in layers.variants("check", 16):
        try:
            doc = json.loads(variant.data)
        except ValueError:
            continue   # (not JSON: refused by both, tested elsewhere)
        events = doc.get("traceEvents") if isinstance(doc, dict) else doc
        if not isinstance(events, list) or _left_alone(events):
            continue
        path = tmp_path / seed.name
        path.write_bytes(variant.data)
        try:
            report = check_chrome(Source(str(path)))
        except InputError:   # (NaN, Infinity: no JSON to the checker nor the importer)
            report = None
        try:
            trace_processor.load(variant.data)
        except RuntimeError:
            shown: object = "refused"
        else:
            row = trace_processor.query(
                "select (select count(*) from slice s join thread_track t on s.track_id = t.id"
                ") + (select count(*) from slice where dur = 0 and track_id not in "
                "(select id from thread_track)) n, (select count(*) from flow) f")[0]
            shown = (row.n, row.f)
        said = "refused" if report is None or _rows(report) == "refused" else (
            report.counts["slices"] + report.counts["instants"], report.counts["flows"])
        compared += 1
        if said != shown:
            disagree.append(f"{seed.name} / {variant.label}: check {said}, importer {shown}")
    assert compared >= 30
    assert not disagree, "\n".join(disagree)
