"""Write ``xprof_trace_viewer.json.gz``: what xprof's own trace viewer conversion makes of each
XPlane sample, per (plane, line): events drawn per name and the earliest start (µs).

Needs xprof (``pip install xprof``, 2.24.2 made the checked-in file), which traceconv does
not depend on; the tests only read the JSON. Run from the repository root:
``python tests/data/xplane/make_xprof_reference.py ../shared/samples/xplane/*.xplane.pb``.
Samples are keyed by the sha256 of their (uncompressed) bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).with_name("xprof_trace_viewer.json.gz")


def convert(path: Path, data: bytes) -> dict:
    from xprof.convert import raw_to_tool_data  # (imported here: pytest collects this file)

    with tempfile.TemporaryDirectory() as folder:   # xprof caches results beside its input
        copy = Path(folder) / path.name.removesuffix(".gz")
        copy.write_bytes(data)
        text, _ = raw_to_tool_data.xspace_to_tool_data(
            [str(copy)], "trace_viewer", {"use_saved_result": False,
                                          "trace_viewer_options": {"resolution": 0}})
    events = json.loads(text)["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    lines: dict[str, dict] = defaultdict(lambda: {"names": defaultdict(int), "first_us": None})
    for e in events:
        if e.get("ph") not in ("X", "i"):
            continue
        key = f"{processes.get(e['pid'])}|{threads.get((e['pid'], e.get('tid')), e.get('tid'))}"
        row = lines[key]
        row["names"][e["name"]] += 1
        row["first_us"] = e["ts"] if row["first_us"] is None else min(row["first_us"], e["ts"])
    return {"lines": dict(sorted(lines.items()))}


def main(paths: list[str]) -> None:
    found = json.loads(gzip.decompress(OUT.read_bytes())) if OUT.exists() else {}
    for name in paths:
        path = Path(name)
        data = path.read_bytes()
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        entry = convert(path, data)
        entry["file"] = path.name
        found[hashlib.sha256(data).hexdigest()] = entry
    import xprof.version  # type: ignore[import-not-found]

    found["_producer"] = f"xprof {xprof.version.__version__} trace_viewer (resolution 0)"
    OUT.write_bytes(gzip.compress((json.dumps(found, indent=1, sort_keys=True) + "\n").encode(),
                                  mtime=0))
    shutil.rmtree(Path(tempfile.gettempdir()) / "xprof_cache", ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
