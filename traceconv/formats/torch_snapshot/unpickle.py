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
from ...io import Source, stopped_at
from .decoder import Decoder, PickleError, Restart
from .window import TruncatedFrame, Window

REFUSAL = "a snapshot holds only plain data, and loading this would run code named by the file"


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
        raise InputError(f"refused to load {exc}: {REFUSAL}", file=file,
                         location=stopped_at(stream, compressed)) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError,
            KeyError, AttributeError, OverflowError, MemoryError) as exc:
        raise InputError(f"not a readable pickle: {exc}", file=file,
                         location=stopped_at(stream, compressed)) from None


def load_source(source: Source) -> Any:
    """Unpickle a snapshot safely with the streaming :class:`~.decoder.Decoder` (memory of
    the result, not of the file's object graph); errors name the byte where the file went
    wrong (of the decompressed data for a ``.gz``). A file the decoder hands back
    (:class:`~.decoder.Restart`: text opcodes, stacks that never repeat, or a list changed
    after it was built) is read again with :func:`load_plain`.

    >>> import os, pickle, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.pickle")
    >>> with open(path, "wb") as f:
    ...     f.write(pickle.dumps({"device_traces": [[]], "oops": print}, protocol=4)) > 0
    True
    >>> load_source(Source(path))
    Traceback (most recent call last):
    ...
    traceconv.errors.InputError: ...s.pickle:byte 61: refused to load global builtins.print: ...
    """
    prefix = "decompressed byte" if source.compressed else "byte"
    with source.open() as stream:
        window = Window(stream)
        try:
            return Decoder(window).load()
        except PickleError as exc:
            place = f"{prefix} {window.file_offset(exc.offset)}"
            if exc.refused:
                raise InputError(f"refused to load {exc.message}: {REFUSAL}",
                                 file=source.name, location=place) from None
            raise InputError(f"not a readable pickle: {exc.message}", file=source.name,
                             location=place) from None
        except TruncatedFrame as exc:
            raise InputError(f"not a readable pickle: {exc.args[0]}", file=source.name,
                             location=f"{prefix} {exc.args[1]}") from None
        except (OSError, EOFError) as exc:   # the compressed stream itself is cut or bad
            raise InputError(f"not a readable pickle: {exc}", file=source.name,
                             location=f"{prefix} {window.read_so_far}") from None
        except Restart:
            pass
    with source.open() as stream:
        return load_plain(stream, source.name, source.compressed)
