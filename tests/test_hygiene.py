"""Rules about the tests themselves, checked so that they keep holding as tests are added.

No wall-clock assertions: on a shared 2-core CI machine a time limit fails at random (one
failed 2 of 3 full runs). How fast something is belongs in ``benchmarks/``.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).parent
CLOCKS = re.compile(r"\btime\.(perf_counter|monotonic|time|process_time)\b|\btimeit\b")


def test_no_test_reads_the_clock():
    offenders = [f"{path.name}:{number}"
                 for path in sorted(TESTS.rglob("*.py")) if path.name != "test_hygiene.py"
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if CLOCKS.search(line)]
    assert not offenders, f"move timing to benchmarks/: {offenders}"
