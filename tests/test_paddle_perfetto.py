"""Every Paddle test input converts to Perfetto and Chrome JSON that pass ``traceconv check``
and that the real trace_processor loads without errors, every slice, flow and sample kept."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

import traceconv
from tests.tp_wasm.layout import LINUX_PID_MAX, processes
from traceconv import check as check_file
from traceconv.api import save

DATA = Path(__file__).parent / "data" / "paddle"
INPUTS = sorted(p for p in DATA.rglob("*") if p.is_file())


def _bytes(trace, fmt: str) -> bytes:
    buffer = io.BytesIO()
    traceconv.registry.get(fmt).load().write(trace, buffer)
    return buffer.getvalue()


@pytest.mark.integration
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(DATA)))
def test_loads_in_trace_processor(trace_processor, path, tmp_path):
    trace = traceconv.load(path)
    out = tmp_path / "out.pftrace"
    save(trace, out)
    trace_processor.load(out.read_bytes())
    assert trace_processor.bad_stats() == []
    events = len(trace.slices) + len(trace.instants)   # instants are 0-length slices there
    assert trace_processor.query("select count(*) as n from slice")[0].n == events
    flows = trace_processor.query("select count(*) as n from flow")[0].n
    assert flows == len(trace.flows)
    samples = trace_processor.query("select count(*) as n from counter")[0].n
    assert samples == len(trace.counters)
    if trace.stats and "not a timeline" in trace.metadata.clock:
        # the breakdown is a process of its own, with a made-up pid (no real one has it)
        assert any(name.endswith("aggregate breakdown (not a timeline)") and pid > LINUX_PID_MAX
                   for pid, name, _ in processes(trace_processor))
    chrome = orjson.loads(_bytes(trace, "chrome"))
    trace_processor.load(orjson.dumps(chrome))
    assert trace_processor.query("select count(*) as n from slice")[0].n == events


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".pftrace", ".json"])
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_conversion_passes_check(path, suffix, tmp_path):
    out = tmp_path / f"out{suffix}"
    traceconv.convert(path, out)
    report = check_file(str(out))
    assert report.ok, report.errors
    assert not report.warnings, report.warnings
