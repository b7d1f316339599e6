"""MegEngine's JSON documents grown N times with plain json, to measure the peak per input
byte that ``traceconv.memory_check.PEAK_PER_BYTE`` holds for them.

    python benchmarks/megengine_grown.py profile 300 /tmp/p300.json
    python benchmarks/megengine_grown.py meminfo 300 /tmp/m300.StaticMemoryInfo.json
    /usr/bin/time -f "%M KB" traceconv /tmp/p300.json -o /tmp/p300.pftrace

Each copy gets ids of its own (every string that is an operator or var id, a key too, is
renumbered) and its times after the previous copy's, so the reader sees one N times longer
run, not one run N times over.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "megengine"
PROFILE = DATA / "resnet50ish_static_profile.json.gz"
MEMINFO = DATA / "resnet50ish_static_mem_info" / "StaticMemoryInfo.json.gz"


def grown_profile(doc: dict[str, Any], times: int) -> dict[str, Any]:
    """A static-graph profile (``profiler`` and ``graph_exec``) ``times`` times over."""
    profiler, graph = doc["profiler"], doc["graph_exec"]
    ids = set(graph["operator"]) | set(graph["var"])
    stride = max(int(i) for i in ids) + 1
    span = 1.0 + max(t["end"] for part in ("host", "device") for op in profiler[part].values()
                     for t in op.values())

    def renumbered(value: Any, copy: int) -> Any:
        if isinstance(value, dict):
            return {renumbered(k, copy): renumbered(v, copy) for k, v in value.items()}
        if isinstance(value, list):
            return [renumbered(v, copy) for v in value]
        return str(int(value) + copy * stride) if isinstance(value, str) and value in ids \
            else value

    out: dict[str, Any] = {"profiler": {k: {} for k in profiler},
                           "graph_exec": {"comp_seq": [], **{k: {} for k in graph
                                                             if k != "comp_seq"}}}
    for copy in range(times):
        for part, entries in profiler.items():
            if part in ("host", "device"):   # op -> comp node -> {start, kern, end} (s)
                entries = {op: {node: {f: t + copy * span for f, t in times_of.items()}
                                for node, times_of in nodes.items()}
                           for op, nodes in entries.items()}
            out["profiler"][part].update(renumbered(entries, copy))
        out["graph_exec"]["comp_seq"] += renumbered(graph["comp_seq"], copy)
        for part, entries in graph.items():
            if part != "comp_seq":
                out["graph_exec"][part].update(renumbered(entries, copy))
    return out


def grown_meminfo(doc: dict[str, Any], times: int) -> dict[str, Any]:
    """A ``StaticMemoryInfo.json`` ``times`` times over (a chunk's times are opr steps)."""
    oprs, chunks = len(doc["opr"]), len(doc["chunk"])
    out: dict[str, Any] = {"opr": {}, "chunk": {}}
    for copy in range(times):
        for opr in doc["opr"].values():
            key = str(int(opr["id"]) + copy * oprs)
            out["opr"][key] = {**opr, "id": key}
        for chunk in doc["chunk"].values():
            key = str(int(chunk["id"]) + copy * chunks)
            dest = chunk["overwrite_dest_id"]
            out["chunk"][key] = {
                **chunk, "id": key,
                "overwrite_dest_id": dest if dest == "-1" else str(int(dest) + copy * chunks),
                "time_begin": str(int(chunk["time_begin"]) + copy * oprs),
                "time_end": str(int(chunk["time_end"]) + copy * oprs)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("profile", "meminfo"))
    parser.add_argument("times", type=int)
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    source, grow = (PROFILE, grown_profile) if args.kind == "profile" else (MEMINFO,
                                                                            grown_meminfo)
    with gzip.open(source) as f:
        doc = json.load(f)
    args.output.write_text(json.dumps(grow(doc, args.times)))


if __name__ == "__main__":
    main()
