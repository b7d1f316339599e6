"""The checked-in JSON Schemas say what the pydantic models say, and nothing else is there.

The comparison is on meaning, not bytes: pydantic releases differ in cosmetic keys (titles
derived from field names, key order), and a patch release of pydantic must not fail CI.
Regenerate the files with ``python -m traceconv.schemas``.
"""

from __future__ import annotations

from typing import Any

import orjson

from traceconv import schemas

COSMETIC = {"title"}   # derived from class and field names by pydantic; may change with it


def meaning(schema: Any) -> Any:
    """``schema`` without cosmetic keys, with order-free lists (``required``, ``enum``) sorted.

    >>> meaning({"title": "X", "required": ["b", "a"], "properties": {"a": {"title": "A"}}})
    {'required': ['a', 'b'], 'properties': {'a': {}}}
    """
    if isinstance(schema, dict):
        return {key: sorted(value, key=repr) if key in ("required", "enum") else meaning(value)
                for key, value in schema.items() if key not in COSMETIC
                or not isinstance(value, str)}
    if isinstance(schema, list):
        return [meaning(item) for item in schema]
    return schema


def test_schema_files_are_current():
    expected = schemas.generated()
    stale = [name for name, data in expected.items()
             if not (schemas.SCHEMA_DIR / name).is_file()
             or meaning(orjson.loads((schemas.SCHEMA_DIR / name).read_bytes()))
             != meaning(orjson.loads(data))]
    assert not stale, f"regenerate with `python -m traceconv.schemas`: {stale}"


def test_no_orphan_schema_files():
    """A schema whose model was renamed or removed must not linger in schemas/."""
    on_disk = {path.name for path in schemas.SCHEMA_DIR.glob("*.json")}
    orphans = sorted(on_disk - set(schemas.generated()))
    assert not orphans, f"no model generates {orphans}: delete them or declare the model"
