"""Reads either ``export_memory_timeline`` shape into memory blocks (see the package)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from ...errors import InputError, json_path
from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from .reconstruct import Reconstruction
from .schema import CATEGORIES, Action, MemoryTimeline, RawMemoryTimeline

POOL = "timeline"


def read_timeline(source: Source, *, device: str = "") -> Trace:
    """What :func:`traceconv.formats.torch_memory.read` gives."""
    document = source.read_json()
    raw = not _is_totals(document)
    trace = TraceBuilder(Metadata(source_format="torch-memory", framework="PyTorch",
                           clock="unix epoch"))
    builder = Reconstruction(device=device, pool=POOL)
    if raw:
        rows = _validate(RawMemoryTimeline, document, source).root
        _replay_events(rows, builder, trace.time)
        trace.metadata.attributes["export"] = "memory_timeline raw events"
    else:
        times, sizes = _validate(MemoryTimeline, document, source).root
        if len(times) != len(sizes):
            raise InputError(f"{len(times)} times but {len(sizes)} size rows", file=source.name,
                             location="$[1]")
        replay_totals(times, sizes, builder, trace.time)
        trace.metadata.attributes["export"] = "memory_timeline per-category totals"
    for block in builder.finish():
        trace.add_memory_block(block)
    diags = trace.diagnostics
    diags.add("torch_memory.reconstructed", count=len(trace.memory))
    diags.add("torch_memory.split", count=builder.split)
    diags.add("torch_memory.unmatched_free", count=builder.unmatched)
    diags.add("torch_memory.impossible_free", count=builder.impossible_frees)
    diags.add("torch_memory.time_backwards", count=builder.backwards)
    diags.add("torch_memory.negative_total", count=builder.negative_totals)
    add_live_bytes_counters(trace, process_name="PyTorch memory timeline", by_category=True)
    return trace


def _is_totals(document: Any) -> bool:
    """``[times, sizes]`` (two lists, the second of rows) rather than a list of raw rows."""
    return (isinstance(document, list) and len(document) == 2
            and all(isinstance(part, list) for part in document)
            and (not document[1] or isinstance(document[1][0], list)))


def _validate(model: Any, document: Any, source: Source) -> Any:
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(error["msg"], file=source.name, location=json_path(error["loc"])) \
            from None


def _replay_events(rows: list[tuple[int, Action, int, int]], builder: Reconstruction,
                   time: Callable[[int], int] = int) -> None:
    """Raw rows: creates and destroys carry one tensor's bytes each. ``time`` is the trace
    builder's (a time beyond the range moves to its edge, counted there)."""
    leaving: tuple[int, str] | None = None   # (bytes, category) of a version change
    for t_row, action, nbytes, category in rows:
        name = CATEGORIES[category]
        t = time(t_row) if action is Action.PREEXISTING else builder.in_order(time(t_row))
        if action is Action.PREEXISTING:
            builder.create(None, nbytes, name)
        elif action is Action.CREATE:
            builder.create(t, nbytes, name)
        elif action is Action.DESTROY:
            builder.destroy(t, -nbytes, name)
        elif nbytes < 0:   # INCREMENT_VERSION: the old version leaves ...
            leaving = (-nbytes, name)
        elif leaving is not None and leaving[0] == nbytes:   # ... the new one keeps its storage
            builder.retag(t, nbytes, leaving[1], name)
            leaving = None
        else:
            builder.create(t, nbytes, name)


def replay_totals(times: list[int], sizes: list[list[int]], builder: Reconstruction,
                  time: Callable[[int], int] = int) -> None:
    """Cumulative rows: each change of a category's total is one allocation or free.
    ``time`` is the trace builder's (a time beyond the range moves to its edge)."""
    previous = [0] * len(CATEGORIES)
    for t_us, row in zip(times, sizes, strict=True):
        t = builder.in_order(time(t_us * 1_000))
        totals = [max(total, 0) for total in row[1:]]
        builder.negative_totals += sum(total < 0 for total in row[1:])
        changes = [(now - before, CATEGORIES[i])
                   for i, (now, before) in enumerate(zip(totals, previous, strict=True))
                   if now != before]
        for delta, name in sorted(changes):   # frees first, so their room can be reused
            if delta < 0:
                builder.destroy(t, -delta, name)
            else:
                builder.create(t, delta, name)
        previous = totals
