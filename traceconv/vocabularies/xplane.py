"""The activities of XPlane slices: rows derived from the device work are ranges (marks),
the "Steps" line's rows are steps, wherever they are drawn."""

from __future__ import annotations

from ..model.activity import Vocabulary
from .common import COMMON

DEVICE_ANNOTATION = "device_annotation"  # rows derived from the work: ranges, not work
STEP = "step"

XPLANE_VOCABULARY = Vocabulary.union("xplane", COMMON, Vocabulary(
    "xplane", device_annotation={DEVICE_ANNOTATION}, step={STEP}))
