"""Functions a lower layer offers but an upper layer implements, joined by registration.

``Trace.save`` writes through the API's format table, ``Trace.to_pandas`` builds its frame
in :mod:`traceconv.analysis.frames`; yet the model imports nothing above it (the layers:
``tests/test_layers.py``). So the model asks this table for ``"save"`` by name, and the
package (``traceconv/__init__.py``, which runs before any ``traceconv.*`` module) registers
each implementation: a loader, called on first use, that imports the upper layer then.
This module imports nothing, so registering costs ``import traceconv`` nothing.

>>> provide("double", lambda: lambda x: 2 * x)
>>> implementation("double")(21)
42
>>> implementation("triple")
Traceback (most recent call last):
...
LookupError: no implementation of 'triple' is registered (it is registered by 'import traceconv')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_LOADERS: dict[str, Callable[[], Callable[..., Any]]] = {}


def provide(name: str, loader: Callable[[], Callable[..., Any]]) -> None:
    """Register ``loader``, which returns the implementation of ``name`` (importing what it
    needs when called); a later registration replaces an earlier one."""
    _LOADERS[name] = loader


def implementation(name: str) -> Callable[..., Any]:
    """The implementation registered for ``name``, loaded now."""
    try:
        loader = _LOADERS[name]
    except KeyError:
        raise LookupError(f"no implementation of {name!r} is registered "
                          "(it is registered by 'import traceconv')") from None
    return loader()
