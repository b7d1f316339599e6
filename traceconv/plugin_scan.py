"""Whether any installed distribution could declare format plugins, found cheaply.

``importlib.metadata.entry_points()`` imports email, zipfile, csv and socket and parses
every distribution's metadata: about a tenth of ``traceconv info``'s start-up, spent on
most machines to learn that there is no plugin. This looks first, in the same places
(``*.dist-info`` and ``*.egg-info`` folders on ``sys.path``), for an
``entry_points.txt`` that names the group at all; only then is the full look-up needed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import PathFinder


def may_declare(group: str, paths: Sequence[str] | None = None,
                finders: Sequence[object] | None = None) -> bool:
    """False only when no distribution on ``paths`` (default ``sys.path``) names entry-point
    ``group``; True when one does, or when a place cannot be looked into this way (a zip
    file on the path, a custom finder of distributions among ``finders``, default
    ``sys.meta_path``).

    >>> may_declare("traceconv.formats", paths=[], finders=[])
    False
    >>> import tempfile, pathlib; folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "p-1.0.dist-info").mkdir()
    >>> _ = (folder / "p-1.0.dist-info" / "entry_points.txt").write_text("[traceconv.formats]\\n")
    >>> may_declare("traceconv.formats", paths=[str(folder)], finders=[])
    True
    """
    if any(hasattr(finder, "find_distributions") and finder is not PathFinder
           for finder in (sys.meta_path if finders is None else finders)):
        return True
    needle = f"[{group}]"
    for entry in sys.path if paths is None else paths:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):   # a zip or an egg: its metadata is inside
                return True
            continue
        try:
            with os.scandir(folder) as items:
                names = [item.path for item in items
                         if item.name.endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue
        for meta in names:
            try:
                with open(os.path.join(meta, "entry_points.txt"), encoding="utf-8",
                          errors="replace") as text:
                    if needle in text.read():
                        return True
            except OSError:   # no entry points (or an .egg-info that is a file)
                continue
    return False
