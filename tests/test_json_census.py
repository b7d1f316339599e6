"""Every real JSON file, the project's and ``../shared``'s, is detected as the format the
census table (``tests/data/json_census.tsv``) names: a change of how formats tell their
keys apart moves no real file to another format.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import ROOT, bundled_files
from traceconv import registry
from traceconv.errors import FormatError
from traceconv.io import Source

TABLE = ROOT / "tests" / "data" / "json_census.tsv"
JSON_NAMES = (".json", ".json.gz", ".json.xz", ".json.bz2")


def _census() -> dict[Path, str]:
    rows = (line.split("\t") for line in TABLE.read_text().splitlines()
            if line and not line.startswith("#"))
    return {Path(os.path.normpath(ROOT / path)): name for path, name in rows}


CENSUS = _census()


def test_every_bundled_json_file_is_in_the_census() -> None:
    bundled = {path for folder in ("tests/data", "samples")
               for path in bundled_files(ROOT / folder)
               if path.name.lower().endswith(JSON_NAMES)}
    assert bundled - set(CENSUS) == set()


@pytest.mark.parametrize("path", sorted(CENSUS), ids=lambda p: p.name)
def test_detected_as_the_census_says(path: Path) -> None:
    if not path.exists():
        pytest.skip("../shared is not beside this checkout")
    expected = CENSUS[path]
    if expected == "none":
        with pytest.raises(FormatError, match="cannot tell the format"):
            registry.detect(Source(str(path)))
    else:
        assert registry.detect(Source(str(path))).name == expected
