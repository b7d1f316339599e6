"""The decoder's records of each MegEngine document have its schema's fields and defaults.

The pydantic models in ``schema.py`` are the documented contract; the msgspec records are
what the readers decode into (no model object per record), and a document they refuse is
read through the model (``document.load_records``). A field added to a model must be added
to its record, or the two paths would read different things.
"""

from __future__ import annotations

import msgspec
import pytest

from traceconv.formats.megengine import schema

PAIRS = [
    (schema.TimingRecord, schema.Timing), (schema.FootprintRecord, schema.Footprint),
    (schema.ProfilerRecords, schema.Profiler), (schema.OperatorRecord, schema.Operator),
    (schema.LayoutRecord, schema.Layout), (schema.MemPlanRecord, schema.MemPlan),
    (schema.InferTagRecord, schema.InferTag), (schema.VarRecord, schema.Var),
    (schema.MemChunkRecord, schema.MemChunk), (schema.GraphExecRecords, schema.GraphExec),
    (schema.StaticProfileRecords, schema.StaticProfile),
    (schema.MemInfoOprRecord, schema.MemInfoOpr), (schema.MemInfoChunkRecord, schema.MemInfoChunk),
    (schema.StaticMemoryInfoRecords, schema.StaticMemoryInfo)]


def _record_default(field: msgspec.structs.FieldInfo) -> object:
    if field.default_factory is not msgspec.NODEFAULT:
        return field.default_factory()
    return field.default


@pytest.mark.parametrize("record, model", PAIRS, ids=[m.__name__ for _, m in PAIRS])
def test_records_have_the_schema_fields(record, model):
    fields = msgspec.structs.fields(record)
    assert [f.name for f in fields] == list(model.model_fields)
    assert {f.name: _record_default(f) for f in fields if not f.required} == {
        name: field.get_default(call_default_factory=True)
        for name, field in model.model_fields.items() if not field.is_required()}
