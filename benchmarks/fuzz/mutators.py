"""Structural mutators: each turns one valid input into a plausible broken one.

A mutator is ``(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes``; ``pool`` holds
the other seeds of the same kind (for splices). Structure-aware edits reach the code behind
the parser (type confusion, numbers out of range, cycles); byte edits reach the parser.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import math
import pickle
import random
import re
from collections.abc import Callable
from typing import Any

from traceconv.formats.perfetto.wire import varint
from traceconv.formats.protowire.scalar import read_varint

Mutator = Callable[[bytes, random.Random, list[bytes]], bytes]

# Values that broke readers before: out-of-range and non-finite numbers, type confusion,
# markup and terminal control characters, deep nesting.
_INF = "\x00inf\x00"    # stand-ins that serialise to tokens json.dumps cannot write
_BIG = "\x00big\x00"
HOSTILE_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2**31, 2**63 - 1, 2**63, -2**63 - 1, 2**64, 2**70, -2**70,
    1e308, -1e308, 1e-320, 0.5, -0.0, _INF, _BIG, "", "x" * 300, "[/x]\x1b[2J\x07", "NaN",
    "inf", "-1", "1e999", "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
    [], {}, [1, 2], {"a": 1}, [[[[[[[[[[1]]]]]]]]]], {"": None},
]
HOSTILE_NUMBERS = [b"nan", b"inf", b"-inf", b"1e999", b"-1", b"0", b"-0",
                   b"99999999999999999999999", b"18446744073709551616", b"1e308", b"0.0000001",
                   b"-99999999999", b"4294967296", b"x", b""]
HOSTILE_TEXT = [b"[/x]", b"\x1b[31m", b"\x07", b"\x00", b"\xff\xfe", b"{", b"}", b"[", b"]",
                b"(", b")", b"|", b":", b",", b"\t", b"\r", b"->", b"@", b"%"]


def _dumps(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    return (text.replace(json.dumps(_INF), "1e999").replace(json.dumps(_BIG),
                                                            "1" + "0" * 40)
            .encode("utf-8", "surrogatepass"))


def _nodes(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths to every container and leaf (bounded: big documents are sampled by the caller)."""
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _nodes(child, (*path, i))
    return out


@functools.lru_cache(maxsize=256)
def _paths(data: bytes) -> list[tuple]:
    """The paths of a document (seeds come back again and again: listed once each)."""
    return _nodes(json.loads(data))


def _get(value: Any, path: tuple) -> Any:
    for part in path:
        value = value[part]
    return value


def json_tree(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """Edit the parsed document: replace, delete, duplicate, swap or copy a value."""
    try:
        doc = json.loads(data)
        paths = _paths(data)
    except (ValueError, RecursionError):   # not JSON, or nested too deep to walk
        return byte_edit(data, rng, pool)
    _edit_tree(doc, paths, rng, HOSTILE_VALUES)
    try:
        return _dumps(doc)
    except RecursionError:
        return byte_edit(data, rng, pool)


# what a pickle can hold beyond JSON: real non-finite floats, huge ints, bytes, tuples
HOSTILE_PICKLED: list[Any] = [v for v in HOSTILE_VALUES if v not in (_INF, _BIG)] + [
    math.inf, -math.inf, math.nan, 10**40, -(2**64), b"\xff\x00", b"", (1, 2), (),
    {1: 2}, {(1,): None}, {None: 1}, 1 + 2j, frozenset({1})]


def pickle_tree(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """The tree edits of :func:`json_tree` on an unpickled document (plain data only), with
    values only a pickle can hold; pickled again with a random protocol (0-5)."""
    from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler

    try:
        doc = PlainUnpickler(io.BytesIO(data)).load()
        paths = _pickle_paths(data)
    except (pickle.UnpicklingError, EOFError, ValueError, RecursionError):
        return byte_edit(data, rng, pool)
    _edit_tree(doc, paths, rng, HOSTILE_PICKLED)
    try:
        return pickle.dumps(doc, protocol=rng.randrange(6))
    except RecursionError:
        return byte_edit(data, rng, pool)


@functools.lru_cache(maxsize=64)
def _pickle_paths(data: bytes) -> list[tuple]:
    return _nodes(pickle.loads(data))   # (seeds: the project's own files)


def _edit_tree(doc: Any, paths: list[tuple], rng: random.Random, hostile: list[Any]) -> None:
    """1-3 edits in place: replace, delete, duplicate, swap or copy a value."""
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths)
        if not path:
            continue
        try:
            parent, key = _get(doc, path[:-1]), path[-1]
            edit = rng.randrange(6)
            if edit == 0:   # (a copy: a later edit may change it in place)
                parent[key] = copy.deepcopy(rng.choice(hostile))
            elif edit == 1:
                del parent[key]
            elif edit == 2 and isinstance(parent, list):
                parent.insert(key, copy.deepcopy(parent[key]))
            elif edit == 3 and isinstance(parent, list) and len(parent) > 1:
                other = rng.randrange(len(parent))
                parent[key], parent[other] = parent[other], parent[key]
            elif edit == 4:   # a value from elsewhere: ids meet names, lists meet numbers
                parent[key] = copy.deepcopy(_get(doc, rng.choice(paths)))
            else:
                parent[key] = _numeric_neighbour(parent[key], rng)
        except (KeyError, IndexError, TypeError, RecursionError):
            continue   # (paths are not listed again: a stale one fails here, or edits a
            # neighbour, which is as good a mutation)


def _numeric_neighbour(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return copy.deepcopy(rng.choice(HOSTILE_VALUES))
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    # (made once chosen: a product with an int past a double, or the text of one past
    # Python's digit limit, would raise while the others were made)
    edit = rng.choice([lambda: value * 1000, lambda: -value, lambda: value + 1,
                       lambda: value - 1, lambda: value * 1e300 if value else 1e300,
                       lambda: int(value) << 40, lambda: str(value)])
    try:
        return edit()
    except (OverflowError, ValueError):
        return 1e300


_LINE_SPLIT = re.compile(rb"(?<=\n)")
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def text_lines(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """Line edits: delete, duplicate, swap, cut, and hostile numbers or characters."""
    lines = _LINE_SPLIT.split(data)
    for _ in range(rng.randint(1, 4)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        edit = rng.randrange(7)
        if edit == 0:
            del lines[i]
        elif edit == 1:
            lines.insert(i, lines[i])
        elif edit == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif edit == 3:   # a paste cut mid-line: everything after is gone
            lines = lines[:i] + [lines[i][:rng.randrange(len(lines[i]) + 1)]]
        elif edit == 4:
            numbers = list(_NUMBER.finditer(lines[i]))
            if numbers:
                m = rng.choice(numbers)
                lines[i] = lines[i][:m.start()] + rng.choice(HOSTILE_NUMBERS) + lines[i][m.end():]
        elif edit == 5:
            at = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:at] + rng.choice(HOSTILE_TEXT) + lines[i][at:]
        elif pool:
            other = _LINE_SPLIT.split(rng.choice(pool))
            lines.insert(i, rng.choice(other))
    return b"".join(lines)


# -- protobuf wire format ----------------------------------------------------------------

Field = tuple[int, int, Any]   # (number, wire type, int | bytes | list[Field])


def parse_wire(data: bytes, depth: int = 0) -> list[Field]:
    """Fields of a message; length-delimited values that parse as messages are nested."""
    fields: list[Field] = []
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire == 2:
            size, pos = read_varint(data, pos)
            if pos + size > len(data):
                raise ValueError("truncated")
            raw = data[pos:pos + size]
            pos += size
            value = raw
            if depth < 12 and raw:
                try:
                    value = parse_wire(raw, depth + 1)
                except ValueError:
                    value = raw
        else:
            raise ValueError("wire type")
        if number == 0:
            raise ValueError("field 0")
        fields.append((number, wire, value))
    return fields


def write_wire(fields: list[Field]) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += varint(number << 3 | wire)
        if wire == 0:
            out += varint(value)
        elif wire == 2:
            raw = write_wire(value) if isinstance(value, list) else value
            out += varint(len(raw)) + raw
        else:
            out += value
    return bytes(out)


def _all_lists(fields: list[Field]) -> list[list[Field]]:
    out = [fields]
    for _, _, value in fields:
        if isinstance(value, list):
            out += _all_lists(value)
    return out


def protobuf_wire(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """Edit decoded fields: boundary varints, values copied between fields of the same
    number (parent ids into cycles), invalid UTF-8, dropped/duplicated/reordered fields."""
    try:
        root = _copy(_parsed(data))
    except ValueError:
        return byte_edit(data, rng, pool)
    lists = [f for f in _all_lists(root) if f]   # (not listed again after each edit)
    if not lists:
        return byte_edit(data, rng, pool)
    for _ in range(rng.randint(1, 4)):
        fields = rng.choice(lists)
        if not fields:   # emptied by an earlier edit
            continue
        i = rng.randrange(len(fields))
        number, wire, value = fields[i]
        edit = rng.randrange(6)
        if edit == 0 and wire == 0:
            fields[i] = (number, 0, rng.choice([0, 1, 2, 2**31 - 1, 2**32, 2**63 - 1, 2**63,
                                               2**64 - 1, value + 1, value ^ 1]))
        elif edit == 1:
            same = [f for lst in lists for f in lst if f[0] == number and f[1] == wire]
            fields[i] = copy.deepcopy(rng.choice(same))   # (it may hold ``fields`` itself)
        elif edit == 2 and wire == 2 and isinstance(value, bytes):
            at = rng.randrange(len(value) + 1)
            fields[i] = (number, 2, value[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80",
                                                            b"[/x]", b"\x1b", b"\x00"])
                         + value[at:])
        elif edit == 3:
            del fields[i]
        elif edit == 4:
            fields.insert(i, fields[i])
        else:
            j = rng.randrange(len(fields))
            fields[i], fields[j] = fields[j], fields[i]
    return write_wire(root)


@functools.lru_cache(maxsize=256)
def _parsed(data: bytes) -> list[Field]:
    """``parse_wire`` of a seed, once (callers edit a :func:`_copy`)."""
    return parse_wire(data)


def _copy(fields: list[Field]) -> list[Field]:
    return [(n, w, _copy(v) if isinstance(v, list) else v) for n, w, v in fields]


def byte_edit(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """Flip bits, insert, delete or overwrite bytes, or truncate."""
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not buffer:
            buffer += bytes([rng.randrange(256)])
            continue
        at = rng.randrange(len(buffer))
        edit = rng.randrange(5)
        if edit == 0:
            buffer[at] ^= 1 << rng.randrange(8)
        elif edit == 1:
            buffer[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif edit == 2:
            del buffer[at:at + rng.randint(1, 64)]
        elif edit == 3:
            buffer[at] = rng.choice([0, 0x7F, 0x80, 0xFF, 0x22, 0x5B, 0x7B, 0x0A])
        else:
            del buffer[at:]
    return bytes(buffer)


def splice(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """The head of this input and the tail of another one of the same kind."""
    if not pool:
        return byte_edit(data, rng, pool)
    other = rng.choice(pool)
    return data[:rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]


# input kind -> weighted mutators (structure-aware first)
MUTATORS: dict[str, list[tuple[Mutator, int]]] = {
    "json": [(json_tree, 6), (text_lines, 1), (byte_edit, 1), (splice, 1)],
    "text": [(text_lines, 6), (byte_edit, 1), (splice, 1)],
    "svg": [(text_lines, 5), (byte_edit, 1), (splice, 1)],
    "protobuf": [(protobuf_wire, 6), (byte_edit, 2), (splice, 1)],
    "pickle": [(pickle_tree, 6), (byte_edit, 2), (splice, 1)],
}


def mutate(kind: str, data: bytes, rng: random.Random, pool: list[bytes],
           extra: list[tuple[Mutator, int]] | tuple = ()) -> tuple[str, bytes]:
    """One mutant of ``data`` (by a mutator of ``kind``, or of ``extra``); returns the
    mutator's name too."""
    choices = MUTATORS[kind] + list(extra)
    mutator = rng.choices([m for m, _ in choices], [w for _, w in choices])[0]
    return mutator.__name__, mutator(data, rng, pool)
