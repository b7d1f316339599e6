"""Execution traces (Chakra schema) alone and linked to their Kineto trace, checked against
the two JSON documents read by plain code here."""

from __future__ import annotations

import bisect
import gzip
import json
import random
import subprocess
import sys
from collections import defaultdict

import networkx as nx
import pytest

import traceconv
from traceconv.analysis.dataflow import with_dataflow_flows

ET = "samples/torch/resnet18_train_et.json.gz"
KINETO = "samples/torch/resnet18_train_cuda.pt.trace.json.gz"
STRUCTURE = "[pytorch|profiler|execution_trace|"
DEVICE_CATEGORIES = {"kernel", "gpu_memset", "gpu_memcpy"}


def _json(path: str) -> dict:
    with gzip.open(path) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def et_doc() -> dict:
    return _json(ET)


@pytest.fixture(scope="module")
def kineto_doc() -> dict:
    return _json(KINETO)


@pytest.fixture(scope="module")
def linked() -> traceconv.Trace:
    return traceconv.combine([traceconv.load(KINETO), traceconv.load(ET)])


def _rf(node: dict) -> int:
    return next(a["value"] for a in node["attrs"] if a["name"] == "rf_id")


def _ops(et_doc: dict) -> list[dict]:
    return [n for n in et_doc["nodes"] if not n["name"].startswith(STRUCTURE)]


def test_alone_a_graph_without_times(et_doc):
    trace = traceconv.load(ET)
    assert trace.metadata.source_format == "torch-et"
    assert trace.op_count == len(_ops(et_doc)) == 1996
    assert len(trace.slices) == 0 and trace.span_ns == 0
    assert nx.is_directed_acyclic_graph(trace.graph)


def test_tensor_nodes_carry_the_et_values(et_doc):
    trace = traceconv.load(ET)
    conv = next(n for n in et_doc["nodes"] if n["name"] == "aten::conv2d")
    tid, sid, offset, numel, elem, device = conv["outputs"]["values"][0]
    node = trace.graph.nodes[f"tensor/{tid}:{sid}"]
    assert (node["numel"], node["bytes"], node["device"], node["dtype"]) == (
        numel, numel * elem, device, "float")
    assert list(node["shape"]) == conv["outputs"]["shapes"][0]
    assert (f"op/{conv['id']}", f"tensor/{tid}:{sid}") in trace.graph.edges


def test_ops_link_by_record_function_id(et_doc, kineto_doc, linked):
    by_rf = {e["args"]["Record function id"]: e["name"] for e in kineto_doc["traceEvents"]
             if "Record function id" in e.get("args", {})}
    expected = sum(by_rf.get(_rf(n)) == n["name"] for n in _ops(et_doc))
    count = linked.diagnostics["link_et.linked_ops"].count
    assert count == expected
    assert count / len(_ops(et_doc)) >= 0.99
    assert linked.op_count == len(_ops(et_doc))
    diags = linked.diagnostics
    unlinked = diags["link_et.unlinked_ops"].count if "link_et.unlinked_ops" in diags else 0
    assert unlinked == len(_ops(et_doc)) - count


def test_host_and_device_time_from_kineto(et_doc, kineto_doc, linked):
    """Device time of an op = the kernels whose launches (runtime calls on the op's thread,
    inside its span) share their correlation id: computed here from the raw JSON."""
    events = kineto_doc["traceEvents"]
    kernels = {e["args"]["correlation"]: e["dur"] for e in events
               if e.get("cat") in DEVICE_CATEGORIES and "correlation" in e.get("args", {})}
    launches = defaultdict(list)
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            launches[e["tid"]].append((e["ts"], e["args"].get("correlation")))
    for runs in launches.values():
        runs.sort()
    ops = {e["args"]["Record function id"]: e for e in events
           if e.get("cat") == "cpu_op" and "Record function id" in e.get("args", {})}
    checked = 0
    graph = linked.graph
    for node in _ops(et_doc):
        op = ops.get(_rf(node))
        if op is None:
            continue
        runs = launches[op["tid"]]
        lo = bisect.bisect_left(runs, (op["ts"], -1))
        hi = bisect.bisect_right(runs, (op["ts"] + op["dur"], float("inf")))
        mine = [kernels[c] for _, c in runs[lo:hi] if c in kernels]
        data = graph.nodes[f"op/{node['id']}"]
        assert data["kernels"] == len(mine), node["name"]
        assert data["device_ns"] == pytest.approx(sum(mine) * 1000, abs=1 + len(mine))
        assert data["host_ns"] == pytest.approx(op["dur"] * 1000, abs=1)
        (span,) = data["host_spans"].values()   # the graph contract's per-place spans
        assert span.dur_ns == data["host_ns"]
        assert bool(data.get("device_spans")) == bool(mine)
        checked += 1
    assert checked == 1988   # every ET op recorded as a cpu_op (the rest are annotations)


def test_dataflow_flows_follow_tensors(linked):
    combined = traceconv.combine([traceconv.load(KINETO), traceconv.load(ET)])
    before = len(combined.flows)
    trace = with_dataflow_flows(combined)
    added = trace.diagnostics.count("dataflow.flows")
    assert added > 0 and len(trace.flows) == before + added
    assert len(linked.flows) == before   # combine gave each call its own flows
    conv = next(n for n, d in trace.graph.nodes(data=True) if d.get("name") == "aten::conv2d")
    (out,) = trace.graph.successors(conv)
    (bn,) = trace.graph.successors(out)
    flows = {(f.source, f.target) for f in trace.iter_flows() if f.category == "dataflow"}
    first_kernel = {n: next(r for r in trace.graph.nodes[n]["slices"][1:]) for n in (conv, bn)}
    assert (first_kernel[conv], first_kernel[bn]) in flows


def test_inputs_are_not_changed():
    kineto, et = traceconv.load(KINETO), traceconv.load(ET)
    counts, diags = kineto.counts(), len(kineto.diagnostics.as_list())
    traceconv.combine([kineto, et])
    assert kineto.counts() == counts and len(kineto.diagnostics.as_list()) == diags
    assert all("host_ns" not in d for _, d in et.graph.nodes(data=True))


@pytest.mark.slow
def test_cli_links_not_merges(tmp_path):
    run = [sys.executable, "-m", "traceconv"]
    alone = json.loads(subprocess.run([*run, "info", KINETO, "--json"], check=True,
                                      capture_output=True, text=True).stdout)
    both = json.loads(subprocess.run([*run, "info", KINETO, ET, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    assert both["format"] == "chrome+torch-et"
    assert both["processes"] == alone["processes"] and both["slices"] == alone["slices"]
    assert both["ops"] == 1996
    out = tmp_path / "graph.graphml"
    subprocess.run([*run, KINETO, ET, "-o", str(out)], check=True, capture_output=True)
    graph = nx.read_graphml(out)
    timed = [d for _, d in graph.nodes(data=True) if d.get("kind") == "op" and "host_ns" in d]
    assert len(timed) == 1996


def test_a_summary_of_the_graph_alone_says_it_has_no_times(et_doc):
    """Alone, an ET has op order and no clock: ``summary`` says so in one line (it printed
    an empty table) and names the ops it holds; beside its Kineto trace it has times."""
    from tests.cli_errors import one_error_line, run

    one_error_line(run("summary", ET), "nothing to summarize", "no times",
                   f"{len(_ops(et_doc)):,} ops", "traceconv summary TRACE ET")
    both = run("summary", KINETO, ET, "-t", "3")
    assert both.exit_code == 0 and "aten::" in both.output


def test_bad_execution_trace_is_one_line(tmp_path):
    bad = tmp_path / "x_et.json"
    bad.write_text('{"schema": "1.1.1-chakra.0.0.4", "nodes": 3}')
    result = subprocess.run([sys.executable, "-m", "traceconv", "info", str(bad)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "x_et.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_unlinked_ops_are_counted(tmp_path, et_doc):
    """An op renamed in the ET no longer matches its Kineto slice: it stays, without times."""
    doc = json.loads(json.dumps(et_doc))
    renamed = next(n for n in doc["nodes"] if n["name"] == "aten::cudnn_convolution")
    renamed["name"] = "aten::not_what_ran"
    path = tmp_path / "edited_et.json"
    path.write_text(json.dumps(doc))
    trace = traceconv.combine([traceconv.load(KINETO), traceconv.load(path)])
    diags = trace.diagnostics
    assert diags["link_et.linked_ops"].count == 1995
    assert diags["link_et.unlinked_ops"].count == 1
    assert diags["link_et.name_mismatch"].count == 1
    assert "host_ns" not in trace.graph.nodes[f"op/{renamed['id']}"]


def test_nodes_sharing_an_id_are_counted_not_merged(et_doc, tmp_path):
    """An id names one op: twenty more nodes given the id of an op already there are left
    out and counted (they were merged into it silently), and every other op is read."""
    ops = _ops(et_doc)
    doc = dict(et_doc)
    doc["nodes"] = [*et_doc["nodes"], *({**ops[5], "name": f"copy {k}"} for k in range(20))]
    path = tmp_path / "dup_et.json"
    path.write_text(json.dumps(doc))
    trace = traceconv.load(path, format="torch-et")
    assert trace.diagnostics.count("torch_et.duplicate_id") == 20
    assert trace.op_count == len(ops) == traceconv.load(ET).op_count


def _parent_of(node: dict) -> object:
    return node.get("ctrl_deps", node.get("parent"))


def test_parent_cycles_are_cut_and_counted(et_doc, tmp_path):
    """Parent ids come from the file: ops made their own parent, and chains made to go
    round (an op's ancestor given the op as its parent), each read as one cycle cut at its
    first op (the lowest id: the outermost) and counted; every other link is the file's
    (an op's self-parent link was dropped silently, a cycle kept, and data edges lost)."""
    doc = json.loads(json.dumps(et_doc))
    ops = {n["id"]: n for n in _ops(doc)}
    parent = {i: _parent_of(n) for i, n in ops.items()}

    def chain(op: int) -> list[int]:   # the op and its ancestors among the ops
        found = [op]
        while parent[found[-1]] in ops:
            found.append(parent[found[-1]])
        return found

    rng = random.Random(20261201)
    deep = [i for i in sorted(ops) if len(chain(i)) >= 3]
    picked: list[int] = []
    used: set[int] = set()
    for op in rng.sample(deep, len(deep)):   # (disjoint chains: one cycle each)
        if len(picked) == 12:
            break
        if not used & set(chain(op)):
            picked.append(op)
            used |= set(chain(op))
    expected_cut = {}
    for k, op in enumerate(picked):
        if k % 3 == 0:   # its own parent
            ops[op]["ctrl_deps"] = op
            expected_cut[op] = op
        else:            # its outermost ancestor made its child: op -> ... -> top -> op
            top = chain(op)[-1]
            ops[top]["ctrl_deps"] = op
            expected_cut[op] = min(chain(op))
    path = tmp_path / "cycles_et.json"
    path.write_text(json.dumps(doc))
    trace = traceconv.load(path, format="torch-et")
    assert trace.diagnostics.count("model.parent_cycle") == len(picked) == 12
    got = {int(n.split("/")[1]): d.get("parent") for n, d in trace.graph.nodes(data=True)
           if d.get("kind") == "op"}
    cut = set(expected_cut.values())
    for op, node in ops.items():
        file_parent = _parent_of(node)
        want = None if op in cut or file_parent not in ops else f"op/{file_parent}"
        assert got[op] == want, op
    for op in got:   # every chain ends
        seen, at = set(), got[op]
        while at is not None:
            assert at not in seen
            seen.add(at)
            at = got[int(at.split("/")[1])]
