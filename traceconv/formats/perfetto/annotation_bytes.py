"""Debug annotations of the usual form read straight from their bytes, many at once.

Nearly every annotation a profiler writes is an interned name and one number:
``08 <iid>`` then ``int_value``, ``uint_value``, ``bool_value`` (a varint),
``double_value`` (fixed64) or ``string_value_iid`` (a varint after a two-byte tag), and
nothing else. For those, three byte compares and one varint read per annotation give
what decoding every field gives (:func:`..protowire.columns.decode_fields`, two rounds and a
table of fields), at a fraction of the cost; everything else (inline names, strings,
dicts, arrays, several value fields) is left to the reader's field-by-field path.

>>> from traceconv.formats.protowire.columns import padded
>>> data = (b"\\x08\\x02\\x20\\x96\\x01"     # name iid 2, int_value 150
...         + b"\\x08\\x03\\x29" + bytes(8)    # name iid 3, double_value 0.0
...         + b"\\x0a\\x01a\\x20\\x01")        # an inline name: not this form
>>> rows, iid, kind, bits = name_and_number(padded(data), np.array([0, 5, 16]),
...                                         np.array([5, 16, 21]))
>>> rows.tolist(), iid.tolist(), kind.tolist(), bits.tolist()
([0, 1], [2, 3], [4, 5], [150, 0])
"""

from __future__ import annotations

import numpy as np

from ..protowire.columns import WireError, fixed, varints

_NAME_IID_TAG = 0x08                    # field 1 (name_iid), varint
_VARINT_TAGS = (0x10, 0x18, 0x20)       # bool, uint, int values (np.isin: 15 times slower)
_DOUBLE_TAG = 0x29                      # field 5 (double_value), fixed64
_STRING_IID_TAG = (0x88, 0x01)          # field 17 (string_value_iid), varint
DOUBLE, STRING_IID = 5, 17


def name_and_number(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Of the annotations ``buf[starts[i]:ends[i]]`` (``buf`` padded), those of the form
    above: their indexes (by form, then ascending), name iids, value field numbers (the
    kinds of :mod:`.arg_store`, string_value_iid as 17) and value bits."""
    head = np.flatnonzero((buf[starts] == _NAME_IID_TAG) & (buf[starts + 1] < 0x80)
                          & (ends - starts >= 4))
    at = starts[head]
    tag = buf[at + 2]
    size = ends[head] - at
    varint = (tag == _VARINT_TAGS[0]) | (tag == _VARINT_TAGS[1]) | (tag == _VARINT_TAGS[2])
    double = (tag == _DOUBLE_TAG) & (size == 11)
    string = (tag == _STRING_IID_TAG[0]) & (buf[at + 3] == _STRING_IID_TAG[1]) & (size >= 5)
    parts = [_varint_ending(buf, head[varint], at[varint] + 3, ends, tag[varint] >> 3),
             (head[double], fixed(buf, at[double] + 3, 8),
              np.full(int(double.sum()), DOUBLE, dtype=np.uint8)),
             _varint_ending(buf, head[string], at[string] + 4, ends,
                            np.full(int(string.sum()), STRING_IID, dtype=np.uint8))]
    rows = np.concatenate([p[0] for p in parts])
    return (rows, buf[starts[rows] + 1].astype(np.uint64),
            np.concatenate([p[2] for p in parts]), np.concatenate([p[1] for p in parts]))


def _varint_ending(buf: np.ndarray, rows: np.ndarray, at: np.ndarray, ends: np.ndarray,
                   kind: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, values, kinds) of the ``rows`` whose varint at ``at`` ends their annotation."""
    try:
        values, after = varints(buf, at)
    except WireError:   # a varint over 10 bytes: the field-by-field path says where
        return rows[:0], np.zeros(0, dtype=np.uint64), kind[:0]
    whole = after == ends[rows]
    return rows[whole], values[whole], kind[whole]
