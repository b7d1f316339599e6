"""The console blocks of the README and of ``docs/*.md`` run as written.

How a page is read (keep to this when writing one):

- In a ```` ```console ```` block every line that starts with ``$ traceconv`` is a command
  (a line ending in ``\\`` continues on the next one). It runs from a scratch copy of the
  repository's ``samples/``, ``docs/`` and ``tests/data/`` (so the files it writes land there), one command
  after another in page order: a later block may use what an earlier one of the same page
  wrote. A plain command runs in the test's process; one with shell syntax (a pipe, a
  redirection) in ``bash``. Other ``$`` lines (``pip``, ``pytest``, ``ls``) are not run.
- The lines after a command, up to the next ``$`` line, are what it prints (standard output
  and error together). A command shown with no lines only has to succeed; one that is meant
  to fail shows ``traceconv: error: ...`` first, and one that ends with another exit status
  says so in a comment at the end of its line (``$ traceconv check bad.json  # exit 1``).
- Output is compared line by line after these normalisations only: trailing blanks are
  dropped; a line that is ``...`` (indented or not) stands for any run of lines; rich
  tables are drawn at the width of the widest line shown for that command (``COLUMNS``,
  80 at least); in ``wrote ...`` lines, wall-clock times (``0.18 s``) and output sizes
  (``102,853 bytes``) are not compared.
- An HTML comment on the line before the fence marks the whole block:
  ``<!-- doc: slow -->`` / ``shared`` / ``integration`` put that pytest marker on its
  commands; ``<!-- doc: skip why -->`` does not run them (the reason is listed by
  ``python -m tests.docs_console --list``).

After a change of what commands print, ``python -m tests.docs_console --update [PAGE...]``
runs every command and writes what it printed into the pages (a shown ``...`` is kept: the
lines before and after it keep their counts); check the diff before committing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner

from traceconv.cli import app

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
BLOCK_MARK = re.compile(r"<!-- doc: (skip|slow|shared|integration)\b\s*(.*?)\s*-->\s*\Z")
TIME_IN_WROTE = re.compile(r"(?<=, )\d+(\.\d+)? s\)")
SIZE_IN_WROTE = re.compile(r"\b\d[\d,]* bytes\b")
EXIT_NOTE = re.compile(r"#\s*exit (\d+)\b")
ANY_LINES = "..."
SHELL_SYNTAX = set("|&;<>()$`*?[]{}~")


@dataclass
class Command:
    """One ``$ traceconv`` line of a page, with the output shown under it."""

    page: Path
    line: int  # 1-based line of the ``$`` in the page
    command: str
    expected: list[str] = field(default_factory=list)
    mark: str = ""  # "", "skip", "slow", "shared" or "integration" (from the block's comment)
    reason: str = ""  # why a skipped block cannot run

    @property
    def name(self) -> str:
        """``page:line``, as a test id."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def first_output_line(self) -> int:
        """0-based index in the page of the first shown output line."""
        return self.line + self.command.count("\n")


def console_blocks(text: str) -> list[tuple[int, str, str]]:
    """(0-based line of the block's first body line, body, the mark comment before the fence).

    >>> console_blocks("<!-- doc: slow -->\\n```console\\n$ traceconv formats\\n```\\n")
    [(2, '$ traceconv formats\\n', '<!-- doc: slow -->')]
    """
    found = []
    for match in FENCE.finditer(text):
        if match.group(1) != "console":
            continue
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        found.append((text.count("\n", 0, match.start()) + 1, match.group(2), before))
    return found


def commands_outside_console_blocks(page: Path) -> list[str]:
    """``page:line`` of every ``$ traceconv`` line in a fenced block of another kind (such a
    command would never run).

    >>> commands_outside_console_blocks(ROOT / "docs" / "perfetto.md")
    []
    """
    text = page.read_text()
    return [f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 2 + offset}"
            for match in FENCE.finditer(text) if match.group(1) != "console"
            for offset, line in enumerate(match.group(2).splitlines())
            if line.startswith("$ traceconv")]


def page_commands(page: Path) -> list[Command]:
    """Every ``$ traceconv`` command of ``page``, in page order."""
    commands: list[Command] = []
    for first, body, before in console_blocks(page.read_text()):
        marked = BLOCK_MARK.search(before)
        mark, reason = (marked.group(1), marked.group(2)) if marked else ("", "")
        current: Command | None = None
        continued = False
        for offset, line in enumerate(body.splitlines()):
            if continued and current is not None:
                current.command += "\n" + line
            elif line.startswith("$ "):
                current = None
                if line.startswith("$ traceconv"):
                    current = Command(page, first + offset + 1, line[2:], mark=mark,
                                      reason=reason)
                    commands.append(current)
            elif current is not None:
                current.expected.append(line)
            continued = current is not None and line.endswith("\\") and not current.expected
    for command in commands:  # blank lines that end an output separate it from the next $
        while command.expected and not command.expected[-1].strip():
            command.expected.pop()
    return commands


def normalised(lines: list[str]) -> list[str]:
    """Lines as compared: no trailing blanks; no time or size in ``wrote`` lines.

    >>> normalised(["wrote a.svg (3 blocks, 1,024 bytes, 0.2 s)  "])
    ['wrote a.svg (3 blocks, <size>, <time>)']
    """
    return [SIZE_IN_WROTE.sub("<size>", TIME_IN_WROTE.sub("<time>)", line.rstrip()))
            if line.startswith("wrote ") else line.rstrip() for line in lines]


def matches(expected: list[str], got: list[str]) -> bool:
    """Whether ``got`` reads as ``expected``, where a ``...`` line stands for any run of lines.

    >>> matches(["a", "...", "z"], ["a", "b", "c", "z"]), matches(["a", "..."], ["b"])
    (True, False)
    """
    if not expected:
        return not got
    if expected[0].strip() == ANY_LINES:
        return any(matches(expected[1:], got[skip:]) for skip in range(len(got) + 1))
    return bool(got) and got[0] == expected[0] and matches(expected[1:], got[1:])


def width(command: Command) -> int:
    """The terminal width a command is run at: that of its widest shown line, 80 at least."""
    return max([80, *(len(line.rstrip()) for line in command.expected)])


def plain_arguments(command: Command) -> list[str] | None:
    """The arguments after ``traceconv`` when the line needs no shell (no pipe, redirection,
    variable or pattern), else None.

    >>> plain_arguments(Command(ROOT, 1, "traceconv info a.json --json  # counts"))
    ['info', 'a.json', '--json']
    >>> plain_arguments(Command(ROOT, 1, "traceconv info a.json | head -3")) is None
    True
    """
    try:
        words = shlex.split(command.command.replace("\\\n", " "), comments=True)
    except ValueError:
        return None
    if words[:1] != ["traceconv"] or any(set(word) & SHELL_SYNTAX for word in words):
        return None
    return words[1:]


def run(command: Command, folder: Path) -> tuple[int, list[str]]:
    """Run ``command`` in ``folder``: its exit status and its output lines.

    A plain command runs in this process (click's runner, standard output and error mixed as
    a terminal shows them), which saves an interpreter start per command; any other goes
    through ``bash`` with this interpreter's ``traceconv`` first on the ``PATH``.
    """
    looks = {"COLUMNS": str(width(command)), "NO_COLOR": "1", "TERM": "dumb", "FORCE_COLOR": None}
    arguments = plain_arguments(command)
    if arguments is not None:
        with contextlib.chdir(folder):
            result = CliRunner().invoke(app, arguments, env=looks, prog_name="traceconv",
                                        color=False)
        output = result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            output += "".join(traceback.format_exception(result.exception))
        return result.exit_code, output.rstrip("\n").splitlines()
    bindir = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           **{name: value for name, value in looks.items() if value is not None}}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(["bash", "-c", command.command], cwd=folder, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                          check=False)
    return done.returncode, done.stdout.rstrip("\n").splitlines()


def status_as_shown(command: Command, status: int) -> bool:
    """Whether ``status`` is the exit status the page shows for ``command``.

    >>> status_as_shown(Command(ROOT, 1, "traceconv check x  # exit 1"), 1)
    True
    """
    noted = EXIT_NOTE.search(command.command)
    if noted:
        return status == int(noted.group(1))
    meant_to_fail = bool(command.expected) and command.expected[0].startswith(
        "traceconv: error:")
    return (status != 0) == meant_to_fail


def failure(command: Command, status: int, got: list[str]) -> str | None:
    """Why what ``command`` did differs from its page (None when it does not)."""
    if not status_as_shown(command, status):
        return f"exit {status}:\n" + "\n".join(got)
    if command.expected and not matches(normalised(command.expected), normalised(got)):
        return "shown:\n" + "\n".join(command.expected) + "\nprinted:\n" + "\n".join(got)
    return None


def scratch(folder: Path) -> Path:
    """Copy ``samples/``, ``docs/`` and ``tests/data/`` into ``folder`` (commands write
    beside their inputs)."""
    for name in ("samples", "docs", "tests/data"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, folder / name)
    return folder


def shown_as(command: Command, got: list[str]) -> list[str]:
    """What ``--update`` writes under ``command``: ``got``, elided where the page elides.

    >>> shown_as(Command(ROOT, 1, "c", ["a", "...", "z"]), ["1", "2", "3", "4"])
    ['1', '...', '4']
    """
    elided = [at for at, line in enumerate(command.expected) if line.strip() == ANY_LINES]
    if not elided or matches(normalised(command.expected), normalised(got)):
        return got
    head, tail = elided[0], len(command.expected) - 1 - elided[-1]
    if head + tail >= len(got):
        return got
    return [*got[:head], command.expected[head], *(got[len(got) - tail:] if tail else [])]


def update(page: Path, folder: Path) -> list[str]:
    """Run ``page``'s commands and write what they print into it; the names of those changed.

    A command shown without output stays so (it only has to succeed); a failing one is
    reported, not written.
    """
    lines = page.read_text().split("\n")
    changed = []
    # Bottom up, so that the line numbers of the commands above stay right.
    results = [(command, *run(command, folder)) for command in page_commands(page)
               if command.mark != "skip"]
    for command, status, got in reversed(results):
        if not command.expected or failure(command, status, got) is None:
            continue
        if not status_as_shown(command, status):
            print(f"{command.name}: exit {status}, left as it is", file=sys.stderr)
            continue
        start = command.first_output_line
        lines[start:start + len(command.expected)] = [line.rstrip()
                                                      for line in shown_as(command, got)]
        changed.append(command.name)
    page.write_text("\n".join(lines))
    return changed[::-1]


def update_until_stable(page: Path) -> None:
    """``update`` from fresh copies until the page stays as it is (a table drawn at a new
    width changes the width the next run draws at), three times at most."""
    for _ in range(3):
        with tempfile.TemporaryDirectory() as temporary:
            changed = update(page, scratch(Path(temporary)))
        print("".join(f"updated {name}\n" for name in changed), end="")
        if not changed:
            return


def check(page: Path) -> int:
    """Run ``page``'s commands, print each that differs from the page; how many did."""
    bad = 0
    with tempfile.TemporaryDirectory() as temporary:
        folder = scratch(Path(temporary))
        for command in page_commands(page):
            why = None if command.mark == "skip" else failure(command, *run(command, folder))
            if why is not None:
                bad += 1
                print(f"{command.name}: {command.command}\n{why}\n")
    return bad


def main(argv: list[str] | None = None) -> int:
    """Check (or ``--update``, or ``--list``) the console blocks of the given pages."""
    parser = argparse.ArgumentParser(prog="python -m tests.docs_console",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", type=Path, help="pages (default: README, docs/)")
    parser.add_argument("--update", action="store_true", help="write what commands print")
    parser.add_argument("--list", action="store_true", help="list the commands and marks")
    args = parser.parse_args(argv)
    bad = 0
    for page in [page.resolve() for page in args.pages] or PAGES:
        if args.list:
            for command in page_commands(page):
                print(f"{command.name}\t{command.mark or 'fast'}\t{command.reason}")
        elif args.update:
            update_until_stable(page)
        else:
            bad += check(page)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
