"""The activity words of every producer traceconv knows, one module each.

Readers state each slice's :class:`~traceconv.model.activity.Activity` from their producer's
words (:mod:`.kineto`, :mod:`.paddle`, :mod:`.megengine`...); analyses classify the rows a
reader left unknown with the union of them all (:mod:`.generic`). Both need the words, so
they live here, below the readers (``formats/``) and the analyses (``analysis/``), which
never import each other.
"""
