"""Protobuf message classes from a compact field table, without protoc or generated code.

Vendor ``.proto`` files are transcribed as ``{message: [(field, number, type), ...]}``;
:func:`message_classes` builds a ``FileDescriptorProto`` from that and lets the protobuf
runtime (its C implementation, so parsing stays fast) make the classes. Every field is
``optional`` (proto2) so a missing "required" field never stops a read, and enums are read
as plain integers: writers add enum values over time (Paddle's type 15/16) and an integer
survives that where a closed proto2 enum would drop the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

if TYPE_CHECKING:
    from ..model import Diagnostics

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


class Utf8Repair:
    """Strings of a decoded message as ``str``, counted when they were not UTF-8.

    The protobuf runtime hands a proto2 ``string`` field holding invalid UTF-8 back as
    ``bytes``; a name must stay text (a Chrome writer would print ``"b'inner\\xff'"``).
    Undecodable bytes become U+FFFD and each such value is counted in the diagnostics.
    Other values pass through unchanged.

    >>> from traceconv.model import Diagnostics
    >>> diagnostics = Diagnostics()
    >>> text = Utf8Repair(diagnostics, "demo")
    >>> text("conv2d"), text(b"inner\\xff"), text(7)
    ('conv2d', 'inner\ufffd', 7)
    >>> [(d["code"], d["count"]) for d in diagnostics.as_list()]
    [('demo.invalid_utf8', 1)]
    """

    def __init__(self, diagnostics: Diagnostics, prefix: str) -> None:
        self.diagnostics, self.code = diagnostics, f"{prefix}.invalid_utf8"

    def __call__(self, value):  # type: ignore[no-untyped-def]
        if type(value) is not bytes:
            return value
        repaired = value.decode("utf-8", errors="replace")
        self.diagnostics.add(self.code, example=repaired[:80])
        return repaired
