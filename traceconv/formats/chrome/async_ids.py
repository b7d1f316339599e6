"""The id of a Chrome async event (``b``/``e``/``n``), as trace_processor's JSON importer
keys it: the first of ``id``, ``id2.global`` and ``id2.local`` that holds an integer (of
int64) or a text not empty. An integer names one object whether written as ``id`` or
``id2.global`` (``"id": 5`` and ``"id2": {"global": 5}``); a text of ``id`` and one of
``id2.global`` are two (trace_processor hashes them apart); ``id2.local`` is an id space
in the event's process (see :mod:`traceconv.formats.async_tracks` for where its object
goes). Ids of other values (a fraction, a boolean, an object, an integer past int64):
trace_processor drops the event; traceconv keeps it, its object named by the id's JSON
text, and the reader counts it (:func:`unusable`).
"""

from __future__ import annotations

import json
from typing import Any

from ...numbers import INT64_MAX, INT64_MIN
from ..async_tracks import LOCAL, ObjectId

UNUSABLE = "unusable"   # the id space of ids trace_processor cannot read


def _usable(value: Any) -> bool:
    if type(value) is int:
        return INT64_MIN <= value <= INT64_MAX
    return type(value) is str and value != ""


def async_id(event: dict) -> ObjectId | None:
    """The id of an async event; None when it has none (trace_processor drops such
    events).

    >>> async_id({"id": "0x2"}), async_id({"id2": {"local": "0xa6"}})
    (ObjectId(space='id', value='0x2', fields={'id': '0x2'}), \
ObjectId(space='local', value='0xa6', fields={'id2': {'local': '0xa6'}}))
    >>> async_id({"id": 5, "id2": {"local": "0x1"}}).space, async_id({"id": ""})
    ('id', None)
    >>> async_id({"id2": {"global": 5}}).value == async_id({"id": 5}).value
    True
    >>> async_id({"id": 1.5, "id2": {"global": "a"}}), async_id({"id": True})
    (ObjectId(space='global', value='a', fields={'id': 1.5, 'id2': {'global': 'a'}}), \
ObjectId(space='unusable', value='true', fields={'id': True}))
    """
    own = event.get("id")
    if _usable(own):   # (the common case, quickly)
        return ObjectId("id", own, {"id": own})
    two = event.get("id2")
    two = two if isinstance(two, dict) else {}
    written: list[tuple[str, Any]] = [("id", own), ("global", two.get("global")),
                                      (LOCAL, two.get(LOCAL))]
    passed_over = {} if own is None or own == "" else {"id": own}   # (kept in its args)
    for field, value in written:
        if _usable(value):
            space = LOCAL if field == LOCAL else "id" if type(value) is int else field
            return ObjectId(space, value, {"id": own} if field == "id"
                            else {**passed_over, "id2": two})
    for field, value in written:
        if value is not None and value != "":
            return ObjectId(UNUSABLE, json.dumps(value, sort_keys=True, default=str),
                            {"id": own} if field == "id" else {"id2": two})
    return None


def unusable(oid: ObjectId | None) -> bool:
    """Whether ``oid`` is an id trace_processor cannot read (its event dropped there).

    >>> unusable(async_id({"id": 0.5})), unusable(async_id({"id": 1}))
    (True, False)
    """
    return oid is not None and oid.space == UNUSABLE
