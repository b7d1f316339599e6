"""``--graph-capture CAPTURE`` (``summary``, ``critical-path``): the replay's graph kernels
annotated with what captured them (:mod:`traceconv.analysis.graph_replay`), and the counts
in words."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import click

from ..units import format_duration

GRAPH_CAPTURE_OPTION = click.option(
    "--graph-capture", metavar="CAPTURE",
    help="The profile taken while the replayed CUDA/HIP graphs were captured: their kernels "
         "go back to the ops, modules and annotations that captured them.")


def with_capture(replay, capture) -> tuple[Any, dict[str, Any]]:
    """The replay annotated from ``capture``, and the mapping's counts with the GPU time per
    captured op (``--json``)."""
    from ..analysis.graph_replay import by_captured_op, map_replay, with_mapping

    mapping = map_replay(replay, capture)
    annotated = with_mapping(replay, mapping)
    return annotated, {**mapping.as_dict(), "ops": by_captured_op(annotated)}


def replay_line(counts: dict[str, Any]) -> str:
    """One line for the text output.

    >>> replay_line({"graph_launches": 1, "replayed_kernels": 421, "mapped": 420,
    ...              "unmatched": 1, "phase": {"decode": 421}})
    'graph replay: 420 of 421 replayed kernels (1 graph launch) mapped to the ops that captured them; 1 unmatched; decode: 421'
    """
    launches = counts["graph_launches"]
    phases = ", ".join(f"{name}: {n:,}" for name, n in counts["phase"].items())
    return (f"graph replay: {counts['mapped']:,} of {counts['replayed_kernels']:,} replayed "
            f"kernels ({launches:,} graph launch{'es' if launches != 1 else ''}) mapped to "
            f"the ops that captured them; {counts['unmatched']:,} unmatched"
            + (f"; {phases}" if phases else ""))


@dataclass(frozen=True)
class PathCapturedOps:
    """The captured op of each critical-path entry (None: not a mapped replayed kernel) and
    the time on the path per captured op, largest first."""

    per_entry: list[str | None]
    totals: list[dict[str, Any]]

    def line(self, top: int) -> str:
        """The text form.

        >>> PathCapturedOps([], [{"op": "aten::mm", "links": 2, "on_path_ns": 1500000}]).line(5)
        'replayed kernels on the path, by the op that captured them: aten::mm 1.5 ms (2)'
        """
        parts = ", ".join(f"{row['op']} {format_duration(row['on_path_ns'])} ({row['links']:,})"
                          for row in self.totals[:top])
        return f"replayed kernels on the path, by the op that captured them: {parts or 'none'}"


def path_captured_ops(trace, entries) -> PathCapturedOps:
    """The captured ops of the path ``entries`` (rows of ``trace``)."""
    per_entry: list[str | None] = []
    ns: Counter = Counter()
    links: Counter = Counter()
    for entry in entries:
        args = (trace.slices.args[entry.row] or {}) if entry.row is not None else {}
        op = (args.get("captured_op") or "(no op)") if "captured_launch" in args else None
        per_entry.append(op)
        if op is not None:
            ns[op] += entry.dur_ns
            links[op] += 1
    totals = [{"op": op, "links": links[op], "on_path_ns": total}
              for op, total in sorted(ns.items(), key=lambda kv: (-kv[1], kv[0]))]
    return PathCapturedOps(per_entry, totals)
