"""How XPlane protobufs and TensorRT trtexec exports are recognised from their first bytes,
without their readers (the registry's ``sniffer`` column names these; stdlib only).

>>> xplane(b"\\x0a\\xa6\\xa1\\x87\\x01\\x12\\x09/host:CPU\\x1a", None)
0.95
>>> xplane(b"\\x0a\\x05\\x08\\x02\\x12\\x0d/device:TPU:0", None), xplane(b"\\x0a\\x0512.3.4", None)
(0.95, 0.0)
>>> trtexec(b'[{"count": 6610}, {"name": "conv1", "timeMs": 31.3', None)
0.95
>>> trtexec(b'{"traceEvents": []}', None)
0.0
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .key_claims import KeyClaim

if TYPE_CHECKING:
    from ..io import Source

# XSpace.planes (field 1) whose XPlane opens with an optional id (field 1) and the plane's
# name (field 2): "/host:...", "/device:...", "Task Environment"
_XPLANE_HEAD = re.compile(rb"\A\x0a[\x80-\xff]{0,9}[\x00-\x7f](?:\x08[\x80-\xff]{0,9}[\x00-\x7f])?"
                          rb"\x12[\x00-\x7f](?:/host:|/device:|Task Environment)")


def xplane(head: bytes, source: Source | None) -> float:
    """Sure for an ``XSpace``: its first plane's name follows within a few bytes."""
    return 0.95 if _XPLANE_HEAD.match(head) else 0.0


TrtKind = Literal["graph", "profile", "times", "trex-build", "trex-profile", "trex-device"]
# What each trtexec export opens with (after whitespace): the keys trtexec writes first.
_TRT_HEADS: dict[TrtKind, re.Pattern[bytes]] = {
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
# The keys that tell each export wherever they come (a long first array or string, keys
# reordered): the registry's ``key_claims``, and the kind when the opening does not tell
TRTEXEC_KEYS = (
    KeyClaim("graph", all_of=("Layers", "Bindings")),
    KeyClaim("profile", all_of=("count", "timeMs", "averageMs", "percentage")),
    KeyClaim("times", all_of=("startComputeMs", "endComputeMs")),
    KeyClaim("trex-build", all_of=("model_options", "build_options")),
    KeyClaim("trex-profile", all_of=("performance_summary", "inference_options")),
    KeyClaim("trex-device", all_of=("Name", "ComputeCapability", "TotalMemory")),
)
# Names trtexec users and trex give the exports: <engine>.graph.json, <engine>.profile.json ...
TRT_SUFFIXES = (".build.metadata.json", ".profile.metadata.json", ".metadata.json",
                ".graph.json", ".layers.json", ".layer.json", ".layerinfo.json", ".profile.json",
                ".timing.json", ".times.json", ".json")


def trtexec_kind(head: bytes) -> TrtKind | None:
    """The trtexec export (or trex file) whose opening ``head`` shows, or None.

    >>> trtexec_kind(b'[ { "count" : 6610 } , { "name" : "conv1"'), trtexec_kind(b'{"Layers": []}')
    ('profile', 'graph')
    >>> trtexec_kind(b'{"performance_summary": {"Throughput": 2829.15'), trtexec_kind(b'[{"a": 1}]')
    ('trex-profile', None)
    """
    for kind, pattern in _TRT_HEADS.items():
        if pattern.match(head):
            return kind
    return None


def trtexec(head: bytes, source: Source | None) -> float:
    """Sure when the file opens the way one of trtexec's exports (or trex's files) does."""
    return 0.95 if trtexec_kind(head) else 0.0


def engine_name(path: str) -> str:
    """The engine a trtexec export belongs to: its name without the export's suffix.

    >>> engine_name("out/resnet.onnx.engine.profile.json.gz")
    'resnet.onnx.engine'
    >>> engine_name("resnet.onnx.engine.profile.metadata.json")
    'resnet.onnx.engine'
    """
    name = Path(path).name.removesuffix(".gz")
    for suffix in TRT_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name
