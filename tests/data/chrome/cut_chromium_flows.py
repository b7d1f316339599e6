"""Cut ``chromium156_renderer_flows_cut.json.gz`` from a Chromium trace (JSON).

    python tests/data/chrome/cut_chromium_flows.py chromium_headless_flows.json

The input: Chromium 156.0.8078.114 headless with ``toplevel.flow`` among the categories
(PROVENANCE.md). Kept, as written and in file order: every event of one renderer's main
thread and its IO thread but for async events (``b``/``e``/``n``, whose objects span
other threads), the flow events (``s``/``t``/``f``) of the flows that start and end on
those two threads, and the process's and threads' names.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

THREADS = {(30800, 30800), (30800, 30835)}   # (pid, tid): CrRendererMain, Chrome_ChildIOThread
FLOW = ("s", "t", "f")
OUT = Path(__file__).with_name("chromium156_renderer_flows_cut.json.gz")


def main(source: str) -> None:
    events = json.loads(Path(source).read_bytes())["traceEvents"]
    places = defaultdict(set)   # (category, id) -> the threads of its points
    for event in events:
        if event.get("ph") in FLOW:
            places[(event.get("cat"), event["id"])].add((event["pid"], event["tid"]))

    def kept(event: dict) -> bool:
        place, ph = (event.get("pid"), event.get("tid")), event.get("ph")
        if ph == "M":
            return event["pid"] in {p for p, _ in THREADS} and (
                event["name"] == "process_name" or place in THREADS)
        if ph in FLOW:
            return places[(event.get("cat"), event["id"])] <= THREADS
        return place in THREADS and ph not in ("b", "e", "n")

    cut = [event for event in events if kept(event)]
    text = json.dumps({"traceEvents": cut}, separators=(",", ":"), ensure_ascii=False)
    OUT.write_bytes(gzip.compress((text.replace("},{", "},\n{") + "\n").encode(), mtime=0))
    print(f"{OUT.name}: {len(cut)} events of {len(events)}")


if __name__ == "__main__":
    main(sys.argv[1])
