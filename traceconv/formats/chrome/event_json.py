"""JSON text for many events at once, without a dict per event.

The writer builds each event from pieces: constant text, the JSON of names and places
(one per distinct string or track), and columns of JSON values made in bulk: one
``orjson.dumps`` of a whole column of numbers cut at its commas, one dump per distinct
string, and a template per argument key set (``,"args":{"k1":`` v1 ``,"k2":`` v2 ``}``).
Every value is the text ``orjson.dumps`` gives it in a dict, so reading the file back
gives the same events as dumping one dict per event would; except for what Perfetto's
JSON importer would show wrong (±infinity, which orjson writes as null; an int beyond
int64, which the importer shows as a wrong real): there :func:`dumps` spells it as text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from itertools import compress, repeat
from typing import Any

import msgspec
import numpy as np
import orjson

from ...json_decode import any_value, lenient
from ...model.arg_groups import key_groups
from ...model.args import ArgsColumn
from ...numbers import beyond_int64
from ..json_texts import json_texts, split_prefixed

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
_EXACT = 1 << 53   # ns values below this are exact as float64: numpy may divide them
_PLAIN = frozenset((int, float, bool, type(None)))   # whose JSON text holds no comma
_CACHE_LIMIT = 1 << 18   # distinct string values kept encoded


# where an int beyond int64 may be in orjson's text: 19 digits in a row (floats are
# written with 17 at most); each text found is made again by dumps, which decides
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _fallback(value: Any) -> Any:
    """orjson cannot serialise it (an int over 64 bits, a set, an object): use its text."""
    return str(value)


def dumps(value: Any) -> bytes:
    """The JSON text of ``value``: ±infinity (which JSON cannot hold) as the text
    ``"Infinity"`` / ``"-Infinity"``, an int beyond int64 as the text of its digits, NaN as
    null, anything not JSON as its ``str``; a value nested too deep to write as a marker
    text.

    Why text: orjson writes infinity as null (the value lost), and ``1e999``, which
    ``JSON.parse`` reads as infinity, makes Perfetto's JSON importer drop the event's
    arguments from that one on; an int beyond int64 it shows as a wrong real (2**64 - 1 as
    -1.0, 2**64 as 0.0: trace_processor v52, no error, no stat). The texts show as written.

    >>> dumps({"a": [1, 2.5, None]}), dumps(2**63 - 1), dumps({1, 2}) in (b'"{1, 2}"', b'"{2, 1}"')
    (b'{"a":[1,2.5,null]}', b'9223372036854775807', True)
    >>> dumps([float("inf"), -float("inf"), float("nan"), 2**64 - 1, -2**63 - 1, 2**70])
    b'["Infinity","-Infinity",null,"18446744073709551615","-9223372036854775809","1180591620717411303424"]'
    """
    try:
        text = orjson.dumps(value, default=_fallback, option=_OPTIONS)
        # (null: what orjson writes of a non-finite float)
        if b"null" not in text and _LONG_DIGITS.search(text) is None:
            return text
    except TypeError:   # an int over 64 bits
        pass
    try:
        return orjson.dumps(_spelled(value), default=_fallback, option=_OPTIONS)
    except (TypeError, RecursionError):   # nested past orjson's 254 levels
        return orjson.dumps(f"<{type(value).__name__} nested too deep to write>")




def _spelled(value: Any) -> Any:
    """``value`` with its non-finite floats and ints beyond int64 (at any depth) as the
    texts :func:`dumps` writes of them."""
    if isinstance(value, float):
        if math.isfinite(value) or value != value:
            return value   # (NaN: orjson writes null)
        return "Infinity" if value > 0 else "-Infinity"
    if beyond_int64(value):
        return str(value)
    if isinstance(value, list | tuple):
        return [_spelled(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _spelled(item) for key, item in value.items()}
    return value


def value_texts(values: list[Any], prefix: bytes = b"",
                strings: dict[str, bytes] | None = None) -> list[bytes]:
    """``prefix`` and the JSON text of each value: numbers, booleans and nulls from one
    dump cut at its commas, strings once per distinct string (``strings``: a cache kept by
    the caller, for this prefix), anything else through
    :func:`~traceconv.formats.json_texts.json_texts`.

    >>> value_texts([1, 2.5, True, None]), value_texts(["a,b", "a,b"], b":")
    ([b'1', b'2.5', b'true', b'null'], [b':"a,b"', b':"a,b"'])
    >>> value_texts([[1, 2], {"a": 3}], b":")
    [b':[1,2]', b':{"a":3}']
    """
    if not values:
        return []
    kinds = set(map(type, values))
    if kinds <= _PLAIN:
        try:
            blob = orjson.dumps(values)
        except TypeError:   # an int over 64 bits
            pass
        else:
            texts = split_prefixed(blob[1:-1], b",", prefix)
            return _spelled_texts(values, texts, prefix) \
                if b"null" in blob or _LONG_DIGITS.search(blob) else texts
    elif kinds == {str}:
        cache = {} if strings is None else strings
        found = list(map(cache.get, values))
        if None in found:
            for i, text in enumerate(found):
                if text is None:
                    found[i] = cache[values[i]] = prefix + orjson.dumps(values[i])
        return found  # type: ignore[return-value]  # every None was filled
    try:
        texts = json_texts(values, option=_OPTIONS, default=_fallback, prefix=prefix)
    except TypeError:   # an int over 64 bits somewhere in the column
        return [prefix + dumps(value) for value in values]
    return _spelled_texts(values, texts, prefix)


def _spelled_texts(values: list[Any], texts: list[bytes], prefix: bytes) -> list[bytes]:
    """``texts`` with those that hold a null or 19 digits in a row made again by
    :func:`dumps` (a non-finite float orjson wrote as null, an int beyond int64).

    >>> value_texts([1.5, float("-inf"), None, [float("inf")], 2**64 - 1, 10**18], b":")
    [b':1.5', b':"-Infinity"', b':null', b':["Infinity"]', b':"18446744073709551615"', b':1000000000000000000']
    """
    return [prefix + dumps(value) if b"null" in text or _LONG_DIGITS.search(text) else text
            for value, text in zip(values, texts, strict=True)]


def microseconds(ns: np.ndarray, prefix: bytes = b"") -> list[bytes]:
    """``prefix`` and the µs text of integer ns values, as ``orjson.dumps(ns / 1000)``
    writes each one.

    >>> microseconds(np.array([0, 1500, 2_000_000_001, -7]))
    [b'0.0', b'1.5', b'2000000.001', b'-0.007']
    """
    if not len(ns):
        return []
    if int(np.abs(ns).max()) < _EXACT:
        return split_prefixed(orjson.dumps(ns / 1000, option=_OPTIONS)[1:-1], b",", prefix)
    return [prefix + orjson.dumps(v / 1000) for v in ns.tolist()]   # exact: big ints


def key_text(key: Any) -> bytes:
    """``"key":`` as orjson writes the key of a dict.

    >>> key_text("bytes"), key_text(7)
    (b'"bytes":', b'"7":')
    """
    return dumps({key: None})[1:-5]


# Where a number beyond a double or an int beyond int64 may be, in a text whose digits
# are all 0 and whose exponents are all e: an exponent of three digits or more, or 19
# digits in a row. Text matches too (an address 0x7f3e180): each text found is then
# decoded to be sure.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")
_MAYBE_UNSHOWABLE = (b"e000", b"e+000", b"0" * 19)
_STRICT_ARGS = msgspec.json.Decoder().decode
_DECODE_ARGS = lenient()


def _importable(texts: list[bytes]) -> list[bytes]:
    """Args texts as the source wrote them, except those holding a number beyond a double
    (``1e400``), where Perfetto's importer would drop the rest of the event's args, or an
    int beyond int64, which it would show wrong: those are decoded (the number is
    infinity, as ``JSON.parse`` reads it) and written as :func:`dumps` writes them. Found
    by C-level scans of all the texts at once (a translation and three finds), then a
    strict decode of each text a scan pointed at.

    >>> _importable([b'{"a": "0x7f3e180"}', b'{"b": 1.5E+400, "c": 2}', b'{"d": 18446744073709551615}'])
    [b'{"a": "0x7f3e180"}', b'{"b":"Infinity","c":2}', b'{"d":"18446744073709551615"}']
    """
    blob = b"\0".join(texts).translate(_DIGITS_AS_ZERO)
    found = []
    for needle in _MAYBE_UNSHOWABLE:
        at = blob.find(needle)
        while at >= 0:   # (one position per text is enough: on to the next text)
            found.append(at)
            end = blob.find(b"\0", at)
            at = -1 if end < 0 else blob.find(needle, end + 1)
    if not found:
        return texts
    ends = np.cumsum([len(text) + 1 for text in texts])
    out = list(texts)
    for k in np.unique(np.searchsorted(ends, found, "right")).tolist():
        try:
            value = _STRICT_ARGS(texts[k])
        except msgspec.ValidationError:   # (a number beyond a double, or too many digits)
            out[k] = dumps(_DECODE_ARGS(texts[k]))
            continue
        if any_value(value, beyond_int64):
            out[k] = dumps(value)
    return out


class ArgsText:
    """The end of the events of rows of an args column: ``,"args":{...}}``, or just ``}``
    for rows without args or with empty args (as a writer that skips falsy args does).

    Rows a reader kept as JSON text are copied as the source wrote them (one group);
    the others are written key set by key set, each value as ``orjson.dumps`` writes it.
    """

    def __init__(self, column: ArgsColumn) -> None:
        self.column = column
        self.strings: dict[bytes, dict[str, bytes]] = {}   # per key: its string values' text
        self.templates: dict[tuple[Any, ...], list[bytes]] = {}

    def groups(self, rows: np.ndarray) -> Iterator[tuple[np.ndarray, list[Any]]]:
        """Per key set among ``rows``: the positions in ``rows`` of its rows, and the
        pieces (iterables of per-row bytes) that end their events, to be joined per row
        (rows held as JSON text are decoded a batch at a time)."""
        if sum(map(len, self.strings.values())) > _CACHE_LIMIT:
            self.strings.clear()
        held, texts, empty = self.column.json_texts(rows)
        texts = _importable(texts)
        others = np.arange(len(rows))
        if len(held):
            others = np.delete(others, held)
            if empty.any():   # as {} held as a value: no "args" key
                yield held[empty], [repeat(b"}")]
                held, texts = held[~empty], list(compress(texts, (~empty).tolist()))
            yield held, [repeat(b',"args":'), texts, repeat(b"}")]   # copied as written
        for group in key_groups(self.column, rows[others]):
            positions, keys = others[group.positions], group.keys
            if not keys:   # no args, or empty ones: no "args" key
                yield positions, [repeat(b"}")]
                continue
            template = self.templates.get(keys)
            if template is None:
                template = self.templates[keys] = [
                    (b',"args":{' if j == 0 else b",") + key_text(key)
                    for j, key in enumerate(keys)]
            pieces: list[Any] = [
                value_texts(group.values(j), head, self.strings.setdefault(head, {}))
                for j, head in enumerate(template)]
            pieces.append(repeat(b"}}"))
            yield positions, pieces

