"""The JSON text of every ``--json`` output and manifest: orjson, with integers of any size.

A sum of nanoseconds over a trace with absurd times can pass 2^64, which orjson refuses;
JSON itself has no limit, so such an integer is written exactly, as its digits.
"""

from __future__ import annotations

from typing import Any

_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64


def json_text(data: Any) -> bytes:
    """``data`` as indented JSON text (UTF-8 bytes, no final newline).

    >>> json_text({"total_ns": 45_499_999_999_983_819_622, "rows": [1, True]})
    b'{\\n  "total_ns": 45499999999983819622,\\n  "rows": [\\n    1,\\n    true\\n  ]\\n}'
    """
    import orjson  # (here: the command line's modules import this one at start)

    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2)
    except TypeError as exc:
        if "64-bit" not in str(exc):
            raise
        return orjson.dumps(_exact_integers(data), option=orjson.OPT_INDENT_2)


def _exact_integers(value: Any) -> Any:
    """``value`` with each integer orjson cannot write as raw JSON digits."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if _INT64_MIN <= value < _UINT64_END:
            return value
        import orjson

        return orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {k: _exact_integers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exact_integers(v) for v in value]
    return value
