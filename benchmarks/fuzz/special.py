"""Fuzzing what surrounds the bytes: special files as inputs and outputs, and signals.

A mutant is a file; these scenarios are the ways a file reaches traceconv that are not a
regular file, and the ways a run ends that are not its own. Scenario ``k`` of a campaign
seed picks a reader (from the registry's targets) and one of its seeds from
``(seed, scenario, k)`` alone, as the byte mutants do:

- ``fifo-input``: the seed written into a FIFO by a thread; must read as the file does;
- ``pipe-path``: the seed behind ``/proc/self/fd/N`` of a pipe (what ``<(cat f)`` passes);
  must read as the file does (nothing of the first block lost);
- ``fifo-no-writer``: a FIFO nobody opens; must be refused in bounded time;
- ``dev-zero``, ``proc-file``: endless or size-0 inputs; must stop at ``max_bytes``;
- ``output-fifo``, ``output-symlink``, ``output-devnull``, ``output-socket``: ``save`` onto
  each; the special file must stay what it was, no ``.traceconv-*.part`` may stay behind;
- ``signal``: a conversion stopped by a terminating signal mid-write (a subprocess); it
  must exit with 128 + the signal and leave no partial output.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .seeds import file_name

SCENARIOS = ("fifo-input", "pipe-path", "fifo-no-writer", "dev-zero", "proc-file",
             "output-fifo", "output-symlink", "output-devnull", "output-socket", "signal")
SIGNALS = ("SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGTERM", "SIGXCPU",
           "SIGVTALRM", "SIGPROF", "SIGINT")
WAIT = 60.0   # seconds a thread may take (a subprocess: 4x) before it counts as a hang


class Broken(AssertionError):
    """An invariant of the scenario did not hold (a crash class of its own)."""


def _counts(trace) -> tuple:  # type: ignore[no-untyped-def]
    c = trace.counts()
    return tuple(sorted(c.items()))


def _load(path: str, target: str, **options):  # type: ignore[no-untyped-def]
    import traceconv

    if target.startswith("check:"):
        return traceconv.check(path, target.split(":", 1)[1], **options)
    return traceconv.load(path, format=target, **options)


def _feed(writer: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    return thread


def _same_as_file(folder: Path, target: str, data: bytes, path: str) -> None:
    """Reading ``path`` (a FIFO, a pipe) gives what the regular file gives."""
    from traceconv.errors import TraceconvError

    regular = folder / file_name(target)
    regular.write_bytes(data)
    try:
        expected: object = _load(str(regular), target)
    except TraceconvError as exc:
        expected = ("error", exc.message)
    try:
        got: object = _load(path, target)
    except TraceconvError as exc:
        got = ("error", exc.message)
    if target.startswith("check:"):
        expected, got = (getattr(x, "counts", x) for x in (expected, got))
    elif not isinstance(expected, tuple):
        expected = _counts(expected)
        got = _counts(got) if not isinstance(got, tuple) else got
    if expected != got:
        raise Broken(f"read through a non-regular file differs: {got} != {expected}")


def _input(scenario: str, folder: Path, target: str, data: bytes) -> None:
    from traceconv import special_files
    from traceconv.errors import InputError

    if scenario == "fifo-input":
        fifo = folder / ("fifo-" + file_name(target))
        os.mkfifo(fifo)
        _feed(lambda: fifo.write_bytes(data))
        _same_as_file(folder, target, data, str(fifo))
    elif scenario == "pipe-path":
        read_end, write_end = os.pipe()

        def write() -> None:
            with open(write_end, "wb") as out, contextlib.suppress(OSError):
                out.write(data)
        _feed(write)
        try:
            _same_as_file(folder, target, data, f"/proc/self/fd/{read_end}")
        finally:
            os.close(read_end)
    elif scenario == "fifo-no-writer":
        fifo = folder / "lonely.json"
        os.mkfifo(fifo)
        saved, special_files.FIFO_WAIT_SECONDS = special_files.FIFO_WAIT_SECONDS, 0.2
        try:
            _load(str(fifo), target)
            raise Broken("a FIFO with no writer was read")
        except InputError as exc:
            if "no writer" not in exc.message:
                raise
        finally:
            special_files.FIFO_WAIT_SECONDS = saved
    else:
        path = "/dev/zero" if scenario == "dev-zero" else "/proc/self/status"
        try:
            _load(path, target, max_bytes=256)
        except InputError as exc:
            if "limit" not in exc.message and scenario == "dev-zero":
                raise Broken(f"/dev/zero ended in another error: {exc}") from None


def _output(scenario: str, folder: Path, trace, rng: random.Random) -> None:  # type: ignore[no-untyped-def]
    import traceconv
    from traceconv import special_files
    from traceconv.errors import OutputError

    to = rng.choice(("chrome", "perfetto", "summary"))
    if scenario == "output-devnull":
        traceconv.save(trace, os.devnull, format=to)
        if not stat.S_ISCHR(os.stat(os.devnull).st_mode):
            raise Broken("/dev/null is no longer a device")
        return
    out = folder / "out"
    out.mkdir()
    if scenario == "output-symlink":
        real = out / "real"
        real.write_text("old")
        (out / "link").symlink_to(real)
        traceconv.save(trace, out / "link", format=to)
        if not (out / "link").is_symlink() or real.read_text(errors="replace") == "old":
            raise Broken("the symlink was replaced, or its file not written")
    elif scenario == "output-socket":
        where = out / "sock"
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(where))
            try:
                traceconv.save(trace, where, format=to)
                raise Broken("a socket was written over")
            except OutputError:
                pass
            if not stat.S_ISSOCK(os.lstat(where).st_mode):
                raise Broken("the socket was replaced")
    else:   # output-fifo: a reader on the other side, or none (refused in bounded time)
        fifo = out / "fifo"
        os.mkfifo(fifo)
        got: list[bytes] = []
        reader = rng.random() < 0.8
        if reader:
            _feed(lambda: got.append(fifo.read_bytes()))
        saved, special_files.FIFO_WAIT_SECONDS = special_files.FIFO_WAIT_SECONDS, 5.0
        try:
            traceconv.save(trace, fifo, format=to)
            if not reader:
                raise Broken("a FIFO with no reader was written")
        except OutputError:
            if reader:
                raise
        finally:
            special_files.FIFO_WAIT_SECONDS = saved
        if not stat.S_ISFIFO(os.lstat(fifo).st_mode):
            raise Broken("the FIFO was replaced by a file")
    left = [p.name for p in out.iterdir() if p.name.startswith(".traceconv-")]
    if left:
        raise Broken(f"left behind: {left}")


SIGNALLED = """
import os, signal, sys
import traceconv.formats.chrome as writer
def stopped(trace, out, **options):
    out.write(b"[" * {written})
    os.kill(os.getpid(), signal.{name})
    out.write(b"]")
writer.write = stopped
sys.argv = ["traceconv", {source!r}, "--to", "chrome", "-o", {output!r}]
from traceconv.cli import main
main()
"""


def _signal(folder: Path, data: bytes, target: str, rng: random.Random) -> None:
    source = folder / file_name(target)
    source.write_bytes(data)
    out = folder / "out"
    out.mkdir()
    name = rng.choice(SIGNALS)
    script = SIGNALLED.format(written=rng.choice((1, 4096, 1 << 20)), name=name,
                              source=str(source), output=str(out / "o.json"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=WAIT * 4, env={**os.environ, "TRACECONV_DEBUG": ""})
    if done.returncode == 1 and "error:" in done.stderr:
        return   # the seed did not read as that format: nothing was written
    if done.returncode != 128 + getattr(signal, name) and not (
            name == "SIGINT" and done.returncode == 130):
        raise Broken(f"{name}: exit status {done.returncode}: {done.stderr[-300:]}")
    if os.listdir(out):
        raise Broken(f"{name} left {os.listdir(out)}")


def _attempt(scenario: str, folder: Path, target: str, data: bytes, rng: random.Random,
             failures: dict[str, str], result: list[str]) -> None:
    """One input of ``scenario``; its outcome goes to ``result``, a new failure class to
    ``failures`` (with its traceback)."""
    import traceconv
    from traceconv.errors import TraceconvError

    try:
        if scenario.startswith("output"):
            source = folder / file_name(target)
            source.write_bytes(data)
            _output(scenario, folder, traceconv.load(source, format=target), rng)
        elif scenario == "signal":
            _signal(folder, data, target, rng)
        else:
            _input(scenario, folder, target, data)
        result.append("ok")
    except TraceconvError as exc:
        result.append("error" if exc.file else "crash: unlocated error")
    except Exception as exc:  # noqa: BLE001 - what the scenario looks for
        where = traceback.extract_tb(exc.__traceback__)[-1]
        failures.setdefault(f"{scenario}: {type(exc).__name__} at {where.name}",
                            traceback.format_exc()[-3000:])
        result.append("crash")


def run_special(seeds: dict[str, list[bytes]], per_scenario: int, seed: int = 0,
                scenarios: tuple[str, ...] = SCENARIOS,
                log: Callable[[str], None] | None = None) -> tuple[Counter, dict[str, str]]:
    """Run ``per_scenario`` inputs of each scenario; returns (outcomes per scenario,
    failure signature -> first traceback)."""
    outcomes: Counter = Counter()
    failures: dict[str, str] = {}
    readers = sorted(t for t in seeds if not t.startswith(("check:", "split:")))
    for scenario in scenarios:
        for k in range(per_scenario):
            rng = random.Random(f"{seed}:{scenario}:{k}")
            target = rng.choice(readers if scenario.startswith(("output", "signal"))
                                else sorted(t for t in seeds if not t.startswith("split:")))
            data = rng.choice(seeds[target])
            with tempfile.TemporaryDirectory(prefix="traceconv-special-") as name:
                folder = Path(name)
                result: list[str] = []
                attempt = functools.partial(_attempt, scenario, folder, target, data, rng,
                                            failures, result)
                worker = threading.Thread(target=attempt, daemon=True)
                worker.start()
                worker.join(WAIT * 5)
                status = result[0] if result else "hang"
                if status == "hang":
                    failures.setdefault(f"{scenario}: hang", f"{target} #{k}")
                outcomes[(scenario, status.split(":")[0])] += 1
        if log:
            log(f"{scenario:16} " + ", ".join(f"{s} {n}" for (sc, s), n in
                                              sorted(outcomes.items()) if sc == scenario))
    return outcomes, failures
