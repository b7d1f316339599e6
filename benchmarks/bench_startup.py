"""Benchmark: command-line start-up against what it cannot avoid (the yardsticks).

    python benchmarks/bench_startup.py                 # 10 runs of each row, alternating
    python benchmarks/bench_startup.py --runs 20
    python benchmarks/bench_startup.py --code /tmp/old-checkout   # another version's code
    python benchmarks/bench_startup.py --compare /tmp/old-checkout   # both, interleaved

Rows (median wall time of fresh processes; each row's runs alternate with its yardstick's,
so a drift of the machine's speed hits both sides alike):

- ``traceconv --version`` against ``python -c "import click, rich"`` (target: at most 2);
- ``traceconv info`` on a 1 MB trace (``samples/torch/cnn_step5.pt.trace.json``) against
  ``python -c "import click, rich.console, numpy, msgspec"`` plus decoding that file with
  msgspec (target: at most 1.6): what any command that reads a trace must pay;
- ``traceconv info`` on a small JSON file no format claims (``{"a": 1}``: "cannot tell the
  format", exit 1), against the ``--version`` yardstick: detection imports no reader;
- ``traceconv COMMAND --help`` for every command, against the ``--version`` yardstick.

Byte code is written and used (``PYTHONDONTWRITEBYTECODE`` is dropped for the runs), as in
an installed package: compiling traceconv's modules from source would cost more than any
import here. ``--code DIR`` runs the ``traceconv`` package found in DIR (``PYTHONPATH``); ``--compare
DIR`` adds a column for DIR's package, its runs interleaved with the others, to put two
versions side by side on one machine at one load (``git archive main | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
COMMANDS = ("convert", "info", "summary", "memflow", "check", "diff", "advise",
            "critical-path", "report", "batch", "formats")
IMPORTS = [sys.executable, "-c", "import click, rich"]
DECODE = [sys.executable, "-c", "import click, rich.console, numpy, msgspec, sys; "
          "msgspec.json.decode(open(sys.argv[1], 'rb').read())", str(TRACE)]


CLOCK = "wall"   # or "cpu": user + system time of the process (steadier on a busy machine)


def timed(command: list[str], env: dict[str, str], status: int = 0) -> float:
    """Seconds ``command`` took; it must exit with ``status`` (a timing of a command that
    broke early would flatter it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    # from a neutral folder: `python -m traceconv` in a checkout would import that
    # checkout's package whatever PYTHONPATH says
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          cwd=tempfile.gettempdir())
    if done.returncode != status:
        sys.exit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.decode()}")
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu if CLOCK == "cpu" else wall


def row(label: str, ours: list[str], theirs: list[str], runs: int, env: dict[str, str],
        target: float | None, other: dict[str, str] | None = None, status: int = 0) -> None:
    """One line: our median, the yardstick's, their ratio (and ``other`` code's median and
    ratio when given: the same command with that environment); ``ours`` exits with
    ``status``."""
    sides = [(ours, env, status), (theirs, env, 0)] + ([(ours, other, status)] if other else [])
    for command, environment, code in sides:
        timed(command, environment, code)   # warm the file cache
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(runs):
        for side, (command, environment, code) in zip(times, sides, strict=True):
            side.append(timed(command, environment, code))
    ma, mb, *mc = (statistics.median(t) for t in times)
    goal = f"  (target <= {target})" if target else ""
    compared = f"  {mc[0] * 1000:7.1f} ms {mc[0] / mb:5.2f}" if mc else ""
    print(f"{label:34} {ma * 1000:7.1f} ms  {mb * 1000:7.1f} ms  {ma / mb:5.2f}{compared}{goal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--code", help="directory holding the traceconv package to time")
    parser.add_argument("--compare", help="another checkout's directory: a column for it")
    parser.add_argument("--only", choices=("version", "info", "unclaimed", "help"), action="append")
    parser.add_argument("--cpu", action="store_true",
                        help="time CPU (user + system) instead of wall time: steadier when "
                             "other work shares the machine")
    args = parser.parse_args()
    global CLOCK
    CLOCK = "cpu" if args.cpu else "wall"
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = dict(base)
    if args.code:
        env["PYTHONPATH"] = os.path.abspath(args.code)
    other = {**base, "PYTHONPATH": os.path.abspath(args.compare)} if args.compare else None
    traceconv = [sys.executable, "-m", "traceconv"]
    wanted = set(args.only or ("version", "info", "unclaimed", "help"))
    compared = f"  {'compared':>10} ratio" if other else ""
    print(f"{'command':34} {'traceconv':>10}  {'yardstick':>10}  ratio{compared}   "
          f"(median of {args.runs}, {CLOCK} time; load {os.getloadavg()[0]:.1f})")
    if "version" in wanted:
        row("--version", [*traceconv, "--version"], IMPORTS, args.runs, env, 2, other)
    if "info" in wanted:
        row(f"info ({TRACE.stat().st_size / 1e6:.1f} MB trace)", [*traceconv, "info", str(TRACE)],
            DECODE, args.runs, env, 1.6, other)
    if "unclaimed" in wanted:
        with tempfile.NamedTemporaryFile("w", suffix=".json") as unclaimed:
            unclaimed.write('{"a": 1}\n')
            unclaimed.flush()
            row("info (a file no format claims)", [*traceconv, "info", unclaimed.name],
                IMPORTS, args.runs, env, None, other, status=1)
    if "help" in wanted:
        row("--help", [*traceconv, "--help"], IMPORTS, args.runs, env, None, other)
        for command in COMMANDS:
            row(f"{command} --help", [*traceconv, command, "--help"], IMPORTS, args.runs, env,
                None, other)
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
