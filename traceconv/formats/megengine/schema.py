"""Pydantic models of MegEngine's profiler documents.

* the static-graph profile JSON (``trace.get_profile()``, ``load_network_and_run --profile``):
  :class:`StaticProfile` = ``{"graph_exec": GraphExec, "profiler": Profiler}``;
* ``StaticMemoryInfo.json`` (``--get-static-mem-info``): :class:`StaticMemoryInfo`.

The readers decode into the msgspec records at the end (``...Record``/``...Records``: the
same fields, no model object per record); a document the records refuse is read through
the models (:mod:`.document`).

Ids are strings everywhere (``"134"``, ``"chk135"``). MegEngine's JSON writer prints
infinities and NaN as the *strings* ``"inf"``/``"nan"``; :data:`Number` accepts both forms.
Object key order is C++ hash order, which ``profile_analyze`` relies on for ties, so every
mapping here keeps the document's order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

import msgspec
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _special_float(value: Any) -> Any:
    """``"inf"``, ``"-inf"``, ``"nan"`` (MegEngine's spelling of non-finite numbers) → float."""
    if isinstance(value, str) and value.lower() in ("inf", "-inf", "nan"):
        return float(value)
    return value


Number = Annotated[float, BeforeValidator(_special_float)]
"""A JSON number, or one of the strings ``"inf"``/``"-inf"``/``"nan"``."""


class _Model(BaseModel):
    # Unknown keys are kept (newer MegEngine versions add fields) but not required.
    model_config = ConfigDict(extra="allow", frozen=False)


# -- profiler --------------------------------------------------------------------------------


class Timing(_Model):
    """One ``{start, kern, end}`` triple in seconds; host ``kern`` is -1 when no kernel ran."""

    start: Number
    kern: Number
    end: Number


class Footprint(_Model):
    """``profiler.opr_footprint[opr_id]``: FLOPs, bytes and shapes of one executed opr."""

    computation: int | None = Field(None, description="arithmetic op count; null = unknown")
    memory: int | None = Field(None, description="bytes of device-value inputs + outputs")
    in_shapes: list[list[int]] = Field(default_factory=list)
    out_shapes: list[list[int]] = Field(default_factory=list)
    param: dict[str, Any] | list[Any] = Field(
        default_factory=dict, description="opr param; an array for indexing oprs")
    in_layouts: list[list[int] | None] | None = Field(
        None, description="strides of non-contiguous inputs; absent when all are contiguous")


class Profiler(_Model):
    """``profiler``: per-opr timing on each comp node (device) and dispatch thread (host)."""

    device: dict[str, dict[str, Timing]] = Field(
        default_factory=dict, description="opr id → comp node → timing")
    host: dict[str, dict[str, Timing]] = Field(
        default_factory=dict, description="opr id → thread name → timing")
    opr_footprint: dict[str, Footprint] = Field(default_factory=dict)
    opr_internal_pf: dict[str, Any] = Field(default_factory=dict)


# -- graph_exec ------------------------------------------------------------------------------


class Operator(_Model):
    """``graph_exec.operator[opr_id]``."""

    node_type: Literal["operator"] = "operator"
    id: str
    name: str
    type: str
    input: list[str] = Field(default_factory=list)
    output: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    waiting_spec: dict[str, dict[str, list[str]]] | None = Field(
        None, description="null for oprs that were not executed")


class Layout(_Model):
    shape: list[Number] = Field(default_factory=list)
    stride: list[Number] = Field(default_factory=list)
    dtype: str = ""


class MemPlan(_Model):
    mem_chunk_id: str
    layout: Layout
    offset_byte: int = 0


class InferTag(_Model):
    node_type: str = "static_infer_tag"
    infer_type: str = ""
    inferred_result: list[Number] | str | None = None
    deps: list[dict[str, str]] = Field(default_factory=list)


class Var(_Model):
    """``graph_exec.var[var_id]``; the owner opr is the operator listing it in ``output``."""

    node_type: Literal["var"] = "var"
    id: str
    name: str = ""
    mem_readonly_fwd_src: str | None = None
    force_update_src: str | None = None
    mem_plan: MemPlan | None = None
    comp_node: str = ""
    dev_ptr: int | None = None
    prev_dev_ptr: int | None = None
    prev_dev_ptr_end: int | None = None
    flag: list[str] = Field(default_factory=list)
    static_infer_tags: dict[str, InferTag] = Field(default_factory=dict)


class MemChunk(_Model):
    """``graph_exec.mem_chunk[chunk_id]``: one planned allocation, id ``"chk" + owner var``."""

    node_type: Literal["mem_chunk"] = "mem_chunk"
    id: str
    size: int
    owner_var: str
    dev_ptr: int | None = None


class GraphExec(_Model):
    """``graph_exec``: the compiled sequence and its operators, vars and memory chunks."""

    comp_seq: list[str]
    operator: dict[str, Operator]
    var: dict[str, Var] = Field(default_factory=dict)
    mem_chunk: dict[str, MemChunk] = Field(default_factory=dict)


class StaticProfile(_Model):
    """A MegEngine static-graph profile (``GraphProfiler.to_json_full``)."""

    graph_exec: GraphExec
    profiler: Profiler


# -- StaticMemoryInfo.json -------------------------------------------------------------------


class MemInfoOpr(_Model):
    id: str
    name: str


class MemInfoChunk(_Model):
    """A chunk of the static plan; every value is a string, times are opr-sequence indices."""

    id: str
    type: Literal["static_mem", "weight_mem"] | str
    time_begin: str
    time_end: str
    logic_addr_begin: str
    logic_addr_end: str
    overwrite_dest_id: str = "-1"


class StaticMemoryInfo(_Model):
    """``StaticMemoryInfo.json``: logical addresses and lifetimes of the static memory plan."""

    opr: dict[str, MemInfoOpr]
    chunk: dict[str, MemInfoChunk]



# -- the same, decoded straight into slotted records (10^5 records: no dict or model each) --
#
# Each record has its model's fields and defaults (tests/test_megengine_records.py) and types
# no looser than the model's: a value the model reads differently (an "inf" text, a float
# where an int goes, an int orjson reads as a float, an unknown key) is refused, and the
# document is read through the model instead (document.load_records).

JsonInt = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
"""An int64 (past 2^64 orjson reads a float, which the model rounds: a record refuses any
int past int64, and the model reads the document)."""


class _Record(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    # gc=False: decoded records hold no cycles, and 10^5 of them tracked slow every collection
    # (kw_only on a record whose optional field comes first, as in its model)
    pass


class TimingRecord(_Record):
    """:class:`Timing`'s fields (numbers only: the texts ``"inf"``... go through the model)."""

    start: float
    kern: float
    end: float


class FootprintRecord(_Record):
    """:class:`Footprint`'s fields."""

    computation: JsonInt | None = None
    memory: JsonInt | None = None
    in_shapes: list[list[JsonInt]] = []
    out_shapes: list[list[JsonInt]] = []
    param: dict[str, Any] | list[Any] = {}
    in_layouts: list[list[JsonInt] | None] | None = None


class ProfilerRecords(_Record):
    """:class:`Profiler`'s fields."""

    device: dict[str, dict[str, TimingRecord]] = {}
    host: dict[str, dict[str, TimingRecord]] = {}
    opr_footprint: dict[str, FootprintRecord] = {}
    opr_internal_pf: dict[str, Any] = {}


class OperatorRecord(_Record, kw_only=True):
    """:class:`Operator`'s fields."""

    node_type: Literal["operator"] = "operator"
    id: str
    name: str
    type: str
    input: list[str] = []
    output: list[str] = []
    extra: dict[str, Any] = {}
    waiting_spec: dict[str, dict[str, list[str]]] | None = None


class LayoutRecord(_Record):
    """:class:`Layout`'s fields."""

    shape: list[float] = []
    stride: list[float] = []
    dtype: str = ""


class MemPlanRecord(_Record):
    """:class:`MemPlan`'s fields."""

    mem_chunk_id: str
    layout: LayoutRecord
    offset_byte: JsonInt = 0


class InferTagRecord(_Record):
    """:class:`InferTag`'s fields."""

    node_type: str = "static_infer_tag"
    infer_type: str = ""
    inferred_result: list[float] | str | None = None
    deps: list[dict[str, str]] = []


class VarRecord(_Record, kw_only=True):
    """:class:`Var`'s fields."""

    node_type: Literal["var"] = "var"
    id: str
    name: str = ""
    mem_readonly_fwd_src: str | None = None
    force_update_src: str | None = None
    mem_plan: MemPlanRecord | None = None
    comp_node: str = ""
    dev_ptr: JsonInt | None = None
    prev_dev_ptr: JsonInt | None = None
    prev_dev_ptr_end: JsonInt | None = None
    flag: list[str] = []
    static_infer_tags: dict[str, InferTagRecord] = {}


class MemChunkRecord(_Record, kw_only=True):
    """:class:`MemChunk`'s fields."""

    node_type: Literal["mem_chunk"] = "mem_chunk"
    id: str
    size: JsonInt
    owner_var: str
    dev_ptr: JsonInt | None = None


class DocumentRecords(_Record, gc=True):
    """A whole document's records."""

    def untyped_values(self) -> Iterable[object]:
        """The values decoded without a type (``dict[str, Any]`` fields...)."""
        return ()


class GraphExecRecords(DocumentRecords):
    """:class:`GraphExec`'s fields (``graph.json``)."""

    comp_seq: list[str]
    operator: dict[str, OperatorRecord]
    var: dict[str, VarRecord] = {}
    mem_chunk: dict[str, MemChunkRecord] = {}

    def untyped_values(self) -> Iterable[object]:
        """Each operator's ``extra``."""
        return (opr.extra for opr in self.operator.values())


class StaticProfileRecords(DocumentRecords):
    """:class:`StaticProfile`'s fields.

    >>> doc = msgspec.json.decode(b'{"graph_exec": {"comp_seq": ["1"], "operator": {}},'
    ...                           b' "profiler": {"host": {"1": {"main": '
    ...                           b'{"start": 0.5, "kern": -1, "end": 0.75}}}}}',
    ...                           type=StaticProfileRecords)
    >>> doc.profiler.host["1"]["main"].end
    0.75
    """

    graph_exec: GraphExecRecords
    profiler: ProfilerRecords

    def untyped_values(self) -> Iterable[object]:
        """``extra`` of each operator, ``param`` of each footprint, ``opr_internal_pf``."""
        yield from self.graph_exec.untyped_values()
        yield from (footprint.param for footprint in self.profiler.opr_footprint.values())
        yield self.profiler.opr_internal_pf


class MemInfoOprRecord(_Record):
    """:class:`MemInfoOpr`'s fields."""

    id: str
    name: str


class MemInfoChunkRecord(_Record):
    """:class:`MemInfoChunk`'s fields (any text for ``type``: the schema names the known)."""

    id: str
    type: str
    time_begin: str
    time_end: str
    logic_addr_begin: str
    logic_addr_end: str
    overwrite_dest_id: str = "-1"


class StaticMemoryInfoRecords(DocumentRecords):
    """:class:`StaticMemoryInfo` as records.

    >>> doc = msgspec.json.decode(b'{"opr": {"0": {"id": "0", "name": "mm"}}, "chunk": {}}',
    ...                           type=StaticMemoryInfoRecords)
    >>> doc.opr["0"].name
    'mm'
    """

    opr: dict[str, MemInfoOprRecord]
    chunk: dict[str, MemInfoChunkRecord]
