"""Graphviz DOT output of the op graph: ops as boxes, tensors as ellipses.

Ops are labelled ``name\\ntype``, tensors ``name\\nshape dtype``; render with
``dot -Tsvg graph.dot -o graph.svg``.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from ...model import Trace
from ...model.graph import OP


def quote(text: str) -> str:
    """A DOT double-quoted string.

    >>> quote('CompNode("cpu0:0")')
    '"CompNode(\\\\"cpu0:0\\\\")"'
    """
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def node_label(data: dict[str, Any]) -> str:
    """The text shown in a node.

    >>> node_label({"kind": "tensor", "name": "x", "shape": (4, 16), "dtype": "Float32"})
    'x\\n(4, 16) Float32'
    """
    if data.get("kind") == OP:
        return f"{data.get('name', '')}\n{data.get('type', '')}".rstrip()
    detail = " ".join(_shown(x) for x in (data.get("shape"), data.get("dtype"))
                      if x is not None)
    return f"{data.get('name', '')}\n{detail}".rstrip()


def _shown(value: Any) -> str:
    """``str(value)``, or a marker where Python's repr gives up on a value nested too deep
    (a garbled execution trace's shape)."""
    try:
        return str(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deep to write>"


def write(trace: Trace, out: BinaryIO) -> None:
    """Write ``trace.graph`` as a DOT digraph."""
    lines = ["digraph traceconv {", "  rankdir=TB;", "  node [fontsize=10];"]
    for node, data in trace.graph.nodes(data=True):
        shape = "box" if data.get("kind") == OP else "ellipse"
        lines.append(f"  {quote(node)} [shape={shape}, label={quote(node_label(data))}];")
    lines.extend(f"  {quote(src)} -> {quote(dst)};" for src, dst in trace.graph.edges())
    lines.append("}")
    out.write(("\n".join(lines) + "\n").encode())
