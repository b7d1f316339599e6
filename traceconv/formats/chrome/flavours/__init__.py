"""Flavours: what each producer of Chrome JSON means by its events.

The generic reader handles the Trace Event Format; a flavour adds one producer's
conventions. A flavour is a subclass of :class:`Flavour` in its own module here, listed in
:data:`FLAVOURS` (most specific first). Hooks, all optional:

- ``detect(envelope, events)``: True when the document (envelope keys, first events) is
  this producer's. ``events`` is the first chunk of event dicts.
- ``device_categories``: categories whose events run on a device; their pid is a device
  index, kept apart from host pids of the same number.
- ``flow_categories``: synonyms of flow categories (``{"async": "ac2g"}``), so that the two
  ends of a flow written under different names still meet.
- ``prepare(events, context)``: rewrite a chunk of event dicts in place before they are read
  (rename legacy categories and args, strip name decorations); runs once per chunk, so it
  should loop only over what needs changing.
- ``name_process(...)``/``name_thread(...)``: display names from the M metadata.
- ``finalize(trace, context)``: add what only this producer's data allows (memory blocks
  from its memory events, joins by its ids).
"""

from __future__ import annotations

from .base import Flavour, ReadContext
from .jax import Jax
from .kineto import Kineto
from .megengine import MegEngine
from .onnxruntime import OnnxRuntime
from .paddle import PaddleProfiler, PaddleTimeline
from .tensorflow import TensorFlow

FLAVOURS: list[type[Flavour]] = [PaddleProfiler, PaddleTimeline, MegEngine, Kineto, TensorFlow,
                                 Jax, OnnxRuntime]


def detect(envelope: dict, events: list) -> Flavour:
    """The flavour of a document, or the generic one."""
    for flavour in FLAVOURS:
        try:
            found = flavour.detect(envelope, events)
        except (TypeError, AttributeError, KeyError, ValueError):
            # Malformed first events (a dict where a string belongs, ...) are counted by the
            # reader later; they only mean "not this producer" here.
            found = False
        if found:
            return flavour()
    return Flavour()


def by_name(name: str) -> Flavour:
    """The flavour called ``name`` (``--format chrome:kineto``), skipping detection.

    >>> by_name("kineto").framework
    'PyTorch'
    """
    for flavour in FLAVOURS:
        if flavour.name == name:
            return flavour()
    raise KeyError(name)


__all__ = ["FLAVOURS", "Flavour", "ReadContext", "by_name", "detect"]
