"""The keys that tell a JSON format's files apart wherever they come, and the one scan that
finds them past the sniffed head.

A JSON file's identifying keys may come after more than the 64 KiB head: a viztracer
trace's ``file_info`` before ``traceEvents``, a MegEngine ``opr`` map before its chunks, a
huge first string or a long first array before a trtexec export's or rocprofv3's keys. Each
JSON format states its keys as :class:`KeyClaim` rows (the registry's ``key_claims``
column names them); detection scans an input once for the keys of every format
(:func:`keys_found`) and asks each claim whether it holds, and a reader that dispatches on
its file's opening asks :func:`claimed_kind` when the opening does not tell.

A claim's keys are keys of the file's top-level object (or of the objects directly in a
top-level array): the same name nested in a value (an execution trace's metadata holding
``"traceEvents"``) says nothing about the file. Only the keys a claim names ``inner`` (an
execution trace's node fields, a Chrome event's args) count wherever they come.

>>> claim = KeyClaim("graph", all_of=("Layers",), none_of=("traceEvents",))
>>> claim.holds(frozenset({b'"Layers"', b'"Bindings"'}))
True
>>> claim.holds(frozenset({b'"Layers"', b'"traceEvents"'}))
False
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..errors import TraceconvError
from ..io import HEAD_BYTES
from .key_depths import KeyDepths

if TYPE_CHECKING:
    from ..io import Source

_COLON_AFTER = re.compile(rb"[ \t\r\n]*+:?")
FURTHER = 256 << 20   # how far past its head an input is searched for identifying keys
_BLOCK = 1 << 20


@dataclass(frozen=True)
class KeyClaim:
    """One kind of a format's JSON file, known by the keys of its top-level object: every
    key of ``all_of``, at least ``least`` of ``some_of``, and none of ``none_of`` (another
    format's key: it keeps two formats from claiming one file); a key also in ``inner``
    counts wherever it is a key (the fields of the items). The reader checks the structure.

    >>> KeyClaim("profile", all_of=("count",), some_of=("timeMs", "averageMs"), least=1
    ...          ).holds(frozenset({b'"count"', b'"averageMs"'}))
    True
    """

    kind: str                       # what the format calls the files this claim tells
    all_of: tuple[str, ...] = ()
    some_of: tuple[str, ...] = ()
    least: int = 0
    none_of: tuple[str, ...] = ()
    inner: tuple[str, ...] = ()     # keys of the items, found at any depth

    @property
    def keys(self) -> frozenset[bytes]:
        """Every key the claim looks at, quoted as the file writes it."""
        return frozenset(_quoted((*self.all_of, *self.some_of, *self.none_of)))

    def holds(self, found: frozenset[bytes]) -> bool:
        """Whether a file holding the quoted keys ``found`` is of this claim's kind."""
        return (found.issuperset(_quoted(self.all_of))
                and len(found.intersection(_quoted(self.some_of))) >= self.least
                and found.isdisjoint(_quoted(self.none_of)))


def _quoted(keys: Iterable[str]) -> list[bytes]:
    return [b'"%s"' % key.encode() for key in keys]


def keys_in_head(head: bytes, claims: Iterable[KeyClaim]) -> frozenset[bytes]:
    """The keys of ``claims`` that ``head`` holds where the claims count them (the walk of
    :func:`keys_found`): what a sniffer, and detection, ask of a head (which may stop
    anywhere: a key whose colon is past it is not seen). Walked once for each set of claims.

    >>> sorted(keys_in_head(b'{"metadata": {"traceEvents": 1}, "nodes": [{"attrs": []}], '
    ...                     b'"name": "\\"schema\\": 1"}',
    ...                     [KeyClaim("et", ("nodes", "schema"), ("attrs",), 1, ("traceEvents",),
    ...                               inner=("attrs",))]))
    [b'"attrs"', b'"nodes"']
    """
    if not _opens_json(head):
        return frozenset()   # (no walk for a binary head)
    return _keys_in_head(head, tuple(claims))


@lru_cache(maxsize=16)
def _keys_in_head(head: bytes, claims: tuple[KeyClaim, ...]) -> frozenset[bytes]:
    scan = _scan_for(claims)
    # (no key past the last place the text of one is, with its colon: the walk stops there)
    last = max((head.rfind(key) + len(key) for key in scan.wanted if key in head), default=0)
    if last:
        colon = _COLON_AFTER.match(head, last)
        scan.feed(head[:colon.end() if colon else last])
    scan.end()
    return frozenset(scan.found)


def keys_found(head: bytes, source: Source | None, claims: Iterable[KeyClaim]
               ) -> frozenset[bytes]:
    """The keys of ``claims`` that a JSON object or array longer than its head holds in the
    head and the :data:`FURTHER` bytes after it, where the claims count them (the walk of
    :func:`keys_in_head`); nothing for a shorter input (its head sniffs saw all of it)
    or for one that is no JSON object or array.

    It reads a MiB at a time (memory: two blocks), at most ``HEAD_BYTES + FURTHER`` bytes,
    and stops one block after the one where some claim holds (the block after lets a claim
    whose keys include another's, or rule it out, find the rest too), or once every key is
    found.

    >>> keys_found(b'{"traceEvents": []}', None, [KeyClaim("trace", ("traceEvents",))])
    frozenset()
    """
    claims = tuple(claims)
    if source is None or len(head) < HEAD_BYTES or not claims or not _opens_json(head):
        return frozenset()
    scan = _scan_for(claims)
    blocks_left = (HEAD_BYTES + FURTHER) // _BLOCK
    try:
        with source.open() as stream:
            while blocks_left > 0 and not scan.done and (block := stream.read(_BLOCK)):
                scan.feed(block)
                blocks_left -= 1
                if blocks_left > 1 and any(claim.holds(frozenset(scan.found))
                                           for claim in claims):
                    blocks_left = 1
    except (OSError, EOFError, ValueError, TraceconvError):
        pass   # (the reader, not detection, says what is wrong with the input)
    scan.end()
    return frozenset(scan.found)


def _opens_json(head: bytes) -> bool:
    """Whether ``head`` opens a JSON object or array (after a UTF-8 mark, whitespace)."""
    return head.removeprefix(codecs.BOM_UTF8).lstrip()[:1] in (b"{", b"[")


def _scan_for(claims: tuple[KeyClaim, ...]) -> KeyDepths:
    """The walk for the keys of ``claims``: a key some claim names ``inner`` at any depth,
    the others at the top level."""
    inner = frozenset(_quoted(key for claim in claims for key in claim.inner))
    keys = frozenset().union(*(claim.keys for claim in claims))
    return KeyDepths(top=keys - inner, anywhere=keys & inner)


def claimed_kind(source: Source, claims: tuple[KeyClaim, ...]) -> str | None:
    """The kind of the first of ``claims`` that ``source`` holds past its head, or None:
    for a reader whose file's opening did not tell its kind.

    >>> from traceconv.io import Source   # (a file no longer than its head: its opening told)
    >>> print(claimed_kind(Source("tests/data/seeds/torch_et.json"), (KeyClaim("et", ("nodes",)),)))
    None
    """
    found = keys_found(source.head, source, claims)
    return next((claim.kind for claim in claims if claim.holds(found)), None)
