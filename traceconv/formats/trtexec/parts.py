"""Which trtexec export a file is, the engine it belongs to, and its validated document."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec
from pydantic import BaseModel, ValidationError

from ...errors import InputError, json_path
from ...io import Source
from .schema import (
    TIMES_DECODER,
    InferenceRecord,
    LayerInformation,
    LayerProfile,
    TrexDevices,
    TrexMetadata,
)

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
_MODELS: dict[str, type[BaseModel]] = {
    "graph": LayerInformation, "profile": LayerProfile, "trex-build": TrexMetadata,
    "trex-profile": TrexMetadata, "trex-device": TrexDevices}
# Names trtexec users and trex give the exports: <engine>.graph.json, <engine>.profile.json ...
SUFFIXES = (".build.metadata.json", ".profile.metadata.json", ".metadata.json", ".graph.json", ".layers.json", ".layer.json", ".layerinfo.json", ".profile.json",
            ".timing.json", ".times.json", ".json")


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


@dataclass(frozen=True)
class Part:
    """One export of one engine, validated."""

    kind: Kind
    engine: str
    file: str
    document: BaseModel | list[InferenceRecord]


def load_part(source: Source) -> Part:
    """Validate ``source`` as the export its opening names; a located error otherwise."""
    kind = kind_of(source.head)
    if kind is None:
        raise InputError("not a trtexec export (expected --exportLayerInfo, --exportProfile "
                         "or --exportTimes JSON, or trex's metadata)", file=source.name)
    if kind == "times":   # long: msgspec, with the fields of schema.InferenceTimes
        try:
            return Part(kind, engine_name(source.name), source.name,
                        TIMES_DECODER.decode(source.read_bytes()))
        except msgspec.DecodeError as exc:   # "... - at `$[3].startComputeMs`"
            message, _, where = str(exc).partition(" - at ")
            raise InputError(f"trtexec times export: {message}", file=source.name,
                             location=where.strip("`") or None) from None
    try:
        document = _MODELS[kind].model_validate_json(source.read_bytes())
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"trtexec {kind} export: {error['msg']}", file=source.name,
                         location=json_path(error["loc"])) from None
    return Part(kind, engine_name(source.name), source.name, document)
