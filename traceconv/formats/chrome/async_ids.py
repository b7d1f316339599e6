"""The id of a Chrome async event (``b``/``e``/``n``), as trace_processor's JSON importer
keys it: ``id`` (it wins), ``id2.global`` and ``id2.local`` are three id spaces, the first
two across the whole trace, ``id2.local`` in the event's process (see
:mod:`traceconv.formats.async_tracks` for where its object goes).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..async_tracks import LOCAL, ObjectId


def _id_key(value: Any) -> Any:
    """An id as trace_processor tells ids apart: by type and value (``"5"`` and ``5`` are
    two ids, as are ``"0x2"`` and ``2``)."""
    return value if isinstance(value, str | int | float) else orjson.dumps(value).decode()


def async_id(event: dict) -> ObjectId | None:
    """The id of an async event; None when it has none (trace_processor drops such
    events).

    >>> async_id({"id": "0x2"}), async_id({"id2": {"local": "0xa6"}})
    (ObjectId(space='id', value='0x2', fields={'id': '0x2'}), \
ObjectId(space='local', value='0xa6', fields={'id2': {'local': '0xa6'}}))
    >>> async_id({"id": 5, "id2": {"local": "0x1"}}).space, async_id({"id": ""})
    ('id', None)
    """
    own = event.get("id")
    if own is not None and own != "":
        return ObjectId("id", _id_key(own), {"id": own})
    two = event.get("id2")
    if isinstance(two, dict):
        for scope in ("global", LOCAL):
            value = two.get(scope)
            if value is not None and value != "":
                return ObjectId(scope, _id_key(value), {"id2": two})
    return None
