"""Benchmark: convert a large PyTorch trace to .pftrace and to Chrome JSON.

Each step runs in a fresh Python process so its peak RSS is its own. The baseline is
``orjson.loads`` of the same (already decompressed) bytes, measured in the same run, so the
ratio stays meaningful on a busy or slower machine.

    python benchmarks/bench_convert.py                       # the 1.0 M-event torch trace
    python benchmarks/bench_convert.py trace.json.gz         # any trace
    python benchmarks/bench_convert.py --generate 1000000    # no corpus: a synthetic one

Without an argument it uses ../shared/samples/torch/large/large_cpu_500steps.pt.trace.json.gz
when that exists beside the checkout, else generates a trace of the same shape.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "samples" / "torch" / "large" / "large_cpu_500steps.pt.trace.json.gz"

# Each snippet prints {"wall": s, "cpu": s, "rss_mb": MB, ...} as its last line.
MEASURE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
t0, c0 = time.perf_counter(), time.process_time()
{body}
out = dict(wall=time.perf_counter() - t0, cpu=time.process_time() - c0,
           rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
out.update(extra if "extra" in dir() else {{}})
print(json.dumps(out))
"""
BASELINE = """
import gzip, orjson
data = gzip.open({path!r}).read() if {path!r}.endswith(".gz") else open({path!r}, "rb").read()
t0, c0 = time.perf_counter(), time.process_time()
events = len(orjson.loads(data)["traceEvents"])
extra = dict(events=events, bytes=len(data))
"""
CONVERT = """
import traceconv
trace = traceconv.convert({path!r}, {out!r})
extra = dict(output_bytes=__import__("os").path.getsize({out!r}))
"""


def generate(path: Path, events: int) -> None:
    """Write a Kineto-shaped trace: python frames, ops, [memory] pairs and fwd/bwd flows."""
    pid, base = 4242, 4_482_791_384_394_954
    with gzip.open(path, "wt") as out:
        out.write('{"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms", '
                  '"baseTimeNanoseconds": 1790857026000000000, "traceEvents": [\n')
        out.write(json.dumps({"ph": "M", "name": "thread_name", "pid": pid, "tid": pid,
                              "args": {"name": "thread 4242 (python)"}}))
        ts, n, flow = base, 1, 0
        while n < events:
            step = [
                {"ph": "X", "cat": "python_function", "name": "model.py(12): forward",
                 "pid": pid, "tid": pid, "ts": ts / 1000, "dur": 40.0,
                 "args": {"Python parent id": n, "Python id": n + 1, "Ev Idx": n}},
                {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": pid, "tid": pid,
                 "ts": (ts + 1_000) / 1000, "dur": 30.0,
                 "args": {"External id": n, "Ev Idx": n + 1, "Input Dims": [[64, 128], [256, 128]],
                          "Input type": ["float", "float"], "Sequence number": n}},
                {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": pid,
                 "tid": pid, "ts": (ts + 2_000) / 1000,
                 "args": {"Addr": 94_000_000 + n * 64, "Bytes": 65536, "Total Allocated": 65536,
                          "Total Reserved": 0, "Device Type": 0, "Device Id": -1}},
                {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": pid,
                 "tid": pid, "ts": (ts + 20_000) / 1000,
                 "args": {"Addr": 94_000_000 + n * 64, "Bytes": -65536, "Total Allocated": 0,
                          "Total Reserved": 0, "Device Type": 0, "Device Id": -1}},
            ]
            if n % 60 == 1:
                flow += 1
                step += [{"ph": "s", "id": flow, "pid": pid, "tid": pid, "ts": (ts + 1_000) / 1000,
                          "cat": "fwdbwd", "name": "fwdbwd"},
                         {"ph": "f", "id": flow, "pid": pid, "tid": pid, "ts": (ts + 1_000) / 1000,
                          "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"}]
            for event in step:
                out.write(",\n" + json.dumps(event))
            n += len(step)
            ts += 50_000
        out.write("\n]}\n")


def measure(body: str) -> dict:
    code = MEASURE.format(root=str(ROOT), body=body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", help="Chrome/Kineto trace (.json or .json.gz)")
    parser.add_argument("--generate", type=int, metavar="EVENTS",
                        help="benchmark a generated Kineto-shaped trace of EVENTS events")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.trace) if args.trace else CORPUS
        if args.generate or not path.exists():
            path = Path(tmp) / "generated.pt.trace.json.gz"
            print(f"generating {args.generate or 1_000_000:,} events ...", file=sys.stderr)
            generate(path, args.generate or 1_000_000)
        base = measure(BASELINE.format(path=str(path)))
        rows = [("orjson.loads (baseline)", base)]
        for name, suffix in (("traceconv → .pftrace", ".pftrace"),
                             ("traceconv → Chrome JSON", ".json")):
            out = str(Path(tmp) / f"out{suffix}")
            rows.append((name, measure(CONVERT.format(path=str(path), out=out))))
    events = base["events"]
    print(f"input: {path.name}: {events:,} events, {base['bytes'] / 1e6:,.0f} MB of JSON")
    print(f"{'step':26} {'wall s':>7} {'cpu s':>7} {'events/s':>10} {'× loads':>8} {'peak RSS MB':>12}")
    for name, r in rows:
        print(f"{name:26} {r['wall']:7.2f} {r['cpu']:7.2f} {events / r['wall']:10,.0f} "
              f"{r['wall'] / base['wall']:8.2f} {r['rss_mb']:12,.0f}")
    print(json.dumps({name: r for name, r in rows}))


if __name__ == "__main__":
    main()
