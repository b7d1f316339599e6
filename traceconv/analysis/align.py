"""Clock alignment of several ranks' traces on the collectives they share.

Ranks on different hosts write times on clocks that disagree (by microseconds with good NTP,
by seconds without). A symmetric collective (all_reduce, all_gather, reduce_scatter,
all_to_all, barrier) ends on every rank at the same moment: when the slowest rank has
arrived, all leave. So the shift that makes rank *r*'s clock agree with the reference
rank's is the median, over the collectives both recorded, of (reference end − rank end).
The median keeps one late notification or a mismatched call from pulling the estimate.

Calls are matched by (side, process group, operation) and the source's sequence number
where it wrote one, else by their order: traces that start at different steps cannot be
matched by order, which is why the residual skew is reported for every rank.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from ..model import Trace
from ..units import format_duration
from .collectives import Call, find_calls, is_symmetric

Mode = Literal["none", "auto", "collectives"]
MODES: tuple[Mode, ...] = ("none", "auto", "collectives")
# `auto` shifts ranks only when their collective ends disagree by more than this: ranks on one
# host (one clock) agree within tens of µs (the DDP sample: 60 µs), NTP-synced hosts within ms.
AUTO_THRESHOLD_NS = 500_000

Instance = tuple[tuple[str, str, str], int]   # (call key, sequence number or order)


@dataclass(slots=True)
class RankAlignment:
    """What alignment did to one input."""

    label: str
    offset_ns: int = 0          # added to every time of this input
    matched: int = 0            # collectives shared with the reference input
    residual_median_ns: int = 0  # |aligned end − the collective's median end|, median
    residual_max_ns: int = 0     # ... and worst case


@dataclass(slots=True)
class Alignment:
    """The outcome of :func:`align`: per-input offsets and what was decided and why."""

    mode: Mode
    applied: bool
    reason: str
    collectives: int = 0        # matched collective instances used
    ranks: list[RankAlignment] = field(default_factory=list)

    @property
    def offsets(self) -> list[int]:
        """Nanoseconds to add to each input's times (all 0 when not applied)."""
        return [r.offset_ns if self.applied else 0 for r in self.ranks]

    def as_dict(self) -> dict:
        return asdict(self)


def match(per_rank: Sequence[dict[tuple[str, str, str], list[Call]]]) -> dict[
        Instance, dict[int, Call]]:
    """Group the calls of all ranks into instances of one collective: {instance: {rank: call}}.

    A call's identity is its key plus the source's sequence number when every rank wrote one
    for that key, else its position among the rank's calls of that key.
    """
    keys = {key for calls in per_rank for key in calls}
    instances: dict[Instance, dict[int, Call]] = {}
    for key in sorted(keys):
        series = [calls.get(key, []) for calls in per_rank]
        by_seq = all(c.seq is not None for s in series for c in s)
        for rank, calls in enumerate(series):
            for order, call in enumerate(calls):
                ident = call.seq if by_seq and call.seq is not None else order
                instances.setdefault((key, ident), {})[rank] = call
    return instances


def _median(values: list[int]) -> int:
    return int(statistics.median_low(values)) if values else 0


def align(traces: Sequence[Trace], mode: Mode = "auto", labels: Sequence[str] | None = None,
          threshold_ns: int = AUTO_THRESHOLD_NS) -> Alignment:
    """Offsets that make matching collectives end together; input 0 is the reference.

    ``mode``: ``none`` (measure only), ``collectives`` (always shift when collectives
    match), ``auto`` (shift only when ranks disagree by more than ``threshold_ns``).
    The traces are not changed: :func:`traceconv.analysis.merge.merge` applies the offsets.

    >>> from traceconv.model import Trace
    >>> def rank(shift):
    ...     t = Trace(); p = t.add_process("python", pid=1); th = t.add_track("t", process=p)
    ...     for end in (1_000, 5_000, 9_000):
    ...         t.add_slice(th, end - 300 + shift, 300, "gloo:all_reduce")
    ...     return t
    >>> result = align([rank(0), rank(2_000_000_000)], mode="collectives")
    >>> result.applied, result.offsets
    (True, [0, -2000000000])
    """
    if mode not in MODES:
        raise ValueError(f"unknown alignment mode {mode!r}: use one of {', '.join(MODES)}")
    labels = list(labels) if labels else [f"input {i}" for i in range(len(traces))]
    ranks = [RankAlignment(label) for label in labels]
    per_rank = [find_calls(t) for t in traces]
    instances = match(per_rank)
    symmetric = {i: calls for i, calls in instances.items()
                 if is_symmetric(i[0][2]) and len(calls) > 1}
    usable = symmetric or {i: calls for i, calls in instances.items() if len(calls) > 1}
    if not usable:
        return Alignment(mode, False, "no collective recorded by two or more inputs; "
                         "times kept as they are", 0, ranks)
    for rank, info in enumerate(ranks):
        diffs = [calls[0].end - calls[rank].end for calls in usable.values()
                 if 0 in calls and rank in calls]
        info.matched = len(diffs)
        info.offset_ns = _median(diffs)
    _residuals(usable, ranks, [r.offset_ns for r in ranks])
    worst = max(abs(r.offset_ns) for r in ranks)
    kinds = "symmetric collectives" if symmetric else "collectives (no symmetric ones)"
    if mode == "none":
        applied, reason = False, f"--align none: ranks disagree by up to {format_duration(worst)}"
    elif mode == "auto" and worst <= threshold_ns:
        applied, reason = False, (f"ranks agree within {format_duration(worst)} on "
                                  f"{len(usable)} {kinds} (threshold "
                                  f"{format_duration(threshold_ns)}); times kept as they are")
    else:
        applied, reason = True, (f"shifted so that {len(usable)} {kinds} end together "
                                 f"(largest shift {format_duration(worst)})")
    if not applied:
        _residuals(usable, ranks, [0] * len(ranks))
    return Alignment(mode, applied, reason, len(usable), ranks)


def _residuals(instances: dict[Instance, dict[int, Call]], ranks: list[RankAlignment],
               offsets: list[int]) -> None:
    """Per rank: how far its (shifted) ends stay from each collective's median end."""
    spread: list[list[int]] = [[] for _ in ranks]
    for calls in instances.values():
        ends = {rank: call.end + offsets[rank] for rank, call in calls.items()}
        centre = statistics.median(ends.values())
        for rank, end in ends.items():
            spread[rank].append(abs(round(end - centre)))
    for info, values in zip(ranks, spread, strict=True):
        info.residual_median_ns = _median(values)
        info.residual_max_ns = max(values, default=0)
