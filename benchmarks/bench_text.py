"""Benchmark: text reports at scale — a ~50 MB ``migraphx-driver perf`` log read by
``traceconv info`` and converted to ``.pftrace``, and the scaling families (1×, 2×, 4×, 8×)
of the MIGraphX perf log, program printout and ``MIGRAPHX_TRACE_EVAL`` log and of Paddle's
text Profiling Report and ``summary()`` tables.

Each step runs the real CLI in a fresh Python process, so its peak RSS (``VmHWM``) is its
own, start-up and imports included; ``MB/MB`` is that peak per megabyte of input and
``growth`` the peak above the same step on a one-copy log (start-up, imports, the
interpreter) per megabyte. Times are CPU seconds of the process (on a shared machine the
steadier figure); a doubling's ratios are of CPU time and peak above that floor. Nothing
here asserts a time.

    python benchmarks/bench_text.py               # output check, 50 MB row, scaling table
    python benchmarks/bench_text.py --big-only    # only the 50 MB row
    python benchmarks/bench_text.py --scaling-only --steps info
    python benchmarks/bench_text.py --check-only  # only the same-output check

First it checks that the MIGraphX reader's output did not change: every bundled MIGraphX
text (samples, test data, ../shared's when beside the checkout) and 3-copy generated logs
are read, and a digest of the model (the Chrome JSON it writes minus the writer's
version, the op graph's nodes, attributes and edges in order, memory blocks, statistics,
diagnostics) is compared with ``benchmarks/migraphx_outputs.json``, recorded before the
reader's memory work (``--record`` rewrites it, on purpose only; ``--dump DIR`` writes
the texts themselves, to diff).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import text_logs  # noqa: E402
from benchmarks.bench_convert import measure  # noqa: E402

EXPECTED = ROOT / "benchmarks" / "migraphx_outputs.json"
SAMPLE_DIRS = (ROOT / "samples" / "migraphx", ROOT / "tests" / "data" / "migraphx",
               ROOT.parent / "shared" / "samples" / "migraphx")

# The CLI itself, its printout thrown away (the measuring wrapper prints the last line).
CLI = """
import contextlib, os, sys
from traceconv.cli import main
sys.argv = ["traceconv", *{argv!r}]
with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
    try:
        main()
    except SystemExit as done:
        if done.code:
            raise
extra = dict(bytes=os.path.getsize({path!r}))
"""
STEPS = {"info": lambda path, out: ["info", path],
         "pftrace": lambda path, out: ["convert", path, "-o", out]}

# (family, generator of `copies`, copies at 1×): 1× is about 3 MB
FAMILIES: list[tuple[str, Callable[[int], str], int]] = [
    ("MIGraphX perf log", text_logs.migraphx_perf_log, 40),
    ("MIGraphX program printout", text_logs.migraphx_listing, 80),
    ("MIGraphX TRACE_EVAL log", text_logs.migraphx_trace_eval, 40),
    ("Paddle Profiling Reports", text_logs.paddle_report_log, 300),
    ("Paddle summary() tables", text_logs.paddle_summary_log, 120),
]
BIG_COPIES = 650   # ~50 MB


def model_text(trace: object) -> str:
    """Everything a reader's model holds, as one canonical text: the Chrome JSON it writes
    (minus the writer's version), the op graph in insertion order (nodes, attributes,
    edges), memory blocks, op statistics and diagnostics."""
    import dataclasses
    import io

    from traceconv import registry

    out = io.BytesIO()
    registry.get("chrome").load().write(trace, out)
    document = json.loads(out.getvalue())
    document.get("otherData", {}).pop("traceconv", None)
    graph = trace.graph   # type: ignore[attr-defined]
    model = {"chrome": document, "graph": graph.graph,
             "nodes": list(graph.nodes(data=True)), "edges": list(graph.edges(data=True)),
             "memory": [dataclasses.asdict(b) for b in trace.memory],   # type: ignore[attr-defined]
             "stats": [dataclasses.asdict(s) for s in trace.stats],   # type: ignore[attr-defined]
             "diagnostics": [d.as_dict() for d in trace.diagnostics]}   # type: ignore[attr-defined]
    return json.dumps(model, sort_keys=True, default=repr, indent=0)


def models(tmp: Path) -> dict[str, str]:
    """:func:`model_text` of every bundled MIGraphX text (samples, test data, and
    ../shared's when beside the checkout) and of 3-copy generated logs, by name."""
    import traceconv

    paths = {str(p.relative_to(ROOT.parent if "shared" in p.parts else ROOT)): p
             for d in SAMPLE_DIRS if d.is_dir() for p in d.rglob("*.txt*")}
    for family, generate, _ in FAMILIES[:3]:   # the MIGraphX ones
        paths[f"generated: {family}, 3 copies"] = path = tmp / f"{len(paths)}.txt"
        path.write_text(generate(3))
    return {key: model_text(traceconv.load(path, format="migraphx"))
            for key, path in sorted(paths.items())}


def check_outputs(record: bool, dump: Path | None = None) -> str:
    """Compare (or ``record``) the digests of :func:`models`; ``dump``: write them too."""
    with tempfile.TemporaryDirectory() as tmp:
        texts = models(Path(tmp))
    if dump:
        dump.mkdir(parents=True, exist_ok=True)
        for key, text in texts.items():
            (dump / (re.sub(r"[^\w.-]+", "_", key) + ".json")).write_text(text)
    found = {key: hashlib.sha256(text.encode()).hexdigest() for key, text in texts.items()}
    if record:
        EXPECTED.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        return f"recorded the model digests of {len(found)} MIGraphX texts"
    expected = json.loads(EXPECTED.read_text())
    differ = [key for key, digest in found.items() if expected.get(key) not in (None, digest)]
    if differ:
        raise SystemExit(f"the model changed on: {', '.join(differ)}")
    same = sum(key in expected for key in found)
    return f"the same model as recorded on all {same} MIGraphX texts found (of {len(expected)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="info,pftrace")
    parser.add_argument("--big-only", action="store_true")
    parser.add_argument("--scaling-only", action="store_true")
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--record", action="store_true",
                        help="rewrite the expected output digests (before a reader change)")
    parser.add_argument("--copies", type=int, default=BIG_COPIES,
                        help=f"bodies in the big perf log (default {BIG_COPIES}: ~50 MB)")
    parser.add_argument("--dump", type=Path, metavar="DIR",
                        help="also write each model text into DIR (to diff two versions) and stop")
    args = parser.parse_args()
    steps = args.steps.split(",")
    print(check_outputs(args.record, args.dump))
    if args.check_only or args.record or args.dump:
        return
    print(f"{'input':32} {'step':8} {'MB in':>6} {'cpu s':>6} {'peak MB':>8} {'MB/MB':>6} "
          f"{'growth':>6}   (growth: peak above the 1-copy floor, per MB)")
    results: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        if not args.scaling_only:
            floor = measured(Path(tmp), "floor", text_logs.migraphx_perf_log(1), steps)
            show("perf log, 1 copy (the floor)", floor, floor)
            big = measured(Path(tmp), "big", text_logs.migraphx_perf_log(args.copies), steps)
            show(f"perf log, {args.copies} copies", big, floor)
            results += [{"input": f"perf log x{args.copies}", "step": s, **r}
                        for s, r in big.items()]
        if not args.big_only:
            for family, generate, base in FAMILIES:
                results += scaling(Path(tmp), family, generate, base, steps)
    print(json.dumps(results))


def measured(tmp: Path, name: str, text: str, steps: list[str]) -> dict[str, dict]:
    """Each step's numbers on ``text`` (written to a file in ``tmp``)."""
    path = tmp / f"{name}.txt"
    path.write_text(text)
    rows = {}
    for step in steps:
        out = tmp / "out.pftrace"
        rows[step] = measure(CLI.format(argv=STEPS[step](str(path), str(out)), path=str(path)))
        out.unlink(missing_ok=True)
    path.unlink()
    return rows


def show(label: str, rows: dict[str, dict], floor: dict[str, dict]) -> None:
    for step, r in rows.items():
        size = r["bytes"] / 1e6
        growth = (r["rss_mb"] - floor[step]["rss_mb"]) / size
        print(f"  {label:30} {step:8} {size:6.1f} {r['cpu']:6.2f} {r['rss_mb']:8,.0f} "
              f"{r['rss_mb'] / size:6.1f} {growth:6.1f}")


def scaling(tmp: Path, family: str, generate: Callable[[int], str], base: int,
            steps: list[str]) -> list[dict]:
    """``family`` at 1×, 2×, 4×, 8× ``base`` copies: each doubling's ratio of CPU time and
    of peak memory, both above the 1-copy floor (start-up and imports)."""
    floor = measured(tmp, "floor", generate(1), steps)
    show(f"{family}, 1 copy", floor, floor)
    previous: dict[str, dict] = {}
    out = []
    for times in (1, 2, 4, 8):
        rows = measured(tmp, f"x{times}", generate(base * times), steps)
        show(f"{family} {times}×", rows, floor)
        for step, r in rows.items():
            if step in previous:
                cpu, peak = (
                    (r[key] - floor[step][key]) / max(1e-3, previous[step][key] - floor[step][key])
                    for key in ("cpu", "rss_mb"))
                print(f"  {'':30} {step:8} doubled: cpu ×{cpu:.2f}, peak ×{peak:.2f}")
        previous = rows
        out += [{"input": f"{family} {times}x", "step": s, **r} for s, r in rows.items()]
    return out


if __name__ == "__main__":
    main()
