"""The one visible stand-in for a control character that an output cannot hold: its
Unicode control picture (U+2400 '␀' for NUL ... U+241F for U+001F).

trace_processor cuts a string at its first NUL, XML cannot hold most C0 controls even
escaped, a browser shows a NUL as nothing: every writer that must replace such a character
(the Perfetto writer's strings, the markup of SVG, HTML and XML) writes this same picture,
so a name reads alike in each output.
"""

from __future__ import annotations

_FIRST_PICTURE = 0x2400   # U+2400 SYMBOL FOR NULL: the pictures follow the C0 controls' order


def control_picture(character: str) -> str:
    """The picture that stands in for C0 control ``character`` (U+0000 ... U+001F).

    >>> control_picture("\\0"), control_picture("\\x07"), control_picture("\\x1f")
    ('␀', '␇', '␟')
    """
    if not "\0" <= character < " ":
        raise ValueError(f"not a C0 control character: {character!r}")
    return chr(_FIRST_PICTURE + ord(character))


NUL_PICTURE = control_picture("\0")   # '␀'
