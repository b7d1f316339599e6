"""Equal byte ranges of a buffer found together, without a bytes object per range.

A trace repeats its composite annotations (shapes, dtype lists, kernel properties) over
and over; decoding each distinct one once needs to know which are alike. Slicing a
million ranges out as ``bytes`` to use them as dict keys costs a Python object each;
here every range is hashed with numpy (a polynomial over its bytes), ranges are grouped
by hash, length and a group label, and each is then compared byte for byte with the
first of its group, so a hash collision can never join two different ranges.

>>> from traceconv.formats.protowire.columns import padded
>>> buf = padded(b"abcabdabc")
>>> first, inverse = distinct_ranges(buf, np.array([0, 3, 6, 6]), np.array([3, 6, 9, 9]),
...                                  np.array([0, 0, 0, 1]))
>>> first.tolist(), inverse.tolist()
([0, 1, 3], [0, 1, 0, 2])
"""

from __future__ import annotations

import numpy as np

from ..protowire.columns import words

_BASE = np.uint64(0x100000001B3)      # odd: its powers never vanish mod 2^64
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _powers(count: int) -> np.ndarray:
    """_BASE**k mod 2^64 for k < count."""
    powers = np.full(max(count, 1), _BASE, dtype=np.uint64)
    powers[0] = 1
    return np.cumprod(powers, dtype=np.uint64)


def distinct_ranges(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, label: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The ranges ``buf[starts[i]:ends[i]]`` grouped by content and ``label`` (ranges of
    different labels are never alike): the index of each group's first range, in order,
    and each range's group. ``buf`` is padded (:func:`..protowire.columns.padded`): ranges are
    read 8 bytes at a time."""
    count = len(starts)
    if not count:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lengths = (ends - starts).astype(np.int64)
    content, owner, place = _words(buf, starts, lengths)
    firsts = np.cumsum((lengths + 7) // 8) - (lengths + 7) // 8
    with np.errstate(over="ignore"):
        terms = content * _powers(int(place.max()) + 1 if len(place) else 1)[place]
        hashes = np.zeros(count, dtype=np.uint64)
        filled = lengths > 0
        if len(terms):
            hashes[filled] = np.add.reduceat(terms, firsts[filled])
        key = (hashes ^ (lengths.astype(np.uint64) * _MIX)) * _MIX + label.astype(np.uint64)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    head = first[inverse]   # each range's candidate twin: the first with its key
    same = (lengths == lengths[head]) & (label == label[head])
    twin = content[np.minimum(firsts[head][owner] + place, len(content) - 1)]
    same[owner[content != twin]] = False
    if not same.all():   # a hash collision: those ranges stand alone
        alone = np.flatnonzero(~same)
        inverse[alone] = len(first) + np.arange(len(alone))
        first = np.r_[first, alone]
    # number the groups in the order of their first range
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first))
    return first[order], rank[inverse]


def _words(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ranges' bytes as little-endian 8-byte words (the last of each range with its
    bytes past the end zeroed), each word's range and its place in it."""
    sizes = (lengths + 7) // 8
    owner = np.repeat(np.arange(len(starts)), sizes)
    place = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes,
                                                                       sizes)
    content = words(buf)[starts[owner] + 8 * place]
    left = lengths[owner] - 8 * place   # bytes of the range from this word on
    short = np.flatnonzero(left < 8)
    content[short] &= (np.uint64(1) << (8 * left[short]).astype(np.uint64)) - np.uint64(1)
    return content, owner, place
