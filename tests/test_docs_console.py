"""Every console block of the README and of ``docs/*.md`` runs and prints what it shows.

The rules (what is run, how output is compared, how a block is marked slow or skipped) are
in ``tests/docs_console.py``; ``python -m tests.docs_console --update`` re-syncs the pages.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests import docs_console as doc

COMMANDS = [command for page in doc.PAGES for command in doc.page_commands(page)]


def as_param(command: doc.Command):
    """The command as a test, with its block's marker."""
    if command.mark == "skip":
        marks = [pytest.mark.skip(reason=f"doc: skip {command.reason}")]
    else:
        marks = [getattr(pytest.mark, command.mark)] if command.mark else []
    return pytest.param(command, id=command.name, marks=marks)


@pytest.fixture(scope="session")
def page_folder(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Path]:
    """One scratch folder per page, shared by its commands in page order."""
    folders: dict[Path, Path] = {}

    def folder(page: Path) -> Path:
        if page not in folders:
            folders[page] = doc.scratch(tmp_path_factory.mktemp(page.stem))
        return folders[page]
    return folder


@pytest.mark.parametrize("command", [as_param(command) for command in COMMANDS])
def test_console_command(command: doc.Command, page_folder: Callable[[Path], Path]):
    why = doc.failure(command, *doc.run(command, page_folder(command.page)))
    assert why is None, f"{command.command}\n{why}"


def test_the_readme_and_the_pages_show_commands():
    pages = {command.page for command in COMMANDS}
    assert len([c for c in COMMANDS if c.page.name == "README.md"]) >= 8
    assert len(pages) >= 10


def test_a_skipped_block_says_why():
    assert [c.name for c in COMMANDS if c.mark == "skip" and not c.reason] == []


def test_every_shown_command_is_in_a_console_block():
    assert [name for page in doc.PAGES for name in doc.commands_outside_console_blocks(page)] == []
