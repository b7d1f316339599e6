"""The three JSON files ``trtexec`` exports, as pydantic models (field names as written).

- ``--exportLayerInfo=F`` (:class:`LayerInformation`): the engine's layers with their input
  and output tensors (dimensions, format/datatype, location), tactic and the layer's own
  parameters (kernel, strides, weights ...); ``--profilingVerbosity=layer_names_only``
  writes bare layer names instead.
- ``--exportProfile=F`` (:class:`ProfileRecord` list): ``{"count": N}`` (the inferences the
  profile covers) then one row per layer: total ``timeMs``, ``averageMs``, ``medianMs``
  and ``percentage`` of the engine's time.
- ``--exportTimes=F`` (:class:`InferenceTimes` list): per inference, milliseconds since
  trtexec started: enqueue, host-to-device copy, compute, device-to-host copy.
  TensorRT 7 wrote ``startInMs``/``startOutMs`` where later versions write ``H2d``/``D2h``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from pydantic import BaseModel, ConfigDict, Field, RootModel


class TensorInfo(BaseModel):
    """One input or output of a layer."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    Name: str
    Location: str | None = None
    Dimensions: list[int] = []
    Format: str | None = Field(None, alias="Format/Datatype")


class Layer(BaseModel):
    """One engine layer (``--profilingVerbosity=detailed``); other keys are its parameters."""

    model_config = ConfigDict(extra="allow")

    Name: str
    LayerType: str = ""
    Inputs: list[TensorInfo] = []
    Outputs: list[TensorInfo] = []
    ParameterType: str | None = None
    TacticName: str | None = None
    TacticValue: str | None = None
    Origin: str | None = None


class LayerInformation(BaseModel):
    """``--exportLayerInfo``: the engine graph."""

    model_config = ConfigDict(extra="allow")

    Layers: list[Layer | str]
    Bindings: list[str] = []


class ProfileCount(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int


class LayerTime(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    timeMs: float
    averageMs: float
    medianMs: float | None = None
    percentage: float | None = None


class LayerProfile(RootModel[list[ProfileCount | LayerTime]]):
    """``--exportProfile``: the inference count, then one row per layer."""


class InferenceTimes(BaseModel):
    """One inference of ``--exportTimes`` (ms since trtexec started). The reader decodes the
    (long) list with :class:`InferenceRecord`, the same fields as a msgspec struct."""

    model_config = ConfigDict(extra="allow")

    startEnqMs: float | None = None
    endEnqMs: float | None = None
    startH2dMs: float | None = None
    endH2dMs: float | None = None
    startComputeMs: float
    endComputeMs: float
    startD2hMs: float | None = None
    endD2hMs: float | None = None
    startInMs: float | None = None    # TensorRT 7's name of the H2D copy
    endInMs: float | None = None
    startOutMs: float | None = None   # TensorRT 7's name of the D2H copy
    endOutMs: float | None = None
    latencyMs: float | None = None


class Timings(RootModel[list[InferenceTimes]]):
    """``--exportTimes``: one record per inference."""


class TrexMetadata(RootModel[dict[str, dict[str, Any]]]):
    """What trt-engine-explorer's ``process_engine.py`` writes beside the exports from
    trtexec's log (not trtexec itself): ``<engine>.build.metadata.json`` (``model_options``,
    ``build_options``) and ``<engine>.profile.metadata.json`` (``performance_summary``:
    throughput and latency percentiles, ``inference_options``, ...)."""


class TrexDevice(BaseModel):
    """One device of ``<engine>.metadata.json`` (a device query; CUDA attribute names)."""

    model_config = ConfigDict(extra="allow")

    Name: str
    ComputeCapability: list[int] = []
    TotalMemory: int | None = None


class TrexDevices(RootModel[list[TrexDevice]]):
    """``<engine>.metadata.json``: the devices the engine was built and profiled on."""


class InferenceRecord(msgspec.Struct):
    """:class:`InferenceTimes` for the fast path: tens of thousands of records per file.

    >>> TIMES_DECODER.decode(b'[{"startComputeMs": 4.17, "endComputeMs": 4.66}]')[0].endComputeMs
    4.66
    """

    startComputeMs: float
    endComputeMs: float
    startEnqMs: float | None = None
    endEnqMs: float | None = None
    startH2dMs: float | None = None
    endH2dMs: float | None = None
    startD2hMs: float | None = None
    endD2hMs: float | None = None
    startInMs: float | None = None
    endInMs: float | None = None
    startOutMs: float | None = None
    endOutMs: float | None = None
    latencyMs: float | None = None


TIMES_DECODER = msgspec.json.Decoder(list[InferenceRecord])
