"""Every command's output at 80 columns, on every bundled file a reader reads (``samples/``
and ``tests/data/``): no line over 80 columns and no broken word or number.

The oracle is the same command drawn at its natural width (``COLUMNS=10000``, as
``--wide``): every token at 80 columns must be a whole token of that rendering, or a name
visibly elided (it holds "…"), or a word broken at its own hyphen (prose). A cell folded over
two lines (``devic`` / ``e``), a number cut (``7.33e`` / ``-05``) or a name wrapped in pieces
is not a token of the wide rendering, so it fails; nor is a number elided (``10,78…`` reads
as another number: numbers are never cut, columns are hidden instead). Each file is read
once per test (the commands run in-process).
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
# columns: --wide shows them (a, b)", "hidden, N/A on every row: a, b"), and punctuation that a list or a caption adds
_NARROW_ONLY = {"column", "columns", "hidden", "at", "--wide", "shows", "them", "it",
                "N/A", "on", "every", "row",
                *map(str, range(1, 21)), str(WIDTH)}
_PUNCTUATION = "(),:"
# ("(anonymous namespace)::" is two tokens: its second half is "namespace)::")
_NAMESPACES = re.compile(r"(?:\w+|<unnamed>|\(anonymous namespace\)|namespace\))::")
# a number and an ellipsis ("1,085…", "…785.0"): a number cut, unless the number is whole
# in the wide rendering (a name cut just after its number: "thread 1276…")
_CUT_NUMBER = re.compile(r"[-+]?[\d,.]*\d[\d,.]*…|…[\d,.]*\d[\d,.%]*")

_real_load = api.load


@cache
def _read(path: str, format: str | None) -> object:
    return _real_load(path, format=format)


def _cached_load(path, format=None, **_options):
    return _read(str(path), format)


@pytest.fixture
def read_once(monkeypatch):
    """Every command of a test reads each file once (the commands run in-process)."""
    monkeypatch.setattr(api, "load", _cached_load)
    yield _read
    _read.cache_clear()


def _bundled() -> list[Path]:
    """The bundled inputs (hostile inputs and seeds are not samples; notes are not inputs)."""
    return [path for path in bundled_files(SAMPLES) + bundled_files(DATA)
            if not {"hostile", "seeds"} & set(path.parts) and path.suffix not in (".md", ".py")]


def _readable(path: Path, read) -> object:
    try:
        return read(str(path), None)
    except (TraceconvError, OSError, ValueError):
        pytest.skip("no reader reads it")


def _commands(path: Path, trace) -> Iterator[list[str]]:
    yield ["summary", str(path)]
    if len(trace.slices) and any(p.kind.name == "DEVICE" for p in trace.processes):
        yield ["summary", str(path), "--launch-stats", "--streams", "--by-annotation",
               "--sequences", "3"]
    yield ["info", str(path)]
    yield ["critical-path", str(path)]
    yield ["advise", str(path)]
    if trace.memory:
        yield ["memory", str(path)]
    if path.name.endswith((".json", ".json.gz", ".pftrace", ".perfetto-trace")):
        yield ["check", str(path)]


def _tokens(text: str) -> list[str]:
    return [token.strip(_PUNCTUATION) for token in _SEPARATORS.split(text)
            if token.strip(_PUNCTUATION)]


def broken_tokens(narrow: str, wide: str) -> list[str]:
    """The tokens of ``narrow`` that are not whole tokens of ``wide`` (see the module).

    A C++ name shortened by the tables loses its namespaces (``at::native::reduce_kernel<512,``
    reads ``reduce_kernel<512,``, ``vllm::rotary<c10::Half,`` reads ``rotary<Half,``): a wide
    token without its namespaces is whole.

    >>> broken_tokens("devic\\ne 7.33e\\n-05 conv…relu launch-\\nbound 10,78… thread 1276…",
    ...               "device 7.33e-05 conv_bias_relu launch-bound 10,785.0 thread 1276 (pt)")
    ['devic', 'e', '7.33e', '-05', '10,78…']
    >>> broken_tokens("reduce_kernel<512, rotary<Half, duce_kernel<512",
    ...               "at::native::reduce_kernel<512, 1>(int) vllm::rotary<c10::Half, 2>")
    ['duce_kernel<512']
    """
    wide_tokens = set(_tokens(wide))
    known = wide_tokens | {_NAMESPACES.sub("", token) for token in wide_tokens} | _NARROW_ONLY
    tokens = _tokens(narrow)
    broken = []
    for i, token in enumerate(tokens):
        if token in known or ("…" in token and (not _CUT_NUMBER.fullmatch(token)
                                                or token.replace("…", "") in known)):
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


def _failures(args: list[str]) -> list[str]:
    narrow = _run(args, WIDTH)
    wide = _run(args, 10_000)
    long_lines = [line for line in narrow.splitlines() if len(line) > WIDTH]
    broken = broken_tokens(narrow, wide)
    if not long_lines and not broken:
        return []
    shown = " ".join(str(Path(a).relative_to(ROOT)) if "/" in a else a for a in args)
    return [f"{shown}: {len(long_lines)} lines over {WIDTH}, broken {broken[:5]}"]


@pytest.mark.parametrize("path", _bundled(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_reads_at_80_columns(path: Path, read_once):
    # (absolute paths: the longest names a heading can hold)
    trace = _readable(path, read_once)
    failures = [line for args in _commands(path, trace) for line in _failures(args)]
    assert not failures, "\n".join(failures)


def _folders() -> list[Path]:
    folders: dict[Path, int] = {}
    for path in _bundled():
        folders[path.parent] = folders.get(path.parent, 0) + 1
    return sorted(folder for folder, count in folders.items() if count > 1)


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: str(p.relative_to(ROOT)))
def test_diff_of_two_samples_of_a_folder_reads_at_80_columns(folder: Path, read_once):
    """``diff`` of the first two files of the folder that one format reads."""
    by_format: dict[str, list[Path]] = {}
    for path in (p for p in _bundled() if p.parent == folder):
        try:
            fmt = read_once(str(path), None).metadata.source_format
        except (TraceconvError, OSError, ValueError):
            continue
        by_format.setdefault(fmt, []).append(path)
        if len(by_format[fmt]) == 2:
            assert not _failures(["diff", *map(str, by_format[fmt])])
            return
    pytest.skip("no two files of one format")


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
