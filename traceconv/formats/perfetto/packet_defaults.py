"""TracePacketDefaults: the track uuid, clock id and extra counter tracks that a sequence's
packets take when they give none, per generation of its incremental state (a clear drops them, as in
trace_processor), the latest defaults before a packet winning; and the thread a sequence's
legacy events fall back to (:class:`SequenceThreads`).

Looked up for a block of packets at once, in numpy: the defaults given within the block,
plus the last ones each generation had before it, sorted by (generation, packet); each
packet's entry found by one binary search. Only the last defaults of each generation are
kept across blocks, so a trace that repeats its defaults in every packet reads in time
linear in its size (keeping them all and looking through them for each block was
quadratic).

>>> defaults = PacketDefaults()
>>> defaults.add(generation=0, packet=1, track=5, clock=None)
>>> defaults.add(generation=0, packet=3, track=6, clock=64)
>>> track, clock = defaults.of(np.array([0, 1, 2, 3, 4]), np.array([0, 0, 0, 0, 1]))
>>> track.tolist(), clock.tolist()
([0, 5, 5, 6, 0], [0, 0, 0, 64, 0])
>>> defaults.end_block(); defaults.of(np.array([9]), np.array([0]))[0].tolist()
[6]
>>> defaults.add(generation=0, packet=10, track=2**64 - 1, clock=None)   # a uint64 uuid
>>> defaults.of(np.array([11]), np.array([0]))[0].tolist() == [2**64 - 1]
True
"""

from __future__ import annotations

import numpy as np


class LatestBefore:
    """Values that packets take from the latest packet of their group (a generation of a
    sequence's incremental state, or a sequence) at or before them that gave some;
    :meth:`end_block` after each block."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[int, ...]] = {}    # group -> its last values
        self._block: list[tuple[int, ...]] = []        # (group, packet, *values)

    def _found(self, packet: np.ndarray, group: np.ndarray
               ) -> tuple[list[tuple[int, ...]], np.ndarray]:
        """The entries in force, and each packet's (``len(entries)``: none)."""
        if not self._block and not self._last:
            return [], np.zeros(len(packet), dtype=np.int64)
        carried = [(g, -1, *self._last[g]) for g in np.unique(group).tolist()
                   if g in self._last]
        given = carried + self._block
        entries = np.array([entry[:2] for entry in given], dtype=np.int64).reshape(-1, 2)
        groups, rank = np.unique(np.r_[entries[:, 0], group], return_inverse=True)
        low = min(int(packet.min(initial=0)), int(entries[:, 1].min(initial=0)))
        span = max(int(packet.max(initial=0)), int(entries[:, 1].max(initial=0))) - low + 2
        keys = rank.ravel().astype(np.int64) * span + (np.r_[entries[:, 1], packet] - low + 1)
        entry_keys, wanted = keys[:len(entries)], keys[len(entries):]
        order = np.argsort(entry_keys, kind="stable")   # (a tie: the later entry wins)
        at = np.searchsorted(entry_keys[order], wanted, "right") - 1
        found = order[np.maximum(at, 0)]
        same = (at >= 0) & (entry_keys[found] // span == wanted // span)
        return given, np.where(same, found, len(entries))

    def end_block(self) -> None:
        """Keep of this block's entries only the last of each group."""
        for group, _, *values in self._block:
            self._last[group] = tuple(values)
        self._block = []


class SequenceThreads(LatestBefore):
    """The thread of each sequence: the latest thread TrackDescriptor it wrote (kept across
    clears of its incremental state, as trace_processor keeps a sequence's pid and tid).
    A legacy event of no track takes it, as in trace_processor.

    >>> threads = SequenceThreads(); threads.add(sequence=3, packet=2, uuid=77)
    >>> threads.of(np.array([1, 5, 5]), np.array([3, 3, 4])).tolist()
    [0, 77, 0]
    """

    def add(self, sequence: int, packet: int, uuid: int) -> None:
        self._block.append((sequence, packet, uuid))

    def of(self, packet: np.ndarray, sequence: np.ndarray) -> np.ndarray:
        """The thread track uuid of each packet of the current block (0: none)."""
        given, found = self._found(packet, sequence)
        return np.array([entry[2] for entry in given] + [0], dtype=np.uint64)[found]


class PacketDefaults(LatestBefore):
    """The defaults of the packets read so far; :meth:`end_block` after each block."""

    def __init__(self) -> None:
        # entries: (generation, packet, track, clock, extras); extras: an index into
        # ``self.extra_tracks``
        super().__init__()
        # the extra counter tracks defaults name (int64 values', double values'): Chrome
        # gives its thread-time counters so, each event carrying only the values
        self.extra_tracks: list[tuple[tuple[int, ...], tuple[int, ...]]] = [((), ())]

    def add(self, generation: int, packet: int, track: int | None, clock: int | None,
            extra: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())) -> None:
        """Defaults given by packet number ``packet`` of ``generation`` (None: not set;
        ``extra``: the extra counter track uuids, for int64 and for double values)."""
        index = 0
        if extra != ((), ()):
            index = len(self.extra_tracks)
            self.extra_tracks.append(extra)
        self._block.append((generation, packet, track or 0, clock or 0, index))

    def of(self, packet: np.ndarray, generation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The default track uuid and clock id of each packet (0 where none), for packets
        of the current block (packet numbers at or after its defaults')."""
        given, found = self._found(packet, generation)
        # (uuids and clock ids are uint64: 2^63 and above too)
        tracks = np.array([entry[2] for entry in given] + [0], dtype=np.uint64)
        clocks = np.array([entry[3] for entry in given] + [0], dtype=np.uint64)
        return tracks[found], clocks[found]

    def extras_of(self, packet: np.ndarray, generation: np.ndarray) -> np.ndarray:
        """Per packet, the index in :attr:`extra_tracks` of its default extra counter
        tracks (0: none)."""
        given, found = self._found(packet, generation)
        return np.array([entry[4] for entry in given] + [0], dtype=np.int64)[found]
