"""The reader's debug-annotation values, kept typed until the model asks for them.

A million events carry five million annotation values, most of them integers. Held as
Python objects from the moment they are decoded, they cost ~36 bytes each (the int and
its list slot) for the whole read, and every step that moves them (a block's list, the
model's order) is a Python-level pass. Here each value is one kind byte and 64 bits
(the wire value, a text id, or an index into a list of objects for strings, composites
and spelled nulls); :meth:`ArgValues.python` makes the Python values of many positions at
once, a kind at a time, at the end.

>>> store = ArgValues()
>>> store.add(np.array([INT, BOOL, TEXT, OBJECT, NONE], dtype=np.uint8),
...           np.array([2**64 - 3, 1, 1, 0, 0], dtype=np.uint64))
>>> store.objects.append([1, 2])
>>> store.python(np.array([4, 0, 1, 2, 3]), ["", "text"])
[None, -3, True, 'text', [1, 2]]
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import numpy as np

from ...model.typed_arrays import extend_typed

# Kinds: the DebugAnnotation value field the value came from, where its 64 bits are the
# value; TEXT: an interned text id; OBJECT: an index into ``objects``; NONE: no value.
NONE, BOOL, UINT, INT, DOUBLE, POINTER, TEXT, OBJECT = 0, 2, 3, 4, 5, 7, 17, 255
CHUNK = 1 << 16   # values made into Python objects together


class ArgValues:
    """Annotation values one after another: a kind byte and 64 bits each."""

    def __init__(self) -> None:
        self.kind = array("B")
        self.bits = array("Q")
        self.objects: list[Any] = []   # strings, dicts, lists: each distinct one once

    def __len__(self) -> int:
        return len(self.kind)

    def add(self, kind: np.ndarray, bits: np.ndarray) -> None:
        """Append values (``kind`` uint8, ``bits`` uint64, one per value)."""
        extend_typed(self.kind, kind)
        extend_typed(self.bits, bits)

    def python(self, positions: np.ndarray, texts: list[str]) -> list[Any]:
        """The values at ``positions`` as Python values (``texts``: the interned texts
        that TEXT values number), a list in that order, made :data:`CHUNK` at a time (no
        object array of them all beside the list)."""
        made = self._maker(positions, texts)
        out: list[Any] = [None] * len(positions)
        for lo in range(0, len(positions), CHUNK):
            hi = min(lo + CHUNK, len(positions))
            out[lo:hi] = made(lo, hi).tolist()
        return out

    def objects_at(self, positions: np.ndarray, texts: list[str]) -> np.ndarray:
        """:meth:`python` as an object array."""
        return self._maker(positions, texts)(0, len(positions))

    def _maker(self, positions: np.ndarray, texts: list[str]
               ) -> Callable[[int, int], np.ndarray]:
        """``made(lo, hi)``: the values at ``positions[lo:hi]`` as an object array. Every
        value is an int first, then the few of other kinds go in their places; equal ints
        of one call are one object (a million events repeat their sizes, streams and flags
        within a few thousand events), made by numpy in C."""
        kind = np.frombuffer(self.kind, dtype=np.uint8)[positions]
        bits = np.frombuffer(self.bits, dtype=np.uint64)[positions]
        others = np.flatnonzero(kind != INT)

        def made(lo: int, hi: int) -> np.ndarray:
            distinct, which = np.unique(bits[lo:hi].view(np.int64), return_inverse=True)
            out = distinct.astype(object)[which.reshape(-1)]
            at = others[np.searchsorted(others, lo):np.searchsorted(others, hi)]
            for number in np.unique(kind[at]).tolist():
                mine = at[kind[at] == number]
                out[mine - lo] = self._made(number, bits[mine], texts)
            return out

        return made

    def _made(self, number: int, bits: np.ndarray, texts: list[str]) -> np.ndarray:
        """Values of one kind, as an object array (so that lists among them stay items;
        numbers made by numpy, in C)."""
        if number == UINT:
            return bits.astype(object)
        if number == DOUBLE:
            return bits.view(np.float64).astype(object)
        if number == BOOL:
            return (bits != 0).astype(object)
        values: list[Any]
        if number == POINTER:
            values = [f"0x{v:x}" for v in bits.tolist()]
        elif number == TEXT:
            values = list(map(texts.__getitem__, bits.tolist()))
        elif number == OBJECT:
            values = list(map(self.objects.__getitem__, bits.tolist()))
        else:
            values = [None] * len(bits)
        return np.fromiter(values, dtype=object, count=len(bits))
