"""An empty list or dict inside a list argument keeps its position in a written .pftrace.

Kineto records an operator's input shapes as one list per input, ``[]`` for a scalar one:
``aten::index_select`` has ``Input Dims`` ``[[8192, 512], [], [8192]]``. trace_processor
numbers the elements of a Perfetto array by the args they add, so an empty element written
as no value moved every later one down an index (``Input Dims[1][0] = 8192``, next to
``Input type[1] = "Scalar"``), where the same trace_processor keeps ``[2][0]`` for the JSON
input. The Perfetto writer (``formats/perfetto/annotations``, the one place every argument
is encoded) writes such an element, when a shown one follows it, as its text ("[]", "{}")
beside its mark.

Expected values: the real trace_processor on the input JSON (its args table) and the raw
packets decoded with Perfetto's own protos; the input file itself, read with ``json``.
The trace is a cut of a real Kineto trace (A100, record_shapes; see data/torch/PROVENANCE.md).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as TraceProto

import traceconv
from traceconv.formats.perfetto import write

KINETO = Path(__file__).parent / "data" / "torch" / "zoology_a100_record_shapes_cut.json"
SHOWN_AS_TEXT = {"[]", "{}"}   # an empty element, written as its text


def written() -> bytes:
    out = io.BytesIO()
    write(traceconv.load(KINETO), out)
    return out.getvalue()


def shown_args(trace_processor, data: bytes, prefix: str) -> dict[tuple[str, int], dict]:
    """trace_processor's args of each slice (by name and start), without the key prefix."""
    trace_processor.load(data)
    rows = trace_processor.query(
        "select s.name, s.ts, a.key, a.display_value from slice s join args a using(arg_set_id)")
    shown: dict[tuple[str, int], dict] = {}
    for r in rows:
        shown.setdefault((r.name, r.ts), {})[r.key.removeprefix(prefix)] = r.display_value
    return shown


def test_every_list_element_keeps_the_index_trace_processor_gives_the_json(trace_processor):
    """Each arg trace_processor shows for the JSON input shows with the same key and value
    for the .pftrace; the only others are the empty elements, as "[]" at their own index."""
    from_json = shown_args(trace_processor, KINETO.read_bytes(), "args.")
    from_pftrace = shown_args(trace_processor, written(), "debug.")
    assert from_json.keys() == from_pftrace.keys()
    index_select = next(v for (name, _), v in from_json.items() if name == "aten::index_select")
    assert index_select["Input Dims[2][0]"] == "8192"   # (the case: after an empty element)
    for slice_key, args in from_json.items():
        shown = from_pftrace[slice_key]
        assert {k: shown.get(k) for k in args} == args, slice_key
        assert {shown[k] for k in shown.keys() - args.keys()} <= SHOWN_AS_TEXT, slice_key


def test_an_empty_element_is_a_value_in_the_packets_and_reads_back_empty(tmp_path: Path):
    """In the packets (Perfetto's protos), each of layer_norm's six input shapes is one
    array element: "[]" for an empty one before the last shape, no value for an empty one
    after it (it moves nothing); traceconv reads the file back to the input's lists."""
    data = written()
    packets = TraceProto.FromString(data).packet
    names = {entry.iid: entry.name for p in packets
             for entry in p.interned_data.debug_annotation_names}
    events = json.loads(KINETO.read_text())["traceEvents"]
    layer_norm = next(e for e in events if e["name"] == "aten::layer_norm")
    dims = layer_norm["args"]["Input Dims"]   # [[64, 128, 512], [], [512], [512], [], []]
    ts_ns = layer_norm["ts"] * 1000
    annotation = next(a for p in packets if p.timestamp == ts_ns
                      for a in p.track_event.debug_annotations
                      if names.get(a.name_iid) == "Input Dims")
    last_shape = max(at for at, shape in enumerate(dims) if shape)   # 3
    for at, (element, expected) in enumerate(zip(annotation.array_values, dims, strict=True)):
        if expected:
            assert [v.int_value for v in element.array_values] == expected
        elif at < last_shape:
            assert (element.WhichOneof("value"), element.string_value) == ("string_value", "[]")
        else:
            assert element.WhichOneof("value") is None and not element.array_values
    pftrace = tmp_path / "kineto.pftrace"
    pftrace.write_bytes(data)
    back = traceconv.load(pftrace)
    assert sorted(map(str, back.slices.args)) == sorted(
        str(e["args"]) for e in events if e["ph"] == "X")
