"""Chrome/Kineto times with more digits than a double holds are read exactly.

``"ts": 1712195495505582.988`` (epoch µs with ns decimals, as HTA's ns-resolution test trace
writes them) is 19 significant digits; a double keeps about 16 (at 1.7e15 its spacing is
0.25 µs). Expected values are the texts read with ``Decimal``, never through traceconv.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

import traceconv
from tests.conftest import SHARED_ROOT
from traceconv.analysis.activity import Timeline

NS_RES = (SHARED_ROOT / "samples" / "torch" / "found" / "hta" / "ns_resolution_trace"
          / "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
DEVICE_WORK = {"kernel", "gpu_memcpy", "gpu_memset"}


def _ns(us: Decimal) -> int:
    return int(us * 1000)


def test_epoch_microseconds_with_ns_decimals_keep_every_ns(tmp_path: Path):
    """3,000 slices (more than one piece of the event array, so both the plain and the typed
    record path read some) at epoch µs with ns decimals: every start is the written one."""
    rng = np.random.default_rng(14)
    base = 1712195495505582
    texts = [f"{base + int(step)}.{int(frac):03d}" for step, frac in
             zip(np.cumsum(rng.integers(1, 50, 3000)), rng.integers(0, 1000, 3000), strict=True)]
    events = ",".join(f'{{"ph": "X", "name": "op{i % 7}", "ts": {ts}, "dur": 0.5, "pid": 1, '
                      f'"tid": 1, "args": {{"pad": "{"x" * 80}"}}}}' for i, ts in enumerate(texts))
    path = tmp_path / "ns.json"
    path.write_text(f'{{"traceEvents": [{events}]}}')
    trace = traceconv.load(path)
    assert sorted(trace.slices.numpy("start").tolist()) == sorted(
        _ns(Decimal(t)) for t in texts)


def test_ordinary_times_are_not_read_twice(tmp_path: Path, monkeypatch):
    """Kineto's usual times (below 9e12 µs, or whole µs) never pay for a second decode."""
    from traceconv.formats.chrome import exact_times

    def refuse(piece):
        raise AssertionError("decoded again")

    monkeypatch.setattr(exact_times, "_TIMES", refuse)
    path = tmp_path / "usual.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "a", "ts": 4482738043834.738, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "b", "ts": 1695835542481129, "dur": 1, "pid": 1, "tid": 1}]}))
    assert sorted(traceconv.load(path).slices.numpy("start").tolist()) == [
        4482738043834738, 1695835542481129000]


@pytest.mark.shared
@pytest.mark.skipif(not NS_RES.exists(), reason="needs ../shared")
def test_htas_ns_resolution_trace_spans_its_exact_time():
    """HTA's own ns-resolution trace: first device work to last is 480,029,179 ns by the
    texts (a double-based read says 480,029,227 or 480,029,250)."""
    with gzip.open(NS_RES, "rt") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    work = [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_WORK]
    span = (max(_ns(e["ts"]) + _ns(e["dur"]) for e in work) - min(_ns(e["ts"]) for e in work))
    assert span == 480_029_179
    tl = Timeline(traceconv.load(NS_RES))
    rows = tl.device_work()
    assert int(tl.end[rows].max() - tl.start[rows].min()) == span
