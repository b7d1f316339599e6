"""Every hostile family against every registered reader (issue 33, item 6).

The cells are generated from the registry: each reader that reads, with the seeds the
registry names for it (``traceconv.registry.SEED_SAMPLES``), times each family of
``benchmarks/fuzz/families.py`` that applies to the seed's syntax. A reader registered
tomorrow is in the matrix tomorrow, and ``test_every_reader_brings_a_seed`` fails until it
names a seed.

Each variant goes through the command line in this process (``info F --json`` and a
conversion ``F -o out.pftrace``, the format forced so that the reader under test sees it),
and must meet the contract: exit 0 with a sane result (a JSON object of counts; a
``.pftrace`` that reads back), or exit 1 with exactly one ``traceconv: error:`` line that
names the input, and nothing left in the output folder. Never "internal error", a
traceback, another exit status, a hang (a CPU timer) or runaway memory (an address-space
limit while the command runs).

The fast suite runs a few variants per cell; ``TRACECONV_MATRIX=full`` runs many more
(``TRACECONV_MATRIX_CAMPAIGN=N`` draws another set). Cells that fail for a class another
layer of issue 33 is closing are marked ``xfail(strict=True)`` with that class: remove the
mark when the layer lands (a strict xfail that passes fails the suite, so it cannot be
forgotten).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from traced_peak import traced_peak

import traceconv
from benchmarks.fuzz import families
from benchmarks.fuzz.families import Seed, Variant
from traceconv import registry, special_files
from traceconv.cli import app

FULL = os.environ.get("TRACECONV_MATRIX", "") == "full"
CAMPAIGN = int(os.environ.get("TRACECONV_MATRIX_CAMPAIGN", "0"))
# variants per seed and family: fast suite / full run
PER_CELL = {"edge-numbers": (2, 40), "encodings": (2, 24), "depth": (2, 9),
            "amplification": (2, 6), "cut": (2, 48), "special": (3, 6)}
CPU_SECONDS = 20          # one command; more is a hang
MEMORY_HEADROOM = 3 << 30  # address space one command may add to this process
SCALES = (1, 2, 4, 8)
GROWTH_LIMIT = 2.3        # memory per doubling of the input
INPUT_MULTIPLE = 50       # peak memory / input bytes at 8x, beyond fixed costs:
FIXED_BYTES = 16 << 20    # read buffers and tables that do not grow with the input
# a buffer of fixed size taken once a count passes a threshold (the protobuf decoder's
# batches of 4,096 messages) is a step, not growth: doublings are compared above this floor
GROWTH_FLOOR = 1 << 20
SCALE_BASE = (16 << 10, 256 << 10)   # bytes at 1x, at least: fast suite / full run

SEEDS = families.registry_seeds()
READERS = sorted({info.name for info in registry.all_formats() if info.reads})

# (reader, family) -> why it still fails; each is a class that a shared layer should close.
# Remove a line once it passes (the last, Perfetto names that are not UTF-8, closed on
# 2026-11-29 by the reader's one counted UTF-8 repair).
KNOWN: dict[tuple[str, str], str] = {}

def _cells() -> Iterator[object]:
    for reader, family in families.iter_cells():
        reason = KNOWN.get((reader, family))
        marks = [pytest.mark.xfail(strict=not FULL, reason=reason)] if reason else []
        yield pytest.param(reader, family, id=f"{reader}-{family}", marks=marks)


class Hang(BaseException):
    """The CPU timer ran out (a BaseException: the command line's handler must not turn it
    into an error line)."""


def _on_timer(signum: int, frame: object) -> None:
    raise Hang


@contextlib.contextmanager
def _guarded() -> Iterator[None]:
    """A CPU timer and an address-space limit around one in-process command."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = mapped + MEMORY_HEADROOM
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    previous = signal.signal(signal.SIGPROF, _on_timer)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    signal.setitimer(signal.ITIMER_PROF, CPU_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGPROF, previous)


def _command(*args: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of one command line run in this process."""
    with _guarded():
        try:
            result = CliRunner().invoke(app, list(args), catch_exceptions=False)
        except Hang:
            return -1, "", f"hang: more than {CPU_SECONDS} CPU seconds"
        except MemoryError:
            return -2, "", "MemoryError escaped the command line"
    return result.exit_code, result.stdout, result.stderr


def _refusal(status: int, stderr: str, shown: str) -> str | None:
    """What is wrong with a refusal (exit 1, one located line), or None."""
    lines = stderr.strip().splitlines()
    if status != 1:
        return f"exit status {status}: {stderr.strip()[-300:]}"
    if len(lines) != 1:
        return f"{len(lines)} lines on stderr: {stderr.strip()[-300:]}"
    line = lines[0]
    if not line.startswith("traceconv: error: ") or "internal error" in line:
        return f"not a handled error: {line[:300]}"
    if shown not in line and Path(shown).name not in line:
        return f"the line does not name {shown}: {line[:300]}"
    return None


def _unblock_fifos(folder: Path) -> None:
    """A FIFO whose writer still waits (the command never opened it): let the writer go."""
    for path in folder.iterdir():
        if stat.S_ISFIFO(path.lstat().st_mode):
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))


def _input(variant: Variant, seed: Seed, folder: Path) -> str:
    if variant.make is not None:
        return variant.make(folder)
    path = folder / (variant.name or seed.name)
    path.write_bytes(variant.data)
    return str(path)


def check_variant(seed: Seed, variant: Variant, folder: Path) -> list[str]:
    """The contract for one variant, through ``info --json`` and a conversion; the list of
    what broke it (empty: kept)."""
    problems = []
    inputs = folder / "in"
    inputs.mkdir()
    out = folder / "out"
    out.mkdir()
    try:
        path = _input(variant, seed, inputs)
        status, stdout, stderr = _command("info", path, "--json", "--format", seed.reader,
                                          *variant.args)
        if status == 0:
            problems += _sane_info(stdout, seed.reader)
        elif (why := _refusal(status, stderr, path)) is not None:
            problems.append(f"info: {why}")
        path = _input(variant, seed, inputs)
        written = out / "out.pftrace"
        status, _, stderr = _command(path, "--format", seed.reader, "-o", str(written),
                                     *variant.args)
        if status == 0:
            problems += _sane_output(written)
        else:
            if (why := _refusal(status, stderr, path)) is not None:
                problems.append(f"convert: {why}")
            if left := sorted(p.name for p in out.iterdir()):
                problems.append(f"convert: exit {status} left {left}")
    finally:
        _unblock_fifos(inputs)
    return problems


def _sane_info(stdout: str, reader: str) -> list[str]:
    try:
        shown = json.loads(stdout)
    except ValueError:
        return [f"info: exit 0 but not JSON: {stdout[:200]!r}"]
    counts = ("processes", "tracks", "slices", "instants", "counter_samples", "flows", "ops",
              "tensors", "memory_blocks", "stat_rows", "span_ns")
    bad = [k for k in counts if not (isinstance(shown.get(k), int) and shown[k] >= 0)]
    if bad:
        return [f"info: exit 0 with counts that are not integers >= 0: "
                f"{ {k: shown.get(k) for k in bad} }"]
    if shown.get("format") != reader:
        return [f"info: read as {shown.get('format')!r}, not {reader}"]
    return []


def _sane_output(written: Path) -> list[str]:
    if not written.is_file() or written.stat().st_size == 0:
        return ["convert: exit 0 but no output"]
    try:
        traceconv.load(written, format="perfetto")
    except Exception as exc:  # noqa: BLE001 - whatever fails here is the finding
        return [f"convert: the written .pftrace does not read back: {type(exc).__name__}: "
                f"{str(exc)[:200]}"]
    return []


@pytest.fixture
def short_fifo_wait(monkeypatch):
    """A FIFO nobody writes is refused after 0.3 s here, not the default 30."""
    monkeypatch.setattr(special_files, "FIFO_WAIT_SECONDS", 0.3)
    monkeypatch.delenv("TRACECONV_DEBUG", raising=False)


@pytest.mark.slow
@pytest.mark.parametrize(("reader", "family"), list(_cells()))
def test_hostile_family_keeps_the_contract(reader, family, tmp_path, short_fifo_wait):
    count = PER_CELL[family][FULL]
    failures = []
    for seed in (s for s in SEEDS if s.reader == reader and families.applies(family, s.syntax)):
        for k, variant in enumerate(families.variants(seed, family, count, CAMPAIGN)):
            folder = tmp_path / f"{seed.name}-{k}"
            folder.mkdir()
            for problem in check_variant(seed, variant, folder):
                failures.append(f"{seed.name} / {variant.label}: {problem}")
    assert not failures, f"{len(failures)} broken:\n" + "\n".join(failures)


# -- the registry gives every reader a seed -------------------------------------------------

def test_every_reader_brings_a_seed():
    missing = [name for name in READERS if not registry.seed_samples(name)]
    assert not missing, (f"readers with no seed in traceconv/registry.py SEED_SAMPLES: "
                         f"{missing}: add a small sample of each (tests/data/seeds/)")
    assert {seed.reader for seed in SEEDS} == set(READERS)
    cells = set(families.iter_cells())
    assert {reader for reader, _ in cells} == set(READERS)
    assert all((r, f) in cells for r in READERS for f in ("edge-numbers", "encodings", "cut",
                                                          "amplification", "special"))


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"{s.reader}-{s.name}")
def test_each_seed_reads_cleanly(seed, tmp_path):
    """A seed is a good input of its reader (else every variant tests only the refusal)."""
    path = tmp_path / seed.name
    path.write_bytes(seed.data)
    status, stdout, stderr = _command("info", str(path), "--json", "--format", seed.reader)
    assert status == 0, stderr
    shown = json.loads(stdout)
    assert shown["format"] == seed.reader
    held = sum(shown[k] for k in ("slices", "instants", "counter_samples", "memory_blocks",
                                  "ops", "stat_rows"))
    assert held > 0, shown


def test_families_are_deterministic():
    seed = next(s for s in SEEDS if s.reader == "chrome")
    for family in families.FAMILIES:
        first = [(v.label, v.data) for v in families.variants(seed, family, 3)]
        assert first == [(v.label, v.data) for v in families.variants(seed, family, 3)]
        assert all(data != seed.data for label, data in first if family != "special")


# -- memory grows linearly with the input ---------------------------------------------------

def _peak_bytes(path: Path, reader: str) -> int:
    return traced_peak(lambda: traceconv.load(path, format=reader))[1]


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"{s.reader}-{s.name}")
def test_memory_grows_linearly_with_the_input(seed, tmp_path):
    """The seed repeated 1x-8x (see ``families.scaled``): the reader's peak of traced memory
    grows at most 2.3x per doubling (above a 1 MiB floor) and stays under 50x the input at
    8x (plus 16 MiB of fixed costs: a read buffer, tables). The 1x input is the seed repeated to a base size,
    so fixed costs do not hide the growth."""
    base = SCALE_BASE[FULL]
    unit = Seed(seed.reader, seed.syntax, seed.name,
                families.scaled(seed, max(1, math.ceil(base / len(seed.data)))))
    peaks, sizes = [], []
    for k, times in enumerate(SCALES):
        path = tmp_path / f"x{times}-{seed.name}"
        path.write_bytes(families.scaled(unit, times))
        if k == 0:
            traceconv.load(path, format=seed.reader)   # imports and caches: not the input's
        sizes.append(path.stat().st_size)
        peaks.append(_peak_bytes(path, seed.reader))
    growth = [(b + GROWTH_FLOOR) / (a + GROWTH_FLOOR)
              for a, b in zip(peaks, peaks[1:], strict=False)]
    table = ", ".join(f"{s >> 10} KiB: {p >> 10} KiB" for s, p in zip(sizes, peaks, strict=True))
    assert max(growth) <= GROWTH_LIMIT, f"growth per doubling {growth} ({table})"
    assert peaks[-1] <= INPUT_MULTIPLE * sizes[-1] + FIXED_BYTES, table
