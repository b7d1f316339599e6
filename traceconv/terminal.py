"""Text from trace data made safe to print: no control characters, no rich markup.

Names, diagnostic examples and paths come from the input. An ESC or BEL in a kernel name
must not drive the user's terminal, and a ``[/x]`` in an op name must not be taken for rich
markup (an unmatched closing tag is an exception in rich).
"""

from __future__ import annotations

import re

# C0 controls (tab and newline too: they would break a table row), DEL, C1 controls, and the
# bidirectional overrides that can make text read differently from what it holds
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\n``).

    >>> printable("conv\\x1b[2J\\x07"), printable("a\\tb")
    ('conv\\\\x1b[2J\\\\x07', 'a\\\\tb')
    """
    return _UNSAFE.sub(lambda m: repr(m.group())[1:-1], str(text))


def plain(text: object) -> str:
    """``text`` made printable and escaped for rich markup, for ``console.print`` and tables.

    >>> plain("op[/x]"), plain("[bold]not bold")
    ('op\\\\[/x]', '\\\\[bold]not bold')
    """
    from rich.markup import escape  # rich loads only for commands that draw tables

    return escape(printable(text))
