"""Mutators for the classes of issue 23 that structural edits never reach.

- **semantic values**: numbers a field can hold but no clock or size should: times at the
  int64 edges once scaled to ns, negative sizes, counts past 2**64, infinite counters;
- **encodings**: a UTF-8 BOM, UTF-16/32 with a BOM, CR-only and CRLF line ends, tabs where
  an editor unexpanded spaces;
- **depth**: a value nested a thousand levels and more (JSON, pickle), report rows
  indented a thousand levels (text);
- **amplification**: a pickle value replaced by a DAG of shared (memo) lists, tens of
  levels deep: a few hundred bytes that stand for 2**40 items;
- **truncation**: a text or SVG cut at any byte (the reader must say it was cut).

Each is ``(data, rng, pool) -> bytes`` as in :mod:`.mutators`.
"""

from __future__ import annotations

import io
import json
import pickle
import random
import sys
from typing import Any

from .mutators import MUTATORS, _get, _nodes, _paths, byte_edit, json_tree, splice, text_lines

EDGE_NUMBERS: list[Any] = [
    9223372036854775, -9223372036854775, 9223372036854775.807, 9223372036854775807,
    -9223372036854775808, 4611686018427387904, -1, -64, -(2**62), 2**64 + 1, 10**23,
    float("inf"), float("-inf"), 1.7976931348623157e308, 0]
EDGE_TEXT = [b"9223372036854775807", b"-9223372036854775808", b"99999999999999999999999",
             b"18446744073709551617", b"-64", b"inf", b"1e308"]


def _dump(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).replace("Infinity", "1e999").encode()


def semantic_json(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """1-4 numeric leaves (times, sizes, counts, ids) set to an edge value."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return json_tree(data, rng, pool)
    numbers = [p for p in _paths(data) if p and isinstance(_get(doc, p), (int, float))
               and not isinstance(_get(doc, p), bool)]
    if not numbers:
        return json_tree(data, rng, pool)
    for path in rng.sample(numbers, min(len(numbers), rng.randint(1, 4))):
        _get(doc, path[:-1])[path[-1]] = rng.choice(EDGE_NUMBERS)
    return _dump(doc)


def semantic_text(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """A number on 1-3 lines replaced by an edge value (a Calls column past int64, ...)."""
    lines = data.split(b"\n")
    import re

    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        found = list(re.finditer(rb"\d+(?:\.\d+)?", lines[i]))
        if found:
            m = rng.choice(found)
            lines[i] = lines[i][:m.start()] + rng.choice(EDGE_TEXT) + lines[i][m.end():]
    return b"\n".join(lines)


def unexpand(text: str) -> str:
    """What ``unexpand -a`` does: runs of spaces that end at a tab stop become a tab."""
    def line(row: str) -> str:
        pieces = [row[i:i + 8] for i in range(0, len(row), 8)]
        return "".join(p.rstrip(" ") + "\t" if len(p) == 8 and p.endswith("  ") else p
                       for p in pieces)
    return "\n".join(line(row) for row in text.split("\n"))


DRESSES = ("bom8", "utf16le", "utf16be", "utf32le", "cr", "crlf", "tabs")


def dress(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """The input (or a line edit of it) in another encoding or line-end convention."""
    if rng.random() < 0.3:
        data = text_lines(data, rng, pool)
    text = data.decode("utf-8", "replace")
    how = rng.choice(DRESSES)
    if how == "bom8":
        return b"\xef\xbb\xbf" + data
    if how == "utf16le":
        return b"\xff\xfe" + text.encode("utf-16-le", "surrogatepass")
    if how == "utf16be":
        return b"\xfe\xff" + text.encode("utf-16-be", "surrogatepass")
    if how == "utf32le":
        return b"\xff\xfe\x00\x00" + text.encode("utf-32-le", "surrogatepass")
    if how == "cr":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    return unexpand(text).encode("utf-8", "surrogatepass")


def _deep_text(depth: int) -> str:
    return "[" * depth + "]" * depth


def deepen_json(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """A value replaced by a list nested 500-1,200 levels deep."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return json_tree(data, rng, pool)
    paths = [p for p in _paths(data) if p]
    marker = "\x00deep\x00"
    if paths:
        path = rng.choice(paths)
        _get(doc, path[:-1])[path[-1]] = marker
        return _dump(doc).replace(json.dumps(marker).encode(),
                                  _deep_text(rng.choice((500, 900, 1000, 1200))).encode())
    return _deep_text(1000).encode()


def deepen_text(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """A row repeated as a chain of 300-600 rows, each indented one level more (the input
    grows with the square of the depth: 600 levels are 400 KB of indentation)."""
    lines = data.split(b"\n")
    rows = [i for i, line in enumerate(lines) if line.strip() and line[:1] in b" \t"]
    if not rows:
        return text_lines(data, rng, pool)
    i = rng.choice(rows)
    row = lines[i].lstrip()
    depth = rng.choice((300, 600))
    chain = [b"  " * (k + 1) + row for k in range(depth)]
    return b"\n".join(lines[:i + 1] + chain + lines[i + 1:])


def _dag(levels: int, leaf: Any) -> list:
    node: Any = leaf
    for _ in range(levels):
        node = [node, node]
    return node  # type: ignore[no-any-return]


def _plain(data: bytes) -> Any:
    from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler

    return PlainUnpickler(io.BytesIO(data)).load()


def _pickle_leaves(doc: Any) -> list[tuple]:
    return [p for p in _nodes(doc) if p and not isinstance(_get(doc, p), (dict, list))]


def pickle_amplify(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """A leaf (a frame name, a setting, an annotation name) replaced by a DAG of shared
    lists 20-45 levels deep, or by one long string shared by every frame of a stack, or by
    a list nested 1,000-5,000 levels deep."""
    try:
        doc = _plain(data)
    except Exception:  # noqa: BLE001 - not a plain pickle: leave it to the byte edits
        return data
    leaves = _pickle_leaves(doc)
    if not leaves:
        return data
    path = rng.choice(leaves)
    how = rng.choice(("dag", "dag", "long", "deep"))
    if how == "dag":
        value: Any = _dag(rng.randint(20, 45), _get(doc, path))
    elif how == "long":
        value = "n" * rng.choice((1 << 16, 1 << 20))
        for stack in [p for p in _nodes(doc) if p and p[-1] == "frames"][:8]:
            frames = _get(doc, stack)
            if isinstance(frames, list) and frames and isinstance(frames[0], dict):
                frames[0]["name"] = value
                _get(doc, stack[:-1])[stack[-1]] = frames * rng.choice((10, 300))
    else:
        value = []
        for _ in range(rng.choice((1000, 5000))):
            value = [value]
    _get(doc, path[:-1])[path[-1]] = value
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        return pickle.dumps(doc, protocol=rng.choice((2, 4)))
    except (RecursionError, MemoryError):
        return data
    finally:
        sys.setrecursionlimit(limit)


def cut(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """The input cut at any byte past its first quarter (a copy that stopped midway)."""
    if len(data) < 8:
        return data
    return data[:rng.randrange(len(data) // 4, len(data))]


# kind -> extra (mutator, weight): added to :data:`.mutators.MUTATORS`
HOSTILE_MUTATORS = {
    "json": [(semantic_json, 2), (dress, 1), (deepen_json, 1)],
    "text": [(semantic_text, 2), (dress, 1), (deepen_text, 1), (cut, 1)],
    "svg": [(semantic_text, 1), (dress, 1), (cut, 1)],
    "pickle": [(pickle_amplify, 2)],
    "protobuf": [],
    "bytes": [(cut, 1)],
}


MUTATORS.setdefault("bytes", [(byte_edit, 3), (splice, 1)])   # a reader with no kind yet
for _kind, _extra in HOSTILE_MUTATORS.items():   # every campaign draws from them too
    MUTATORS[_kind].extend(m for m in _extra if m not in MUTATORS[_kind])
