"""Benchmark: ``traceconv batch`` on 64 rank traces with -j 1, -j 2 and a dask LocalCluster.

The 64 inputs are made from the bundled 4-rank DDP sample: rank r is a copy of sample rank
r % 4, its steps repeated ``--repeat`` times back to back (so each file has the size of a
longer profile), its ``distributedInfo`` rank/world size rewritten and its clock shifted by a
few ms. Each engine converts them all to Perfetto; the script reports files/s, the speed-up
over -j 1 measured in the same run, and the peak RSS of each worker process (from the
results, ``ru_maxrss``), and checks that all engines wrote the same bytes.

    python benchmarks/bench_batch.py                 # 64 files, --repeat 10
    python benchmarks/bench_batch.py --files 16 --repeat 2
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = [ROOT / "samples" / "torch" / f"ddp_gloo_rank{r}.pt.trace.json.gz" for r in range(4)]


def make_ranks(folder: Path, files: int, repeat: int) -> list[Path]:
    """Write ``files`` rank traces (gzip JSON) made from the 4 DDP samples."""
    docs = [orjson.loads(gzip.decompress(p.read_bytes())) for p in SAMPLES]
    paths = []
    for rank in range(files):
        doc = dict(docs[rank % 4])
        events = doc["traceEvents"]
        timed = [e["ts"] for e in events if "ts" in e]
        span = max(timed) - min(timed) + 1000.0
        skew = (rank * 7919 % 5000) / 1000.0          # a few ms, different per rank
        out = []
        for copy in range(repeat):
            for e in events:
                if "ts" in e:
                    e = {**e, "ts": e["ts"] + copy * span + skew}
                    if e.get("id") is not None and e.get("ph") in ("s", "f"):
                        e["id"] = f"{e['id']}-{copy}"   # flows of each copy stay apart
                out.append(e)
        doc["traceEvents"] = out
        doc["distributedInfo"] = {**doc["distributedInfo"], "rank": rank, "world_size": files}
        path = folder / f"rank{rank:03d}.pt.trace.json.gz"
        path.write_bytes(gzip.compress(orjson.dumps(doc), compresslevel=1))
        paths.append(path)
    return paths


def run(paths: list[Path], outdir: Path, options: list[str]) -> tuple[float, dict]:
    command = [sys.executable, "-m", "traceconv", "batch", *map(str, paths), "-o",
               str(outdir), "--to", "perfetto", "--json", *options]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False, cwd=ROOT)
    seconds = time.perf_counter() - began
    if done.returncode:
        sys.exit(f"{' '.join(options)} failed: {done.stderr.decode()[-2000:]}")
    return seconds, orjson.loads(done.stdout)


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "in").mkdir()
        paths = make_ranks(folder / "in", args.files, args.repeat)
        size = sum(p.stat().st_size for p in paths)
        rows = []
        for name, options in (("local -j 1", ["-j", "1"]), ("local -j 2", ["-j", "2"]),
                              ("dask -j 2", ["--engine", "dask", "-j", "2"])):
            seconds, report = run(paths, folder / name.replace(" ", "_"), options)
            workers: dict[str, float] = {}
            for r in report["results"]:
                workers[r["worker"]] = max(workers.get(r["worker"], 0.0), r["peak_rss_mb"])
            events = sum(r["events"] for r in report["results"])
            rows.append((name, seconds, events, workers,
                         digest(folder / name.replace(" ", "_"))))
        base = rows[0][1]
        print(f"{args.files} rank traces, {rows[0][2] // args.files:,} events each, "
              f"{size / 2**20:.1f} MiB gzip in all; wall time includes start-up")
        print(f"{'engine':<12} {'seconds':>8} {'files/s':>8} {'vs -j 1':>8} "
              f"{'workers':>7} {'peak RSS/worker MiB':>20}  outputs")
        for name, seconds, _events, workers, sha in rows:
            peak = max(workers.values())
            print(f"{name:<12} {seconds:8.2f} {args.files / seconds:8.2f} "
                  f"{base / seconds:7.2f}x {len(workers):7d} {peak:20.0f}  {sha}")
        same = len({row[4] for row in rows}) == 1
        print("outputs byte-identical across engines:", "yes" if same else "NO")


if __name__ == "__main__":
    main()
