"""A JSON file whose identifying keys come after more than the sniffed head (64 KiB) is
still recognised through the registry's ``key_claims`` column, for every JSON format read:
one key scan serves them all, and reads a bounded number of bytes whatever the input's size.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from traceconv import registry
from traceconv.cli import app
from traceconv.formats import key_claims
from traceconv.io import HEAD_BYTES, Source

ROOT = Path(__file__).parent.parent
MEGENGINE = ROOT / "tests" / "data" / "megengine"
TRTEXEC = ROOT / "samples" / "trtexec"
SEEDS = ROOT / "tests" / "data" / "seeds"


def _load(path: Path) -> Any:
    return json.loads(_bytes(path))


def _bytes(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


# Real files of every JSON format read, each kind of file a format tells apart: (format,
# kind, file), the format and kind from where the file comes from (the seeds' registry
# rows and PROVENANCE.md, the samples' folders and export names)
REAL_FILES = [
    ("chrome", "trace", SEEDS / "chrome.pt.trace.json"),
    ("megengine", "profile", SEEDS / "megengine_profile.json"),
    ("megengine", "profile", MEGENGINE / "convnet_static_mem_info" / "graph.json"),
    ("megengine-meminfo", "meminfo", SEEDS / "StaticMemoryInfo.json"),
    ("torch-et", "trace", SEEDS / "torch_et.json"),
    ("trtexec", "profile", SEEDS / "resnet.engine.profile.json"),
    ("trtexec", "graph", TRTEXEC / "resnet_rtx3090_fp32.engine.graph.json.gz"),
    ("trtexec", "times", TRTEXEC / "resnet_rtx3090_fp32.engine.timing.json.gz"),
    ("trtexec", "trex-build", TRTEXEC / "resnet_rtx3090_fp32.engine.build.metadata.json.gz"),
    ("trtexec", "trex-profile",
     TRTEXEC / "resnet_rtx3090_fp32.engine.profile.metadata.json.gz"),
    ("trtexec", "trex-device",
     ROOT / "tests" / "data" / "trtexec" / "resnet_a100_fp16.engine.metadata.json.gz"),
    ("rocprof", "v1-json", SEEDS / "rocprof_results.json"),
    ("rocprof", "v1-json",
     ROOT / "tests" / "data" / "rocprof" / "shashankparsi__HIP_Programming__results.json"),
    ("rocprof", "v3-json", SEEDS / "rocprofv3_results.json"),
]
# JSON formats known by their opening's shape, not by keys: nothing can come before it
BY_SHAPE = {"torch-memory": "a list of lists of numbers: [[<number>"}
# What is put before the first key of the file's first object: a huge first string, a long
# first array (both more than the head)
FILLERS = {"string": b'"x' + b"x" * 100_000 + b'"',
           "array": b"[" + b"0, " * 50_000 + b"0]"}


def _padded(real: Path, filler: bytes) -> bytes:
    data = _bytes(real)
    first_object = data.index(b"{") + 1
    return data[:first_object] + b'"traceconv_filler": ' + filler + b", " + data[first_object:]


def _detected(path: Path) -> str:
    return registry.detect(Source(str(path))).name


def test_every_json_format_read_has_real_files_here() -> None:
    registry._ensure_loaded()
    json_readers = {info.name for info in registry._FORMATS.values()
                    if info.reads and any(ext.endswith(".json") for ext in info.extensions)}
    assert json_readers == {name for name, _, _ in REAL_FILES} | set(BY_SHAPE)
    for name in {name for name, _, _ in REAL_FILES}:   # (each kind a format tells apart)
        kinds = {claim.kind for claim in registry.get(name).key_claim_rows()}
        assert kinds == {kind for n, kind, _ in REAL_FILES if n == name}


@pytest.mark.parametrize("filler", list(FILLERS))
@pytest.mark.parametrize(("expected", "kind", "real"), REAL_FILES,
                         ids=lambda v: getattr(v, "name", None))
def test_keys_pushed_past_the_head_are_found(tmp_path: Path, expected: str, kind: str,
                                             real: Path, filler: str) -> None:
    path = tmp_path / "pushed.json"   # (a name no format's extension decides)
    path.write_bytes(_padded(real, FILLERS[filler]))
    source = Source(str(path))
    assert source.head.index(b'"traceconv_filler"') < 8 and len(FILLERS[filler]) > HEAD_BYTES
    assert _detected(path) == expected
    everyone = {info.name: info.key_claim_rows() for info in registry._FORMATS.values()}
    found = key_claims.keys_found(source.head, source,
                                  [claim for rows in everyone.values() for claim in rows])
    claiming = {name for name, rows in everyone.items() if any(c.holds(found) for c in rows)}
    assert claiming == {expected}   # (no two formats claim one file)
    assert key_claims.claimed_kind(source, everyone[expected]) == kind


def test_meminfo_whose_opr_map_is_longer_than_the_head(tmp_path: Path) -> None:
    """(the chunks come after an opr map of more than 64 KiB: a bigger network's file)"""
    info = _load(MEGENGINE / "resnet50ish_static_mem_info" / "StaticMemoryInfo.json.gz")
    oprs = list(info["opr"].values())
    copies = HEAD_BYTES // len(json.dumps(info["opr"])) + 1
    scaled = {str(i): {**opr, "id": str(i)}
              for i, opr in enumerate(oprs * (copies + 1))}
    path = tmp_path / "scaled.json"
    path.write_text(json.dumps({"opr": scaled, "chunk": info["chunk"]}))
    assert path.read_bytes().index(b'"chunk"') > HEAD_BYTES
    assert _detected(path) == "megengine-meminfo"


def test_a_file_two_formats_claim_is_named_not_guessed(tmp_path: Path) -> None:
    """A Chrome trace's and a rocprofv3 JSON's keys past the head: one line, exit 1."""
    path = tmp_path / "both.json"
    path.write_text(json.dumps({"traceconv_filler": "x" * (HEAD_BYTES + 4096),
                                "traceEvents": [], "rocprofiler-sdk-tool": []}))
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"traceconv: error: {path}: the keys of chrome and of rocprof are both in this file; "
        "name its format with --format"]


def test_graph_json_with_a_long_comp_seq(tmp_path: Path) -> None:
    graph = _load(MEGENGINE / "convnet_static_mem_info" / "graph.json")
    graph["comp_seq"] = graph["comp_seq"] * 400
    path = tmp_path / "graph_long.json"
    path.write_text(json.dumps(graph))
    assert path.read_bytes().index(b'"mem_chunk"') > HEAD_BYTES
    assert _detected(path) == "megengine"


def test_the_key_scan_is_bounded_and_shared(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An object of another kind (no key of any format) bigger than the scan's budget:
    detection opens it once for every format's keys and reads no more than head + budget."""
    budget = 3 << 20
    monkeypatch.setattr(key_claims, "FURTHER", budget)
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"blob": "y" * (4 * budget)}))
    source = Source(str(path))
    assert len(source.head) == HEAD_BYTES   # (read before counting: the head is not the scan)
    opened, read = [], []

    class Counting:
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def read(self, size: int = -1) -> bytes:
            block: bytes = self.stream.read(size)
            read.append(len(block))
            return block

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.stream.close()

    real_open = source.open
    monkeypatch.setattr(source, "open", lambda: opened.append(1) or Counting(real_open()))
    with pytest.raises(Exception, match="cannot tell the format"):
        registry.detect(source)
    assert len(opened) == 1
    assert 0 < sum(read) <= HEAD_BYTES + budget


def test_a_key_nested_in_a_value_does_not_claim_the_file(tmp_path: Path) -> None:
    """A real execution trace whose first key's value (more than the head) holds a
    ``"traceEvents"`` key: the top-level keys say torch-et (was: read as Chrome, refused)."""
    trace = _load(SEEDS / "torch_et.json")
    path = tmp_path / "et.json"
    path.write_text(json.dumps({"metadata": {"blob": "x" * HEAD_BYTES, "traceEvents": 1},
                                **trace}))
    assert path.read_bytes().index(b'"traceEvents"') > HEAD_BYTES
    assert _detected(path) == "torch-et"


def _keys_by_depth(value: Any, top_keys: set[str], anywhere: set[str]) -> set[str]:
    """The keys of ``value`` among ``top_keys`` at the top level (the root object's keys, or
    those of objects in a root array) and among ``anywhere`` at any depth: a walk of the
    parsed value."""
    top_depth = 1 if isinstance(value, dict) else 2
    found: set[str] = set()

    def walk(item: Any, depth: int) -> None:
        children = item.items() if isinstance(item, dict) else (
            enumerate(item) if isinstance(item, list) else ())
        for key, child in children:
            if isinstance(item, dict) and (key in anywhere or (
                    key in top_keys and depth == top_depth)):
                found.add(key)
            walk(child, depth + 1)
    walk(value, 1)
    return found


def test_key_depths_agree_with_a_parse_in_any_cut() -> None:
    """Random documents with keys and look-alike strings (escaped quotes, backslash runs, a
    key's text inside a string), any whitespace between a key and its colon, a UTF-8 mark,
    fed in random pieces: the walk finds what a walk of the parsed value finds."""
    import random

    from traceconv.formats.key_depths import KeyDepths

    rng = random.Random(14)
    names = ["traceEvents", "nodes", "attrs", "a", 'b"c']
    look_alikes = ["traceEvents", "nodes", 'x"traceEvents": y', "\\", '\\"', 'q\\"nodes\\":',
                   '"attrs":', "{[", 1, None,
                   "x" * 50 + '\\"traceEvents\\": [' + "\\" * 3 + '"nodes":' + "\\" * 4]
    colons = [":", ": ", " :", "\n:\n", "\r\n\t :", " " * 70 + ":"]
    claim = key_claims.KeyClaim("any", some_of=("traceEvents", "nodes", "attrs"),
                                inner=("attrs",))

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.3:
            return rng.choice(look_alikes)
        if roll < 0.6:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(names): value(depth + 1) for _ in range(rng.randint(0, 3))}

    checked = 0
    for _ in range(600):
        document = (value(0) if rng.random() < 0.2 else
                    {rng.choice(names): value(1) for _ in range(3)} if rng.random() < 0.5
                    else [value(1) for _ in range(3)])
        if not isinstance(document, (dict, list)):
            continue
        text = json.dumps(document, indent=rng.choice([None, 1]),
                          separators=(",", rng.choice(colons))).encode()
        if rng.random() < 0.2:
            text = b"\xef\xbb\xbf" + text
        scan = KeyDepths(top=[b'"traceEvents"', b'"nodes"'], anywhere=[b'"attrs"'])
        at = 0
        while at < len(text):
            piece = rng.randint(1, 40)
            scan.feed(text[at:at + piece])
            at += piece
        scan.end()
        expected = _keys_by_depth(document, {"traceEvents", "nodes"}, {"attrs"})
        assert {k.strip(b'"').decode() for k in scan.found} == expected, text
        # (a head's walk, which stops after the last key's text: the same keys)
        in_head = key_claims.keys_in_head(text, [claim])
        assert {k.strip(b'"').decode() for k in in_head} == expected, text
        checked += 1
    assert checked > 400
