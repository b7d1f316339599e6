"""A key a format claims counts only where the claim says (the top level, or any depth for
its ``inner`` keys), in the sniffed head as past it: real files with another format's key
hidden in a string, a nested object or array, keys and colons apart, a UTF-8 mark, a huge
first value, are still detected as what they are; a file holding two formats' top-level keys
is refused, wherever they are.

The expected formats are the real files' own (the seeds' registry rows and PROVENANCE.md).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv import registry
from traceconv.cli import app
from traceconv.errors import FormatError
from traceconv.io import HEAD_BYTES, Source

SEEDS = Path(__file__).parent / "data" / "seeds"
CHROME = SEEDS / "chrome.pt.trace.json"
TORCH_ET = SEEDS / "torch_et.json"
# The key each real file is known by, written once at its top level in these files
REAL_KEY = {"chrome": (CHROME, b'"traceEvents"'), "torch-et": (TORCH_ET, b'"nodes"')}
# Another format's key where it says nothing: (how it is hidden, the text put first in the
# file's top-level object); Chrome's key for the ET, the ET's for the Chrome trace
DECOYS = {
    "nested object": b'"metadata": {"%s": 1, "ctrl_deps": 2, "attrs": []}, ',
    "nested array": b'"metadata": [{"%s": [1]}, [{"%s": {}}]], ',
    "in a string": b'"name": "\\"%s\\": [{\\"ctrl_deps\\": 1, \\"attrs\\": []", ',
    "escaped quotes": b'"name": "\\\\\\"%s\\\\\\": \\\\", ',
    "a string's value": b'"name": "%s", "also": ["%s", "%s"], ',
}
COLONS = (b":", b" :", b"\n:", b"\r\n\t\n   :", b" " * 200 + b":")
FILLERS = {"none": b"", "huge string": b'"filler": "%s", ' % (b"x" * (HEAD_BYTES + 999)),
           "huge nested value": b'"filler": [{"a": [%s]}], ' % b",".join([b"[1]"] * 30000)}


def _variant(real: Path, key: bytes, decoy_key: bytes, rng: random.Random) -> tuple[bytes, str]:
    """``real`` with a decoy of another format's key, a filler first, the real key's colon
    moved off, maybe a UTF-8 mark; and what was done (for the failure message)."""
    hide, filler, colon = (rng.choice(list(DECOYS)), rng.choice(list(FILLERS)),
                           rng.choice(COLONS))
    bom = rng.random() < 0.3
    text = real.read_bytes()
    assert text.count(key + b":") == 1 and text.startswith(b"{")
    decoy = DECOYS[hide].replace(b"%s", decoy_key.strip(b'"'))
    text = b"{" + FILLERS[filler] + decoy + text[1:].replace(key + b":", key + colon)
    if bom:
        text = b"\xef\xbb\xbf" + text
    return text, f"{hide}, filler {filler}, colon {colon[:8]!r}, BOM {bom}"


@pytest.mark.slow
@pytest.mark.parametrize("expected", list(REAL_KEY))
def test_a_decoy_key_does_not_claim_the_file(tmp_path: Path, expected: str) -> None:
    """40 variants of each real file (seeded): detected as its own format every time.
    (Before: 7 of the 40 execution-trace variants were read as Chrome; 1, its keys after
    a nested array, was no format.)"""
    rng = random.Random(15)
    real, key = REAL_KEY[expected]
    decoy_key = next(k for name, (_, k) in REAL_KEY.items() if name != expected)
    path = tmp_path / "variant.json"   # (a name no format's extension decides)
    for _ in range(40):
        text, how = _variant(real, key, decoy_key, rng)
        path.write_bytes(text)
        assert registry.detect(Source(str(path))).name == expected, how


def test_an_execution_trace_whose_metadata_names_trace_events(tmp_path: Path) -> None:
    """The case found (a 16 KB execution trace, all of it in the head): was Chrome."""
    trace = json.loads(TORCH_ET.read_bytes())
    path = tmp_path / "et.json"
    path.write_text(json.dumps({"metadata": {"traceEvents": 1}, **trace}))
    assert len(path.read_bytes()) < HEAD_BYTES
    assert registry.detect(Source(str(path))).name == "torch-et"


def test_a_key_whose_colon_is_past_the_head(tmp_path: Path) -> None:
    """``"traceEvents"`` ends the head, its colon comes 1 MiB of whitespace later (past the
    first block of the scan too): not a key to the head sniff, a key to the scan."""
    text = CHROME.read_bytes().replace(b'"traceEvents":', b'"traceEvents"' + b" " * (1 << 20)
                                       + b":")
    start = text.index(b'"traceEvents"')
    text = text[:1] + b'"filler": "%s", ' % (b"y" * (HEAD_BYTES - start - 40)) + text[1:]
    path = tmp_path / "late_colon.json"
    path.write_bytes(text)
    assert HEAD_BYTES - 40 < text.index(b'"traceEvents"') < HEAD_BYTES - len(b'"traceEvents"')
    assert registry.detect(Source(str(path))).name == "chrome"


def test_a_key_across_the_scan_blocks(tmp_path: Path) -> None:
    """The real key cut by the scan's 1 MiB blocks, after a string of escaped quotes and
    decoys longer than a block: still found at the top level."""
    trace = TORCH_ET.read_bytes()
    decoy = b'\\"traceEvents\\": [\\\\\\"' * 50000   # (\"traceEvents\": [\\\")
    prefix = b'{"blob": "' + decoy + b'", '
    before_key = len(prefix) + len(b'"pad": "", ') + trace.index(b'"nodes"') - 1
    for cut_at in (3, 7):   # (bytes of '"nodes"' before the block's end)
        pad = (1 << 20) - before_key % (1 << 20) - cut_at
        text = prefix + b'"pad": "%s", ' % (b"z" * pad) + trace[1:]
        assert json.loads(text)
        assert text.index(b'"nodes"') % (1 << 20) == (1 << 20) - cut_at
        path = tmp_path / "across.json"
        path.write_bytes(text)
        assert registry.detect(Source(str(path))).name == "torch-et"


BOTH = {"chrome and rocprof": b'"rocprofiler-sdk-tool": [], ',
        "chrome and trtexec": b'"Layers": [], "Bindings": [], '}


@pytest.mark.parametrize("other", list(BOTH))
@pytest.mark.parametrize("where", ["first", "last", "past the head"])
def test_two_formats_keys_are_refused_wherever_they_are(tmp_path: Path, other: str,
                                                        where: str) -> None:
    """Chrome's top-level key and another format's in one file: neither wins (was: the one
    whose key the sniffers saw first or most surely, or an error past the head only)."""
    text = CHROME.read_bytes()
    if where == "first":
        text = b"{" + BOTH[other] + text[1:]
    elif where == "last":
        text = text.rstrip()[:-1] + b", " + BOTH[other].rstrip(b", ") + b"}"
    else:
        text = (b'{"filler": "%s", ' % (b"x" * HEAD_BYTES)) + BOTH[other] + text[1:]
    assert json.loads(text)
    path = tmp_path / "both.json"
    path.write_bytes(text)
    with pytest.raises(FormatError, match=f"the keys of {other.replace(' and ', ' and of ')} "
                                          "are both in this file; name its format"):
        registry.detect(Source(str(path)))
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    forced = CliRunner().invoke(app, ["info", "--format", "chrome", str(path)])
    assert forced.exit_code == 0, forced.output
