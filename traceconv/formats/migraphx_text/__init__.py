"""The grammar of MIGraphX text prints, as plain values: brackets, shapes, instruction lines
and the undoing of hard wraps.

Kept apart from the reader (:mod:`traceconv.formats.migraphx`, which types what is parsed
here into its pydantic and slotted classes) so that detection reads a text's instructions
without importing the reader, pydantic or networkx.
"""
