"""Pause Python's cyclic garbage collector around allocation-heavy loops.

Encoding a million events allocates millions of small ints and bytes objects; each batch
of allocations triggers a collection that walks every live container of the trace (one
args dict per event), which can make a loop several times slower. The loops that use this
create no reference cycles, so nothing is lost by collecting once afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic GC off (restored afterwards, even on error).

    >>> with paused_gc():
    ...     gc.isenabled()
    False
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
