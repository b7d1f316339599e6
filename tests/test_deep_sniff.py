"""A JSON object whose identifying keys come after more than the sniffed head (64 KiB) is
still recognised by the deep sniffs (the registry's ``deep_sniffer`` column), and their one
shared key scan reads a bounded number of bytes whatever the input's size."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from traceconv import registry
from traceconv.formats import sniffing
from traceconv.io import HEAD_BYTES, Source

ROOT = Path(__file__).parent.parent
MEGENGINE = ROOT / "tests" / "data" / "megengine"
SEEDS = ROOT / "tests" / "data" / "seeds"


def _load(path: Path) -> Any:
    return json.loads(gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes())


# every read JSON object format with keys to find, and a real file of it (its format known
# from where it comes from: see PROVENANCE.md and tests/data/megengine)
REAL_OBJECTS = [
    ("chrome", SEEDS / "chrome.pt.trace.json"),
    ("megengine", MEGENGINE / "resnet50ish_static_profile.json.gz"),
    ("megengine", MEGENGINE / "convnet_static_mem_info" / "graph.json"),
    ("megengine-meminfo", MEGENGINE / "resnet50ish_static_mem_info" / "StaticMemoryInfo.json.gz"),
    ("torch-et", SEEDS / "torch_et.json"),
]


def _detected(path: Path) -> str:
    return registry.detect(Source(str(path))).name


@pytest.mark.parametrize(("expected", "real"), REAL_OBJECTS, ids=lambda v: getattr(v, "name", v))
def test_keys_pushed_past_the_head_are_found(tmp_path: Path, expected: str, real: Path) -> None:
    pushed = {"a_long_first_key": "x" * (HEAD_BYTES + 4096), **_load(real)}
    path = tmp_path / "pushed.json"   # (a name no format's extension decides)
    path.write_text(json.dumps(pushed))
    assert _detected(path) == expected


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
    every deep sniff together opens it once and reads no more than head + budget."""
    budget = 3 << 20
    monkeypatch.setattr(sniffing, "_FURTHER", budget)
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
