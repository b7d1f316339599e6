"""What traceconv shows: tables at the terminal's width, the ``summary`` table and its JSON.

This layer sits above the readers (``formats/``) and the analyses (``analysis/``) and may
use both; the command line draws through it.
"""
