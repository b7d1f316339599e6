"""Every page of ``docs/`` is reachable from the README, and no link of the README or of a
page points to a file or a section that is not there (sections move between pages: issue 39
moved the README's reference sections to ``docs/``)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs_console import FENCE, PAGES, ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def prose(page: Path) -> str:
    """The page's text without fenced blocks (a ``#`` line there is no heading)."""
    return FENCE.sub("", page.read_text())


def links(page: Path) -> list[str]:
    """The targets of the page's links (one in a code span is not a link)."""
    return LINK.findall(CODE_SPAN.sub("", prose(page)))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to ``-``.

    >>> slug("Perfetto input and Perfetto's traceconv"), slug("`traceconv report TRACE -o report.html`")
    ('perfetto-input-and-perfettos-traceconv', 'traceconv-report-trace--o-reporthtml')
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (a repeated heading gets ``-1``, ``-2``...)."""
    seen: dict[str, int] = {}
    for heading in HEADING.findall(prose(page)):
        name = slug(heading)
        seen[name] = seen.get(name, -1) + 1
        if seen[name]:
            seen[f"{name}-{seen[name]}"] = 0
    return set(seen)


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or section does not exist."""
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and linked.suffix == ".md"
                                   and anchor not in anchors(linked)):
            broken.append(f"{page.relative_to(ROOT)}: {target}")
    return broken


def test_no_link_points_to_a_missing_file_or_section():
    assert [link for page in PAGES for link in broken_links(page)] == []


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / target.partition("#")[0]).resolve()
              for target in links(ROOT / "README.md")}
    assert [page.name for page in PAGES[1:] if page.resolve() not in linked] == []
