"""The chunked Chrome reader on hostile text: linear work, file locations, no silent cuts.

Work is measured, not timed: the bytes handed to the JSON parser and the bytes the exact boundary
scan walks over, as a multiple of the file size (a quadratic reader re-parses each piece
once per bad candidate boundary, hundreds of times the file on these inputs).
"""

from __future__ import annotations

import io
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

import traceconv
from traceconv.formats.chrome import stream
from traceconv.formats.chrome.stream import Document, DocumentError, read_document

CHUNK = 4096


class Work:
    """Counts the bytes parsed as JSON and scanned by the exact cutter."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parsed = self.scanned = 0
        loads, find = stream.json_loads, stream._Cutter.find

        def counting_loads(data: bytes | bytearray) -> object:
            self.parsed += len(data)
            return loads(data)

        def counting_find(cutter: stream._Cutter, buffer: bytearray, minimum: int) -> object:
            self.scanned += len(buffer) - cutter.pos
            return find(cutter, buffer, minimum)

        monkeypatch.setattr(stream, "json_loads", counting_loads)
        monkeypatch.setattr(stream._Cutter, "find", counting_find)


class ForwardOnly(io.BytesIO):
    """A stream that cannot go back (a pipe, a gzip): the reader counts lines as it goes,
    where on a file it reads the text again to locate an error."""

    def seekable(self) -> bool:
        return False


# errors are located alike on both kinds of stream
STREAMS = pytest.mark.parametrize("opener", [io.BytesIO, ForwardOnly],
                                  ids=["seekable", "forward-only"])


def events_of(text: bytes, opener: type[io.BytesIO] = io.BytesIO) -> list:
    doc = read_document(opener(text), chunk_size=CHUNK)
    return [e for chunk in doc.chunks for e in chunk]


def object_form(events: Iterator[bytes], tail: bytes = b'], "traceName": "t"}') -> bytes:
    return b'{"schemaVersion": 1, "traceEvents": [' + b",".join(events) + tail


def x_event(i: int, args: bytes = b"{}") -> bytes:
    return (b'{"ph": "X", "name": "op%d", "ts": %d, "dur": 1, "pid": 1, "tid": 1, "args": %s}'
            % (i, i, args))


HOSTILE = {
    # every candidate cut of a piece falls inside a string
    "cuts_in_strings": object_form(x_event(i, b'{"s": "%s"}' % (b"},{" * 3000))
                                   for i in range(40)),
    # ... or inside nested values: one event holding thousands of objects
    "cuts_in_nesting": object_form([x_event(0, b'{"list": [%s]}' % b",".join(
        b'{"k": %d}' % i for i in range(60_000)))]),
    # megabytes of whitespace between two events, and after the last
    "whitespace": object_form([x_event(1), b" " * (4 << 20) + x_event(2)],
                              b"\n" * (1 << 20) + b'], "traceName": "t"}'),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_boundaries_are_read_in_linear_work(name, monkeypatch):
    text = HOSTILE[name]
    expected = orjson.loads(text)["traceEvents"]
    work = Work(monkeypatch)
    assert events_of(text) == expected
    assert work.parsed <= 3 * len(text)
    assert work.scanned <= 3 * len(text)


@STREAMS
def test_one_bad_byte_is_found_in_linear_work_and_located_in_the_file(monkeypatch, opener):
    lines = [x_event(i) for i in range(20_000)]
    lines[15_000] = lines[15_000].replace(b'"dur": 1', b'"dur": 1x')
    text = b'{"traceEvents": [\n' + b",\n".join(lines) + b"\n]}\n"
    with pytest.raises(orjson.JSONDecodeError) as whole:
        orjson.loads(text)
    work = Work(monkeypatch)
    with pytest.raises(DocumentError) as err:
        events_of(text, opener)
    assert (err.value.line, err.value.column) == (whole.value.lineno, whole.value.colno)
    assert (err.value.line, err.value.column) == (15_002, lines[15_000].index(b"x,") + 1)
    assert work.parsed <= 3 * len(text)


@STREAMS
def test_errors_on_long_lines_count_characters_like_orjson(opener):
    """One line of 300 KiB with non-ASCII names before the error: the column counts
    characters from the start of the line, across pieces."""
    events = [x_event(i).replace(b'"op', "\"é€".encode()) for i in range(3000)]
    events[2500] = events[2500].replace(b'"tid": 1', b'"tid": 1,,')
    text = object_form(iter(events))
    with pytest.raises(orjson.JSONDecodeError) as whole:
        orjson.loads(text)
    with pytest.raises(DocumentError) as err:
        events_of(text, opener)
    assert (err.value.line, err.value.column) == (whole.value.lineno, whole.value.colno)


@pytest.mark.slow
@STREAMS
def test_large_object_missing_its_closing_brace_is_an_error(tmp_path: Path, opener):
    """Small or large, an object cut short is not valid JSON: exit 1 with the place."""
    good = object_form(x_event(i) for i in range(5000))
    assert orjson.loads(good)["traceName"] == "t"
    for cut in (good[:-1], good[:-len(', "traceName": "t"}')],
                good[:-len('], "traceName": "t"}')]):
        with pytest.raises(DocumentError, match="unexpected end of data") as err:
            events_of(cut, opener)
        assert err.value.line == 1 and err.value.column == len(cut.decode()) + 1
        path = tmp_path / "cut.json"
        path.write_bytes(cut)
        with pytest.raises(traceconv.InputError, match=f"cut.json:1:{len(cut) + 1}: not valid"):
            traceconv.load(path)


@STREAMS
def test_content_after_the_object_is_an_error(opener):
    text = object_form(x_event(i) for i in range(5000)) + b" {}"
    with pytest.raises(DocumentError, match="unexpected content") as err:
        events_of(text, opener)
    assert err.value.column == len(text) - 1


@STREAMS
def test_large_array_form_may_omit_its_bracket_but_not_end_mid_event(opener):
    events = [x_event(i) for i in range(5000)]
    doc = read_document(opener(b"[" + b",\n".join(events) + b",\n"), chunk_size=CHUNK)
    assert len([e for chunk in doc.chunks for e in chunk]) == 5000 and doc.truncated
    with pytest.raises(DocumentError) as err:
        events_of(b"[" + b",\n".join(events)[:-5], opener)
    assert err.value.line == 5000


BLANKS = b" \t\r\n" * (1 << 18)   # 1 MiB of whitespace, all four kinds, lines among them
BLANK_RUNS = {
    # runs before the first event, on both sides of each comma, before the ] and after it
    "object": b'{"traceEvents": [' + BLANKS + x_event(1) + BLANKS + b"," + BLANKS + x_event(2)
    + BLANKS + b"]" + BLANKS + b"}" + BLANKS,
    "keys after": b'{"traceEvents": [' + x_event(1) + b"]" + BLANKS + b', "traceName": "t"}',
    "array": b"[" + BLANKS + x_event(1) + BLANKS + b"," + BLANKS + x_event(2) + BLANKS + b"]"
    + BLANKS,
    # tiny elements: bare numbers and strings, one with blanks after it
    "bare values": b'{"traceEvents": [' + b"1," * 60_000 + b'"a",' * 20_000 + b"2"
    + BLANKS + b",3]}",
}


class Held:
    """The most text the reader holds at once: the longest buffer the cutter is given and
    the longest piece handed to the parser."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.buffer = self.piece = 0
        loads, find = stream.json_loads, stream._Cutter.find

        def watched_loads(data: bytes | bytearray) -> object:
            self.piece = max(self.piece, len(data))
            return loads(data)

        def watched_find(cutter: stream._Cutter, buffer: bytearray, minimum: int) -> object:
            self.buffer = max(self.buffer, len(buffer))
            return find(cutter, buffer, minimum)

        monkeypatch.setattr(stream, "json_loads", watched_loads)
        monkeypatch.setattr(stream._Cutter, "find", watched_find)


@pytest.mark.parametrize("name", sorted(BLANK_RUNS))
def test_runs_of_blanks_and_tiny_values_are_read_in_memory_of_a_few_chunks(name, monkeypatch):
    """Found by a hostile-input round: 600 MB of spaces inside the event array (600 KB
    gzipped) were held whole, then copied for the parse (1.29 GB)."""
    text = BLANK_RUNS[name]
    envelope = orjson.loads(text)
    expected = envelope if isinstance(envelope, list) else envelope.pop("traceEvents")
    held, read = Held(monkeypatch), 0
    tracemalloc.start()   # (what was made before, the expected values, is not counted)
    try:
        doc = read_document(ForwardOnly(text), chunk_size=CHUNK)
        for chunk in doc.chunks:   # compared as they come, so that they are not all held
            assert chunk == expected[read:read + len(chunk)]
            read += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == len(expected)
    assert doc.envelope == ({} if isinstance(envelope, list) else envelope)
    assert held.buffer <= 4 * CHUNK and held.piece <= 4 * CHUNK
    assert peak < len(text) // 8, (peak, len(text))


@STREAMS
@pytest.mark.parametrize("text", [
    b'{"traceEvents": [' + x_event(1) + BLANKS + x_event(2) + b"]}",   # no comma
    b'{"traceEvents": [' + x_event(1) + b"," + BLANKS + b"," + x_event(2) + b"]}",   # two
    b'{"traceEvents": [,' + BLANKS + x_event(2) + b"]}",                   # a comma first
    b'{"traceEvents": [' + x_event(1) + b"]" + BLANKS + b"x}",           # junk after the ]
    b"[" + x_event(1) + b"]" + BLANKS + b"{}",                             # and after an array
], ids=["no comma", "two commas", "comma first", "after ]", "after array"])
def test_a_syntax_error_beyond_a_run_of_blanks_is_located_as_orjson_does(text, opener):
    with pytest.raises(orjson.JSONDecodeError) as whole:
        orjson.loads(text)
    with pytest.raises(DocumentError) as err:
        events_of(text, opener)
    assert (err.value.line, err.value.column) == (whole.value.lineno, whole.value.colno)


@STREAMS
def test_a_run_of_blanks_at_the_end_of_an_unclosed_array(opener):
    """The array form may omit its ``]`` after a run of blanks; the object form may not."""
    doc = read_document(opener(b"[" + x_event(1) + b"," + BLANKS), chunk_size=CHUNK)
    assert [e["name"] for chunk in doc.chunks for e in chunk] == ["op1"] and doc.truncated
    with pytest.raises(DocumentError, match="unexpected end of data"):
        events_of(b'{"traceEvents": [' + x_event(1) + BLANKS, opener)


HELD_PIECES = 16
LIMIT = CHUNK * HELD_PIECES   # the most the reader holds of one event or key value, here
FILLERS = [4 * LIMIT, 16 * LIMIT]    # two sizes: the peak must not follow them


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit of 64 KiB, so that the fillers beyond it are small and quick to read."""
    monkeypatch.setattr(stream, "HELD_PIECES", HELD_PIECES)


def peak_reading(text: bytes) -> tuple[Document, list, int]:
    """Read ``text`` (a forward-only stream) chunk by chunk: the document, its events and
    the peak of traced memory while reading (the input itself not counted)."""
    events: list = []
    tracemalloc.start()
    try:
        doc = read_document(ForwardOnly(text), chunk_size=CHUNK)
        for chunk in doc.chunks:
            events += chunk
        return doc, events, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("filler", FILLERS)
@pytest.mark.parametrize("form", ["object", "array"])
def test_an_event_over_the_limit_is_refused_with_its_path_and_offset(filler, form, small_limit):
    """Found by a hostile-input round: 600 MB of spaces inside one event were held and
    copied (1.3 GB). An event larger than the reader holds is refused where it starts."""
    before = (b'{"traceEvents": [' if form == "object" else b"[") + x_event(1) + b", " + x_event(2) + b","
    text = before + b'{"ph": "X",' + b" " * filler + b'"ts": 1}]' + (b"}" if form == "object" else b"")
    with pytest.raises(DocumentError) as err:
        peak_reading(text)
    # third element; it starts right after the text written before it
    assert err.value.path == ("$.traceEvents[2]" if form == "object" else "$[2]")
    assert err.value.offset == len(before)
    tracemalloc.start()
    try:
        with pytest.raises(DocumentError):
            events_of(text, ForwardOnly)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * LIMIT, peak


HUGE_VALUES = {   # values of a key traceconv does not read, each about ``size`` bytes
    "string": lambda size: b'"' + b" " * size + b'"',
    "wide object": lambda size: b"{" + b",".join(b'"k%d": [1, "]"]' % i
                                                 for i in range(size // 14)) + b"}",
    "deep array": lambda size: b"[" * (size // 2) + b"]" * (size // 2),
}


@pytest.mark.parametrize("filler", FILLERS)
@pytest.mark.parametrize("kind", [   # (a bracket at a time: the nested ones take seconds)
    "string", pytest.param("wide object", marks=pytest.mark.slow),
    pytest.param("deep array", marks=pytest.mark.slow)])
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_huge_value_of_an_unread_key_is_read_past_in_bounded_memory(filler, kind, where, small_limit):
    """Found by a hostile-input round: a key before ``traceEvents`` (600 MB) was read whole,
    one after it held to the closing brace. Other keys are kept, the huge one named."""
    huge = b'"k": ' + HUGE_VALUES[kind](filler)
    events = b"[" + x_event(1) + b"," + x_event(2) + b"]"
    if where == "before":
        text = b'{"schemaVersion": 1, ' + huge + b', "traceEvents": ' + events + b', "a": [2]}'
    else:
        text = b'{"schemaVersion": 1, "traceEvents": ' + events + b", " + huge + b', "a": [2]}'
    doc, read, peak = peak_reading(text)
    assert [e["name"] for e in read] == ["op1", "op2"]
    assert doc.envelope == {"schemaVersion": 1, "a": [2]} and doc.skipped_keys == ["k"]
    assert peak < 4 * LIMIT, peak


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_huge_value_of_a_key_traceconv_reads_is_refused_with_its_offset(where, small_limit):
    value = b'{"x": "' + b"y" * (2 * LIMIT) + b'"}'
    events = b'"traceEvents": [' + x_event(1) + b"]"
    head = (b'{"otherData": ' if where == "before" else b"{" + events + b', "otherData": ')
    text = head + value + (b", " + events + b"}" if where == "before" else b"}")
    with pytest.raises(DocumentError) as err:
        events_of(text, ForwardOnly)
    assert err.value.path == '$["otherData"]' and err.value.offset == len(head)


def test_traceconvs_own_record_may_pass_the_limit_of_one_value(small_limit, monkeypatch):
    """The writers' record (memory blocks and op graph of the model, which grow with it) is
    held up to its own, larger bound: a Chrome trace traceconv wrote reads back (a 15 MB
    record for 1,524 blocks of a real snapshot, past the 64 MiB of one event at about 6,500
    blocks); past that bound it is refused in the same words, with the bound it passed."""
    monkeypatch.setattr(stream, "RECORD_PIECES", 4 * HELD_PIECES)
    record = b'{"x": "' + b"y" * (2 * LIMIT) + b'"}'
    events = b'"traceEvents": [' + x_event(1) + b"]"
    doc = read_document(ForwardOnly(b'{"traceconv": ' + record + b", " + events + b"}"),
                        chunk_size=CHUNK)
    assert [e["name"] for chunk in doc.chunks for e in chunk] == ["op1"]
    assert doc.envelope["traceconv"] == orjson.loads(record)
    too_big = b'{"x": "' + b"y" * (8 * LIMIT) + b'"}'
    with pytest.raises(DocumentError, match=f"over {4 * LIMIT:,} bytes") as err:
        events_of(b'{"traceconv": ' + too_big + b", " + events + b"}", ForwardOnly)
    assert err.value.path == '$["traceconv"]'


def test_a_written_record_over_the_limit_of_one_value_reads_back(tmp_path, monkeypatch):
    """Memory blocks carried in the record come back when it is larger than one event may
    be (the reader's piece shrunk so that a real snapshot's record passes that limit)."""
    snapshot = Path(__file__).resolve().parent / "data" / "torch_snapshot"
    source = traceconv.load(snapshot / "snapshot_expandable.pkl.gz")
    out = tmp_path / "blocks.json"
    traceconv.save(source, out)
    assert len(source.memory) > 3000
    monkeypatch.setattr(stream, "CHUNK", 1024)
    monkeypatch.setattr(stream, "HELD_PIECES", 4)   # 4 KiB of one value...
    assert out.stat().st_size > 16 * 4096
    back = traceconv.load(out)
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in back.memory] == \
        [(b.address, b.size, b.alloc_ns, b.free_ns) for b in source.memory]


@pytest.mark.parametrize("text", [
    b'{"a": 1, "traceEvents": {"x": 1}' + b" " * CHUNK + b"}",     # not an array
    b'{"a" 1, "traceEvents": []' + b" " * CHUNK + b"}",             # no colon
    b'{"a": 1 "traceEvents": []' + b" " * CHUNK + b"}",             # no comma
    b'{"a": [1}, "traceEvents": []' + b" " * CHUNK + b"}",          # a bad value
    b'{1: 1, "traceEvents": []' + b" " * CHUNK + b"}",              # a key not a string
    b'{"traceEvents": [' + x_event(1) + b"]" + b" " * CHUNK + b', "a": 1 "b": 2}',
], ids=["not an array", "no colon", "no comma", "bad value", "bad key", "no comma after"])
def test_a_bad_key_or_value_around_the_events_is_a_located_error(text):
    with pytest.raises(DocumentError) as err:
        events_of(text, ForwardOnly)
    assert err.value.line == 1 and err.value.column is not None


def test_a_skipped_key_is_counted_under_its_code(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(stream, "HELD_PIECES", 2)   # 512 KiB at the default piece size
    path = tmp_path / "t.json"
    path.write_bytes(b'{"traceEvents": [' + b",".join(x_event(i) for i in range(3000))
                     + b'], "big": "' + b"x" * (1 << 20) + b'"}')
    trace = traceconv.load(path)
    found = {d.code: d for d in trace.diagnostics}
    assert found["chrome.envelope_value_skipped"].count == 1
    assert "big" not in trace.metadata.attributes
