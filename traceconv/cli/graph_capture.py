"""``summary REPLAY --graph-capture CAPTURE``: the replay's graph kernels annotated with what
captured them (:mod:`traceconv.analysis.graph_replay`), and the counts in words."""

from __future__ import annotations

from typing import Any


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
