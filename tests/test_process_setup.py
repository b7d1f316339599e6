"""The command line's settings for its own process: no BLAS thread pool, freed memory kept.

Observed from outside the code that makes them: the threads a process has after numpy's
import (``/proc/self/task``), and where glibc puts a large block (``mallinfo2``), each in a
fresh interpreter.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="threads and glibc's mallopt are read the Linux way")

THREADS = """
import os, sys
{setup}
import numpy
print(len(os.listdir("/proc/self/task")))
"""
MAPPED = """
import ctypes
{setup}
import numpy as np
class Info(ctypes.Structure):   # glibc's struct mallinfo2: ten size_t fields
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = Info
block = np.ones(4 << 20, dtype=np.uint8)
print(mallinfo2().hblkhd)   # bytes in blocks that glibc mapped of their own
"""
SETUP = "from traceconv.process_setup import set_up_process; set_up_process()"


def run(code: str, setup: str) -> int:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_NUM_THREADS") and not k.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", code.format(setup=setup)], env=env,
                          capture_output=True, text=True, check=True)
    return int(json.loads(done.stdout))


def test_no_blas_threads_after_numpy_import():
    assert run(THREADS, SETUP) == 1
    # (the comparison: numpy's OpenBLAS starts threads of its own on a machine of 2+ cores)


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="glibc 2.33+ only")
def test_large_blocks_come_from_the_heap():
    # by default glibc maps a first block of 4 MB of its own and unmaps it when freed,
    # so the next is faulted in again; from the heap, it is reused
    assert run(MAPPED, SETUP) < 4 << 20 <= run(MAPPED, "")


def heap_mapped_bytes(_task) -> int:
    """In a worker: where glibc puts a fresh 4 MB block (as in MAPPED above)."""
    import numpy as np

    class Info(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    mallinfo2 = ctypes.CDLL(None).mallinfo2
    mallinfo2.restype = Info
    block = np.ones(4 << 20, dtype=np.uint8)
    mapped = mallinfo2().hblkhd
    del block
    return int(mapped)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="glibc 2.33+ only")
@pytest.mark.parametrize("engine", ["local", "dask"])
def test_workers_traceconv_starts_keep_freed_memory_too(engine):
    """Dask starts its workers with glibc giving back every freed block over 64 kB
    (``MALLOC_TRIM_THRESHOLD_``), which made a piece's conversion there 1.45x the CPU of
    the same conversion in the command line; the workers of the local pool had glibc's
    defaults. Both now get the command line's setting before their first task."""
    if engine == "dask":
        pytest.importorskip("dask.distributed")
    from traceconv.batch import open_pool
    from traceconv.batch.jobs import Task

    with open_pool(heap_mapped_bytes, engine, jobs=2) as pool:
        for k in range(2):
            pool.submit(Task(f"probe{k}", "probe.pftrace", "perfetto"))
        mapped = list(pool.results())
    assert len(mapped) == 2 and all(m < 4 << 20 for m in mapped)
