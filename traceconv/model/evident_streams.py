"""Host threads that are evidently device streams: the one rule, for readers whose input
does not say where its work ran.

A trace with no categories (a tool that writes plain Chrome JSON from CUPTI records) puts
its device work on an ordinary thread, and every analysis would read that thread's copies
and kernels as host work. :func:`evident_streams` finds such a thread by what is on it, and
only when it leaves no doubt: every slice on it is uncategorised and unclassified by the
reader, every slice's name is device work (:class:`StreamWords`: a copy or memset, or a
kernel signature) and no name is host work, no slice lies within or across another (a
device stream runs one thing at a time; host code nests), and its process is evidently a
device: one of its such threads runs a copy or memset, which only a device names so. A
signature's shape alone proves nothing (host C++ is templated too: ``void
std::__invoke<...>(...)``, torch's CPU ``at::native::add_kernel<float>``): a thread of
kernels is a stream only beside the copies of its device. The words are the producers'
and live in :mod:`traceconv.vocabularies`; the reader moves the threads it is given and
counts them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .activity import Activity
from .entities import ProcessKind, TrackKind
from .trace import Trace


@dataclass(frozen=True)
class StreamWords:
    """Tests of a name that say where its work ran: ``copy`` and ``kernel`` are true of work
    only a device runs (copies and memsets; kernels by their signatures), ``host`` of work
    only a host thread runs (runtime calls, framework operators, Python frames)."""

    copy: Callable[[str], object]
    kernel: Callable[[str], object]
    host: Callable[[str], object]


@dataclass(frozen=True)
class EvidentStream:
    """A host thread read as a device stream, and why: its slices, how many are copies
    (or memsets) and kernels by name, and one name as an example."""

    track: int
    slices: int
    copies: int
    kernels: int
    example: str

    def evidence(self) -> str:
        """The evidence in words, for a diagnostic's example.

        >>> EvidentStream(0, 3, 2, 1, "[MEMCPY] HtoD").evidence()
        "3 slices, none within another, all device work by name: 2 copies or memsets, 1 kernels (e.g. '[MEMCPY] HtoD')"
        """
        return (f"{self.slices} slices, none within another, all device work by name: "
                f"{self.copies} copies or memsets, {self.kernels} kernels "
                f"(e.g. {self.example[:80]!r})")


def evident_streams(trace: Trace, words: StreamWords) -> list[EvidentStream]:
    """The threads of host processes in ``trace`` that are evidently device streams (see the
    module text), in track order; the trace is not changed.

    >>> import re
    >>> from traceconv.model import Trace
    >>> words = StreamWords(copy=re.compile("memcpy", re.I).search,
    ...                     kernel=re.compile("_kernel<").search, host=re.compile("^cuda").search)
    >>> t = Trace(); p = t.add_process("1"); gpu = t.add_track("7", process=p)
    >>> _ = t.add_slice(gpu, 0, 5, "[MEMCPY] HtoD"); _ = t.add_slice(gpu, 5, 2, "mul_kernel<4>(int)")
    >>> cpu = t.add_track("8", process=p); _ = t.add_slice(cpu, 0, 9, "cudaMemcpy")
    >>> [(s.track, s.copies, s.kernels) for s in evident_streams(t, words)]
    [(0, 1, 1)]
    >>> q = t.add_process("2"); cpu_kernels = t.add_track("9", process=q)
    >>> _ = t.add_slice(cpu_kernels, 0, 5, "add_kernel<float>(float*)")
    >>> [s.track for s in evident_streams(t, words)]   # (no copy in its process)
    [0]
    """
    s = trace.slices
    n = len(s)
    empty = trace.strings.find("")
    if not n or empty is None:
        return []
    host_thread = np.array([t.kind is TrackKind.THREAD
                            and trace.processes[t.process].kind is ProcessKind.HOST
                            for t in trace.tracks] + [False], bool)
    track = s.numpy_view("track")
    track = np.where((track < 0) | (track >= len(trace.tracks)), np.int32(len(trace.tracks)),
                     track).astype(np.int32, copy=False)
    name = np.frombuffer(s.name, np.int32, n)
    plain = (host_thread[track] & (np.frombuffer(s.category, np.int32, n) == empty)
             & (np.frombuffer(s.activity, np.int8, n) == Activity.UNKNOWN))
    if not plain.any():
        return []
    # each distinct name is judged once: 1 a copy, 2 a kernel, 0 neither or host work
    judged = np.zeros(len(trace.strings.strings), np.int8)
    for i in np.unique(name[plain]).tolist():
        text = trace.strings.strings[i]
        if not words.host(text):
            judged[i] = 1 if words.copy(text) else 2 if words.kernel(text) else 0
    verdict = np.where(plain, judged[name], 0)
    del plain
    tracks = len(trace.tracks) + 1
    doubt = np.bincount(track[verdict == 0], minlength=tracks) > 0
    candidate = (np.bincount(track, minlength=tracks) > 0) & ~doubt
    rows = np.flatnonzero(candidate[track]).astype(np.int32 if n < 1 << 31 else np.int64)
    if not len(rows):
        return []
    start = s.numpy_view("start")
    rows = rows[np.lexsort((start[rows], track[rows]))]   # by track, then start
    by, begins = track[rows], start[rows]
    ends_before = begins[:-1] + s.numpy_view("dur")[rows[:-1]]
    within = (by[1:] == by[:-1]) & (begins[1:] < ends_before)   # begins before the last ends
    del begins, ends_before
    candidate[by[1:][within]] = False
    kept_rows = candidate[by]
    rows, by = rows[kept_rows], by[kept_rows]
    kept, first, count = np.unique(by, return_index=True, return_counts=True)
    if not len(kept):
        return []
    copies = np.add.reduceat((verdict[rows] == 1).astype(np.int64), first)
    examples = name[rows[first]]
    process = np.array([trace.tracks[t].process for t in kept.tolist()], np.int64)
    a_device = set(process[copies > 0].tolist())   # (the processes a copy proves devices)
    return [EvidentStream(t, c, k, c - k, trace.strings.strings[e])
            for t, p, c, k, e in zip(kept.tolist(), process.tolist(), count.tolist(),
                                     copies.tolist(), examples.tolist(), strict=True)
            if p in a_device]
