"""Before a big JSON trace is converted whole: will it fit in the memory left here?

Converting a trace whole holds it in memory; a trace of more than the machine has would run
for minutes and then be killed (out of memory), leaving nothing but ``Killed``. The peak is
close to proportional to the JSON's size (``benchmarks/README.md``, "Bigger inputs": with the
argument texts on disk, 10 M Kineto events, 2.67 GB, peak at 1.91 GB and 30 M, 8.0 GB, at
6.07 GB; with them in memory, 10 M peak at 3.51 GB), so the command line compares that
estimate with the memory available before it reads anything, and says what to do instead:
``overview`` and ``split`` read any size in bounded memory.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..units import format_bytes

# peak bytes per byte of JSON converted whole (a little under the measured 0.72-0.76 and
# 1.32, so that a trace that would just fit is never refused), and the interpreter's own
SPILLED_PEAK_PER_BYTE, IN_MEMORY_PEAK_PER_BYTE = 0.7, 1.25
BASE_BYTES = 100 << 20
JSON_SUFFIXES = (".json", ".json.gz")


def available_memory(meminfo: Path = Path("/proc/meminfo"),
                     cgroup: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Bytes this process can still take: the kernel's ``MemAvailable``, lowered to what a
    cgroup v2 limit (a container's) leaves; None where neither is known (not Linux).

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "meminfo").write_text("MemTotal: 8000 kB\\nMemAvailable: 4000 kB\\n")
    >>> _ = (folder / "memory.max").write_text("3072000\\n")
    >>> _ = (folder / "memory.current").write_text("1024000\\n")
    >>> available_memory(folder / "meminfo", folder), available_memory(folder / "none", folder / "x")
    (2048000, None)
    """
    found: list[int] = []
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = (cgroup / "memory.max").read_text().strip()
        if limit != "max":
            found.append(max(int(limit) - int((cgroup / "memory.current").read_text()), 0))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def needed_memory(inputs: tuple[str, ...], spilled: bool, gzip_guess: int) -> int | None:
    """The estimated peak of converting the JSON ``inputs`` whole (``spilled``: argument
    texts on disk; a ``.gz`` counted at ``gzip_guess`` times its size); None when an input
    is not a JSON file (standard input, other formats: their peaks are not measured).

    >>> needed_memory(("samples/torch/cnn_step5.pt.trace.json",), False, 8) > 100 << 20
    True
    >>> needed_memory(("-",), True, 8) is None
    True
    """
    total = 0
    for name in inputs:
        if not name.endswith(JSON_SUFFIXES) or not os.path.isfile(name):
            return None
        total += os.path.getsize(name) * (gzip_guess if name.endswith(".gz") else 1)
    per_byte = SPILLED_PEAK_PER_BYTE if spilled else IN_MEMORY_PEAK_PER_BYTE
    return int(total * per_byte) + BASE_BYTES


def refuse_what_cannot_fit(inputs: tuple[str, ...], spilled: bool, gzip_guess: int,
                           available: int | None = None) -> None:
    """Raise :class:`InputError` (one line: what is needed, what is left, what to run
    instead) when converting ``inputs`` whole would need more memory than is available.

    >>> cnn = ("samples/torch/cnn_step5.pt.trace.json",)
    >>> refuse_what_cannot_fit(cnn, False, 8, available=1 << 40)
    >>> try:
    ...     refuse_what_cannot_fit(cnn, False, 8, available=1 << 20)
    ... except InputError as refused:
    ...     print(refused.message[:66])
    converting it whole needs about 101 MiB of memory and 1 MiB is ava
    """
    needed = needed_memory(inputs, spilled, gzip_guess)
    if available is None:
        available = available_memory()
    if needed is None or available is None or needed <= available:
        return
    first = inputs[0]
    raise InputError(
        f"converting it whole needs about {format_bytes(needed)} of memory and "
        f"{format_bytes(available)} is available: see the whole run with `traceconv overview "
        f"{first} -o overview.pftrace` and cut it into pieces that fit with `traceconv split "
        f"{first} -o DIR --to perfetto` (both in bounded memory), or try anyway with "
        "--no-memory-check", file=first)
