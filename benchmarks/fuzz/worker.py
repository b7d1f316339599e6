"""The fuzz worker: a long-lived process that makes and runs many inputs.

Each input is written to a file named like the real thing, read by one reader (format forced,
so each reader sees every mutant of its seeds) and, for one input in ``writers_every``, the
trace goes through every writer into memory, then every analysis and transformation
(:func:`_analyses`). The outcome is ``ok``, ``error`` (a handled,
located error: the contract), ``crash`` (anything else: an exception kind the code did not
expect, or an error with no location) or ``hang``.

Limits: the process runs under ``RLIMIT_AS`` (so a runaway input meets ``MemoryError``), and
a CPU-time interval timer (``ITIMER_PROF``: on a shared machine a niced worker may wait for a
core longer than an input runs) interrupts an input after ``timeout`` CPU seconds with
:class:`Hang`, whose traceback says where it was stuck. The campaign keeps a second, outer
watchdog for a hang the timer cannot interrupt (native code), and restarts the worker after
it. Times reported are CPU seconds too.
"""

from __future__ import annotations

import functools
import io
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any

from .seeds import file_name, mutant

READ_LIMIT = 64 << 20        # --max-bytes for fuzz inputs: mutants are small
# Mutants are kilobytes: read in 1 KiB pieces, the Chrome reader's chunked path (cuts, the
# typed-record column path of every piece after the first) meets them, not only the one
# whole parse that a small document gets.
CHROME_PIECE = 1024
# every writer the registry has; (a writer that cannot express the trace refuses cleanly)
WRITERS = ("chrome", "perfetto", "summary", "summary-json", "graphml", "dot", "svg")
# and the writers' options whose paths no small input takes: the Perfetto writer window by
# window (from 2^18 slices on by default) in windows of 4 slices
WRITE_RUNS = (*((name, {}) for name in WRITERS), ("perfetto", {"window_slices": 4}))


@functools.cache
def _analyses() -> tuple[tuple[str, Callable[[Any], list[Any] | None]], ...]:
    """Every analysis the command line offers, over one model (the model is frozen: one
    that tried to change it fails), and the transformations, whose results must be valid
    models. Each returns the problems of a model it made (None: it made none)."""
    import traceconv
    from traceconv import analysis
    from traceconv.analysis.steps import select_steps, step_windows
    from traceconv.cli.device_views import device_data
    from traceconv.model.validate import validate
    from traceconv.report import render_report

    def middle_half(trace: Any) -> list[Any]:
        bounds = trace.time_range
        if not bounds:
            return []
        quarter = (bounds[1] - bounds[0]) // 4
        return validate(analysis.trim(trace, window=(bounds[0] + quarter,
                                                     bounds[1] - quarter)))

    def nothing(result: Any) -> None:
        return None

    def with_a_real_run(trace: Any) -> list[Any]:   # (two different runs: diff, a job)
        real = _real_run()
        for a, b in ((trace, real), (real, trace)):
            analysis.diff(a, b)
            analysis.timeline_diff(a, b)
        analysis.job_critical_path([trace, real])
        return validate(traceconv.merge([trace, real]))

    def device_views(trace: Any) -> None:
        for definition in ("traceconv", "hta"):
            device_data(trace, launch_stats=True, streams=True, by_annotation=True,
                        sequences=3, definition=definition)

    def memory(trace: Any) -> None:   # (traceconv memory, --diff and ranks)
        report = analysis.memory_report(trace)
        analysis.memory_diff(report, report)
        analysis.memory_ranks([report, report], ["a", "b"])

    def first_steps(trace: Any) -> list[Any]:   # (--steps N:M: the two lowest numbers)
        numbers = sorted(w.number for w in step_windows(analysis.Timeline(trace)))
        if not numbers:
            return []
        return validate(select_steps(trace, f"{numbers[0]}:{numbers[min(1, len(numbers) - 1)]}"))

    return (
        ("analyse: summary", lambda t: nothing(analysis.summarize(t))),
        ("analyse: op_summary", lambda t: nothing(analysis.op_summary(t))),
        ("analyse: advise", lambda t: nothing(analysis.advise(t))),
        ("analyse: critical_path", lambda t: nothing(analysis.critical_path(t))),
        ("analyse: critical_path graph", lambda t: nothing(
            analysis.critical_path(t, "graph") if t.has_graph else None)),
        ("analyse: device views", device_views),
        ("analyse: device_idle",
         lambda t: nothing(analysis.device_idle(analysis.Timeline(t)))),
        ("analyse: stragglers", lambda t: nothing(analysis.stragglers(t))),
        ("analyse: memory", memory),
        ("analyse: diff", lambda t: nothing(analysis.diff(t, t))),
        ("analyse: timeline_diff", lambda t: nothing(analysis.timeline_diff(t, t))),
        ("analyse: align", lambda t: nothing(analysis.align([t, t]))),
        ("analyse: job_critical_path",
         lambda t: nothing(analysis.job_critical_path([t, t]))),
        ("analyse: report", lambda t: nothing(render_report(t))),
        ("transform: trim", middle_half),
        ("transform: merge", lambda t: validate(traceconv.merge([t, t]))),
        ("transform: steps", first_steps),
        ("compare: with a real run", with_a_real_run),
    )


@functools.cache
def _real_run() -> Any:
    """The other side of a comparison: a real CUDA run with streams, NCCL and steps."""
    import traceconv

    return traceconv.load(Path(__file__).parents[2] / "samples" / "torch" /
                          "streams_graph_nccl_cuda.pt.trace.json.gz")


@dataclass
class Outcome:
    status: str              # ok | error | crash | hang
    signature: str = ""      # crash, hang: exception type and innermost traceconv frame
    detail: str = ""         # crash, hang: traceback
    seconds: float = 0.0     # CPU seconds
    size: int = 0            # input bytes
    mutator: str = ""
    data: bytes = b""        # crash, hang: the input itself


class Hang(BaseException):
    """Raised by the CPU timer in the input that overran (a BaseException: readers'
    ``except Exception`` must not swallow it)."""


def _on_timer(signum: int, frame: FrameType | None) -> None:
    raise Hang


VALIDATE = False   # python -m benchmarks.fuzz --validate


def _signature(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/traceconv/" in f.filename]
    where = ""
    if frames:
        frame = frames[-1]
        where = f" at {frame.filename.rsplit('/traceconv/', 1)[1]}:{frame.name}"
    return f"{type(exc).__name__}{where}"


def run_target(target: str, path: str, write: bool = True) -> Outcome:
    """Read ``path`` as ``target`` (a format name, or ``check:<format>``), with
    :data:`VALIDATE` check the model the reader made (a broken invariant counts as a
    crash), then, if ``write``, write the
    trace in every format."""
    import traceconv
    from traceconv import registry
    from traceconv.errors import TraceconvError

    stage = "read"
    try:
        if target.startswith("check:"):
            traceconv.check(path, target.split(":", 1)[1], max_bytes=READ_LIMIT)
            return Outcome("ok")
        if target.startswith("split:"):
            return _split(path)
        trace = traceconv.load(path, format=target, max_bytes=READ_LIMIT)
        problems = traceconv.validate(trace) if VALIDATE else []
        if problems:   # a reader that read the input must make a valid model of it
            return Outcome("crash", f"read: invalid {target} model: {problems[0].invariant}",
                           "\n".join(map(str, problems)))
        stage = "write"
        for writer, options in WRITE_RUNS if write else ():
            try:
                registry.get(writer).load().write(trace, io.BytesIO(), **options)
            except TraceconvError:
                continue   # e.g. "no memory data to draw": a clean refusal
        if write:
            for stage, analyse in _analyses():
                try:
                    problems = analyse(trace)
                except TraceconvError:
                    continue   # e.g. "no device work to walk": a clean refusal
                if problems:   # a transformation must make a valid model
                    return Outcome("crash", f"{stage}: invalid result: {problems[0].invariant}",
                                   "\n".join(map(str, problems)))
        return Outcome("ok")
    except TraceconvError as exc:
        if stage == "read" and not exc.file:
            return Outcome("crash", f"unlocated error: {exc.message[:60]}", str(exc))
        return Outcome("error", detail=str(exc)[:300])
    except Hang as exc:
        return Outcome("hang", f"{stage}: hang{_signature(exc).removeprefix('Hang')}",
                       traceback.format_exc())
    except MemoryError:
        return Outcome("crash", f"{stage}: MemoryError (over the worker's memory limit)")
    except Exception as exc:  # noqa: BLE001 - every other kind is what the fuzzer looks for
        return Outcome("crash", f"{stage}: {_signature(exc)}", traceback.format_exc())


def _split(path: str) -> Outcome:
    """``split`` by time, clipped, then by step (both with the overview; a refusal, such
    as a trace without step markers, is a clean error)."""
    import shutil

    from traceconv.errors import TraceconvError
    from traceconv.splitting import split

    refused = []
    for k, (by, clip) in enumerate((("time=10ms", True), ("step", False))):
        folder = os.path.join(os.path.dirname(path), f"split{k}")
        shutil.rmtree(folder, ignore_errors=True)
        try:
            split(path, folder, by=by, clip=clip)
        except TraceconvError as exc:
            if not exc.file:
                return Outcome("crash", f"unlocated error: {exc.message[:60]}", str(exc))
            refused.append(str(exc)[:150])
    return Outcome("error", detail=" / ".join(refused)) if len(refused) == 2 else Outcome("ok")


def replay(path: str | os.PathLike[str], folder: str) -> Outcome:
    """Run a saved finding (``<target>__<class>.input``) again under the campaign's
    contract: the model check on, 10 CPU seconds (past which an input is a hang)."""
    global VALIDATE
    saved, VALIDATE = VALIDATE, True
    try:
        target = os.path.basename(path).split("__")[0]
        with open(path, "rb") as source:
            return Runner(folder, timeout=10).run(target, source.read())
    finally:
        VALIDATE = saved


def _warned(warning: warnings.WarningMessage) -> Outcome:
    """A warning (numpy's overflow, a deprecation) is a stray line on the user's stderr:
    the input fails as a crash would, named by the line that warned."""
    where = warning.filename.rsplit("/traceconv/", 1)[-1]
    return Outcome("crash", f"{warning.category.__name__} at {where}:{warning.lineno}",
                   f"{where}:{warning.lineno}: {warning.message}")


class Runner:
    """Runs one input at a time under the timer, in the worker's scratch folder."""

    def __init__(self, folder: str, timeout: float) -> None:
        self.folder, self.timeout = folder, timeout
        signal.signal(signal.SIGPROF, _on_timer)

    def run(self, target: str, data: bytes, write: bool = True) -> Outcome:
        path = os.path.join(self.folder, file_name(target))
        with open(path, "wb") as out:
            out.write(data)
        began = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, self.timeout)
        try:
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always")
                outcome = run_target(target, path, write)
        except Hang:   # the timer fired between run_target's own handlers
            outcome = Outcome("hang", "hang", traceback.format_exc())
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        if warned and outcome.status in ("ok", "error"):
            outcome = _warned(warned[0])
        outcome.seconds, outcome.size = time.process_time() - began, len(data)
        if outcome.status in ("crash", "hang"):
            outcome.data = data
        return outcome


def serve(conn: Connection, folder: str, memory_limit: int, timeout: float,
          seeds: dict[str, list[bytes]], campaign_seed: int, writers_every: int) -> None:
    """Worker loop. Jobs: ``("batch", target, first, count)`` makes and runs mutants
    ``first .. first+count-1`` and answers one ``(index, Outcome)`` per input;
    ``("data", target, bytes)`` runs those bytes (writers included) and answers an
    ``Outcome``; ``None`` ends the loop."""
    # on top of what the process maps already: a parent that imported much (a full test
    # run) would otherwise leave no room to grow the stack, and deep input segfaults
    limit = _mapped_bytes() + memory_limit
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # Python's default: a limit raised in the parent (networkx's isomorphism matcher raises
    # it and may leave it so) would let C decoders recurse past the C stack on deep JSON
    sys.setrecursionlimit(1000)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is for the campaign to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from traceconv.formats.chrome import stream

    stream.CHUNK = CHROME_PIECE
    runner = Runner(folder, timeout)
    while True:
        job = conn.recv()
        if job is None:
            return
        if job[0] == "data":
            conn.send(runner.run(job[1], job[2]))
            continue
        _, target, first, count = job
        for index in range(first, first + count):
            try:
                mutator, data = mutant(seeds, target, campaign_seed, index)
            except Exception as exc:  # noqa: BLE001 - a harness bug: reported, not fatal
                conn.send((index, Outcome("crash", f"mutator: {_signature(exc)}",
                                          traceback.format_exc())))
                continue
            outcome = runner.run(target, data, write=index % writers_every == 0)
            outcome.mutator = mutator
            conn.send((index, outcome))


def _mapped_bytes() -> int:
    """The process's virtual size now (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def preload_writers() -> None:
    """Import every writer in the campaign's process, before it forks workers: a worker
    restarted after a crash then runs the same code as the others (not what the files on
    disk say by then) and starts at once."""
    from traceconv import registry

    for writer in WRITERS:
        registry.get(writer).load()


def scratch_folder() -> str:
    """A fresh folder for the inputs, in memory where the system has one (``/dev/shm``):
    every input is a file written and read again, and on a disk file system each open
    can cost more than the input's whole run."""
    memory = "/dev/shm"
    where = memory if os.path.isdir(memory) and os.access(memory, os.W_OK) else None
    return tempfile.mkdtemp(prefix="traceconv-fuzz-", dir=where)
