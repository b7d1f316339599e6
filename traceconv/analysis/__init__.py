"""Transformations over the model: merge, nesting repair, summaries, memory, diffs."""
