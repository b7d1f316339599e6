"""Values as JSON holds them, for the records traceconv writes into a file to read back
(:mod:`.metadata_record`, :mod:`.stats_record`, :mod:`.block_record`, :mod:`.graph_record`).
"""

from __future__ import annotations

import math
from typing import Any

import orjson


def json_text(value: Any) -> bytes:
    """``value`` as JSON text, an integer beyond 64 bits (which a fuzzed input can give a
    pid or a rank) as its decimal text.

    >>> json_text({"pid": 2**70, "ok": [1, True]})
    b'{"pid":"1180591620717411303424","ok":[1,true]}'
    """
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(_within_64_bits(value))


def _within_64_bits(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -(1 << 63) <= value < 1 << 64 else str(value)
    if isinstance(value, list | tuple):
        return [_within_64_bits(v) for v in value]
    if isinstance(value, dict):
        return {k: _within_64_bits(v) for k, v in value.items()}
    return value




def jsonable(attributes: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``attributes`` that survive JSON (the others are left out).

    >>> jsonable({"a": 1, "b": {1, 2}})
    {'a': 1}
    """
    kept = {}
    for key, value in attributes.items():
        try:
            orjson.dumps(value)
        except TypeError:
            continue
        kept[str(key)] = value
    return kept


# Containers nested deeper than this are not held: orjson writes at most 255 levels, and a
# value from a hostile input may nest past Python's recursion limit.
JSON_DEPTH = 250


def holds_json(value: Any) -> bool:
    """Whether JSON holds ``value`` (nested lists, tuples and string-keyed dicts included,
    at most :data:`JSON_DEPTH` deep), walked without recursion.

    >>> holds_json([1, ("a", None)]), holds_json({1: 2}), holds_json(float("nan"))
    (True, False, False)
    >>> deep: list = []
    >>> for _ in range(5000): deep = [deep]
    >>> holds_json(deep)
    False
    """
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if item is None or isinstance(item, str | bool | int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
            continue
        if depth >= JSON_DEPTH:
            return False
        if isinstance(item, list | tuple):
            pending.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict) and all(isinstance(k, str) for k in item):
            pending.extend((v, depth + 1) for v in item.values())
        else:
            return False
    return True


def as_json(value: Any) -> Any:
    """``value`` (one :func:`holds_json` accepts) as JSON gives it back: tuples as lists.

    >>> as_json({"span": (1, 2), "k": [(3,)]})
    {'span': [1, 2], 'k': [[3]]}
    """
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value
