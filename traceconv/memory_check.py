"""Before a big trace is read whole: will it fit in the memory left here?

Reading a trace whole holds it in memory; a trace of more than the machine has would be read
for minutes and then killed (out of memory), leaving nothing but ``Killed``. For the formats
whose peak is measured, the peak is close to proportional to the input's size
(``benchmarks/README.md``: Chrome JSON converted whole with the argument texts on disk, 10 M
Kineto events, 2.67 GB, peak at 0.92 GB and 30 M, 8.0 GB, at 2.58 GB; with them in memory,
1 M events, 353 MB, at 352 MB; a .pftrace of 10 M events, 1.53 GB, read at 4.5 GB), so
:func:`traceconv.load` compares that estimate with the memory available before it reads,
and the refusal says what to do instead (:data:`INSTEAD`: for Chrome JSON, ``overview`` and
``split`` read any size in bounded memory). The estimate is of the bytes actually read: a
file's size where it is known, before reading; the decompressed bytes of a compressed input
and those of standard input, a pipe or a device as they are read (:class:`MemoryLimit`).

The protobuf inputs that a reader decodes message by message (XPlane, Paddle's) cost per
message more than per byte: each event becomes a row however few bytes it takes, so a
file of two-byte events would take a hundred times its size and more. Their limit adds
the rows (the reader module's ``ROW_PEAK``, a :class:`RowPeak`, handed over by
:func:`traceconv.load`): once the content is read, before it is decoded, the bound that
needs no count (every message of the fewest bytes) and, only where it does not decide, a
count of the rows in a walk of the bytes read that decodes nothing
(:meth:`MemoryLimit.refuse_rows`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .errors import InputError
from .units import format_bytes


class RowPeak(Protocol):
    """What the rows of a message format add to the peak (the format's ``ROW_PEAK``:
    :class:`traceconv.formats.protowire.counting.RowPeak`)."""

    def most(self, size: int) -> int:
        """At most, for ``size`` bytes of content (nothing read)."""

    def counted(self, data: bytes) -> int:
        """For the content ``data``, its rows counted."""


# peak bytes per input byte read and converted whole, per format: (argument texts on disk,
# in memory), above the interpreter's own; a little under the measured, so that a trace
# that would just fit is not refused: Chrome JSON 0.32-0.35 (10 M and 30 M Kineto events)
# and 0.87-0.89 (1 M CPU, 0.7 M H100); a .pftrace (its args are never text) 2.9 (10 M
# Kineto events written by traceconv), 3.2 (1 M) and 6.9 (the H100 trace); XPlane 30-36
# (its stats become args), Paddle's protobuf 3-7 and binary profile 8-16 above their rows;
# MegEngine's profile JSON 6.9 (a real one grown 50x and 300x, 66 and 398 MB, spilled or
# not) and StaticMemoryInfo.json 6.0 (grown 50x and 300x, 6 and 37 MB)
PEAK_PER_BYTE = {"chrome": (0.33, 0.85), "perfetto": (2.8, 2.8), "xplane": (28, 28),
                 "paddle-pb": (3, 3), "paddle-profile": (8, 8), "megengine": (6.7, 6.7),
                 "megengine-meminfo": (5.8, 5.8)}
# what to run instead, per format (a .pftrace: Perfetto's own reader of any size)
INSTEAD = {
    "chrome": "convert it to Perfetto piece by piece with `traceconv {path} -o "
              "out.pftrace`, see the whole run with `traceconv overview {path} -o "
              "overview.pftrace` or cut it into pieces that fit with `traceconv split {path} "
              "-o DIR --to perfetto` (each in bounded memory)",
    "perfetto": "open it with Perfetto's trace_processor_shell (`--httpd` serves it to the "
                "Perfetto UI), which holds a trace in less",
}
ELSEWHERE = "convert it on a machine with more memory"   # where INSTEAD names nothing
# content of unknown size read whole: the pieces read and the bytes joined from them (300 MB
# piped into an execution trace's reader: a 627 MB peak)
HELD_PER_BYTE = 2.0
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


def needed_memory(size: int, format_name: str, spilled: bool) -> int | None:
    """The estimated peak of reading and converting ``size`` bytes of content of
    ``format_name`` whole (``spilled``: argument texts on disk); None when the format's
    peak is not measured.

    >>> needed_memory(138424, "perfetto", True) == int(2.8 * 138424) + (100 << 20)
    True
    >>> needed_memory(138424, "nsys", False) is None
    True
    """
    factors = PEAK_PER_BYTE.get(format_name)
    if factors is None:
        return None
    return int(size * factors[0 if spilled else 1]) + BASE_BYTES


def expanded_size(path: str) -> int:
    """A guess, before reading, of the bytes the file ``path`` holds once read (a ``.gz``
    counted at :data:`GZIP_GUESS` times its size), to choose how to read it; the memory
    check itself judges the bytes read (:class:`MemoryLimit`).

    >>> gz = "samples/torch/resnet18_train_cuda.pt.trace.json.gz"
    >>> expanded_size(gz) == GZIP_GUESS * os.path.getsize(gz)
    True
    """
    return os.path.getsize(path) * (GZIP_GUESS if path.endswith(".gz") else 1)


@dataclass(frozen=True)
class MemoryLimit:
    """How much content of one format can be read whole in the memory available: the input
    layer (:class:`traceconv.io.Source`) refuses a file whose size is known to be over
    :attr:`content_bytes` before reading it, and any other input (compressed, standard
    input, a pipe or a device) once the bytes read, decompressed, pass it. The rows of a
    message format (``row_peak``) are judged once its content is read (:meth:`refuse_rows`).

    >>> limit = MemoryLimit("chrome", False, available=(100 << 20) + 850)
    >>> limit.content_bytes
    1000
    >>> print(limit.refusal("t.json", 4000).message[:66])
    holding it whole needs about 100 MiB of memory and 100 MiB is avai
    """

    format_name: str
    spilled: bool   # argument texts on disk (see needed_memory)
    available: int
    row_peak: RowPeak | None = None   # what a message format's rows add
    # the content is held in memory whole (Source.read_bytes), any format, measured or not
    # (a reader that streams Chrome JSON holds a third of it): HELD_PER_BYTE at least
    held_whole: bool = False

    @property
    def factor(self) -> float:
        """Peak bytes per byte of content."""
        measured = PEAK_PER_BYTE.get(self.format_name)
        factor = measured[0 if self.spilled else 1] if measured else 1.0
        return max(factor, HELD_PER_BYTE) if self.held_whole else factor

    @property
    def content_bytes(self) -> int:
        """The most bytes of content whose estimated peak fits the memory available.

        >>> MemoryLimit("nsys", True, (100 << 20) + 4096, held_whole=True).content_bytes
        2048
        """
        return max(int((self.available - BASE_BYTES) / self.factor), 0)

    def needed(self, size: int) -> int:
        """The estimated peak of ``size`` bytes of content."""
        return int(size * self.factor) + BASE_BYTES

    def refuse_rows(self, name: str, data: bytes, path: str | None = None) -> None:
        """Raise :meth:`refusal` when the content ``data`` of the input ``name``, read whole
        and within :attr:`content_bytes`, would not fit with its rows: nothing is counted
        where even every message of the fewest bytes would fit, the rows are counted in a
        walk of ``data`` (no decode) only where that bound does not decide.

        >>> from traceconv.formats.xplane import ROW_PEAK
        >>> events = b"\\x0a\\x0e\\x1a\\x0c" + b"\\x22\\x00" * 6   # one plane, one line, 6 events
        >>> limit = MemoryLimit("xplane", False, (100 << 20) + 28 * 16 + 160 * 6, ROW_PEAK)
        >>> limit.refuse_rows("t.xplane.pb", events)   # (its 6 events fit, not 8 at most)
        >>> MemoryLimit("xplane", False, limit.available - 1, ROW_PEAK).refuse_rows(
        ...     "t.xplane.pb", events)
        Traceback (most recent call last):
        traceconv.errors.InputError: t.xplane.pb: holding it whole needs about 100 MiB of memory and 100 MiB is available: convert it on a machine with more memory, or try anyway with TRACECONV_MEMORY_CHECK=off in the environment
        """
        if self.row_peak is None:
            return
        needed = self.needed(len(data))
        if needed + self.row_peak.most(len(data)) <= self.available:
            return
        rows = self.row_peak.counted(data)
        if needed + rows > self.available:
            raise self.refusal(name, len(data), path=path, rows=rows)

    def refusal(self, name: str, size: int, passed: bool = False,
                path: str | None = None, rows: int = 0) -> InputError:
        """The one line refusing the input ``name`` (``path`` in the commands it suggests;
        default ``name``) of ``size`` bytes (``passed``: its content is known only to pass
        ``size``, where reading stopped) whose rows take ``rows`` bytes: what it needs,
        what is left, what to run instead and how to try anyway."""
        needed = self.needed(size) + rows
        how_much = (f"more than {format_bytes(needed)} of memory (its content passes "
                    f"{format_bytes(size)} here)" if passed
                    else f"about {format_bytes(needed)} of memory")
        return InputError(
            f"holding it whole needs {how_much} and {format_bytes(self.available)} "
            f"is available: {INSTEAD.get(self.format_name, ELSEWHERE).format(path=path or name)}"
            f", or try anyway with {BYPASS} in the environment", file=name)


def memory_limit(format_name: str, spilled: bool, available: int | None = None,
                 row_peak: RowPeak | None = None, held_whole: bool = False
                 ) -> MemoryLimit | None:
    """The :class:`MemoryLimit` of reading ``format_name`` whole here (``available``:
    default the memory this process can still take; ``row_peak``: what its rows add, for a
    message format; ``held_whole``: of its content read into memory whole, any format);
    None where nothing is checked: with :data:`BYPASS` in the environment, for a format
    whose peak is not measured (unless ``held_whole``), or where the memory available is
    not known.

    >>> memory_limit("chrome", True, available=1 << 30).content_bytes   # (1 GiB - 100 MiB) / 0.33
    2936012800
    >>> memory_limit("nsys", True, available=1 << 30) is None
    True
    >>> memory_limit("nsys", True, available=1 << 30, held_whole=True).content_bytes
    484442112
    """
    if os.environ.get(BYPASS.split("=")[0]) == "off" or (
            format_name not in PEAK_PER_BYTE and not held_whole):
        return None
    if available is None:
        available = available_memory()
    return None if available is None else MemoryLimit(format_name, spilled, available, row_peak,
                                                      held_whole)
