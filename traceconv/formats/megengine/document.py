"""Parse and validate a MegEngine JSON document into its pydantic model, with located errors."""

from __future__ import annotations

from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from ...errors import InputError, json_path
from ...io import Source

M = TypeVar("M", bound=BaseModel)


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
