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

from ...model.activity import Vocabulary
from .._paddle import PADDLE_VOCABULARY
from ..megengine.activity import MEGENGINE_VOCABULARY
from ..migraphx.activity import MIGRAPHX_VOCABULARY
from ..nsys.activity import NSYS_VOCABULARY
from ..xplane.activity import XPLANE_VOCABULARY
from .flavours.kineto_activity import KINETO_VOCABULARY

TRACECONV_VOCABULARY = Vocabulary("traceconv", aggregate={"aggregate"})
GENERIC_VOCABULARY = Vocabulary.union("generic", KINETO_VOCABULARY, PADDLE_VOCABULARY,
                                      MEGENGINE_VOCABULARY, MIGRAPHX_VOCABULARY,
                                      NSYS_VOCABULARY, XPLANE_VOCABULARY,
                                      TRACECONV_VOCABULARY)
