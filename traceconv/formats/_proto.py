"""Text of decoded protobuf strings (:mod:`traceconv.formats.protowire` decodes the wire).

A proto2 ``string`` field holding bytes that are not UTF-8 is handed over as ``bytes``, as
the protobuf runtime does; :class:`Utf8Repair` makes it text and counts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Diagnostics


class Utf8Repair:
    """Strings of a decoded message as ``str``, counted when they were not UTF-8.

    The decoder hands a proto2 ``string`` field holding invalid UTF-8 back as
    ``bytes``; a name must stay text (a Chrome writer would print ``"b'inner\\xff'"``).
    Undecodable bytes become U+FFFD and each such value is counted in the diagnostics.
    Other values pass through unchanged.

    >>> from traceconv.model import Diagnostics
    >>> diagnostics = Diagnostics()
    >>> text = Utf8Repair(diagnostics, "demo")
    >>> text("conv2d"), text(b"inner\\xff"), text(b"alpha"), text(7)
    ('conv2d', 'inner\ufffd', 'alpha', 7)
    >>> [(d["code"], d["count"]) for d in diagnostics.as_list()]
    [('demo.invalid_utf8', 1)]
    """

    def __init__(self, diagnostics: Diagnostics, prefix: str) -> None:
        self.diagnostics, self.code = diagnostics, f"{prefix}.invalid_utf8"

    def __call__(self, value):  # type: ignore[no-untyped-def]
        if type(value) is not bytes:
            return value
        try:   # (a ``bytes`` field, an interned string's, is text when it decodes)
            return value.decode()
        except UnicodeDecodeError:
            repaired = value.decode("utf-8", errors="replace")
        self.diagnostics.add(self.code, example=repaired[:80])
        return repaired

    def decode(self, data: bytes | memoryview) -> str:
        """Raw string bytes as text, repaired and counted as above when not UTF-8.

        >>> from traceconv.model import Diagnostics
        >>> text = Utf8Repair(Diagnostics(), "demo")
        >>> text.decode(b"ok"), text.decode(memoryview(b"\\xffx"))
        ('ok', '\ufffdx')
        """
        raw = bytes(data)
        try:
            return raw.decode()
        except UnicodeDecodeError:
            return self(raw)  # type: ignore[no-any-return]
