"""Cut ``chromium156_headless_startup_cut.json`` from a Chromium startup trace (JSON).

    python tests/data/chrome/cut_chromium_startup.py chromium_headless_startup.json

The input: Chromium 156.0.8078.114 headless, ``--trace-startup=<devtools.timeline,v8,blink,
cc,gpu,ipc,...> --trace-startup-duration=4 --trace-startup-format=json`` on a small page
(PROVENANCE.md). Kept, as written and in file order: every event of two threads, the GPU
process's main thread (its ``GpuMain`` and ``Run Message Loop`` ``B`` events never end) and
the browser's ``PerfettoTrace`` thread (four ``B`` events never end: the tracing stopped
inside them), but for flow events (``s``/``f``) and async instants (``n``), which would
name slices left out; two async ``b`` events of the browser's main thread that never end
(``LayerTreeHostSize``, ``ChromeBrowserMainParts::MainMessageLoopRun``); the process and
thread names of those. Every ``B``/``E`` and ``b``/``e`` pair of the cut is a pair of the
input (whole threads), so what never ends here never ended there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

THREADS = {(24219, 24219), (24153, 24177)}        # (pid, tid): CrGpuMain, PerfettoTrace
ASYNC = {(24153, "0x2f", "LayerTreeHostSize"),  # (pid, local id, name): b without e
         (24153, "0x53", "ChromeBrowserMainParts::MainMessageLoopRun")}
OUT = Path(__file__).with_name("chromium156_headless_startup_cut.json")


def kept(event: dict) -> bool:
    place = (event.get("pid"), event.get("tid"))
    ph = event.get("ph")
    if ph == "M":
        return event["pid"] in {p for p, _ in THREADS} and (
            event["name"] == "process_name" or place in THREADS)
    if ph == "b":
        local = (event.get("id2") or {}).get("local")
        if (event["pid"], local, event["name"]) in ASYNC:
            return True
    return place in THREADS and ph not in ("s", "f", "n")


def main(source: str) -> None:
    events = json.loads(Path(source).read_bytes())["traceEvents"]
    cut = [e for e in events if kept(e)]
    text = json.dumps({"traceEvents": cut}, separators=(",", ":"), ensure_ascii=False)
    OUT.write_text(text.replace("},{", "},\n{") + "\n", encoding="utf-8")
    print(f"{OUT.name}: {len(cut)} events of {len(events)}")


if __name__ == "__main__":
    main(sys.argv[1])
