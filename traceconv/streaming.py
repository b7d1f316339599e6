"""Converting a Chrome / Kineto JSON trace too big to hold, one piece at a time.

``traceconv big.json -o big.pftrace`` reads a trace whole when it fits (about a third of
its JSON with the argument texts on disk, :mod:`traceconv.memory_check`); past
:data:`WHOLE_LIMIT` of estimated memory it goes piece by piece instead, in bounded memory
whatever the input's size:

1. ``split``'s two passes (:mod:`traceconv.splitting`, bounded by the threads and open
   items, not the events) cut the input into pieces of about :data:`PIECE_BYTES` of event
   text each, by step where steps are marked, else by time, in a hidden folder beside the
   output: a slice whole in the piece where it starts, device work with the step that
   launched it, the memory blocks alive at a piece's start copied into it;
2. each piece is read as any trace is (the reader, the builder, its checks and repairs)
   and written on by :class:`~traceconv.formats.perfetto.window_stream.WindowStream`,
   which makes of the pieces the one trace the whole input gives: the same slices, depths,
   flows, counters and memory blocks, reading diagnostics summed;
3. each piece is deleted once written; the output appears when complete, as every output.

Flows whose two ends land in different pieces (``split`` counts them) are the one thing a
piece cannot give back: each end stays alone in its piece, where the reader counts it, and
``stream.flows_cut`` counts the flows.
"""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from .output_files import atomic_output, remove_output, scratch_folder
from .outputs import Files

if TYPE_CHECKING:
    from .model import Diagnostics, Trace
    from .splitting import Passes

# what every piece repeats, the envelope and the metadata (``M``) events: what reading them
# finds is counted once, from the first piece
ONCE_PER_INPUT = frozenset({"chrome.metadata_conflict", "chrome.metadata_ignored",
                            "chrome.envelope_value_skipped", "chrome.time_base_out_of_range"})
PIECE_BYTES = 160 << 20    # bytes of event text per piece (about 0.6 M Kineto events)
WHOLE_LIMIT = 1 << 30      # estimated bytes of memory above which a trace goes piece by piece


def goes_piece_by_piece(path: str, format: str | None, target_format: str,
                        asked: bool | None, memory_check: bool = True) -> bool:
    """Whether converting ``path`` to ``target_format`` goes piece by piece: as ``asked``
    (``--piece-by-piece`` / ``--whole``), else when the input is a Chrome / Kineto JSON file
    whose whole read is estimated (:func:`~traceconv.memory_check.needed_memory`, argument
    texts on disk) above :data:`WHOLE_LIMIT`, or (with the ``memory_check``) above the memory
    available while a piece fits there, and the output is a ``.pftrace``. Asked for another
    input or output, it is refused in one line.

    >>> goes_piece_by_piece("samples/torch/cnn_step5.pt.trace.json", None, "perfetto", None)
    False
    >>> goes_piece_by_piece("samples/torch/cnn_step5.pt.trace.json", None, "perfetto", True)
    True
    """
    from . import registry
    from .errors import UsageError
    from .io import Source
    from .memory_check import expanded_size, memory_limit, needed_memory

    if asked is False or (asked is None and (path == "-" or target_format != "perfetto")):
        return False
    if path == "-" or target_format != "perfetto":
        raise UsageError("--piece-by-piece converts one Chrome / Kineto JSON file (not "
                         "standard input) to Perfetto (.pftrace)")
    name = format or registry.detect(Source(path)).name
    if name != "chrome":
        if asked:
            raise UsageError(f"--piece-by-piece reads Chrome / Kineto JSON, not {name}")
        return False
    if asked:
        return True
    size = expanded_size(path)
    if (needed_memory(size, "chrome", True) or 0) > WHOLE_LIMIT:
        return True
    # the whole does not fit here: pieces do when one does (else the whole read's refusal)
    limit = memory_limit("chrome", True) if memory_check else None
    return limit is not None and limit.needed(size) > limit.available \
        and limit.needed(min(size, PIECE_BYTES)) <= limit.available


def convert_piece_by_piece(source: str, target: str, *, piece_bytes: int = PIECE_BYTES,
                           progress: Passes | None = None) -> tuple[Trace, Diagnostics]:
    """Convert the Chrome / Kineto JSON trace ``source`` to the ``.pftrace`` ``target`` a
    piece at a time (the module text); return the trace of what the pieces share (the
    processes, tracks, metadata, reading diagnostics, flows' labels and memory blocks: no
    events) and what the writer counted. ``progress`` is told of each step's bytes:
    ``"surveying"`` and ``"cutting"`` the input, then ``"writing"`` its pieces.

    >>> import tempfile, os, traceconv
    >>> out = os.path.join(tempfile.mkdtemp(), "cnn.pftrace")
    >>> shared, written = convert_piece_by_piece("samples/torch/cnn_step5.pt.trace.json", out,
    ...                                          piece_bytes=100_000)
    >>> back = traceconv.load(out); len(back.slices), len(back.flows), len(back.memory)
    (2725, 48, 291)
    >>> whole = traceconv.load("samples/torch/cnn_step5.pt.trace.json")
    >>> len(whole.slices), len(whole.flows), len(whole.memory)
    (2725, 48, 291)
    """
    from .api import load
    from .formats.perfetto.window_stream import WindowStream
    from .splitting import AUTO, split
    from .splitting.route import CARRIED_MARK, CONTEXT_MARK

    inputs = Files([source])
    near = os.path.dirname(os.path.abspath(target)) if target != "-" else None
    with scratch_folder(near) as scratch:
        manifest = split(source, scratch.folder, by=AUTO, target_size=piece_bytes,
                         overview=False, context=True, progress=progress)
        paths = [os.path.join(scratch.folder, piece["file"]) for piece in manifest["pieces"]]
        sizes = [os.path.getsize(path) for path in paths]
        with atomic_output(target, inputs=inputs) as out:
            stream = WindowStream(out, os.path.basename(source))
            for k, (piece, path) in enumerate(zip(manifest["pieces"], paths, strict=True)):
                told = None if progress is None else partial(_writing, progress,
                                                             sum(sizes[:k]), sum(sizes))
                trace = load(path, format="chrome", memory_check=False,   # (a piece fits)
                             progress=told)
                start = _model_time(trace, piece["start_ns"])
                stream.add(trace, start, _model_time(trace, piece["end_ns"]),
                           _copies(trace.instants, "ts", start, CARRIED_MARK),
                           _copies(trace.slices, "start", start, CONTEXT_MARK),
                           _reading(trace.diagnostics, first=piece is manifest["pieces"][0]))
                del trace
                remove_output(path, inputs=inputs)   # (the disk holds the input once, then less)
            stream.note("stream.flows_cut", int(manifest["cuts"]["flows"]))
            written = stream.finish()
    assert stream.whole is not None
    return stream.whole, written


def _writing(progress: Passes, before: int, total: int, done: int, _size: int) -> None:
    """Tell ``progress`` the bytes of pieces read: ``before`` this one, ``done`` of it."""
    progress("writing", before + done, total)


def _model_time(piece: Trace, ns: int | None) -> int | None:
    """A manifest's time (ns on the file's clock, as the reader reads the file's times) on
    the model's clock: plus the base the reader added (Kineto's ``baseTimeNanoseconds``)."""
    return None if ns is None else ns + (piece.metadata.clock_base_ns or 0)


def _copies(table: Any, column: str, start: int | None, mark: str) -> np.ndarray:
    """The rows of ``table`` (instants or slices) that ``split`` copied into the piece at
    its ``start`` from an earlier one, marked with the arg ``mark``: an allocation carried
    in (the block is the earlier one's), a slice open at the start (context for reading
    the piece alone): written there, not again."""
    if start is None or not len(table):
        return np.zeros(0, dtype=np.int64)
    at_start = np.flatnonzero(table.numpy_view(column) == start)
    args = table.args
    return np.array([row for row in at_start.tolist() if mark in (args[row] or {})],
                    dtype=np.int64)


def _reading(found: Diagnostics, *, first: bool) -> Diagnostics:
    """A piece's reading diagnostics to count: all of the first piece's; of a later one's,
    those not about what every piece repeats (:data:`ONCE_PER_INPUT`)."""
    if first:
        return found
    from .model import Diagnostics

    kept = Diagnostics()
    for entry in found:
        if entry.code not in ONCE_PER_INPUT:
            kept.add(entry.code, count=entry.count, example=entry.example)
    return kept
