"""A streaming plain-data unpickler that decodes each distinct stack once.

Why not the standard unpickler: a snapshot stores the full stack of every trace entry as
its own list of frame dicts, so a 1 GB file becomes about 3 GB of Python objects, nearly
all of them frames that repeat (the ResNet-18 sample: 3,983 entries, 219 distinct stacks).
This decoder runs the pickle machine in Python over a sliding :class:`~.window.Window`, and
when it reaches the list under a ``frames`` key it finds the list's extent with one regular
expression over the bytes, then looks those bytes up: a stack met before costs one dict
lookup and shares the objects decoded the first time. Memory is that of the model, not of
the file's object graph.

Exactness: the bytes of a list found that way are decoded on their own the first time, and
only a run that decodes to exactly one list is kept; since decoding is deterministic, the
same bytes mean the same list wherever they occur (memo reads are recorded and checked; a
run that reads back its own ``MEMOIZE`` is never shared). If the file later changes a
shared object (legal in a pickle, never written by ``pickle.dump``), :class:`Restart` asks
the caller to read the file again with the standard unpickler.

Safety is the same as :class:`~.unpickle.PlainUnpickler`: only containers and scalars are
built; globals, persistent ids, out-of-band buffers and calls are refused with the byte
offset where the file asked for them. Rare legal opcodes that a snapshot never uses (the
text opcodes of protocols 0-1) also raise :class:`Restart`.
"""

from __future__ import annotations

import _compat_pickle
import re
import struct
from typing import Any, NamedTuple

from .memo import Memo, Overlay, still_holds
from .window import Window

# A list of frame dicts, as pickle writes it (protocol 2-5, FRAME headers removed): the
# list, its memo opcode, then batches of dicts ``}`` MEMO ``(`` ... ``u``. A dict ends at
# the first SETITEMS byte ``u`` that follows the end of a value (an int, a memo opcode, a
# GET, None, a boolean) and is followed by the next dict or the end of the batch. Every
# quantifier is possessive, so the search is one linear pass; the scan between ``u`` bytes
# runs in the regex engine's tight loop (about 250 MB/s). What it finds is verified by
# decoding (see above), so an odd name that fools it costs time, never correctness.
_MEMO = rb"(?:\x94|q.|r.{4})"
_DICT_END = rb"(?=[}ea])(?:(?<=[Khq].u)|(?<=[\x94N\x88\x89]u)|(?<=M..u)|(?<=[Jjr].{4}u))"
_FRAME_DICT = rb"\}" + _MEMO + rb"?\((?:[^u]*+u(?!" + _DICT_END + rb"))*+[^u]*+u" + _DICT_END
FRAMES_LIST = re.compile(rb"\]" + _MEMO + rb"?(?:\((?:" + _FRAME_DICT + rb")++e|"
                         + _FRAME_DICT + rb"a)*+", re.DOTALL)
LOOKAHEAD = 4 << 20       # bytes a frames list may span to be found by the expression
# New stacks so far, past which the standard unpickler takes over if fewer than half of
# the lists were repeats: it reads such a file faster, for the same memory. Before protocol
# 4 every memo slot is numbered in the bytes (PUT), so a file written by one dump never
# repeats a stack's bytes: give up early. From protocol 4 on, a long recording repeats its
# stacks (its dump-time segments come first and may be mostly new): give up late.
GIVE_UP_AFTER = {2: 512, 3: 512}
GIVE_UP_LATE = 8192
INTERNED = 96             # strings up to this many bytes are shared (keys, names, files)

(MARK, STOP, POP, POP_MARK, DUP, BININT, BININT1, BININT2, NONE, APPEND, EMPTY_DICT,
 APPENDS, BINGET, LONG_BINGET, EMPTY_LIST, LIST, BINPUT, LONG_BINPUT, SETITEM, TUPLE,
 EMPTY_TUPLE, SETITEMS, BINFLOAT, DICT, BINBYTES, SHORT_BINBYTES, BINUNICODE) = map(
    ord, "(.012JKMNa}ehj]lqrst)uGdBCX")
(PROTO, TUPLE1, TUPLE2, TUPLE3, NEWTRUE, NEWFALSE, LONG1, LONG4, SHORT_BINUNICODE,
 BINUNICODE8, BINBYTES8, EMPTY_SET, ADDITEMS, FROZENSET, MEMOIZE, FRAME, BYTEARRAY8,
 READONLY_BUFFER) = (0x80, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E,
                     0x8F, 0x90, 0x91, 0x94, 0x95, 0x96, 0x98)
REFUSED = {ord("c"): "global", ord("i"): "global", 0x93: "global",
           ord("P"): "persistent id", ord("Q"): "persistent id",
           0x97: "out-of-band buffer (NEXT_BUFFER)",
           0x82: "extension code", 0x83: "extension code", 0x84: "extension code",
           ord("R"): "call (REDUCE)", ord("b"): "call (BUILD)", ord("o"): "call (OBJ)",
           0x81: "call (NEWOBJ)", 0x92: "call (NEWOBJ_EX)"}
TEXT_OPCODES = frozenset(b"FILSTUVgp")   # protocols 0-1: left to the standard unpickler
HIGHEST_PROTOCOL = 5
DOUBLE = struct.Struct(">d")


class PickleError(Exception):
    """Unreadable or refused: ``message`` at stream offset ``offset``."""

    def __init__(self, message: str, offset: int, refused: bool = False) -> None:
        super().__init__(message)
        self.message, self.offset, self.refused = message, offset, refused


class Restart(Exception):
    """This file needs the standard (whole-graph) unpickler; the reason is the message."""


class Shared(NamedTuple):
    """A frames list decoded once: the list, the memo writes to replay, the memo reads
    it depends on, and the ids of its containers (which must never change)."""

    value: list[Any]
    writes: tuple[tuple[int | None, Any], ...]
    depends: tuple[tuple[int, Any], ...]
    memoized: tuple[Any, ...] | None   # the objects, when every write is a MEMOIZE


class Stats:
    """How the decoder spent its work (for benchmarks)."""

    def __init__(self) -> None:
        self.shared_hits = 0
        self.decoded_stacks = 0
        self.slow_lists = 0


class Decoder:
    """Decode one pickle from ``window``; :meth:`load` returns the object.

    >>> import io, pickle
    >>> doc = {"device_traces": [[{"action": "alloc", "frames": [
    ...     {"name": "f", "filename": "a.py", "line": 3}]} for _ in range(3)]]}
    >>> decoder = Decoder(Window(io.BytesIO(pickle.dumps(doc, protocol=4))))
    >>> out = decoder.load()
    >>> out == doc, decoder.stats.decoded_stacks, decoder.stats.shared_hits
    (True, 2, 3)
    >>> out["device_traces"][0][1]["frames"] is out["device_traces"][0][2]["frames"]
    True
    """

    def __init__(self, window: Window, memo: Memo | Overlay | None = None,
                 share_stacks: bool = True) -> None:
        self.window = window
        self.memo = memo if memo is not None else Memo()
        self.share_stacks = share_stacks
        self.strings: dict[str, str] = {}
        self.stacks: dict[bytes, Shared | None] = {}
        self.protocol = 0
        self.shared_ids: set[int] = set()   # containers that must not change (shared)
        self.foreign_ids: set[int] = set()  # (decoding alone) containers read from the memo
        self.stats = Stats()

    def load(self) -> Any:
        """The object the pickle describes (its STOP reached)."""
        result = self._run(0, whole=False)
        return result[0]

    # -- the machine ----------------------------------------------------------------------

    def _run(self, pos: int, whole: bool) -> list[Any]:  # noqa: C901 - one dispatch loop
        """Execute from ``pos``. ``whole``: the window holds a run to decode on its own;
        return the stack at its end (an error if marks are left). Otherwise return
        ``[value]`` at STOP."""
        window, memo, strings = self.window, self.memo, self.strings
        memoize, put, get = memo.memoize, memo.put, memo.get
        shared_ids, foreign_ids = self.shared_ids, self.foreign_ids
        buf, pos, end = window.fill(pos, 64)
        limit = end - 64 if not window.eof else end - 1
        stack: list[Any] = []
        marks: list[int] = []
        fence = 0
        start = pos
        try:
            while True:
                if pos > limit:
                    buf, pos, end = window.fill(pos, 64)
                    limit = end - 64 if not window.eof else end - 1
                    if pos >= end:
                        if whole:
                            if marks:
                                raise PickleError("a MARK is never closed", window.base + pos)
                            return stack
                        raise PickleError("pickle data was truncated (no STOP opcode)",
                                          window.base + pos)
                start = pos
                op = buf[pos]
                pos += 1
                if op == MEMOIZE:
                    if len(stack) <= fence:
                        raise PickleError("MEMOIZE with an empty stack", window.base + start)
                    memoize(stack[-1])
                elif op in (SHORT_BINUNICODE, BINUNICODE, BINUNICODE8):
                    width = 1 if op == SHORT_BINUNICODE else 4 if op == BINUNICODE else 8
                    if pos + width > end:
                        raise _truncated(window, start)
                    size = int.from_bytes(buf[pos:pos + width], "little")
                    pos += width
                    if pos + size > end:
                        here = window.base + start
                        buf, pos, end = window.fill(pos, size)
                        limit = end - 64 if not window.eof else end - 1
                        if pos + size > end:
                            raise PickleError("pickle data was truncated inside a string",
                                              here)
                    # (a lone surrogate, which pickle keeps, is no text a writer can
                    # encode: replaced, as bytes that are not UTF-8 at all are)
                    text = buf[pos:pos + size].decode("utf-8", "replace")
                    pos += size
                    if size <= INTERNED:
                        text = strings.setdefault(text, text)
                    stack.append(text)
                elif op == MARK:
                    marks.append(len(stack))
                    fence = len(stack)
                elif op == EMPTY_DICT:
                    stack.append({})
                elif op in (SETITEMS, SETITEM):
                    mark = _items_start(op == SETITEMS, 2, stack, marks, fence,
                                        window.base + start)
                    fence = marks[-1] if marks else 0
                    items = stack[mark:]
                    if len(items) % 2:
                        raise PickleError("odd number of items for SETITEMS",
                                          window.base + start)
                    target = stack[mark - 1]
                    del stack[mark:]
                    if id(target) in shared_ids or id(target) in foreign_ids:
                        raise Restart("the pickle changes a dict it built earlier")
                    if type(target) is dict:
                        target.update(zip(items[::2], items[1::2], strict=True))
                    else:
                        for key, value in zip(items[::2], items[1::2], strict=True):
                            target[key] = value
                elif op == BININT1:
                    if pos >= end:
                        raise _truncated(window, start)
                    stack.append(buf[pos])
                    pos += 1
                elif op == EMPTY_LIST:
                    if self.share_stacks and stack and stack[-1] == "frames":
                        value, pos = self._shared_list(start)
                        buf = window.buf
                        end = len(buf)
                        limit = end - 64 if not window.eof else end - 1
                        stack.append(value)
                    else:
                        stack.append([])
                elif op in (BINGET, LONG_BINGET):
                    width = 1 if op == BINGET else 4
                    if pos + width > end:
                        raise _truncated(window, start)
                    index = int.from_bytes(buf[pos:pos + width], "little")
                    pos += width
                    try:
                        stack.append(get(index))
                    except KeyError:
                        raise PickleError(f"memo index {index} was never stored (GET)",
                                          window.base + start) from None
                elif op in (BINPUT, LONG_BINPUT):
                    width = 1 if op == BINPUT else 4
                    if pos + width > end:
                        raise _truncated(window, start)
                    if len(stack) <= fence:
                        raise PickleError("PUT with an empty stack", window.base + start)
                    put(int.from_bytes(buf[pos:pos + width], "little"), stack[-1])
                    pos += width
                elif op in (BININT2, BININT, LONG1):
                    if op == LONG1:
                        if pos >= end:
                            raise _truncated(window, start)
                        width = buf[pos]
                        pos += 1
                    else:
                        width = 2 if op == BININT2 else 4
                    if pos + width > end:
                        raise _truncated(window, start)
                    stack.append(int.from_bytes(buf[pos:pos + width], "little",
                                                signed=op != BININT2))
                    pos += width
                elif op in (APPENDS, APPEND):
                    mark = _items_start(op == APPENDS, 1, stack, marks, fence,
                                        window.base + start)
                    fence = marks[-1] if marks else 0
                    target = stack[mark - 1]
                    if id(target) in shared_ids or id(target) in foreign_ids:
                        raise Restart("the pickle changes a list it built earlier")
                    items = stack[mark:]
                    del stack[mark:]
                    _extend(target, items, window.base + start)
                elif op == NONE:
                    stack.append(None)
                elif op in (NEWTRUE, NEWFALSE):
                    stack.append(op == NEWTRUE)
                elif op == FRAME:
                    if pos + 8 > end:
                        raise _truncated(window, start)
                    size = int.from_bytes(buf[pos:pos + 8], "little")
                    pos += 8
                    buf, pos, end = window.fill(pos, size)
                    limit = end - 64 if not window.eof else end - 1
                    if pos + size > end:
                        raise _truncated(window, start)
                elif op in REFUSED:
                    what = REFUSED[op]
                    if op in (ord("c"), ord("i")):
                        what += " " + _global_name(buf[pos:pos + 512], self.protocol)
                    elif op == 0x93 and len(stack) >= 2:
                        what += f" {str(stack[-2])[:100]}.{str(stack[-1])[:100]}"
                    raise PickleError(what, window.base + start, refused=True)
                elif op == STOP:
                    if whole:
                        raise PickleError("STOP inside a run", window.base + start)
                    if len(stack) <= fence:
                        raise PickleError("STOP with an empty stack", window.base + start)
                    return [stack.pop()]
                else:
                    buf, pos, end, limit, fence = self._rare(op, buf, pos, end, limit, start,
                                                             stack, marks, fence)
        except (IndexError, ValueError, TypeError, OverflowError, AttributeError,
                RecursionError, MemoryError) as exc:
            raise PickleError(f"{type(exc).__name__}: {exc}", window.base + start) from None

    def _rare(self, op: int, buf: bytes, pos: int, end: int, limit: int, start: int,
              stack: list[Any], marks: list[int], fence: int
              ) -> tuple[bytes, int, int, int, int]:
        """Opcodes a snapshot uses seldom or never."""
        window = self.window
        here = window.base + start

        def popmark() -> list[Any]:
            if not marks:
                raise PickleError("could not find MARK", here)
            mark = marks.pop()
            items = stack[mark:]
            del stack[mark:]
            return items

        if op in (TUPLE1, TUPLE2, TUPLE3, EMPTY_TUPLE):
            count = 0 if op == EMPTY_TUPLE else op - TUPLE1 + 1
            if len(stack) - count < fence:
                raise PickleError("unpickling stack underflow", here)
            items = stack[len(stack) - count:]
            del stack[len(stack) - count:]
            stack.append(tuple(items))
        elif op == BINFLOAT:
            if pos + 8 > end:
                raise _truncated(window, start)
            stack.append(DOUBLE.unpack_from(buf, pos)[0])
            pos += 8
        elif op in (TUPLE, LIST, FROZENSET, DICT, POP_MARK):
            items = popmark()
            if op == TUPLE:
                stack.append(tuple(items))
            elif op == LIST:
                stack.append(items)
            elif op == FROZENSET:
                stack.append(frozenset(items))
            elif op == DICT:
                if len(items) % 2:
                    raise PickleError("odd number of items for DICT", here)
                stack.append(dict(zip(items[::2], items[1::2], strict=True)))
        elif op == EMPTY_SET:
            stack.append(set())
        elif op == ADDITEMS:
            items = popmark()
            if not stack or len(stack) < (marks[-1] if marks else 0) + 1:
                raise PickleError("ADDITEMS with no set to add to", here)
            target = stack[-1]
            if type(target) is set:
                target.update(items)
            elif hasattr(target, "add"):
                for item in items:
                    target.add(item)
            else:
                raise PickleError(f"ADDITEMS on a {type(target).__name__}", here)
        elif op == POP:
            if marks and marks[-1] == len(stack):
                marks.pop()
            elif len(stack) <= fence:
                raise PickleError("unpickling stack underflow", here)
            else:
                stack.pop()
        elif op == DUP:
            if len(stack) <= fence:
                raise PickleError("unpickling stack underflow", here)
            stack.append(stack[-1])
        elif op == PROTO:
            if pos >= end:
                raise _truncated(window, start)
            if buf[pos] > HIGHEST_PROTOCOL:
                raise PickleError(f"unsupported pickle protocol: {buf[pos]}", here)
            self.protocol = buf[pos]
            pos += 1
        elif op in (BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8):
            width = {BINBYTES: 4, SHORT_BINBYTES: 1, BINBYTES8: 8, BYTEARRAY8: 8}[op]
            if pos + width > end:
                raise _truncated(window, start)
            size = int.from_bytes(buf[pos:pos + width], "little")
            pos += width
            buf, pos, end = window.fill(pos, size)
            if pos + size > end:
                raise _truncated(window, start)
            data = buf[pos:pos + size]
            pos += size
            stack.append(bytearray(data) if op == BYTEARRAY8 else data)
        elif op == LONG4:
            if pos + 4 > end:
                raise _truncated(window, start)
            size = int.from_bytes(buf[pos:pos + 4], "little", signed=True)
            if size < 0:
                raise PickleError("LONG pickle has negative byte count", here)
            pos += 4
            buf, pos, end = window.fill(pos, size)
            if pos + size > end:
                raise _truncated(window, start)
            stack.append(int.from_bytes(buf[pos:pos + size], "little", signed=True))
            pos += size
        elif op == READONLY_BUFFER:
            if len(stack) <= fence:
                raise PickleError("unpickling stack underflow", here)
            view = memoryview(stack[-1])
            if not view.readonly:
                stack[-1] = view.toreadonly()
        elif op in TEXT_OPCODES:
            raise Restart(f"text opcode {chr(op)!r} (protocol 0-1)")
        else:
            raise PickleError(f"invalid opcode 0x{op:02x}", here)
        fence = marks[-1] if marks else 0
        limit = end - 64 if not window.eof else end - 1
        return buf, pos, end, limit, fence

    # -- shared stacks --------------------------------------------------------------------

    def _shared_list(self, start: int) -> tuple[list[Any], int]:
        """At ``start`` (an EMPTY_LIST under a ``frames`` key): the list, shared with every
        equal stack, and the position after it; else a new empty list and ``start + 1``, to
        be filled the ordinary way. Positions are in ``self.window.buf`` after the call
        (the window may slide)."""
        window = self.window
        buf, start, end = window.fill(start, LOOKAHEAD)
        found = FRAMES_LIST.match(buf, start, min(end, start + LOOKAHEAD))
        stop = found.end() if found else start
        if found is None or (stop < end and buf[stop] in b"(a"):
            self.stats.slow_lists += 1
            return [], start + 1
        image = buf[start:stop]
        if image in self.stacks:
            shared = self.stacks[image]
        else:
            shared = self._decode_alone(image)
            self.stacks[image] = shared
            stats = self.stats
            lists = stats.shared_hits + stats.slow_lists
            if (stats.decoded_stacks > GIVE_UP_AFTER.get(self.protocol, GIVE_UP_LATE)
                    and 2 * stats.decoded_stacks > lists):
                raise Restart("stacks do not repeat (nothing to share)")
        memo = self.memo
        if shared is None or not isinstance(memo, Memo) or not still_holds(memo,
                                                                          shared.depends):
            self.stats.slow_lists += 1
            return [], start + 1
        if shared.memoized is None or not memo.add_region(shared.memoized):
            for index, obj in shared.writes:
                if index is None:
                    memo.memoize(obj)
                else:
                    memo.put(index, obj)
        self.stats.shared_hits += 1
        return shared.value, stop

    def _decode_alone(self, image: bytes) -> Shared | None:
        """Decode ``image`` by itself; a :class:`Shared` if it is exactly one list."""
        import io

        assert isinstance(self.memo, Memo)
        overlay = Overlay(self.memo, set())
        sub = Decoder(Window(io.BytesIO(image), plain=True), overlay, share_stacks=False)
        sub.strings = self.strings
        sub.shared_ids, sub.foreign_ids = self.shared_ids, overlay.foreign
        try:
            stack = sub._run(0, whole=True)
        except (PickleError, Restart):
            return None
        if len(stack) != 1 or type(stack[0]) is not list or overlay.position_dependent:
            return None
        self.stats.decoded_stacks += 1
        value = stack[0]
        self.shared_ids.add(id(value))
        self.shared_ids.update(id(obj) for _, obj in overlay.writes
                               if isinstance(obj, (list, dict, set, bytearray)))
        all_memoize = all(index is None for index, _ in overlay.writes)
        return Shared(value, tuple(overlay.writes), tuple(overlay.depends),
                      tuple(obj for _, obj in overlay.writes) if all_memoize else None)


def _items_start(batch: bool, single: int, stack: list[Any], marks: list[int], fence: int,
                 offset: int) -> int:
    """Where the items of SETITEM(S) / APPEND(S) start on the stack: after the last MARK
    (popped) for the batch opcodes, else the top ``single`` items; the object they go into
    is just below.

    >>> _items_start(True, 1, [[], 1, 2], [1], 1, 0), _items_start(False, 2, [{}, "k", 2], [], 0, 0)
    (1, 1)
    """
    if batch:
        if not marks:
            raise PickleError("a batch of items without a MARK", offset)
        mark = marks.pop()
    else:
        mark = len(stack) - single
        if mark < fence:
            raise PickleError("too few items on the stack", offset)
    if mark <= 0 or mark > len(stack):
        raise PickleError("no container below the items", offset)
    return mark


def _extend(target: Any, items: list[Any], offset: int) -> None:
    """APPEND(S) as CPython does it: list.extend, else the object's extend or append."""
    if type(target) is list or hasattr(target, "extend"):
        target.extend(items)
    elif hasattr(target, "append"):
        for item in items:
            target.append(item)
    else:
        raise PickleError(f"APPENDS on a {type(target).__name__}", offset)


def _global_name(text: bytes, protocol: int) -> str:
    """``module.name`` of a GLOBAL's two text lines, with Python 2 names mapped to
    Python 3 as the standard unpickler does for protocols 0-2.

    >>> _global_name(b"__builtin__\\nprint\\n", 2)
    'builtins.print'
    """
    module, name = (part.decode("utf-8", "replace") for part in (text.split(b"\n", 2) + [b""])[:2])
    if protocol < 3:
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
    return f"{module}.{name}"


def _truncated(window: Window, start: int) -> PickleError:
    return PickleError("pickle data was truncated inside an opcode", window.base + start)
