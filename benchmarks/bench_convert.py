"""Benchmark: read (``info``), convert to .pftrace and to Chrome JSON, for large traces.

Each step runs the command line as a user runs it (``traceconv IN -o OUT``, ``traceconv info
IN --json``) in a fresh Python process, so its peak RSS is its own, imports included. The
baseline is ``orjson.loads`` of the same bytes, measured in the same run, so the ratio
stays meaningful on a busy or slower machine; ratios are given for wall and for CPU time
(on a shared machine CPU time is the steadier of the two). A ``.gz`` input is
decompressed to a temporary file first, so that every step reads the very bytes the
baseline parses (gunzip alone would cost about half of ``orjson.loads``). traceconv is
compiled to bytecode first (in its own ``__pycache__`` folders), so that steps import it as
an installed package is imported, also where PYTHONDONTWRITEBYTECODE is set.

    python benchmarks/bench_convert.py                       # the issue's rows (see below)
    python benchmarks/bench_convert.py --big                 # ... and the 10 M-event row
    python benchmarks/bench_convert.py trace.json.gz         # any trace
    python benchmarks/bench_convert.py --generate 1000000    # no corpus: a synthetic one
    python benchmarks/bench_convert.py --steps info          # only some steps (info, pftrace, read, chrome)
    python benchmarks/bench_convert.py --split               # ... then bench_split.py's rows (×10, ×30)

Without a trace it uses, from ../shared/samples/torch beside the checkout, the 1.0 M-event
CPU trace (large/large_cpu_500steps) and the 0.7 M-event real H100 trace
(cuda_h100/large_mlp_train_cuda), else generates a trace of the first one's shape. ``--big``
adds the first one ×10 (10 M events, written uncompressed to a temporary file; its ratio is
to the 1 M run, since ``orjson.loads`` of 2.7 GB needs more memory than the machine has).

It first checks that the fast path gives the plain path's output on the bundled samples:
the chunked Chrome reader (4 KiB pieces: every sample is cut many times) against one whole
parse, the same .pftrace bytes and the same Chrome JSON values (the fast path copies args
as the source wrote them).
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH = ROOT.parent / "shared" / "samples" / "torch"
CORPUS = TORCH / "large" / "large_cpu_500steps.pt.trace.json.gz"
H100 = TORCH / "cuda_h100" / "large_mlp_train_cuda.pt.trace.json.gz"

# Each snippet prints {"wall": s, "cpu": s, "rss_mb": MB, ...} as its last line.
MEASURE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
t0, c0 = time.perf_counter(), time.process_time()
{body}
def peak_mb():
    # VmHWM is this process's own peak: ru_maxrss also counts the parent's memory at fork
    # (Linux keeps it across exec), which after --big's ×10 copy is gigabytes
    try:
        status = open("/proc/self/status").read()
        return int(status.split("VmHWM:")[1].split()[0]) / 1024
    except (OSError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = dict(wall=time.perf_counter() - t0, cpu=time.process_time() - c0, rss_mb=peak_mb())
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
# The conversions and reads run the command line as a user runs it (``traceconv IN -o OUT``,
# ``traceconv info IN --json``), in its process: with the settings it makes for itself
# (traceconv/process_setup.py), which a script importing traceconv makes or not.
COMMAND = """
import contextlib, io, os
from traceconv.cli import main
sys.argv, printed, said = ["traceconv", *{args!r}], io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(said):
    try:
        main()
    except SystemExit as stop:
        failed = stop.code
    else:
        failed = None
if failed:
    raise SystemExit(said.getvalue() or failed)
"""
CONVERT = COMMAND.format(args=["{path}", "-o", "{out}"]) + """
extra = dict(output_bytes=os.path.getsize({out!r}))
"""
INFO = COMMAND.format(args=["info", "{path}", "--json"]) + """
extra = dict(slices=json.loads(printed.getvalue())["slices"])
"""
# Reading back the .pftrace that the "→ .pftrace" step wrote (issue 24: at most the time of
# converting the JSON); its ratio column is to that conversion, not to orjson.
READ_PFTRACE = INFO.replace("{path}", "{out}")
# The fast path against the plain one on every bundled Chrome sample: the number of samples
# compared, or the first that differs.
SAME = """
import glob, io, json, traceconv
from traceconv.formats.chrome import stream
def outputs(path, chunk):
    stream.CHUNK = chunk
    trace = traceconv.load(path, format="chrome")
    written = []
    for fmt in ("perfetto", "chrome"):
        out = io.BytesIO()
        traceconv.registry.get(fmt).load().write(trace, out)
        written.append(out.getvalue())
    return written[0], json.loads(written[1])   # Chrome: args copied as the source wrote them
paths = sorted(glob.glob({root!r} + "/samples/**/*.json*", recursive=True)
               + glob.glob({root!r} + "/tests/data/**/*.json*", recursive=True))
compared = 0
for path in paths:
    try:
        plain = outputs(path, 1 << 28)   # beyond any sample: one whole parse
    except traceconv.TraceconvError:
        continue   # not a Chrome trace (a summary, a memory snapshot ...)
    if outputs(path, 4096) != plain:
        raise SystemExit("fast path differs from plain path: " + path)
    compared += 1
extra = dict(compared=compared)
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


def multiply(source: Path, path: Path, times: int) -> int:
    """Write ``source``'s events ``times`` times, each copy after the previous in time and
    with its own flow ids (uncompressed: gzip would dominate the benchmark); return the
    event count."""
    sys.path.insert(0, str(ROOT))
    import orjson

    from traceconv.formats.chrome.stream import read_document

    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rb") as stream:
        events = [e for chunk in read_document(stream).chunks for e in chunk]
    stamps = [e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), int | float)]
    span = max(stamps) - min(stamps) + 1000
    ids = max([e["id"] for e in events if isinstance(e.get("id"), int)], default=0) + 1
    with open(path, "wb") as out:
        out.write(b'{"traceEvents": [\n')
        for k in range(times):
            batch = []
            for e in events:
                if e.get("ph") == "M" and k:
                    continue
                copy = dict(e)
                if isinstance(copy.get("ts"), int | float):
                    copy["ts"] = copy["ts"] + k * span
                if isinstance(copy.get("id"), int):
                    copy["id"] = copy["id"] + k * ids
                batch.append(orjson.dumps(copy))
            out.write((b",\n" if k else b"") + b",\n".join(batch))
        out.write(b"\n]}\n")
    return sum(1 for e in events if e.get("ph") != "M") * times + sum(
        1 for e in events if e.get("ph") == "M")


# Every step imports traceconv from bytecode compiled beforehand, as an installed package
# does (pip compiles it): with PYTHONDONTWRITEBYTECODE set, as on the shared machine, each
# step would otherwise compile traceconv's ~60 modules again (about 0.1 CPU-s per step).
# (Into traceconv's own __pycache__ folders, which git ignores: a PYTHONPYCACHEPREFIX
# would also hide numpy's bytecode from the steps.)


def compile_bytecode() -> None:
    compileall.compile_dir(str(ROOT / "traceconv"), quiet=1)


def measure(body: str) -> dict:
    code = MEASURE.format(root=str(ROOT), body=body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


STEPS = (("info (read only)", INFO, ""), ("→ .pftrace", CONVERT, ".pftrace"),
         ("read that .pftrace", READ_PFTRACE, ".pftrace"), ("→ Chrome JSON", CONVERT, ".json"))
RELATIVE = {"read that .pftrace": "→ .pftrace"}   # rows whose ratio is to another row


def decompressed(path: Path, tmp: str) -> Path:
    """``path`` itself, or its decompressed copy in ``tmp`` when it is a ``.gz``."""
    if path.suffix != ".gz":
        return path
    plain = Path(tmp) / path.stem
    with gzip.open(path, "rb") as source, open(plain, "wb") as out:
        while block := source.read(1 << 24):
            out.write(block)
    return plain


def bench(path: Path, tmp: str, steps: set[str], baseline: bool = True
          ) -> list[tuple[str, dict]]:
    """The steps of one input, each in a fresh process; the baseline first."""
    rows = [("orjson.loads (baseline)", measure(BASELINE.format(path=str(path))))] if baseline \
        else []
    for k, (name, body, suffix) in enumerate(STEPS):
        step = "read" if body is READ_PFTRACE else suffix.lstrip(".").replace("json", "chrome")
        if (step or "info") not in steps or (step == "read" and "pftrace" not in steps):
            continue
        out = Path(tmp) / f"out{suffix}"
        rows.append((name, measure(body.format(path=str(path), out=str(out)))))
        # the next step writes a new file: replacing this one would charge it the freeing
        # of hundreds of MB of an unrelated output (the .pftrace stays for the read step)
        if not (k + 1 < len(STEPS) and STEPS[k + 1][1] is READ_PFTRACE):
            out.unlink(missing_ok=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", help="Chrome/Kineto trace (.json or .json.gz)")
    parser.add_argument("--generate", type=int, metavar="EVENTS",
                        help="benchmark a generated Kineto-shaped trace of EVENTS events")
    parser.add_argument("--big", action="store_true",
                        help="add the first trace ×10 (10 M events: needs ~5-10 GB, minutes)")
    parser.add_argument("--split", nargs="?", const="10,30", metavar="TIMES",
                        help="then split the first trace ×TIMES (default 10,30) by step and "
                             "convert the pieces with batch --engine dask (bench_split.py)")
    parser.add_argument("--keep", metavar="DIR", help="where --split writes (and reuses) "
                                                      "its large traces")
    parser.add_argument("--steps", default="info,pftrace,read,chrome",
                        help="comma-separated steps to run (default: all four; read needs "
                             "pftrace, whose output it reads back)")
    args = parser.parse_args()
    steps = set(args.steps.split(","))
    compile_bytecode()
    same = measure(SAME.format(root=str(ROOT)))
    print(f"fast path = plain path: the same .pftrace bytes and Chrome JSON values for all "
          f"{same['compared']} bundled Chrome samples")
    table: list[tuple[str, str, dict, dict]] = []   # input, step, result, its reference
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [Path(args.trace)] if args.trace else [p for p in (CORPUS, H100) if p.exists()]
        if args.generate or not inputs:
            inputs = [Path(tmp) / "generated.pt.trace.json.gz"]
            print(f"generating {args.generate or 1_000_000:,} events ...", file=sys.stderr)
            generate(inputs[0], args.generate or 1_000_000)
        first: list[tuple[str, dict]] = []
        for path in inputs:
            rows = bench(decompressed(path, tmp), tmp, steps)
            base = rows[0][1]
            label = f"{path.name}: {base['events'] / 1e6:.1f} M events, {base['bytes'] / 1e6:,.0f} MB"
            found = dict(rows)
            table += [(label, name, r, found.get(RELATIVE.get(name, ""), base))
                      for name, r in rows]
            first = first or rows
        if args.big:
            big = Path(tmp) / "big.json"
            events = multiply(inputs[0], big, 10)
            label = f"{inputs[0].name} ×10: {events / 1e6:.1f} M events, " \
                    f"{big.stat().st_size / 1e6:,.0f} MB (ratio: to the 1× run)"
            for (name, r), (_, one) in zip(bench(big, tmp, steps, baseline=False), first[1:],
                                           strict=True):
                table.append((label, name, r, one))
    print(f"{'step':26} {'wall s':>7} {'cpu s':>7} {'× wall':>7} {'× cpu':>7} {'peak RSS MB':>12}")
    shown = None
    for label, name, r, ref in table:
        if label != shown:
            print(label)
            shown = label
        print(f"  {name:24} {r['wall']:7.2f} {r['cpu']:7.2f} {r['wall'] / ref['wall']:7.2f} "
              f"{r['cpu'] / ref['cpu']:7.2f} {r['rss_mb']:12,.0f}")
    print(json.dumps([{"input": label, "step": name, **r} for label, name, r, _ in table]))
    if args.split:
        import bench_split

        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(args.keep or tmp)
            folder.mkdir(parents=True, exist_ok=True)
            bench_split.run([bench_split.big_trace(folder, int(times))
                             for times in args.split.split(",")], Path(tmp), "dask", tp=5)


if __name__ == "__main__":
    main()
