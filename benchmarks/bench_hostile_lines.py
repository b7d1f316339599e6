"""Benchmark: the readers' regexes and the text readers on hostile lines (long runs).

``patterns``: for each compiled pattern of the readers (``tests/regex_census.py``), the
slowest of its hostile lines at 16 KiB and at 64 KiB, and their ratio (4 = linear, 16 =
quadratic; a diagnostic, the test checks a generous time limit instead). ``readers``: each
text reader given a file of such lines, ``traceconv info --format NAME`` in a fresh
process under a 120 s limit, its CPU time.

    python benchmarks/bench_hostile_lines.py patterns
    python benchmarks/bench_hostile_lines.py readers
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.regex_census import apply, census, heads, hostile_lines  # noqa: E402

NSYS_HEADER = "Time (%),Total Time (ns),Instances,Avg (ns),Min (ns),Max (ns),Name"
SVG_HEAD = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:tag="https://megengine.org.cn">\n'
RECT = ('<rect x="1" y="1" width="1" height="1" tag:type="tensor" tag:name="t" tag:address="0x1" {} '
        'tag:size="4B " tag:layout="{{{}}}" tag:produced="1ms " tag:erased="2ms ">\n</rect>\n')


def _as_lines(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _as_nsys_header(lines: list[str]) -> str:
    # the runs as header cells (each read for its unit), one line under the 1 M cut
    return ",".join([NSYS_HEADER, *lines[:14]]) + "\n1,2,3,4,5,6,x\n"


def _as_svg(lines: list[str]) -> str:
    # each run as a rect's layout, and as a word among its attributes
    return SVG_HEAD + "".join(RECT.format(line.replace("=", ""), line) for line in lines[:40]) \
        + "</svg>\n"


# each text reader, its file's suffix and how the lines are laid out in it
TEXT_READERS = {"paddle-report": (".txt", _as_lines), "paddle-summary": (".txt", _as_lines),
                "migraphx": (".txt", _as_lines), "nsys-stats": (".csv", _as_nsys_header),
                "megengine-memflow-svg": (".svg", _as_svg)}
# line starts that lead each reader's patterns into a run
READER_STARTS = ["", "x", "x 1", "a=b", "reader_cost:", "@1 = ", "gpu::x", "Total time:",
                 '<rect a="1" ', "Time (%),"]


def _slowest(entry, size: int) -> tuple[float, str]:
    slowest = (0.0, "")
    for description, line in hostile_lines(heads(entry.pattern), size):
        subject = line.encode() if isinstance(entry.pattern.pattern, bytes) else line
        started = time.process_time()
        apply(entry, subject)
        slowest = max(slowest, (time.process_time() - started, description))
    return slowest


def patterns() -> None:
    print(f"{'16 KiB s':>9} {'64 KiB s':>9} {'ratio':>6}  pattern (slowest line)")
    for entry in census():
        small, _ = _slowest(entry, 16 << 10)
        large, line = _slowest(entry, 64 << 10)
        print(f"{small:9.4f} {large:9.4f} {large / max(small, 1e-6):6.1f}  {entry.label} ({line})")


def readers() -> None:
    lines = [line for _, line in hostile_lines(READER_STARTS, 64 << 10)]
    with tempfile.TemporaryDirectory() as folder:
        for name, (suffix, lay_out) in TEXT_READERS.items():
            path = Path(folder) / f"hostile{suffix}"
            path.write_text(lay_out(lines), encoding="utf-8")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                result = subprocess.run(
                    [sys.executable, "-m", "traceconv", "info", "--format", name, str(path)],
                    capture_output=True, text=True, timeout=120, cwd=ROOT)
                outcome = f"exit {result.returncode}"
            except subprocess.TimeoutExpired:
                outcome = "TIMEOUT (120 s)"
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            print(f"{name:24} {path.stat().st_size / 1e6:5.1f} MB  {cpu:7.1f} s CPU  {outcome}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("patterns", "readers"))
    {"patterns": patterns, "readers": readers}[parser.parse_args().what]()
