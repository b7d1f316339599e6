"""Plain sqlite3 access to a database sample: the independent side of the SQLite readers'
tests (nsys, rpd), which count with SQL what the readers must reproduce."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path


@contextmanager
def database(path: Path, tmp: Path) -> Iterator[sqlite3.Connection]:
    """A read-only sqlite3 connection to ``path`` (a gzipped sample is unpacked into ``tmp``)."""
    if path.suffix == ".gz":
        plain = tmp / path.stem
        with gzip.open(path) as src, open(plain, "wb") as out:
            shutil.copyfileobj(src, out)
        path = plain
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        yield connection
