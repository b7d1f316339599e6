"""The typed-record column path of the Chrome reader gives what the per-event loop gives.

Both paths read every bundled Chrome trace cut in 4 KiB pieces: the model they build must
be the same (rows, strings, tracks, flows, memory blocks, diagnostics) and so must the
files written from it: the same .pftrace bytes, the same Chrome JSON values (the record
path keeps args as the source wrote them, and the Chrome writer copies that text). A synthetic trace mixes, piece by piece, what the column path
takes with everything it must hand to the loop (other phases, wrong types, times out of
range, ``[memory]`` slices, flow v2 bindings, process-scope instants).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest

import traceconv
from traceconv.formats.chrome import reader, record_keys, stream

ROOT = Path(__file__).resolve().parent.parent


def _head(path: Path) -> str:
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            return f.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


SAMPLES = sorted(p for p in [*ROOT.glob("samples/**/*.json*"), *ROOT.glob("tests/data/**/*.json*")]
                 if "traceEvents" in _head(p) or _head(p).lstrip().startswith("["))


def _plain(piece: bytes | bytearray) -> list:
    raise msgspec.ValidationError("the per-event loop only")


def _model(trace: traceconv.Trace) -> dict:
    """Everything the readers put in a trace, as plain comparable values."""
    tables = {}
    for name in ("slices", "instants", "counters", "flows"):
        table = getattr(trace, name)
        tables[name] = {c: getattr(table, c).tolist() for c, _ in table._columns}
        if hasattr(table, "args"):
            tables[name]["args"] = list(table.args)
    return {
        "tables": tables, "strings": list(trace.strings.strings),
        "tracks": [(t.name, t.kind, t.process, t.tid, t.sort_index) for t in trace.tracks],
        "processes": [(p.name, p.kind, p.pid, p.labels) for p in trace.processes],
        "memory": [repr(b) for b in trace.memory],
        "diagnostics": sorted((d.code, d.count, str(d.example)) for d in trace.diagnostics),
    }


def _written(trace: traceconv.Trace, fmt: str) -> bytes:
    out = io.BytesIO()
    traceconv.registry.get(fmt).load().write(trace, out)
    return out.getvalue()


def _outputs(trace: traceconv.Trace) -> tuple[bytes, object]:
    """The .pftrace bytes and the Chrome JSON's value (json: ints of any size)."""
    return _written(trace, "perfetto"), json.loads(_written(trace, "chrome"))


def _both(path: Path, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[traceconv.Trace, traceconv.Trace, list[bool]]:
    """The trace read with records, then without; and per piece offered to the records
    decoder, whether it was taken as records."""
    monkeypatch.setattr(stream, "CHUNK", 4096)
    pieces: list[bool] = []
    decode = reader.decode_records

    def counting(piece: bytes | bytearray) -> list:
        pieces.append(False)
        records = decode(piece)
        pieces[-1] = True
        return records

    monkeypatch.setattr(reader, "decode_records", counting)
    fast = traceconv.load(path, format="chrome")
    monkeypatch.setattr(reader, "decode_records", _plain)
    plain = traceconv.load(path, format="chrome")
    return fast, plain, pieces


@pytest.mark.slow
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_records_read_what_the_event_loop_reads(path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        fast, plain, _ = _both(path, monkeypatch)
    except traceconv.TraceconvError as error:   # a broken sample: both paths say the same
        monkeypatch.setattr(reader, "decode_records", _plain)
        with pytest.raises(traceconv.TraceconvError) as plain_error:
            traceconv.load(path, format="chrome")
        assert str(plain_error.value) == str(error)
        return
    assert _model(fast) == _model(plain)
    assert _outputs(fast) == _outputs(plain)


def test_the_column_path_is_taken_on_kineto_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    path = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
    _, plain, pieces = _both(path, monkeypatch)
    assert len(pieces) > 100 and sum(pieces) >= 0.9 * len(pieces)
    events = json.loads(path.read_bytes())["traceEvents"]
    assert plain.counts()["slices"] == sum(e["ph"] == "X" for e in events) == 2725


def _synthetic() -> list[dict]:
    """Pieces of plain slices/instants/flows among every kind of event the loop must read."""
    events: list[dict] = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1,
                           "args": {"name": "main"}}]
    odd = [
        {"ph": "B", "name": "open", "ts": 5.5, "pid": 1, "tid": 1},
        {"ph": "E", "ts": 6.5, "pid": 1, "tid": 1},
        {"ph": "X", "name": "[memory]", "ts": 7, "dur": 0, "pid": 1, "tid": 1,
         "args": {"Addr": 1, "Bytes": 8}},
        {"ph": "X", "name": "big", "ts": 1e300, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "neg", "ts": 8, "dur": -1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "v2", "ts": 9, "dur": 1, "pid": 1, "tid": 1, "bind_id": 7,
         "flow_out": True},
        {"ph": "i", "name": "proc", "ts": 9, "s": "p", "pid": 1, "tid": 1},
        {"ph": "X", "name": 12, "ts": 9, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "C", "name": "mem", "ts": 9, "pid": 1, "args": {"bytes": 3}},
        {"ph": "X", "name": "args", "ts": 9, "dur": 1, "pid": 1, "tid": 1, "args": [1]},
        {"ph": "X", "name": "dict pid", "ts": 9, "dur": 1, "pid": {"a": 1}, "tid": 1},
    ]
    for i in range(4000):
        ts = 10 + i * 3 + (0.125 if i % 3 else 0)   # ints and floats, mixed within pieces
        pid, tid = (1, 1) if i % 5 else ("1", "2")  # numeric strings share the int's track
        events.append({"ph": "X", "name": f"op{i % 7}", "cat": ["cpu_op", "kernel"][i % 2],
                       "ts": ts, "dur": 2, "pid": pid, "tid": tid,
                       "args": {"External id": i} if i % 4 else None})
        if i % 9 == 0:
            events.append({"ph": "i", "name": "mark", "ts": ts + 1, "pid": 1, "tid": 1})
        if i % 11 == 0:
            events += [{"ph": "s", "id": i, "cat": "fwdbwd", "name": "f", "ts": ts, "pid": 1,
                        "tid": 1},
                       {"ph": "f", "id": i, "cat": "fwdbwd", "name": "f", "ts": ts + 1.5,
                        "bp": "e", "pid": 1, "tid": 2}]
        if i % 300 == 17:
            events.append(odd[(i // 300) % len(odd)])
    return events


@pytest.mark.parametrize("remembered", [record_keys.LIMIT, 3])   # 3: forgotten again and again
def test_records_and_loop_agree_on_mixed_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                remembered: int) -> None:
    monkeypatch.setattr(record_keys, "LIMIT", remembered)
    events = _synthetic()
    path = tmp_path / "mixed.json"
    path.write_bytes(json.dumps({"traceEvents": events}).encode())
    fast, plain, pieces = _both(path, monkeypatch)
    assert sum(pieces) > 20 and not all(pieces)
    assert _model(fast) == _model(plain)
    assert _outputs(fast) == _outputs(plain)
    codes = {d.code: d.count for d in fast.diagnostics}
    slices = [e for e in events if e["ph"] == "X"]
    assert codes["chrome.memory_event_as_slice"] == sum(e["name"] == "[memory]" for e in slices)
    assert codes["model.end_before_start"] == sum(e["dur"] < 0 for e in slices)
    # (ts 1e300 µs is past int64: read at the time range's end, by the builder's time rule)
    assert codes["chrome.malformed_event"] == sum(isinstance(e["pid"], dict) for e in slices)
    assert codes["model.time_beyond_range"] == sum(e["ts"] == 1e300 for e in slices)
    assert fast.counts()["slices"] == len(slices) - codes["chrome.malformed_event"] + sum(
        e["ph"] == "B" for e in events) - codes["chrome.memory_event_as_slice"]


@pytest.mark.parametrize("bad", [b'"args": {"a": "\xff"}', b'"name": "\xff"'])
def test_invalid_utf8_in_a_record_piece_is_located(tmp_path: Path, bad: bytes,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The records decoder skips over args texts without checking them: the reader checks
    their UTF-8 and leaves the piece to the loop, whose parser locates the byte."""
    monkeypatch.setattr(stream, "CHUNK", 4096)
    good = b'{"ph": "X", "name": "op", "ts": 1, "dur": 1, "pid": 1, "tid": 1}'
    events = [good] * 200 + [b'{"ph": "X", "ts": 2, "dur": 1, "pid": 1, "tid": 1, ' + bad + b"}"]
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"traceEvents": [\n' + b",\n".join(events) + b"\n]}")
    with pytest.raises(traceconv.InputError) as error:
        traceconv.load(path, format="chrome")
    assert f"bad.json:{len(events) + 1}:" in str(error.value)


def test_numbers_beyond_a_double_read_as_infinity_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """msgspec and orjson refuse 1e400; JSON.parse and Python's json read it as infinity, and
    so does traceconv, whether the args stay text (the record path decodes them when a
    writer asks) or are decoded at once (the loop, and a record piece handed back to it by
    a ``[memory]`` slice). An integer of more digits than Python makes an int of is a
    number JSON.parse reads as infinity too, beside a 1e400 or not (a fuzz input held both:
    the second decode stopped at the one the first had not named)."""
    events = []
    huge = b"9" * 5000
    for i in range(3000):
        name = b"[memory]" if i == 1500 else b"op%d" % (i % 5)
        events.append(b'{"ph": "X", "name": "%s", "ts": %d, "dur": 1, "pid": 1, "tid": 1, '
                      b'"args": {"big": 1e400, "neg": -1%s.5, "n": %d, "huge": %s}}' % (
                          name, i * 2, b"9" * 400, i, huge if i % 7 else b"0"))
    text = b'{"traceEvents": [' + b",\n".join(events) + b"]}"
    path = tmp_path / "huge.json"
    path.write_bytes(text)
    # Python's json, the independent reading (its ints made floats: as JSON.parse reads them)
    reference = json.loads(text, parse_int=float)["traceEvents"]
    assert {e["args"]["big"] for e in reference} == {float("inf")}
    assert {e["args"]["neg"] for e in reference} == {float("-inf")}
    expected_huge = [e["args"]["huge"] for e in reference if e["name"] != "[memory]"]
    assert set(expected_huge) == {float("inf"), 0.0}
    fast, plain, pieces = _both(path, monkeypatch)
    assert sum(pieces) > 10
    assert _model(fast) == _model(plain)
    slices = fast.slices
    assert len(slices) == 2999   # the [memory] slice is read as an instant
    assert {slices.args[r]["big"] for r in range(len(slices))} == {float("inf")}
    assert {slices.args[r]["neg"] for r in range(len(slices))} == {float("-inf")}
    assert [slices.args[r]["huge"] for r in range(len(slices))] == expected_huge
    assert _written(fast, "perfetto") == _written(plain, "perfetto")
    chrome = [json.loads(_written(trace, "chrome")) for trace in (fast, plain)]
    # the same values whether the args were copied as text or decoded: every number beyond
    # a double is the text "Infinity", which Perfetto's importer keeps (1e400 it stops at)
    assert chrome[0] == chrome[1]
    written = [e["args"] for e in chrome[0]["traceEvents"] if e.get("ph") == "X"]
    assert [float(args["huge"]) for args in written] == expected_huge
    assert {(args["big"], args["neg"]) for args in written} == {("Infinity", "-Infinity")}
    for trace in (fast, plain):   # every writer takes them
        for fmt in ("summary", "summary-json"):
            _written(trace, fmt)


@pytest.mark.parametrize("name", ["kineto_args_1e400.json", "kineto_memory_args_1e400.json"])
def test_fuzzed_kineto_pieces_with_infinite_args(name: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Two minimised fuzz inputs (a 1e999 among a Kineto op's or a [memory] event's args):
    the Kineto flavour's key decoder and the Perfetto writer's failed on the text the
    record path kept. Read in 1 KiB pieces, both paths now give the same model and files."""
    monkeypatch.setattr(stream, "CHUNK", 1024)
    path = ROOT / "tests" / "data" / "hostile" / name
    fast = traceconv.load(path, format="chrome")
    monkeypatch.setattr(reader, "decode_records", _plain)
    plain = traceconv.load(path, format="chrome")
    assert _model(fast) == _model(plain)
    assert _outputs(fast)[0] == _outputs(plain)[0]


def test_record_keys_forgetting_resolves_the_whole_piece_again(monkeypatch):
    """Past LIMIT combinations the table starts over: a piece that mixes keys seen before
    with new ones still gets every record's columns (it raised KeyError)."""
    monkeypatch.setattr(record_keys, "LIMIT", 2)
    given = {name: (k, 10 + k, 20 + k) for k, name in enumerate("abcd")}

    class Rec:
        def __init__(self, name):
            self.name, self.cat, self.pid, self.tid = name, "op", 1, 1

    keys = record_keys.RecordKeys()
    keys.columns([Rec(n) for n in "abc"], lambda key: given[key[0]])
    columns = keys.columns([Rec(n) for n in "ada"], lambda key: given[key[0]])
    assert [c.tolist() for c in columns] == [[0, 3, 0], [10, 13, 10], [20, 23, 20]]
