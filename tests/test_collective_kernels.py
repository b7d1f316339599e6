"""Collective kernels of every library are found and read alike (issue: the collectives'
own ``nccl``/``rccl`` prefix rule). Device kernel names from real traces and public
profiles, labelled by hand (tests/data/vocabulary/collective_kernels_labelled.json): a
prefix rule missed 9 of its 20 collectives (XLA's ``all-reduce``, MSCCL's, oneCCL's,
HCCL's, torch's symmetric-memory all-reduce); the activity vocabulary missed 1 (vLLM's
custom all-reduce, named by no library word: now one, with SGLang's) and takes none of
its 10 other kernels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traceconv.analysis.collectives import find_calls
from traceconv.model import ProcessKind, Trace, TrackKind

LABELLED = json.loads((Path(__file__).parent / "data" / "vocabulary"
                       / "collective_kernels_labelled.json").read_text())


def _found(name: str) -> list[tuple[str, str, str]]:
    """The collective calls ``find_calls`` finds in a GPU stream holding one kernel ``name``."""
    trace = Trace()
    stream = trace.add_track("stream 7", kind=TrackKind.STREAM, process=trace.add_process(
        "GPU 0", kind=ProcessKind.DEVICE))
    trace.add_slice(stream, 0, 1_000, name, "kernel")
    return list(find_calls(trace))


@pytest.mark.parametrize("name", sorted(LABELLED["names"]))
def test_a_kernel_is_a_collective_of_its_operation_as_labelled(name):
    label = LABELLED["names"][name]
    if not label["collective"] or name in LABELLED["known_misses"]:
        assert _found(name) == []
        return
    # a name stating no operation is matched across ranks by the kernel's own name
    operation = label["operation"] or name.partition("(")[0].lower()
    assert _found(name) == [("device", "", operation)]
