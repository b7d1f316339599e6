"""Loading a pickle without running it: only plain containers and scalars come back.

A pickle is a program for a small stack machine; its ``GLOBAL``/``STACK_GLOBAL`` opcodes name
any importable callable and ``REDUCE`` calls it, so ``pickle.load`` on a file from elsewhere
runs whatever the file says. Allocator snapshots need none of that: they are dicts, lists,
tuples, strings, numbers, booleans and None. :class:`PlainUnpickler` refuses every global
(``find_class``), every persistent id and every out-of-band buffer, so a file asking for
anything else stops with an error that names what it asked for.
"""

from __future__ import annotations

import pickle
from typing import Any, BinaryIO

from ...errors import InputError
from ...io import stopped_at


class RefusedObject(pickle.UnpicklingError):
    """The pickle asked for something other than a plain container or scalar."""


class PlainUnpickler(pickle.Unpickler):
    """An unpickler that builds only dicts, lists, tuples, sets, str, bytes, numbers, None.

    >>> import io
    >>> PlainUnpickler(io.BytesIO(pickle.dumps({"a": [1, 2.5, None]}, protocol=5))).load()
    {'a': [1, 2.5, None]}
    >>> PlainUnpickler(io.BytesIO(pickle.dumps(print))).load()
    Traceback (most recent call last):
    ...
    traceconv.formats.torch_snapshot.unpickle.RefusedObject: global builtins.print
    """

    def find_class(self, module: str, name: str) -> Any:
        raise RefusedObject(f"global {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise RefusedObject(f"persistent id {str(pid)[:60]!r}")


def load_plain(stream: BinaryIO, file: str, compressed: bool = False) -> Any:
    """Unpickle ``stream`` safely; any refusal or corruption becomes an :class:`InputError`
    located at the byte where reading stopped (of the decompressed data if ``compressed``;
    the unpickler reads ahead in blocks, so: the end of what it read).

    Protocols 0-5 are understood; out-of-band buffers (protocol 5 ``NEXT_BUFFER``) are
    refused because nothing was handed over with the file.

    >>> import io
    >>> load_plain(io.BytesIO(pickle.dumps(list(range(50)))[:40]), "cut.pickle")
    Traceback (most recent call last):
    ...
    traceconv.errors.InputError: cut.pickle:byte 40: not a readable pickle: pickle data was truncated
    """
    try:
        # buffers=None: a NEXT_BUFFER opcode raises instead of reading foreign memory.
        return PlainUnpickler(stream, buffers=None).load()
    except RefusedObject as exc:
        raise InputError(f"refused to load {exc}: a snapshot holds only plain data, and "
                         "loading this would run code named by the file", file=file,
                         location=stopped_at(stream, compressed)) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError,
            KeyError, AttributeError, OverflowError, MemoryError) as exc:
        raise InputError(f"not a readable pickle: {exc}", file=file,
                         location=stopped_at(stream, compressed)) from None
