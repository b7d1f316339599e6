"""Android's FrameTimeline (SurfaceFlinger's ``FrameTimelineEvent`` packets) as slices and
flows, the way trace_processor shows them (field numbers from Perfetto's
``android/frame_timeline_event.proto``).

Each frame is a slice from its start packet to the ``FrameEnd`` with the same cookie,
named by its token, on the "Expected Timeline" or "Actual Timeline" track of the process
its ``pid`` names (SurfaceFlinger's for display frames, the app's for surface frames);
the other fields are its args. An expected surface frame whose token came before in its
process (one token shared by several layers of an app) is left out, as trace_processor leaves it out
(counted). Each actual surface frame links (a flow) to the actual display frame that
composited it (its ``display_frame_token``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ...model import TrackKind
from ...model.builder import TraceBuilder
from ..protowire import iter_fields, message_classes

if TYPE_CHECKING:
    from .system_model import SystemTracks

FRAME_TIMELINE_EVENT = 76   # TracePacket field
EXPECTED_DISPLAY, ACTUAL_DISPLAY, EXPECTED_SURFACE, ACTUAL_SURFACE, FRAME_END = 1, 2, 3, 4, 5
_START = [("cookie", 1, "int64"), ("token", 2, "int64")]
_SURFACE = [*_START, ("display_frame_token", 3, "int64"), ("pid", 4, "int32"),
            ("layer_name", 5, "string")]
_MESSAGES = message_classes("perfetto_frame_timeline", {
    "ExpectedDisplay": [*_START, ("pid", 3, "int32")],
    "ActualDisplay": [*_START, ("pid", 3, "int32"), ("present_type", 4, "enum"),
                      ("on_time_finish", 5, "bool"), ("gpu_composition", 6, "bool"),
                      ("jank_type", 7, "int32"), ("prediction_type", 8, "enum")],
    "ExpectedSurface": _SURFACE,
    "ActualSurface": [*_SURFACE, ("present_type", 6, "enum"), ("on_time_finish", 7, "bool"),
                      ("gpu_composition", 8, "bool"), ("jank_type", 9, "int32"),
                      ("prediction_type", 10, "enum"), ("is_buffer", 11, "bool")],
    "FrameEnd": [("cookie", 1, "int64")],
})
_KINDS = {EXPECTED_DISPLAY: "ExpectedDisplay", ACTUAL_DISPLAY: "ActualDisplay",
          EXPECTED_SURFACE: "ExpectedSurface", ACTUAL_SURFACE: "ActualSurface",
          FRAME_END: "FrameEnd"}
_ARGS = ("display_frame_token", "layer_name", "present_type", "on_time_finish",
         "gpu_composition", "jank_type", "prediction_type", "is_buffer")


class FrameEvent(NamedTuple):
    """One FrameTimelineEvent: its packet's time and clock, which kind, its fields."""

    ts: int
    clock: int
    kind: int
    data: Any


def decode(payload: bytes, ts: int, clock: int) -> FrameEvent | None:
    """The FrameTimelineEvent ``payload`` (the last kind set wins), or None when it has none.

    >>> decode(b"\\x2a\\x02\\x08\\x07", 50, 6)
    FrameEvent(ts=50, clock=6, kind=5, data=FrameEnd(cookie=7))
    """
    found = None
    for number, wire, value, after in iter_fields(payload):
        if number in _KINDS and wire == 2:
            found = FrameEvent(ts, clock, number, _MESSAGES[_KINDS[number]].decode(
                payload[value:after]))
    return found


def build_frames(trace: TraceBuilder, tracks: SystemTracks, frames: list[FrameEvent]) -> None:
    """Add the frames' slices and flows to ``trace`` (``frames`` in time order)."""
    open_frames: dict[int, tuple[FrameEvent, int]] = {}   # cookie -> start, track
    expected_tokens: set[tuple[int, int]] = set()   # (pid, token)
    duplicates: set[int] = set()   # cookies of expected surface frames left out
    rows: list[tuple[FrameEvent, int]] = []   # (start, slice row)
    unmatched = 0
    for frame in frames:
        data = frame.data
        if frame.kind == FRAME_END:
            start = open_frames.pop(data.cookie, None)
            if start is not None:
                rows.append((start[0], _add(trace, start, frame.ts)))
            elif data.cookie not in duplicates:
                unmatched += 1
            continue
        if frame.kind == EXPECTED_SURFACE:
            if (data.pid, data.token) in expected_tokens:
                duplicates.add(data.cookie)
                continue
            expected_tokens.add((data.pid, data.token))
        expected = frame.kind in (EXPECTED_DISPLAY, EXPECTED_SURFACE)
        track = tracks.named_track(tracks.of_pid(data.pid), "Expected Timeline" if expected
                                   else "Actual Timeline", TrackKind.ASYNC)
        open_frames[data.cookie] = (frame, track)
    # (never ended: no end in the input, the builder's rule)
    not_ended = [(start[0], _add(trace, start, start[0].ts)) for start in open_frames.values()]
    trace.not_ended([row for _, row in not_ended], "perfetto.slice_not_ended")
    rows += not_ended
    trace.diagnostics.add("perfetto.end_without_begin", count=unmatched)
    trace.diagnostics.add("perfetto.frame_timeline_token_repeated", count=len(duplicates))
    _link(trace, rows)


def _add(trace: TraceBuilder, start: tuple[FrameEvent, int], end: int) -> int:
    frame, track = start
    data = frame.data
    args = {name: getattr(data, name) for name in _ARGS if data.has(name)}
    return trace.add_interval(track, frame.ts, end, str(data.token), "frame_timeline",
                              args or None)


def _link(trace: TraceBuilder, rows: list[tuple[FrameEvent, int]]) -> None:
    """A flow from each actual surface frame to the actual display frame of its token."""
    display = {frame.data.token: row for frame, row in rows if frame.kind == ACTUAL_DISPLAY}
    unlinked = 0
    for frame, row in rows:
        if frame.kind != ACTUAL_SURFACE:
            continue
        target = display.get(frame.data.display_frame_token)
        if target is None:
            unlinked += 1
        else:
            trace.add_flow(row, target, "frame_timeline")
    trace.diagnostics.add("perfetto.frame_without_display_frame", count=unlinked)
