"""How built-in formats recognise their files from the first bytes, without their readers.

Detection runs every candidate's sniffer on the first decompressed bytes of an input;
keeping the sniffers here (the registry's ``sniffer`` column names them) means telling a
``.json`` apart imports no reader, schema, numpy or pydantic. Each function takes
``(head, source)`` and returns how sure it is, from 0 (not mine) to 1.

>>> chrome(b'{"traceEvents": [{"ph": "X"}]}', None)
0.9
>>> torch_snapshot(b'\\x80\\x04\\x95segments', None)
0.95
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .key_claims import KeyClaim, keys_in_head

if TYPE_CHECKING:
    from ..io import Source

# A MegEngine profile or graph.json holds two of these (its keys are hash-ordered)
_MEGENGINE_KEYS = ("graph_exec", "profiler", "opr_footprint", "comp_seq", "opr_internal_pf",
                   "mem_chunk")
# What execution-trace nodes hold, in every published layout: Chakra 1.0.2+ (ctrl_deps,
# inputs/outputs objects, attrs list) and the flat 1.0.1 one (parent, rf_id, op_schema,
# input_shapes ... at the node's top level)
_EXECUTION_TRACE_NODE_NAMES = ("ctrl_deps", "attrs", "rf_id", "fw_parent", "fw_tid", "seq_id",
                               "op_schema", "input_shapes", "input_types", "output_shapes",
                               "output_types")

# The keys that tell these formats wherever they come (the registry's ``key_claims``): a
# Chrome trace's "traceEvents" (a rocprof v1 results.json, Chrome-like, has "BeginNs"); the
# others are not Chrome traces that happen to name their keys
CHROME_KEYS = (KeyClaim("trace", all_of=("traceEvents",), none_of=("BeginNs",),
                        inner=("BeginNs",)),)
# (a profile's "profiler" holds the op timings and footprints)
MEGENGINE_PROFILE_KEYS = (KeyClaim("profile", some_of=_MEGENGINE_KEYS, least=2,
                                   none_of=("traceEvents",),
                                   inner=("opr_internal_pf", "opr_footprint")),)
MEGENGINE_MEMINFO_KEYS = (KeyClaim("meminfo", all_of=("opr", "chunk", "logic_addr_begin"),
                                   none_of=("traceEvents",), inner=("logic_addr_begin",)),)
TORCH_ET_KEYS = (KeyClaim("trace", all_of=("nodes",), some_of=_EXECUTION_TRACE_NODE_NAMES,
                          least=2, none_of=("traceEvents",),
                          inner=_EXECUTION_TRACE_NODE_NAMES),)


def _held(head: bytes, claims: tuple[KeyClaim, ...]) -> bool:
    """Whether the keys ``head`` holds fit one of ``claims``."""
    found = keys_in_head(head, claims)
    return any(claim.holds(found) for claim in claims)


def chrome(head: bytes, source: Source | None) -> float:
    """Chrome JSON starts with ``[`` or an object whose key ``"traceEvents"`` the head holds
    (at the top level: one nested in a value or a string is another file's).

    >>> chrome(b'{"nodes": [], "metadata": {"traceEvents": 1}, "name": "\\"traceEvents\\":"}',
    ...        None)
    0.0
    """
    text = head.lstrip()
    if text.startswith(b"{"):
        return 0.9 if b'"traceEvents"' in keys_in_head(head, CHROME_KEYS) else 0.0
    if text.startswith(b"["):
        return 0.6 if b'"ph"' in text[:4096] else 0.1
    return 0.0


def megengine_profile(head: bytes, source: Source | None) -> float:
    """A static profile's top-level keys are ``profiler`` (its op timings and footprints
    count as its) and ``graph_exec``, a graph.json's ``comp_seq`` and ``mem_chunk`` ...

    >>> megengine_profile(b'{ "profiler": { "opr_internal_pf": {}, "host": {', None)
    0.95
    >>> megengine_profile(b'{"traceEvents": [', None)
    0.0
    """
    if not head.lstrip().startswith(b"{"):
        return 0.0
    return 0.95 if _held(head, MEGENGINE_PROFILE_KEYS) else 0.0


def megengine_meminfo(head: bytes, source: Source | None) -> float:
    """``{ "opr": {...}, "chunk": {... "logic_addr_begin" ...}}``.

    >>> megengine_meminfo(b'{ "opr": { "3": { "name": "x", "id": "3"}}, "chunk": { "0": '
    ...                   b'{ "logic_addr_begin": "0"', None)
    0.95
    """
    if not head.lstrip().startswith(b"{"):
        return 0.0
    return 0.95 if _held(head, MEGENGINE_MEMINFO_KEYS) else 0.0


def megengine_memflow_svg(head: bytes, source: Source | None) -> float:
    """An SVG with MegEngine's ``xmlns:tag`` namespace.

    >>> megengine_memflow_svg(b'<svg xmlns="http://www.w3.org/2000/svg" '
    ...                       b'xmlns:tag="https://megengine.org.cn"', None)
    1.0
    """
    return 1.0 if b"<svg" in head and b"megengine.org.cn" in head else 0.0


_PADDLE_PB_HEAD = re.compile(rb"\A\x0a[\x03-\x10]\d+\.\d+\.\d+[\x10\x1a]")


def paddle_pb(head: bytes, source: Source | None) -> float:
    """Certain for a ``NodeTreesProto``: it opens with its version string."""
    return 0.9 if _PADDLE_PB_HEAD.match(head) else 0.0


def paddle_profile(head: bytes, source: Source | None) -> float:
    """A ``Profile`` starts with field 1 (an ``Event``) whose own field 1 is a name."""
    if len(head) < 4 or head[0] != 0x0A:
        return 0.0
    length, pos = _varint(head, 1)
    if length is None or pos >= len(head) or head[pos] != 0x0A:
        return 0.0
    name_len, start = _varint(head, pos + 1)
    if not name_len or name_len > length:
        return 0.0
    name = head[start:start + min(name_len, 64)]
    if not name.isascii() or not name.decode("ascii", "replace").isprintable():
        return 0.0
    return 0.6 if source is not None and source.stem_name.endswith(".profile") else 0.4


def _varint(data: bytes, pos: int) -> tuple[int | None, int]:
    """:func:`read_varint`, None for bytes that are no varint (a sniffer never raises)."""
    from .protowire.scalar import WireError, read_varint  # (only for binary heads)

    try:
        return read_varint(data, pos)
    except WireError:
        return None, pos


_MEMORY_TIMELINE_HEAD = re.compile(rb"^\s*\[\s*\[\s*-?\d")   # a list of lists of numbers


def torch_memory(head: bytes, source: Source | None) -> float:
    """Both export shapes open with ``[[<number>``; Chrome JSON opens with ``{`` or ``[{``.

    >>> torch_memory(b'[[1795339764044750, 1795339764044750], [[0, 1, 2]]]', None)
    0.9
    >>> torch_memory(b'[{"ph": "X", "ts": 1}]', None)
    0.0
    """
    return 0.9 if _MEMORY_TIMELINE_HEAD.match(head) else 0.0


SNAPSHOT_KEYS = (b"segments", b"device_traces")


def torch_snapshot(head: bytes, source: Source | None) -> float:
    """A protocol 2-5 pickle whose first bytes name a snapshot key."""
    if len(head) < 2 or head[0] != 0x80 or not 2 <= head[1] <= 5:
        return 0.0
    return 0.95 if any(key in head[:4096] for key in SNAPSHOT_KEYS) else 0.0


# the names of the process/thread root nodes
_EXECUTION_TRACE_ROOT = re.compile(rb'\[pytorch\|profiler\|execution_(?:trace|graph)\|')


def torch_et(head: bytes, source: Source | None) -> float:
    """A JSON object with the top-level key ``nodes`` whose nodes carry execution-trace
    keys of any schema (1.0.1 flat keys through 1.1.1 Chakra), a root node or a Chakra
    schema string (Chrome JSON has ``traceEvents`` instead).

    >>> torch_et(b'{"schema": "1.1.1-chakra.0.0.4", "pid": 418, "nodes": [', None)
    0.95
    >>> torch_et(b'{"nodes": [{"name": "aten::add", "id": 5, "parent": 4, "rf_id": 3, '
    ...          b'"op_schema": "", "inputs": [], "input_shapes": []}]}', None)
    0.95
    >>> torch_et(b'{"schema": "1.0.1", "nodes": [{"id": 1, "name": "x"}]}', None)
    0.0
    >>> torch_et(b'{"traceEvents": []}', None)
    0.0
    """
    if not head.lstrip().startswith(b"{"):
        return 0.0
    if _held(head, TORCH_ET_KEYS):
        return 0.95
    found = keys_in_head(head, TORCH_ET_KEYS)
    if b'"nodes"' in found and b'"traceEvents"' not in found and (
            b"chakra" in head or _EXECUTION_TRACE_ROOT.search(head)):
        return 0.95
    return 0.0


# TracePacket fields of which a trace's first packets carry at least one (perfetto_trace.proto):
# sequence id, track event, interned data, sequence flags, clock id, defaults, track
# descriptor, trace attributes. (Not the low numbers: a Paddle binary profile is a run of
# 0x0a fields too, whose Events hold fields 1-8.)
_PACKET_MARKS = frozenset({10, 11, 12, 13, 58, 59, 60, 126})
_MAX_PACKETS = 8   # packets of the head walked to decide


def perfetto(head: bytes, source: Source | None) -> float:
    """A run of ``Trace.packet`` fields (tag 0x0a, a length) whose first packets walk as
    protobuf fields and carry a TracePacket mark: 0.8; framed as packets only: 0.3; just
    the packet tag: 0.05; else 0. (0x0a is also a newline: JSON after one is not a trace.)

    >>> perfetto(b"\\x0a\\x02P\\x01", None), perfetto(b'\\n{"traceEvents": []}', None)
    (0.8, 0.0)
    >>> perfetto(b"\\n" * 10, None)   # (blank lines: a text, not packets of newlines)
    0.0
    """
    if head[:1] != b"\x0a" or not head.strip():
        return 0.0
    packets: list[bytes] = []
    pos = 0
    while pos < len(head) and len(packets) < _MAX_PACKETS:
        if head[pos] != 0x0A:
            return 0.0
        length, start = _varint(head, pos + 1)
        if length is None or start + length > len(head):
            break
        packets.append(head[start:start + length])
        pos = start + length
    if not packets:
        return 0.0 if head[1:2] in (b"{", b"[") else 0.05
    if packets[0][:1] in (b"{", b"["):
        return 0.0
    walked = [_top_fields(packet) for packet in packets]
    if any(fields is None for fields in walked):
        return 0.3
    return 0.8 if any(fields & _PACKET_MARKS for fields in walked if fields) else 0.05


def _top_fields(message: bytes) -> set[int] | None:
    """The field numbers of ``message``'s top level, or None when it is not wire format."""
    from .protowire.scalar import WireError, iter_fields  # (only for binary heads)

    try:
        return {number for number, _, _, _ in iter_fields(message)}
    except WireError:
        return None
