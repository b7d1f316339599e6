"""One module (or sub-package) per external format.

The table of built-in formats is data in :data:`traceconv.registry.BUILTINS` (one row
each); see :mod:`traceconv.registry` for what a format module provides
(:class:`~traceconv.registry.FormatModule`) and how installed packages add formats.
Importing this package registers nothing.
"""
