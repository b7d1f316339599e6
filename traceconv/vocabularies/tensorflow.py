"""The activities of TensorFlow step-timeline slices (the Chrome flavour
:mod:`traceconv.formats.chrome.flavours.tensorflow` gives its GPU records these categories:
the file's own ``"Op"`` says nothing of where they ran).

>>> from traceconv.model.activity import Activity
>>> [Activity(TENSORFLOW_VOCABULARY.classify(c, "MatMul", True)).name
...  for c in (DEVICE_CATEGORY, COPY_CATEGORY, REPEAT_CATEGORY)]
['KERNEL', 'MEMCPY', 'RANGE']
"""

from __future__ import annotations

from ..model.activity import Vocabulary
from .common import COMMON

DEVICE_CATEGORY = "tf_device"         # a record of one GPU stream (a kernel, unless named a copy)
COPY_CATEGORY = "tf_device_memcpy"    # ... that the tracer also wrote as a copy
REPEAT_CATEGORY = "tf_device_repeat"  # a record repeated on stream:all or memcpy: no work

TENSORFLOW_VOCABULARY = Vocabulary.union("tensorflow", COMMON, Vocabulary(
    "tensorflow", memcpy={COPY_CATEGORY}, device_annotation={REPEAT_CATEGORY}))
