"""Inputs and outputs that are not regular files: FIFOs, pipes, devices, ``/proc`` files.

A regular file can be opened several times (format sniffing reads its head, the reader reads
it again), its size is known before reading, and an output is written beside it and renamed
over it when complete. None of that holds for the rest:

- a FIFO blocks ``open()`` until the other side opens it (forever, if nobody does): inputs
  and outputs wait at most :data:`FIFO_WAIT_SECONDS`, then are refused;
- a pipe (``<(cat f)``, ``/dev/fd/63``) or a device yields its bytes once, and ``st_size``
  is 0 for it and for a ``/proc`` file (``/dev/zero`` never ends): such an input is read
  once, as far as a reader asks, and kept for the next open (:mod:`traceconv.spool`);
- renaming a temporary file over a device, a FIFO or a socket would replace it (as root,
  ``-o /dev/null`` would replace the system's ``/dev/null``): a character device or a FIFO
  given as ``-o`` is written as a stream instead, anything else special is refused
  (:func:`traceconv.output_files.special_output`).
"""

from __future__ import annotations

import errno
import os
import select
import stat
from typing import BinaryIO

from .errors import InputError

# How long a FIFO may stay unopened by its other side before it is refused (an input with
# no writer, an output with no reader).
FIFO_WAIT_SECONDS = 30.0


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


def open_input(path: str, name: str) -> BinaryIO:
    """``path`` opened for reading; a FIFO waits for its writer at most
    :data:`FIFO_WAIT_SECONDS` (an ``InputError`` then), instead of blocking forever. A
    folder is refused in one line that says which files to give instead (every command
    reads its inputs here).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     open_input(folder, "run")
    Traceback (most recent call last):
    traceconv.errors.InputError: run: a folder, which is not read: give the files in it (a rocprofv3 run's CSV files: run/*_trace.csv)
    """
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(_folder_refused(name), file=name)
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


def _folder_refused(name: str) -> str:
    """Why a folder given as an input is not read, and what to give instead: profilers
    write a run as a folder of files (rocprofv3: one CSV per kind), and the files of one
    run given together are one trace.

    >>> _folder_refused("out/host/")
    "a folder, which is not read: give the files in it (a rocprofv3 run's CSV files: out/host/*_trace.csv)"
    """
    return (f"a folder, which is not read: give the files in it (a rocprofv3 run's CSV "
            f"files: {os.path.join(name, '*_trace.csv')})")


def reason(exc: OSError) -> str:
    """An ``OSError`` about an input in words (a symbolic link loop says so).

    >>> reason(OSError(errno.ELOOP, "Too many levels of symbolic links"))
    'a symbolic link loop (Too many levels of symbolic links)'
    """
    text = exc.strerror or str(exc)
    return f"a symbolic link loop ({text})" if exc.errno == errno.ELOOP else text


def read_error(exc: OSError, name: str) -> InputError:
    """An ``OSError`` met reading the input ``name`` as one line: what failed and, where
    there is one, what to try.

    >>> str(read_error(OSError(errno.ENOSPC, "No space left on device"), "t.rpd"))
    't.rpd: cannot read: No space left on device (free space where temporary files go, or point TMPDIR elsewhere)'
    """
    hint = _OS_HINTS.get(exc.errno or 0)
    return InputError(f"cannot read: {reason(exc)}" + (f" ({hint})" if hint else ""), file=name)


# what to try when reading fails with these errors
_OS_HINTS = {
    errno.ENOSPC: "free space where temporary files go, or point TMPDIR elsewhere",
    errno.EDQUOT: "free space where temporary files go, or point TMPDIR elsewhere",
    errno.EACCES: "check the permissions of the file and its folders",
    errno.EPERM: "check the permissions of the file and its folders",
    errno.EISDIR: "give a file, not a folder",
    errno.EIO: "the device failed to read: copy the file elsewhere and try again",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n)",
}
