"""Exact times are a property of the one decode path: every route a Chrome document takes
(a small file, a large one cut into pieces, a duplicated ``traceEvents`` key, stdin, the
checker's reader, split's router) reads the same nanoseconds from the same text.

The expected nanoseconds come from the written text alone: ``Decimal(text) * 1000`` in
Python's decimal arithmetic, which is exact for the at most three decimals written here.
"""

from __future__ import annotations

import io
import json
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.formats.chrome import checker
from traceconv.formats.chrome import stream as chrome_stream
from traceconv.splitting import split

# epoch µs in 2024 with 0-3 ns decimals (19 significant digits: past a double), written
# plainly or with an exponent
_MICROS = st.integers(1_700_000_000_000_000, 1_800_000_000_000_000)
_DECIMALS = st.integers(0, 3)
_FORM = st.sampled_from(["plain", "exponent"])


def _time_text(micros: int, nanos: int, decimals: int, form: str) -> str:
    """The text of ``micros`` µs and ``nanos`` ns with ``decimals`` of the ns written."""
    digits = str(micros) + f"{nanos:03d}"[:decimals]
    if form == "exponent":
        return f"{digits}e-{decimals}" if decimals else digits + "e0"
    return digits[:-decimals] + "." + digits[-decimals:] if decimals else digits


@st.composite
def _documents(draw: st.DrawFn) -> tuple[list[str], int]:
    """Time texts of a few events, in increasing order, and how many filler events
    follow them."""
    start = draw(_MICROS)
    texts = []
    for k in range(draw(st.integers(1, 6))):
        nanos = draw(st.integers(0, 999))
        texts.append(_time_text(start + 10 * k, nanos, draw(_DECIMALS), draw(_FORM)))
    return texts, draw(st.integers(0, 30))


def _document(texts: list[str], filler: int, duplicate: bool = False) -> bytes:
    """A Chrome trace of one 1 µs slice per time text, on threads of their own, then
    ``filler`` events on another thread (and, ``duplicate``, a second ``traceEvents``)."""
    events = [f'{{"ph": "X", "name": "e{k}", "pid": 1, "tid": {k + 1}, "ts": {text}, '
              f'"dur": 1}}' for k, text in enumerate(texts)]
    last = int(Decimal(texts[-1])) + 10
    events += [f'{{"ph": "X", "name": "pad", "pid": 1, "tid": 99, "ts": {last + 2 * k}, '
               f'"dur": 1, "args": {{"text": "{"x" * 90}"}}}}' for k in range(filler)]
    body = '{"traceEvents": [' + ",\n".join(events) + "]"
    if duplicate:
        body += ', "traceEvents": [{"ph": "X", "name": "dup", "pid": 1, "tid": 1, "ts": 0}]'
    return (body + "}").encode()


def _expected(texts: list[str]) -> list[int]:
    return [int(Decimal(text) * 1000) for text in texts]


def _starts(trace: traceconv.Trace, count: int) -> list[int]:
    """The starts of slices ``e0`` .. ``e{count-1}``, by name."""
    found = {s.name: s.start for s in trace.iter_slices() if s.name.startswith("e")}
    return [found[f"e{k}"] for k in range(count)]


@settings(max_examples=30)
@given(_documents(), st.sampled_from([None, 256, 1 << 10]))
def test_every_route_reads_the_written_nanoseconds(tmp_path_factory, document, piece):
    """A document read whole (one piece) or cut into pieces of 256 B or 1 KiB, as a file
    larger than one piece is, reads the same times by every route."""
    texts, filler = document
    want = _expected(texts)
    folder = tmp_path_factory.mktemp("doc")
    path = folder / "t.json"
    path.write_bytes(_document(texts, filler))
    dup = folder / "dup.json"
    dup.write_bytes(_document(texts, filler, duplicate=True))
    saved = chrome_stream.CHUNK
    chrome_stream.CHUNK = piece or saved
    try:
        assert _starts(traceconv.load(path), len(texts)) == want
        trace = traceconv.load(dup)
        assert _starts(trace, len(texts)) == want
        assert trace.diagnostics.count("chrome.duplicate_trace_events") == 1
        assert _stdin_starts(path.read_bytes(), len(texts)) == want
        assert _checker_times(path)[:len(texts)] == want
    finally:
        chrome_stream.CHUNK = saved


def _stdin_starts(data: bytes, count: int) -> list[int]:
    """The starts read from standard input (a stream that cannot seek back)."""
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)))
    try:
        return _starts(traceconv.load("-", format="chrome"), count)
    finally:
        sys.stdin = saved


def _checker_times(path: Path) -> list[int]:
    """The nanoseconds the checker reads for each event's ``ts``, in file order."""
    seen: list[int | None] = []
    real = checker._Checker.feed

    def feed(self, events, index, **options):
        seen.extend(checker._ns(e.get("ts")) for e in events if isinstance(e, dict))
        return real(self, events, index, **options)

    checker._Checker.feed = feed
    try:
        traceconv.check(path)
    finally:
        checker._Checker.feed = real
    return seen


@pytest.mark.parametrize("piece", [None, 1 << 10])
def test_split_routes_the_written_nanoseconds(tmp_path: Path, monkeypatch, piece):
    """split's router (a whole parse of a small file, or pieces of 1 KiB) writes each
    event's time as the source wrote it: the pieces read back the same nanoseconds."""
    if piece:
        monkeypatch.setattr(chrome_stream, "CHUNK", piece)
    texts = ["1712195495505582.988", "1712195495505583.5", "1712195495505590123e-3",
             "1712195495505600.001"]
    path = tmp_path / "t.json"
    path.write_bytes(_document(texts, 20))
    manifest = split(path, tmp_path / "out", by="time=1s", overview=False)
    starts: dict[str, int] = {}
    for entry in manifest["pieces"]:
        piece_trace = traceconv.load(tmp_path / "out" / entry["file"])
        starts.update({s.name: s.start for s in piece_trace.iter_slices()
                       if s.name.startswith("e")})
    assert [starts[f"e{k}"] for k in range(len(texts))] == _expected(texts)


def test_the_hostile_rounds_example_is_exact(tmp_path: Path):
    """The example that was rounded (a 2 KB file: one whole parse that skipped the exact
    reading) reads and writes back its nanoseconds."""
    texts = ["1712195495505582.988", "1712195495505583.5"]
    path = tmp_path / "t.json"
    path.write_bytes(_document(texts, 0))
    trace = traceconv.load(path)
    assert _starts(trace, 2) == [1712195495505582988, 1712195495505583500]
    out = tmp_path / "out.json"
    traceconv.save(trace, out, format="chrome")
    written = json.loads(out.read_bytes(), parse_float=Decimal)   # (digits as written)
    base = written["baseTimeNanoseconds"]
    times = sorted(Decimal(e["ts"]) * 1000 + base for e in written["traceEvents"]
                   if e.get("ph") == "X")
    assert times == [1712195495505582988, 1712195495505583500]


def test_blanks_longer_than_a_piece_before_the_document(tmp_path: Path, monkeypatch):
    """The one path reads past leading blanks of any length (a first piece of blanks only
    was an IndexError), and locates a document that is blanks only at its end."""
    monkeypatch.setattr(chrome_stream, "CHUNK", 1 << 10)
    path = tmp_path / "t.json"
    path.write_bytes(b" \n" * 2000 + _document(["1712195495505582.988"], 0))
    assert _starts(traceconv.load(path, format="chrome"), 1) == [1712195495505582988]
    path.write_bytes(b" \n" * 2000)
    with pytest.raises(traceconv.TraceconvError, match=r"t\.json:2001:1: .*no JSON value"):
        traceconv.load(path, format="chrome")
