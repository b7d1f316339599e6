"""Benchmark: reading a large allocator snapshot, and its memory-flow SVG.

    python benchmarks/bench_torch_snapshot.py [--copies 32] [--keep DIR]

Synthesises a big snapshot from the real ResNet-18 sample (``samples/torch/
resnet18_train_snapshot.pickle.gz``): its history repeated ``--copies`` times, each copy
shifted in time, every entry pickled in full (frames included, as torch writes them), so
the file grows like a long ``_record_memory_history`` run. The pickle is assembled entry by
entry, so the generator itself stays small in memory. Then, each in a fresh process:

* baseline: ``pickle.load`` of the file (the unsafe standard loader: the floor for any
  reader that builds the objects);
* ``traceconv.load`` (plain-data unpickler + conversion), with peak RSS;
* ``trace.memflow_svg`` of the loaded trace, its size, and a headless Chromium screenshot
  (render time) when ``chromium`` is installed.
"""

from __future__ import annotations

import argparse
import gzip
import os
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples/torch/resnet18_train_snapshot.pickle.gz"
sys.path.insert(0, str(ROOT))

from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler  # noqa: E402


def _body(obj: object) -> bytes:
    """``obj`` pickled (protocol 2: no frames) without its PROTO header and STOP: bodies
    concatenate, each using only the memo slots it writes itself."""
    data = pickle.dumps(obj, protocol=2)
    return data[2:-1]


def synthesise(path: Path, copies: int) -> tuple[int, int]:
    """Write the scaled snapshot; returns (entries, bytes)."""
    with gzip.open(SAMPLE) as f:
        document = PlainUnpickler(f).load()
    entries = document["device_traces"][0]
    times = [e["time_us"] for e in entries]
    period = max(times) - min(times) + 1_000
    count = 0
    with open(path, "wb") as out:
        out.write(pickle.PROTO + bytes([5]) + pickle.EMPTY_DICT)
        for key in ("segments", "allocator_settings", "external_annotations"):
            out.write(_body(key) + _body(document[key]) + pickle.SETITEM)
        out.write(_body("device_traces") + pickle.EMPTY_LIST + pickle.EMPTY_LIST)
        for copy in range(copies):
            shift = (copy - copies + 1) * period   # the last copy keeps the real times
            out.write(pickle.MARK)
            for entry in entries:
                out.write(_body({**entry, "time_us": entry["time_us"] + shift}))
                count += 1
            out.write(pickle.APPENDS)
        out.write(pickle.APPEND + pickle.SETITEM + pickle.STOP)
    return count, path.stat().st_size


CHILD = {
    "baseline": "import pickle,sys; pickle.load(open(sys.argv[1], 'rb'))",
    "traceconv": "import sys, traceconv; traceconv.load(sys.argv[1])",
    "svg": "import sys, traceconv; traceconv.load(sys.argv[1]).memflow_svg(sys.argv[2])",
}


def run(kind: str, *args: str) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one fresh interpreter doing ``kind``."""
    began = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", CHILD[kind], *args], cwd=ROOT,
                           capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if child.returncode:
        raise SystemExit(f"{kind} failed: {child.stderr.strip()[-400:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return elapsed, peak


def screenshot(svg: Path, png: Path) -> float | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return None
    began = time.perf_counter()
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", f"--user-data-dir={tempfile.mkdtemp()}",
                    f"--screenshot={png}", "--window-size=1600,900", svg.as_uri()],
                   capture_output=True, check=True, timeout=300)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=32)
    parser.add_argument("--keep", type=Path, help="folder for the pickle, SVG and PNG")
    options = parser.parse_args()
    folder = options.keep or Path(tempfile.mkdtemp(prefix="snapshot-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    pickle_path, svg, png = (folder / "big_snapshot.pickle", folder / "big_snapshot.svg",
                             folder / "big_snapshot.png")
    began = time.perf_counter()
    entries, size = synthesise(pickle_path, options.copies)
    print(f"synthesised {size / 2**20:,.0f} MiB, {entries:,} trace entries "
          f"({time.perf_counter() - began:.1f} s)")
    # RUSAGE_CHILDREN reports the largest child so far: run the lightest first.
    base_s, base_rss = run("baseline", str(pickle_path))
    print(f"pickle.load (baseline)  {base_s:7.1f} s   peak RSS {base_rss:7,.0f} MiB")
    read_s, read_rss = run("traceconv", str(pickle_path))
    print(f"traceconv.load          {read_s:7.1f} s   peak RSS {read_rss:7,.0f} MiB   "
          f"time x{read_s / base_s:.2f} of baseline")
    svg_s, _ = run("svg", str(pickle_path), str(svg))
    print(f"load + memflow SVG      {svg_s:7.1f} s   SVG {svg.stat().st_size / 2**20:.2f} MiB")
    shot = screenshot(svg, png)
    if shot is not None:
        print(f"chromium screenshot     {shot:7.1f} s   {png}")
    if not options.keep:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        os.sync()


if __name__ == "__main__":
    main()
