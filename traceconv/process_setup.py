"""Settings the command line makes for its own process before any work.

They are the whole process's, so the library leaves them to its caller; the command line
is its own caller. A terminal size in the environment that is no size is set aside (rich,
which draws every table, would fail on ``COLUMNS=²``). The other two save CPU that converting a large trace would otherwise spend
outside traceconv (measured with ``benchmarks/bench_convert.py``, 2-core machine, 1 M-event
trace): about 0.07 CPU-s of BLAS threads, 0.15-0.3 CPU-s of page faults.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

# BLAS thread pools that numpy may bring: traceconv does no linear algebra, and OpenBLAS
# starts a thread per core at numpy's import that spins about 0.1 CPU-s before it sleeps
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")
# glibc's mallopt parameters; blocks from the heap below this size (past it, a column of
# millions of rows grows by mremap, moving no bytes). 8 MiB and 64 MiB kept: the same CPU as
# glibc's largest adaptive threshold (32 MiB) and 256 MiB on traces of 0.7-1 M events, and
# 10 M events peak at 882 MiB instead of 985 (CPU 1.02x; farm-bench, paired)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
HEAP_BLOCK_BYTES = 8 << 20
KEEP_FREED_BYTES = 64 << 20   # free memory at the heap's top kept, not given back


def single_threaded_blas(environ: MutableMapping[str, str]) -> None:
    """Ask for one BLAS thread where the user has not chosen a number (to take effect, before
    numpy is imported).

    >>> env = {"MKL_NUM_THREADS": "4"}; single_threaded_blas(env); env["OPENBLAS_NUM_THREADS"], env["MKL_NUM_THREADS"]
    ('1', '4')
    """
    for name in BLAS_THREADS:
        environ.setdefault(name, "1")


def keep_freed_memory() -> bool:
    """Let glibc serve blocks up to :data:`HEAP_BLOCK_BYTES` from its heap and keep what is
    freed there for reuse, instead of mapping each large block and returning it to the
    kernel when freed: a conversion frees and allocates large numpy temporaries batch after
    batch, and every block given back comes back as fresh pages the kernel must fault in
    and zero (a quarter of the page faults, 3-6 % of the CPU time of a conversion). False
    where the C library has no ``mallopt`` (not glibc).

    >>> keep_freed_memory() in (True, False)
    True
    """
    import ctypes  # (here: ``traceconv --version`` need not load it)

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, HEAP_BLOCK_BYTES)
                and mallopt(M_TRIM_THRESHOLD, KEEP_FREED_BYTES))


def drop_unreadable_sizes(environ: MutableMapping[str, str]) -> None:
    """Remove ``COLUMNS`` and ``LINES`` where they are no whole number above 0 in ASCII
    digits: the terminal's own size is used instead, as when they are unset (rich reads
    them with ``str.isdigit``, which ``"²"`` passes and ``int()`` refuses).

    >>> env = {"COLUMNS": "²", "LINES": "40"}; drop_unreadable_sizes(env); env
    {'LINES': '40'}
    """
    for name in ("COLUMNS", "LINES"):
        value = environ.get(name)
        if value is not None and not (value.isascii() and value.isdecimal() and int(value)):
            del environ[name]


def set_up_process() -> None:
    """The settings, for the command line's process (and the workers it starts, which
    inherit the environment)."""
    drop_unreadable_sizes(os.environ)
    single_threaded_blas(os.environ)
    keep_freed_memory()
