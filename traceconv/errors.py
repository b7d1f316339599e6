"""Errors that the command line turns into one located line on stderr (exit status 1)."""

from __future__ import annotations

from collections.abc import Iterable


class TraceconvError(Exception):
    """A handled failure; ``str()`` is ``FILE:LOCATION: MESSAGE``.

    >>> str(TraceconvError("expected an object", file="a.json", location="$.traceEvents[3]"))
    'a.json:$.traceEvents[3]: expected an object'
    """

    def __init__(self, message: str, *, file: str | None = None,
                 location: str | int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.location = location

    def __str__(self) -> str:
        place = ":".join(str(p) for p in (self.file, self.location) if p not in (None, ""))
        return f"{place}: {self.message}" if place else self.message


class InputError(TraceconvError):
    """The input file is malformed or not of the expected format."""


class OutputError(TraceconvError):
    """The output cannot be written (missing or read-only folder, full disk, ...)."""


class UsageError(TraceconvError):
    """A malformed command-line value found after parsing (the command line exits 2)."""

    exit_status = 2


class FormatError(TraceconvError):
    """The format is unknown, cannot be detected, or cannot do what was asked."""


def json_path(parts: Iterable[str | int]) -> str:
    """Render a location tuple (pydantic's ``loc``) as a JSON path.

    >>> json_path(("profiler", "device", "12", 0, "start"))
    '$.profiler.device.12[0].start'
    """
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier() or part.isdecimal():
            out += f".{part}"
        else:
            out += "[" + repr(part) + "]"
    return out
