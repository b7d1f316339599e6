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
from traceconv.errors import InputError

DATA = Path(__file__).parent / "data" / "paddle"
INPUTS = sorted(p for p in DATA.rglob("*") if p.is_file() and p.name != "PROVENANCE.md")
# a Perf Summary alone (the training timer's statistics, nothing nested in time to draw):
# a timeline of it would be empty, so conversion refuses in one line
TIMELESS = {"timer_only_perf_summary.txt", "timer_only_perf_summary_3.3.1.txt"}


def _refused_if_timeless(path: Path) -> bool:
    """True (after checking the refusal) for an input with nothing to put on a timeline."""
    if path.name not in TIMELESS:
        return False
    trace = traceconv.load(path)
    assert trace.stats and not (len(trace.slices) or len(trace.instants) or len(trace.counters))
    with pytest.raises(InputError, match="nothing to put on a timeline"):
        save(trace, Path("unused.pftrace"))
    return True


def _bytes(trace, fmt: str) -> bytes:
    buffer = io.BytesIO()
    traceconv.registry.get(fmt).load().write(trace, buffer)
    return buffer.getvalue()


@pytest.mark.integration
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(DATA)))
def test_loads_in_trace_processor(trace_processor, path, tmp_path):
    if _refused_if_timeless(path):
        return
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
        # the breakdown is a process of its own (of each run: named after it, "... run 2"),
        # with a made-up pid (no real one has it)
        assert any("aggregate breakdown (not a timeline)" in name and pid > LINUX_PID_MAX
                   for pid, name, _ in processes(trace_processor))
    chrome = orjson.loads(_bytes(trace, "chrome"))
    trace_processor.load(orjson.dumps(chrome))
    assert trace_processor.query("select count(*) as n from slice")[0].n == events


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".pftrace", ".json"])
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_conversion_passes_check(path, suffix, tmp_path):
    if _refused_if_timeless(path):
        return
    out = tmp_path / f"out{suffix}"
    traceconv.convert(path, out)
    report = check_file(str(out))
    assert report.ok, report.errors
    assert not report.warnings, report.warnings
