"""The activities of MegEngine slices (Chrome profile and static profile)."""

from __future__ import annotations

from ..model.activity import Vocabulary
from .common import COMMON

MEGENGINE_VOCABULARY = Vocabulary.union("megengine", COMMON, Vocabulary(
    "megengine",
    kernel={"kernel"},                          # "Kernel" lanes; a static profile's kernel part
    device_sync={"wait"},                       # ... and its wait for another comp node
    memcpy={"hosttodevice", "devicetohost"},    # copy lanes of the Chrome profile
))
