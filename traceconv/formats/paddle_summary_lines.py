"""The lines that tell the new Paddle profiler's summary text: its table titles and the rows
of a table pasted without them. (Outside the reader's package, and light: detection
matches these lines without importing the reader.)

>>> bool(UNTITLED_ROW.match("conv2d  10  1.2 / 0.1 / 0.2 / 0.1 / 0.5"))
True
"""

from __future__ import annotations

import re

from .line_patterns import SPACED_NAME

# A table title or the Perf Summary's, as a multi-line bytes pattern (the sniffer's)
TITLES = re.compile(
    rb"^[ \t]*(?:-+(?:Device|Overview|Model|Distribution|Operator|Kernel|Memory Manipulation|"
    rb"UserDefined) Summary-+|-+Memory Summary - Place\(.+\)-+|=+Perf Summary=+)\s*$",
    re.MULTILINE)
# An Operator/Model/Kernel Summary row, recognised without its title, rules or header:
# name, calls, one or two "total / avg / max / min / ratio" groups, FLOPs (any spacing).
_CELL = r"(?:[-+]?\d[\d.eE+-]*|-)"
_GROUP = rf"{_CELL}\s*/\s*{_CELL}\s*/\s*{_CELL}\s*/\s*{_CELL}\s*/\s*{_CELL}"
UNTITLED_ROW = re.compile(
    rf"^(?P<indent> *)(?P<name>{SPACED_NAME})\s+(?P<calls>\d+|-)\s+(?P<first>{_GROUP})"
    rf"(?:\s+(?P<second>{_GROUP}))?(?:\s+(?P<flops>\d+|-))?\s*$")
