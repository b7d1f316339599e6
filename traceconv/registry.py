"""The format table: which module reads or writes what, and how inputs are recognised.

A format is one module under ``traceconv.formats`` that defines any of::

    sniff(head: bytes, source: Source) -> float   # 0 = not mine ... 1 = certainly mine
    read(source: Source, **options) -> Trace
    write(trace: Trace, out: BinaryIO, **options) -> None

and one :func:`register` line in ``traceconv/formats/__init__.py``. Detection looks at the
file name first (extension, ignoring ``.gz``); when several formats share an extension, or
none claims it, their ``sniff`` functions decide from the first decompressed bytes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from .errors import FormatError
from .io import Source


@dataclass(frozen=True)
class FormatInfo:
    """One row of the format table."""

    name: str
    description: str
    module: str                       # import path, loaded on first use
    extensions: tuple[str, ...] = ()  # matched against the end of the name without .gz
    reads: bool = False
    writes: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def default_extension(self) -> str:
        return self.extensions[0] if self.extensions else f".{self.name}"

    def load(self) -> ModuleType:
        """Import the implementing module."""
        return importlib.import_module(self.module)


_FORMATS: dict[str, FormatInfo] = {}
_ALIASES: dict[str, str] = {}


def register(info: FormatInfo) -> FormatInfo:
    """Add a format to the table (one line per format in ``traceconv.formats``)."""
    _FORMATS[info.name] = info
    for alias in info.aliases:
        _ALIASES[_key(alias)] = info.name
    return info


def _key(name: str) -> str:
    """Format names are case-insensitive and ``paddle_pb`` means ``paddle-pb``."""
    return name.lower().replace("_", "-")


def all_formats() -> list[FormatInfo]:
    """Every registered format, in registration order."""
    _ensure_loaded()
    return list(_FORMATS.values())


def get(name: str) -> FormatInfo:
    """The format called ``name`` (or one of its aliases)."""
    _ensure_loaded()
    key = _ALIASES.get(_key(name), _key(name))
    if key not in _FORMATS:
        known = ", ".join(sorted(_FORMATS))
        raise FormatError(f"unknown format {name!r} (known: {known})")
    return _FORMATS[key]


def _matches(info: FormatInfo, filename: str) -> int:
    """Length of the longest extension of ``info`` that ``filename`` ends with (0 = none)."""
    return max((len(ext) for ext in info.extensions if filename.endswith(ext)), default=0)


def _sniff_score(info: FormatInfo, source: Source) -> float:
    module = info.load()
    sniff = getattr(module, "sniff", None)
    return float(sniff(source.head, source)) if sniff else 0.0


def detect(source: Source) -> FormatInfo:
    """The readable format of ``source``: by extension, then by content.

    A unique, specific extension (``.pftrace``) decides alone; shared ones (``.json``,
    ``.txt``) are settled by sniffing the candidates, then all other readers.
    """
    _ensure_loaded()
    readers = [f for f in _FORMATS.values() if f.reads]
    filename = source.stem_name
    by_name = sorted(((m, f) for f in readers if (m := _matches(f, filename))),
                     key=lambda pair: -pair[0])
    candidates = [f for _, f in by_name]
    if len(candidates) == 1 and not getattr(candidates[0].load(), "sniff", None):
        return candidates[0]
    for group in (candidates, [f for f in readers if f not in candidates]):
        scored = [(score, f) for f in group if (score := _sniff_score(f, source)) > 0]
        if scored:
            return max(scored, key=lambda pair: pair[0])[1]
    raise FormatError("cannot tell the format from the name or the content; "
                      "name it with --format (see `traceconv formats`)", file=source.name)


def for_output(path: str, format: str | None) -> FormatInfo:
    """The writable format named ``format``, or the one the output name's extension implies."""
    _ensure_loaded()
    if format:
        info = get(format)
    else:
        filename = path.lower().removesuffix(".gz")
        writers = [(m, f) for f in _FORMATS.values() if f.writes and (m := _matches(f, filename))]
        if not writers:
            raise FormatError("cannot tell the output format from the name; "
                              "name it with --to (see `traceconv formats`)", file=path)
        info = max(writers, key=lambda pair: pair[0])[1]
    if not info.writes:
        raise FormatError(f"traceconv cannot write {info.name} files", file=path)
    return info


def _ensure_loaded() -> None:
    if not _FORMATS:
        importlib.import_module("traceconv.formats")
