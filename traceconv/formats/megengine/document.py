"""Parse and validate a MegEngine JSON document into its pydantic model, with located errors."""

from __future__ import annotations

from itertools import islice
from typing import TypeVar

import msgspec
import orjson
from pydantic import BaseModel, ValidationError

from ...errors import InputError, json_path
from ...io import Source

M = TypeVar("M", bound=BaseModel)
S = TypeVar("S", bound=msgspec.Struct)

# records per mapping field that pydantic validates when the decoder read the document (it
# checks each record's fields by type): a schema that parted from its records shows at once
SAMPLE = 16


def load_json(source: Source) -> object:
    """The decoded JSON value of ``source``; a syntax error names its line.

    >>> from traceconv.io import Source
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write('{"a":\\n  [1, 2')
    >>> try:
    ...     load_json(Source(f.name))
    ... except InputError as exc:
    ...     exc.location
    2
    >>> os.unlink(f.name)
    """
    try:
        return orjson.loads(source.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=source.name,
                         location=exc.lineno) from None


def validate(model: type[M], value: object, source: Source) -> M:
    """``model.model_validate(value)``, turning the first validation error into an InputError."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(f"{first['msg']}{more}", file=source.name,
                         location=json_path(first["loc"])) from None


def load_records(source: Source, records: type[S], model: type[BaseModel]) -> S:
    """``source`` decoded into ``records`` (msgspec structs with ``model``'s fields: no
    dict or model object per record, for documents of 10^5 records), a sample of each
    mapping field validated by ``model`` too. A document either refuses is read as
    :func:`load_json` and :func:`validate` read it, so its error is theirs.

    >>> from traceconv.formats.megengine.schema import StaticMemoryInfo, \\
    ...     StaticMemoryInfoRecords
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write('{"opr": {"0": {"id": 0, "name": "mm"}}, "chunk": {}}')
    >>> try:
    ...     load_records(Source(f.name), StaticMemoryInfoRecords, StaticMemoryInfo)
    ... except InputError as exc:
    ...     exc.location, str(exc).split(": ")[-1]
    ('$.opr.0.id', 'Input should be a valid string')
    >>> os.unlink(f.name)
    """
    try:
        doc = msgspec.json.decode(source.read_bytes(), type=records)
        model.model_validate({name: _sample(getattr(doc, name))
                              for name in records.__struct_fields__})
        return doc
    except (msgspec.DecodeError, ValidationError):
        value = load_json(source)
        validate(model, value, source)
        return msgspec.convert(value, records)


def _sample(value: object) -> object:
    """The first :data:`SAMPLE` records of a mapping field as plain dicts (else ``value``)."""
    if not isinstance(value, dict):
        return value
    return {key: msgspec.structs.asdict(record) if isinstance(record, msgspec.Struct)
            else record for key, record in islice(value.items(), SAMPLE)}
