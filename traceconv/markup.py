"""Text from trace data made safe inside markup: HTML pages, SVG and XML documents.

Names come from the input, and XML 1.0 cannot hold some characters even escaped (NUL and
most C0 controls, lone surrogates, U+FFFE/U+FFFF): one such character makes an SVG or a
JUnit report unreadable, and a browser shows a NUL in HTML as nothing. Every writer of
markup escapes its text here, so each shows those characters the same visible way: a C0
control as its Unicode control picture (NUL as '␀', as the Perfetto writer writes it:
:mod:`traceconv.control_pictures`), anything else XML cannot hold as U+FFFD.
"""

from __future__ import annotations

import html
import re

from .control_pictures import control_picture

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _stand_in(match: re.Match[str]) -> str:
    character = match.group()
    return control_picture(character) if character < " " else "\ufffd"


def xml_safe(text: object) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by a visible stand-in
    (tab, line feed and carriage return are kept).

    >>> xml_safe("sub\\0tract\\x07"), xml_safe("a\\ud800b"), xml_safe("a\\tb\\n")
    ('sub␀tract␇', 'a\\ufffdb', 'a\\tb\\n')
    """
    return _NOT_XML.sub(_stand_in, str(text))


def escape(text: object, quote: bool = True) -> str:
    """``text`` for HTML, SVG or XML text and attribute values: :func:`xml_safe`, then
    ``&``, ``<``, ``>`` (and quotes, unless ``quote`` is false) escaped.

    >>> escape('<b a="1">x\\0y</b>')
    '&lt;b a=&quot;1&quot;&gt;x␀y&lt;/b&gt;'
    """
    return html.escape(xml_safe(text), quote)
