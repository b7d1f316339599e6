"""The JSON text of each value of a column, from one ``orjson.dumps`` of the whole column.

Dumping values one by one costs a call each and, worse, each result keeps the few-KiB
buffer orjson allocated for it: holding 64 K of them (a batch of shapes or dtypes lists)
costs hundreds of MB. One dump of the column cut at its top-level commas (found with
numpy: commas outside strings at depth 1, made NULs for ``bytes.split``) gives the same
texts, each exactly sized.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

_SPECIAL = np.zeros(256, dtype=bool)
_SPECIAL[list(b'"\\[]{},')] = True
QUOTE, BACKSLASH, COMMA = ord('"'), ord("\\"), ord(",")
_OPEN, _CLOSE = np.zeros(256, dtype=np.int8), np.zeros(256, dtype=np.int8)
_OPEN[list(b"[{")] = 1
_CLOSE[list(b"]}")] = 1


def json_texts(values: list[Any], option: int = 0, default: Any = None,
               prefix: bytes = b"") -> list[bytes]:
    """``[prefix + orjson.dumps(v, default=default, option=option) for v in values]``, from
    one dump.

    Raises what ``orjson.dumps`` raises for the column (TypeError for an int over 64 bits).

    >>> json_texts([[1, [2, 3]], {"a,]": "x\\\\\\"y"}, "s", None])
    [b'[1,[2,3]]', b'{"a,]":"x\\\\\\\\\\\\"y"}', b'"s"', b'null']
    """
    if not values:
        return []
    blob = orjson.dumps(values, default=default, option=option)
    data = np.frombuffer(blob, dtype=np.uint8)
    at = np.flatnonzero(_SPECIAL[data])
    chars = data[at]
    quote = chars == QUOTE
    if BACKSLASH in chars:   # a quote after an odd run of backslashes is inside a string
        position = np.arange(len(data))
        last_plain = np.maximum.accumulate(np.where(data == BACKSLASH, -1, position))
        quotes = at[quote]
        run = quotes - 1 - last_plain[quotes - 1]
        quote[np.flatnonzero(quote)[run % 2 == 1]] = False
    outside = (np.cumsum(quote) & 1) == 0   # (a closing quote counts as outside: harmless)
    depth = np.cumsum((_OPEN[chars] - _CLOSE[chars]) * outside)
    cut = data.copy()
    cut[at[(chars == COMMA) & outside & (depth == 1)]] = 0   # no NUL in orjson's output
    return split_prefixed(cut[1:-1].tobytes(), b"\0", prefix)


def split_prefixed(text: bytes, separator: bytes, prefix: bytes) -> list[bytes]:
    """``text`` cut at ``separator``, ``prefix`` before each piece (two C-level passes).

    >>> split_prefixed(b"1,2", b",", b"x="), split_prefixed(b"", b",", b"")
    ([b'x=1', b'x=2'], [b''])
    """
    if prefix:
        text = prefix + text.replace(separator, b"\0" + prefix)
        separator = b"\0"
    return text.split(separator)
