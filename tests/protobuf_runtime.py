"""Message classes of the real protobuf runtime (``google.protobuf``) for a field table of
:mod:`traceconv.formats.protowire`: the independent side of the decoder's tests (they
encode what traceconv must decode, and decode what it must agree with)."""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "uint64": _F.TYPE_UINT64,
    "int64": _F.TYPE_INT64, "uint32": _F.TYPE_UINT32, "int32": _F.TYPE_INT32,
    "sint64": _F.TYPE_SINT64, "sint32": _F.TYPE_SINT32, "fixed64": _F.TYPE_FIXED64,
    "sfixed64": _F.TYPE_SFIXED64, "fixed32": _F.TYPE_FIXED32, "sfixed32": _F.TYPE_SFIXED32,
    "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "bool": _F.TYPE_BOOL,
    "enum": _F.TYPE_INT32,
}


def runtime_classes(package: str, messages: dict[str, list[tuple[str, int, str]]],
                    packed: bool = False) -> dict[str, Any]:
    """proto2 classes for ``messages`` (every field optional; ``packed``: repeated scalars
    written packed)."""
    file = descriptor_pb2.FileDescriptorProto(name=f"tests/{package}.proto", package=package,
                                              syntax="proto2")
    for message_name, fields in messages.items():
        message = file.message_type.add(name=message_name)
        for name, number, spec in fields:
            repeated = spec.startswith("repeated ")
            kind = spec.removeprefix("repeated ")
            field = message.field.add(name=name, number=number,
                                      label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
            if kind in SCALARS:
                field.type = SCALARS[kind]
                if repeated and packed and kind not in ("string", "bytes"):
                    field.options.packed = True
            else:
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{package}.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{package}.{name}")) for name in messages}


def perfetto_text_trace(path: Any) -> bytes:
    """A Perfetto trace written as protobuf text (Perfetto's own diff tests write theirs so),
    as the binary ``.pftrace`` the real runtime makes of it."""
    from google.protobuf import text_format
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace
    return text_format.Parse(path.read_text(), Trace()).SerializeToString()
