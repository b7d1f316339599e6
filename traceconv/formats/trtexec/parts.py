"""A trtexec export validated: its kind, engine and document (see :mod:`.heads`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import msgspec
from pydantic import BaseModel, ValidationError

from ...errors import InputError, json_path
from ...io import Source
from ..export_sniffing import TRTEXEC_KEYS, engine_name
from ..export_sniffing import TrtKind as Kind
from ..export_sniffing import trtexec_kind as kind_of
from ..key_claims import claimed_kind
from .schema import (
    TIMES_DECODER,
    InferenceRecord,
    LayerInformation,
    LayerProfile,
    TrexDevices,
    TrexMetadata,
)

_MODELS: dict[str, type[BaseModel]] = {
    "graph": LayerInformation, "profile": LayerProfile, "trex-build": TrexMetadata,
    "trex-profile": TrexMetadata, "trex-device": TrexDevices}

@dataclass(frozen=True)
class Part:
    """One export of one engine, validated."""

    kind: Kind
    engine: str
    file: str
    document: BaseModel | list[InferenceRecord]


def load_part(source: Source) -> Part:
    """Validate ``source`` as the export its opening (or, past a long first value, its
    keys) names; a located error otherwise."""
    kind = kind_of(source.head) or cast(Kind | None, claimed_kind(source, TRTEXEC_KEYS))
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
