"""The classes of input that 41 real files nobody here wrote showed (issue #22), each tested
on the real file and on generated neighbours: random fan-out sizes, random indents,
schema fields removed. Expected values come from the construction of each variant or from
a hand count of the raw text, never from the reader under test.
"""

from __future__ import annotations

import gzip
import io
import json
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.cli.app import app
from traceconv.formats.perfetto import write
from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler
from traceconv.io import Source
from traceconv.model import TrackKind
from traceconv.model.clock import is_logical

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
FIXTURE = [HealthCheck.function_scoped_fixture]


def chrome_file(tmp_path: Path, events: list[dict], name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def flow_ends(trace: traceconv.Trace) -> list[tuple[str, str]]:
    names = trace.strings.strings
    column = trace.slices.numpy("name")
    return [(names[column[f.source]], names[column[f.target]]) for f in trace.iter_flows()]


# -- 1. one launch feeding many kernels ---------------------------------------------------

def graph_launch(kernels: int, with_start: bool, memsets: int) -> list[dict]:
    """A graph launch on the host (its flow's first point an ``s``, or an ``f`` as ROCm
    writes it) and ``kernels`` kernels of the graph on a stream, each with an ``f`` of the
    launch's id; then ``memsets`` ROCm memsets: an ``f`` on the runtime call and one on the
    device op, under the correlation they share."""
    events = [{"ph": "X", "cat": "cuda_runtime", "name": "hipGraphLaunch", "pid": 7, "tid": 7,
               "ts": 0, "dur": 5, "args": {"correlation": 100}},
              {"ph": "s" if with_start else "f", "id": 100, "cat": "ac2g", "name": "ac2g",
               "pid": 7, "tid": 7, "ts": 0, **({} if with_start else {"bp": "e"})}]
    for k in range(kernels):
        ts = 10 + 10 * k
        events += [{"ph": "X", "cat": "kernel", "name": f"k{k}", "pid": 0, "tid": 3, "ts": ts,
                    "dur": 5, "args": {"correlation": 100}},
                   {"ph": "f", "id": 100, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 3,
                    "ts": ts, "bp": "e"}]
    for m in range(memsets):
        host, device, correlation = 1000 + 20 * m, 1010 + 20 * m, 200 + m
        events += [{"ph": "X", "cat": "cuda_runtime", "name": f"hipMemsetAsync{m}", "pid": 7,
                    "tid": 7, "ts": host, "dur": 5, "args": {"correlation": correlation}},
                   {"ph": "X", "cat": "gpu_memset", "name": f"Memset{m}", "pid": 0, "tid": 3,
                    "ts": device, "dur": 5, "args": {"correlation": correlation}},
                   {"ph": "f", "id": correlation, "cat": "ac2g", "name": "ac2g", "pid": 7,
                    "tid": 7, "ts": host, "bp": "e"},
                   {"ph": "f", "id": correlation, "cat": "ac2g", "name": "ac2g", "pid": 0,
                    "tid": 3, "ts": device, "bp": "e"}]
    return events


def test_rocm_hipgraph_decode_trace():
    """The real file: 545 ``f`` under the launch's id, 14 launch pairs, 14 dangling ``f``."""
    path = DATA / "torch" / "tracelens_sglang_qwen3_decode_hipgraph.json.gz"
    raw = orjson.loads(Source(path).read_bytes())["traceEvents"]
    graph = [e for e in raw if e.get("ph") == "f" and e.get("id") == 92178]
    kernels = sum(e.get("ph") == "X" and e.get("cat") == "kernel" and
                  e["args"].get("correlation") == 92178 for e in raw)
    assert (len(graph), kernels) == (545, 544)
    trace = traceconv.load(path)
    names = trace.strings.strings
    launch = {f.source for f in trace.iter_flows()
              if names[trace.slices.name[f.source]] == "hipGraphLaunch"}
    from_graph = [f.target for f in trace.iter_flows() if f.source in launch]
    kinds = {names[trace.slices.category[t]] for t in from_graph}
    assert len(launch) == 1 and kinds == {"kernel"}
    assert len(from_graph) == len(set(from_graph)) == 544   # one flow per kernel
    assert len(trace.flows) == 544 + 14   # (before #22: 1,101, 543 of them kernel → kernel)
    assert trace.diagnostics.count("kineto.flows_from_correlation") == 0
    assert trace.diagnostics.count("chrome.flow_dangling") == 14


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE)
@given(st.integers(1, 80), st.booleans(), st.integers(0, 5))
def test_graph_launch_fans_out(tmp_path, kernels, with_start, memsets):
    trace = traceconv.load(chrome_file(tmp_path, graph_launch(kernels, with_start, memsets)))
    expected = [("hipGraphLaunch", f"k{k}") for k in range(kernels)] + [
        (f"hipMemsetAsync{m}", f"Memset{m}") for m in range(memsets)]
    assert sorted(flow_ends(trace)) == sorted(expected)
    assert trace.diagnostics.count("kineto.flows_from_correlation") == 0


@settings(max_examples=6, deadline=None, suppress_health_check=FIXTURE)
@given(st.integers(2, 40), st.booleans(), st.integers(0, 3))
def test_graph_launch_against_trace_processor(trace_processor, tmp_path, kernels,
                                              with_start, memsets):
    """trace_processor's JSON importer fans an ``s`` out to every ``f`` of its id, as
    traceconv does; a chain of ``f`` alone it refuses whole (``flow_end_without_start``),
    where traceconv links every later point from the first one."""
    path = chrome_file(tmp_path, graph_launch(kernels, with_start, memsets))
    tp = trace_processor
    tp.load(path.read_bytes())
    importer_flows = tp.query("select count(*) n from flow")[0].n
    refused = {r.name: r.value for r in tp.query("select name, value from stats where "
                                                 "name = 'flow_end_without_start'")}
    refused_points = refused.get("flow_end_without_start", 0)
    refused_chains = memsets + (0 if with_start else 1)
    assert refused_points == (0 if with_start else kernels + 1) + 2 * memsets
    assert importer_flows == (kernels if with_start else 0)
    out = io.BytesIO()
    write(traceconv.load(path), out)
    tp.load(out.getvalue())
    ours = tp.query("select count(*) n from flow")[0].n
    assert ours == kernels + memsets
    assert ours - importer_flows == refused_points - refused_chains


# -- 2. no second launch flow --------------------------------------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE)
@given(st.integers(0, 4), st.integers(1, 6), st.booleans())
def test_no_second_flow_between_a_launch_and_its_kernel(tmp_path, before, kernels, linked):
    """Integer-µs traces: zero-length runtime calls (``cudaMemsetAsync``...) at the very time
    of the launch, so an ac2g ``s`` there can bind to any of them. Each kernel gets exactly
    one flow, from the launch with its correlation id (param ResNet: 10,114 → 10,113)."""
    events = []
    for k in range(kernels):
        ts, correlation = 100 * k, 1000 + k
        events += [{"ph": "X", "cat": "cuda_runtime", "name": f"other{k}.{j}", "pid": 1,
                    "tid": 1, "ts": ts, "dur": 0, "args": {"correlation": 10 * k + j}}
                   for j in range(before)]
        events += [{"ph": "X", "cat": "cuda_runtime", "name": f"launch{k}", "pid": 1,
                    "tid": 1, "ts": ts, "dur": 0, "args": {"correlation": correlation}},
                   {"ph": "X", "cat": "kernel", "name": f"kernel{k}", "pid": 0, "tid": 7,
                    "ts": ts + 50, "dur": 10, "args": {"correlation": correlation}}]
        if linked:
            events += [{"ph": "s", "id": correlation, "cat": "ac2g", "name": "ac2g", "pid": 1,
                        "tid": 1, "ts": ts},
                       {"ph": "f", "id": correlation, "cat": "ac2g", "name": "ac2g", "pid": 0,
                        "tid": 7, "ts": ts + 50, "bp": "e"}]
    trace = traceconv.load(chrome_file(tmp_path, events))
    assert sorted(flow_ends(trace)) == [(f"launch{k}", f"kernel{k}") for k in range(kernels)]
    joined = trace.diagnostics.count("kineto.flows_from_correlation")
    assert joined == (0 if linked else kernels)   # what it added, nothing more


# -- 3. detection by content ---------------------------------------------------------------

ET_FILES = sorted((DATA / "torch_et").glob("*.json*"))
ET_TOP_KEYS = ("schema", "pid", "time", "start_ts", "finish_ts")
ET_NODE_KEYS = ("op_schema", "fw_parent", "seq_id", "scope", "fw_tid", "rf_id", "tid",
                "input_types", "output_types", "input_strides", "output_strides", "attrs")


@pytest.mark.parametrize("path", ET_FILES, ids=lambda p: p.name)
def test_execution_traces_of_every_schema_are_detected(path):
    nodes = orjson.loads(Source(path).read_bytes())["nodes"]
    roots = sum(str(n.get("name", "")).startswith("[pytorch|profiler|execution_")
                for n in nodes)
    trace = traceconv.load(path)   # no --format
    assert trace.metadata.source_format == "torch-et"
    assert trace.counts()["ops"] == len(nodes) - roots
    assert trace.diagnostics.count("torch_et.structure_nodes") == roots


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=FIXTURE)
@given(st.sampled_from(ET_FILES), st.sets(st.sampled_from(ET_TOP_KEYS)),
       st.sets(st.sampled_from(ET_NODE_KEYS), max_size=6))
def test_execution_traces_without_optional_fields_are_detected(tmp_path, path, top, node_keys):
    document = orjson.loads(Source(path).read_bytes())
    nodes = document["nodes"]
    for key in top:
        document.pop(key, None)
    for node in nodes:
        for key in node_keys:
            node.pop(key, None)
    variant = tmp_path / "variant.json"
    variant.write_text(json.dumps(document, indent=2))   # the observer's own layout
    trace = traceconv.load(variant)
    assert trace.metadata.source_format == "torch-et"
    roots = sum(str(n.get("name", "")).startswith("[pytorch|profiler|execution_")
                for n in nodes)
    assert trace.counts()["ops"] == len(nodes) - roots


PERF_LINE = re.compile(r"^(.*\S)\s*:\s*(-?nan|[-+\d.e]+)\s*ms\s*,\s*(-?nan|[-+\d.e]+)\s*%\s*$")
PERF_REPORTS = [ROOT / "samples" / "migraphx" / "perf_simple_graph_rocm4.txt",
                *sorted((DATA / "migraphx").glob("synthetic_resnet_perf_dialect_*.txt.gz"))]


def as_table(text: str, header: str, row: Callable[[re.Match[str]], str]) -> str:
    """The perf lines of a report as a column table: ``header`` before the first row of
    each run of perf lines, each perf line given by ``row`` (other lines as they are)."""
    out, started = [], False
    for line in text.splitlines():
        m = PERF_LINE.match(line)
        if not m or " = " not in line:
            started = started and bool(line.strip())
            out.append(line)
            continue
        if not started:
            out.append(header)
            started = True
        out.append(row(m))
    return "\n".join(out) + "\n"


def as_columns(text: str, pipes: bool, gap: int, width: int) -> str:
    """Header ``Instructions … Time(ms) Percentage``, each instruction padded to ``width``
    (a longer one pushes the numbers right), the numbers ``gap`` spaces apart or in ``|``
    cells."""
    def joined(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |" if pipes else (" " * gap).join(cells)

    return as_table(text, joined(["Instructions".ljust(width), "Time(ms)", "Percentage"]),
                    lambda m: joined([m[1].ljust(width), m[2], m[3] + "%"]))


def timed(trace: traceconv.Trace) -> list[tuple[str, int]]:
    return sorted((s.name, s.dur) for s in trace.iter_slices())


@settings(max_examples=12, deadline=None, suppress_health_check=FIXTURE)
@given(st.sampled_from(PERF_REPORTS), st.booleans(), st.integers(2, 6), st.integers(0, 120))
def test_migraphx_column_tables_keep_their_times(tmp_path, path, pipes, gap, width):
    text = Source(path).read_text()
    variant = tmp_path / "perf_columns.txt"
    variant.write_text(as_columns(text, pipes, gap, width))
    original = traceconv.load(path)
    trace = traceconv.load(variant)   # detected by content
    assert trace.metadata.source_format == "migraphx"
    assert timed(trace) == timed(original)


# The layout of some driver branches (ROCm/AMDMIGraphX#1207): every cell left-aligned and
# padded to a fixed width, GEMM-only columns left empty on other rows.
WIDE_COLUMNS = (("Time(ms)", 13), ("Percentage", 13), ("(b, m, n, k)", 32),
                ("Flops(TFlops/s)", 17), ("Throughput(GB/s)", 0))


def as_wide_columns(text: str, width: int, filled: st.DataObject) -> str:
    """The perf lines of a report in that layout; ``filled`` draws which GEMM cells hold a
    value on each row."""
    def row(m: re.Match[str]) -> str:
        extra = filled.draw(st.tuples(st.sampled_from(["", "(1, 128, 10, 128)"]),
                                      st.sampled_from(["", "0.004"]),
                                      st.sampled_from(["", "0.000000", "12.5"])))
        cells = [m[2], m[3], *extra]
        return m[1].ljust(width) + "".join(
            c.ljust(w) for c, (_, w) in zip(cells, WIDE_COLUMNS, strict=True)).rstrip()

    return as_table(text, "Instructions".ljust(width)
                    + "".join(name.ljust(w) for name, w in WIDE_COLUMNS), row)


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=FIXTURE)
@given(st.sampled_from(PERF_REPORTS), st.integers(0, 60), st.data())
def test_migraphx_wide_column_tables_keep_their_times(tmp_path, path, pad, filled):
    """Times come from the Time(ms) column to the ns (0.000693 ms is 693 ns), whichever
    GEMM cells are empty; the expected durations are the report's own numbers."""
    text = Source(path).read_text()
    width = max(len(m[1]) for m in map(PERF_LINE.match, text.splitlines()) if m) + 1 + pad
    variant = tmp_path / "perf_wide.txt"
    variant.write_text(as_wide_columns(text, width, filled))
    trace = traceconv.load(variant)
    assert trace.metadata.source_format == "migraphx"
    assert timed(trace) == timed(traceconv.load(path))
    assert trace.diagnostics.count("migraphx.unparsed_line") == 0


def test_a_wide_column_row_that_fits_no_column_is_counted_not_guessed(tmp_path):
    rows = ["Instructions".ljust(44) + "Time(ms)".ljust(13) + "Percentage".ljust(13)
            + "Throughput(GB/s)",
            "@0 = check_context -> float_type, {}, {}".ljust(44) + "0.000693".ljust(13)
            + "0.00398".ljust(13) + "0.000000",
            "@1 = a_name_longer_than_its_column -> float_type, {}, {}0.000561".ljust(57)
            + "0.00322"]
    path = tmp_path / "perf_unfit.txt"
    path.write_text("\n".join(rows) + "\n")
    trace = traceconv.load(path, format="migraphx")
    assert [(s.name, s.dur) for s in trace.iter_slices()][:1] == [("check_context", 693)]
    assert trace.diagnostics.count("migraphx.unparsed_line") == 1


def indented(text: str, prefix: str, blank: bool) -> str:
    return "\n".join(prefix + line if line.strip() or blank else line
                     for line in text.splitlines())


SUMMARIES = [DATA / "paddle" / "small_summary_default.txt",
             DATA / "paddle" / "pir_static_summary_default.txt",
             DATA / "paddle" / "small_summary_thread_sep.txt"]


def stat_rows(trace: traceconv.Trace) -> list[tuple]:
    return [(s.name, s.section, s.parent, s.depth, s.total_ns, s.calls) for s in trace.stats]


@settings(max_examples=15, deadline=None, suppress_health_check=FIXTURE)
@given(st.sampled_from(SUMMARIES),
       st.one_of(st.integers(1, 8).map(" ".__mul__), st.just("\t")), st.booleans())
def test_paddle_summaries_pasted_with_an_indent(tmp_path, path, prefix, blank):
    """Docs indent a summary by two spaces; any constant indent reads as the original."""
    variant = tmp_path / "summary.txt"
    variant.write_text(indented(path.read_text(), prefix, blank))
    trace = traceconv.load(variant)   # detected by content
    assert trace.metadata.source_format == "paddle-summary"
    assert stat_rows(trace) == stat_rows(traceconv.load(path))


# -- 4. allocator snapshots without time_us -------------------------------------------------

SNAPSHOT = ROOT / "samples" / "torch" / "resnet18_train_snapshot.pickle.gz"


@pytest.fixture(scope="module")
def snapshot_document() -> dict:
    with gzip.open(SNAPSHOT, "rb") as f:
        return PlainUnpickler(f).load()  # type: ignore[no-any-return]


@settings(max_examples=4, deadline=None, suppress_health_check=FIXTURE)
@given(st.floats(0.02, 0.3))
def test_snapshot_without_times_keeps_the_entry_order(tmp_path, snapshot_document, kept):
    """torch < ~2.1 wrote no ``time_us``: entry k of a device's trace is at k (a logical
    clock), so each block lives from its alloc entry to its free_completed entry."""
    traces = [entries[:max(1, int(len(entries) * kept))]
              for entries in snapshot_document["device_traces"]]
    document = {**snapshot_document, "device_traces": [
        [{k: v for k, v in e.items() if k != "time_us"} for e in entries]
        for entries in traces]}
    path = tmp_path / "old_torch.pickle"
    path.write_bytes(pickle.dumps(document, protocol=4))
    trace = traceconv.load(path)
    assert is_logical(trace.metadata.clock)
    open_at: dict[int, int] = {}
    expected = []
    for index, entry in enumerate(traces[0]):
        if entry["action"] == "alloc":
            open_at[entry["addr"]] = index
        elif entry["action"] == "free_completed" and entry["addr"] in open_at:
            expected.append((entry["addr"], open_at.pop(entry["addr"]), index))
    expected += [(addr, index, None) for addr, index in open_at.items()]
    got = [(b.address, b.alloc_ns, b.free_ns) for b in trace.memory if b.alloc_ns is not None]
    assert sorted(got, key=str) == sorted(expected, key=str)
    assert len({b.alloc_ns for b in trace.memory if b.alloc_ns is not None}) == len(expected)


def test_snapshot_without_times_draws_entries(tmp_path, snapshot_document):
    document = {**snapshot_document, "device_traces": [   # (its first 300 entries)
        [{k: v for k, v in e.items() if k != "time_us"} for e in entries[:300]]
        for entries in snapshot_document["device_traces"]]}
    path = tmp_path / "old_torch.pickle"
    path.write_bytes(pickle.dumps(document, protocol=4))
    svg = tmp_path / "m.svg"
    result = CliRunner().invoke(app, ["memflow", str(path), "-o", str(svg)])
    assert result.exit_code == 0, result.output
    text = svg.read_text()
    assert "entries since the first event" in text and "alloc entry " in text
    trace = traceconv.load(path)
    labels = [label for p in trace.processes for label in p.labels]
    assert "order only: 1 ns = 1 trace entry" in labels


# -- 5. what an old Paddle report's place means ---------------------------------------------

REPORT = """------------------------->     Profiling Report     <-------------------------

Place: {place}
Time unit: ms
Sorted by total time in descending order in the same thread

Event                  Calls       Total       Min.        Max.        Ave.
thread0::mul           10          2.5         0.2         0.3         0.25
thread0::softmax       10          1.0         0.1         0.1         0.1
"""


@pytest.mark.parametrize(("place", "clock"), [
    ("CPU", "host"), ("GPU", "device"), ("CUDA", "device"), ("All", "device"),
    ("CUDAPlace(0)", "device"), ("Place(gpu:0)", "device"), ("CPUPlace", "host"),
    ("XPU", None)])
def test_paddle_report_places(tmp_path, place, clock):
    path = tmp_path / "report.txt"
    path.write_text(REPORT.format(place=place))
    trace = traceconv.load(path)
    mul = next(s for s in trace.stats if s.name.endswith("mul"))
    assert (mul.cpu_ns, mul.device_ns) == {
        "host": (2_500_000, None), "device": (None, 2_500_000), None: (None, None)}[clock]
    assert trace.diagnostics.count("paddle_report.foreign_lines") == 0
    assert trace.diagnostics.count("paddle_report.unknown_place") == (clock is None)


# -- 6. small ones -----------------------------------------------------------------------

@settings(max_examples=15, deadline=None, suppress_health_check=FIXTURE)
@given(st.lists(st.sampled_from(["g", "p", "t"]), min_size=1, max_size=8))
def test_instant_scopes_survive_chrome_output(tmp_path, scopes):
    events = [{"ph": "X", "name": "work", "pid": 1, "tid": 1, "ts": 0, "dur": 100}] + [
        {"ph": "i", "s": s, "name": f"mark{k}", "pid": 1, "tid": 1, "ts": k + 1}
        for k, s in enumerate(scopes)]
    out = tmp_path / "out.json"
    traceconv.save(traceconv.load(chrome_file(tmp_path, events)), out)
    written = [e for e in orjson.loads(out.read_bytes())["traceEvents"] if e["ph"] == "i"]
    assert sorted((e["name"], e["s"] == "g") for e in written) == sorted(
        (f"mark{k}", s == "g") for k, s in enumerate(scopes))
    again = traceconv.load(out)
    kinds = [again.tracks[i.track].kind for i in again.iter_instants()]
    assert sum(k is TrackKind.GLOBAL for k in kinds) == scopes.count("g")


@pytest.mark.parametrize("to", ["perfetto", "chrome"])
def test_execution_trace_alone_to_a_timeline_says_why(tmp_path, to):
    out = tmp_path / f"out.{to}"
    result = CliRunner().invoke(app, [str(ET_FILES[0]), "--to", to, "-o", str(out)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no times" in lines[0] and "execution trace" in lines[0]
    assert not out.exists()


def test_migraphx_trace_eval_summary_lists_every_instruction():
    path = DATA / "migraphx" / "trace_eval_rocm5.7_level2_two_passes.txt"
    names = {m.group(1) for m in re.finditer(r"^Run instruction: (\S+) = ", path.read_text(),
                                             re.M)}
    result = CliRunner().invoke(app, ["summary", str(path), "--json"])
    assert result.exit_code == 0, result.output
    rows = orjson.loads(result.stdout)["rows"]
    assert len(rows) == len(names) == 7   # (before #22: the top 3, profile_analyze's default)


@pytest.mark.parametrize("text", [b"[]", b'{"traceEvents": []}',
                                  b'{"schemaVersion": 1, "traceEvents": [], "x": 1}'])
@pytest.mark.parametrize("verb", [["info"], ["convert", "--to", "perfetto"]])
def test_json_without_trace_events_is_an_error(tmp_path, text, verb):
    path = tmp_path / "empty.json"
    path.write_bytes(text)
    result = CliRunner().invoke(app, [*verb, str(path), "-o", str(tmp_path / "o.pftrace")]
                                if verb[0] == "convert" else [*verb, str(path)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no trace events" in lines[0] and "empty.json" in lines[0]


@settings(max_examples=5, deadline=None, suppress_health_check=FIXTURE)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=6))
def test_stepped_flows_agree_with_trace_processor(trace_processor, tmp_path, steps):
    """Chains ``s t… f`` over distinct slices (MegEngine's TensorLink): every step is both
    the end of one flow and the start of the next, in traceconv as in the importer."""
    events: list[dict] = []
    for chain, count in enumerate(steps):
        for k, phase in enumerate(["s", *["t"] * count, "f"]):
            ts = 1000 * chain + 10 * k
            events += [{"ph": "X", "name": f"c{chain}.{k}", "pid": 1, "tid": k % 2 + 1,
                        "ts": ts, "dur": 5},
                       {"ph": phase, "id": chain, "cat": "link", "name": "link", "pid": 1,
                        "tid": k % 2 + 1, "ts": ts, **({"bp": "e"} if phase == "f" else {})}]
    path = chrome_file(tmp_path, events)
    trace_processor.load(path.read_bytes())
    importer = trace_processor.query("select count(*) n from flow")[0].n
    trace = traceconv.load(path)
    assert len(trace.flows) == importer == sum(count + 1 for count in steps)
    assert sorted(flow_ends(trace)) == sorted(
        (f"c{c}.{k}", f"c{c}.{k + 1}") for c, count in enumerate(steps) for k in range(count + 1))
