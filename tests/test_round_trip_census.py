"""Census: what the model holds survives every writer that promises to read back its output.

One real sample per registered reader (the format table's readers: a new one fails here until
it has a sample) is read, written with each writer whose format traceconv also reads (the
table's rows that both read and write: Perfetto and Chrome JSON), read back, and compared
with the first reading field by field: metadata (source, version, framework, rank, world
size, devices, the run's stated figures, clock, the source's envelope), diagnostics,
processes, tracks, slices, instants, counters, flows, memory blocks, reservations, op
statistics and the op graph.

The expected values are the first reading, made by the sample's own reader, never by the
writer under test. What a writer cannot carry is stated in :data:`LOSSES`, per writer and
sample, and the docs of the writer say it (docs/perfetto.md, docs/chrome.md): a field lost
that the list does not name fails, and so does a field it names that survives, so the list
can only shrink.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import traceconv
from traceconv import registry
from traceconv.io import Source
from traceconv.model import Trace

ROOT = Path(__file__).resolve().parent.parent
TRTEXEC = "samples/trtexec/resnet_rtx3090_fp32.engine."

# One sample per reader, chosen for what it fills (devices, run figures, memory, graph,
# statistics); several paths: read together as one trace, as the command line reads them.
SAMPLES: dict[str, tuple[str, ...]] = {
    "chrome": ("samples/torch/resnet18_train_cuda.pt.trace.json.gz",),
    "perfetto": ("samples/perfetto/rocprofv3_hip_taylor.pftrace",),
    "megengine": ("samples/megengine/convnet_lar_embed_profile.json",),
    "megengine-meminfo": ("tests/data/seeds/StaticMemoryInfo.json",),
    "megengine-memflow-svg": ("tests/data/seeds/memory_flow.svg",),
    "paddle-report": ("samples/paddle/report_gpu_before.txt",),
    "paddle-profile": ("tests/data/seeds/paddle.profile",),
    "paddle-pb": ("tests/data/seeds/paddle.paddle_trace.pb",),
    "paddle-summary": ("tests/data/paddle/gpu_summary.txt",),
    "migraphx": ("samples/migraphx/perf_simple_graph_rocm4.txt",),
    "torch-memory": ("tests/data/seeds/memory_timeline.raw.json",),
    "torch-snapshot": ("tests/data/seeds/snapshot.pickle",),
    # (an execution trace has no clock: beside its Kineto trace, linked to it)
    "torch-et": ("samples/torch/resnet18_train_cuda.pt.trace.json.gz",
                 "samples/torch/resnet18_train_et.json.gz"),
    "nsys": ("samples/nsys/mock_rtx3080_nsys2026.1.sqlite",),
    "rpd": ("tests/data/seeds/matmul.rpd",),
    "nsys-stats": ("tests/data/seeds/nvtx_pushpop_trace.csv",),
    "xplane": ("tests/data/seeds/jax_cpu.xplane.pb",),
    # (the engine's exports with the run's stated figures and device)
    "trtexec": tuple(TRTEXEC + part for part in (
        "graph.json.gz", "profile.json.gz", "timing.json.gz", "profile.metadata.json.gz")),
    "rocprof": ("tests/data/rocprof/ROCm__rocm-systems__vcopy_MI300A_ps_file_results.json.gz",),
}


def _round_trip_writers() -> list[str]:
    """The built-in formats traceconv both writes and reads back."""
    return [f.name for f in registry.all_formats()
            if f.reads and f.writes and f.origin == "built-in"]


# --- the fields compared -----------------------------------------------------------------

def _json_value(value: Any) -> Any:
    """``value`` as JSON holds it (tuples as lists), to compare what a writer kept."""
    return json.loads(json.dumps(value, default=repr))


def _source(trace: Trace) -> str:
    """Where the trace came from: a trace read back names the first source."""
    return trace.metadata.attributes.get("converted_from") or trace.metadata.source_format


def _slice_rows(trace: Trace) -> list[tuple[int, int, str, str]]:
    s, strings = trace.slices, trace.strings.strings
    return [(start, dur, strings[name], strings[category]) for start, dur, name, category
            in zip(s.start, s.dur, s.name, s.category, strict=True)]


def _slice_args(trace: Trace) -> Counter:
    rows = _slice_rows(trace)
    return Counter((rows[k][0], rows[k][2], json.dumps(_json_value(trace.slices.args[k] or {}),
                                                        sort_keys=True))
                   for k in range(len(rows)))


def _on_tracks(trace: Trace, table: str, time: str) -> Counter:
    """(track name, time, name) of each slice or instant: the track it lies on."""
    t, strings = getattr(trace, table), trace.strings.strings
    return Counter((trace.tracks[track].name, ts, strings[name]) for track, ts, name
                   in zip(t.track, getattr(t, time), t.name, strict=True))


def _flow_ends(trace: Trace) -> Counter:
    rows = _slice_rows(trace)
    f = trace.flows
    return Counter((rows[a][0], rows[a][2], rows[b][0], rows[b][2])
                   for a, b in zip(f.source, f.target, strict=True))


def _blocks(blocks: Any) -> Counter:
    return Counter(json.dumps(_json_value(dataclasses.asdict(b)), sort_keys=True)
                   for b in blocks)


def _graph(trace: Trace) -> tuple[list, list, Any]:
    """Nodes, edges (with their attributes) and the graph's attributes; an op's slices as
    the slices themselves (each reading numbers its rows its own way)."""
    if not trace.has_graph:
        return [], [], {}
    graph, rows = trace.graph, _slice_rows(trace)

    def named(data: dict) -> Any:
        held = _json_value(data)
        if isinstance(data.get("slices"), list):
            held["slices"] = sorted(rows[k] for k in data["slices"])
        return held

    return (sorted(json.dumps([str(n), named(data)], sort_keys=True)
                   for n, data in graph.nodes(data=True)),
            sorted(json.dumps([str(a), str(b), _json_value(data)], sort_keys=True)
                   for a, b, data in graph.edges(data=True)),
            _json_value(graph.graph))


def _diagnostics(trace: Trace) -> Counter:
    return Counter({d.code: d.count for d in trace.diagnostics})


def _attributes(trace: Trace) -> dict[str, Any]:
    return {k: _json_value(v) for k, v in trace.metadata.attributes.items() if k != "flavour"}


def _within(first: Any, again: Any) -> bool:
    """Whether everything of ``first`` is in ``again`` (a reading back adds its own
    diagnostics and envelope keys)."""
    if isinstance(first, Counter):
        return not first - again
    return all(again.get(k) == v for k, v in first.items())


# name -> (the field of a trace, whether the reading back keeps the first reading's)
FIELDS: dict[str, tuple[Callable[[Trace], Any], Callable[[Any, Any], bool]]] = {
    **{f"metadata.{name}": (lambda t, name=name: getattr(t.metadata, name), lambda a, b: a == b)
       for name in ("source_version", "framework", "rank", "world_size", "devices", "run",
                    "clock", "clock_base_ns")},
    "metadata.source": (_source, lambda a, b: a == b),
    "metadata.attributes": (_attributes, _within),
    "diagnostics": (_diagnostics, _within),
    "processes.names": (lambda t: Counter(p.name for p in t.processes), lambda a, b: a == b),
    "processes.kinds": (lambda t: Counter(p.kind.value for p in t.processes),
                        lambda a, b: a == b),
    "processes.pids": (lambda t: Counter(p.pid for p in t.processes), lambda a, b: a == b),
    "processes.labels": (lambda t: Counter(tuple(p.labels) for p in t.processes),
                         lambda a, b: a == b),
    "tracks.names": (lambda t: Counter(x.name for x in t.tracks), lambda a, b: a == b),
    "tracks.kinds": (lambda t: Counter(x.kind.value for x in t.tracks), lambda a, b: a == b),
    "tracks.tids": (lambda t: Counter(x.tid for x in t.tracks), lambda a, b: a == b),
    "tracks.units": (lambda t: Counter(x.unit for x in t.tracks), lambda a, b: a == b),
    "slices": (lambda t: Counter(_slice_rows(t)), lambda a, b: a == b),
    "slices.tracks": (lambda t: _on_tracks(t, "slices", "start"), lambda a, b: a == b),
    "slices.args": (_slice_args, lambda a, b: a == b),
    "instants": (lambda t: _on_tracks(t, "instants", "ts"), lambda a, b: a == b),
    "counters": (lambda t: Counter((t.tracks[k].name, ts, v) for k, ts, v in zip(
        t.counters.track, t.counters.ts, t.counters.value, strict=True)), lambda a, b: a == b),
    "flows": (_flow_ends, lambda a, b: a == b),
    "flows.labels": (lambda t: Counter(zip(map(t.strings.strings.__getitem__, t.flows.category),
                                           map(t.strings.strings.__getitem__, t.flows.name),
                                           strict=True)), lambda a, b: a == b),
    "memory": (lambda t: _blocks(t.memory), lambda a, b: a == b),
    "reservations": (lambda t: _blocks(t.reservations), lambda a, b: a == b),
    "stats": (lambda t: Counter(repr(s) for s in t.stats), lambda a, b: a == b),
    "graph": (_graph, lambda a, b: a == b),
}

# What each writer cannot carry, per sample: (writer, reader) -> the fields lost. Only shrinks.
LOSSES: dict[tuple[str, str], frozenset[str]] = {
    ("chrome", "megengine"): frozenset({"flows"}),
    ("chrome", "perfetto"): frozenset({"flows.labels"}),
}


@functools.cache
def _first_reading(reader: str) -> Trace:
    paths = [ROOT / p for p in SAMPLES[reader]]
    if len(paths) == 1:
        return traceconv.load(paths[0])
    return traceconv.api.combine([traceconv.load(p, joining=True) for p in paths])


def lost_fields(first: Trace, again: Trace) -> set[str]:
    """The fields of ``first`` that ``again`` does not keep."""
    return {name for name, (field, kept) in FIELDS.items()
            if not kept(field(first), field(again))}


def test_every_reader_has_a_sample_of_its_format():
    readers = {f.name for f in registry.all_formats() if f.reads and f.origin == "built-in"}
    assert set(SAMPLES) == readers
    for reader, paths in SAMPLES.items():
        found = {registry.detect(Source(str(ROOT / p))).name for p in paths}
        assert reader in found, (reader, found)


def test_the_writers_that_round_trip_are_perfetto_and_chrome():
    assert sorted(_round_trip_writers()) == ["chrome", "perfetto"]


SLOW = {"chrome", "torch-et"}   # (readings of a 240 KB Kineto trace: over 2 s)


@pytest.mark.parametrize("writer", _round_trip_writers())
@pytest.mark.parametrize("reader", [pytest.param(r, marks=pytest.mark.slow) if r in SLOW else r
                                    for r in sorted(SAMPLES)])
def test_a_round_trip_loses_only_what_the_writer_states(reader: str, writer: str,
                                                        tmp_path: Path) -> None:
    first = _first_reading(reader)
    out = tmp_path / f"again.{registry.get(writer).extensions[0].lstrip('.')}"
    traceconv.save(first, out)
    again = traceconv.load(out)
    assert sorted(lost_fields(first, again)) == sorted(LOSSES.get((writer, reader), ()))


def test_the_writers_docs_name_what_they_cannot_carry():
    docs = {"perfetto": "docs/perfetto.md", "chrome": "docs/chrome.md"}
    for writer, page in docs.items():
        text = (ROOT / page).read_text()
        start = text.index("### What a round trip keeps")
        end = text.find("\n#", start + 1)
        section = text[start:end if end > 0 else len(text)]
        listed = set(re.findall(r"`([a-z_.]+)`", section))
        stated = set().union(*(fields for (w, _), fields in LOSSES.items() if w == writer))
        assert stated <= listed, (writer, stated - listed)
