"""The tensors of a TensorFlow step timeline written with ``show_memory=True``.

TF's ``timeline.py`` writes each output of an op as a Trace Event object in the
``<device> Tensors`` process (category ``Tensor``): ``N`` when the op starts, ``O`` with a
snapshot (``{"tensor_description": <the TensorDescription proto as text>}``) when it ends,
``D`` at the tensor's last use. The object is named as the op's output: the node name for
output 0, ``name:k`` for output k. The Chrome reader reads no object events, so the flavour
turns them into instants of that category first (:func:`as_instant`), and this module
pairs them into tensors: one memory block each (the allocation's ``ptr`` and
``requested_bytes``, on the TF device, in the allocator's pool) and the size, shape and
dtype of the tensor's graph node.

The ``Allocators`` counters TF writes beside them are its running sum of the requested
bytes of those same tensors per allocator (created at the op's start, freed at the last
use): the blocks of an allocator add up to that series.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ....model import Trace, TrackKind
from ....model.entities import MemoryBlock
from .base import hashable

TENSOR_CATEGORY = "Tensor"   # TF's category of the object events
OBJECT_PHASES = {"N": "created", "O": "snapshot", "D": "deleted"}
OBJECT_PHASE_LETTERS = tuple(OBJECT_PHASES)   # (a tuple: a phase of any type compares)
OBJECT_KEY = "tf_object"      # the instant's arg that says which object event it was

_FIELD = re.compile(r"^\s*(\w+): (\S+)\s*$", re.MULTILINE)
_DIM = re.compile(r"\bsize: (-?\d+)")
_ALLOCATION_NUMBERS = ("allocated_bytes", "allocation_id")


def as_instant(e: dict) -> None:
    """Rewrite TF's object event ``e`` (``N``/``O``/``D`` of category ``Tensor``) as an
    instant the reader reads: the object id and which event it was in its args.

    >>> e = {"ph": "O", "cat": "Tensor", "name": "mul", "id": 3, "args": {"snapshot": {}}}
    >>> as_instant(e); e["ph"], e["s"], e["args"]
    ('i', 't', {'snapshot': {}, 'tf_object': 'snapshot', 'id': 3})
    """
    args = e.get("args")
    e["args"] = {**(args if isinstance(args, dict) else {}),
                 OBJECT_KEY: OBJECT_PHASES[e["ph"]], "id": e.get("id")}
    e["ph"], e["s"] = "i", "t"


@dataclass
class TensorDescription:
    """What a snapshot's ``tensor_description`` text states (None: not stated)."""

    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    requested_bytes: int | None = None
    allocator: str | None = None
    ptr: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)   # allocated_bytes, allocation_id...


def parse_description(text: Any) -> TensorDescription:
    """The fields of TF's ``str(TensorDescription)`` (protobuf text format, its quotes
    removed by ``timeline.py``); a shape of unknown rank is None.

    >>> d = parse_description("dtype: DT_FLOAT\\nshape {\\n  dim {\\n    size: 64\\n  }\\n"
    ...     "  dim {\\n    size: 8\\n  }\\n}\\nallocation_description {\\n  requested_bytes: 2048\\n"
    ...     "  allocated_bytes: 2048\\n  allocator_name: mklcpu\\n  allocation_id: 2\\n"
    ...     "  has_single_reference: true\\n  ptr: 140423821537600\\n}\\n")
    >>> d.dtype, d.shape, d.requested_bytes, d.allocator, d.ptr
    ('float32', (64, 8), 2048, 'mklcpu', 140423821537600)
    >>> d.extra
    {'allocated_bytes': 2048, 'allocation_id': 2, 'has_single_reference': True}
    >>> parse_description("dtype: DT_INT32\\nshape {\\n}\\n").shape, parse_description(7).dtype
    ((), None)
    """
    found = TensorDescription()
    if not isinstance(text, str):
        return found
    shape, _, allocation = text.partition("allocation_description {")
    fields = dict(_FIELD.findall(shape))
    found.dtype = tf_dtype(fields.get("dtype"))
    if "shape {" in shape and "unknown_rank: true" not in shape:
        found.shape = tuple(int(size) for size in _DIM.findall(shape))
    stated = dict(_FIELD.findall(allocation))
    found.requested_bytes = _integer(stated.get("requested_bytes"))
    found.allocator = stated.get("allocator_name")
    found.ptr = _integer(stated.get("ptr"))
    found.extra = {key: value for key in _ALLOCATION_NUMBERS
                   if (value := _integer(stated.get(key))) is not None}
    if stated.get("has_single_reference") == "true":
        found.extra["has_single_reference"] = True
    return found


def tf_dtype(name: str | None) -> str | None:
    """numpy's name of a TF ``DataType`` as its proto text writes it (``DT_FLOAT``), else
    the TF name in lower case (``DT_RESOURCE``: ``resource``).

    >>> tf_dtype("DT_FLOAT"), tf_dtype("DT_HALF"), tf_dtype("DT_RESOURCE"), tf_dtype(None)
    ('float32', 'float16', 'resource', None)
    """
    if not name:
        return None
    word = name.removeprefix("DT_").lower()
    return _NUMPY_NAMES.get(word, word)


_NUMPY_NAMES = {"float": "float32", "double": "float64", "half": "float16", "bool": "bool"}


def _integer(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


@dataclass
class Tensor:
    """One tensor object of the timeline: its name, TF device, life and description."""

    name: str
    device: str
    created_ns: int
    deleted_ns: int | None = None
    description: TensorDescription = field(default_factory=TensorDescription)


@dataclass
class TensorObjects:
    """The tensor objects of a trace, paired in file order, and what could not be."""

    tensors: list[Tensor] = field(default_factory=list)
    unpaired: int = 0              # a snapshot or deletion of no created object
    unpaired_example: str | None = None


def tensor_objects(trace: Trace) -> TensorObjects:
    """The tensors that the object instants of ``trace`` (:func:`as_instant`) describe.

    Paired per (process, object id) in file order, as TF writes them: a snapshot may carry
    an earlier time than its creation (``end_time - 1`` of an op of zero length), so
    time order cannot pair them. The device is the ``Tensors`` process's TF device."""
    found = TensorObjects()
    category = trace.strings.find(TENSOR_CATEGORY)
    if category is None:
        return found
    instants = trace.instants
    processes, tracks = trace.processes, trace.tracks
    names = trace.strings.strings
    open_objects: dict[tuple[int, Any], Tensor] = {}
    for row in (instants.numpy_view("category") == category).nonzero()[0].tolist():
        args = instants.args[row] or {}
        event = args.get(OBJECT_KEY)
        if event is None:
            continue
        process = tracks[instants.track[row]].process
        key = (process, args.get("id"))
        if not hashable(key):   # (a list where TF writes an integer id: no object of it)
            found.unpaired += 1
            found.unpaired_example = found.unpaired_example or f"{event} id {key[1]!r}"
            continue
        ts = int(instants.ts[row])
        name = names[instants.name[row]]
        tensor = open_objects.get(key)
        if event == "created":
            device = processes[process].name.removesuffix(" Tensors")
            open_objects[key] = tensor = Tensor(name, device, ts)
            found.tensors.append(tensor)
        elif tensor is None:
            found.unpaired += 1
            found.unpaired_example = found.unpaired_example or f"{event} {name!r}"
        elif event == "snapshot":
            snapshot = args.get("snapshot")
            tensor.description = parse_description(
                snapshot.get("tensor_description") if isinstance(snapshot, dict) else None)
        else:
            tensor.deleted_ns = ts
            del open_objects[key]
    return found


def add_tensor_blocks(trace: Trace, objects: TensorObjects,
                      tensor_nodes: dict[str, str], op_nodes: dict[str, str]) -> None:
    """One memory block per tensor whose snapshot gives its allocation's address and size,
    owned by its graph node (``tensor_nodes``: tensor name → node id) and its producer
    (``op_nodes``: node name → node id); the rest are counted."""
    without_block = 0
    example = None
    for tensor in objects.tensors:
        d = tensor.description
        if d.ptr is None or d.requested_bytes is None:
            without_block += 1
            example = example or tensor.name
            continue
        producer = producer_of(tensor.name)
        trace.add_memory_block(MemoryBlock(
            d.ptr, d.requested_bytes, tensor.created_ns, tensor.deleted_ns,
            device=tensor.device, pool=d.allocator or "", name=tensor.name,
            owner_op=op_nodes.get(producer), owner_name=producer,
            owner_tensor=tensor_nodes.get(tensor.name), category="tensor",
            shape=d.shape, dtype=d.dtype, args=dict(d.extra)))
    trace.diagnostics.add("tensorflow.tensor_without_allocation", count=without_block,
                          example=example)
    trace.diagnostics.add("tensorflow.tensor_object_unpaired", count=objects.unpaired,
                          example=objects.unpaired_example)


def producer_of(tensor: str) -> str:
    """The node that produces TF tensor ``tensor`` (``split:1`` is output 1 of ``split``).

    >>> producer_of("split:1"), producer_of("split"), producer_of("a:b")
    ('split', 'split', 'a:b')
    """
    node, colon, index = tensor.rpartition(":")
    return node if colon and index.isdecimal() else tensor


def describe_allocator_counters(trace: Trace) -> None:
    """Give the ``Allocators`` process's counters (one per allocator, as TF names it) their
    unit and meaning."""
    allocators = {p.id for p in trace.processes if p.name == "Allocators"}
    for track in trace.tracks:
        if track.process in allocators and track.kind is TrackKind.COUNTER:
            track.unit = "bytes"
            track.description = ("TF timeline's live bytes of the allocator: the requested "
                                 "bytes of this step's tensors, from their op's start to "
                                 "their last use")
