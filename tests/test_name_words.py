"""The vocabularies' name patterns match whole words, and real names get the roles they read as.

``tests/data/vocabulary/names_roles.json`` holds every distinct slice and statistic name of
``tests/data``, ``samples`` and the shared corpus that any vocabulary pattern matched before
or after word edges became part of the rule (Python frames left out: no name rule applies to
them), each labelled by hand with the roles its name reads as, and names written by hand
(the hostile round's and libc's). ``known_misses`` are names whose label the rule still
disagrees with, and why.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from traceconv.model.activity import _NAMED
from traceconv.vocabularies.common import DEVICE_STREAM_WORDS
from traceconv.vocabularies.generic import GENERIC_VOCABULARY

LABELLED = json.loads((DATA / "vocabulary" / "names_roles.json").read_text())
NAMES = {**LABELLED["harvested"], **LABELLED["by_hand"]}
CHECKED = {name: roles for name, roles in NAMES.items() if name not in LABELLED["known_misses"]}


def _roles(names: list[str]) -> list[list[str]]:
    """The rules every vocabulary together matches, and ``device_copy`` when the device
    stream guess reads the name as a device's copy or memset."""
    bits = GENERIC_VOCABULARY.name_bits_of(names).tolist()
    return [sorted([rule for i, rule in enumerate(_NAMED) if b >> i & 1]
                   + (["device_copy"] if DEVICE_STREAM_WORDS.copy(name) else []))
            for name, b in zip(names, bits, strict=True)]


def test_every_labelled_name_matches_the_roles_it_reads_as() -> None:
    names = sorted(CHECKED)
    wrong = {name: (got, CHECKED[name]) for name, got in zip(names, _roles(names), strict=True)
             if got != CHECKED[name]}
    assert not wrong, f"{len(wrong)} names (got, labelled): {dict(list(wrong.items())[:10])}"


def test_one_name_at_a_time_matches_as_the_names_together() -> None:
    """(name_bits_of scans the names joined by line breaks; name_bits one name)"""
    names = sorted(NAMES)
    together = GENERIC_VOCABULARY.name_bits_of(names).tolist()
    assert together == [GENERIC_VOCABULARY.name_bits(name) for name in names]


@pytest.mark.parametrize("name", ["small_reduce_kernel_launcher", "install_gather_hooks",
                                  "void at::native::small_reduce_kernel<float>(float*)"])
def test_a_collective_word_inside_another_word_is_no_collective(name: str) -> None:
    assert NAMES[name] == [] and not GENERIC_VOCABULARY.named(name, "communication")


def test_a_device_copy_is_named_as_only_a_device_names_one() -> None:
    """The evident-stream guess's copies and memsets: Kineto's, CUPTI's and rocprof's
    device records, never libc's or a program's copy functions."""
    device = {name for name, roles in CHECKED.items() if "device_copy" in roles}
    assert {"Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "[CUDA memcpy HtoD]",
            "CopyHostToDevice", "MEMORY_COPY_HOST_TO_DEVICE"} <= device
    assert not device & {"__memcpy_avx_unaligned_erms", "__memset_avx2_unaligned", "memcpy",
                         "memcpy_helper"}
