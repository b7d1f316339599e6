"""Hostile-input families: each turns one reader's seed into variants of one class.

The readers and their seeds come from the registry (``traceconv.registry.SEED_SAMPLES``), so a
reader registered with a seed is covered by every family that applies to its syntax the day
it is registered. A family is ``(seed, rng, count) -> list[Variant]``; what it makes depends
only on the seed and ``rng`` (callers seed it from the reader, the family and a campaign
number), so any variant can be made again.

- ``edge_numbers``: numbers at the int64 edges and past them, negative, NaN/infinity, digit
  strings of hundreds and thousands of digits (JSON and text numbers, protobuf varints and
  doubles, pickled numbers, SQLite cells);
- ``encodings``: UTF-16 with a BOM, a UTF-8 BOM, latin-1, invalid UTF-8 and NUL bytes inside
  strings and names;
- ``depth``: values nested thousands of levels (JSON, protobuf, pickle, SVG; report rows
  indented hundreds of levels);
- ``amplification``: a gzip of repeated content or of one huge string (a few KB that stand
  for tens of MB), pickle memo DAGs (repeated references), a SQLite column generated on read;
- ``cut``: the file truncated at many offsets;
- ``special``: the seed behind a FIFO, a FIFO with no writer, a directory, ``/dev/zero``
  with ``--max-bytes``, an empty file, a symlink loop;
- :func:`scaled`: the seed's content repeated n times (the scaling check's inputs).

>>> seed = Seed("migraphx", "text", "t.txt", b"a 1\\nb 2\\n")
>>> cuts = cut(seed, random.Random(0), 2)
>>> [v.label for v in cuts], all(seed.data.startswith(v.data) for v in cuts)
(['cut at 5 of 8', 'cut at 6 of 8'], True)
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gzip
import io
import json
import math
import os
import pickle
import random
import re
import sqlite3
import struct
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .mutators import MUTATORS, Mutator, _get, _nodes, byte_edit, parse_wire, write_wire

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Seed:
    """One reader's seed: the registry name, its syntax, its file name and its bytes."""

    reader: str
    syntax: str
    name: str
    data: bytes


@dataclass
class Variant:
    """One hostile input. ``data`` is written under ``name`` (the seed's file name unless
    given); a special file has ``make`` instead, which builds the input in a folder and
    returns the path to give the command line (called once per command)."""

    label: str
    data: bytes = b""
    name: str | None = None
    make: Callable[[Path], str] | None = None
    args: tuple[str, ...] = ()          # extra command-line arguments (--max-bytes)


def registry_seeds() -> list[Seed]:
    """Every seed of every registered reader (a reader without one has none here: the
    matrix test fails on it)."""
    from traceconv import registry

    seeds = []
    for info in registry.all_formats():
        if not info.reads:
            continue
        for sample in registry.seed_samples(info.name):
            path = ROOT / sample.path
            seeds.append(Seed(info.name, sample.syntax, path.name, path.read_bytes()))
    return seeds


# -- edge numbers --------------------------------------------------------------------------

HUGE_DIGITS = ("9" * 400, "1" + "0" * 5000)   # past a double; past Python's int-parse limit
EDGE_TOKENS = ("9223372036854775807", "-9223372036854775808", "9223372036854775808",
               "-9223372036854775809", "18446744073709551616", "-1", "-0", "0",
               "1e308", "-1e308", "1e999", "-1e999", "NaN", "Infinity", "-Infinity",
               "4.5e-324", "0.000000001", *HUGE_DIGITS)
EDGE_VARINTS = (0, 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1)
EDGE_DOUBLES = (math.nan, math.inf, -math.inf, 1.7976931348623157e308, -1.0, 5e-324)
EDGE_PICKLED: tuple[Any, ...] = (2**63 - 1, -2**63, 2**63, 2**64, -(2**70), 10**400, math.nan,
                                 math.inf, -math.inf, -1, 1e308, -0.0)
EDGE_CELLS: tuple[Any, ...] = (2**63 - 1, -2**63, -1, 1e308, math.inf, -math.inf, 0,
                               "9" * 400, "NaN")
_NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")


def edge_numbers(seed: Seed, rng: random.Random, count: int) -> list[Variant]:
    """1-4 numbers of the seed replaced by edge values (one variant per value drawn)."""
    out = []
    for k in range(count):
        if seed.syntax == "json":
            out.append(_json_numbers(seed.data, rng, k))
        elif seed.syntax == "protobuf":
            out.append(_wire_numbers(seed.data, rng))
        elif seed.syntax == "pickle":
            out.append(_pickle_leaves(seed.data, rng, lambda _v: rng.choice(EDGE_PICKLED),
                                      (int, float), "edge number"))
        elif seed.syntax == "sqlite":
            out.append(_sqlite_cells(seed.data, rng, "number", lambda: rng.choice(EDGE_CELLS)))
        else:
            out.append(_text_numbers(seed.data, rng, k))
    return out


def _json_numbers(data: bytes, rng: random.Random, k: int) -> Variant:
    doc = json.loads(data)
    numbers = [p for p in _nodes(doc) if p and isinstance(_get(doc, p), int | float)
               and not isinstance(_get(doc, p), bool)]
    tokens = []
    for i, path in enumerate(rng.sample(numbers, min(len(numbers), rng.randint(1, 4)))):
        token = EDGE_TOKENS[(k + i) % len(EDGE_TOKENS)] if i == 0 else rng.choice(EDGE_TOKENS)
        _get(doc, path[:-1])[path[-1]] = f"\x00edge{i}\x00"
        tokens.append(token)
    text = json.dumps(doc).encode()
    for i, token in enumerate(tokens):
        text = text.replace(json.dumps(f"\x00edge{i}\x00").encode(), token.encode())
    return Variant(f"edge numbers {', '.join(t[:12] for t in tokens)}", text)


def _text_numbers(data: bytes, rng: random.Random, k: int) -> Variant:
    found = list(_NUMBER.finditer(data))
    if not found:
        return Variant("edge numbers (none in the seed)", data)
    chosen = sorted(rng.sample(found, min(len(found), rng.randint(1, 3))), key=lambda m: m.start())
    tokens = [EDGE_TOKENS[(k + i) % len(EDGE_TOKENS)] if i == 0 else rng.choice(EDGE_TOKENS)
              for i in range(len(chosen))]
    out, at = bytearray(), 0
    for match, token in zip(chosen, tokens, strict=True):
        out += data[at:match.start()] + token.encode()
        at = match.end()
    return Variant(f"edge numbers {', '.join(t[:12] for t in tokens)}", bytes(out + data[at:]))


def _wire_lists(fields: list) -> list[list]:
    out = [fields]
    for _, _, value in fields:
        if isinstance(value, list):
            out += _wire_lists(value)
    return out


def _wire_numbers(data: bytes, rng: random.Random) -> Variant:
    root = parse_wire(data)
    numeric = [(fields, i) for fields in _wire_lists(root) for i, f in enumerate(fields)
               if f[1] in (0, 1, 5)]
    labels = []
    for fields, i in rng.sample(numeric, min(len(numeric), rng.randint(1, 4))):
        number, wire, _ = fields[i]
        if wire == 0:
            value: Any = rng.choice(EDGE_VARINTS)
            labels.append(str(value))
        elif wire == 1:
            double = rng.choice(EDGE_DOUBLES)
            value = struct.pack("<d", double) if rng.random() < 0.5 else struct.pack(
                "<q", rng.choice((2**63 - 1, -2**63, -1)))
            labels.append(repr(double))
        else:
            value = struct.pack("<f", rng.choice((math.nan, math.inf, -1.0)))
            labels.append("float32")
        fields[i] = (number, wire, value)
    return Variant(f"edge numbers {', '.join(labels)}", write_wire(root))


def _plain(data: bytes) -> Any:
    from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler

    return PlainUnpickler(io.BytesIO(data)).load()


def _pickle_leaves(data: bytes, rng: random.Random, replace: Callable[[Any], Any],
                   kinds: tuple[type, ...], label: str) -> Variant:
    doc = _plain(data)
    leaves = [p for p in _nodes(doc) if p and isinstance(_get(doc, p), kinds)
              and not isinstance(_get(doc, p), bool)]
    for path in rng.sample(leaves, min(len(leaves), rng.randint(1, 4))):
        _get(doc, path[:-1])[path[-1]] = replace(_get(doc, path))
    return Variant(label, pickle.dumps(doc, protocol=4))


def _sqlite_edit(data: bytes, edit: Callable[[sqlite3.Connection], str]) -> tuple[str, bytes]:
    """``edit`` applied to a copy of the database ``data``; (its label, the new bytes)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "db"
        path.write_bytes(data)
        connection = sqlite3.connect(path)
        try:
            label = edit(connection)
            connection.commit()
        finally:
            connection.close()
        return label, path.read_bytes()


def _columns(connection: sqlite3.Connection, want: str) -> list[tuple[str, str]]:
    """(table, column) whose cells hold ``want`` ("number" or "text") in some row."""
    found = []
    for (table,) in connection.execute("select name from sqlite_master where type = 'table' "
                                       "and name not like 'sqlite_%'"):
        columns = [row[1] for row in connection.execute(f'pragma table_info("{table}")')]
        for column in columns:
            kinds = ("integer", "real") if want == "number" else ("text",)
            if connection.execute(f'select 1 from "{table}" where typeof("{column}") in '
                                  f'({",".join(repr(k) for k in kinds)}) limit 1').fetchone():
                found.append((table, column))
    return found


def _sqlite_cells(data: bytes, rng: random.Random, want: str,
                  value: Callable[[], Any]) -> Variant:
    def edit(connection: sqlite3.Connection) -> str:
        labels = []
        cells = _columns(connection, want)
        for table, column in rng.sample(cells, min(len(cells), rng.randint(1, 4))):
            new = value()
            rowid = connection.execute(f'select rowid from "{table}" order by random() '
                                       'limit 1').fetchone()
            if rowid is None:
                continue
            # (a unique or foreign-key column may refuse the value: another cell then)
            # (bytes go in as text that is not UTF-8, or as a blob where text belongs)
            cast = "cast(? as text)" if isinstance(new, bytes) and rng.random() < 0.5 else "?"
            with contextlib.suppress(sqlite3.Error):
                connection.execute(f'update "{table}" set "{column}" = {cast} where rowid = ?',
                                   (new, rowid[0]))
                labels.append(f"{table}.{column}={str(new)[:12]!s}")
        return ", ".join(labels)
    label, changed = _sqlite_edit(data, edit)
    return Variant(f"{want} cells {label}", changed)


# -- encodings -----------------------------------------------------------------------------

BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xfe\xff", b"\xc0\x80")
DRESSES = ("utf-16-le BOM", "utf-16-be BOM", "utf-8 BOM", "latin-1", "bad bytes in a string",
           "NUL in a string")


def encodings(seed: Seed, rng: random.Random, count: int) -> list[Variant]:
    """The seed re-encoded, or invalid UTF-8 and NUL bytes put inside its strings."""
    out = []
    for k in range(count):
        how = DRESSES[k % len(DRESSES)] if k < len(DRESSES) else rng.choice(DRESSES)
        if seed.syntax == "protobuf":
            out.append(_wire_strings(seed.data, rng))
        elif seed.syntax == "pickle":
            out.append(_pickle_leaves(seed.data, rng, lambda v: _bad_string(v, rng), (str,),
                                      "bad strings"))
        elif seed.syntax == "sqlite":
            out.append(_sqlite_cells(seed.data, rng, "text", lambda: _bad_text(rng)))
        else:
            out.append(Variant(how, _dress(seed.data, how, rng)))
    return out


def _dress(data: bytes, how: str, rng: random.Random) -> bytes:
    text = data.decode("utf-8", "replace")
    if how == "utf-16-le BOM":
        return b"\xff\xfe" + text.encode("utf-16-le", "surrogatepass")
    if how == "utf-16-be BOM":
        return b"\xfe\xff" + text.encode("utf-16-be", "surrogatepass")
    if how == "utf-8 BOM":
        return b"\xef\xbb\xbf" + data
    if how == "latin-1":   # an accented name first, so that the encoding shows
        quote = data.find(b'"')
        at = quote + 1 if quote >= 0 else 0
        return (data[:at].decode("utf-8", "replace") + "caf\u00e9 " +
                data[at:].decode("utf-8", "replace")).encode("latin-1", "replace")
    bad = b"\x00" if how == "NUL in a string" else rng.choice(BAD_BYTES)
    spots = [m.end() for m in re.finditer(rb'"[A-Za-z_]|[A-Za-z]{3}', data)] or [len(data) // 2]
    out = data
    for at in sorted(rng.sample(spots, min(len(spots), 3)), reverse=True):
        out = out[:at] + bad + out[at:]
    return out


def _wire_strings(data: bytes, rng: random.Random) -> Variant:
    root = parse_wire(data)
    strings = [(fields, i) for fields in _wire_lists(root) for i, f in enumerate(fields)
               if f[1] == 2 and isinstance(f[2], bytes)]
    for fields, i in rng.sample(strings, min(len(strings), rng.randint(1, 4))):
        number, _, value = fields[i]
        at = rng.randrange(len(value) + 1)
        fields[i] = (number, 2, value[:at] + rng.choice(BAD_BYTES) + value[at:])
    return Variant("bad bytes in protobuf strings", write_wire(root))


def _bad_string(value: str, rng: random.Random) -> Any:
    return rng.choice((value + "\ud800", "\x00" + value, value.encode("latin-1", "replace")
                       + b"\xff", value + "\udcff\x00"))


def _bad_text(rng: random.Random) -> Any:
    return rng.choice((b"\xff\xfe bad", b"name\x00hidden", "\ud800".encode("utf-8",
                       "surrogatepass"), b"\xc3"))


# -- depth -----------------------------------------------------------------------------------

DEPTHS = (1_000, 10_000, 100_000)


def depth(seed: Seed, rng: random.Random, count: int) -> list[Variant]:
    """A value nested thousands of levels deep, in the seed's own syntax."""
    out = []
    for k in range(count):
        levels = DEPTHS[k % len(DEPTHS)]
        if seed.syntax == "json":
            out.append(_deep_json(seed.data, rng, levels))
        elif seed.syntax == "protobuf":
            out.append(_deep_wire(seed.data, rng, levels))
        elif seed.syntax == "pickle":
            out.append(_deep_pickle(seed.data, rng, levels))
        elif seed.syntax == "svg":
            at = seed.data.rfind(b"</svg>")
            at = at if at >= 0 else len(seed.data)
            nested = b"<g>" * levels + b'<rect x="1" y="1" width="1" height="1"/>' + \
                b"</g>" * levels
            out.append(Variant(f"{levels} nested groups", seed.data[:at] + nested +
                               seed.data[at:]))
        else:
            out.append(_deep_text(seed.data, rng, levels))
    return out


def _deep_json(data: bytes, rng: random.Random, levels: int) -> Variant:
    doc = json.loads(data)
    paths = [p for p in _nodes(doc) if p]
    path = rng.choice(paths)
    _get(doc, path[:-1])[path[-1]] = "\x00deep\x00"
    opener, closer = rng.choice(((b"[", b"]"), (b'{"a":', b"}")))
    return Variant(f"{levels} nested {opener.decode()[0]}", json.dumps(doc).encode().replace(
        b'"\\u0000deep\\u0000"', opener * levels + b"1" + closer * levels))


def _deep_wire(data: bytes, rng: random.Random, levels: int) -> Variant:
    """A length-delimited field that holds a message replaced by itself nested ``levels``
    times under its own field number (a recursive schema reaches the recursion)."""
    root = parse_wire(data)
    messages = [(fields, i) for fields in _wire_lists(root) for i, f in enumerate(fields)
                if f[1] == 2 and isinstance(f[2], list)]
    if not messages:
        return Variant("no nested message in the seed", data)
    fields, i = rng.choice(messages)
    number = fields[i][0]
    tag = bytes(_varint(number << 3 | 2))
    pieces, size = [], 0   # innermost first: each piece's length covers the ones inside it
    for _ in range(levels):
        pieces.append(tag + bytes(_varint(size)))
        size += len(pieces[-1])
    fields[i] = (number, 2, b"".join(reversed(pieces)))
    return Variant(f"field {number} nested {levels} deep", write_wire(root))


def _varint(value: int) -> bytearray:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return out


def _deep_pickle(data: bytes, rng: random.Random, levels: int) -> Variant:
    """A value replaced by a list nested ``levels`` deep, written as opcodes (EMPTY_LIST n
    times, APPEND n - 1 times): ``pickle.dumps`` itself would recurse once per level."""
    doc = _plain(data)
    path = rng.choice([p for p in _nodes(doc) if p])
    marker = "\x00deep\x00"
    _get(doc, path[:-1])[path[-1]] = marker
    body = pickle.dumps(doc, protocol=2)
    opcode = b"X" + struct.pack("<I", len(marker.encode())) + marker.encode()
    deep = b"]" * levels + b"a" * (levels - 1)
    return Variant(f"{levels} nested lists", body.replace(opcode, deep, 1))


def _deep_text(data: bytes, rng: random.Random, levels: int) -> Variant:
    """A row repeated as a chain, each copy indented one level more (up to 1,000: the input
    grows with the square of the depth), and ``levels`` nested brackets."""
    lines = data.split(b"\n")
    rows = [i for i, line in enumerate(lines) if line.strip()]
    i = rng.choice(rows)
    row = lines[i].lstrip()
    indents = min(levels, 1_000)
    chain = [b"  " * (k + 1) + row for k in range(indents)]
    brackets = b"(" * levels + b"x" + b")" * levels
    return Variant(f"row indented {indents} levels, {levels} brackets",
                   b"\n".join(lines[:i + 1] + chain + [brackets] + lines[i + 1:]))


# -- amplification ---------------------------------------------------------------------------

AMPLIFIED = 4 << 20     # bytes a few-KB input stands for
LIMIT = "1M"            # the --max-bytes the repeated ones run under (a quarter of it)


def amplification(seed: Seed, rng: random.Random, count: int) -> list[Variant]:
    """Small inputs that stand for much more: a gzip of the seed repeated past the limit,
    a gzip whose one string is tens of MB, references repeated (pickle memo DAGs), a
    SQLite column generated on read."""
    makers: list[Callable[[], Variant]] = [
        lambda: _gzip_repeated(seed), lambda: _gzip_long_string(seed, rng)]
    if seed.syntax == "pickle":
        makers.append(lambda: _pickle_dag(seed.data, rng))
    if seed.syntax == "sqlite":
        makers.append(lambda: _sqlite_generated(seed.data, rng))
    return [makers[k % len(makers)]() for k in range(count)]


def _gz(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(data)
    return buffer.getvalue()


def _gzip_repeated(seed: Seed) -> Variant:
    times = AMPLIFIED // max(len(seed.data), 1) + 1
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as out:
        for _ in range(times):
            out.write(seed.data)
    return Variant(f"gzip of the seed x{times}", buffer.getvalue(), name=seed.name + ".gz",
                   args=("--max-bytes", LIMIT))


def _gzip_long_string(seed: Seed, rng: random.Random) -> Variant:
    """The seed with its first string (or the middle of a text) grown to ``AMPLIFIED``
    bytes, gzipped; a limit above the whole, so the single string is what must be bounded."""
    long = b"x" * (AMPLIFIED // 2)
    if seed.syntax == "json":
        at = seed.data.find(b'"', seed.data.find(b":")) + 1
    elif seed.syntax in ("protobuf", "pickle", "sqlite"):
        return _gzip_repeated(seed)   # (a length prefix or page to rewrite: see _wire_long)
    else:
        at = seed.data.find(b"\n", len(seed.data) // 2) + 1
    data = seed.data[:at] + long + seed.data[at:]
    return Variant(f"gzip with a {len(long) >> 20} MiB string", _gz(data),
                   name=seed.name + ".gz", args=("--max-bytes", "8M"))


def _pickle_dag(data: bytes, rng: random.Random) -> Variant:
    """A leaf replaced by a DAG of shared lists 40 levels deep (2**40 items by reference)."""
    doc = _plain(data)
    leaves = [p for p in _nodes(doc) if p and not isinstance(_get(doc, p), dict | list)]
    path = rng.choice(leaves)
    node: Any = _get(doc, path)
    for _ in range(40):
        node = [node, node]
    _get(doc, path[:-1])[path[-1]] = node
    return Variant("pickle memo DAG 2**40", pickle.dumps(doc, protocol=4))


def _sqlite_generated(data: bytes, rng: random.Random) -> Variant:
    """A column computed on every read: 16 MB per cell."""
    def edit(connection: sqlite3.Connection) -> str:
        tables = [t for (t,) in connection.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
            if connection.execute(f'select count(*) from "{t}"').fetchone()[0] > 2]
        table = rng.choice(tables)
        connection.execute(f'alter table "{table}" add column bomb text generated always as '
                           "(printf('%.*c', 16000000, 'x')) virtual")
        return table
    table, changed = _sqlite_edit(data, edit)
    return Variant(f"generated 16 MB column in {table}", changed)


# -- cut files -------------------------------------------------------------------------------

def cut(seed: Seed, rng: random.Random, count: int) -> list[Variant]:
    """The seed cut at ``count`` offsets spread over the whole file (jittered)."""
    size = len(seed.data)
    offsets = sorted({min(size - 1, max(1, (size * (2 * k + 1)) // (2 * count)
                                        + rng.randint(-3, 3))) for k in range(count)})
    return [Variant(f"cut at {at} of {size}", seed.data[:at]) for at in offsets]


# -- special files ---------------------------------------------------------------------------

def special(seed: Seed, rng: random.Random, count: int) -> list[Variant]:
    """The ways a path reaches a reader that are not a regular file."""
    makers = [("fifo with a writer", _fifo_fed(seed.data)), ("fifo, no writer", _fifo_alone),
              ("directory", _directory), ("/dev/zero", lambda folder: "/dev/zero"),
              ("empty file", _empty), ("symlink loop", _symlink_loop)]
    chosen = makers if count >= len(makers) else rng.sample(makers, count)
    return [Variant(label, make=make, args=("--max-bytes", "1M") if label == "/dev/zero"
                    else ()) for label, make in chosen]


def _fifo_fed(data: bytes) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        path = folder / f"fifo{len(os.listdir(folder))}"
        os.mkfifo(path)

        def feed() -> None:
            with contextlib.suppress(OSError), open(path, "wb") as out:
                out.write(data)
        threading.Thread(target=feed, daemon=True).start()
        return str(path)
    return make


def _fifo_alone(folder: Path) -> str:
    path = folder / "lonely"
    if not path.exists():
        os.mkfifo(path)
    return str(path)


def _directory(folder: Path) -> str:
    path = folder / "a_folder"
    path.mkdir(exist_ok=True)
    return str(path)


def _empty(folder: Path) -> str:
    path = folder / "empty"
    path.write_bytes(b"")
    return str(path)


def _symlink_loop(folder: Path) -> str:
    a, b = folder / "loop_a", folder / "loop_b"
    if not a.is_symlink():
        a.symlink_to(b)
        b.symlink_to(a)
    return str(a)


# -- scaling ---------------------------------------------------------------------------------

def scaled(seed: Seed, times: int) -> bytes:
    """The seed's content repeated ``times`` times, in its own syntax: the longest list of a
    JSON or pickle document, every row of a SQLite table, a protobuf message concatenated
    with itself (repeated fields append), the body of an SVG or CSV, a whole text."""
    if times == 1:
        return seed.data
    if seed.syntax in ("json", "pickle"):
        doc = json.loads(seed.data) if seed.syntax == "json" else _plain(seed.data)
        _repeat_longest(doc, times)
        return json.dumps(doc).encode() if seed.syntax == "json" else pickle.dumps(doc, 4)
    if seed.syntax == "protobuf":
        return seed.data * times
    if seed.syntax == "sqlite":
        return _sqlite_edit(seed.data, lambda c: _repeat_rows(c, times))[1]
    if seed.syntax == "csv":
        head, _, body = seed.data.partition(b"\n")
        return head + b"\n" + body * times
    if seed.syntax == "svg":
        start = seed.data.find(b">", seed.data.find(b"<svg")) + 1
        end = seed.data.rfind(b"</svg>")
        return seed.data[:start] + seed.data[start:end] * times + seed.data[end:]
    return seed.data * times


def _repeat_longest(doc: Any, times: int) -> None:
    """The list or mapping with the most items, its items ``times`` times over (copies, not
    shared references: a pickle would keep one copy; a mapping's new keys get a suffix)."""
    containers = [p for p in _nodes(doc) if isinstance(_get(doc, p), list | dict)]
    items = _get(doc, max(containers, key=lambda p: len(_get(doc, p))))
    if isinstance(items, list):
        items[:] = items + [copy.deepcopy(item) for _ in range(times - 1) for item in items]
    else:
        for key, value in list(items.items()):
            for k in range(1, times):
                items[f"{key}~{k}"] = copy.deepcopy(value)


def _repeat_rows(connection: sqlite3.Connection, times: int) -> str:
    for (table,) in list(connection.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")):
        info = list(connection.execute(f'pragma table_info("{table}")'))
        key = [row[1] for row in info if row[5] == 1 and row[2].upper() == "INTEGER"]
        columns = ", ".join(f'"{row[1]}"' for row in info)
        # a rowid-alias key gets new numbers; a unique column repeats as far as it may
        chosen = ", ".join("NULL" if row[1] in key else f'"{row[1]}"' for row in info)
        rows = connection.execute(f'select max(rowid) from "{table}"').fetchone()[0] or 0
        for _ in range(times - 1):
            with contextlib.suppress(sqlite3.Error):
                connection.execute(f'insert or ignore into "{table}" ({columns}) select '
                                   f'{chosen} from "{table}" where rowid <= {rows}')
    return ""


FAMILIES: dict[str, Callable[[Seed, random.Random, int], list[Variant]]] = {
    "edge-numbers": edge_numbers, "encodings": encodings, "depth": depth,
    "amplification": amplification, "cut": cut, "special": special,
}
# families that have nothing to edit in a syntax (a SQLite file has no nesting of its own)
NOT_APPLICABLE = {("depth", "sqlite"), ("depth", "csv")}


def applies(family: str, syntax: str) -> bool:
    return (family, syntax) not in NOT_APPLICABLE


def variants(seed: Seed, family: str, count: int, campaign: int = 0) -> list[Variant]:
    """``count`` variants of ``family`` for ``seed``, the same for the same arguments."""
    rng = random.Random(f"{campaign}:{seed.reader}:{seed.name}:{family}")
    return FAMILIES[family](seed, rng, count)


def iter_cells() -> Iterator[tuple[str, str]]:
    """(reader, family) for every registered reader with a seed and every family that
    applies to its syntax."""
    seen = set()
    for seed in registry_seeds():
        for family in FAMILIES:
            if applies(family, seed.syntax) and (seed.reader, family) not in seen:
                seen.add((seed.reader, family))
                yield seed.reader, family


# -- the fuzzer's use of the families -------------------------------------------------------

FUZZED = ("edge-numbers", "encodings", "depth", "cut")   # (amplification and special files:
# the matrix runs them with their own limits; a campaign's worker has one byte limit)


def as_mutator(family: str, kind: str) -> Mutator:
    """``family`` as a fuzz mutator of inputs of ``kind`` (:mod:`.mutators`): one of 1-3
    variants of the input; byte edits where the input does not parse as ``kind``."""
    def mutator(data: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
        try:
            made = FAMILIES[family](Seed("", kind, "", data), rng, rng.randint(1, 3))
        except Exception:  # noqa: BLE001 - a seed of another shape: plain byte edits
            return byte_edit(data, rng, pool)
        return made[-1].data if made and made[-1].make is None else byte_edit(data, rng, pool)
    mutator.__name__ = family.replace("-", "_")
    return mutator


@functools.cache
def family_mutators(kind: str) -> list[tuple[Mutator, int]]:
    """The families as weighted mutators of ``kind`` (one each), those of
    :data:`.mutators.MUTATORS` already has left out."""
    have = {m.__name__ for m, _ in MUTATORS.get(kind, [])}
    return [(as_mutator(family, kind), 1) for family in FUZZED
            if applies(family, kind) and family.replace("-", "_") not in have]


if __name__ == "__main__":   # python -m benchmarks.fuzz.families: list the cells
    for reader, family in iter_cells():
        print(reader, family, file=sys.stdout)
