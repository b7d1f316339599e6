"""StaticMemoryInfo.json read as columns agrees with the schema read record by record.

The reference is the pydantic path the reader had: the whole document validated by
:class:`StaticMemoryInfo`, then each chunk's texts turned into numbers with ``int``, in
document order, its first text that is no integer refused with its JSON path; then the
model's documented rules (docs/adding-a-reader.md), written out here: a chunk whose
address or size int64 cannot hold is left out and counted, a time outside -1e18 .. 3.5e18
ns is moved to that edge, a chunk freed before its allocation is made zero-length, a
negative size is 0 bytes.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import traceconv
from traceconv.errors import InputError, json_path
from traceconv.formats.megengine import meminfo
from traceconv.formats.megengine.schema import StaticMemoryInfo
from traceconv.io import Source

INT64 = (-(1 << 63), (1 << 63) - 1)
TIME_RANGE = (-10**18, 35 * 10**17)   # the model's times (docs/adding-a-reader.md)
OPRS = {str(i): {"id": str(i), "name": f"op{i}"} for i in range(4)}
FIELDS = ("time_begin", "time_end", "logic_addr_begin", "logic_addr_end")


def _fits(number: int) -> bool:
    return INT64[0] <= number <= INT64[1]


def _in_time_range(ns: int) -> int:
    return min(max(ns, TIME_RANGE[0]), TIME_RANGE[1])


def reference(doc: dict) -> tuple:
    """("error", JSON path) or ("blocks", rows, static peak, chunks left out), the pydantic
    way and the model's rules."""
    try:
        model = StaticMemoryInfo.model_validate(doc)
    except ValidationError as exc:
        return ("error", json_path(exc.errors()[0]["loc"]))
    rows: list[tuple] = []
    statics: list[int] = []
    left_out = 0
    for chunk in model.chunk.values():
        where = f"$.chunk.{chunk.id}."
        numbers = {}
        for name in FIELDS:
            try:
                numbers[name] = int(getattr(chunk, name))
            except ValueError:
                return ("error", where + name)
        begin, end = numbers["logic_addr_begin"], numbers["logic_addr_end"]
        t0, t1 = numbers["time_begin"], numbers["time_end"]
        if not (_fits(begin) and _fits(end - begin)):
            left_out += 1
            continue
        weight = chunk.type == "weight_mem"
        overwrites = chunk.overwrite_dest_id != "-1"
        args = {"chunk": chunk.id, "time_begin": t0, "time_end": t1}
        if not weight and overwrites:
            args["overwrites"] = chunk.overwrite_dest_id
        alloc = _in_time_range((t0 + overwrites) * 1000)
        free = max(_in_time_range(t1 * 1000), alloc)   # (freed before: zero-length)
        if not weight:
            statics.append(end)   # (the plan's peak: as stated, before any repair)
        rows.append((begin, max(end - begin, 0),   # (a negative size: 0 bytes)
                     None if weight else alloc, None if weight else free,
                     f"{'weight' if weight else 'chunk'} {chunk.id}",
                     None if weight else f"op{t0}" if 0 <= t0 < 4 else None,
                     "weight" if weight else "activation", args))
    return ("blocks", rows, max(statics, default=0), left_out)


def columns_read(doc: object) -> tuple:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "StaticMemoryInfo.json"
        path.write_text(json.dumps(doc))
        try:
            trace = traceconv.load(path, format="megengine-meminfo")
        except InputError as exc:
            return ("error", exc.location)
    rows = [(b.address, b.size, b.alloc_ns, b.free_ns, b.name, b.owner_name, b.category,
             dict(b.args)) for b in trace.memory]
    return ("blocks", rows, trace.metadata.attributes["megengine.static_peak_bytes"],
            trace.diagnostics.count("model.memory_block_unreadable"))


_numbers = st.one_of(st.integers(-3, 600), st.integers(*INT64),
                     st.sampled_from([INT64[1], INT64[0], INT64[1] // 1000, 1 << 62,
                                      -(1 << 62), (1 << 62) // 1000, 1 << 64]))
_texts = st.one_of(_numbers.map(str), st.sampled_from([" 12", "+7", "1_0", "x", "", "1e3",
                                                       "\u0661\u0662"]))
_values = st.one_of(_texts, _texts, _texts, _numbers, st.none())   # non-texts: schema errors


@st.composite
def chunks(draw: st.DrawFn) -> dict:
    rarely = draw(st.integers(0, 9)) == 0   # a schema error in the id or overwrite_dest_id
    chunk: dict[str, object] = {
        "id": draw(st.integers(0, 50).map(str if not rarely else int)),
        "type": draw(st.sampled_from(["static_mem", "weight_mem", "other"])),
        **{name: draw(_values if draw(st.booleans()) else _numbers.map(str))
           for name in FIELDS}}
    overwrite = draw(st.sampled_from([None, "-1", "3", 3] if rarely else [None, "-1", "3"]))
    if overwrite is not None:
        chunk["overwrite_dest_id"] = overwrite
    if draw(st.integers(0, 30)) == 0:
        del chunk[draw(st.sampled_from(sorted(chunk)))]
    return chunk


def _well_formed(chunk: dict) -> dict:
    """``chunk`` with small numeric texts everywhere (most documents should read)."""
    return {**chunk, **{name: str(abs(hash(name)) % 500) for name in FIELDS},
            "id": str(chunk.get("id"))}


@pytest.mark.slow
@settings(max_examples=300)
@given(st.lists(st.tuples(chunks(), st.integers(0, 3)), max_size=40))
def test_columns_agree_with_the_schema_path(drawn):
    # three in four chunks made well-formed: the documents both read, and ones with a bad
    # value at a random place
    listed = [chunk if keep == 0 else _well_formed(chunk) for chunk, keep in drawn]
    doc = {"opr": OPRS, "chunk": {str(k): chunk for k, chunk in enumerate(listed)}}
    assert columns_read(doc) == reference(doc)


def test_a_large_document_reads_each_value_as_the_schema_path():
    # enough chunks for the column path (and a pydantic sample smaller than the whole)
    doc = {"opr": OPRS, "chunk": {str(k): {
        "id": str(k), "type": "weight_mem" if k % 3 else "static_mem",
        "time_begin": str(k % 4), "time_end": str(k % 4 + 1), "logic_addr_begin": str(64 * k),
        "logic_addr_end": str(64 * k + 32 + k), "overwrite_dest_id": "-1" if k % 5 else "2"}
        for k in range(500)}}
    assert columns_read(doc) == reference(doc)
    doc["chunk"]["400"]["time_end"] = 7   # a number where the schema wants a text
    assert columns_read(doc) == reference(doc) == ("error", "$.chunk.400.time_end")


@pytest.mark.parametrize("begin, end, t0, overwrite", [
    (INT64[0], INT64[1], 0, "-1"),               # a size beyond int64
    (-(1 << 62), 1 << 62, 0, "-1"),              # ... just beyond
    (-(1 << 62), (1 << 62) - 1, 0, "-1"),        # the largest size
    (0, 8, INT64[1] // 1000, "-1"),              # the latest alloc time
    (0, 8, INT64[1] // 1000, "3"),               # ... one step later: beyond int64
    (0, 8, (1 << 62) // 1000 - 1, "3"),          # within the column path's bounds
])
def test_numbers_at_the_int64_edges_read_as_the_schema_path(begin, end, t0, overwrite):
    chunk = {"id": "1", "type": "static_mem", "time_begin": str(t0), "time_end": str(t0 + 1),
             "logic_addr_begin": str(begin), "logic_addr_end": str(end),
             "overwrite_dest_id": overwrite}
    doc = {"opr": OPRS, "chunk": {"1": chunk}}
    assert columns_read(doc) == reference(doc)


@pytest.mark.parametrize("more, expected", [
    ('"more": 1e400', ("error", "orjson")),     # orjson refuses it (the records skip it)
    ('"more": 1', "blocks")])                    # an unknown key: the schema keeps it
def test_an_unknown_key_is_read_as_the_schema_path(more, expected):
    text = json.dumps({"opr": OPRS, "chunk": {"1": {
        "id": "1", "type": "static_mem", "time_begin": "0", "time_end": "1",
        "logic_addr_begin": "0", "logic_addr_end": "64"}}, "more": "MORE"})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "StaticMemoryInfo.json"
        path.write_text(text.replace('"more": "MORE"', more))
        try:
            got: tuple = ("blocks", [(b.address, b.size) for b in meminfo.read(Source(path)).memory])
        except InputError as exc:
            got = ("error", exc.location)
    if expected == ("error", "orjson"):
        expected = ("error", _where_orjson_stops(text.replace('"more": "MORE"', more)))
    assert got == (expected if expected != "blocks" else ("blocks", [(0, 64)]))


def _where_orjson_stops(text: str) -> str:
    """line:col of orjson's error on ``text`` (the input layer names the same place)."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return f"{exc.lineno}:{exc.colno}"
    raise AssertionError("orjson reads it")
