"""The rules that protect inputs: which files an output must never be, and the names
traceconv chose itself.

An output the user names (``-o``) that is an input (the same path, a link to it, a hard
link, or the file standard input reads) is refused before anything is read, with one line
naming both. A name chosen by traceconv (:mod:`traceconv.output_names`) is a
:class:`ChosenPath`: :mod:`traceconv.output_files` writes it without following a link
planted there.

>>> Files(["a.json"]).find("./a.json")
'a.json'
"""

from __future__ import annotations

import contextlib
import os
import stat
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import OutputError

if TYPE_CHECKING:
    from .model import Trace

# what says "a trace" rather than what it is of: `a.pt.trace.json.gz` is the trace of `a`
_TRACE_SUFFIXES = (".pt.trace", ".trace", ".paddle_trace")
STDOUT = "-"
STDIN_NAME, STDOUT_NAME = "<stdin>", "<stdout>"


class ChosenPath(str):
    """A path traceconv chose itself (a default output, a ``batch`` output, a ``split``
    piece): :func:`traceconv.output_files.atomic_output` replaces whatever entry is there (a
    link, a FIFO) instead of writing through it. It stays one when pickled (``batch``
    workers); string operations give plain ``str``, so wrap a derived name with it again.

    >>> name = ChosenPath("out/x.pftrace")
    >>> name == "out/x.pftrace", isinstance(name, ChosenPath), type(name + ".gz").__name__
    (True, True, 'str')
    """

    __slots__ = ()


def stem(path: str) -> str:
    """The file name of ``path`` without compression, extension and trace suffixes.

    >>> stem("runs/rank0.pt.trace.json.gz"), stem("profile.json"), stem("report.txt")
    ('rank0', 'profile', 'report')
    >>> stem("a.paddle_trace.pb"), stem("notes"), stem(".json")
    ('a', 'notes', '.json')
    """
    base = os.path.basename(path).removesuffix(".gz")
    base = os.path.splitext(base)[0] or base
    changed = True
    while changed:
        changed = False
        for suffix in _TRACE_SUFFIXES:
            if base.endswith(suffix) and len(base) > len(suffix):
                base, changed = base[: -len(suffix)], True
    return base


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether ``a`` and ``b`` name one file: the same resolved path (symbolic links
    followed), or the same device and inode (a hard link). ``-`` is never a file.

    >>> same_file("samples/torch/cnn_step5.pt.trace.json", "./samples/torch/../torch/cnn_step5.pt.trace.json")
    True
    >>> same_file("-", "-"), same_file("samples/torch/cnn_step5.pt.trace.json", "other.json")
    (False, False)
    """
    a, b = os.fspath(a), os.fspath(b)
    if STDOUT in (a, b):
        return False
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):   # one of them does not exist (yet)
        return False


class Files:
    """A set of files, recognised by resolved path or by device and inode (hard links),
    built once so that checking many outputs against many inputs stays linear.

    ``-`` is standard input: the regular file it reads, if it reads one (``< p.pftrace``),
    is a member named ``<stdin>``; ``find("-")`` asks the same of standard output.

    >>> inputs = Files(["samples/torch/cnn_step5.pt.trace.json", "-"])
    >>> inputs.find("./samples/torch/cnn_step5.pt.trace.json"), inputs.find("x.json")
    ('samples/torch/cnn_step5.pt.trace.json', None)
    """

    def __init__(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        self._paths: dict[str, str] = {}
        self._inodes: dict[tuple[int, int], str] = {}
        for path in (os.fspath(p) for p in paths):
            if path == STDOUT:
                identity = _stream_identity(0)
                if identity is not None:
                    self._inodes.setdefault(identity, STDIN_NAME)
                continue
            self._paths.setdefault(os.path.realpath(path), path)
            identity = _identity(path)
            if identity is not None:
                self._inodes.setdefault(identity, path)

    def find(self, path: str | os.PathLike[str]) -> str | None:
        """The member that ``path`` names (as it was given), else None."""
        path = os.fspath(path)
        if path == STDOUT:
            identity = _stream_identity(1)
            return None if identity is None else self._inodes.get(identity)
        found = self._paths.get(os.path.realpath(path))
        if found is None and self._inodes:
            identity = _identity(path)
            found = None if identity is None else self._inodes.get(identity)
        return found


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _stream_identity(fd: int) -> tuple[int, int] | None:
    """Device and inode of the regular file open as ``fd`` (0: standard input), else None
    (a terminal, a pipe, a closed descriptor: nothing an output could replace)."""
    try:
        info = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None



def refuse_replacing_inputs(outputs: Iterable[str | os.PathLike[str]],
                            inputs: Iterable[str | os.PathLike[str]] | Files) -> None:
    """Raise :class:`~traceconv.errors.OutputError` (naming both) when an output is one of
    the inputs; call it before reading anything.

    >>> refuse_replacing_inputs(["x.pftrace"], ["samples/torch/cnn_step5.pt.trace.json"])
    >>> refuse_replacing_inputs(["samples/torch/cnn_step5.pt.trace.json"],
    ...                         ["samples/torch/cnn_step5.pt.trace.json"])
    Traceback (most recent call last):
    ...
    traceconv.errors.OutputError: samples/torch/cnn_step5.pt.trace.json: the output would replace the input samples/torch/cnn_step5.pt.trace.json; choose another output name
    """
    sources = inputs if isinstance(inputs, Files) else Files(inputs)
    for output in (os.fspath(o) for o in outputs):
        source = sources.find(output)
        if source is not None:
            raise OutputError(f"the output would replace the input {source}; choose "
                              "another output name",
                              file=STDOUT_NAME if output == STDOUT else output)



# The files each loaded trace was read from, for save(): a trace is never written over its
# own input. Weak, so that a trace's entry goes when the trace does.
_READ_FROM: weakref.WeakKeyDictionary[Trace, tuple[str, ...]] = weakref.WeakKeyDictionary()


def remember_inputs(trace: Trace, paths: Iterable[str | os.PathLike[str]]) -> None:
    """Note that ``trace`` was read from ``paths`` (``-``: standard input)."""
    found = tuple(os.fspath(p) for p in paths)
    if found:
        # a trace type that cannot be weakly referenced is simply not tracked
        with contextlib.suppress(TypeError):
            _READ_FROM[trace] = found


def inputs_of(trace: Trace) -> tuple[str, ...]:
    """The files ``trace`` was read from (by :func:`traceconv.load` or
    :func:`traceconv.combine`; ``-`` for standard input), else ``()``."""
    try:
        return _READ_FROM.get(trace, ())
    except TypeError:   # not weak-referenceable or not hashable: not one of ours
        return ()


def inputs_named(trace: Trace) -> str | None:
    """How an error about ``trace`` names its input: the paths it was read from as they were
    given (as the input layer names a file; ``<stdin>`` for standard input), else the file its
    metadata names.

    >>> from traceconv.model import Metadata, Trace
    >>> inputs_named(Trace(Metadata(source_file="a.json")))
    'a.json'
    """
    given = dict.fromkeys(STDIN_NAME if path == "-" else path for path in inputs_of(trace))
    return ", ".join(given) or trace.metadata.source_file
