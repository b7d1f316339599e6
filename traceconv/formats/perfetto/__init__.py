"""Perfetto TrackEvent protobuf (``.pftrace``): writer and offline validator.

:func:`write` encodes the model as TrackEvent packets by hand (see :mod:`.writer`);
:mod:`.validate` checks any ``.pftrace`` for what trace_processor would drop.
"""

from .writer import write

__all__ = ["write"]
