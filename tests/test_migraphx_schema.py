"""The MIGraphX reader's slotted per-line classes and the typed schema say the same thing.

The pydantic models of :mod:`traceconv.formats.migraphx.schema` document the format (the
JSON Schema file is made from them); the parser builds lighter classes with the same
fields. Every class has the schema's fields, and every bundled text's parse validates.
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import pytest

from traceconv.formats.migraphx import document, instruction, schema
from traceconv.formats.migraphx.document import parse_document

ROOT = Path(__file__).resolve().parent.parent
TEXTS = sorted(p for p in (ROOT / "tests" / "data" / "migraphx").glob("*")
               if p.name != "PROVENANCE.md") + sorted(
    (ROOT / "samples" / "migraphx").glob("*"))


@pytest.mark.parametrize("name", ["PerfLine", "SummaryRow", "PerfReport", "EvalRecord",
                                  "Listing", "Run", "Document"])
def test_each_class_has_the_fields_of_its_schema(name):
    parsed = {f.name for f in dataclasses.fields(getattr(document, name))}
    assert parsed == set(getattr(schema, name).model_fields)


def test_the_instruction_has_the_fields_of_its_schema():
    parsed = {f.name for f in dataclasses.fields(instruction.Instruction)}
    assert parsed == set(schema.Instruction.model_fields)


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name[:40])
def test_every_bundled_text_validates_against_the_schema(path):
    raw = path.read_bytes()
    parsed = parse_document((gzip.decompress(raw) if path.suffix == ".gz" else raw)
                            .decode("utf-8", "replace"))
    typed = schema.validated(parsed)
    assert [len(run.report.lines) if run.report else 0 for run in typed.runs] == [
        len(run.report.lines) if run.report else 0 for run in parsed.runs]
    assert sum(len(lst.instructions) for run in typed.runs for lst in run.listings) == sum(
        len(lst.instructions) for run in parsed.runs for lst in run.listings)
