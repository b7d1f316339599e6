"""``traceconv split``: cut a Chrome/Kineto JSON trace of any size into complete traces,
one per step, time window or rank, in bounded memory.

Two streaming passes over the input (the chunked Chrome reader: one piece of events alive
at a time): the first finds the windows (step markers, time span, ranks) and keeps the
envelope and the metadata events; the second routes each event to its window's temporary
file (:mod:`.route`). Each piece is written as a complete Chrome JSON trace (the
envelope, the process/thread name events, then its events) as soon as no later part of
the file can add to it, while the second pass goes on (:mod:`.ready`), and handed to the
workers of a conversion then. ``manifest.json`` lists the pieces, their windows and what
was cut. Nothing of the trace is held whole.

A re-split into the same folder removes the old ``manifest.json`` before it writes the first
piece and writes the new one last, so a manifest on disk always describes the pieces beside
it: an interrupted run leaves none. Every file goes through :mod:`traceconv.output_files`
(pieces and the manifest are names traceconv chose: never written through a link).

>>> import json, tempfile
>>> out = tempfile.mkdtemp()
>>> manifest = split("samples/torch/cnn_step5.pt.trace.json", out, by="step")
>>> [p["label"] for p in manifest["pieces"]]
['before', 'step2', 'step3', 'step4']
>>> manifest["cuts"]["slices"], manifest["cuts"]["flows"]   # crossing a step's end
(14, 0)
"""

from __future__ import annotations

import math
import os
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import outputs, registry
from ..errors import InputError, TraceconvError, UsageError
from ..io import Source, reading
from ..numbers import shown
from ..output_files import atomic_output, made_folder, remove_output, scratch_folder
from ..presentation.json_text import json_text
from .events import as_pairs, decode_pairs, dump_events, floats, hashable, ns_time
from .memory_ends import MemoryEvents
from .overview import BUCKETS, TOP, Overview
from .ready import ChunkFloors, ReadyPieces
from .route import Router, Spill
from .sizes import ByteHistogram, auto_target, group_windows, merged
from .windows import (
    Boundaries,
    Launches,
    Survey,
    Window,
    rank_windows,
    step_boundaries,
    step_windows,
    stop_boundaries,
    time_windows,
)

if TYPE_CHECKING:
    from ..batch import Pool
    from ..batch.jobs import BatchResult
    from ..model.trace import Trace

MANIFEST = "manifest.json"
OVERVIEW = "overview.pftrace"
BY_CHOICES = ("step", "time=DUR", "rank")
AUTO = "auto"   # (a conversion piece by piece, :mod:`traceconv.streaming`: step, else time)
# the progress of a long run: (what it does now, bytes done, bytes in all), e.g.
# ("surveying", 1_000_000, 8_000_000_000); each pass reads the input from its start
Passes = Callable[[str, int, int], None]


def split(path: str | os.PathLike[str], outdir: str | os.PathLike[str], by: str = "step", *,
          clip: bool = False, to: str = "chrome", then: str | None = None,
          engine: str = "local", jobs: int = 1, address: str | None = None,
          target_size: int | None = None, overview: bool = True,
          context: bool = False, progress: Passes | None = None) -> dict[str, Any]:
    """Split the trace at ``path`` into ``outdir``; return the manifest (also written to
    ``outdir/manifest.json``).

    ``by``: ``"step"``, ``"time=DUR"`` (``time=50ms``) or ``"rank"``. ``clip``: slices
    crossing a cut end at it instead of being kept whole. ``target_size``: consecutive
    steps or windows grouped into pieces of about that many bytes (``0``: one piece per
    window; ``None``: the same, except with a conversion, where it is
    :func:`~.sizes.auto_target`). ``then="perfetto"``: each piece is then converted to
    ``.pftrace`` through the batch engines (``engine``: local, dask or ray; ``jobs``;
    ``address`` of an existing cluster), each as soon as it is written, byte for byte what
    converting the piece alone gives; ``to="perfetto"`` does the same and removes the JSON
    pieces. Windows without an event of their own are not written (counted in the
    manifest's ``empty_windows``). ``overview``: also write ``overview.pftrace``
    (:func:`make_overview`, made during the routing pass), naming the piece of each part.
    ``context``: each piece also holds a copy of every slice open at its start, marked
    (``"traceconv context from"``: the slice's start), for a reader that joins the pieces
    again (:mod:`traceconv.streaming`).
    """
    if to not in ("chrome", "json") and then is not None and then != to:
        raise TraceconvError(f"--to {to} and --then {then}: give one of them")
    for name in (to, then):
        if name is not None:
            registry.get(name)   # an unknown format is refused before any work
    if target_size is not None and target_size < 0:
        raise UsageError(f"--target-size {target_size}: give a size of 0 or more")
    convert_to = then if to in ("chrome", "json") else to
    source_path = os.fspath(path)
    folder = os.fspath(outdir)
    if source_path == "-":
        raise TraceconvError("split reads its input twice: give a file, not standard input")
    with made_folder(folder):   # (a refusal leaves no folder it made behind)
        manifest_path = outputs.ChosenPath(os.path.join(folder, MANIFEST))
        inputs = outputs.Files([source_path])
        outputs.refuse_replacing_inputs([manifest_path], inputs)   # (before reading it twice)
        if target_size is None and convert_to is not None:
            target_size = -1   # chosen from the input's size once it is known
        sizes = ByteHistogram() if target_size and by != "rank" else None
        floors = ChunkFloors() if by != "rank" else None
        survey = survey_trace(source_path, sizes, progress, floors)
        if by == AUTO:
            by = _auto_by(survey, sizes.total if sizes is not None else 0, target_size or 0)
        windows = _windows(survey, by, source_path)
        boundaries = _boundaries(survey, by, windows)
        if sizes is not None and target_size is not None:
            target = auto_target(sizes.total, jobs) if target_size == -1 else target_size
            windows, boundaries = _grouped(windows, boundaries, sizes, target)
        with ExitStack() as stack:
            pool = None
            if convert_to is not None:   # workers ready before the first piece is written
                from ..batch import open_pool
                from ..batch.jobs import convert_one

                pool = stack.enter_context(open_pool(convert_one, engine, jobs, address))
            with scratch_folder(folder) as scratch:
                spill = Spill(scratch, len(windows),
                              partial(_piece_head, source_path, by, survey, windows))
                by_launch = by == "step" or context   # (device work with its launch)
                launches = Launches(survey.launch_ids, survey.launch_ts, windows,
                                    _by_process(boundaries, survey)) if by_launch else None
                survey.launch_ids, survey.launch_ts = array("q"), array("d")
                survey.launch_processes = array("i")
                memory_ends = survey.memory.ends()
                survey.memory = MemoryEvents()
                router = Router(windows, survey, spill, clip=clip, launches=launches,
                                boundaries=boundaries, memory_ends=memory_ends,
                                context=context)
                summary = Overview(survey) if overview else None
                remove_output(manifest_path, inputs=inputs)   # it would describe other pieces
                written = _converting(pool, folder, convert_to) \
                    if pool is not None and convert_to is not None else None
                pieces = Pieces(source_path, folder, windows, spill, written)
                ready = ReadyPieces(floors.events, floors.windows(
                    router.starts, boundaries, launches), floors.held(
                    router.starts, boundaries, clip or context), pieces.publish) if floors is not None else None
                floors = None
                _read(source_path, _routing(router, summary, ready),
                      progress=_pass(progress, "cutting"))
                router.finish()
                if ready is not None:
                    ready.finish()
                else:
                    for window in windows:
                        pieces.publish(window.index)
            manifest = _manifest(source_path, by, clip, survey, windows,
                                 pieces.entries(survey, router), router)
            if pool is not None and convert_to is not None:
                _record(manifest, folder, pool.results(), convert_to, engine,
                        keep_json=to in ("chrome", "json"), source=inputs)
        if summary is not None:   # (after the conversions: it names the files that stay)
            _write_overview(summary, survey, outputs.ChosenPath(os.path.join(folder, OVERVIEW)),
                            inputs, manifest["pieces"])   # (a name traceconv chose: no links)
            manifest["overview"] = OVERVIEW
        with atomic_output(manifest_path, inputs=inputs) as out:
            out.write(json_text(manifest) + b"\n")
        return manifest


def make_overview(path: str | os.PathLike[str], output: str | os.PathLike[str], *,
                  top: int = TOP, buckets: int = BUCKETS) -> Trace:
    """Write the overview of the Chrome/Kineto JSON trace at ``path`` to ``output``
    (:mod:`.overview`: utilisation and hidden-slice counters per track, the ``top``
    longest slices of each track, collectives, steps, memory high-water marks) in two
    streaming passes; return it.

    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "ov.pftrace")
    >>> ov = make_overview("samples/torch/cnn_step5.pt.trace.json", out, top=5)
    >>> sorted(t.name for t in ov.tracks if t.name.startswith("step"))
    ['steps']
    >>> ov.diagnostics.count("overview.hidden_slices") > 0
    True
    """
    if top < 0 or buckets < 1:
        raise UsageError(f"--top {top} --buckets {buckets}: give a top of 0 or more and at "
                         "least one bucket")
    source_path = os.fspath(path)
    if source_path == "-":
        raise TraceconvError("overview reads its input twice: give a file, not standard input")
    inputs = outputs.Files([source_path])
    outputs.refuse_replacing_inputs([os.fspath(output)], inputs)
    survey = survey_trace(source_path)
    summary = Overview(survey, top=top, buckets=buckets)
    _read(source_path, summary.take)
    return _write_overview(summary, survey, os.fspath(output), inputs, ())


def _routing(router: Router, summary: Overview | None,
             ready: ReadyPieces | None) -> Callable[[list[Any]], None]:
    """The routing pass's work on each chunk: routed, summed up for the overview, and
    the pieces it completes written."""
    def take(chunk: list[Any]) -> None:
        router.route(chunk)
        if summary is not None:
            summary.take(chunk)
        if ready is not None:
            ready.took(len(chunk))

    return take


def _write_overview(summary: Overview, survey: Survey, output: str, inputs: outputs.Files,
                    pieces: Sequence[dict[str, Any]]) -> Trace:
    from ..api import save

    steps = step_windows(survey, "") if survey.steps else []
    trace = summary.build(steps, pieces)
    outputs.refuse_replacing_inputs([output], inputs)
    save(trace, output)   # (the format by its extension: .pftrace, .json, ...)
    return trace


def _boundaries(survey: Survey, by: str, windows: list[Window]) -> Boundaries | None:
    """By step, the ends each thread (MegEngine) or process (a job's ranks) marks itself."""
    if by != "step":
        return None
    return step_boundaries(survey, windows) if survey.steps else stop_boundaries(survey)


def _by_process(boundaries: Boundaries | None,
                survey: Survey) -> tuple[Boundaries, array, dict[Any, int]] | None:
    """What places each launch by its own process's steps (None: by the windows')."""
    if boundaries is None or boundaries.by_thread:
        return None
    return boundaries, survey.launch_processes, survey.processes


def _grouped(windows: list[Window], boundaries: Boundaries | None, sizes: ByteHistogram,
             target: int) -> tuple[list[Window], Boundaries | None]:
    """The windows grouped into runs of about ``target`` bytes (the threads' or processes'
    own step ends thinned to the ends of the groups)."""
    groups = group_windows(windows, [sizes.between(w.start, w.end) for w in windows], target)
    if boundaries is not None:
        boundaries = boundaries.grouped([last for _, last in groups])
    return merged(windows, groups), boundaries


def survey_trace(path: str, sizes: ByteHistogram | None = None,
                 progress: Passes | None = None, floors: ChunkFloors | None = None) -> Survey:
    """The first pass: envelope, metadata events, span, steps and ranks of the trace (and,
    given ``sizes``, the bytes of event text by time; given ``floors``, where each chunk's
    events can be placed, :mod:`.ready`; ``progress`` told as ``"surveying"``). A trace of
    no timed event is refused (:class:`InputError` at ``$``)."""
    from ..formats.chrome.flavours import detect

    survey = Survey()

    def first(envelope: dict[str, Any], chunk: list[Any]) -> None:
        survey.unit_ns = detect(envelope, chunk).time_unit_ns(chunk)

    def take(chunk: list[Any]) -> None:
        pairs = as_pairs(chunk)
        survey.take(pairs, floors)
        if sizes is not None:
            texts = [text for _, text in pairs]
            sizes.add(floats([h.ts for h, _ in pairs]),
                      np.fromiter(map(len, texts), np.int64, len(texts)) + 2)

    survey.envelope = _read(path, take, first, _pass(progress, "surveying"))
    if not survey.timed:   # (an overview or a piece of no time would show nothing)
        raise InputError("no timed event: every event is metadata or has no usable 'ts', "
                         "nothing to show or cut", file=path, location="$")
    return survey


def _pass(progress: Passes | None, stage: str) -> Callable[[int, int], None] | None:
    """The input layer's progress callback of one pass, telling ``progress`` its ``stage``."""
    return None if progress is None else partial(progress, stage)


def _read(path: str, take: Callable[[list[Any]], None],
          first: Callable[[dict[str, Any], list[Any]], None] | None = None,
          progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Stream the events of ``path`` a chunk at a time into ``take`` (``progress``: told of
    the bytes read); return the envelope (the keys after the array included). Errors name
    the file and place."""
    from ..formats.chrome.stream import DocumentError, read_document

    source = Source(path, max_bytes=sys.maxsize, progress=progress)
    try:
        with reading(source.name), source.open() as stream:
            doc = read_document(stream)
            if not doc.has_events_key:
                raise InputError('split reads Chrome/Kineto JSON traces: this object has no '
                                 '"traceEvents" array', file=source.name, location="$")
            for chunk in doc.chunks:
                if first is not None:   # plain values: the flavour's detection reads them
                    first(doc.envelope, chunk)
                    first = None
                doc.records = decode_pairs   # the rest: routing fields and texts
                take(chunk)
    except DocumentError as exc:
        where = f"{exc.line}:{exc.column}" if exc.line else None
        raise InputError(f"not valid Chrome JSON: {exc}", file=source.name,
                         location=where) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", file=source.name) from None
    return doc.envelope


def _auto_by(survey: Survey, size: int, target: int) -> str:
    """How :data:`AUTO` cuts: by step where steps are marked, else in time windows small
    enough (eight per piece of ``target`` bytes of the input's ``size``) that grouping
    them makes pieces of about that size.

    >>> _auto_by(Survey(first_ts=0.0, last_ts=1000.0), 800, 100)
    'time=15625ns'
    >>> _auto_by(Survey(steps=[(5.0, 1)]), 800, 100)
    'step'
    """
    if survey.steps or survey.stops:
        return "step"
    windows = 8 * max(1, -(-size // max(target, 1)))
    span = survey.last_ts - survey.first_ts
    span = span * survey.unit_ns if math.isfinite(span) and span > 0 else 0.0
    return f"time={max(1, math.ceil(span / windows))}ns"


def _windows(survey: Survey, by: str, path: str) -> list[Window]:
    from ..analysis.trim import parse_time

    if by == "step":
        return step_windows(survey, path)
    if by == "rank":
        windows = rank_windows(survey, path)
        return [*windows, Window(len(windows), "other")]
    if by.startswith("time="):
        try:
            duration = parse_time(by.removeprefix("time="))
        except ValueError as exc:
            raise UsageError(f"--by time=: {exc}") from None
        return time_windows(survey, duration, path)
    raise UsageError(f"--by {shown(by)}: use one of {', '.join(BY_CHOICES)}")


def _piece_head(path: str, by: str, survey: Survey, windows: list[Window],
                index: int) -> tuple[bytes, bool]:
    """The start of the piece of window ``index``: its envelope (with ``traceconvSplit``)
    and metadata events; and whether it holds events."""
    window = windows[index]
    envelope = {k: v for k, v in survey.envelope.items() if k != "traceEvents"}
    head = dict(envelope, traceconvSplit={
        "source": os.path.basename(path), "by": by, "piece": window.index,
        "label": window.label, **_bounds(window, survey)})
    metadata = _metadata_for(window, survey)
    return (dump_events([head])[:-1] + b',\n"traceEvents":[\n'
            + (dump_events(metadata) if metadata else b"")), bool(metadata)


class Pieces:
    """The pieces of a split as they are published: each window with events of its own,
    its spill file moved into place under its name (``written`` is then told its path);
    :meth:`entries` gives the manifest's entry of each once the routing pass is over."""

    def __init__(self, path: str, folder: str, windows: list[Window], spill: Spill,
                 written: Callable[[str], None] | None) -> None:
        self.path, self.folder, self.windows, self.spill = path, folder, windows, spill
        self.written = written
        self.stem = outputs.stem(path)
        self.digits = len(str(len(windows) - 1))
        self.published: list[tuple[Window, str, int]] = []   # (window, file name, bytes)

    def publish(self, index: int) -> None:
        """Publish the piece of window ``index`` (none for a window without events of its
        own: its carried copies describe nothing of its own)."""
        if not self.spill.events[index]:
            self.spill.close(index)
            return
        window = self.windows[index]
        name = f"{self.stem}-{window.index:0{self.digits}d}-{window.label}.json"
        target = outputs.ChosenPath(os.path.join(self.folder, name))
        self.spill.publish(window.index, target, inputs=[self.path])
        self.published.append((window, name, os.path.getsize(target)))
        if self.written is not None:
            self.written(target)

    def entries(self, survey: Survey, router: Router) -> list[dict[str, Any]]:
        """The manifest's entry of each piece (the flows crossing into a later piece are
        known at the end of the pass only)."""
        spill = self.spill
        return [{"file": name, "index": window.index, "label": window.label,
                 **_bounds(window, survey),
                 "events": spill.events[window.index] + spill.carried[window.index]
                 + len(_metadata_for(window, survey)),
                 "bytes": size,
                 "slices_cut_at_end": router.cut_out[window.index],
                 "flows_out": router.flows_out[window.index],
                 "flows_in": router.flows_in[window.index],
                 "memory_blocks_pre_existing": router.carried_in[window.index]}
                for window, name, size in sorted(self.published, key=lambda p: p[0].index)]


def _metadata_for(window: Window, survey: Survey) -> list[dict[str, Any]]:
    """The M events a piece repeats: all of them, or, by rank, those of its processes
    (and of processes of no rank)."""
    if window.rank is None and window.label != "other":
        return survey.metadata
    ranks = survey.rank_of_pid
    return [e for e in survey.metadata if ranks.get(hashable(e.get("pid"))[0]) == window.rank]


def _bounds(window: Window, survey: Survey) -> dict[str, Any]:
    """The window in the file's time unit and in ns (None at an open end)."""
    if window.rank is not None or window.label == "other":
        return {"rank": window.rank}

    def finite(value: float) -> float | None:
        return value if math.isfinite(value) else None

    def ns(value: float) -> int | None:
        return ns_time(value, survey.unit_ns) if math.isfinite(value) else None

    return {"start": finite(window.start), "end": finite(window.end),
            "start_ns": ns(window.start), "end_ns": ns(window.end)}


def _manifest(path: str, by: str, clip: bool, survey: Survey, windows: list[Window],
              pieces: list[dict[str, Any]], router: Router) -> dict[str, Any]:
    return {
        "source": os.path.basename(path), "by": by, "clip": clip,
        "events": survey.events, "time_unit_ns": survey.unit_ns,
        "windows": len(windows),
        "empty_windows": len(windows) - len(pieces),   # not written: no event of their own
        "pieces": pieces,
        "cuts": {"slices": sum(router.slices_cut.values()),
                 "slices_by_name": dict(sorted(router.slices_cut.items())),
                 "flows": router.flows_cut,
                 "memory_blocks_carried": router.blocks_carried,
                 "device_work_by_launch": router.by_launch,
                 "slice_continuations": router.continued,
                 "launches_over_limit": survey.launches_over_limit,
                 "markers_out_of_range": survey.markers_out_of_range,
                 "events_without_place": router.untimed},
    }


def _converting(pool: Pool, folder: str, fmt: str) -> Callable[[str], None]:
    """What hands each piece, once written, to the workers."""
    from ..batch import plan

    def submit(piece: str) -> None:
        for task in plan([piece], folder, fmt):
            pool.submit(task)

    return submit


def _record(manifest: dict[str, Any], folder: str, results: Iterable[BatchResult],
            fmt: str, engine: str, keep_json: bool, source: outputs.Files) -> None:
    """Record each piece's output (or failure); without ``keep_json`` the converted JSON
    pieces are removed."""
    by_input = {r.file: r for r in results}
    failed = []
    for piece in manifest["pieces"]:
        path = os.path.join(folder, piece["file"])
        result = by_input[path]
        if result.status == "ok":
            piece["converted"] = os.path.basename(result.output or "")
            if not keep_json:
                remove_output(path, inputs=source)
                piece["file"] = piece.pop("converted")
        else:
            failed.append(f"{piece['file']}: {result.error}")
    manifest["converted"] = {"to": fmt, "engine": engine, "failed": failed}
