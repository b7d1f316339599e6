"""Decode a MegEngine JSON document into its records (:func:`decode_records`), or parse and
validate it into its pydantic model where the records refuse it, with located errors."""

from __future__ import annotations

from itertools import islice
from typing import TypeVar, cast

import msgspec
from pydantic import BaseModel, ValidationError

from ...errors import InputError, json_path
from ...io import Source
from ...json_decode import any_value
from ...numbers import beyond_int64
from .schema import DocumentRecords

M = TypeVar("M", bound=BaseModel)
D = TypeVar("D", bound=DocumentRecords)

# items per mapping and list that pydantic validates when the decoder read the document (it
# checks each record's fields by type): a schema that parted from its records shows at once
SAMPLE = 16


def validate(model: type[M], value: object, source: Source) -> M:
    """``model.model_validate(value)``, turning the first validation error into an InputError."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(f"{first['msg']}{more}", file=source.name,
                         location=json_path(first["loc"])) from None


def decode_records(data: bytes, records: type[D], model: type[BaseModel]) -> D | None:
    """``data`` decoded into ``records`` (slotted structs with ``model``'s fields: no dict or
    model object per record, for documents of 10^5 records), a sample of each mapping and
    list validated by ``model`` too; None when the records refuse the document (their types
    are no looser than the model's, so the model must read it: :func:`load_records`).

    >>> from traceconv.formats.megengine.schema import StaticMemoryInfo, \\
    ...     StaticMemoryInfoRecords
    >>> decode_records(b'{"opr": {}, "chunk": {}}', StaticMemoryInfoRecords, StaticMemoryInfo)
    StaticMemoryInfoRecords(opr={}, chunk={})
    >>> print(decode_records(b'{"opr": {}, "chunk": {}, "more": 1}', StaticMemoryInfoRecords,
    ...                      StaticMemoryInfo))
    None
    """
    try:
        doc = msgspec.json.decode(data, type=records)
        # (an int past int64 in an untyped value: orjson reads those past 2^64 as floats;
        # the records refuse them, as their typed ints do)
        if any(any_value(value, beyond_int64) for value in doc.untyped_values()):
            return None
        model.model_validate(_sample(doc))
    # (msgspec's ValidationError is a DecodeError; a nesting too deep for the decoder or
    # these walks is the schema path's to judge, as are the rest)
    except (msgspec.DecodeError, ValidationError, RecursionError):
        return None
    return doc


def load_records(source: Source, records: type[D], model: type[BaseModel]) -> D:
    """``source`` read by :func:`decode_records`, else as :meth:`~traceconv.io.Source.read_json` and
    :func:`validate` read it, so its error is theirs (what is read then is ``model``'s
    object, which has the records' fields).

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
    doc = decode_records(source.read_bytes(), records, model)
    if doc is not None:
        return doc
    return cast(D, validate(model, source.read_json(), source))


def _sample(value: object) -> object:
    """``value`` as plain dicts and lists, each mapping and list cut to its first
    :data:`SAMPLE` items."""
    if isinstance(value, msgspec.Struct):
        return {name: _sample(getattr(value, name)) for name in value.__struct_fields__}
    if isinstance(value, dict):
        return {key: _sample(item) for key, item in islice(value.items(), SAMPLE)}
    if isinstance(value, list):
        return [_sample(item) for item in value[:SAMPLE]]
    return value
