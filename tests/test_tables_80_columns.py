"""Every command's output at 80 columns, on every bundled sample a reader reads: no line over
80 columns and no broken word or number.

The oracle is the same command drawn at its natural width (``COLUMNS=10000``, as ``--wide``,
which ``memory`` does not take): every
token at 80 columns must be a whole token of that rendering, or visibly elided (it holds
"…"), or a word broken at its own hyphen (prose). A cell folded over two lines (``devic`` /
``e``), a number cut (``7.33e`` / ``-05``) or a name wrapped in pieces is not a token of the
wide rendering, so it fails. Traces are read once per file (the commands run in-process).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import DATA, ROOT, SAMPLES, bundled_files
from traceconv import api
from traceconv.cli.app import app
from traceconv.errors import TraceconvError

pytestmark = [pytest.mark.slow]

WIDTH = 80
_SEPARATORS = re.compile(r"[\s\u2500-\u257f]+")   # spaces and box-drawing characters
# the renderer's own words, which only a narrow rendering prints ("3 columns hidden at 80
# columns: --wide shows them (a, b)"), and punctuation that a list or a caption adds
_NARROW_ONLY = {"column", "columns", "hidden", "at", "--wide", "shows", "them", "it",
                *map(str, range(1, 21)), str(WIDTH)}
_PUNCTUATION = "(),:"

_real_load = api.load


@cache
def _read(path: str, format: str | None) -> object:
    return _real_load(path, format=format)


def _cached_load(path, format=None, **_options):
    return _read(str(path), format)


def _readable() -> list[Path]:
    """The bundled files a reader reads (hostile inputs and seeds are not samples)."""
    files = []
    for path in bundled_files(SAMPLES) + bundled_files(DATA):
        if {"hostile", "seeds"} & set(path.parts) or path.suffix in (".md", ".py"):
            continue
        try:
            _read(str(path), None)
        except (TraceconvError, OSError, ValueError):
            continue
        files.append(path)
    return files


def _commands(path: Path) -> Iterator[list[str]]:
    trace = _read(str(path), None)
    yield ["summary", str(path)]
    yield ["info", str(path)]
    yield ["critical-path", str(path)]
    yield ["advise", str(path)]
    if getattr(trace, "memory", None):
        yield ["memory", str(path)]
    if path.name.endswith((".json", ".json.gz", ".pftrace", ".perfetto-trace")):
        yield ["check", str(path)]


def _pairs(files: list[Path]) -> Iterator[list[str]]:
    """``diff`` of the first two files of each folder that hold the same format."""
    by_folder: dict[tuple[Path, str], list[Path]] = {}
    for path in files:
        fmt = _read(str(path), None).metadata.source_format
        by_folder.setdefault((path.parent, fmt), []).append(path)
    for paths in by_folder.values():
        if len(paths) >= 2:
            yield ["diff", str(paths[0]), str(paths[1])]


def _tokens(text: str) -> list[str]:
    return [token.strip(_PUNCTUATION) for token in _SEPARATORS.split(text)
            if token.strip(_PUNCTUATION)]


def broken_tokens(narrow: str, wide: str) -> list[str]:
    """The tokens of ``narrow`` that are not whole tokens of ``wide`` (see the module).

    >>> broken_tokens("devic\\ne 7.33e\\n-05 conv…relu launch-\\nbound",
    ...               "device 7.33e-05 conv_bias_relu launch-bound")
    ['devic', 'e', '7.33e', '-05']
    """
    known = set(_tokens(wide)) | _NARROW_ONLY
    tokens = _tokens(narrow)
    broken = []
    for i, token in enumerate(tokens):
        if token in known or "…" in token:
            continue
        if token.endswith("-") and i + 1 < len(tokens) and token + tokens[i + 1] in known:
            continue
        if i and tokens[i - 1].endswith("-") and tokens[i - 1] + token in known:
            continue
        broken.append(token)
    return broken


def _run(args: list[str], columns: int) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(columns), "NO_COLOR": "1"})
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"{args}: {result.exception!r}\n{result.output}"
    return result.stdout


def _cases() -> Iterator[list[str]]:
    files = _readable()
    for path in files:
        yield from _commands(path)
    yield from _pairs(files)


def test_every_command_on_every_sample_reads_at_80_columns(monkeypatch):
    monkeypatch.setattr(api, "load", _cached_load)   # (absolute paths: the longest names)
    failures = []
    for args in _cases():
        narrow = _run(args, WIDTH)
        wide = _run(args, 10_000)
        long_lines = [line for line in narrow.splitlines() if len(line) > WIDTH]
        broken = broken_tokens(narrow, wide)
        if long_lines or broken:
            shown = " ".join(str(Path(a).relative_to(ROOT)) if "/" in a else a for a in args)
            failures.append(f"{shown}: {len(long_lines)} lines over {WIDTH}, broken "
                            f"{broken[:5]}")
    assert not failures, "\n".join(failures)


def test_the_progress_bar_fits_80_columns_with_a_long_name_and_every_figure():
    import io

    from rich.console import Console

    from traceconv.cli.progress import ReadMeter

    name = "rank0_" + "very_long_experiment_name_" * 4 + "step5.pt.trace.json.gz"
    live = Console(file=io.StringIO(), width=WIDTH, force_terminal=True)
    meter = ReadMeter([f"runs/{name}", "rank1.json.gz"], [3 << 30, 1 << 30], console=live)
    meter.for_file(0)
    meter.unpacked(0, 12 << 30)
    meter.read_events(0, 12_345_678)
    meter.update(0, 1 << 30, 3 << 30)
    shown = io.StringIO()
    Console(file=shown, width=WIDTH).print(meter.bar.make_tasks_table(meter.bar.tasks))
    meter.stop()
    (line,) = shown.getvalue().splitlines()
    assert len(line) <= WIDTH
    assert line.startswith("reading rank0_") and "…json.gz (+1) " in line
    assert "12,345,678 events" in line and "1.1/4.3 GB" in line   # figures whole
