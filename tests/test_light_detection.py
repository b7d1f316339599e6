"""Detection imports no reader: telling any input's format (or that no format claims it)
loads the registry's light sniffers only, never a reader, its schema, pydantic, networkx or
numpy. A reader is imported once it is chosen, to read.

The census runs detection in a fresh interpreter on one seed of every reader (the
registry's seed table says which format each is) and on unclaimed JSON, text and binary
files, and compares the modules it imported with what the registry says the readers are.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from traceconv import registry

HEAVY_PACKAGES = ("pydantic", "networkx", "numpy")

# (run in a fresh interpreter: what detecting each path added to sys.modules)
_CENSUS = """
import json, sys
before = set(sys.modules)
from traceconv import registry
from traceconv.errors import FormatError
from traceconv.io import Source
imported = sorted(set(sys.modules) - before)
rows = []
for path in sys.argv[1:]:
    had = set(sys.modules)
    try:
        chosen = registry.detect(Source(path)).name
    except FormatError:
        chosen = None
    rows.append([path, chosen, imported + sorted(set(sys.modules) - had)])
    imported = []
print(json.dumps(rows))
"""


def _detections(paths: list[str]) -> list[tuple[str, str | None, list[str]]]:
    """(path, detected format or None, modules first imported while detecting it) per path;
    the first path also owns what importing the registry imported."""
    run = subprocess.run([sys.executable, "-c", _CENSUS, *paths], capture_output=True,
                         text=True, check=True, cwd=ROOT)
    return [tuple(row) for row in json.loads(run.stdout)]


def _reader_modules() -> tuple[str, ...]:
    """Every format's implementing module and the modules of the schemas the readers
    publish: none is detection's to import."""
    modules = {info.module for info in registry.all_formats()}
    for info in registry.all_formats():
        if info.reads:
            modules |= {schema.__module__
                        for schema in getattr(info.load(), "SCHEMAS", {}).values()}
    return tuple(sorted(modules))


def _forbidden(name: str, readers: tuple[str, ...]) -> bool:
    return name.split(".")[0] in HEAVY_PACKAGES or any(
        name == module or name.startswith(module + ".") for module in readers)


@pytest.mark.slow   # (loads every reader to learn its schemas' modules)
def test_detection_imports_no_reader_schema_or_heavy_package(tmp_path: Path) -> None:
    seeds = {sample.path: name for name, samples in registry.SEED_SAMPLES.items()
             for sample in samples}
    unclaimed = {tmp_path / "unclaimed.json": b'{"a": 1}\n',
                 tmp_path / "unclaimed.txt": b"hello\nnot a profile\n",
                 tmp_path / "unclaimed.bin": bytes(range(256)) * 4}
    for path, data in unclaimed.items():
        path.write_bytes(data)
    readers = _reader_modules()
    assert "traceconv.formats.migraphx" in readers   # (the table is the registry's)
    rows = _detections([*seeds, *map(str, unclaimed)])

    assert {path: chosen for path, chosen, _ in rows if path in seeds} == seeds
    assert [chosen for path, chosen, _ in rows if path not in seeds] == [None] * 3
    heavy = {path: found for path, _, modules in rows
             if (found := [m for m in modules if _forbidden(m, readers)])}
    assert heavy == {}
