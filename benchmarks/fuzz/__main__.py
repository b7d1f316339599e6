"""``python -m benchmarks.fuzz``: a fuzz campaign over every reader, checker and writer.

    nice -n 19 python -m benchmarks.fuzz --seconds 3600 --jobs 1 --out fuzz-out   # long run
    python -m benchmarks.fuzz --per-target 40 --writers-every 1 --seed 0        # the test's run

Readers see every input; the writers, then the analyses and transformations, run on one
input in ``--writers-every`` (the inputs whose number is a multiple of it) that read; an
input that makes a warning (numpy's overflow) fails as a crash does. Prints one line per new crash or hang class and the
figures at the end; with ``--out``, minimised reproducers (``*.input`` + ``*.txt`` with the
traceback and the input's number), the slowest input of each target (``slowest/``) and
``figures.json``. Exit status 1 when a crash or hang class was found.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from .campaign import run_campaign


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt   # the campaign stops and reports what it ran


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, help="run for this long")
    parser.add_argument("--per-target", type=int,
                        help="inputs per target, numbers 0 .. N-1 (deterministic)")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--writers-every", type=int, default=8, metavar="N",
                        help="run the 7 writers (and the Perfetto one window by window), then "
                             "the analyses and transformations, on every N-th input "
                             "(default 8; 1: all)")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds an input may take before it counts as a hang")
    parser.add_argument("--memory", type=int, default=2048, help="MiB per worker (RLIMIT_AS)")
    parser.add_argument("--target", action="append", dest="targets",
                        help="a reader format, check:perfetto / check:chrome, or split:chrome "
                             "(repeatable)")
    parser.add_argument("--out", type=Path, help="folder for reproducers and figures.json")
    parser.add_argument("--special", type=int, metavar="N",
                        help="first run N inputs of each special-file and signal scenario")
    parser.add_argument("--no-families", dest="families", action="store_false",
                        help="leave out the hostile families of the matrix "
                             "(benchmarks/fuzz/families.py) and the registry's seeds")
    parser.add_argument("--validate", action="store_true",
                        help="also count a read whose model breaks an invariant "
                             "(traceconv.validate) as a crash")
    args = parser.parse_args()
    if args.validate:   # set before the workers fork
        from . import worker

        worker.VALIDATE = True
    if args.seconds is None and args.per_target is None and args.special is None:
        parser.error("say --seconds, --per-target or --special")
    if args.special:
        _special(args.special, args.seed)
        if args.seconds is None and args.per_target is None:
            return
    signal.signal(signal.SIGTERM, _stop)   # (a background job does not get Ctrl-C)
    figures = run_campaign(per_target=args.per_target, seconds=args.seconds, seed=args.seed,
                           timeout=args.timeout, memory_limit=args.memory << 20, out=args.out,
                           targets=args.targets, writers_every=max(args.writers_every, 1),
                           jobs=max(args.jobs, 1), families=args.families,
                           log=lambda line: print(line, flush=True))
    total = sum(figures.inputs.values())
    print(f"{total:,} inputs in {figures.wall_seconds:,.0f} s "
          f"({total / max(figures.wall_seconds, 1e-9):,.0f} inputs/s, {args.jobs} job(s))")
    for target, outcomes in sorted(figures.outcomes.items()):
        seconds, size, index = figures.slowest.get(target, (0.0, 0, 0))
        print(f"{target:22} {figures.inputs[target]:>9,} {dict(outcomes)}  "
              f"slowest #{index}: {seconds:.3f} s ({size:,} bytes)")
    print(f"crash and hang classes: {len(figures.crashes)}")
    sys.exit(1 if figures.crashes else 0)


def _special(per_scenario: int, seed: int) -> None:
    """The special-file and signal scenarios (:mod:`.special`); exit 1 on a failure."""
    import shutil

    from .seeds import collect_seeds
    from .special import run_special
    from .worker import scratch_folder

    folder = Path(scratch_folder())
    try:
        seeds = collect_seeds(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    outcomes, failures = run_special(seeds, per_scenario, seed,
                                     log=lambda line: print(line, flush=True))
    print(f"special inputs: {sum(outcomes.values()):,}; failure classes: {len(failures)}")
    for signature, detail in failures.items():
        print(f"--- {signature}\n{detail}")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
