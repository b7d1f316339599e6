"""The fuzz campaign: seeds, targets, a watchdog per input, minimised reproducers, figures.

Seeds are the project's own inputs (``samples/``, ``tests/data/``), recognised by the
registry and shrunk to a few hundred events so each mutant runs in milliseconds. Every
reader gets the mutants of its seeds; the two checkers (``check:perfetto``,
``check:chrome``) get mutants of files traceconv wrote. Each input runs in a worker process
under ``RLIMIT_AS``; the parent waits ``timeout`` seconds and kills a worker that does not
answer (a hang). Crashes are grouped by signature and minimised by deleting chunks of bytes
while the signature stays.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import multiprocessing
import random
import re
import shutil
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .mutators import mutate, parse_wire, write_wire
from .worker import Outcome, scratch_folder, serve

ROOT = Path(__file__).resolve().parents[2]
SEED_DIRS = (ROOT / "samples", ROOT / "tests" / "data")
KINDS = {"chrome": "json", "megengine": "json", "megengine-meminfo": "json",
         "torch-memory": "json", "paddle-report": "text", "paddle-summary": "text",
         "migraphx": "text", "paddle-profile": "protobuf", "paddle-pb": "protobuf",
         "megengine-memflow-svg": "svg", "check:perfetto": "protobuf", "check:chrome": "json"}
# the file name a mutant gets: some readers look at it (StaticMemoryInfo.json, ...)
FILE_NAMES = {"megengine-meminfo": "StaticMemoryInfo.json",
              "megengine-memflow-svg": "memory_flow.svg", "paddle-pb": "t.paddle_trace.pb",
              "paddle-profile": "t.profile", "torch-memory": "t.raw.json",
              "check:perfetto": "t.pftrace"}
MAX_EVENTS = 150          # events kept per seed
MAX_TEXT = 24 << 10       # bytes kept per text seed
MAX_REPEATED = 40         # protobuf: occurrences kept of any repeated field


@dataclass
class Figures:
    inputs: Counter = field(default_factory=Counter)
    outcomes: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    crashes: dict[str, dict] = field(default_factory=dict)   # signature -> first sighting
    slowest: dict[str, tuple[float, int]] = field(default_factory=dict)  # target -> (s, bytes)

    def as_dict(self) -> dict:
        return {"inputs": dict(self.inputs),
                "outcomes": {t: dict(c) for t, c in self.outcomes.items()},
                "crash_classes": {s: {k: v for k, v in c.items() if k != "data"}
                                  for s, c in self.crashes.items()},
                "slowest": {t: {"seconds": round(s, 3), "bytes": n}
                            for t, (s, n) in self.slowest.items()}}


# -- seeds --------------------------------------------------------------------------------

def _shrink(kind: str, data: bytes) -> bytes:
    if kind == "json":
        try:
            doc = json.loads(data)
        except ValueError:
            return data[:MAX_TEXT]
        return json.dumps(_cap_lists(doc)).encode()
    if kind == "protobuf":
        try:
            return write_wire(_cap(parse_wire(data)))
        except ValueError:
            return data
    if len(data) > MAX_TEXT:
        return data[:data.rfind(b"\n", 0, MAX_TEXT) + 1] or data[:MAX_TEXT]
    return data


def _cap_lists(value):  # type: ignore[no-untyped-def]
    """Every list or mapping (events, oprs, memory records) cut to its first MAX_EVENTS
    items."""
    if isinstance(value, list):
        return [_cap_lists(v) for v in value[:MAX_EVENTS]]
    if isinstance(value, dict):
        return {k: _cap_lists(v) for k, v in list(value.items())[:MAX_EVENTS]}
    return value


def _cap(fields: list) -> list:
    seen: Counter = Counter()
    kept = []
    for number, wire, value in fields:
        seen[number] += 1
        if seen[number] <= MAX_REPEATED:
            kept.append((number, wire, _cap(value) if isinstance(value, list) else value))
    return kept


def _written_pftraces(json_seeds: list[bytes], folder: Path) -> list[bytes]:
    """Perfetto files traceconv writes from a few Chrome seeds (the checker's inputs)."""
    import io

    import traceconv
    from traceconv.formats import perfetto

    out = []
    for i, data in enumerate(json_seeds[:6]):
        path = folder / f"seed{i}.json"
        path.write_bytes(data)
        try:
            buffer = io.BytesIO()
            perfetto.write(traceconv.load(path, format="chrome"), buffer)
            out.append(buffer.getvalue())
        except Exception:  # noqa: BLE001 - a seed that does not convert is not a seed
            continue
    return out


def collect_seeds(folder: Path) -> dict[str, list[bytes]]:
    """target -> shrunk, distinct seed contents."""
    from traceconv import registry
    from traceconv.io import Source

    seeds: dict[str, dict[str, bytes]] = defaultdict(dict)
    for directory in SEED_DIRS:
        for path in sorted(directory.rglob("*")):
            if not path.is_file() or path.suffix in (".md", ".py"):
                continue
            try:
                name = registry.detect(Source(path)).name
            except Exception:  # noqa: BLE001 - not an input of any reader
                continue
            if name not in KINDS:
                continue
            raw = path.read_bytes()
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            data = _shrink(KINDS[name], raw)
            seeds[name][hashlib.sha1(data).hexdigest()] = data
    seeds["check:chrome"] = dict(seeds["chrome"])
    pftraces = _written_pftraces(list(seeds["chrome"].values()), folder)
    seeds["check:perfetto"] = {hashlib.sha1(d).hexdigest(): d for d in pftraces}
    return {target: list(by_hash.values()) for target, by_hash in seeds.items() if by_hash}


# -- the watchdog -------------------------------------------------------------------------

class Worker:
    """A worker process; restarted after a hang or a hard crash."""

    def __init__(self, memory_limit: int, timeout: float) -> None:
        self.memory_limit, self.timeout = memory_limit, timeout
        self.folder = scratch_folder()
        self.context = multiprocessing.get_context("fork")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=serve, daemon=True,
                                            args=(child, self.memory_limit, self.folder))
        self.process.start()

    def run(self, target: str, data: bytes) -> Outcome:
        self.conn.send((target, FILE_NAMES.get(target, "t.json" if KINDS[target] == "json"
                                                else "t.txt"), data))
        if self.conn.poll(self.timeout):
            try:
                return self.conn.recv()
            except EOFError:
                self.restart()
                return Outcome("crash", "worker died (signal or hard memory failure)")
        self.restart()
        return Outcome("hang", f"hang (no answer in {self.timeout:g} s)", seconds=self.timeout)

    def restart(self) -> None:
        self.process.kill()
        self.process.join()
        self._start()

    def close(self) -> None:
        self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


# -- minimising ---------------------------------------------------------------------------

def minimise(worker: Worker, target: str, data: bytes, signature: str,
             budget: int = 300) -> bytes:
    """Delete chunks (halves, quarters, ... single bytes) while the crash keeps its signature."""
    chunk = max(len(data) // 2, 1)
    runs = 0
    while chunk >= 1 and runs < budget:
        at, shrunk = 0, False
        while at < len(data) and runs < budget:
            candidate = data[:at] + data[at + chunk:]
            runs += 1
            if worker.run(target, candidate).signature == signature:
                data, shrunk = candidate, True
            else:
                at += chunk
        if not shrunk:
            chunk //= 2
    return data


def _slug(signature: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", signature)[:80].strip("_")


# -- the campaign -------------------------------------------------------------------------

def run_campaign(*, per_target: int | None = None, seconds: float | None = None,
                 seed: int = 0, timeout: float = 10.0, memory_limit: int = 2 << 30,
                 out: Path | None = None, targets: list[str] | None = None,
                 minimise_budget: int = 300, log=None) -> Figures:
    """Fuzz each target with ``per_target`` inputs, or round-robin for ``seconds``.

    Deterministic for a given ``seed`` and input count. Reproducers (minimised) and
    ``figures.json`` go to ``out`` when given.
    """
    folder = Path(scratch_folder())
    seeds = collect_seeds(folder)
    chosen = [t for t in (targets or sorted(seeds)) if t in seeds]
    figures = Figures()
    worker = Worker(memory_limit, timeout)
    rngs = {t: random.Random(f"{seed}:{t}") for t in chosen}
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        round_ = 0
        while True:
            if per_target is not None and round_ >= per_target:
                break
            if deadline is not None and time.monotonic() > deadline:
                break
            for target in chosen:
                rng, pool = rngs[target], seeds[target]
                base = rng.choice(pool)
                mutator, data = mutate(KINDS[target], base, rng, pool)
                outcome = worker.run(target, data)
                figures.inputs[target] += 1
                figures.outcomes[target][outcome.status] += 1
                slowest = figures.slowest.get(target, (0.0, 0))
                if outcome.seconds > slowest[0]:
                    figures.slowest[target] = (outcome.seconds, len(data))
                if outcome.status in ("crash", "hang"):
                    _record(figures, worker, target, mutator, data, outcome, out,
                            minimise_budget, log)
            round_ += 1
    finally:
        worker.close()
        shutil.rmtree(folder, ignore_errors=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "figures.json").write_text(json.dumps(figures.as_dict(), indent=2))
    return figures


def _record(figures: Figures, worker: Worker, target: str, mutator: str, data: bytes,
            outcome: Outcome, out: Path | None, budget: int, log) -> None:
    known = figures.crashes.get(outcome.signature)
    if known is not None:
        known["count"] += 1
        return
    small = data
    if outcome.status == "crash" and budget:
        small = minimise(worker, target, data, outcome.signature, budget)
    figures.crashes[outcome.signature] = {"target": target, "mutator": mutator, "count": 1,
                                          "bytes": len(small), "detail": outcome.detail[-2000:]}
    if log:
        log(f"{target}: {outcome.signature} ({len(data)} -> {len(small)} bytes)")
    if out is not None:
        name = f"{target.replace(':', '-')}__{_slug(outcome.signature)}"
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.input").write_bytes(small)
        (out / f"{name}.txt").write_text(f"target: {target}\nmutator: {mutator}\n"
                                         f"signature: {outcome.signature}\n\n{outcome.detail}")
