"""The one protobuf wire decoder every protobuf reader uses (Perfetto, XPlane, Paddle).

- :mod:`.scalar`: one field at a time: 64-bit varints, field keys, lengths checked against
  the enclosing message (light: no numpy, the sniffers use it);
- :mod:`.messages`: messages from a field table (proto2 rules, unknown fields skipped,
  packed repeated fields, a depth bound, repeated messages decoded when reached), for
  readers that walk a tree of messages (XPlane, Paddle, Perfetto's stateful packets);
- :mod:`.columns`: the same wire format for many messages at once with numpy (the Perfetto
  reader's hot path: millions of packets).
- :mod:`.counting`: how many elements repeated message fields hold, in a walk that decodes
  nothing (the memory check's count of a file's rows).

Every one raises :class:`WireError` with the byte offset; :func:`wire_errors` turns it into
the reader's one located line. Formats import this package; the model does not.

>>> from traceconv.formats.protowire import message_classes
>>> Span = message_classes("demo", {"Span": [("id", 1, "uint64")]})["Span"]
>>> Span.decode(b"\\x08\\x80\\x80\\x80\\x80\\x10").id   # 2**32: no 32-bit aliasing
4294967296
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ...errors import InputError
from .messages import MAX_DEPTH, Field, Message, MessageList, locate_damage, message_classes
from .scalar import WireError, iter_fields, read_varint

__all__ = ["MAX_DEPTH", "Field", "Message", "MessageList", "WireError", "iter_fields", "locate_damage",
           "message_classes", "read_varint", "wire_errors"]


@contextmanager
def wire_errors(file: str, what: str, root: type[Message] | None = None,
                data: bytes | None = None) -> Iterator[None]:
    """Turn a :class:`WireError` met while decoding (or while reading lazily decoded
    elements) into one :class:`~traceconv.errors.InputError`: "not a valid WHAT: why (at
    path)" at the byte where it broke. With ``root`` and ``data`` the whole file is walked
    to name the first damaged place as a path of fields.

    >>> Span = message_classes("demo", {"Span": [("name", 1, "string")]})["Span"]
    >>> with wire_errors("x.pb", "Span"):
    ...     Span.decode(b"\\x0a\\x05ab")
    Traceback (most recent call last):
    ...
    traceconv.errors.InputError: x.pb:byte 1: not a valid Span: a field of 5 bytes runs past the end of its message (2 bytes left): the file is cut or damaged
    """
    try:
        yield
    except WireError as exc:
        offset, reason, path = exc.offset, str(exc), ""
        if root is not None and data is not None:
            found = locate_damage(root, data)
            if found is not None:
                offset, path, reason = found
        where = f" (at {path})" if path else ""
        raise InputError(f"not a valid {what}: {reason}{where}", file=file,
                         location=f"byte {offset:,}") from None
