"""PyTorch export_memory_timeline reader: real CNN exports (both shapes) and properties."""

from __future__ import annotations

import gzip
from collections import Counter, defaultdict

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.errors import InputError
from traceconv.formats import torch_memory
from traceconv.formats.torch_memory.reader import replay_totals
from traceconv.formats.torch_memory.reconstruct import Reconstruction
from traceconv.formats.torch_memory.schema import CATEGORIES
from traceconv.io import Source
from traceconv.model.memory import live_bytes

# The CNN run (../shared/samples/torch/cnn): peak of the per-category totals export, i.e.
# max over rows of sum(sizes[i]), and its per-category maxima (max over rows of each column).
CNN_PEAK = 3_054_392
CNN_CATEGORY_MAX = {"parameter": 154_664, "optimizer_state": 154_664, "input": 98_760,
                    "temporary": 4, "activation": 2_228_932, "gradient": 175_696,
                    "autograd_detail": 1_048_576, "unknown": 548_560}

RAW = "torch_memory/memory_timeline.raw.json.gz"   # under tests/data


def _document(path) -> list:
    return orjson.loads(gzip.decompress(path.read_bytes()))


def _counter_series(trace: traceconv.Trace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    series: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for sample in trace.iter_counter_samples():
        times, values = series[trace.tracks[sample.track].name]
        times.append(sample.ts)
        values.append(sample.value)
    return {k: (np.array(t), np.array(v)) for k, (t, v) in series.items()}


def _level_at(series: tuple[np.ndarray, np.ndarray], t: int) -> float:
    times, values = series
    i = np.searchsorted(times, t, side="right") - 1
    return float(values[i]) if i >= 0 else 0.0


def test_totals_export_counters_reproduce_every_row(data):
    path = data / "torch_memory" / "memory_timeline.json.gz"
    times, sizes = _document(path)
    trace = traceconv.load(path, format="torch_memory")
    assert trace.metadata.source_format == "torch-memory"
    assert trace.metadata.framework == "PyTorch"
    series = _counter_series(trace)
    total = series["timeline live bytes"]
    # The preexisting rows are stamped with the first time, so times repeat; the level at a
    # time is the one after its last row.
    last_row = dict(zip(times, sizes, strict=True))
    assert len(last_row) == len(times) - 1
    for t_us, row in last_row.items():
        assert _level_at(total, t_us * 1000) == sum(row)
        for i, name in enumerate(CATEGORIES):
            assert _level_at(series[f"timeline {name} live bytes"], t_us * 1000) == row[i + 1]
    assert live_bytes(trace.memory).peak[1] == CNN_PEAK == max(map(sum, sizes))
    assert {b.category for b in trace.memory} == set(CATEGORIES)
    assert trace.diagnostics["torch_memory.reconstructed"].count == len(trace.memory)
    assert "torch_memory.unmatched_free" not in trace.diagnostics


def test_raw_export_one_block_per_tensor_version(data):
    path = data / "torch_memory" / "memory_timeline.raw.json.gz"
    rows = _document(path)
    actions = Counter(r[1] for r in rows)
    assert actions == {2: 291, 4: 277, 3: 228, 1: 42}
    trace = traceconv.load(path, format="torch_memory")
    # one block per preexisting or created tensor, plus one per version change
    assert len(trace.memory) == actions[1] + actions[2] + actions[3] // 2 == 447
    assert sum(b.alloc_ns is None for b in trace.memory) == 42
    # created but never destroyed: 291 + 42 - 277 tensors stay alive to the end
    assert sum(b.free_ns is None for b in trace.memory) == 291 + 42 - 277
    assert live_bytes(trace.memory).peak == (1_795_339_764_129_337_148, CNN_PEAK)
    maxima = {name: _counter_series(trace)[f"timeline {name} live bytes"][1].max()
              for name in CATEGORIES}
    assert maxima == CNN_CATEGORY_MAX
    assert "torch_memory.split" not in trace.diagnostics
    assert "torch_memory.unmatched_free" not in trace.diagnostics


def test_version_change_keeps_the_storage(data):
    trace = traceconv.load(data / RAW, format="torch_memory")
    ends = {(b.address, b.free_ns): b for b in trace.memory if b.free_ns is not None}
    continued = [b for b in trace.memory if (b.address, b.alloc_ns) in ends
                 and ends[(b.address, b.alloc_ns)].size == b.size]
    assert len(continued) >= 228 // 2


def test_blocks_never_overlap_in_address_and_time(data):
    trace = traceconv.load(data / RAW, format="torch_memory")
    _assert_disjoint(trace.memory)


def _assert_disjoint(blocks) -> None:
    end = max((t for b in blocks for t in (b.alloc_ns, b.free_ns) if t is not None), default=0)
    spans = [(b.address, b.end_address, -1 if b.alloc_ns is None else b.alloc_ns,
              end + 1 if b.free_ns is None else b.free_ns) for b in blocks if b.size]
    for i, (a0, a1, t0, t1) in enumerate(spans):
        for b0, b1, s0, s1 in spans[i + 1:]:
            assert not (a0 < b1 and b0 < a1 and t0 < s1 and s0 < t1)


def test_sniff_tells_the_export_from_chrome_json(data):
    for name in ("memory_timeline.json.gz", "memory_timeline.raw.json.gz"):
        assert torch_memory.sniff(Source(data / "torch_memory" / name).head, None) == 0.9
    assert torch_memory.sniff(b'{"traceEvents": [{"ph": "X"}]}', None) == 0.0
    assert torch_memory.sniff(b' [ {"ph": "X", "ts": 1.5}]', None) == 0.0


@pytest.mark.parametrize(("content", "location"), [
    (b"[[1, 2, 3]]", "$[0][3]"),
    (b"[[1, 9, 64, 0]]", "$[0][1]"),
    (b"[[1, 2], [[0, 1, 2]]]", "$[1][0]"),
])
def test_malformed_exports_are_located(tmp_path, content, location):
    path = tmp_path / "memory_timeline.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        traceconv.load(path, format="torch_memory")
    assert str(error.value).startswith(f"{path}:{location}:")


def test_not_json_is_one_clear_error(tmp_path):
    path = tmp_path / "memory_timeline.json"
    path.write_bytes(b"[[1, 2")
    with pytest.raises(InputError, match="not valid JSON"):
        traceconv.load(path, format="torch_memory")


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5_000), min_size=8, max_size=8), min_size=1,
                max_size=30))
def test_totals_replay_reproduces_any_series(rows):
    """Whatever the per-category totals, the rebuilt blocks give exactly those totals."""
    builder = Reconstruction(pool="timeline")
    times = list(range(0, 10 * len(rows), 10))
    replay_totals(times, [[0, *r] for r in rows], builder)
    blocks = builder.finish()
    assert builder.unmatched == 0
    for i, name in enumerate(CATEGORIES):
        mine = [b for b in blocks if b.category == name]
        for t_us, row in zip(times, rows, strict=True):
            alive = sum(b.size for b in mine if b.alloc_ns is not None and b.alloc_ns <= t_us * 1000
                        and (b.free_ns is None or b.free_ns > t_us * 1000))
            assert alive == row[i]
    _assert_disjoint(blocks)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 4096), st.integers(0, 2)), max_size=60))
def test_raw_replay_pairs_frees_with_live_tensors(events):
    """Create/destroy sequences of real tensors: every free finds its block, none overlap."""
    rows, alive = [], defaultdict(list)
    for t, (create, size, category) in enumerate(events):
        if create or not alive[category]:
            rows.append([t, 2, size, category])
            alive[category].append(size)
        else:
            rows.append([t, 4, -alive[category].pop(0), category])
    trace = torch_memory.read(_source_of(rows))
    assert len(trace.memory) == sum(r[1] == 2 for r in rows)
    assert "torch_memory.unmatched_free" not in trace.diagnostics
    _assert_disjoint(trace.memory)


class _source_of(Source):
    """A Source whose content is ``rows`` as JSON (no file needed)."""

    def __init__(self, rows: list) -> None:
        super().__init__("<rows>")
        self._content = orjson.dumps(rows)

    def read_bytes(self) -> bytes:
        return self._content


def test_detected_by_content_beside_chrome_json(data, samples):
    """Both use .json; detection reads the content."""
    for name in ("memory_timeline.json.gz", "memory_timeline.raw.json.gz"):
        assert traceconv.load(data / "torch_memory" / name).metadata.source_format == \
            "torch-memory"
    assert traceconv.load(samples / "torch" / "cnn_step5.pt.trace.json").metadata \
        .source_format == "chrome"
