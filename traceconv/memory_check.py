"""Before a big trace is read whole: will it fit in the memory left here?

Reading a trace whole holds it in memory; a trace of more than the machine has would be read
for minutes and then killed (out of memory), leaving nothing but ``Killed``. For the formats
whose peak is measured, the peak is close to proportional to the input's size
(``benchmarks/README.md``: Chrome JSON converted whole with the argument texts on disk, 10 M
Kineto events, 2.67 GB, peak at 0.92 GB and 30 M, 8.0 GB, at 2.58 GB; with them in memory,
1 M events, 353 MB, at 352 MB; a .pftrace of 10 M events, 1.53 GB, read at 4.5 GB), so
:func:`traceconv.load` compares that estimate with the memory available before it reads,
and the refusal says what to do instead (:data:`INSTEAD`: for Chrome JSON, ``overview`` and
``split`` read any size in bounded memory).

The protobuf inputs that a reader decodes message by message (XPlane, Paddle's) cost per
message more than per byte: each event becomes a row however few bytes it takes, so a
file of two-byte events would take a hundred times its size and more. Their estimate adds
the rows (the reader module's ``ROW_PEAK``, a :class:`RowPeak`), counted in a walk of
the file that decodes nothing, made only when the bound that needs no count (every
message of the fewest bytes) does not fit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Protocol

from .errors import InputError
from .io import Source
from .units import format_bytes

Rows = Literal["counted", "none", "most"]


class RowPeak(Protocol):
    """What the rows of a message format add to the peak (the format's ``ROW_PEAK``:
    :class:`traceconv.formats.protowire.counting.RowPeak`)."""

    def most(self, size: int) -> int:
        """At most, for a file of ``size`` bytes (no read)."""

    def counted(self, data: bytes) -> int:
        """For the file's content ``data``, its rows counted."""

# peak bytes per input byte read and converted whole, per format: (argument texts on disk,
# in memory), above the interpreter's own; a little under the measured, so that a trace
# that would just fit is not refused: Chrome JSON 0.32-0.35 (10 M and 30 M Kineto events)
# and 0.87-0.89 (1 M CPU, 0.7 M H100); a .pftrace (its args are never text) 2.9 (10 M
# Kineto events written by traceconv), 3.2 (1 M) and 6.9 (the H100 trace); XPlane 30-36
# (its stats become args), Paddle's protobuf 3-7 and binary profile 8-16 above their rows
PEAK_PER_BYTE = {"chrome": (0.33, 0.85), "perfetto": (2.8, 2.8), "xplane": (28, 28),
                 "paddle-pb": (3, 3), "paddle-profile": (8, 8)}
# what to run instead, per format (a .pftrace: Perfetto's own reader of any size)
INSTEAD = {
    "chrome": "see the whole run with `traceconv overview {path} -o overview.pftrace` and "
              "cut it into pieces that fit with `traceconv split {path} -o DIR --to "
              "perfetto` (both in bounded memory)",
    "perfetto": "open it with Perfetto's trace_processor_shell (`--httpd` serves it to the "
                "Perfetto UI), which holds a trace in less",
}
ELSEWHERE = "convert it on a machine with more memory"   # where INSTEAD names nothing
BASE_BYTES = 100 << 20   # the interpreter and the libraries
GZIP_GUESS = 8           # how much larger a .gz trace is once decompressed (about)
BYPASS = "TRACECONV_MEMORY_CHECK=off"   # in the environment: no check


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


def needed_memory(path: str, format_name: str, spilled: bool, row_peak: RowPeak | None = None,
                  rows: Rows = "counted") -> int | None:
    """The estimated peak of reading and converting the file ``path`` of ``format_name``
    whole (``spilled``: argument texts on disk; a ``.gz`` counted at :data:`GZIP_GUESS` times
    its size); None when the format's peak is not measured or ``path`` is no file. The rows
    of a message format (its ``row_peak``) are ``counted`` (a walk of the file), left out
    (``none``) or taken at their ``most`` (None for a compressed file, whose size bounds
    nothing).

    >>> needed_memory("samples/torch/cnn_step5.pt.trace.json", "chrome", False) > 100 << 20
    True
    >>> needed_memory("samples/torch/cnn_step5.pt.trace.json", "nsys", False) is None
    True
    >>> needed_memory("samples/perfetto/rocprofv3_hip_taylor.pftrace", "perfetto", True) \\
    ...     == int(2.8 * 138424) + (100 << 20)
    True
    >>> from traceconv.formats.xplane import ROW_PEAK
    >>> xplane = "samples/xplane/jax_rocm_mi300_conv.xplane.pb.gz"
    >>> needed_memory(xplane, "xplane", True, ROW_PEAK, "most") is None   # compressed
    True
    """
    factors = PEAK_PER_BYTE.get(format_name)
    if factors is None or not os.path.isfile(path):
        return None
    needed = int(expanded_size(path) * factors[0 if spilled else 1]) + BASE_BYTES
    if row_peak is None or rows == "none":
        return needed
    if rows == "most":
        return None if Source(path).compressed else needed + row_peak.most(
            os.path.getsize(path))
    return needed + row_peak.counted(Source(path).read_bytes())


def expanded_size(path: str) -> int:
    """The bytes the file ``path`` holds once read (a ``.gz`` counted at :data:`GZIP_GUESS`
    times its size).

    >>> gz = "samples/torch/resnet18_train_cuda.pt.trace.json.gz"
    >>> expanded_size(gz) == GZIP_GUESS * os.path.getsize(gz)
    True
    """
    return os.path.getsize(path) * (GZIP_GUESS if path.endswith(".gz") else 1)


def refuse_what_cannot_fit(path: str, format_name: str, spilled: bool,
                           available: int | None = None,
                           row_peak: RowPeak | None = None) -> None:
    """Raise :class:`InputError` (one line: what is needed, what is left, what to run
    instead, how to try anyway) when reading ``path`` whole would need more memory than is
    available (``row_peak``: what a message format's rows add); nothing when :data:`BYPASS`
    is set in the environment.

    >>> cnn = "samples/torch/cnn_step5.pt.trace.json"
    >>> refuse_what_cannot_fit(cnn, "chrome", False, available=1 << 40)
    >>> try:
    ...     refuse_what_cannot_fit(cnn, "chrome", False, available=1 << 20)
    ... except InputError as refused:
    ...     print(refused.message[:66])
    holding it whole needs about 101 MiB of memory and 1 MiB is availa
    """
    if os.environ.get(BYPASS.split("=")[0]) == "off":
        return
    if available is None:
        available = available_memory()
    if available is None:
        return
    # (the estimates that read nothing first: the rows are counted only when neither
    # decides, so no file's walk is paid where its size alone says whether it fits)
    needed = needed_memory(path, format_name, spilled, row_peak, "none")
    if needed is None:
        return
    if needed <= available:
        most = needed_memory(path, format_name, spilled, row_peak, "most")
        if most is not None and most <= available:
            return
        needed = needed_memory(path, format_name, spilled, row_peak)
        if needed is None or needed <= available:
            return
    raise InputError(
        f"holding it whole needs about {format_bytes(needed)} of memory and "
        f"{format_bytes(available)} is available: "
        f"{INSTEAD.get(format_name, ELSEWHERE).format(path=path)}, "
        f"or try anyway with {BYPASS} in the environment", file=path)
