"""Where the chunked Chrome reader cuts its pieces never changes what it reads.

A document is read with the piece size forced to every value from 1 to 64 bytes (a cut
then falls between values, after a comma, inside whitespace, a string or a number, after
the ``[`` of ``traceEvents`` and at the closing ``]`` / ``}``) and with the default size:
whether it is accepted, the events and envelope read, and the place of an error are the
same. Acceptance and what is read are checked against plain ``json.loads``; an error's place
against the whole-document read (one piece), since ``json`` locates errors its own way.
"""

from __future__ import annotations

import io
import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.formats.chrome import stream
from traceconv.formats.chrome.stream import DocumentError, read_document

PIECE_SIZES = [*range(1, 65), None]   # None: the default (the whole document in one piece)


class ForwardOnly(io.BytesIO):
    """A stream that cannot go back (a pipe): places are counted as the text goes by."""

    def seekable(self) -> bool:
        return False


def read(text: bytes, piece: int | None, opener: type[io.BytesIO] = io.BytesIO) -> tuple:
    """("accepted", events, envelope, has traceEvents, truncated) or ("refused", line,
    column, message).
    (The bound on one event, a number of pieces, is lifted: at 1-byte pieces it would
    refuse an event of a few hundred bytes, a rule of its own, tested elsewhere.)"""
    try:
        with mock.patch.object(stream, "HELD_PIECES", 1 << 20):
            doc = read_document(opener(text), piece)
            events = [event for chunk in doc.chunks for event in chunk]
    except DocumentError as exc:
        return "refused", exc.line, exc.column, str(exc)
    return "accepted", events, doc.envelope, doc.has_events_key, doc.truncated


blank = st.sampled_from(["", "", " ", "\n", " \t\n  ", " " * 70])
key = st.sampled_from(["a", "b", "c"]).map(json.dumps)
scalar = st.one_of(st.integers(-10, 10**6).map(str), st.sampled_from(
    ["true", "null", "1.5e3", '"x"', '"},{"', '"]"', '","', '"a\\"b\\\\"', '"\\u00e9"', '"é"']))


def _array_text(parts: list[tuple[str, str, str]]) -> str:
    return "[" + ",".join(before + value + after for before, value, after in parts) + "]"


def _object_text(parts: list[tuple[str, str, str, str]]) -> str:
    return "{" + ",".join(b + k + a + ":" + c + v for b, k, a, c, v in parts) + "}"


value = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(st.tuples(blank, inner, blank), max_size=3).map(_array_text),
    st.lists(st.tuples(blank, key, blank, blank, inner), max_size=3).map(_object_text)),
    max_leaves=6)
event = st.one_of(
    st.builds('{{"ph": "X", "ts": {}, "dur": 1, "name": {}}}'.format, st.integers(0, 999), value),
    value)
member = st.builds("{}{}{}:{}{}{}".format, blank, st.sampled_from(
    ['"otherData"', '"k"', '"displayTimeUnit"']), blank, blank, value, blank)
# Ways a valid document is made invalid (or left valid); each takes the text and a fraction
# of its length (where to cut or insert).
MISTAKES = {
    "none": lambda text, at: text,
    "trailing comma": lambda text, at: text[:text.rfind("]")] + " ," + text[text.rfind("]"):],
    "missing comma": lambda text, at: text.replace(",", " ", 1),
    "double comma": lambda text, at: text[:text.rfind(",")] + ",," + text[text.rfind(",") + 1:],
    "cut short": lambda text, at: text[:int(len(text) * at)],
    "unclosed": lambda text, at: text.rstrip()[:-1],
    "garbage after": lambda text, at: text + " x",
    "value after": lambda text, at: text + " {}",
    "lone comma": lambda text, at: text[:int(len(text) * at)] + "," + text[int(len(text) * at):],
    "lone bracket": lambda text, at: text[:int(len(text) * at)] + "]" + text[int(len(text) * at):],
    "lone brace": lambda text, at: text[:int(len(text) * at)] + "}" + text[int(len(text) * at):],
}


@st.composite
def documents(draw: Any) -> bytes:
    """A Chrome trace (array or object form), valid or with one mistake."""
    events = draw(st.lists(st.tuples(blank, event, blank), max_size=5))
    text = _array_text(events)
    if draw(st.booleans()):
        before = draw(st.lists(member, max_size=2))
        after = draw(st.lists(member, max_size=2))
        text = "{" + "".join(m + "," for m in before) + draw(blank) + '"traceEvents":' + \
            draw(blank) + text + "".join("," + m for m in after) + draw(blank) + "}"
    text = draw(blank) + text + draw(blank)
    mistake = draw(st.sampled_from(sorted(MISTAKES)))
    return MISTAKES[mistake](text, draw(st.floats(0, 1))).encode()


def expected_events(text: bytes) -> tuple[list, dict, bool] | None:
    """The events, envelope and whether there is a traceEvents key, of a valid document,
    by ``json.loads``; None if invalid. (Duplicate keys do not arise: the generator writes
    traceEvents once, and a mistake inside a key only renames it.)"""
    try:
        whole = json.loads(text)
    except ValueError:
        return None
    if isinstance(whole, list):
        return whole, {}, True
    if "traceEvents" not in whole:
        return [], whole, False
    return whole.pop("traceEvents"), whole, True


def check_every_piece_size(text: bytes, opener: type[io.BytesIO]) -> None:
    whole = read(text, None, opener)
    expected = expected_events(text)
    if expected is not None:
        assert whole == ("accepted", *expected, False), text
    elif whole[0] == "accepted":   # only an array form may lack its closing ] (catapult's rule)
        assert whole[4] and text.lstrip().startswith(b"["), text
        body = text.rstrip()
        assert json.loads(body[:-1] + b"]" if body.endswith(b",") else body + b"]") == \
            whole[1], text
    for piece in PIECE_SIZES:
        assert read(text, piece, opener) == whole, (text, piece)


@settings(max_examples=60)
@given(documents())
def test_the_piece_size_changes_nothing(text: bytes) -> None:
    check_every_piece_size(text, io.BytesIO)


@pytest.mark.slow
@settings(max_examples=1500)
@given(documents(), st.sampled_from([io.BytesIO, ForwardOnly]))
def test_the_piece_size_changes_nothing_on_more_documents(text: bytes,
                                                          opener: type[io.BytesIO]) -> None:
    check_every_piece_size(text, opener)


@pytest.mark.parametrize("text, place", [
    (b'[ {"a":1} , ]', (1, 11)),          # the comma (orjson names a trailing comma there)
    (b'[1,,2]', (1, 4)),                  # the second comma: no value before it
    (b'{"traceEvents": [1,\n]}', (1, 19)),
    (b'[1,,', (1, 4)),                    # a missing value, not the array left open
    (b'{"k": 1 "traceEvents": []}', (1, 9)),
    (b'{"traceEvents": [], "t": 5  {}', (1, 29)),
])
def test_a_mistake_at_a_cut_is_named_where_it_is(text: bytes, place: tuple[int, int]) -> None:
    """Hand-counted places (1-based columns) for each piece size."""
    for piece in PIECE_SIZES:
        outcome = read(text, piece)
        assert outcome[0] == "refused" and outcome[1:3] == place, (piece, outcome)


READER_EVENTS = [b'  {"ph": "X", "name": "a", "ts": 1, "dur": 5, "pid": 1, "tid": 1}',
                 b'  {"ph": "X", "name": "b", "ts": 2, "dur": 1, "pid": 1, "tid": 1} ']


@pytest.mark.parametrize("piece", PIECE_SIZES)
def test_the_reader_refuses_a_trailing_comma_at_every_piece_size(tmp_path, monkeypatch, piece):
    """Through the reader (typed records once it knows the flavour): a trailing comma is
    refused at its place for every cut, and the same events without it are read alike."""
    if piece:
        monkeypatch.setattr(stream, "CHUNK", piece)
    body = b",\n".join(READER_EVENTS)
    path = tmp_path / "t.json"
    path.write_bytes(b'{"traceEvents": [\n' + body + b",\n]}\n")
    with pytest.raises(traceconv.InputError) as refused:
        traceconv.load(path)
    comma = READER_EVENTS[1].decode() + ","   # line 3, the comma after the last event
    assert (refused.value.location, refused.value.message) == (
        f"3:{len(comma)}", "not valid JSON: trailing comma is not allowed")
    path.write_bytes(b'{"traceEvents": [\n' + body + b"\n]}\n")
    slices = [(s.name, s.start, s.end) for s in traceconv.load(path).iter_slices()]
    assert sorted(slices) == [("a", 1000, 6000), ("b", 2000, 3000)]   # (us → ns)
