"""The fuzz campaign: workers, the outer watchdog, minimised reproducers and the figures.

Work goes out in batches of mutant numbers (``(target, first, count)``) to ``jobs`` long-lived
worker processes (:mod:`.worker`), always to the target with the fewest inputs so far, so
targets stay level. A worker answers one outcome per input. A worker that dies (a signal, a
hard memory failure) or stays silent while it spends ``2 x timeout + 2`` CPU seconds (a hang
its own timer could not interrupt) or for ``30 x timeout + 60`` s of wall time (blocked, or
where the CPU time of another process cannot be read) is killed and restarted; the input it was on counts as a crash or a hang, and the
rest of its batch goes back in the queue. Crashes and hangs are grouped by signature; the
first of each class is minimised by deleting chunks of bytes while the signature stays.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import re
import shutil
import time
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

from . import seeds as seeds_module
from .seeds import collect_seeds, mutant
from .worker import Outcome, preload_writers, scratch_folder, serve

BATCH = 64          # mutants per job: small enough to keep targets level and to stop soon
PROGRESS_EVERY = 300.0   # seconds between progress lines in the log


@dataclass
class Figures:
    inputs: Counter = field(default_factory=Counter)
    outcomes: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    # inputs per generator (the class of input), by outcome
    by_mutator: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    crashes: dict[str, dict] = field(default_factory=dict)   # signature -> first sighting
    slowest: dict[str, tuple[float, int, int]] = field(default_factory=dict)  # (s, bytes, index)
    busy: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # seconds
    wall_seconds: float = 0.0

    def count(self, target: str, index: int, outcome: Outcome) -> None:
        self.inputs[target] += 1
        self.outcomes[target][outcome.status] += 1
        self.by_mutator[outcome.mutator][outcome.status] += 1
        self.busy[target] += outcome.seconds
        if outcome.seconds > self.slowest.get(target, (0.0, 0, 0))[0]:
            self.slowest[target] = (outcome.seconds, outcome.size, index)

    def as_dict(self) -> dict:
        return {"inputs": dict(self.inputs), "wall_seconds": round(self.wall_seconds, 1),
                "outcomes": {t: dict(c) for t, c in self.outcomes.items()},
                "by_mutator": {m: dict(c) for m, c in sorted(self.by_mutator.items())},
                "crash_classes": {s: {k: v for k, v in c.items() if k != "data"}
                                  for s, c in self.crashes.items()},
                "slowest": {t: {"seconds": round(s, 3), "bytes": n, "index": i}
                            for t, (s, n, i) in self.slowest.items()},
                "ms_per_input": {t: round(1000 * self.busy[t] / n, 2)
                                 for t, n in self.inputs.items() if n}}


class Worker:
    """One worker process and the batch it is on; restarted after a death or a hang."""

    def __init__(self, settings: tuple) -> None:
        self.settings = settings   # (memory limit, timeout, seeds, campaign seed, writers_every)
        self.folder = scratch_folder()
        self.batch: tuple[str, int, int] | None = None    # target, next index, end
        self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=serve, daemon=True,
                                       args=(child, self.folder, *self.settings))
        self.process.start()
        child.close()
        self.heard()

    def heard(self) -> None:
        """The worker answered (or was given work): its silence counts from now."""
        self.last_seen, self.cpu_seen = time.monotonic(), _cpu_seconds(self.process.pid)

    def stuck(self, timeout: float) -> bool:
        """Silent for longer than any input may take (see the module's docstring)."""
        if time.monotonic() - self.last_seen > 30 * timeout + 60:
            return True
        cpu = _cpu_seconds(self.process.pid)
        return cpu is not None and self.cpu_seen is not None and (
            cpu - self.cpu_seen > 2 * timeout + 2)

    def give(self, target: str, first: int, count: int) -> None:
        self.batch = (target, first, first + count)
        self.heard()
        self.conn.send(("batch", target, first, count))

    def run(self, target: str, data: bytes, timeout: float) -> Outcome:
        """Run exactly ``data`` (minimising); waits for the answer."""
        self.conn.send(("data", target, data))
        self.heard()
        while not self.conn.poll(1.0):
            if self.stuck(timeout):
                self.restart()
                return Outcome("hang", "hang (native code: no answer)", seconds=timeout)
        try:
            return self.conn.recv()
        except EOFError:
            self.restart()
            return Outcome("crash", "worker died (signal or hard memory failure)")
        return Outcome("hang", "hang (native code: no answer)", seconds=timeout)

    def restart(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()
        self._start()

    def close(self) -> None:
        with contextlib.suppress(OSError):   # (a worker that just died)
            self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``), None elsewhere."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def minimise(worker: Worker, target: str, data: bytes, signature: str, timeout: float,
             budget: int = 300) -> bytes:
    """Delete chunks (halves, quarters, ... single bytes) while the crash keeps its signature."""
    chunk = max(len(data) // 2, 1)
    runs = 0
    while chunk >= 1 and runs < budget:
        at, shrunk = 0, False
        while at < len(data) and runs < budget:
            candidate = data[:at] + data[at + chunk:]
            runs += 1
            if worker.run(target, candidate, timeout).signature == signature:
                data, shrunk = candidate, True
            else:
                at += chunk
        if not shrunk:
            chunk //= 2
    return data


def _slug(signature: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", signature)[:80].strip("_")


class Campaign:
    def __init__(self, seeds: dict[str, list[bytes]], targets: list[str], settings: tuple,
                 jobs: int, timeout: float, out: Path | None, minimise_budget: int,
                 log) -> None:  # type: ignore[no-untyped-def]
        self.seeds, self.targets, self.settings = seeds, targets, settings
        self.timeout, self.out, self.budget, self.log = timeout, out, minimise_budget, log
        self.figures = Figures()
        self.issued: Counter = Counter({t: 0 for t in targets})
        self.queue: deque[tuple[str, int, int]] = deque()
        self.workers = [Worker(settings) for _ in range(jobs)]
        self._minimiser: Worker | None = None

    def run(self, per_target: int | None, deadline: float | None) -> Figures:
        began = time.monotonic()
        try:
            self._loop(per_target, deadline)
        except KeyboardInterrupt:   # Ctrl-C ends a long run early, with its figures
            pass
        finally:
            for worker in [*self.workers, *([self._minimiser] if self._minimiser else [])]:
                worker.close()
        self.figures.wall_seconds = time.monotonic() - began
        return self.figures

    def _loop(self, per_target: int | None, deadline: float | None) -> None:
        began = last_report = time.monotonic()
        while True:
            if self.log and time.monotonic() - last_report > PROGRESS_EVERY:
                last_report = time.monotonic()
                done = sum(self.figures.inputs.values())
                self.log(f"{last_report - began:,.0f} s: {done:,} inputs "
                         f"({done / (last_report - began):,.0f}/s), fewest "
                         f"{min(self.figures.inputs.values(), default=0):,} per target, "
                         f"{len(self.figures.crashes)} crash/hang classes")
            stopping = deadline is not None and time.monotonic() > deadline
            for worker in self.workers:
                if worker.batch is None and not stopping:
                    job = self._next_job(per_target)
                    if job is not None:
                        worker.give(*job)
            busy = [w for w in self.workers if w.batch is not None]
            if not busy:
                break
            ready = wait([w.conn for w in busy], timeout=1.0)
            for worker in busy:
                if worker.conn in ready:
                    self._receive(worker)
                elif worker.stuck(self.timeout):
                    self._lost(worker, Outcome("hang", "hang (native code: no answer)",
                                               seconds=2 * self.timeout + 2))

    def _next_job(self, per_target: int | None) -> tuple[str, int, int] | None:
        if self.queue:
            return self.queue.popleft()
        target = min(self.targets, key=lambda t: self.issued[t])
        first = self.issued[target]
        count = BATCH if per_target is None else min(BATCH, per_target - first)
        if count <= 0:
            return None
        self.issued[target] += count
        return target, first, count

    def _receive(self, worker: Worker) -> None:
        assert worker.batch is not None
        target, _, end = worker.batch
        try:
            got, outcome = worker.conn.recv()
        except (EOFError, OSError):
            self._lost(worker, Outcome("crash", "worker died (signal or hard memory failure)"))
            return
        worker.heard()
        worker.batch = (target, got + 1, end) if got + 1 < end else None
        self._count(target, got, outcome)

    def _lost(self, worker: Worker, outcome: Outcome) -> None:
        """The worker died or hung on its current input: count it, restart, requeue."""
        assert worker.batch is not None
        target, index, end = worker.batch
        worker.restart()
        worker.batch = None
        if index + 1 < end:
            self.queue.append((target, index + 1, end - index - 1))
        mutator, data = mutant(self.seeds, target, self.settings[3], index)
        outcome.mutator, outcome.data, outcome.size = mutator, data, len(data)
        self._count(target, index, outcome)

    def _count(self, target: str, index: int, outcome: Outcome) -> None:
        self.figures.count(target, index, outcome)
        if outcome.status not in ("crash", "hang"):
            return
        known = self.figures.crashes.get(outcome.signature)
        if known is not None:
            known["count"] += 1
            return
        small = outcome.data
        if outcome.status == "crash" and self.budget:
            small = minimise(self._minimiser_worker(), target, small, outcome.signature,
                             self.timeout, self.budget)
            for worker in self.workers:   # their silence while we minimised is not a hang
                worker.heard()
        self.figures.crashes[outcome.signature] = {
            "target": target, "index": index, "mutator": outcome.mutator, "count": 1,
            "bytes": len(small), "detail": outcome.detail[-2000:]}
        if self.log:
            self.log(f"{target} #{index}: {outcome.signature} "
                     f"({len(outcome.data)} -> {len(small)} bytes)")
        if self.out is not None:
            name = f"{target.replace(':', '-')}__{_slug(outcome.signature)}"
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / f"{name}.input").write_bytes(small)
            (self.out / f"{name}.txt").write_text(
                f"target: {target}\nindex: {index}\nmutator: {outcome.mutator}\n"
                f"signature: {outcome.signature}\n\n{outcome.detail}")

    def _minimiser_worker(self) -> Worker:
        if self._minimiser is None:
            self._minimiser = Worker(self.settings)
        return self._minimiser


def run_campaign(*, per_target: int | None = None, seconds: float | None = None,
                 seed: int = 0, timeout: float = 10.0, memory_limit: int = 2 << 30,
                 out: Path | None = None, targets: list[str] | None = None,
                 writers_every: int = 1, jobs: int = 1, minimise_budget: int = 300,
                 families: bool = True, log=None) -> Figures:  # type: ignore[no-untyped-def]
    """Fuzz each target with mutants ``0 .. per_target-1``, or for ``seconds``.

    The inputs are a function of ``seed`` and their numbers, so a ``per_target`` run is the
    same on every machine and with any ``jobs``. Writers run on every ``writers_every``-th
    input that reads. Reproducers (minimised), the slowest input per target and
    ``figures.json`` go to ``out`` when given. With ``families``, the hostile families of
    :mod:`.families` are among the mutators and the registry's seeds in the pools.
    """
    saved, seeds_module.FAMILIES_ON = seeds_module.FAMILIES_ON, families
    try:
        return _run(per_target, seconds, seed, timeout, memory_limit, out, targets,
                    writers_every, jobs, minimise_budget, log)
    finally:
        seeds_module.FAMILIES_ON = saved


def _run(per_target, seconds, seed, timeout, memory_limit, out, targets,  # type: ignore[no-untyped-def]
         writers_every, jobs, minimise_budget, log) -> Figures:
    folder = Path(scratch_folder())
    try:
        seeds = collect_seeds(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    preload_writers()
    chosen = [t for t in (targets or sorted(seeds)) if t in seeds]
    settings = (memory_limit, timeout, seeds, seed, writers_every)
    campaign = Campaign(seeds, chosen, settings, jobs, timeout, out, minimise_budget, log)
    deadline = None if seconds is None else time.monotonic() + seconds
    figures = campaign.run(per_target, deadline)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "figures.json").write_text(json.dumps(figures.as_dict(), indent=2))
        slowest = out / "slowest"
        slowest.mkdir(exist_ok=True)
        for target, (_, _, index) in figures.slowest.items():
            (slowest / f"{target.replace(':', '-')}.input").write_bytes(
                mutant(seeds, target, seed, index)[1])
    return figures
