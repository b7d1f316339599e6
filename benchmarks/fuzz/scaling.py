"""Scaling families: the same shape of input at 1x, 2x, 4x, 8x, timed per reader and command.

A hostile input need not be malformed to hurt: flows spread over many threads, one slice
per thread, an execution trace whose nodes form one long parent chain, an event with a
great many distinct argument names. Each family makes such an input of ``n`` units; each
step reads it (or reads and runs a command / writer) and its CPU time is taken at every
size. Work that grows more than :data:`LIMIT` times per doubling is super-linear.

    nice -n 19 python -m benchmarks.fuzz.scaling --base 2000       # the table in the notes
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from . import families

LIMIT = 2.3   # the most a doubling of the input may multiply the time by


def flows_over_threads(n: int) -> tuple[str, bytes]:
    """``n`` threads, one slice each, a flow from every slice to the next thread's."""
    events: list[dict] = []
    for i in range(n):
        events.append({"ph": "X", "name": f"op{i}", "ts": i, "dur": 2, "pid": 1, "tid": i})
        events.append({"ph": "s", "id": i, "name": "f", "cat": "c", "ts": i, "pid": 1, "tid": i})
        events.append({"ph": "f", "id": i, "name": "f", "cat": "c", "ts": i + 1, "pid": 1,
                       "tid": (i + 1) % n, "bp": "e"})
    return "t.json", json.dumps({"traceEvents": events}).encode()


def slice_per_thread(n: int) -> tuple[str, bytes]:
    """``n`` threads with one slice each."""
    events = [{"ph": "X", "name": f"op{i % 50}", "ts": i, "dur": 5, "pid": 1, "tid": i}
              for i in range(n)]
    return "t.json", json.dumps({"traceEvents": events}).encode()


def et_parent_chain(n: int) -> tuple[str, bytes]:
    """An execution trace whose ``n`` nodes are each the parent of the next."""
    nodes = [{"id": i + 1, "name": f"op{i}", "ctrl_deps": i,
              "inputs": {"values": [], "shapes": [], "types": []},
              "outputs": {"values": [], "shapes": [], "types": []}} for i in range(n)]
    return "t_et.json", json.dumps({"schema": "1.1.1-chakra.0.0.4", "nodes": nodes}).encode()


def many_arg_names(n: int) -> tuple[str, bytes]:
    """One slice with ``n`` distinct argument names (each a distinct interned string)."""
    args = {f"key_{i}": i for i in range(n)}
    events = [{"ph": "X", "name": "op", "ts": 0, "dur": 5, "pid": 1, "tid": 1, "args": args}]
    return "t.json", json.dumps({"traceEvents": events}).encode()


def deep_nesting(n: int) -> tuple[str, bytes]:
    """``n`` slices on one thread, each inside the one before."""
    events = [{"ph": "X", "name": f"op{i % 50}", "ts": i, "dur": 2 * (n - i), "pid": 1,
               "tid": 1} for i in range(n)]
    return "t.json", json.dumps({"traceEvents": events}).encode()


SEED_UNITS = 250   # units per copy of a registry seed (--base 2000: 8 copies at 1x)


def _seed_family(seed: families.Seed) -> Callable[[int], tuple[str, bytes]]:
    """A reader's registry seed repeated ``ceil(n / SEED_UNITS)`` times in its own syntax
    (:func:`.families.scaled`)."""
    def family(n: int) -> tuple[str, bytes]:
        return seed.name, families.scaled(seed, -(-n // SEED_UNITS))
    return family


FAMILIES: dict[str, Callable[[int], tuple[str, bytes]]] = {
    "flows over threads": flows_over_threads, "one slice per thread": slice_per_thread,
    "ET parent chain": et_parent_chain, "distinct arg names": many_arg_names,
    "nesting": deep_nesting,
    # every registered reader, from the seed the registry names for it
    **{f"{seed.reader} seed ({seed.name})": _seed_family(seed)
       for seed in families.registry_seeds()},
}
# family -> the format its inputs are read as (the others: detected)
READER_OF = {f"{seed.reader} seed ({seed.name})": seed.reader
             for seed in families.registry_seeds()}


def _steps(path: str, format: str | None = None) -> dict[str, Callable[[], object]]:
    """What is timed on one input: the read, each writer, each analysis command."""
    import traceconv
    from traceconv import registry

    trace = traceconv.load(path, format=format)
    steps: dict[str, Callable[[], object]] = {
        "read": lambda: traceconv.load(path, format=format)}
    forced = ("--format", format) if format else ()
    steps["info"] = lambda: _command("info", "--json", path, *forced)
    for writer in (f.name for f in registry.all_formats() if f.writes):
        steps[f"-> {writer}"] = (lambda w=writer: registry.get(w).load().write(
            trace, io.BytesIO()))
    steps["diff"] = lambda: _command("diff", "--json", path, path)
    from traceconv.analysis.advise import advise
    from traceconv.analysis.critical_path import critical_path
    from traceconv.report import render_report

    steps["advise"] = lambda: advise(trace)
    steps["critical-path"] = lambda: critical_path(trace, "timeline")
    steps["report"] = lambda: render_report(trace)
    return steps


def _command(*args: str) -> None:
    """One CLI command in this process (its reads included); a refusal (exit 1) counts as
    done, anything else is an error of the step."""
    from click.testing import CliRunner

    from traceconv.cli import app

    result = CliRunner().invoke(app, list(args))
    if result.exit_code not in (0, 1):
        raise RuntimeError(f"exit {result.exit_code}: {result.output[-200:]}")


def _cpu(step: Callable[[], object]) -> float:
    began = time.process_time()
    step()
    return time.process_time() - began


def measure(base: int, sizes: tuple[int, ...] = (1, 2, 4, 8), families: list[str] | None = None,
            log: Callable[[str], None] = print, repeat: int = 1) -> list[dict]:
    """CPU seconds per (family, step) at ``base`` x each size (the least of ``repeat``
    runs: on a shared machine single runs stray by 30 %); one row per (family, step) with
    the worst growth per doubling."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for family in families or list(FAMILIES):
            times: dict[str, list[float]] = {}
            for scale in sizes:
                name, data = FAMILIES[family](base * scale)
                path = os.path.join(folder, name)
                Path(path).write_bytes(data)
                for step, run in _steps(path, READER_OF.get(family)).items():
                    try:
                        seconds = min(_cpu(run) for _ in range(repeat))
                    except Exception as exc:  # noqa: BLE001 - a refusal is a result too
                        seconds = float("nan")
                        log(f"{family} x{scale} {step}: {type(exc).__name__}: {exc}"[:160])
                    times.setdefault(step, []).append(seconds)
            for step, seconds in times.items():
                growth = max((b / a for a, b in zip(seconds, seconds[1:], strict=False)
                              if a > 0.05), default=float("nan"))
                row = {"family": family, "step": step, "seconds": seconds, "growth": growth}
                rows.append(row)
                log(f"{family:20} {step:14} " + " ".join(f"{s:7.3f}" for s in seconds)
                    + f"   x{growth:.2f} per doubling" + ("  SUPER-LINEAR" if growth > LIMIT
                                                         else ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz.scaling",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=int, default=2000, help="units at 1x (default 2000)")
    parser.add_argument("--family", action="append", choices=list(FAMILIES))
    parser.add_argument("--repeat", type=int, default=1, help="runs per step, the least "
                        "counts (default 1)")
    args = parser.parse_args()
    measure(args.base, families=args.family, repeat=max(args.repeat, 1))


if __name__ == "__main__":
    main()
