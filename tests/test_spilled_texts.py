"""Argument texts kept on disk while converting (``--spill-args``): the same output.

The claim is exactness, so the expected values are the in-memory path's own bytes (the
option must not change one) and the events' args as plain ``json`` reads them.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from traceconv import spilled_texts
from traceconv.cli import app
from traceconv.cli.convert import GZIP_GUESS, SPILL_ABOVE, spills
from traceconv.formats.chrome.reader import read_chrome
from traceconv.io import Source
from traceconv.output_files import scratch_folder
from traceconv.spilled_texts import SpilledTexts, texts_on_disk

ROOT = Path(__file__).parent.parent
CNN = "samples/torch/cnn_step5.pt.trace.json"
KINETO = [CNN,
          pytest.param("samples/torch/resnet18_train_cuda.pt.trace.json.gz",
                       marks=pytest.mark.slow),
          "samples/torch/streams_graph_nccl_cuda.pt.trace.json.gz",
          pytest.param("samples/torch/gpt_compile_bf16_cuda.pt.trace.json.gz",
                       marks=pytest.mark.slow),
          "tests/data/megengine/infer_traced_chrome_timeline.json"]   # (B/E pairs)


def _convert(source: str, output: Path, *options: str) -> bytes:
    result = CliRunner().invoke(app, [str(ROOT / source), "-o", str(output), *options],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return output.read_bytes()


def _events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as stream:
        return json.load(stream)["traceEvents"]


@pytest.mark.parametrize("source", KINETO)
@pytest.mark.parametrize("suffix", [".pftrace", ".json"])
def test_spilled_conversion_is_byte_for_byte_the_in_memory_one(tmp_path, source, suffix):
    in_memory = _convert(source, tmp_path / f"memory{suffix}", "--no-spill-args")
    spilled = _convert(source, tmp_path / f"disk{suffix}", "--spill-args")
    assert spilled == in_memory
    assert sorted(os.listdir(tmp_path)) == [f"disk{suffix}", f"memory{suffix}"]  # no scratch


@pytest.mark.parametrize("options", [
    ["samples/torch/ddp_gloo_rank1.pt.trace.json.gz"],   # two ranks merged (columns copied)
    ["--window", "1ms:20ms", "--only", "nccl|gloo", "--device-counters"]])
def test_merged_and_trimmed_conversions_are_the_same_too(tmp_path, options):
    first = "samples/torch/ddp_gloo_rank0.pt.trace.json.gz"
    paths = [str(ROOT / o) if o.startswith("samples/") else o for o in options]
    in_memory = _convert(first, tmp_path / "memory.pftrace", *paths, "--no-spill-args")
    assert _convert(first, tmp_path / "disk.pftrace", *paths, "--spill-args") == in_memory


def test_args_read_back_from_disk_are_the_files_args(tmp_path):
    path = ROOT / CNN
    written = [e.get("args") for e in _events(path)
               if e.get("ph") == "X" and e.get("name") != "[memory]"]
    with texts_on_disk(tmp_path) as scratch:
        trace = read_chrome(Source(str(path)))
        on_disk = sum(os.path.getsize(scratch.path(name)) for name in os.listdir(scratch.folder))
        assert on_disk > 0   # (the texts did go to the scratch folder)
        assert [trace.slices.args[row] for row in range(len(trace.slices))] == written
    assert os.listdir(tmp_path) == []


def test_bad_input_leaves_no_scratch_and_one_line(tmp_path):
    broken = tmp_path / "in" / "broken.json"
    broken.parent.mkdir()
    broken.write_bytes((ROOT / "samples/chrome/broken.json").read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(app, [str(broken), "-o", str(out / "x.pftrace"),
                                      "--spill-args"])
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1 and "broken.json" in result.stderr
    assert os.listdir(out) == []


def test_default_spills_from_the_threshold(tmp_path):
    small = ROOT / CNN
    assert not spills((str(small),), None) and spills((str(small),), True)
    assert not spills(("-",), None)
    big = tmp_path / "big.json"
    with open(big, "wb") as out:   # a sparse file: the size is what counts
        out.truncate(SPILL_ABOVE)
    assert spills((str(big),), None) and not spills((str(big),), False)
    packed = tmp_path / "big.json.gz"
    with open(packed, "wb") as out:
        out.truncate(-(-SPILL_ABOVE // GZIP_GUESS))
    assert spills((str(packed),), None)


@pytest.mark.slow
@given(pieces=st.lists(st.binary(min_size=0, max_size=40), max_size=12),
       cuts=st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500)), max_size=20),
       span=st.integers(1, 64))
def test_store_gives_the_bytes_it_was_given(pieces, cuts, span):
    whole = b"".join(pieces)
    cuts = [(min(a, b) % (len(whole) + 1), max(a, b) % (len(whole) + 1)) for a, b in cuts]
    cuts = [(a, b) if a <= b else (b, a) for a, b in cuts]
    with scratch_folder() as scratch:
        store = SpilledTexts(scratch, "texts")
        for piece in pieces:
            store.add(piece)
        assert store.size == len(whole)
        assert [store.cut(a, b) for a, b in cuts] == [whole[a:b] for a, b in cuts]
        starts = np.array([a for a, _ in cuts], dtype=np.int64)
        ends = np.array([b for _, b in cuts], dtype=np.int64)
        old, spilled_texts.READ_SPAN = spilled_texts.READ_SPAN, span   # many reads, not one
        try:
            assert store.cut_many(starts, ends) == [whole[a:b] for a, b in cuts]
        finally:
            spilled_texts.READ_SPAN = old
            store.close()


@pytest.mark.slow
@given(first=st.lists(st.binary(max_size=30), max_size=5),
       later=st.lists(st.tuples(st.booleans(), st.binary(max_size=30)), max_size=8))
def test_a_copy_and_its_original_grow_apart(first, later):
    with scratch_folder() as scratch:
        original = SpilledTexts(scratch, "texts")
        for piece in first:
            original.add(piece)
        copy = original.copy()
        expected = {id(original): b"".join(first), id(copy): b"".join(first)}
        for to_copy, piece in later:   # (either may grow; the other does not see it)
            store = copy if to_copy else original
            store.add(piece)
            expected[id(store)] += piece
        for store in (original, copy):
            whole = expected[id(store)]
            assert store.size == len(whole)
            assert store.cut(0, len(whole)) == whole
            middle = len(whole) // 3
            assert store.cut_many(np.array([middle, 0]), np.array([len(whole), middle])) == \
                [whole[middle:], whole[:middle]]
            store.close()
