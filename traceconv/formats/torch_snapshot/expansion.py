"""A bound on what a snapshot's shared objects expand to once they become text.

A pickle's memo lets one object be referenced from many places: ``pickle.dump`` uses it for
objects it has already written, and a hostile file uses it to build a DAG (a list holding
the same list twice, forty levels deep, is 2**40 items as a tree in a few hundred bytes).
The decoder keeps references shared, so decoding stays small; what expands is turning the
values into text: a frame name that is such a list, a stack of a thousand frames that all
name one megabyte string, allocator settings written out as JSON. Every such
materialisation is charged to one :class:`Budget` of characters, tied to the input's size;
past it the file is refused, naming where it was.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError

# characters the text of a snapshot may reach: generous for real files (their stacks are
# interned, a few KB each), tiny against a memo bomb's exponential growth
PER_INPUT_BYTE = 64
AT_LEAST = 32 << 20   # (a real 30 MB snapshot spends 1.8 M)
SHORT_TEXT = 200   # a frame field that is not text is shown as at most this much of its repr


class Expanded(Exception):
    """The budget ran out at ``where``."""


class Budget:
    """Characters left to materialise.

    >>> budget = Budget(input_bytes=0, name="s.pickle"); budget.spend(10, "$"); budget.left > 0
    True
    >>> Budget(input_bytes=0, name="s.pickle", least=5).spend(10, "$.x")
    Traceback (most recent call last):
    traceconv.errors.InputError: s.pickle:$.x: shared (memo) objects expand to more than 5 characters of text (64 per input byte): refused as an amplification bomb
    """

    def __init__(self, input_bytes: int, name: str, least: int = AT_LEAST) -> None:
        self.limit = max(least, PER_INPUT_BYTE * input_bytes)
        self.left, self.name = self.limit, name

    def spend(self, chars: int, where: str) -> None:
        self.left -= chars
        if self.left < 0:
            raise InputError(f"shared (memo) objects expand to more than {self.limit:,} "
                             f"characters of text ({PER_INPUT_BYTE} per input byte): refused "
                             "as an amplification bomb", file=self.name, location=where)


def short_text(value: Any, limit: int = SHORT_TEXT) -> str:
    """``repr(value)`` cut at ``limit`` characters, walking at most ``limit`` items of it
    (never the whole of a shared DAG, never deeper than ``limit`` levels).

    >>> tree = [1]
    >>> for _ in range(60):
    ...     tree = [tree, tree]
    >>> short_text(tree, 20)
    '[[[[[[[[[[[[[[[[[[[[…'
    >>> short_text({"a": (1, "x")})
    "{'a': (1, 'x')}"
    """
    out: list[str] = []
    size = 0
    pending: list[Any] = [value]
    closers: dict[type, tuple[str, str]] = {list: ("[", "]"), tuple: ("(", ")"), dict: ("{", "}"), set: ("{", "}"),
               frozenset: ("{", "}")}
    while pending and size <= limit:
        item = pending.pop()
        if isinstance(item, _Literal):
            text = item.text
        elif type(item) in closers:
            opener, closer = closers[type(item)]
            parts: list[Any] = [_Literal(closer)]
            children = list(item.items()) if isinstance(item, dict) else list(item)
            for i, child in enumerate(reversed(children[:limit])):
                if isinstance(item, dict):
                    parts += [child[1], _Literal(": "), child[0]]
                else:
                    parts.append(child)
                if i < min(len(children), limit) - 1:
                    parts.append(_Literal(", "))
            if type(item) is tuple and len(children) == 1:
                parts.insert(1, _Literal(","))
            pending += parts
            text = opener
        else:
            text = _bounded_repr(item, limit)
        out.append(text)
        size += len(text)
    joined = "".join(out)
    return joined if not pending and size <= limit else joined[:limit] + "…"


def _bounded_repr(item: Any, limit: int) -> str:
    """``repr(item)`` cut at ``limit``; an int too long to write in full (Python refuses
    past 4,300 digits, and the work grows with the square of the length) shows its size.

    >>> _bounded_repr(12, 5), _bounded_repr(10**5000, 40)
    ('12', '<an integer of 16610 bits>')
    """
    if isinstance(item, int) and item.bit_length() > 4 * limit:
        return f"<an integer of {item.bit_length()} bits>"[:limit]
    return repr(item)[:limit]


class _Literal:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def text_size(value: Any, budget: Budget, where: str) -> None:
    """Charge ``budget`` for ``value`` written out as a tree (items and characters), as a
    writer will (allocator settings go to JSON). Each distinct object is sized once (a
    shared one counts once per reference, without being walked again), iteratively: time
    is linear in the objects the file holds, whatever they expand to, and depth costs no
    stack.

    >>> tree = ["x" * 10]
    >>> for _ in range(40):
    ...     tree = [tree, tree]
    >>> text_size(tree, Budget(0, "s.pickle", least=1000), "$.allocator_settings")
    Traceback (most recent call last):
    traceconv.errors.InputError: s.pickle:$.allocator_settings: shared (memo) objects expand to more than 1,000 characters of text (64 per input byte): refused as an amplification bomb
    """
    sizes: dict[int, int] = {}
    pending: list[tuple[Any, bool]] = [(value, False)]
    while pending:
        item, children_done = pending.pop()
        if id(item) in sizes:
            continue
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
            own = 2 + 2 * len(item)
        elif isinstance(item, (list, tuple, set, frozenset)):
            children, own = list(item), 2 + len(item)
        else:
            length = len(item) if isinstance(item, (str, bytes, bytearray)) else 6
            sizes[id(item)] = length + 2
            continue
        if children_done:
            sizes[id(item)] = own + sum(sizes[id(child)] for child in children)
            if sizes[id(item)] > budget.left:
                break
        else:
            pending.append((item, True))
            pending.extend((child, False) for child in children if id(child) not in sizes)
    budget.spend(sizes.get(id(value), budget.left + 1), where)
