"""rocprof's cell texts as numbers: every output writes integers, some quoted ("42"), some
in hex ("0x709f0b65d740"), agents as "Agent 1" in newer CSVs."""

from __future__ import annotations

import re

# ASCII: int() takes these spaces and digits, not every character str.isspace() names
# (a control character such as "\x1d" is "space" to the regex, not to int)
_INTEGER = re.compile(r"\s*[-+]?\d+\s*\Z", re.ASCII)
_AGENT = re.compile(r"(?:Agent\s*)?(\d+)\Z", re.IGNORECASE)
# (digits on both sides of the point and no exponent: what rocprof writes, always finite)
_DECIMAL = re.compile(r"\s*[-+]?\d{1,300}\.\d{1,300}\s*\Z", re.ASCII)
_HEX = re.compile(r"\s*0x([0-9a-f]+)\s*\Z", re.ASCII | re.IGNORECASE)


def integer(value: object) -> int | None:
    """``value`` as an int when it is one (an int, or decimal digits), else None.

    >>> integer("769537350099688"), integer(7), integer("0x10"), integer(" 12 ")
    (769537350099688, 7, None, 12)
    >>> integer(True), integer(2.5), integer("12\\x1d")
    (None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.match(value):
        return int(value)
    return None


def address(value: object) -> int | None:
    """An address as an int: decimal (rocpd stores integers) or hex, as rocprofv3's CSV and
    ``rocpd convert`` write it (``0x00007ffb26354000``, ``0x00007FFB26354000``).

    >>> address("0x00007ffb26354000"), address("0x00007FFB26354000"), address(4096)
    (140716654542848, 140716654542848, 4096)
    >>> address(""), address("0x"), address("0xg1")
    (None, None, None)
    """
    match = _HEX.match(value) if isinstance(value, str) else None
    return int(match.group(1), 16) if match else integer(value)


def arg_value(value: object) -> object:
    """A cell kept as an argument: an integer as an int (within int64), a decimal
    fraction as a float (rocprof v1 writes its counters so: ``2048.0000000000``, where
    rocprofv3 writes ``2048``), else as it is.

    >>> arg_value("256"), arg_value("0x0"), arg_value(2**70) == str(2**70)
    (256, '0x0', True)
    >>> arg_value("2048.0000000000"), arg_value("-0.5"), arg_value("1.2.3"), arg_value("nan")
    (2048.0, -0.5, '1.2.3', 'nan')
    """
    number = integer(value)
    if number is None:
        if isinstance(value, str) and _DECIMAL.match(value):
            return float(value)
        return value
    return number if -2**63 <= number < 2**63 else str(number)


def agent_number(value: object) -> int | None:
    """The number of an agent id: ``4``, ``"4"`` or ``"Agent 4"``.

    >>> agent_number("Agent 1"), agent_number("2"), agent_number("GPU")
    (1, 2, None)
    """
    match = _AGENT.match(str(value).strip())
    return int(match.group(1)) if match else None
