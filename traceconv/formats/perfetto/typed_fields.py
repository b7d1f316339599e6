"""TrackEvent's typed fields as event args, keyed as trace_processor keys them.

Besides debug annotations a TrackEvent carries typed fields: Chrome's
``chrome_histogram_sample``, ``chrome_mojo_event_info``, ``task_execution``..., a source
location (inline, or interned and named by ``source_location_iid``), and extensions (field
1000 and up) that the trace describes in an ``extension_descriptor`` packet (Chrome writes
one for its ``ChromeTrackEvent``). trace_processor makes them args
(``importers/proto/track_event_parser.cc``): a few by hand (``source.*``,
``task.posted_from.*``, ``chrome_histogram_sample.name``, the log message,
``correlation_id``), then by reflection the fields it allows (:data:`REFLECTED`) and every
extension it has a descriptor for (``util/proto_to_args_parser.cc``): one key per leaf,
field names joined with dots; an enum as its name, bytes as base64, a message with no
field as null. :class:`Decoder` does the same from the descriptors of the ``perfetto``
package and those the trace brings, but for a repeated field, which is one arg holding a
list (trace_processor's rows ``name[0]``, ``name[1]``... are its items; the model's
debug annotations hold their arrays so too, and traceconv's writer can name no arg
``name[0]``: trace_processor would show ``name_0_``).

The reader's fast path reads none of this. It keeps, per event with fields it does not
read, those fields' bytes (:class:`Collected`: each distinct fragment once) and at the end
(an extension descriptor may come last, as Chrome writes it) decodes each distinct
fragment once per incremental-state generation and adds the args in front of the event's
debug annotations (:func:`merge`). A debug annotation's typed message (``proto_value``)
is decoded the same way, at the same time (:meth:`Decoder.resolved`). A field that does
not become an arg (an extension that no descriptor describes, a field these protos do not
know, a callstack, an iid that was never interned, a proto value of an unknown type) is
counted: ``perfetto.typed_field_not_read``.

>>> from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
>>> event = TrackEvent()
>>> event.chrome_histogram_sample.sample = -3
>>> event.source_location.file_name = "app.py"
>>> Decoder(Schema.of([]), Interned(), bytes.decode, None).event(event.SerializeToString(), 0)
({'chrome_histogram_sample.sample': -3, 'source_location.file_name': 'app.py'}, [])
"""

from __future__ import annotations

import base64
import struct
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
from google.protobuf.descriptor_pb2 import (
    DescriptorProto,
    FieldDescriptorProto,
    FileDescriptorProto,
)
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import ExtensionDescriptor, TrackEvent

from ...model.typed_arrays import extend_typed
from ..protowire.columns import FieldRows, in_message_order
from ..protowire.scalar import FIXED32, FIXED64, LENGTH, VARINT, WireError, read_varint
from .annotation_values import ProtoValue
from .arg_store import OBJECT
from .wire import tag, varint

if TYPE_CHECKING:
    from .reader import _Events

TRACK_EVENT = ".perfetto.protos.TrackEvent"
DEBUG_ANNOTATION = ".perfetto.protos.DebugAnnotation"
# TrackEvent fields the reader's fast path reads (type, names, categories, track, counter
# values, flows, debug annotations, the legacy event): never part of a fragment.
READ = np.array([3, 4, 6, 9, 10, 11, 12, 22, 23, 30, 31, 36, 42, 44, 45, 46, 47, 48])
# The fields trace_processor reflects into args (kReflectFields); extensions always are.
REFLECTED = frozenset({24, 25, 26, 27, 28, 29, 32, 33, 34, 35, 38, 39, 40, 41, 43, 49, 50})
# Read by hand (below) as trace_processor reads them; of these only source_location_iid and
# chrome_histogram_sample are reflected as well.
TASK_EXECUTION, LOG_MESSAGE, SOURCE_LOCATION_IID, HISTOGRAM = 5, 21, 34, 28
CORRELATION_ID, CORRELATION_ID_STR, CORRELATION_ID_STR_IID = 52, 53, 54
BY_HAND = frozenset({TASK_EXECUTION, LOG_MESSAGE, CORRELATION_ID, CORRELATION_ID_STR,
                     CORRELATION_ID_STR_IID})
# FieldDescriptorProto types.
_T = FieldDescriptorProto
SIGNED32 = frozenset({_T.TYPE_INT32, _T.TYPE_SFIXED32, _T.TYPE_ENUM})
LENGTH_TYPES = frozenset({_T.TYPE_STRING, _T.TYPE_BYTES, _T.TYPE_MESSAGE, _T.TYPE_GROUP})
_WIRE = {_T.TYPE_DOUBLE: FIXED64, _T.TYPE_FIXED64: FIXED64, _T.TYPE_SFIXED64: FIXED64,
         _T.TYPE_FLOAT: FIXED32, _T.TYPE_FIXED32: FIXED32, _T.TYPE_SFIXED32: FIXED32}
_DOUBLE, _FLOAT = struct.Struct("<d"), struct.Struct("<f")
_SANITIZED = str.maketrans(".[]", "___")   # (trace_processor's, in annotation names)
# LogMessage fields (its priorities are numbered as Android's, which trace_processor stores).
LOG_LOCATION_IID, LOG_BODY_IID, LOG_PRIO = 1, 2, 3


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message (or an extension of it), from its descriptor."""

    name: str
    type: int
    type_name: str
    repeated: bool
    extension: bool


class Schema:
    """Messages (full name → field number → :class:`Field`) and enums (full name → number
    → name) of some file descriptors, over a shared base (the ``perfetto`` package's)."""

    def __init__(self, base: Schema | None = None) -> None:
        self._base = base
        self.messages: dict[str, dict[int, Field]] = {}
        self.enums: dict[str, dict[int, str]] = {}

    @staticmethod
    def of(files: Iterable[FileDescriptorProto]) -> Schema:
        """The package's schema with ``files`` (a trace's extension descriptors) over it.

        >>> file = FileDescriptorProto(package="demo")
        >>> _ = file.extension.add(name="mark", number=1001, type=_T.TYPE_UINT32,
        ...                        extendee=TRACK_EVENT)
        >>> Schema.of([file]).fields(TRACK_EVENT)[1001]
        Field(name='mark', type=13, type_name='', repeated=False, extension=True)
        >>> 1001 in Schema.of([]).fields(TRACK_EVENT)   # (the package's stays as it was)
        False
        """
        schema = Schema(_package_schema())
        schema.add(files)
        return schema

    def fields(self, message: str) -> dict[int, Field] | None:
        found = self.messages.get(message)
        if found is None and self._base is not None:
            return self._base.fields(message)
        return found

    def enum(self, name: str) -> dict[int, str] | None:
        found = self.enums.get(name)
        if found is None and self._base is not None:
            return self._base.enum(name)
        return found

    def add(self, files: Iterable[FileDescriptorProto]) -> None:
        """Add the messages and enums of ``files``, then their extensions (so that a
        message a file defines again cannot drop one)."""
        files = list(files)
        extensions: list[FieldDescriptorProto] = []
        for file in files:
            scope = f".{file.package}" if file.package else ""
            for message in file.message_type:
                self._message(scope, message, extensions)
            for enum in file.enum_type:
                self.enums[f"{scope}.{enum.name}"] = {v.number: v.name for v in enum.value}
            extensions.extend(file.extension)
        for extension in extensions:
            own = self.messages.get(extension.extendee)
            if own is None:   # (copied from the base: the base is shared by every read)
                own = self.messages[extension.extendee] = dict(
                    self.fields(extension.extendee) or {})
            own[extension.number] = _field(extension, extension=True)

    def _message(self, scope: str, message: DescriptorProto,
                 extensions: list[FieldDescriptorProto]) -> None:
        name = f"{scope}.{message.name}"
        self.messages[name] = {f.number: _field(f) for f in message.field}
        for nested in message.nested_type:
            self._message(name, nested, extensions)
        for enum in message.enum_type:
            self.enums[f"{name}.{enum.name}"] = {v.number: v.name for v in enum.value}
        extensions.extend(message.extension)


def _field(proto: FieldDescriptorProto, extension: bool = False) -> Field:
    return Field(proto.name, proto.type, proto.type_name,
                 proto.label == FieldDescriptorProto.LABEL_REPEATED, extension)


@cache
def _package_schema() -> Schema:
    """The messages of the ``perfetto`` package's ``perfetto_trace.proto`` (one file)."""
    schema = Schema()
    schema.add([FileDescriptorProto.FromString(TrackEvent.DESCRIPTOR.file.serialized_pb)])
    return schema


def extension_files(payload: bytes) -> list[FileDescriptorProto]:
    """The file descriptors of an ``extension_descriptor`` packet's payload.

    >>> descriptor = ExtensionDescriptor()
    >>> descriptor.extension_set.file.add().name = "chrome_track_event.proto"
    >>> [file.name for file in extension_files(descriptor.SerializeToString())]
    ['chrome_track_event.proto']
    """
    return list(ExtensionDescriptor.FromString(payload).extension_set.file)


class Interned:
    """The interned data typed fields name by iid, per (generation, iid): source
    locations, histogram names, log message bodies, correlation ids, and the native
    symbols (mapping, relative pc) of Chrome's mojo methods."""

    def __init__(self) -> None:
        # (file name, function name, line number or None)
        self.source_locations: dict[tuple[int, int], tuple[str, str, int | None]] = {}
        self.histogram_names: dict[tuple[int, int], str] = {}
        self.log_bodies: dict[tuple[int, int], str] = {}
        self.correlation_ids: dict[tuple[int, int], str] = {}
        self.symbols: dict[tuple[int, int], tuple[int, int]] = {}   # (mapping iid, rel pc)
        self.mappings: dict[tuple[int, int], Any] = {}   # Mapping messages
        self.build_ids: dict[tuple[int, int], str] = {}
        self.mapping_paths: dict[tuple[int, int], str] = {}

    def add(self, generation: int, interned: Any, text: Callable[[Any], str]) -> None:
        """Keep what ``interned`` (an ``InternedData``) holds of these tables."""
        for location in interned.source_locations:
            self.source_locations[generation, location.iid] = (
                text(location.file_name), text(location.function_name),
                location.line_number if location.HasField("line_number") else None)
        for name in interned.histogram_names:
            self.histogram_names[generation, name.iid] = text(name.name)
        for body in interned.log_message_body:
            self.log_bodies[generation, body.iid] = text(body.body)
        for found in interned.correlation_id_str:
            self.correlation_ids[generation, found.iid] = text(found.str)
        for symbol in interned.unsymbolized_source_locations:
            self.symbols[generation, symbol.iid] = (symbol.mapping_id, symbol.rel_pc)
        for mapping in interned.mappings:
            self.mappings[generation, mapping.iid] = mapping
        for found in interned.build_ids:
            self.build_ids[generation, found.iid] = text(found.str)
        for found in interned.mapping_paths:
            self.mapping_paths[generation, found.iid] = text(found.str)

    def mapping(self, generation: int, iid: int) -> tuple[Any, ...] | None:
        """What tells mapping ``iid`` apart from others, as trace_processor tells them
        apart: its build id, path (its interned parts) and addresses."""
        found = self.mappings.get((generation, iid))
        if found is None:
            return None
        path = "/".join(self.mapping_paths.get((generation, part), "")
                        for part in found.path_string_ids)
        return (self.build_ids.get((generation, found.build_id), ""), path, found.start,
                found.end, found.start_offset, found.exact_offset, found.load_bias)


Annotation = Callable[[bytes, int], tuple[str | None, Any]]
# What damaged bytes raise (nested past the recursion limit: RecursionError).
UNDECODABLE = (WireError, ValueError, RecursionError)


class Decoder:
    """The args of a TrackEvent's typed fields (:meth:`event`), as trace_processor makes
    them; ``text`` makes strings text (the reader's counts what is not UTF-8),
    ``annotation`` decodes a debug annotation nested in a typed field (bytes,
    generation → name, value)."""

    def __init__(self, schema: Schema, interned: Interned, text: Callable[[Any], str],
                 annotation: Annotation | None) -> None:
        self.schema = schema
        self.interned = interned
        self.text = text
        self.annotation = annotation
        self.mapping_ids: dict[tuple[Any, ...], int] = {}   # numbered in order of first use
        # the event's generation and args, for the overrides' lookups and keys; whether
        # messages become dicts (a proto value's) rather than dotted keys (an event's)
        self._generation = 0
        self._args: dict[str, Any] = {}
        self._nested = False
        self._overrides: dict[str, Callable[[int, int, dict[str, Any]], bool]] = {
            "chrome_mojo_event_info.mojo_interface_method_iid": self._native_symbol,
            "chrome_memory_pressure_notification.creation_location_iid":
                self._location("chrome_memory_pressure_notification"),
            **{f"{prefix}.source_location_iid": self._location(prefix) for prefix in (
                "begin_impl_frame_args.current_args", "begin_impl_frame_args.last_args",
                "begin_frame_observer_state.last_begin_frame_args")}}

    def event(self, data: bytes, generation: int) -> tuple[dict[str, Any], list[str]]:
        """(args, fields not read) of the TrackEvent fields ``data``: those read by hand
        first, then the reflected ones, in trace_processor's order. An arg given twice
        keeps its last value, as trace_processor's args keep it.

        >>> Decoder(Schema.of([]), Interned(), bytes.decode, None).event(b"\\x90\\x02\\x05", 0)
        ({'source_location_iid': 5}, ['source_location_iid 5 (not interned)'])
        """
        args: dict[str, Any] = {}
        unread: list[str] = []
        fields = list(_scan(data))
        for number, wire, value, after in fields:
            if number == SOURCE_LOCATION_IID and wire == VARINT:
                self._source_location("source", generation, value, args, unread,
                                      f"source_location_iid {value}")
            elif number == TASK_EXECUTION and wire == LENGTH:
                self._task(data[value:after], generation, args, unread)
            elif number == LOG_MESSAGE and wire == LENGTH:
                self._log(data[value:after], generation, args, unread)
            elif number == HISTOGRAM and wire == LENGTH:
                self._histogram_name(data[value:after], generation, args, unread)
            elif number == CORRELATION_ID and wire == VARINT:
                args["correlation_id"] = f"tp:#{value}"
            elif number == CORRELATION_ID_STR and wire == LENGTH:
                args["correlation_id"] = self.text(data[value:after])
            elif number == CORRELATION_ID_STR_IID and wire == VARINT:
                found = self.interned.correlation_ids.get((generation, value))
                if found is None:
                    unread.append(f"correlation_id_str_iid {value} (not interned)")
                else:
                    args["correlation_id"] = found
        self._generation, self._args, self._nested = generation, args, False
        self._message(data, TRACK_EVENT, args, "", "", unread, fields)
        return args, unread

    def resolved(self, value: Any, generation: int, unread: list[str]) -> Any:
        """``value`` (a debug annotation's) with each :class:`.ProtoValue` in it decoded
        as trace_processor decodes it: its message as a dict (nested messages as dicts,
        None for one with no field); one whose type no descriptor describes stays its
        text, counted.

        >>> decoder = Decoder(Schema.of([]), Interned(), bytes.decode, None)
        >>> location = ProtoValue("perfetto.protos.SourceLocation", b"\\x20\\x07")
        >>> decoder.resolved({"at": location}, 0, [])
        {'at': {'line_number': 7}}
        """
        if type(value) is ProtoValue:
            name = value.type_name if value.type_name.startswith(".") else \
                f".{value.type_name}"
            if self.schema.fields(name) is None:
                unread.append(f"proto value of {value.type_name or 'no type'} (no descriptor)")
                return str(value)
            inner: dict[str, Any] = {}
            saved = self._generation, self._args, self._nested
            self._generation, self._args, self._nested = generation, {}, True
            try:
                had = self._message(value.data, name, inner, "", name.rsplit(".", 1)[-1],
                                    unread)
            except UNDECODABLE as exc:
                unread.append(f"proto value of {value.type_name} (undecodable: "
                              f"{type(exc).__name__})")
                return str(value)
            finally:
                self._generation, self._args, self._nested = saved
            return inner if had else None
        if type(value) is dict:
            return {key: self.resolved(item, generation, unread) for key, item in value.items()}
        if type(value) is list:
            return [self.resolved(item, generation, unread) for item in value]
        return value

    # -- by hand ------------------------------------------------------------------------

    def _source_location(self, prefix: str, generation: int, iid: int, args: dict[str, Any],
                         unread: list[str], label: str) -> None:
        found = self.interned.source_locations.get((generation, iid))
        if found is None:
            unread.append(f"{label} (not interned)")
            return
        file_name, function_name, line = found
        args[f"{prefix}.file_name"] = file_name.replace("\\", "/")
        args[f"{prefix}.function_name"] = function_name
        args[f"{prefix}.line_number"] = line or 0

    def _task(self, data: bytes, generation: int, args: dict[str, Any],
              unread: list[str]) -> None:
        iid = _varint_field(data, 1)   # TaskExecution.posted_from_iid
        self._source_location("task.posted_from", generation, iid or 0, args, unread,
                              f"task_execution.posted_from_iid {iid}")

    def _log(self, data: bytes, generation: int, args: dict[str, Any],
             unread: list[str]) -> None:
        body_iid = _varint_field(data, LOG_BODY_IID)
        body = self.interned.log_bodies.get((generation, body_iid or 0))
        if body is None:
            unread.append(f"log_message.body_iid {body_iid} (not interned)")
            return
        args["track_event.log_message"] = body
        iid = _varint_field(data, LOG_LOCATION_IID)
        if iid is not None:
            found = self.interned.source_locations.get((generation, iid))
            if found is None:
                unread.append(f"log_message.source_location_iid {iid} (not interned)")
            else:   # (as trace_processor: the file name as written, the line as an int)
                args["track_event.log_message.file_name"] = found[0]
                args["track_event.log_message.function_name"] = found[1]
                args["track_event.log_message.line_number"] = found[2] or 0
        prio = _varint_field(data, LOG_PRIO)
        if prio is not None:
            args["track_event.priority"] = _signed(prio, 32)

    def _histogram_name(self, data: bytes, generation: int, args: dict[str, Any],
                        unread: list[str]) -> None:
        fields = {number: value for number, _, value, _ in _scan(data)}
        iid = fields.get(4)   # ChromeHistogramSample.name_iid (2: an inline name)
        if iid is None or 2 in fields:
            return
        found = self.interned.histogram_names.get((generation, iid))
        if found is None:
            unread.append(f"chrome_histogram_sample.name_iid {iid} (not interned)")
        else:
            args["chrome_histogram_sample.name"] = found

    def _native_symbol(self, iid: int, generation: int, args: dict[str, Any]) -> bool:
        symbol = self.interned.symbols.get((generation, iid))
        mapping = None if symbol is None else self.interned.mapping(generation, symbol[0])
        if symbol is None or mapping is None:
            return False
        prefix = "chrome_mojo_event_info.mojo_interface_method.native_symbol"
        args[f"{prefix}.mapping_id"] = self.mapping_ids.setdefault(mapping,
                                                                   len(self.mapping_ids))
        args[f"{prefix}.rel_pc"] = symbol[1]
        return True

    def _location(self, prefix: str) -> Callable[[int, int, dict[str, Any]], bool]:
        def override(iid: int, generation: int, args: dict[str, Any]) -> bool:
            found = self.interned.source_locations.get((generation, iid))
            if found is None:
                return False
            args[f"{prefix}.file_name"] = found[0].replace("\\", "/")
            args[f"{prefix}.function_name"] = found[1]
            if found[2] is not None:
                args[f"{prefix}.line_number"] = found[2]
            return True
        return override

    # -- by reflection ------------------------------------------------------------------

    def _message(self, data: bytes, type_name: str, out: dict[str, Any], prefix: str,
                 flat: str, unread: list[str],
                 fields: list[tuple[int, int, int, int]] | None = None) -> bool:
        """Put the fields of message ``data`` (of type ``type_name``) in ``out``, each
        under ``prefix`` and its name (``flat``: the message's path, for the overrides
        and the labels of what is not read); at the top (``fields`` given) only those
        trace_processor reflects. A repeated field is one list (trace_processor's
        ``name[i]`` keys are its items), a message in it a dict. Whether the message has
        any field."""
        known = self.schema.fields(type_name)
        if known is None:
            unread.append(f"{flat} (no descriptor of {type_name})")
            return True
        top = fields is not None
        empty = True
        for number, wire, value, after in _scan(data) if fields is None else fields:
            empty = False
            field = known.get(number)
            if field is None:
                unread.append(f"{flat} field {number}" if flat else
                              f"extension {number} (no descriptor)" if number >= 1000
                              else f"field {number}")
                continue
            if top and not (field.extension or number in REFLECTED):
                if number not in BY_HAND:
                    unread.append(field.name)
                continue
            path = f"{flat}.{field.name}" if flat else field.name
            if not field.repeated or field.type_name == DEBUG_ANNOTATION:
                self._put(field, wire, value, after, data, out, prefix, path, unread)
                continue
            items = out.get(prefix + field.name)
            if type(items) is not list:
                items = out[prefix + field.name] = []
            packed = wire == LENGTH and field.type not in LENGTH_TYPES
            for item_wire, item, item_after in (_packed(data[value:after], field.type)
                                                if packed else [(wire, value, after)]):
                items.append(self._item(field, item_wire, item, item_after, data, path,
                                        unread))
        return not empty

    def _put(self, field: Field, wire: int, value: int, after: int, data: bytes,
             out: dict[str, Any], prefix: str, path: str, unread: list[str]) -> None:
        """A singular field (or a debug annotation) into ``out``."""
        if wire != _wire_of(field):
            unread.append(f"{path} (wire type {wire})")
            return
        override = None if self._nested else self._overrides.get(path)
        if override is not None and override(value, self._generation, self._args):
            return
        key = prefix + field.name
        if field.type != _T.TYPE_MESSAGE:
            out[key] = self._scalar(field, value, after, data, unread, path)
        elif field.type_name == DEBUG_ANNOTATION and self.annotation is not None:
            # (trace_processor puts an annotation under its own name, not the field's,
            # with its dots and brackets as "_")
            name, found = self.annotation(data[value:after], self._generation)
            if name is None:
                unread.append(f"{path} (a debug annotation without a name)")
            else:
                out[prefix + name.translate(_SANITIZED)] = self.resolved(
                    found, self._generation, unread)
        elif self._nested:
            out[key] = self._item(field, wire, value, after, data, path, unread)
        elif not self._message(data[value:after], field.type_name, out, key + ".", path,
                               unread):
            out[key] = None   # (a message with no field: trace_processor's null)

    def _item(self, field: Field, wire: int, value: int, after: int, data: bytes,
              path: str, unread: list[str]) -> Any:
        """One item of a repeated field: a message as a dict (None when it has no
        field, as trace_processor's null)."""
        if wire != _wire_of(field):
            unread.append(f"{path} (wire type {wire})")
            return None
        if field.type != _T.TYPE_MESSAGE:
            return self._scalar(field, value, after, data, unread, path)
        inner: dict[str, Any] = {}
        return inner if self._message(data[value:after], field.type_name, inner, "", path,
                                      unread) else None

    def _scalar(self, field: Field, value: int, after: int, data: bytes,
                unread: list[str], path: str) -> Any:
        kind = field.type
        if kind == _T.TYPE_STRING:
            return self.text(data[value:after])
        if kind == _T.TYPE_BYTES:
            return base64.b64encode(data[value:after]).decode("ascii")
        if kind == _T.TYPE_ENUM:
            number = _signed(value, 32)
            return (self.schema.enum(field.type_name) or {}).get(number, str(number))
        if kind == _T.TYPE_GROUP:
            unread.append(path)
            return None
        return _number(kind, value)


def _wire_of(field: Field) -> int:
    return LENGTH if field.type in LENGTH_TYPES else _WIRE.get(field.type, VARINT)


def _number(kind: int, raw: int) -> Any:
    """A numeric field's value as trace_processor reads it (int32 from the low 32 bits)."""
    if kind in SIGNED32:
        return _signed(raw, 32)
    if kind in (_T.TYPE_INT64, _T.TYPE_SFIXED64):
        return _signed(raw, 64)
    if kind in (_T.TYPE_UINT32, _T.TYPE_FIXED32):
        return raw & 0xFFFFFFFF
    if kind in (_T.TYPE_SINT32, _T.TYPE_SINT64):
        value = (raw >> 1) ^ -(raw & 1)
        return _signed(value & 0xFFFFFFFF, 32) if kind == _T.TYPE_SINT32 else value
    if kind == _T.TYPE_BOOL:
        return raw != 0
    if kind == _T.TYPE_DOUBLE:
        return _DOUBLE.unpack(raw.to_bytes(8, "little"))[0]
    if kind == _T.TYPE_FLOAT:
        return _FLOAT.unpack(raw.to_bytes(4, "little"))[0]
    return raw   # uint64, fixed64


def _signed(raw: int, bits: int) -> int:
    raw &= (1 << bits) - 1
    return raw - (1 << bits) if raw >= 1 << (bits - 1) else raw


def _packed(data: bytes, kind: int) -> list[tuple[int, int, int]]:
    """(wire type, value, 0) of each item of a packed repeated field.

    >>> _packed(b"\\x03\\x96\\x01", _T.TYPE_INT32)
    [(0, 3, 0), (0, 150, 0)]
    """
    wire = _WIRE.get(kind, VARINT)
    if wire == VARINT:
        out, pos = [], 0
        while pos < len(data):
            value, pos = read_varint(data, pos)
            out.append((VARINT, value, 0))
        return out
    width = 8 if wire == FIXED64 else 4
    return [(wire, int.from_bytes(data[at:at + width], "little"), 0)
            for at in range(0, len(data) - width + 1, width)]


def _varint_field(data: bytes, number: int) -> int | None:
    """The last varint field ``number`` of message ``data`` (None: there is none)."""
    found = None
    for field, wire, value, _ in _scan(data):
        if field == number and wire == VARINT:
            found = value
    return found


def _scan(data: bytes) -> list[tuple[int, int, int, int]]:
    """:func:`~..protowire.scalar.iter_fields` as a list, one-byte keys and varints read
    inline (most of a typed field's are: a third of the time).

    >>> _scan(b"\\x08\\x96\\x01\\x12\\x02hi\\x19" + bytes(8))
    [(1, 0, 150, 3), (2, 2, 5, 7), (3, 1, 0, 16)]
    """
    out = []
    pos, end = 0, len(data)
    try:
        while pos < end:
            at = pos
            key = data[pos]
            if key < 0x80:
                pos += 1
            else:
                key, pos = read_varint(data, pos, end)
            number, wire = key >> 3, key & 7
            if wire == VARINT:
                value = data[pos]
                if value < 0x80:
                    pos += 1
                else:
                    value, pos = read_varint(data, pos, end)
                out.append((number, wire, value, pos))
                continue
            if wire == LENGTH:
                size = data[pos]
                if size < 0x80:
                    pos += 1
                else:
                    size, pos = read_varint(data, pos, end)
                value, pos = pos, pos + size
            elif wire in (FIXED64, FIXED32):
                start, pos = pos, pos + (8 if wire == FIXED64 else 4)
                value = int.from_bytes(data[start:pos], "little")
            else:
                raise WireError(f"wire type {wire} is not supported", at)
            if pos > end or number == 0:
                raise WireError("a field runs past its message", at)
            out.append((number, wire, value, pos))
    except IndexError:
        raise WireError("a field is cut short", pos) from None
    return out


class Collected:
    """The fields of events that the fast path does not read: per event its index, its
    sequence's generation and its fragment (those fields' bytes; each distinct fragment
    is kept once)."""

    def __init__(self) -> None:
        self.event = array("q")
        self.generation = array("q")
        self.fragment = array("q")
        self.fragments: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.event)

    def add(self, data: bytes, rows: FieldRows, event_of: np.ndarray,
            generation: np.ndarray) -> None:
        """Note the ``rows`` (fields of a block's events, ``msg`` the event's place in the
        block) of the events ``event_of`` keeps (-1: left out)."""
        rows = in_message_order(rows)
        kept = event_of[rows.msg] >= 0
        msg = rows.msg[kept]
        if not len(msg):
            return
        firsts = np.flatnonzero(np.r_[True, msg[1:] != msg[:-1]])
        parts: list[bytes] = []
        cuts = np.r_[firsts, len(msg)].tolist()
        columns = zip(rows.field[kept].tolist(), rows.wire[kept].tolist(),
                      rows.value[kept].tolist(), rows.offset[kept].tolist(),
                      rows.length[kept].tolist(), strict=True)
        fragments = self.fragments
        ids = []
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            parts.clear()
            for _ in range(hi - lo):
                number, wire, value, offset, length = next(columns)
                if wire == LENGTH:
                    parts += (tag(number, wire), varint(length), data[offset:offset + length])
                elif wire == VARINT:
                    parts += (tag(number, wire), varint(value))
                else:
                    parts += (tag(number, wire),
                              value.to_bytes(8 if wire == FIXED64 else 4, "little"))
            fragment = b"".join(parts)
            ids.append(fragments.setdefault(fragment, len(fragments)))
        heads = msg[firsts]
        extend_typed(self.event, event_of[heads])
        extend_typed(self.generation, generation[heads])
        extend_typed(self.fragment, np.array(ids, dtype=np.int64))


def merge(collected: Collected, decoder: Decoder, events: _Events,
          key_set_id: Callable[[tuple[str, ...]], int], keep: np.ndarray
          ) -> Counter[str]:
    """Put the args of the collected events' typed fields in front of their debug
    annotations (a new key set and values at the end of the store for each); events not
    in ``keep`` (counter values: the model gives them no args) get none, and their
    typed fields count as not read. The fields not read, by label, times their events."""
    unread: Counter[str] = Counter()
    if not len(collected):
        return unread
    event = np.frombuffer(collected.event, dtype=np.int64)
    pairs = (np.frombuffer(collected.fragment, dtype=np.int64) << 32) | np.frombuffer(
        collected.generation, dtype=np.int64)
    distinct, first_use, which = np.unique(pairs, return_index=True, return_inverse=True)
    which = which.ravel()
    fragments = list(collected.fragments)
    decoded: list[tuple[tuple[str, ...], tuple[Any, ...]]] = [((), ())] * len(distinct)
    labels: list[list[str]] = [[] for _ in range(len(distinct))]
    # (in the order of first use in the file: what numbers Chrome's mappings)
    for k in np.argsort(first_use, kind="stable").tolist():
        pair = int(distinct[k])
        try:
            args, missed = decoder.event(fragments[pair >> 32], pair & 0xFFFFFFFF)
        except UNDECODABLE as exc:   # (a damaged field: the whole fragment)
            args, missed = {}, [f"undecodable ({type(exc).__name__})"]
        decoded[k] = (tuple(args), tuple(args.values()))
        labels[k] = missed
    uses = np.bincount(which, minlength=len(distinct))
    kept = keep[event]
    kept_uses = np.bincount(which[kept], minlength=len(distinct))
    for k, missed in enumerate(labels):
        for label in missed:
            unread[label] += int(uses[k])
        if decoded[k][0] and uses[k] > kept_uses[k]:
            unread["typed fields of a counter value"] += int(uses[k] - kept_uses[k])
    _rewrite(events, event[kept], which[kept], decoded, key_set_id)
    return unread


def _rewrite(events: _Events, event: np.ndarray, which: np.ndarray,
             decoded: list[tuple[tuple[str, ...], tuple[Any, ...]]],
             key_set_id: Callable[[tuple[str, ...]], int]) -> None:
    """Give each of ``event`` the key set decoded[which] + its own, and its values (the
    decoded ones, then a copy of its own) at the end of the store."""
    has = np.array([len(keys) > 0 for keys, _ in decoded], dtype=bool)
    chosen = has[which]
    event, which = event[chosen], which[chosen]
    if not len(event):
        return
    store = events.values
    objects = store.objects
    first = np.zeros(len(decoded), dtype=np.int64)   # each decoded result's values, once
    for k in np.unique(which).tolist():
        first[k] = len(objects)
        objects.extend(decoded[k][1])
    arg_set = np.frombuffer(events.arg_set, dtype=np.int32)
    arg_start = np.frombuffer(events.arg_start, dtype=np.int64)
    own_set = arg_set[event].astype(np.int64)
    key_sets = events.key_sets
    widths = np.array([len(k) for k in key_sets] + [0], dtype=np.int64)
    own_width = widths[np.where(own_set >= 0, own_set, len(key_sets))]
    typed_width = np.array([len(keys) for keys, _ in decoded], dtype=np.int64)[which]
    # a new key set per distinct (decoded result, own key set)
    combined = (which << 32) | (own_set + 1)
    pairs, inverse = np.unique(combined, return_inverse=True)
    set_ids = np.array([key_set_id(decoded[p >> 32][0] + (
        key_sets[(p & 0xFFFFFFFF) - 1] if p & 0xFFFFFFFF else ())) for p in pairs.tolist()],
        dtype=np.int32)
    sizes = typed_width + own_width
    base = len(store)
    starts = base + np.cumsum(sizes) - sizes
    row = np.repeat(np.arange(len(event)), sizes)
    place = np.arange(int(sizes.sum())) - np.repeat(starts - base, sizes)
    typed = place < typed_width[row]
    kind = np.full(len(row), OBJECT, dtype=np.uint8)
    bits = np.zeros(len(row), dtype=np.uint64)
    bits[typed] = (first[which[row[typed]]] + place[typed]).astype(np.uint64)
    source = arg_start[event[row[~typed]]] + place[~typed] - typed_width[row[~typed]]
    kind[~typed] = np.frombuffer(store.kind, dtype=np.uint8)[source]
    bits[~typed] = np.frombuffer(store.bits, dtype=np.uint64)[source]
    store.add(kind, bits)
    arg_set[event] = set_ids[inverse.ravel()]
    arg_start[event] = starts
