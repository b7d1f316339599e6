"""Inputs and outputs that are not regular files: FIFOs, pipes, devices, ``/proc`` files.

A regular file can be opened several times (format sniffing reads its head, the reader reads
it again), its size is known before reading, and an output is written beside it and renamed
over it when complete. None of that holds for the rest:

- a FIFO blocks ``open()`` until the other side opens it (forever, if nobody does): inputs
  and outputs wait at most :data:`FIFO_WAIT_SECONDS`, then are refused;
- a pipe (``<(cat f)``, ``/dev/fd/63``) or a device yields its bytes once, and ``st_size``
  is 0 for it and for a ``/proc`` file (``/dev/zero`` never ends): such an input is read
  once, into a buffer bounded by ``--max-bytes``;
- renaming a temporary file over a device, a FIFO or a socket would replace it (as root,
  ``-o /dev/null`` would replace the system's ``/dev/null``): a character device or a FIFO
  is written as a stream instead, anything else special is refused, and ``-o`` onto a
  symbolic link writes the file the link points to (the link stays).
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
from typing import BinaryIO

from .errors import InputError, OutputError

# How long a FIFO may stay unopened by its other side before it is refused (an input with
# no writer, an output with no reader).
FIFO_WAIT_SECONDS = 30.0
READ_PIECE = 1 << 20


def kind_of(mode: int) -> str:
    """A file type in words, for messages.

    >>> kind_of(stat.S_IFIFO), kind_of(stat.S_IFCHR | 0o666), kind_of(stat.S_IFREG)
    ('a FIFO', 'a character device', 'a regular file')
    """
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "a special file"


def read_bounded(stream: BinaryIO, limit: int, too_large: InputError) -> bytes:
    """Everything ``stream`` yields, read in pieces; ``too_large`` is raised as soon as it
    passes ``limit`` bytes (``/dev/zero`` ends there, not in memory exhaustion).

    >>> import io
    >>> read_bounded(io.BytesIO(b"abc"), 3, InputError("too large"))
    b'abc'
    >>> read_bounded(io.BytesIO(b"abcd"), 3, InputError("too large"))
    Traceback (most recent call last):
    traceconv.errors.InputError: too large
    """
    pieces, total = [], 0
    while piece := stream.read(min(READ_PIECE, limit + 1 - total)):
        pieces.append(piece)
        total += len(piece)
        if total > limit:
            raise too_large
    return b"".join(pieces)


def open_input(path: str, name: str) -> BinaryIO:
    """``path`` opened for reading; a FIFO waits for its writer at most
    :data:`FIFO_WAIT_SECONDS` (an ``InputError`` then), instead of blocking forever."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISFIFO(mode):
            return open(path, "rb")  # noqa: SIM115 - returned to the caller
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(reason(exc), file=name) from None
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    # (Linux reports nothing on a FIFO no writer has opened yet: poll waits for one.)
    if not poller.poll(int(FIFO_WAIT_SECONDS * 1000)):
        os.close(fd)
        raise InputError(f"a FIFO that no writer opened within {FIFO_WAIT_SECONDS:g} s",
                         file=name)
    os.set_blocking(fd, True)
    return open(fd, "rb")  # noqa: SIM115 - returned to the caller


def reason(exc: OSError) -> str:
    """An ``OSError`` about an input in words (a symbolic link loop says so).

    >>> reason(OSError(errno.ELOOP, "Too many levels of symbolic links"))
    'a symbolic link loop (Too many levels of symbolic links)'
    """
    text = exc.strerror or str(exc)
    return f"a symbolic link loop ({text})" if exc.errno == errno.ELOOP else text


def resolve_output(target: str) -> str:
    """The file ``-o target`` writes: the end of a chain of symbolic links (a link stays a
    link, its file is replaced), else ``target`` itself.

    >>> resolve_output("no/such/out.json")
    'no/such/out.json'
    """
    if not os.path.islink(target):
        return target
    try:
        os.stat(target)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(f"cannot write: {reason(exc)}", file=target) from None
    return os.path.realpath(target)


def special_output(target: str) -> BinaryIO | None:
    """A stream onto ``target`` when it is a character device or a FIFO (written in place,
    never replaced); None when it is a regular file or missing (an atomic write then);
    ``OutputError`` for a block device or a socket, and for a FIFO whose reader does not
    come within :data:`FIFO_WAIT_SECONDS`.

    >>> special_output("no/such/out.json") is None
    True
    """
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISCHR(mode):
        try:
            return open(target, "wb")  # noqa: SIM115 - returned to the caller
        except OSError as exc:
            raise OutputError(f"cannot write: {reason(exc)}", file=target) from None
    if not stat.S_ISFIFO(mode):
        raise OutputError(f"cannot write: {kind_of(mode)}; traceconv writes regular files, "
                          "character devices and FIFOs", file=target)
    deadline = time.monotonic() + FIFO_WAIT_SECONDS
    while True:   # O_NONBLOCK: ENXIO while no reader has the FIFO open, instead of blocking
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise OutputError(f"cannot write: {reason(exc)}", file=target) from None
            if time.monotonic() > deadline:
                raise OutputError(f"cannot write: a FIFO that no reader opened within "
                                  f"{FIFO_WAIT_SECONDS:g} s", file=target) from None
            time.sleep(0.05)
    os.set_blocking(fd, True)
    return open(fd, "wb")  # noqa: SIM115 - returned to the caller
