"""The general activity vocabulary, for traces whose producer is not known.

Plain Chrome JSON says nothing about what an event is, so its slices are left
:attr:`~traceconv.model.activity.Activity.UNKNOWN` at read time (as are those of a trace
built by hand); the analyses' accessor
(:func:`traceconv.analysis.activity.slice_activity`) classifies those with this: the words
of every producer traceconv knows, plus traceconv's own (the ``aggregate`` slices it draws
from statistics tables).

>>> from traceconv.model.activity import Activity
>>> Activity(GENERIC_VOCABULARY.classify("kernel", "gemm", True)).name
'KERNEL'
"""

from __future__ import annotations

from ..model.activity import Vocabulary
from .kineto import KINETO_VOCABULARY
from .megengine import MEGENGINE_VOCABULARY
from .migraphx import MIGRAPHX_VOCABULARY
from .nsys import NSYS_VOCABULARY
from .paddle import PADDLE_VOCABULARY
from .rocprof import ROCPROF_VOCABULARY
from .tensorflow import TENSORFLOW_VOCABULARY
from .xplane import XPLANE_VOCABULARY

TRACECONV_VOCABULARY = Vocabulary("traceconv", aggregate={"aggregate"})
GENERIC_VOCABULARY = Vocabulary.union("generic", KINETO_VOCABULARY, PADDLE_VOCABULARY,
                                      MEGENGINE_VOCABULARY, MIGRAPHX_VOCABULARY,
                                      NSYS_VOCABULARY, XPLANE_VOCABULARY,
                                      ROCPROF_VOCABULARY, TENSORFLOW_VOCABULARY,
                                      TRACECONV_VOCABULARY)
