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
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import TraceconvError

if TYPE_CHECKING:
    from ..io import Source

_NO_TRACE_EVENTS = 4096   # how far into a JSON head "traceEvents" rules a format out
_HEAD = 64 * 1024          # (io.HEAD_BYTES: a head this long may not be the whole input)


_FURTHER = 256 << 20   # how far past its head a JSON object is searched for identifying keys

# A MegEngine profile or graph.json holds two of these (its keys are hash-ordered)
_MEGENGINE_KEYS = frozenset({b'"graph_exec"', b'"profiler"', b'"opr_footprint"', b'"comp_seq"',
                             b'"opr_internal_pf"', b'"mem_chunk"'})
# What execution-trace nodes hold, in every published layout: Chakra 1.0.2+ (ctrl_deps,
# inputs/outputs objects, attrs list) and the flat 1.0.1 one (parent, rf_id, op_schema,
# input_shapes ... at the node's top level)
_EXECUTION_TRACE_NODE_NAMES = (b"ctrl_deps", b"attrs", b"rf_id", b"fw_parent", b"fw_tid",
                               b"seq_id", b"op_schema", b"input_shapes", b"input_types",
                               b"output_shapes", b"output_types")


def chrome(head: bytes, source: Source | None) -> float:
    """Chrome JSON starts with ``[`` or an object holding ``"traceEvents"`` and ``"ph"``."""
    text = head.lstrip()
    if text.startswith(b"{"):
        return 0.9 if b'"traceEvents"' in text else 0.0
    if text.startswith(b"["):
        return 0.6 if b'"ph"' in text[:4096] else 0.1
    return 0.0


def chrome_beyond_head(head: bytes, source: Source | None) -> float:
    """An object whose ``"traceEvents"`` comes after top-level keys longer than the head
    (viztracer's ``file_info`` holds the traced source files): see :func:`keys_beyond_head`.

    >>> chrome_beyond_head(b'{"file_info": "', None)
    0.0
    """
    return 0.9 if claimed("chrome", head, source) else 0.0


def megengine_profile_beyond_head(head: bytes, source: Source | None) -> float:
    """A profile or ``graph.json`` whose second key comes after a long first one (a big
    ``comp_seq``): see :func:`keys_beyond_head`. (Below Chrome: a Chrome trace may name them.)

    >>> megengine_profile_beyond_head(b'{"comp_seq": [', None)
    0.0
    """
    return 0.85 if claimed("megengine", head, source) else 0.0


def megengine_meminfo_beyond_head(head: bytes, source: Source | None) -> float:
    """A ``StaticMemoryInfo.json`` whose chunks come after an ``opr`` map longer than the
    head: see :func:`keys_beyond_head`.

    >>> megengine_meminfo_beyond_head(b'{ "opr": { "3": {', None)
    0.0
    """
    return 0.85 if claimed("megengine-meminfo", head, source) else 0.0


def torch_et_beyond_head(head: bytes, source: Source | None) -> float:
    """An execution trace whose ``nodes`` come after a long earlier key: see
    :func:`keys_beyond_head`.

    >>> torch_et_beyond_head(b'{"schema": "1.1.1-chakra.0.0.4", "nodes": [', None)
    0.0
    """
    return 0.85 if claimed("torch-et", head, source) else 0.0


# What the deep sniffs look for: per format, groups of quoted keys of which at least so many
# must occur (anywhere in the object: one scan serves every format, see keys_beyond_head)
_DEEP_CLAIMS: dict[str, tuple[tuple[frozenset[bytes], int], ...]] = {
    "chrome": ((frozenset({b'"traceEvents"'}), 1),),
    "megengine": ((_MEGENGINE_KEYS, 2),),
    "megengine-meminfo": ((frozenset({b'"opr"'}), 1),
                          (frozenset({b'"chunk"'}), 1),
                          (frozenset({b'"logic_addr_begin"'}), 1)),
    "torch-et": ((frozenset({b'"nodes"'}), 1),
                 (frozenset(b'"%s"' % name for name in _EXECUTION_TRACE_NODE_NAMES), 2)),
}
_DEEP_KEYS = frozenset().union(*(keys for claim in _DEEP_CLAIMS.values() for keys, _ in claim))
# (one pattern, not a search per key: a block is walked once, from quote to quote)
_ANY_DEEP_KEY = re.compile(b"|".join(re.escape(key) for key in sorted(_DEEP_KEYS)))


def _satisfied(claim: tuple[tuple[frozenset[bytes], int], ...], found: frozenset[bytes]) -> bool:
    return all(len(keys & found) >= needed for keys, needed in claim)


def claimed(name: str, head: bytes, source: Source | None) -> bool:
    """Whether the object holds the keys of :data:`_DEEP_CLAIMS` ``name`` (a deep sniff)."""
    return _satisfied(_DEEP_CLAIMS[name], keys_beyond_head(head, source))


# (a weak reference to the last input scanned, the keys found in it)
_last_scan: tuple[Callable[[], object], frozenset[bytes]] = (lambda: None, frozenset())


def keys_beyond_head(head: bytes, source: Source | None) -> frozenset[bytes]:
    """The identifying keys (of every deep sniff) that a JSON object holds in its head and
    the :data:`_FURTHER` bytes after it, for an object longer than the head.

    One scan serves every deep sniff of one input (the last input's answer is kept); it
    reads a MiB at a time, at most ``_HEAD + _FURTHER`` bytes (memory: two MiB blocks),
    and stops one block after the one where some format's keys are all found (the block
    after lets a format whose keys include another's find the rest too). Keys are matched
    as quoted strings anywhere, not parsed: the reader, not the sniff, checks the structure.

    >>> keys_beyond_head(b'{"traceEvents": []}', None)   # (no more than the head)
    frozenset()
    """
    global _last_scan
    if source is None or len(head) < _HEAD or not head.lstrip().startswith(b"{"):
        return frozenset()
    if _last_scan[0]() is source:
        return _last_scan[1]
    found = _scan(source)
    _last_scan = (weakref.ref(source), found)
    return found


def _scan(source: Source) -> frozenset[bytes]:
    step, overlap = 1 << 20, max(map(len, _DEEP_KEYS)) - 1
    found: set[bytes] = set()
    seen, blocks_left = b"", (_HEAD + _FURTHER) // step
    try:
        with source.open() as stream:
            while blocks_left > 0:
                block = stream.read(step)
                if not block:
                    break
                window, blocks_left = seen + block, blocks_left - 1
                found.update(match.group() for match in _ANY_DEEP_KEY.finditer(window))
                if blocks_left > 1 and any(_satisfied(claim, frozenset(found))
                                           for claim in _DEEP_CLAIMS.values()):
                    blocks_left = 1
                seen = block[-overlap:]
    except (OSError, EOFError, ValueError, TraceconvError):
        pass   # (the reader, not the sniffer, says what is wrong with the input)
    return frozenset(found)


def megengine_profile(head: bytes, source: Source | None) -> float:
    """A static profile names ``graph_exec`` and ``profiler`` near the top (hash-ordered keys).

    >>> megengine_profile(b'{ "profiler": { "opr_internal_pf": {}, "host": {', None)
    0.95
    >>> megengine_profile(b'{"traceEvents": [', None)
    0.0
    """
    text = head[:_NO_TRACE_EVENTS]
    if not text.lstrip().startswith(b"{") or b'"traceEvents"' in text:
        return 0.0
    return 0.95 if sum(key in head for key in _MEGENGINE_KEYS) >= 2 else 0.0


def megengine_meminfo(head: bytes, source: Source | None) -> float:
    """``{ "opr": {...}, "chunk": {... "logic_addr_begin" ...}}``.

    >>> megengine_meminfo(b'{ "opr": { "3": { "name": "x", "id": "3"}}, "chunk": { "0": '
    ...                   b'{ "logic_addr_begin": "0"', None)
    0.95
    """
    if not head.lstrip().startswith(b"{") or b'"traceEvents"' in head[:_NO_TRACE_EVENTS]:
        return 0.0
    return 0.95 if b'"logic_addr_begin"' in head and b'"opr"' in head else 0.0


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


_EXECUTION_TRACE_HEAD = re.compile(rb'^\s*\{[^\[]{0,400}"(schema|nodes)"\s*:')
_EXECUTION_TRACE_NODE_KEYS = re.compile(
    rb'"(%s)"\s*:' % b"|".join(_EXECUTION_TRACE_NODE_NAMES))
# the names of the process/thread root nodes
_EXECUTION_TRACE_ROOT = re.compile(rb'\[pytorch\|profiler\|execution_(?:trace|graph)\|')


def torch_et(head: bytes, source: Source | None) -> float:
    """A JSON object with ``schema`` / ``nodes`` near the start whose nodes carry
    execution-trace keys of any schema (1.0.1 flat keys through 1.1.1 Chakra), a root node
    or a Chakra schema string (Chrome JSON has ``traceEvents`` instead).

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
    if (not _EXECUTION_TRACE_HEAD.match(head) or b'"traceEvents"' in head
            or b'"nodes"' not in head):
        return 0.0
    keys = {m.group(1) for m in _EXECUTION_TRACE_NODE_KEYS.finditer(head)}
    if b"chakra" in head or _EXECUTION_TRACE_ROOT.search(head) or len(keys) >= 2:
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
