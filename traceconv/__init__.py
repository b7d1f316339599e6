"""traceconv: convert deep-learning profiler traces through one graph-aware model.

>>> import traceconv
>>> trace = traceconv.load("samples/torch/cnn_step5.pt.trace.json")   # doctest: +SKIP
>>> trace.save("cnn.pftrace")                                        # doctest: +SKIP

The names below are imported on first use (``traceconv.load`` imports the model, numpy and
networkx; ``traceconv --version`` needs none of them), and seen by type checkers as usual.
"""

from __future__ import annotations

import importlib
from functools import partial
from typing import TYPE_CHECKING, Any

from . import implementations as _implementations
from .version import __version__

# public name -> the module that defines it (add a line when adding a public name)
_EXPORTS = {
    "check": ".api", "combine": ".api", "convert": ".api", "list_formats": ".api", "load": ".api", "save": ".api",
    "merge": ".analysis.merge", "trim": ".analysis.trim", "split": ".splitting",
    "convert_piece_by_piece": ".streaming",
    "FormatError": ".errors", "InputError": ".errors", "TraceconvError": ".errors",
    "MemoryBlock": ".model", "Metadata": ".model", "OpStat": ".model", "ProcessKind": ".model",
    "Trace": ".model", "TrackKind": ".model",
    "validate": ".model.validate", "Problem": ".model.validate",
    "FrozenTraceError": ".model.frozen", "TraceBuilder": ".model.builder",
}

if TYPE_CHECKING:
    from .analysis.merge import merge
    from .analysis.trim import trim
    from .api import check, combine, convert, list_formats, load, save
    from .errors import FormatError, InputError, TraceconvError
    from .model import MemoryBlock, Metadata, OpStat, ProcessKind, Trace, TrackKind
    from .model.builder import TraceBuilder
    from .model.frozen import FrozenTraceError
    from .model.validate import Problem, validate
    from .splitting import split
    from .streaming import convert_piece_by_piece


# What lower layers reach by name through traceconv.implementations (the model's Trace.save
# and to_pandas, the analyses' table of transformations): name -> (module, function). This
# package's __init__ runs before any traceconv.* module, so these are always registered.
_IMPLEMENTATIONS = {
    "save": (".api", "save"), "combine": (".api", "combine"),
    "to_pandas": (".analysis.frames", "pandas_frame"),
    "to_arrow": (".analysis.frames", "arrow_table"),
    "text_sniffers": (".registry", "text_sniffers"),
}


def _load(module: str, function: str) -> Any:
    """The function ``function`` of ``module`` (relative to this package), imported now."""
    return getattr(importlib.import_module(module, __name__), function)


for _name, (_module, _function) in _IMPLEMENTATIONS.items():
    _implementations.provide(_name, partial(_load, _module, _function))


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'traceconv' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "FormatError", "FrozenTraceError", "InputError", "MemoryBlock", "Metadata", "OpStat",
    "Problem", "ProcessKind", "Trace", "TraceBuilder", "TraceconvError", "TrackKind",
    "__version__", "check",
    "combine", "convert", "convert_piece_by_piece", "list_formats", "load", "merge", "save",
    "split", "trim", "validate",
]
