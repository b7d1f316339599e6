"""A short, deterministic fuzz run over every reader, checker and writer (issue 15).

The long run is ``python -m benchmarks.fuzz --seconds 3600 --out fuzz-out`` (see
``benchmarks/fuzz/__main__.py``); this one replays the same fixed inputs on every CI run: any
crash class (an exception other than a located ``TraceconvError``) or hang fails it, with the
traceback of the first sighting.
"""

from __future__ import annotations

import random

from benchmarks.fuzz.campaign import KINDS, collect_seeds, run_campaign
from benchmarks.fuzz.mutators import mutate, parse_wire, write_wire

PER_TARGET = 40   # x 12 targets: about a minute on a loaded CI machine


def test_short_fuzz_run_finds_no_crash_and_no_hang(tmp_path):
    figures = run_campaign(per_target=PER_TARGET, seed=0, timeout=20.0, minimise_budget=0,
                           out=tmp_path)
    assert set(figures.inputs) == set(KINDS), "every reader and checker gets inputs"
    assert all(count == PER_TARGET for count in figures.inputs.values())
    report = "\n\n".join(f"{sig} ({c['target']}):\n{c['detail']}"
                         for sig, c in figures.crashes.items())
    assert not figures.crashes, report


def test_mutants_are_deterministic_and_wire_edits_round_trip(tmp_path):
    seeds = collect_seeds(tmp_path)
    pb = seeds["paddle-pb"][0]
    assert write_wire(parse_wire(pb)) == pb   # the wire codec loses nothing
    first = [mutate(KINDS[t], seeds[t][0], random.Random(7), seeds[t]) for t in sorted(seeds)]
    again = [mutate(KINDS[t], seeds[t][0], random.Random(7), seeds[t]) for t in sorted(seeds)]
    assert first == again
    changed = sum(data != seeds[t][0] for t, (_, data) in zip(sorted(seeds), first, strict=True))
    assert changed >= len(first) - 2   # (a swap may pick the same element twice)
