"""Census of the text sniffers: the registry reads a text format's head as pasted text once
(``registry._pasted_head``), and every sniffer of a registry row with ``text=True`` is given
that head and reads it as it is, never undoing the paste again (twice, a quoted ``> >``
line or an ``&amp;lt;`` loses a level it should keep).

Each text format's real seed samples (text or CSV) are pasted quoted (``> `` before each line) with
coloured words; the head each sniffer is given must be the sample's own lines (compared
line by line in plain Python, trailing blanks aside), and no :class:`PastedLines` is made
while a sniffer runs.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from traceconv import registry
from traceconv.formats import pasted_text
from traceconv.io import Source

ROOT = Path(__file__).resolve().parent.parent
TEXT_ROWS = sorted((info for info in registry.all_formats() if info.text and info.sniffer),
                   key=lambda info: info.name)
_WORD = re.compile(r"\S+")
_COLOUR, _PLAIN = "\x1b[1;32m", "\x1b[0m"


def _pasted(text: str) -> str:
    """``text`` quoted line by line, each word coloured (as a terminal then a chat shows it)."""
    return "".join("> " + _WORD.sub(lambda m: f"{_COLOUR}{m[0]}{_PLAIN}", line) + "\n"
                   for line in text.splitlines())


def _samples() -> list:
    return [pytest.param(info.name, ROOT / seed.path, id=f"{info.name}-{Path(seed.path).name}")
            for info in TEXT_ROWS for seed in registry.seed_samples(info.name)]


def test_every_text_row_has_a_sniffer_and_a_text_sample():
    assert {name for name, _ in (p.values for p in _samples())} == {
        info.name for info in TEXT_ROWS}


@pytest.mark.parametrize("format_name, sample", _samples())
def test_each_text_sniffer_is_given_the_pasted_head_read_once(
        format_name: str, sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    original = sample.read_text(encoding="utf-8")
    path = tmp_path / f"pasted{''.join(sample.suffixes)}"
    path.write_text(_pasted(original), encoding="utf-8")
    made = [0]
    real_init = pasted_text.PastedLines.__init__

    def counting_init(self: pasted_text.PastedLines, *args: object) -> None:
        made[0] += 1
        real_init(self, *args)   # type: ignore[arg-type]

    monkeypatch.setattr(pasted_text.PastedLines, "__init__", counting_init)
    given: dict[str, list[tuple[bytes, int]]] = {}
    for info in TEXT_ROWS:
        module_name, _, function = (info.sniffer or "").partition(":")
        module = importlib.import_module(module_name)
        sniff = getattr(module, function)

        def recording(head: bytes, source: object, _sniff=sniff, _name=info.name) -> float:
            before = made[0]
            score = _sniff(head, source)
            given.setdefault(_name, []).append((head, made[0] - before))
            return float(score)

        monkeypatch.setattr(module, function, recording)
    registry._pasted_head.cache_clear()
    assert registry.detect(Source(str(path))).name == format_name
    assert format_name in given
    want = [line.rstrip() for line in original.splitlines()]
    for name, calls in given.items():
        for head, again in calls:
            assert again == 0, f"{name}'s sniffer read the pasted head as pasted text again"
            lines = [line.rstrip() for line in head.decode("utf-8").split("\n")]
            assert b"\x1b" not in head and lines[:-1] == want[:len(lines) - 1], name
