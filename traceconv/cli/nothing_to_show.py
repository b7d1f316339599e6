"""A command with nothing to show ends alike with or without ``--json``: one error line
naming the input, exit status 1, and with ``--json`` its empty object still printed, the
reason beside what is empty (``why_empty``), so that a script reading the object learns
why rather than reading an empty result as a result."""

from __future__ import annotations

from typing import NoReturn

import click

from ..errors import FormatError
from ..presentation.json_text import json_text


def nothing_to_show(why: str, file: str, *, as_json: bool, empty: dict) -> NoReturn:
    """Fail on ``file`` with ``why``; with ``as_json`` print ``empty`` and ``why`` first.

    >>> from click.testing import CliRunner
    >>> @click.command()
    ... def show():
    ...     nothing_to_show("no path", "t.csv", as_json=True, empty={"path": []})
    >>> result = CliRunner().invoke(show)
    >>> result.exit_code, result.stdout.split(), type(result.exception).__name__
    (1, ['{', '"path":', '[],', '"why_empty":', '"no', 'path"', '}'], 'FormatError')
    """
    if as_json:
        click.echo(json_text(empty | {"why_empty": why}).decode())
    raise FormatError(why, file=file)
