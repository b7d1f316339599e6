"""Two views of the device work that HTA offers, on the model: GPU time per user annotation
(``record_function`` ranges) and the kernel sequences that repeat most."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from ..model.groups import grouped
from .activity import DEVICE_WORK, Activity, Timeline
from .graph_replay import captured_annotations


def by_annotation(tl: Timeline, top: int = 20) -> list[dict]:
    """GPU time of the device work launched inside each user annotation (the innermost one
    around its launch call on the launching thread), largest first; work launched outside
    every annotation is the row ``(no annotation)``. A replayed graph's kernel annotated by
    :func:`~.graph_replay.annotate_replay` counts under the annotation that captured it.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream 7", process=g)
    >>> _ = t.add_slice(main, 0, 50, "attention", "user_annotation")
    >>> for at, dur in ((10, 30), (60, 20)):
    ...     la = t.add_slice(main, at, 5, "cudaLaunchKernel", "cuda_runtime")
    ...     _ = t.add_flow(la, t.add_slice(s, at + 20, dur, "gemm", "kernel"))
    >>> [(r["annotation"], r["kernels"], r["gpu_ns"]) for r in by_annotation(Timeline(t))]
    [('attention', 1, 30), ('(no annotation)', 1, 20)]
    """
    work = np.flatnonzero((tl.launch_of >= 0) & tl.on_device
                          & np.isin(tl.activity, np.array(DEVICE_WORK, np.int8)))
    notes = tl.rows(Activity.ANNOTATION)
    notes = notes[~tl.on_device[notes]]
    per_track: dict[int, np.ndarray] = {}
    for track, positions in grouped(tl.track[notes]):   # (one sort, not a scan per track)
        mine = notes[positions]
        per_track[track] = mine[np.argsort(tl.start[mine], kind="stable")]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    kernels: dict[str, Counter] = defaultdict(Counter)
    names = tl.trace.strings.strings
    captured = captured_annotations(tl, work)
    for row in work.tolist():
        launch = int(tl.launch_of[row])
        at = int(tl.start[launch])
        label = captured.get(row, "(no annotation)")
        candidates = per_track.get(int(tl.track[launch]))
        if candidates is not None and row not in captured:
            upto = candidates[: int(np.searchsorted(tl.start[candidates], at, "right"))]
            inside = upto[tl.end[upto] > at]
            if len(inside):
                # innermost: the latest-starting range still open at the launch
                label = names[tl.name[int(inside[-1])]]
        item = totals[label]
        item[0] += 1
        item[1] += int(tl.dur[row])
        kernels[label][names[tl.name[row]]] += int(tl.dur[row])
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))[:top]
    return [{"annotation": label, "kernels": n, "gpu_ns": ns,
             "top_kernels": [{"name": k, "gpu_ns": v} for k, v in kernels[label].most_common(3)]}
            for label, (n, ns) in ranked]


def frequent_sequences(tl: Timeline, length: int = 3, top: int = 10) -> list[dict]:
    """The kernel sequences of ``length`` that repeat most on any stream (consecutive work in
    stream order), with how often and their GPU time, ranked by total GPU time.

    Occurrences of one sequence never overlap: each stream is read left to right and an
    occurrence counts only when it starts after the last one counted ended (``str.count``'s
    rule), so a kernel counts once in a row and no row has more GPU time than its streams
    ran. HTA's frequent kernel sequences count each kernel once too (all the kernels of each
    top-level op of a name, one pattern per op). One kernel can still be in two rows
    (``a b a b a``: ``a b a`` and ``b a b``), so rows do not add up.

    >>> from traceconv.model import Trace, ProcessKind
    >>> t = Trace(); s = t.add_track("stream 7", process=t.add_process("GPU", kind=ProcessKind.DEVICE))
    >>> for i, name in enumerate("abcabcax"):
    ...     _ = t.add_slice(s, 10 * i, 5, name, "kernel")
    >>> [(r["sequence"], r["count"], r["gpu_ns"]) for r in frequent_sequences(Timeline(t), 3, 2)]
    [(['a', 'b', 'c'], 2, 30), (['b', 'c', 'a'], 2, 30)]
    >>> u = Trace(); s = u.add_track("stream 7", process=u.add_process("GPU", kind=ProcessKind.DEVICE))
    >>> for i, name in enumerate("aaaa"):
    ...     _ = u.add_slice(s, 10 * i, 5, name, "kernel")
    >>> [(r["sequence"], r["count"], r["gpu_ns"]) for r in frequent_sequences(Timeline(u), 2)]
    [(['a', 'a'], 2, 20)]
    """
    rows = tl.device_work()
    counts: Counter = Counter()
    gpu: Counter = Counter()
    for _track, positions in grouped(tl.track[rows]):   # (one sort, not a scan per track)
        mine = rows[positions]
        mine = mine[np.argsort(tl.start[mine], kind="stable")]
        ids, durs = tl.name[mine].tolist(), tl.dur[mine].tolist()
        free: dict[tuple, int] = {}   # sequence → the first position after its last count
        for i in range(len(ids) - length + 1):
            key = tuple(ids[i:i + length])
            if i < free.get(key, 0):
                continue   # (overlaps the occurrence counted last)
            free[key] = i + length
            counts[key] += 1
            gpu[key] += sum(durs[i:i + length])
    names = tl.trace.strings.strings
    ranked = sorted(counts, key=lambda k: (-gpu[k], -counts[k], [names[i] for i in k]))[:top]
    return [{"sequence": [names[i] for i in key], "count": counts[key], "gpu_ns": gpu[key]}
            for key in ranked]
