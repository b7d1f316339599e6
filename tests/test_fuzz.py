"""A short, deterministic fuzz run over every reader, checker and writer (issue 15).

The long run is ``nice python -m benchmarks.fuzz --seconds 3600 --out fuzz-out`` (see
``benchmarks/fuzz/__main__.py``); this one replays the same numbered inputs on every CI run,
writers on every input: any crash class (an exception other than a located
``TraceconvError``) or hang fails it, with the traceback of the first sighting.
"""

from __future__ import annotations

import random
import signal

import pytest

from benchmarks.fuzz import campaign, worker
from benchmarks.fuzz.campaign import run_campaign
from benchmarks.fuzz.mutators import mutate, parse_wire, write_wire
from benchmarks.fuzz.seeds import KINDS, collect_seeds, mutant

pytestmark = pytest.mark.slow

PER_TARGET = 200   # per target; the writers on every second one (168 s on a loaded
WRITERS_EVERY = 2  # machine with every writer on every input, about half that now)


def test_short_fuzz_run_finds_no_crash_and_no_hang(tmp_path):
    # (without the matrix's families: the classes they find still open are marked in
    # tests/test_hostile_matrix.py; this run keeps to the mutants it always replayed)
    figures = run_campaign(per_target=PER_TARGET, seed=0, timeout=20.0, minimise_budget=0,
                           writers_every=WRITERS_EVERY, out=tmp_path, families=False)
    assert set(figures.inputs) == set(KINDS), "every reader and checker gets inputs"
    assert all(count == PER_TARGET for count in figures.inputs.values())
    report = "\n\n".join(f"{sig} ({c['target']}):\n{c['detail']}"
                         for sig, c in figures.crashes.items())
    assert not figures.crashes, report
    assert len(list((tmp_path / "slowest").iterdir())) == len(KINDS)


def test_mutants_are_deterministic_and_wire_edits_round_trip(tmp_path):
    seeds = collect_seeds(tmp_path)
    pb = seeds["paddle-pb"][0]
    assert write_wire(parse_wire(pb)) == pb   # the wire codec loses nothing
    first = [mutate(KINDS[t], seeds[t][0], random.Random(7), seeds[t]) for t in sorted(seeds)]
    again = [mutate(KINDS[t], seeds[t][0], random.Random(7), seeds[t]) for t in sorted(seeds)]
    assert first == again
    changed = sum(data != seeds[t][0] for t, (_, data) in zip(sorted(seeds), first, strict=True))
    assert changed >= len(first) - 2   # (a swap may pick the same element twice)
    # a numbered mutant does not depend on what was made before it (no hostile value is
    # shared between mutants, where a later edit could change it in place)
    for target in ("chrome", "torch-snapshot", "megengine"):
        first = mutant(seeds, target, 3, 17)
        for i in range(200):
            mutant(seeds, target, 3, i)
        assert mutant(seeds, target, 3, 17) == first


def test_the_timer_turns_a_stuck_input_into_a_located_hang(tmp_path, monkeypatch):
    def stuck(target, path, write=True):
        while True:   # (CPU time: the timer counts the worker's CPU seconds)
            pass

    monkeypatch.setattr(worker, "run_target", stuck)
    outcome = worker.Runner(str(tmp_path), timeout=0.2).run("migraphx", b"x")
    assert outcome.status == "hang" and outcome.data == b"x"
    assert "in stuck" in outcome.detail


def test_a_warning_fails_the_input_where_it_was_raised(tmp_path, monkeypatch):
    """numpy's overflow warning is a stray line on the user's stderr: the input that makes
    it is a crash class named by the line, however the read ended."""
    import numpy as np

    def overflowing(target, path, write=True):
        np.float64(1e308) * 10   # (numpy warns "overflow encountered")
        return worker.Outcome("error")

    monkeypatch.setattr(worker, "run_target", overflowing)
    outcome = worker.Runner(str(tmp_path), timeout=5).run("migraphx", b"x")
    assert outcome.status == "crash" and outcome.data == b"x"
    assert outcome.signature.startswith("RuntimeWarning at ")
    assert "test_fuzz.py" in outcome.signature and "overflow" in outcome.detail


def test_a_worker_stuck_in_native_code_is_killed_and_restarted(monkeypatch):
    def spin(conn, *settings):   # stands for native code: deaf to the CPU timer
        signal.signal(signal.SIGPROF, signal.SIG_IGN)
        if conn.recv() is None:
            return
        while True:
            pass

    monkeypatch.setattr(campaign, "serve", spin)
    stuck = campaign.Worker((1 << 30, 0.1, {}, 0, 1))
    first = stuck.process.pid
    try:
        outcome = stuck.run("migraphx", b"x", timeout=0.1)
        assert outcome.status == "hang" and "native code" in outcome.signature
        assert stuck.process.pid != first and stuck.process.is_alive()   # a fresh worker
    finally:
        stuck.close()


def test_the_classes_of_issue_23_are_generated(tmp_path):
    # every kind draws the new mutators, and each makes what its class is about
    from benchmarks.fuzz import hostile
    from benchmarks.fuzz.mutators import MUTATORS

    for kind, extra in hostile.HOSTILE_MUTATORS.items():
        assert all(m in [mm for mm, _ in MUTATORS[kind]] for m, _ in extra)
    seeds = collect_seeds(tmp_path)
    rng = random.Random(3)
    json_seed = next(s for s in seeds["chrome"] if _is_json_object(s))
    text_seed = seeds["paddle-report"][0]
    assert b"[" * 500 in hostile.deepen_json(json_seed, rng, [])
    dressed = {hostile.dress(text_seed, random.Random(i), [])[:4] for i in range(40)}
    assert {b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"} <= {d[:3] if d[:3] == b"\xef\xbb\xbf"
                                                          else d[:2] for d in dressed}
    amplified = [hostile.pickle_amplify(seeds["torch-snapshot"][0], random.Random(i), [])
                 for i in range(6)]
    assert any(len(a) < 4 * len(seeds["torch-snapshot"][0]) + (2 << 20) for a in amplified)
    assert hostile.semantic_json(json_seed, rng, []) != json_seed
    # targets come from the registry: every reader and every checker; and split
    from traceconv import registry

    names = {f.name for f in registry.all_formats() if f.reads}
    names |= {f"check:{f.name}" for f in registry.all_formats() if f.checks}
    assert set(KINDS) == names | {"split:chrome"}


def test_special_files_and_signals_keep_their_contract():
    from benchmarks.fuzz.special import SCENARIOS, run_special

    seeds = collect_seeds_cached()
    outcomes, failures = run_special(seeds, per_scenario=2, seed=5)
    assert not failures, "\n\n".join(f"{k}:\n{v}" for k, v in failures.items())
    assert {scenario for scenario, _ in outcomes} == set(SCENARIOS)
    assert not any(status in ("crash", "hang") for _, status in outcomes)


def collect_seeds_cached():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        return collect_seeds(Path(folder))


def _is_json_object(data: bytes) -> bool:
    import json

    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False
