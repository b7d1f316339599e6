"""Text inputs in another dress: a byte order mark, UTF-16/32, old Mac line ends (CR only).

Every reader reads UTF-8. An editor on Windows saves a pasted report with a UTF-8 BOM (which
hid the first table of a Paddle summary) or as UTF-16 with a BOM. :func:`dressing` tells such
a head apart, and :class:`traceconv.io.Source` hands readers plain UTF-8: a UTF-8 BOM is
skipped, UTF-16/32 with a BOM is decoded (or refused at the first byte that is not valid).
Binary formats (protobuf, pickle, gzip) are left alone: a BOM counts only before text.

Line ends are left as they are: every line reader ends a line at ``\\n``, ``\\r\\n`` and a
lone ``\\r`` alike (:mod:`traceconv.formats.text_lines`), and a CSV cell keeps a ``\\r`` it
quotes, as the ``csv`` module does. An old Mac tool's lone CRs hid every line start from the
format sniffers' patterns, so the head they are given has them as ``\\n``
(:func:`sniffed_head`).
"""

from __future__ import annotations

import codecs

from .errors import InputError

# longest first: the UTF-32 LE mark begins with the UTF-16 LE one
BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"))


def _texty(data: bytes) -> bool:
    """Printable ASCII, whitespace or UTF-8 (no control bytes): the start of a text."""
    return all(b >= 0x20 or b in b"\t\r\n" for b in data)


def dressing(head: bytes) -> str | None:
    """What ``head`` (the first bytes of an input) needs before a reader sees it: an encoding
    name (a BOM first), or None.

    >>> dressing(codecs.BOM_UTF8 + b"Event  Calls"), dressing(codecs.BOM_UTF16_LE + "{".encode("utf-16-le"))
    ('utf-8', 'utf-16-le')
    >>> dressing(b"line one\\rline two\\r"), dressing(b"{}\\n"), dressing(b"\\x80\\x04\\x95")
    (None, None, None)
    """
    for bom, encoding in BOMS:
        if head.startswith(bom):
            sample = head[len(bom):len(bom) + 64]
            try:
                text = sample.decode(encoding, errors="ignore").encode()
            except UnicodeError:
                return None
            return encoding if _texty(text[:16]) else None
    return None


def sniffed_head(head: bytes) -> bytes:
    """``head`` as the format sniffers see it: a text whose lines end in a lone CR with
    ``\\n`` line ends (their patterns find a line's start after ``\\n``); else as it is (a
    binary head holds a ``\\r`` byte that is no line end).

    >>> sniffed_head(b"line one\\rline two\\r"), sniffed_head(b"a\\r\\nb\\r"), sniffed_head(b"\\x80\\x04\\x95 pickle\\r")
    (b'line one\\nline two\\n', b'a\\r\\nb\\r', b'\\x80\\x04\\x95 pickle\\r')
    """
    if b"\r" in head and b"\n" not in head and b"\0" not in head:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:   # (a character cut by the head's end is fine)
                return head
        return head.replace(b"\r", b"\n")
    return head


def undress(data: bytes, dressed: str, name: str) -> bytes:
    """``data`` as plain UTF-8 (``dressed`` from :func:`dressing`); an ``InputError`` at the
    first byte that is not valid in the encoding its BOM names.

    >>> undress(codecs.BOM_UTF16_BE + "a\\r\\nb".encode("utf-16-be"), "utf-16-be", "x.txt")
    b'a\\r\\nb'
    >>> undress(codecs.BOM_UTF16_LE + b"a\\x00\\x00\\xdc", "utf-16-le", "x.txt")
    Traceback (most recent call last):
    traceconv.errors.InputError: x.txt:byte 4: not valid UTF-16-LE (its byte order mark says so): illegal encoding
    """
    bom = next(b for b, encoding in BOMS if encoding == dressed)
    if dressed == "utf-8":
        return data[len(bom):]
    try:
        return data[len(bom):].decode(dressed).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid {dressed.upper()} (its byte order mark says so): "
                         f"{exc.reason}", file=name, location=f"byte {exc.start + len(bom)}") \
            from None
