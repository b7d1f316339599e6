"""Which trtexec export a file is, from its first bytes, and the engine it belongs to.

Kept apart from :mod:`.parts` so that sniffing imports neither pydantic nor msgspec.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

Kind = Literal["graph", "profile", "times", "trex-build", "trex-profile", "trex-device"]
# What each export opens with (after whitespace): the keys trtexec writes first.
_HEADS: dict[Kind, re.Pattern[bytes]] = {
    "graph": re.compile(rb'\A\s*\{\s*"Layers"\s*:\s*\['),
    "profile": re.compile(rb'\A\s*\[\s*\{\s*"count"\s*:\s*\d+\s*\}'),
    "times": re.compile(rb'\A\s*\[\s*\{\s*"(startEnqMs|startInMs|startH2dMs)"\s*:'),
    # trt-engine-explorer's process_engine.py writes these beside the exports (not trtexec):
    # the build options, the timing summary of trtexec's log, the device's properties
    "trex-build": re.compile(rb'\A\s*\{\s*"(model_options|build_options)"\s*:'),
    "trex-profile": re.compile(rb'\A\s*\{\s*"(performance_summary|inference_options)"\s*:'),
    "trex-device": re.compile(rb'\A\s*\[\s*\{\s*"Name"\s*:\s*"[^"]*"\s*,\s*'
                              rb'"ComputeCapability"\s*:'),
}
# Names trtexec users and trex give the exports: <engine>.graph.json, <engine>.profile.json ...
SUFFIXES = (".build.metadata.json", ".profile.metadata.json", ".metadata.json", ".graph.json",
            ".layers.json", ".layer.json", ".layerinfo.json", ".profile.json", ".timing.json",
            ".times.json", ".json")


def kind_of(head: bytes) -> Kind | None:
    """The export whose opening ``head`` shows, or None.

    >>> kind_of(b'[ { "count" : 6610 } , { "name" : "conv1"'), kind_of(b'{"Layers": ["a"]}')
    ('profile', 'graph')
    >>> kind_of(b'{"performance_summary": {"Throughput": 2829.15'), kind_of(b'[{"name": "x"}]')
    ('trex-profile', None)
    """
    for kind, pattern in _HEADS.items():
        if pattern.match(head):
            return kind
    return None


def engine_name(path: str) -> str:
    """The engine a file belongs to: its name without the export's suffix (and ``.gz``).

    >>> engine_name("out/resnet.onnx.engine.profile.json.gz")
    'resnet.onnx.engine'
    >>> engine_name("resnet.onnx.engine.profile.metadata.json")
    'resnet.onnx.engine'
    """
    name = Path(path).name.removesuffix(".gz")
    for suffix in SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name
