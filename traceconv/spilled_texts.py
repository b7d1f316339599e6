"""Argument texts kept on disk while a big trace is converted (``--spill-args``).

Most of what a 1 M-event Kineto trace holds in memory is the JSON text of its events'
arguments (159 MB of its 462 MB peak): the reader keeps each row's text as written, and
the writer decodes it a chunk of events at a time. :func:`texts_on_disk` opens a scratch
folder (through :mod:`traceconv.output_files`, removed however the block ends) in which the
readers that look (:func:`text_store`) keep those texts, one scratch file per column, read
back by position when the writer asks for them. What is read and written is the same trace:
only where the bytes wait changes.

>>> with texts_on_disk() as scratch:
...     store = text_store(); store.add(b'{"a": 1},'); store.add(b'{"b": 2},')
...     bytes(store.cut(9, 17)), [bytes(t) for t in store.cut_many(np.array([0]), np.array([8]))]
(b'{"b": 2}', [b'{"a": 1}'])
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator
from contextvars import ContextVar

import numpy as np

from .output_files import Scratch, scratch_folder

READ_SPAN = 1 << 24   # bytes read at once for many texts that lie close together
_SCRATCH: ContextVar[tuple[Scratch, list[SpilledTexts]] | None] = ContextVar(
    "spill_scratch", default=None)
_NUMBER = itertools.count()


class SpilledTexts:
    """Bytes appended to one scratch file, addressed as one run of bytes from 0 (the
    interface of the model's in-memory store, see ``ArgsColumn.keep_texts_in``)."""

    size: int   # bytes held (those of the store it copied included)

    def __init__(self, scratch: Scratch, name: str, base: SpilledTexts | None = None,
                 stores: list[SpilledTexts] | None = None) -> None:
        self._scratch, self._name = scratch, name
        # a copy reads its first bytes from the store it copied (as they were then), and
        # keeps what is added to it in a file of its own: both can grow apart
        self._base, self._base_size = base, 0 if base is None else base.size
        self.size = self._base_size
        self._reader: int | None = None
        self._stores = [] if stores is None else stores
        self._stores.append(self)

    def add(self, piece: bytes | bytearray) -> None:
        if piece:
            self._scratch.append(self._name, piece)
            self.size += len(piece)

    def cut(self, start: int, end: int) -> bytes:
        """The bytes from ``start`` to ``end``."""
        if end <= start:
            return b""
        below = self._base_size
        if start < below:
            assert self._base is not None
            if end <= below:
                return self._base.cut(start, end)
            return self._base.cut(start, below) + self.cut(below, end)
        if self._reader is None:
            self._reader = os.open(self._scratch.path(self._name), os.O_RDONLY | os.O_CLOEXEC)
        data = os.pread(self._reader, end - start, start - below)
        if 0 < len(data) < end - start:   # (one read gives at most about 2 GB)
            data += self.cut(start + len(data), end)
        elif len(data) < end - start:
            raise OSError(f"the scratch file {self._name} ends before byte {end - below}")
        return data

    def parts(self, start: int, end: int) -> list[bytes]:
        return [self.cut(start, end)]

    def cut_many(self, starts: np.ndarray, ends: np.ndarray) -> list[bytes]:
        """:meth:`cut` of each (start, end): texts that lie within :data:`READ_SPAN` of
        each other come from one read."""
        order = np.argsort(starts, kind="stable")
        ordered = starts[order]
        found: list[bytes] = [b""] * len(starts)
        lo = 0
        while lo < len(order):
            hi = max(lo + 1, int(np.searchsorted(ordered, ordered[lo] + READ_SPAN, "left")))
            rows = order[lo:hi]
            first = int(ordered[lo])
            block = self.cut(first, int(ends[rows].max()))
            for row, start, end in zip(rows.tolist(), (starts[rows] - first).tolist(),
                                       (ends[rows] - first).tolist(), strict=True):
                found[row] = block[start:end]
            lo = hi
        return found

    def copy(self) -> SpilledTexts:
        """A store with the same bytes that grows on its own (nothing is copied)."""
        return SpilledTexts(self._scratch, f"args-{next(_NUMBER)}.json", self, self._stores)

    def close(self) -> None:
        if self._reader is not None:
            os.close(self._reader)
            self._reader = None


@contextlib.contextmanager
def texts_on_disk(near: str | os.PathLike[str] | None = None) -> Iterator[Scratch]:
    """Within the block, :func:`text_store` gives stores in a scratch folder inside
    ``near`` (default: the system's temporary folder); the folder goes when it ends."""
    with scratch_folder(near) as scratch:
        stores: list[SpilledTexts] = []
        token = _SCRATCH.set((scratch, stores))
        try:
            yield scratch
        finally:
            _SCRATCH.reset(token)
            for store in stores:
                store.close()


def text_store() -> SpilledTexts | None:
    """A new store on disk inside a :func:`texts_on_disk` block, else None (keep them in
    memory).

    >>> text_store() is None
    True
    """
    active = _SCRATCH.get()
    if active is None:
        return None
    scratch, stores = active
    return SpilledTexts(scratch, f"args-{next(_NUMBER)}.json", stores=stores)
