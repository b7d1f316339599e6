"""JSON Schema files for the vendor documents, generated from their pydantic models.

A format module lists the models of the documents it reads in ``SCHEMAS`` (file stem →
model class); ``python -m traceconv.schemas`` writes ``schemas/<stem>.schema.json`` and
the test suite fails when a checked-in file differs from what the models generate.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from .registry import all_formats

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def generated() -> dict[str, bytes]:
    """File name → JSON Schema bytes for every model any format module declares."""
    out: dict[str, bytes] = {}
    for info in all_formats():
        for stem, model in getattr(info.load(), "SCHEMAS", {}).items():
            schema = model.model_json_schema()
            out[f"{stem}.schema.json"] = orjson.dumps(
                schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    return out


def write(folder: Path = SCHEMA_DIR) -> list[Path]:
    """(Re)write every schema file into ``folder``; returns the paths written."""
    from .output_files import atomic_output, output_folder

    output_folder(folder)
    written = []
    for name, data in generated().items():
        path = folder / name
        with atomic_output(path, inputs=()) as out:
            out.write(data)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_DIR):
        print(path)
