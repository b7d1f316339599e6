"""A progress bar on stderr for long reads, shown only on a terminal.

Whatever the input: a plain file (bytes read of its size), a ``.gz`` (compressed bytes read
of its size, and the bytes they expanded to), standard input (bytes read so far, size
unknown, then its parse); and the events read, where the reader says (Chrome JSON). The bar starts at once for an input of 16 MiB or more, and for
any other as soon as it has read or expanded to 16 MiB (a small ``.gz`` can hold a long
read); smaller reads finish before a bar would be worth drawing. rich loads only then.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..io import Progress as ProgressCallback
from ..presentation.tables import elided
from ..terminal import plain
from ..units import format_bytes

MIN_BYTES = 16 << 20
# "reading " + the size read ("12.3/45.6 GB") + the detail ("→ 1.234 GiB, 12,345,678 events")
# + the spaces between: what the file name leaves to the others (the bar and time apart)
OTHER_COLUMNS = 8 + 12 + 30 + 3
LABEL_MIN = 12
PerFile = Callable[[int], ProgressCallback | None]


class ReadMeter:
    """The progress of reading several inputs, one after another, as one bar.

    Calls are cheap until the read proves long; then the bar appears (on ``console``'s
    stream) and follows. ``started`` says whether it did."""

    def __init__(self, paths: list[str], sizes: list[int], console: Any = None) -> None:
        self.paths, self.sizes = paths, sizes
        self.console = console
        self.bar: Any = None
        self.task: Any = None
        self.index = 0
        self.unpacked_bytes = 0
        self.events = 0

    @property
    def started(self) -> bool:
        return self.bar is not None

    def for_file(self, index: int) -> FileMeter:
        self.index = index
        self.unpacked_bytes = 0
        return FileMeter(self, index)

    def _detail(self) -> str:
        """``→ 120 MiB, 1,000,000 events`` (decompressed size, events): beyond the bytes."""
        parts = [f"→ {format_bytes(self.unpacked_bytes, 4)}"] if self.unpacked_bytes \
            else []
        parts += [f"{self.events:,} events"] if self.events else []
        return ", ".join(parts)

    def update(self, index: int, done: int, total: int) -> None:
        before = sum(self.sizes[:index])
        if self.bar is None and max(done, self.unpacked_bytes, sum(self.sizes)) < MIN_BYTES:
            return
        self._start()
        known = total > 0 and all(self.sizes[i] for i in range(len(self.sizes)) if i != index)
        self.bar.update(self.task, completed=before + done,
                        total=sum(self.sizes[:index]) + total + sum(self.sizes[index + 1:])
                        if known else None, detail=self._detail())

    def unpacked(self, index: int, count: int) -> None:
        self.unpacked_bytes = count
        if self.bar is not None or count >= MIN_BYTES:
            self._start()
            self.bar.update(self.task, detail=self._detail())

    def read_events(self, index: int, count: int) -> None:
        self.events = count
        if self.bar is not None:
            self.bar.update(self.task, detail=self._detail())

    def _start(self) -> None:
        if self.bar is not None:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.table import Column

        # few columns, none wrapping: the line fits 80 columns with the decompressed size
        # and events, the file name elided in the middle to the room they leave
        console = self.console or Console(stderr=True)
        roomy = console.width >= 100   # (narrower: a shorter bar and no elapsed time)
        bar = 16 if roomy else 8
        columns = (TextColumn("reading {task.description}", table_column=Column(no_wrap=True)),
                   BarColumn(bar_width=bar), DownloadColumn(table_column=Column(no_wrap=True)),
                   TextColumn("{task.fields[detail]}", table_column=Column(no_wrap=True)),
                   *([TimeElapsedColumn()] if roomy else []))
        self.bar = Progress(*columns, transient=True, console=console)
        first = "<stdin>" if self.paths[0] == "-" else os.path.basename(self.paths[0])
        more = f" (+{len(self.paths) - 1})" if len(self.paths) > 1 else ""
        room = console.width - OTHER_COLUMNS - bar - len(more) - (8 if roomy else 0)
        label = plain(elided(first, max(room, LABEL_MIN))) + more
        self.task = self.bar.add_task(label, total=sum(self.sizes) or None, detail="")
        self.bar.start()

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


class FileMeter:
    """The progress callback of one input (see :data:`traceconv.io.Progress`)."""

    def __init__(self, meter: ReadMeter, index: int) -> None:
        self.meter, self.index = meter, index

    def __call__(self, done: int, total: int) -> None:
        self.meter.update(self.index, done, total)

    def unpacked(self, count: int) -> None:
        self.meter.unpacked(self.index, count)

    def events(self, count: int) -> None:
        self.meter.read_events(self.index, count)


@contextmanager
def reading(paths: list[str], enabled: bool | None = None,
            console: Any = None) -> Iterator[PerFile]:
    """Yield ``per_file(i)``, the progress callback for input ``i`` (None off a terminal)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda _index: None
        return
    sizes = [os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0 for p in paths]
    meter = ReadMeter(paths, sizes, console)
    try:
        yield meter.for_file
    finally:
        meter.stop()


# the steps of a run in passes (split, a conversion piece by piece), in the order they come
PASS_ORDER = ("surveying", "cutting", "writing")


class PassMeter:
    """One bar for a run that reads its input in passes (``surveying``, ``cutting``,
    ``writing`` pieces): the pass's bytes of its total, named ``pass 2/3: cutting FILE``;
    started on the first call (rich loads only then)."""

    def __init__(self, path: str, passes: int, console: Any = None) -> None:
        self.name, self.passes, self.console = os.path.basename(path), passes, console
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        number = PASS_ORDER.index(stage) + 1 if stage in PASS_ORDER else 0
        label = plain(elided(self.name, LABEL_MIN + 8))
        description = f"pass {number}/{self.passes}: {stage} {label}"
        if self.bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=16),
                                DownloadColumn(), TimeElapsedColumn(), transient=True,
                                console=self.console or Console(stderr=True))
            self.task = self.bar.add_task(description, total=total or None)
            self.bar.start()
        self.bar.update(self.task, description=description, completed=done,
                        total=total or None)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@contextmanager
def passes(path: str, count: int, enabled: bool | None = None,
           console: Any = None) -> Iterator[PassMeter | None]:
    """Yield the progress of a run reading ``path`` in ``count`` passes: a
    :class:`PassMeter` on a terminal for an input of :data:`MIN_BYTES` or more, else None.

    >>> with passes("samples/torch/cnn_step5.pt.trace.json", 3) as meter:
    ...     meter is None   # (off a terminal, and a small input)
    True
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or not os.path.isfile(path) or os.path.getsize(path) < MIN_BYTES:
        yield None
        return
    meter = PassMeter(path, count, console)
    try:
        yield meter
    finally:
        meter.stop()
