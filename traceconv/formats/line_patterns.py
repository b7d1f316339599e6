"""Regex pieces for the cells of a text line, linear in the line's length by construction.

A backtracking pattern that lets a cell end at any character, then asks for blanks or more
cells after it, re-reads the rest of the line for each place the cell could end: a line of
one word and 64 KiB of blanks (or of a long run of numbers ending in a word) took minutes.
The pieces here end a cell on a visible character, so a run of blanks is crossed once, not
once per blank. Every compiled pattern of the readers is tried on such lines by
``tests/test_regex_linear.py``.
"""

from __future__ import annotations

# A name cell of a table row (words with single spaces inside, then the next cell): it
# starts and ends on a non-blank, the shortest such that the rest of the row follows.
SPACED_NAME = r"\S.*?(?<=\S)"

# Text up to the line's last visible character, or nothing (``b  c  `` -> ``b  c``), before
# trailing blanks: greedy to that character, where a lazy ``.*?`` then ``\s*`` and the rest
# re-read a run of blanks once per blank.
UP_TO_LAST_VISIBLE = r"(?:.*\S)?"
