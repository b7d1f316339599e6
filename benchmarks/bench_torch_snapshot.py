"""Benchmark: reading a large allocator snapshot, and its memory-flow SVG.

    python benchmarks/bench_torch_snapshot.py [--copies 32] [--protocol 4] [--keep DIR]

Synthesises a big snapshot from the real ResNet-18 sample (``samples/torch/
resnet18_train_snapshot.pickle.gz``): its history repeated ``--copies`` times, each copy
shifted in time, laid out byte for byte as ``pickle.dump`` of the whole document writes it
(protocol 4 or 5: 64 KiB frames, every string and container memoized, the shared empty
string fetched by ``BINGET``; protocol 2: no frames, explicit memo indices), so the file
grows like a long ``_record_memory_history`` run. The pickle is assembled entry by entry,
so the generator itself stays small in memory. Then, each in a fresh process that reports
its own CPU time and peak RSS:

* baseline: ``pickle.load`` of the file (the unsafe standard loader, which builds the
  whole object graph);
* ``traceconv.load`` (streaming plain-data decoder + conversion to the model);
* ``trace.memflow_svg`` of the loaded trace, its size, and a headless Chromium screenshot
  (render time) when ``chromium`` is installed.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples/torch/resnet18_train_snapshot.pickle.gz"
sys.path.insert(0, str(ROOT))

from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler  # noqa: E402
from traceconv.formats.torch_snapshot.window import Window  # noqa: E402

FRAME_TARGET = 64 * 1024
EMPTY = ""


class Writer:
    """Opcodes out to a file, cut into FRAMEs of about 64 KiB from protocol 4 on."""

    def __init__(self, out: io.BufferedWriter, protocol: int) -> None:
        self.out, self.protocol, self.pending = out, protocol, bytearray()
        out.write(pickle.PROTO + bytes([protocol]))

    def write(self, data: bytes) -> None:
        self.pending += data
        if len(self.pending) >= FRAME_TARGET:
            self.flush()

    def flush(self) -> None:
        if self.protocol >= 4 and self.pending:
            self.out.write(pickle.FRAME + len(self.pending).to_bytes(8, "little"))
        self.out.write(self.pending)
        self.pending = bytearray()


class Body:
    """``obj``'s opcodes as one ``pickle.dump`` of the whole document would write them: from
    protocol 4 on, the pickler's memo is seeded with the shared empty string at its index
    in the file (MEMOIZE carries no index, so only that GET must be right)."""

    def __init__(self, protocol: int) -> None:
        self.protocol = protocol
        self.seed: dict[int, tuple[int, Any]] = {}

    def __call__(self, obj: Any, learn: bool = False) -> bytes:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=self.protocol)
        if self.protocol >= 4:
            pickler.memo = self.seed
        pickler.dump(obj)
        if learn and self.protocol >= 4:   # where the pickler memoized the empty string
            self.seed = {id(EMPTY): index_obj for index_obj in pickler.memo.copy().values()
                         if index_obj[1] is EMPTY}
        data = out.getvalue()
        buf, _, _ = Window(io.BytesIO(data)).fill(0, len(data))
        return bytes(buf[2:-1])   # no PROTO, no FRAME headers, no STOP


def synthesise(path: Path, copies: int, protocol: int = 4) -> tuple[int, int]:
    """Write the scaled snapshot; returns (entries, bytes)."""
    with gzip.open(SAMPLE) as f:
        document = PlainUnpickler(f).load()
    entries = document["device_traces"][0]
    times = [e["time_us"] for e in entries]
    period = max(times) - min(times) + 1_000
    body = Body(protocol)
    count = 0
    with open(path, "wb") as out:
        writer = Writer(out, protocol)
        # {"segments": ...} pickles as EMPTY_DICT, memo, key, value, SETITEM: open a MARK
        # after the dict's memo opcode instead, and close all keys with one SETITEMS
        head = body({"segments": document["segments"]}, learn=True)
        opened = 2 if protocol >= 4 else 3
        writer.write(head[:opened] + pickle.MARK + head[opened:-1])
        writer.write(body("device_traces") + body([]) + body([]))
        for copy in range(copies):
            shift = (copy - copies + 1) * period   # the last copy keeps the real times
            for batch in range(0, len(entries), 1000):
                writer.write(pickle.MARK)
                for entry in entries[batch:batch + 1000]:
                    writer.write(body({**entry, "time_us": entry["time_us"] + shift}))
                    count += 1
                writer.write(pickle.APPENDS)
        writer.write(pickle.APPEND)
        for key in ("allocator_settings", "external_annotations"):
            writer.write(body(key) + body(document[key]))
        writer.write(pickle.SETITEMS + pickle.STOP)
        writer.flush()
    return count, path.stat().st_size


# Each child reports its own CPU seconds and peak RSS (MiB) as its last line.
REPORT = ("import resource, json; r = resource.getrusage(resource.RUSAGE_SELF); "
          "print(json.dumps([r.ru_utime + r.ru_stime, r.ru_maxrss / 1024]))")
CHILD = {
    "baseline": "import pickle,sys; pickle.load(open(sys.argv[1], 'rb'))",
    "traceconv": "import sys, traceconv; traceconv.load(sys.argv[1])",
    "svg": "import sys, traceconv; traceconv.load(sys.argv[1]).memflow_svg(sys.argv[2])",
}


def run(kind: str, *args: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of one fresh interpreter doing ``kind``."""
    began = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", CHILD[kind] + "\n" + REPORT, *args],
                           cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if child.returncode:
        raise SystemExit(f"{kind} failed: {child.stderr.strip()[-400:]}")
    cpu, peak = json.loads(child.stdout.strip().splitlines()[-1])
    return elapsed, cpu, peak


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
    parser.add_argument("--protocol", type=int, choices=(2, 3, 4, 5), default=4)
    parser.add_argument("--keep", type=Path, help="folder for the pickle, SVG and PNG")
    options = parser.parse_args()
    folder = options.keep or Path(tempfile.mkdtemp(prefix="snapshot-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    pickle_path, svg, png = (folder / "big_snapshot.pickle", folder / "big_snapshot.svg",
                             folder / "big_snapshot.png")
    began = time.perf_counter()
    entries, size = synthesise(pickle_path, options.copies, options.protocol)
    print(f"synthesised {size / 2**20:,.0f} MiB, protocol {options.protocol}, "
          f"{entries:,} trace entries ({time.perf_counter() - began:.1f} s); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    base = run("baseline", str(pickle_path))
    print(f"pickle.load (baseline)  {base[0]:6.1f} s wall {base[1]:6.1f} s CPU   "
          f"peak RSS {base[2]:7,.0f} MiB")
    read = run("traceconv", str(pickle_path))
    print(f"traceconv.load          {read[0]:6.1f} s wall {read[1]:6.1f} s CPU   "
          f"peak RSS {read[2]:7,.0f} MiB   CPU x{read[1] / base[1]:.2f} of baseline")
    drawn = run("svg", str(pickle_path), str(svg))
    print(f"load + memflow SVG      {drawn[0]:6.1f} s wall {drawn[1]:6.1f} s CPU   "
          f"peak RSS {drawn[2]:7,.0f} MiB   SVG {svg.stat().st_size / 2**20:.2f} MiB")
    shot = screenshot(svg, png)
    if shot is not None:
        print(f"chromium screenshot     {shot:6.1f} s wall   {png}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    if not options.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
