"""String interning: every name and category in a trace is stored once and referred to by id."""

from __future__ import annotations

from .frozen import FrozenDict, FrozenWhenUnpickled, frozen_list


class StringTable(FrozenWhenUnpickled):
    """Maps strings to dense integer ids (id 0 is always the empty string).

    >>> table = StringTable()
    >>> table.intern("aten::mm"), table.intern("aten::mm"), table[1]
    (1, 1, 'aten::mm')
    """

    __slots__ = ("_frozen", "_ids", "_strings")

    def __init__(self) -> None:
        self._frozen = False
        self._strings: list[str] = [""]
        self._ids: dict[str, int] = {"": 0}

    def intern(self, text: str) -> int:
        """Return the id of ``text``, adding it if it is new."""
        found = self._ids.get(text)
        if found is None:
            self._strings.append(text)   # first: a frozen table refuses before any change
            found = self._ids[text] = len(self._strings) - 1
        return found

    def freeze(self) -> None:
        """Refuse new strings from now on (those already held still resolve)."""
        if self._frozen:
            return
        self._strings = frozen_list(self._strings)
        self._ids = FrozenDict(self._ids)
        self._frozen = True

    def find(self, text: str) -> int | None:
        """Return the id of ``text`` or None if it was never interned."""
        return self._ids.get(text)

    def __getitem__(self, string_id: int) -> str:
        return self._strings[string_id]

    def __len__(self) -> int:
        return len(self._strings)

    @property
    def ids(self) -> dict[str, int]:
        """The string → id mapping, for hot loops that look up before interning (read-only)."""
        return self._ids

    @property
    def strings(self) -> list[str]:
        """All strings, indexed by id (do not mutate)."""
        return self._strings
