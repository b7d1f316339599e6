"""A progress bar on stderr for long reads, shown only on a terminal."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from ..io import Progress as ProgressCallback
from ..terminal import plain

MIN_BYTES = 16 << 20  # smaller inputs finish before a bar would be worth drawing
PerFile = Callable[[int], ProgressCallback | None]


@contextmanager
def reading(paths: list[str], enabled: bool | None = None) -> Iterator[PerFile]:
    """Yield ``per_file(i)``, the progress callback for input ``i`` (None off a terminal)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    sizes = [os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0 for p in paths]
    if not enabled or sum(sizes) < MIN_BYTES:
        yield lambda _index: None
        return
    columns = (TextColumn("reading {task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        label = plain(os.path.basename(paths[0])) + (f" (+{len(paths) - 1})" if len(paths) > 1 else "")
        task = bar.add_task(label, total=sum(sizes))

        def per_file(index: int) -> ProgressCallback:
            before = sum(sizes[:index])
            return lambda done, _total: bar.update(task, completed=before + done)

        yield per_file
