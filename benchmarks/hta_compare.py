"""Side by side with HolisticTraceAnalysis: critical path and launch delay on real traces.

HTA (``traceinsight`` on PyPI, import name ``hta``) runs in its own environment (it pulls
pandas, plotly and jupyterlab): pass that environment's python. For each trace, HTA's
critical path over all profiler steps (``annotation="ProfilerStep"``, every instance; the whole
trace without steps) and its launch statistics are set beside ``traceconv critical-path
--steps FIRST:LAST`` and ``summary --launch-stats``, and beside the lower bound no critical
path can be under: the busy time of the busiest host thread inside the steps, recomputed here
from the raw JSON (union of the thread's complete events, exact ns).

    python -m venv /tmp/hta && /tmp/hta/bin/pip install traceinsight
    python benchmarks/hta_compare.py --hta-python /tmp/hta/bin/python TRACE... > table.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTA_SIDE = r'''
import sys, json, logging, warnings
warnings.filterwarnings("ignore"); logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
out = {}
ta = TraceAnalysis(trace_files={0: sys.argv[1]}, trace_dir=sys.argv[2],
                   include_last_profiler_step=True)
steps = [int(s) for s in ta.get_profiler_steps()]
out["steps"] = steps
try:
    found = ta.critical_path_analysis(rank=0, annotation="ProfilerStep" if steps else "",
                                      instance_id=(0, len(steps) - 1) if steps else None)
    if found is None or not found[1]:
        out["error"] = "no path"
    else:
        frame = found[0].get_critical_path_breakdown()
        out["length_us"] = float(frame.duration.sum())
        out["bound_by_us"] = {k or "?": float(v)
                              for k, v in frame.groupby("bound_by").duration.sum().items()}
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"[:160]
try:
    delay = ta.get_cuda_kernel_launch_stats(visualize=False)[0]["launch_delay"]
    out["delay_median_us"] = float(delay.median())
except Exception as exc:
    out["launch_error"] = f"{type(exc).__name__}"
print(json.dumps(out))
'''
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync", "Trace",
          "ac2g"}


def _events(path: Path) -> list[dict]:
    with (gzip.open(path, "rt") if path.suffix == ".gz" else open(path)) as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def busiest_thread_ns(events: list[dict]) -> int:
    """The busiest host thread's busy time inside the host step windows (whole trace without
    steps): the union of its complete events, clipped, in ns."""
    steps = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith(
        "ProfilerStep#") and e.get("cat") != "gpu_user_annotation"]
    lo = min((round(e["ts"] * 1000) for e in steps), default=None)
    hi = max((round((e["ts"] + e["dur"]) * 1000) for e in steps), default=None)
    spans: dict[tuple, list[tuple[int, int]]] = {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") in DEVICE or "dur" not in e:
            continue
        s = round(float(e["ts"]) * 1000)
        t = s + round(float(e["dur"]) * 1000)
        if lo is not None:
            s, t = max(s, lo), min(t, hi)
        if t > s:
            spans.setdefault((e.get("pid"), e.get("tid")), []).append((s, t))
    best = 0
    for items in spans.values():
        items.sort()
        total, reach = 0, None
        for s, t in items:
            if reach is None or s >= reach:
                total, reach = total + t - s, t
            elif t > reach:
                total, reach = total + t - reach, t
        best = max(best, total)
    return best


def traceconv_side(path: Path, steps: list[int]) -> dict:
    exe = [sys.executable, "-m", "traceconv"]
    cmd = [*exe, "critical-path", str(path), "--json", "--mode", "timeline"]
    run = subprocess.run([*cmd, "--steps", f"{min(steps)}:{max(steps)}"] if steps else cmd,
                         capture_output=True, text=True, cwd=ROOT)
    if run.returncode:   # steps HTA sees and traceconv does not: the whole trace
        run = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    path_data = json.loads(run.stdout)
    stats = json.loads(subprocess.run([*exe, "summary", str(path), "--launch-stats", "--json"],
                                      capture_output=True, text=True, check=True,
                                      cwd=ROOT).stdout)["launch_stats"]
    return {"length_ns": path_data["length_ns"], "breakdown": path_data["breakdown"],
            "delay_median_ns": stats["delay_ns"].get("median")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hta-python", required=True)
    parser.add_argument("--cache", metavar="DIR", help="keep HTA's answers here (HTA is slow)")
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    print("| trace | steps | busiest thread ms | HTA path ms | HTA cpu/gpu % | traceconv ms |"
          " traceconv cpu/device/idle % | launch delay median HTA / traceconv µs |")
    print("|---|---|---:|---:|---|---:|---|---|")
    for name in args.traces:
        path = Path(name).resolve()
        cached = (Path(args.cache) / f"{path.parent.name}__{path.name}.hta.json"
                  if args.cache else None)
        if cached is not None and cached.exists():
            theirs = json.loads(cached.read_text())
        else:
            hta = subprocess.run([args.hta_python, "-c", HTA_SIDE, str(path), str(path.parent)],
                                 capture_output=True, text=True, timeout=900)
            try:
                theirs = json.loads(hta.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                theirs = {"error": (hta.stderr.strip().splitlines() or ["?"])[-1][:80],
                          "steps": []}
            if cached is not None:
                cached.write_text(json.dumps(theirs))
        ours = traceconv_side(path, theirs.get("steps", []))
        bound = busiest_thread_ns(_events(path))
        length = theirs.get("length_us")
        by = theirs.get("bound_by_us", {})
        cpu = sum(v for k, v in by.items() if k.startswith("cpu") or k == "data_loading")
        hta_split = f"{100 * cpu / length:.0f}/{100 - 100 * cpu / length:.0f}" if length else ""
        total = ours["length_ns"] or 1
        b = ours["breakdown"]
        device = b["kernel"] + b["memcpy"] + b["communication"]
        steps = theirs.get("steps") or []
        delay = theirs.get("delay_median_us")
        ours_delay = ours["delay_median_ns"]
        print(f"| {path.name} | {f'{min(steps)}-{max(steps)}' if steps else 'all'} | "
              f"{bound / 1e6:,.3f} | "
              f"{f'{length / 1e3:,.3f}' if length else theirs.get('error', '?')[:60]} | "
              f"{hta_split} | {ours['length_ns'] / 1e6:,.3f} | "
              f"{100 * b['cpu'] / total:.0f}/{100 * device / total:.0f}/"
              f"{100 * b['idle'] / total:.0f} | "
              f"{'-' if delay is None else f'{delay:,.1f}'} / "
              f"{'-' if ours_delay is None else f'{ours_delay / 1e3:,.3f}'} |", flush=True)


if __name__ == "__main__":
    main()
