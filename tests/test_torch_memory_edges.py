"""export_memory_timeline inputs at the edges (issue 23): each class from a minimal file.

The four old reproducers named by the issue were not found; these are the classes derived
from the format (kineto.md §8) and found by fuzzing the reader with them: times that run
backwards, whole numbers past 64 bits, category totals below zero, fractions. Expected
values are hand counts of the rows written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import traceconv
from traceconv.errors import InputError

ZEROS = [0] * 9


def _read(tmp_path: Path, document: object, name: str = "m.raw.json") -> traceconv.Trace:
    path = tmp_path / name
    path.write_text(json.dumps(document))   # (orjson does not write ints past 64 bits)
    return traceconv.load(path, format="torch-memory")


def _counts(trace: traceconv.Trace) -> dict[str, int]:
    return {d["code"]: d["count"] for d in trace.diagnostics.as_list()}


def test_raw_rows_running_backwards_never_free_before_they_allocate(tmp_path: Path):
    # create at 1000, destroy written at 400 (earlier), create at 2000, destroy at 1500
    trace = _read(tmp_path, [[1000, 2, 64, 4], [400, 4, -64, 4],
                             [2000, 2, 32, 4], [1500, 4, -32, 4]])
    assert traceconv.validate(trace) == []
    assert sorted((b.alloc_ns, b.free_ns) for b in trace.memory) == [(1000, 1000),
                                                                      (2000, 2000)]
    assert _counts(trace)["torch_memory.time_backwards"] == 2


def test_totals_running_backwards_never_free_before_they_allocate(tmp_path: Path):
    # activation: 0 -> 100 bytes at 5 µs, back to 0 at "3 µs"
    trace = _read(tmp_path, [[5, 3], [[0, 0, 0, 0, 0, 100, 0, 0, 0], ZEROS]], "m.json")
    assert traceconv.validate(trace) == []
    assert [(b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [(100, 5000, 5000)]
    assert _counts(trace)["torch_memory.time_backwards"] == 1


def test_whole_numbers_past_64_bits_are_counted_not_refused(tmp_path: Path):
    # a size of 10**30 bytes (left out) and a time of 2**64 + 1 ns (moved to the range's
    # edge): the builder's rules; JSON readers make floats of both
    trace = _read(tmp_path, [[0, 2, 10**30, 4], [2**64 + 1, 2, 64, 4], [10, 2, 64, 4]])
    assert traceconv.validate(trace) == []
    assert len(trace.memory) == 2
    counts = _counts(trace)
    assert (counts["model.memory_block_unreadable"],
            counts["model.time_beyond_range"], counts["torch_memory.time_backwards"]) == (1, 1, 1)
    # (its one block left out, nothing else in it: nothing read, naming what was left out)
    with pytest.raises(InputError, match=r"nothing read: .*; 1 left out "
                                         r"\(model\.memory_block_unreadable\), such as: "
                                         r"memory block size is out of the int64 range: \d+$"):
        _read(tmp_path, [[0, 1], [ZEROS, [0, 0, 0, 0, 0, 10**23, 0, 0, 0]]], "m.json")


def test_category_totals_below_zero_read_as_zero(tmp_path: Path):
    # parameter: 0, -100, 0, 50: one 50-byte block from the last row, none from the dip
    rows = [ZEROS, [0, -100, 0, 0, 0, 0, 0, 0, 0], ZEROS, [0, 50, 0, 0, 0, 0, 0, 0, 0]]
    trace = _read(tmp_path, [[1, 2, 3, 4], rows], "m.json")
    assert [(b.size, b.alloc_ns) for b in trace.memory] == [(50, 4000)]
    counts = _counts(trace)
    assert counts["torch_memory.negative_total"] == 1
    assert "torch_memory.unmatched_free" not in counts


def test_a_fraction_is_still_refused_where_it_is(tmp_path: Path):
    with pytest.raises(InputError) as caught:
        _read(tmp_path, [[0, 2, 64.5, 4]])
    assert caught.value.location == "$[0][2]"
