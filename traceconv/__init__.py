"""traceconv: convert deep-learning profiler traces through one graph-aware model.

>>> import traceconv
>>> trace = traceconv.load("samples/torch/cnn_step5.pt.trace.json")   # doctest: +SKIP
>>> trace.save("cnn.pftrace")                                        # doctest: +SKIP
"""

from .analysis.merge import merge
from .analysis.trim import trim
from .api import check, convert, list_formats, load, save
from .errors import FormatError, InputError, TraceconvError
from .model import MemoryBlock, Metadata, OpStat, ProcessKind, Trace, TrackKind

__version__ = "0.1.0"

__all__ = [
    "FormatError", "InputError", "MemoryBlock", "Metadata", "OpStat", "ProcessKind", "Trace",
    "TraceconvError", "TrackKind", "__version__", "check", "convert", "list_formats", "load",
    "merge", "save", "trim",
]
