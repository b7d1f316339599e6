"""Every real text file (printed reports, logs, pastes, CSV exports), the project's and
``../shared``'s, is detected as a format of the folder it was collected in: a change of how
the text formats are told apart moves no real file to another format.

The folder is the expected value: files were filed by the tool that printed them when
they were collected (``PROVENANCE.md`` beside them), long before any sniffer looked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT, SAMPLES, SHARED, SHARED_ROOT, bundled_files
from traceconv import registry
from traceconv.errors import FormatError
from traceconv.io import Source

TEXT_NAMES = tuple(f"{ext}{packed}" for ext in (".txt", ".log", ".md", ".rst", ".csv")
                   for packed in ("", ".gz", ".xz", ".bz2"))
NOT_SAMPLES = ("PROVENANCE", "README")   # what the folders say about their files
# (hostile inputs are made, not collected; the seeds are checked by the registry's seed table)
NOT_COLLECTED = {"hostile", "seeds"}
# The formats a folder's text files may be; empty: no format reads them (refused)
FOLDER_FORMATS: dict[str, set[str]] = {
    "paddle": {"paddle-report", "paddle-summary"},   # the old profiler's and the new one's
    "migraphx": {"migraphx"},
    "nsys_stats": {"nsys-stats"},
    "nsys": {"nsys-stats"},
    "rocprof": {"rocprof"},
    "megengine": set(),   # profile_analyze's printed tables
    "torch": set(),       # key_averages() tables and training logs
    "spans_csv": set(),   # the docs' example plugin's input (docs/adding-a-reader.md)
}


def _text_files() -> list[Path]:
    bundled = [path for folder in (DATA, SAMPLES) for path in bundled_files(folder)]
    shared = [path for folder in (SHARED, SHARED_ROOT / "corpus") if folder.is_dir()
              for path in sorted(folder.rglob("*")) if path.is_file()]
    return [path for path in bundled + shared
            if path.name.lower().endswith(TEXT_NAMES) and not path.name.startswith(NOT_SAMPLES)
            and NOT_COLLECTED.isdisjoint(path.parts)]


def _folder(path: Path) -> str | None:
    """The nearest folder above ``path`` that names a format family."""
    return next((part for part in reversed(path.parent.parts) if part in FOLDER_FORMATS), None)


TEXT_FILES = _text_files()


def test_every_text_file_is_in_a_known_folder() -> None:
    assert [str(path) for path in TEXT_FILES if _folder(path) is None] == []


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_detected_as_a_format_of_its_folder(path: Path) -> None:
    expected = FOLDER_FORMATS[_folder(path) or ""]
    if not expected:
        with pytest.raises(FormatError, match="cannot tell the format"):
            registry.detect(Source(str(path)))
    else:
        assert registry.detect(Source(str(path))).name in expected
