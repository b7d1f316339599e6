"""Log lines of a system trace (``android_log`` packets) as instants, equal to
trace_processor's ``android_logs`` table on the same bytes (issue 34, part 2).

Expected values: by hand for the small trace, and the real trace_processor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import traceconv
from tests.test_perfetto_system import _app
from traceconv.errors import InputError

REALTIME_AT_BOOT_1000 = 5_000_000   # the realtime clock's reading when the boot clock reads 1,000


def log_trace(path: Path, snapshot: bool = True) -> Path:
    """Two lines of the loader (one plain, one structured) and one of a thread of no known
    process, after a ClockSnapshot tying the realtime clock to the boot clock."""
    made = _app(100, (101,), "t")
    if snapshot:
        packet = made.builder.add_packet()
        packet.timestamp = 1_000
        for clock_id, reading in ((6, 1_000), (1, REALTIME_AT_BOOT_1000)):   # BOOTTIME, REALTIME
            clock = packet.clock_snapshot.clocks.add()
            clock.clock_id, clock.timestamp = clock_id, reading
    logs = made.builder.add_packet()
    logs.timestamp = 1_200
    for at, pid, tid, prio, tag, message, args in (
            (250, 100, 101, 4, "loader", "batch ready", ()),
            (350, 100, 101, 6, "loader", None, (("x", 3), ("file", "a.bin"))),
            (400, 0, 102, 3, "other", "no pid", ())):
        event = logs.android_log.events.add()
        event.timestamp, event.tid, event.prio, event.tag = REALTIME_AT_BOOT_1000 + at, tid, prio, tag
        if pid:
            event.pid = pid
        if message is not None:
            event.message = message
        for name, value in args:
            arg = event.args.add()
            arg.name = name
            if isinstance(value, int):
                arg.int_value = value
            else:
                arg.string_value = value
    return made.write(path)


def lines(trace: traceconv.Trace) -> list[tuple[int, int | None, str, str, int]]:
    return sorted((i.ts, trace.tracks[i.track].tid, i.name, i.args["tag"], i.args["prio"])
                  for i in trace.iter_instants() if i.category == "log")


def test_log_lines_by_hand(tmp_path: Path):
    trace = traceconv.load(log_trace(tmp_path / "logs.pftrace"))
    assert lines(trace) == [(1_250, 101, "batch ready", "loader", 4),
                            (1_350, 101, 'x=3 file="a.bin"', "loader", 6),
                            (1_400, 102, "no pid", "other", 3)]


def test_without_a_snapshot_no_line_is_placed(tmp_path: Path):
    """Its 3 log lines all left out (no clock snapshot places them), nothing else in it:
    nothing read, the line naming what was left out."""
    path = log_trace(tmp_path / "logs.pftrace", snapshot=False)
    with pytest.raises(InputError) as caught:
        traceconv.load(path)
    assert str(caught.value) == (
        f"{path}: nothing read: the perfetto reader found no event, statistic, op or memory "
        "block in it; 3 left out (perfetto.clock_without_snapshot), such as: clock 1")



def with_bytes_replaced(path: Path, replacements: dict[bytes, tuple[bytes, int]]
                        ) -> traceconv.Trace:
    """The log trace at ``path`` with each of its byte strings (found the given number of
    times) replaced, read and held to the model's invariants."""
    data = path.read_bytes()
    for old, (new, times) in replacements.items():
        assert data.count(old) == times
        data = data.replace(old, new)
    path.write_bytes(data)
    trace = traceconv.load(path)
    assert traceconv.validate(trace) == []
    return trace


def test_a_line_that_is_not_utf8_is_repaired_and_counted(tmp_path: Path):
    """(fuzz) a message and a tag of invalid UTF-8 were kept as bytes: the model's string
    table must hold text (the validator's string invariant)."""
    trace = with_bytes_replaced(log_trace(tmp_path / "logs.pftrace"), {
        b"batch ready": (b"batch\xffready", 1), b"loader": (b"lo\xfeder", 2)})
    assert lines(trace)[0][2:4] == ("batch\ufffdready", "lo\ufffdder")
    assert trace.diagnostics.count("perfetto.invalid_utf8") == 3   # the message, two tags

@pytest.mark.integration
@pytest.mark.parametrize("snapshot", [True, False])
def test_log_lines_equal_trace_processor(tmp_path: Path, trace_processor, snapshot: bool):
    path = log_trace(tmp_path / "logs.pftrace", snapshot)
    trace_processor.load(path.read_bytes())
    expected = sorted((r.ts, r.tid, r.msg, r.tag, r.prio) for r in trace_processor.query(
        "select l.ts, t.tid, l.msg, l.tag, l.prio from android_logs l "
        "join thread t on l.utid = t.utid"))
    assert len(expected) == (3 if snapshot else 0)
    if snapshot:
        assert lines(traceconv.load(path)) == expected
    else:   # (trace_processor places none either: nothing read)
        with pytest.raises(InputError, match="nothing read"):
            traceconv.load(path)


def test_a_structured_line_that_is_not_utf8_is_repaired_and_counted(tmp_path: Path):
    """An argument's name or string value of invalid UTF-8 read as Python's bytes text
    (``file="b'a\\xffbin'"``) inside the message: it is repaired like the other strings."""
    trace = with_bytes_replaced(log_trace(tmp_path / "logs.pftrace"), {
        b"a.bin": (b"a\xffbin", 1), b"\x04file": (b"\x04fi\xfee", 1)})
    assert lines(trace)[1][2] == 'x=3 fi\ufffde="a\ufffdbin"'
    assert trace.diagnostics.count("perfetto.invalid_utf8") == 2
