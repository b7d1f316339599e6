"""Start-up: ``traceconv --version`` and ``import traceconv`` import no heavy dependency.

The time itself is measured in ``benchmarks/bench_startup.py`` (target: at most twice the
time of importing click and rich); here the deterministic cause is checked, by the module
list that ``python -X importtime`` prints.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import traceconv

HEAVY = {"numpy", "networkx", "pydantic", "svgwrite", "pandas", "pyarrow", "orjson", "rich",
         "google.protobuf", "perfetto"}


def imported(*args: str) -> set[str]:
    """The top-level and dotted module names a fresh interpreter imports for ``args``."""
    run = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                         text=True, check=True)
    names = set()
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize("args", [["-m", "traceconv", "--version"], ["-c", "import traceconv"]],
                         ids=["--version", "import"])
def test_no_heavy_import(args: list[str]):
    names = imported(*args)
    assert "click" in names or args[0] == "-c"
    heavy = sorted(n for n in names if n in HEAVY or n.split(".")[0] in HEAVY)
    assert not heavy, f"imported eagerly: {heavy} (import them inside the functions that use them)"


def test_public_names_still_resolve():
    assert traceconv.load.__module__ == "traceconv.api"
    assert traceconv.Trace.__name__ == "Trace"
    assert {"load", "save", "Trace", "merge"} <= set(dir(traceconv))
    assert set(traceconv.__all__) <= set(dir(traceconv))
    with pytest.raises(AttributeError, match="no attribute 'lod'"):
        _ = traceconv.lod  # type: ignore[attr-defined]
