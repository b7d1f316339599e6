"""traceconv's version (``traceconv --version``, and what the writers record as the converter).

>>> __version__.count(".")
2
"""

__version__ = "0.1.0"
