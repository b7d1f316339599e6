"""Pastes and stray reports, seeded (``benchmarks.fuzz.layers``, layers ``pasted`` and
``other_report``): nothing a page or a log did to a report is lost uncounted.

The referee is the clean file itself: a report pasted whole (quoted, fenced, NBSP for
spaces, lines double spaced) reads as the clean file; a report quoted on some lines only
(a hand edit of a paste) may lose or change rows, but never more than the lines its
diagnostics count; another tool's report written before or after one is counted, never
read into it.

Found by this round: a Paddle summary whose table rule or header was quoted (``> ----``)
lost every row after it silently (4 of 21 rows read, nothing counted), and one whose
table title was not read as one (quoted twice, NBSP inside) lost the rows up to the next
title (8 lost, 4 counted); now such lines are counted (``paddle_summary.foreign_lines``).
"""

from __future__ import annotations

import random

import pytest

import traceconv
from benchmarks.fuzz import layers
from traceconv.errors import TraceconvError

TEXT_SEEDS = [s for s in layers.seeds("pasted") if not s.name.endswith(".csv")]


def _load(tmp_path, name: str, data: bytes) -> traceconv.Trace | None:
    path = tmp_path / name
    path.write_bytes(data)
    try:
        return traceconv.load(path)
    except TraceconvError:
        return None


def _rows(trace: traceconv.Trace) -> list[tuple]:
    return sorted(((s.name, s.calls, s.total_ns, s.cpu_ns, s.device_ns) for s in trace.stats),
                  key=repr)


def _counted(trace: traceconv.Trace) -> int:
    return sum(d.count for d in trace.diagnostics)


def _variants(seed, wanted: str, count: int = 40):
    """The seeded pastes of ``seed``: pasted whole, or quoted on some lines."""
    for k in range(count):
        label, data = layers.pasted(seed.data, random.Random(k))
        partial = "partial" in label
        if (wanted == "partial") == partial:
            yield label, data


@pytest.mark.parametrize("seed", TEXT_SEEDS, ids=lambda s: s.name)
def test_a_report_pasted_whole_reads_as_the_clean_file(seed, tmp_path):
    clean = _load(tmp_path, "clean_" + seed.name, seed.data)
    assert clean is not None and clean.stats
    tried = 0
    for label, data in _variants(seed, "whole"):
        pasted = _load(tmp_path, seed.name, data)
        assert pasted is not None, label
        assert _rows(pasted) == _rows(clean), label
        tried += 1
    assert tried >= 10


@pytest.mark.parametrize("seed", TEXT_SEEDS, ids=lambda s: s.name)
def test_rows_lost_to_a_partial_quote_are_counted(seed, tmp_path):
    clean = _load(tmp_path, "clean_" + seed.name, seed.data)
    assert clean is not None
    tried = 0
    for label, data in _variants(seed, "partial"):
        pasted = _load(tmp_path, seed.name, data)
        if pasted is None:
            continue   # (refused, with its one line: the contract's other branch)
        lost = len(set(_rows(clean)) - set(_rows(pasted)))
        assert lost <= _counted(pasted), (label, lost, pasted.diagnostics)
        tried += 1
    assert tried >= 5


@pytest.mark.parametrize("seed", layers.seeds("other_report"), ids=lambda s: s.name)
def test_a_report_beside_another_is_one_of_them_the_other_counted(seed, tmp_path):
    """Two tools' reports in one log, in either order: what is read is one of them as it
    reads alone (detection picks it), and the other's lines are counted."""
    alone = {seed.data: _load(tmp_path, "alone_" + seed.name, seed.data)}
    for k, name in enumerate(layers.FOREIGN):
        other = layers.foreign_report(name)
        if other == seed.data:
            continue
        alone[other] = _load(tmp_path, f"alone{k}_{seed.name}", other)
        for first, second in ((seed.data, other), (other, seed.data)):
            both = _load(tmp_path, f"{k}_{seed.name}", first + b"\n\n" + second)
            assert both is not None, name
            assert any(single is not None and _rows(single) == _rows(both)
                       for single in (alone[seed.data], alone[other])), name
            assert _counted(both) > 0, name
