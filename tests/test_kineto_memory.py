"""Kineto ``[memory]`` events → memory blocks, checked against a pairing written here from
the raw JSON: per (device type, device id, address), in time order, an alloc opens a block
and the next free closes it."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest

import traceconv
from tests.conftest import CUDA_STREAMS as STREAMS
from tests.conftest import CUDA_TRACES as TRACES
from tests.conftest import DATA

CUDA = DATA / "torch" / "cuda_h100"


def reference_pairing(path: Path) -> tuple[int, int, int]:
    """(paired blocks, frees with no earlier alloc, allocs never freed) from the raw events."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    per_address = defaultdict(list)
    for e in events:
        if e.get("name") == "[memory]":
            a = e["args"]
            per_address[(a["Device Type"], a["Device Id"], a["Addr"])].append(
                (e["ts"], a["Bytes"]))
    paired = orphan_frees = open_allocs = 0
    for records in per_address.values():
        is_open = False
        for _ts, size in sorted(records, key=lambda r: r[0]):
            if size > 0:
                open_allocs += is_open
                is_open = True
            elif is_open:
                paired += 1
                is_open = False
            else:
                orphan_frees += 1
        open_allocs += is_open
    return paired, orphan_frees, open_allocs


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name.split(".")[0])
def test_blocks_pair_like_the_allocator(path):
    paired, orphan_frees, open_allocs = reference_pairing(path)
    trace = traceconv.load(path)
    blocks = trace.memory
    assert sum(b.alloc_ns is not None and b.free_ns is not None for b in blocks) == paired
    assert sum(b.alloc_ns is None for b in blocks) == orphan_frees
    assert sum(b.free_ns is None for b in blocks) == open_allocs
    assert len(blocks) == paired + orphan_frees + open_allocs
    assert all(b.free_ns >= b.alloc_ns for b in blocks
               if b.alloc_ns is not None and b.free_ns is not None)
    assert trace.diagnostics.count("kineto.free_without_alloc") == orphan_frees


def test_issue_numbers():
    """The counts the issue states: 603 pairs on the compiled GPT, 639 blocks on ResNet-18."""
    assert reference_pairing(DATA / "torch" / "gpt_compile_bf16_cuda.pt.trace.json.gz") == (603, 0, 0)
    gpt = traceconv.load(DATA / "torch" / "gpt_compile_bf16_cuda.pt.trace.json.gz")
    assert len(gpt.memory) == 603 and all(b.alloc_ns and b.free_ns for b in gpt.memory)
    assert len(traceconv.load(DATA / "torch" / "resnet18_train_cuda.pt.trace.json.gz").memory) == 639


def test_owner_is_the_op_around_the_alloc_on_its_thread():
    path = STREAMS
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    expected = []
    for e in sorted((e for e in events if e.get("name") == "[memory]"
                     and e["args"]["Bytes"] > 0), key=lambda e: e["ts"]):
        around = [o for o in ops if o["tid"] == e["tid"] and o["pid"] == e["pid"]
                  and o["ts"] <= e["ts"] <= o["ts"] + o["dur"]]
        expected.append(min(around, key=lambda o: o["dur"])["name"] if around else None)
    blocks = sorted((b for b in traceconv.load(path).memory if b.alloc_ns is not None),
                    key=lambda b: b.alloc_ns)
    assert [b.owner_name for b in blocks] == expected
