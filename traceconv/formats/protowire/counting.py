"""How many elements repeated message fields hold, found without decoding them.

What a reader makes of a protobuf costs memory per message more than per byte: a file of
two-byte events is a million rows per 2 MB. :func:`count_elements` walks only the messages
along the given field paths and skips the counted elements whole, so the memory check
(:mod:`traceconv.memory_check`) can count a file's rows before reading it.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from .messages import Message
from .scalar import LENGTH, WireError, read_varint, skip_value

# field key -> (the path whose elements it holds, or None, and the paths below it)
_Steps = dict[int, tuple[str | None, Any]]


def count_elements(cls: type[Message], data: bytes, paths: tuple[str, ...]) -> dict[str, int]:
    """Per path of ``paths`` (dotted field names from ``cls``, e.g. ``planes.lines.events``):
    how many elements its repeated message field holds in the ``cls`` message ``data``, in
    one walk. Damage ends the walk: what was counted before it is returned (the reader
    reports the damage where it meets it).

    >>> from traceconv.formats.protowire import message_classes
    >>> classes = message_classes("demo", {"Leaf": [("id", 1, "uint64")],
    ...     "Node": [("name", 1, "string"), ("leaves", 2, "repeated Leaf")],
    ...     "Tree": [("nodes", 1, "repeated Node")]})
    >>> node = b"\\x0a\\x01n" + b"\\x12\\x02\\x08\\x07" * 3          # a name and three leaves
    >>> tree = (b"\\x0a" + bytes([len(node)]) + node) * 2          # two such nodes
    >>> count_elements(classes["Tree"], tree, ("nodes", "nodes.leaves"))
    {'nodes': 2, 'nodes.leaves': 6}
    >>> count_elements(classes["Tree"], tree[:-3], ("nodes.leaves",))   # the second node cut
    {'nodes.leaves': 3}
    """
    counted = dict.fromkeys(paths, 0)
    with suppress(WireError):
        _walk(data, 0, len(data), _steps(cls, paths, ""), counted)
    return counted


def _steps(cls: type[Message], paths: tuple[str, ...], above: str) -> _Steps:
    """``paths`` (below the path ``above``) as a tree of field keys."""
    heads: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        heads.setdefault(head, []).append(rest)
    steps: _Steps = {}
    for name, rests in heads.items():
        path = f"{above}{name}"
        below = tuple(rest for rest in rests if rest)
        steps[cls._numbers[name] << 3 | LENGTH] = (
            path if len(below) < len(rests) else None,
            _steps(cls._subs[name], below, f"{path}.") if below else None)
    return steps


def _walk(data: bytes, pos: int, end: int, steps: _Steps, counted: dict[str, int]) -> None:
    # (a loop per field of the messages on the paths: the one-byte key and length that
    # small elements have are read inline)
    while pos < end:
        field_at = pos
        key = data[pos]
        pos += 1
        if key >= 0x80:
            key, pos = read_varint(data, field_at, end)
        step = steps.get(key)
        if step is None:
            pos = skip_value(data, key & 7, pos, end, field_at)
            continue
        length = data[pos] if pos < end else 0x80
        if length < 0x80:
            pos += 1
        else:
            length, pos = read_varint(data, pos, end)
        after = pos + length
        if after > end:
            raise WireError("a field runs past the end of its message", field_at)
        if step[0] is not None:
            counted[step[0]] += 1
        if step[1] is not None:
            _walk(data, pos, after, step[1], counted)
        pos = after


SMALLEST_ELEMENT = 2   # bytes of a repeated message's element on the wire: key and length


class RowPeak:
    """What a message format's rows add to the peak of reading a file whole: per repeated
    message field whose elements become rows (paths from ``top``), the peak bytes per
    element (:mod:`traceconv.memory_check` asks for it).

    >>> from traceconv.formats.protowire import message_classes
    >>> Tree = message_classes("demo", {"Leaf": [("id", 1, "uint64")],
    ...                                 "Tree": [("leaves", 1, "repeated Leaf")]})["Tree"]
    >>> peak = RowPeak(Tree, {"leaves": 100})
    >>> peak.counted(b"\\x0a\\x00" * 3), peak.most(6)
    (300, 300)
    """

    def __init__(self, top: type[Message], per_element: dict[str, int]) -> None:
        self.top, self.per_element = top, per_element

    def most(self, size: int) -> int:
        """The bound for ``size`` bytes: every element of the costliest kind and smallest."""
        return max(self.per_element.values()) * (size // SMALLEST_ELEMENT)

    def counted(self, data: bytes) -> int:
        """The rows of the message ``data``, counted (:func:`count_elements`)."""
        counts = count_elements(self.top, data, tuple(self.per_element))
        return sum(self.per_element[path] * count for path, count in counts.items())
