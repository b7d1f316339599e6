"""Protobuf message classes from a compact field table, without protoc or generated code.

Vendor ``.proto`` files are transcribed as ``{message: [(field, number, type), ...]}``;
:func:`message_classes` builds a ``FileDescriptorProto`` from that and lets the protobuf
runtime (its C implementation, so parsing stays fast) make the classes. Every field is
``optional`` (proto2) so a missing "required" field never stops a read, and enums are read
as plain integers: writers add enum values over time (Paddle's type 15/16) and an integer
survives that where a closed proto2 enum would drop the value.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "uint64": _F.TYPE_UINT64,
    "int64": _F.TYPE_INT64, "uint32": _F.TYPE_UINT32, "int32": _F.TYPE_INT32,
    "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "bool": _F.TYPE_BOOL,
    "enum": _F.TYPE_INT32,
}
Field = tuple[str, int, str]  # (name, number, scalar type | message name | "repeated <type>")


def message_classes(package: str, messages: dict[str, list[Field]]) -> dict[str, Any]:
    """Message classes for ``messages`` (names are local to ``package``).

    >>> classes = message_classes("demo", {"Pair": [("key", 1, "string"),
    ...                                            ("values", 2, "repeated uint64")]})
    >>> msg = classes["Pair"].FromString(b"\\x0a\\x01k\\x10\\x05")
    >>> msg.key, list(msg.values)
    ('k', [5])
    """
    file = descriptor_pb2.FileDescriptorProto(name=f"traceconv/{package}.proto",
                                              package=package, syntax="proto2")
    for message_name, fields in messages.items():
        message = file.message_type.add(name=message_name)
        for name, number, spec in fields:
            repeated = spec.startswith("repeated ")
            kind = spec.removeprefix("repeated ")
            field = message.field.add(name=name, number=number,
                                      label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
            if kind in SCALARS:
                field.type = SCALARS[kind]
            else:
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{package}.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{package}.{name}")) for name in messages}
